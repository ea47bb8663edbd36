"""Text and JSON renderings of a TriageReport. The text leads with the first failing rank/host and
its signature, then the cause candidates in order, each with the next command to run."""

from __future__ import annotations

import json
import textwrap

from ..model.serde import to_dict
from .result import CAUSE_UNLIKELY, VERDICT_ADVISORY, VERDICT_FOUND, VERDICT_INFO, Diagnosis, TriageReport, Where

WIDTH = 100


def render_json(report: TriageReport) -> str:
    doc = to_dict(report)
    head = {k: doc.pop(k) for k in ("schema_version", "kind", "tool_version", "signatures_version", "verdict")}
    return json.dumps({**head, **doc}, indent=2) + "\n"


def _wrap(text: str, indent: str, first: str | None = None) -> list[str]:
    return textwrap.wrap(
        text,
        WIDTH,
        initial_indent=first if first is not None else indent,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [first or indent]


def _loc(w: Where) -> str:
    parts = [f"{w.source}:{w.line}"]
    if w.timestamp:
        parts.append(w.timestamp)
    return "  ".join(parts)


def _who(w: Where, skip_rank: bool = False) -> str:
    bits = []
    if w.rank is not None and not skip_rank:
        bits.append(f"rank {w.rank}")
    if w.host:
        bits.append(f"host {w.host}")
    if w.pid is not None:
        bits.append(f"pid {w.pid}")
    return ", ".join(bits) or ("" if skip_rank else "writer unknown")


def _ranks(ranks: tuple[int, ...]) -> str:
    if not ranks:
        return ""
    if len(ranks) > 8:
        return f"ranks {ranks[0]}..{ranks[-1]} ({len(ranks)})"
    return "rank" + ("s " if len(ranks) > 1 else " ") + ",".join(map(str, ranks))


def _causes(d: Diagnosis, out: list[str], verbose: bool) -> None:
    hidden = 0
    for c in d.causes:
        if c.status == CAUSE_UNLIKELY and not verbose:  # the facts speak against it: behind -v
            hidden += 1
            continue
        out += _wrap(c.text, "       ", f"  {c.order:>2}. [{c.status}, {c.confidence}] ")
        out += _wrap(c.next, "          ", "       next: ")
        for b in c.because:
            out += _wrap(b, "          ", "       why:  ")
    if hidden:
        out.append(f"      ({hidden} unlikely cause(s) not shown: the facts speak against them; -v shows them)")


def render_text(report: TriageReport, verbose: bool = False) -> str:
    out: list[str] = []
    total = sum(i.lines for i in report.inputs)
    out.append(f"imgcheck triage: {len(report.inputs)} log(s), {total} line(s)")
    out.append("")
    if report.certainty is not None:
        out.append(f"CERTAINTY  {report.certainty.level}")
        for r in report.certainty.reasons:
            out += _wrap(r, "    ", "  - ")
        out.append("")
    oc = report.outcome
    if oc.state != "unknown":
        out.append(f"RUN OUTCOME  {oc.state}")
        out += _wrap(f"{oc.evidence} ({oc.where}: {oc.text})", "    ", "  - ")
        out.append("")
    went_on = oc.state in ("completed", "progressed") and report.verdict != VERDICT_FOUND
    if went_on:
        out.append(f"NO FAILURE. The run {oc.state}; the lines below did not stop it.")
        out.append("")
    elif report.verdict != VERDICT_FOUND:
        if report.verdict == VERDICT_ADVISORY:
            out.append("ADVISORY ONLY. Warnings matched (listed below) but no line is a located failure.")
        elif report.verdict == VERDICT_INFO:
            out.append("No failure signature: only informational matches (listed below).")
        else:
            out.append("NO KNOWN SIGNATURE. No line matches a known failure, so imgcheck does not guess a cause.")
        out.append("General triage order:")
        for st in report.general_order:
            out += _wrap(st.step, "       ", f"  {st.order:>2}. ")
            out += _wrap(st.next, "          ", "       next: ")
        if report.general_sources:
            out.append("  sources: " + ", ".join(report.general_sources))
        out.append("")
    ff = report.first_failure
    lead = report.diagnoses[0] if report.diagnoses else None
    if ff is not None:
        who = "" if " pid " in ff.stream else _who(ff.where, skip_rank=ff.stream.startswith("rank "))
        out.append(f"FIRST FAILURE  {ff.stream}" + (f"  [{who}]" if who else ""))
        out.append(f"  where:     {_loc(ff.where)}")
        out += _wrap(ff.where.text, "             ", "  line:      ")
        out += _wrap(ff.basis, "             ", "  chosen by: ")
        out.append("")
    if lead is not None and report.verdict == VERDICT_FOUND:
        _diagnosis(lead, out, lead=True, verbose=verbose)
    if report.notes:
        out.append("NOTES")
        for n in report.notes:
            out += _wrap(n, "    ", "  - ")
        out.append("")
    others = report.diagnoses[1:] if report.verdict == VERDICT_FOUND else report.diagnoses
    if others:
        out.append("ALSO SEEN")
        for d in others:
            _diagnosis(d, out, lead=False, verbose=verbose)
    if len(report.timeline) > 1:
        out.append("TIMELINE (first failure of each writer, in the order used)")
        for t in report.timeline[:20]:
            out.append(
                f"  {t.where.timestamp or '-':<26} {t.stream:<28} {t.signature:<26} {t.where.source}:{t.where.line}"
            )
        if len(report.timeline) > 20:
            out.append(f"  ... {len(report.timeline) - 20} more")
        out.append("")
    ctx = report.context
    bits = []
    if ctx.nccl_versions:
        bits.append(
            "NCCL "
            + ", ".join(ctx.nccl_versions)
            + (f" (+cuda {', '.join(ctx.cuda_runtime)})" if ctx.cuda_runtime else "")
        )
    if ctx.cuda_driver:
        bits.append("cudaDriverVersion " + ", ".join(ctx.cuda_driver))
    if ctx.ib_devices:
        bits.append("NET/IB " + " ".join(ctx.ib_devices[:6]) + (" [RO]" if ctx.relaxed_ordering else " (no [RO])"))
    if ctx.networks:
        bits.append("network " + ", ".join(ctx.networks))
    if ctx.dmabuf_gpus:
        bits.append("DMA-BUF available")
    if ctx.gdr_disabled:
        bits.append("GDR disabled for " + ", ".join(ctx.gdr_disabled[:4]))
    if ctx.gdrdma_transport:
        bits.append("GDRDMA in use")
    if ctx.transports:
        bits.append("transports " + ", ".join(ctx.transports[:6]))
    if ctx.libibverbs_missing:
        bits.append("libibverbs not found")
    if ctx.env:
        bits.append("env " + " ".join(f"{k}={v}" for k, v in list(ctx.env.items())[:8]))
    if bits:
        out.append("LOG CONTEXT")
        for b in bits:
            out += _wrap(b, "    ", "  ")
        out.append("")
    j = report.join
    if j is not None:
        out.append(f"JOIN WITH STATIC FACTS  image={j.image or '-'}  node={j.node or '-'}")
        for note in j.notes:
            out += _wrap(note.text, "      ", f"  [{note.status}] ")
        if not j.notes:
            out.append("  (no fact bears on the signatures found)")
        for f in j.engine_findings:
            out += _wrap(f"{f.id}: {f.title}", "      ", f"  [{f.severity}] ")
        if j.engine_note:
            out += _wrap(j.engine_note, "    ", "  ")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _diagnosis(d: Diagnosis, out: list[str], lead: bool, verbose: bool) -> None:
    where = (
        f"{d.occurrences}x"
        + (f", {_ranks(d.ranks)}" if d.ranks else "")
        + (f", hosts {','.join(d.hosts[:4])}" if d.hosts else "")
    )
    out.append(f"{'SIGNATURE' if lead else ' '} {d.signature}: {d.title}  [{d.severity}; {d.confidence}; {where}]")
    if not lead:
        out.append(f"    first: {_loc(d.first)}  [{_who(d.first)}]")
    out += _wrap(d.meaning, "    ", "    ")
    if d.note:
        out += _wrap(d.note, "    ", "    note: ")
    if d.severity == "info" and d.note and not verbose:
        # information for this job (a probe, a line the run went on past): its causes are moot here
        out.append(f"  causes: {len(d.causes)} recorded for when it is a failure (-v shows them)")
    else:
        out.append("  cause candidates, in order:" if lead else "  causes:")
        _causes(d, out, verbose)
    out += _wrap(", ".join(d.sources), "    ", "    sources: ")
    out.append("")
