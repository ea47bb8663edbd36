"""From matched lines to a diagnosis: merge writers into rank streams, find the first failure,
order signatures, and order each signature's cause candidates by the conditions that hold.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import re
from dataclasses import dataclass, field
from datetime import datetime

from ..job.model import JobFacts
from ..knowledge import settings as settings_k
from ..model.image import ImageFacts
from ..model.node import NodeFacts
from ..model.report import severity_rank
from . import crash_components, host_catalog, release_defects, result_sites
from .certainty import assess
from .context import ContextAccumulator, LogContext
from .evidence import ALL_PREDICATES
from .logparse import LogLine
from .outcome import STATE_COMPLETED, STATE_UNKNOWN, RunOutcome, summarise, survived_by
from .predicates import Facts
from .probes import load_probes
from .result import (
    CAUSE_SUPPORTED,
    CAUSE_UNCONDITIONAL,
    CAUSE_UNKNOWN,
    CAUSE_UNLIKELY,
    VERDICT_ADVISORY,
    VERDICT_FOUND,
    VERDICT_INFO,
    VERDICT_NONE,
    CauseResult,
    Diagnosis,
    FirstFailure,
    GeneralOrderStep,
    InputInfo,
    TimelineEntry,
    TriageReport,
    Where,
)
from .scan import MAX_WRITERS, Event, RawKey, ScanResult
from .signatures import Signature, SignatureSet

ROLE_RANK = {"primary": 0, "secondary": 1, "advisory": 2}
# signatures.json causes that advise reading a crashed rank's stack (RANK-CRASH, MPI-RANK-SIGNALED)
CRASH_READ_CAUSES = ("read-the-stack", "segfault")
MAX_LAST_ERROR_NOTES = 4  # distinct "Last error:" texts quoted in the notes
RANK_LIST_LIMIT = 4096  # ranks a "nranks N" claim may add to the silent-rank search; more are only counted
_LAST_COMPLETED = re.compile(r"last completed NCCL work: (?P<n>-?\d+)")
# a failing line that names the other end: NCCL/IB "from peer A<port>", socket "remote peer H<port>",
# c10d/Gloo "remote=[A]:port"; the peer's own log usually holds the first error
_PEER = re.compile(r"(?:from peer|remote peer|remote=\[?)\s*(?P<peer>[\w.:\-]+?)(?:<\d+>|\]?:\d+|\]|\s|$)")
_PG = re.compile(r"\[PG (?P<pg>.*?) ?Rank \d+\]")


@dataclass
class Stream:
    key: RawKey  # as scan.py's, ranks merged: ("rank", n), ("proc", host, pid), ("host", name), ("file", source)
    rank: int | None = None
    hosts: set[str] = field(default_factory=set)
    sources: list[str] = field(default_factory=list)
    ctx: ContextAccumulator = field(default_factory=ContextAccumulator)

    def label(self) -> str:
        if self.key[0] == "rank":
            host = f" ({', '.join(sorted(self.hosts))})" if self.hosts else ""
            return f"rank {self.key[1]}{host}"
        if self.key[0] == "proc":
            return f"{self.key[1]} pid {self.key[2]}"
        if self.key[0] == "host":
            return f"host {self.key[1]}"
        return f"file {self.key[1]}"


def _proc_ranks(scan: ScanResult) -> dict[tuple[str, int], int]:
    """(host, pid) -> world rank, from launcher labels, NCCL comm lines, and nccl-tests headers."""
    ranks: dict[tuple[str, int], int] = {}
    for ctx in scan.contexts.values():
        for (host, pid), rs in ctx.test_ranks.items():
            if len(rs) == 1:  # one GPU per process; with -g >1 a pid holds several ranks
                ranks.setdefault((host, pid), next(iter(rs)))
    for key, ctx in scan.contexts.items():
        if key[0] == "proc":
            wr = ctx.world_rank()
            if wr is not None:
                ranks[(key[1], key[2])] = wr[0]
    ranks.update(scan.proc_rank_labels)  # an explicit launcher label wins
    return ranks


def resolve_streams(scan: ScanResult) -> tuple[dict[RawKey, RawKey], dict[RawKey, Stream]]:
    proc_rank = _proc_ranks(scan)

    def direct(key: RawKey) -> RawKey:
        if key[0] == "proc" and (key[1], key[2]) in proc_rank:
            return ("rank", proc_rank[(key[1], key[2])])
        return key

    mapping: dict[RawKey, RawKey] = {}
    for keys in scan.keys_by_source.values():
        resolved = {direct(k) for k in keys if k[0] != "file"}
        for k in keys:
            if k[0] == "file":
                # unlabelled lines in a per-rank file belong to that file's only writer
                mapping[k] = next(iter(resolved)) if len(resolved) == 1 else k
            else:
                mapping[k] = direct(k)
    streams: dict[RawKey, Stream] = {}
    for raw, skey in mapping.items():
        st = streams.setdefault(skey, Stream(key=skey, rank=skey[1] if skey[0] == "rank" else None))
        if raw[0] in ("proc", "host"):
            st.hosts.add(raw[1])
        if raw in scan.contexts:
            st.ctx.merge(scan.contexts[raw])
    for source, keys in scan.keys_by_source.items():
        for k in keys:
            st = streams[mapping[k]]
            if source not in st.sources:
                st.sources.append(source)
    for ctx in scan.contexts.values():  # nccl-tests headers name the host of each rank
        for (host, _pid), rs in ctx.test_ranks.items():
            for r in rs:
                if ("rank", r) in streams:
                    streams[("rank", r)].hosts.add(host)
    return mapping, streams


def _when(ev: Event, full_year: int | None) -> datetime | None:
    w = ev.line.when
    if w is None:
        return None
    if not ev.line.has_year and full_year is not None:
        try:
            return w.replace(year=full_year)
        except ValueError:
            return w
    return w


def _where(ev: Event, stream: Stream, full_year: int | None) -> Where:
    w = _when(ev, full_year)
    ts = None
    if w is not None:
        ts = w.isoformat(sep=" ") if (ev.line.has_year or full_year is not None) else w.strftime("%m-%d %H:%M:%S.%f")
    return Where(
        source=ev.line.source,
        line=ev.line.lineno,
        text=ev.line.text.strip()[:400],
        rank=stream.rank if stream.rank is not None else ev.line.rank,
        host=ev.line.host or (sorted(stream.hosts)[0] if len(stream.hosts) == 1 else None),
        pid=ev.line.pid,
        timestamp=ts,
    )


class CauseContext:
    """What a cause condition can ask about (see conditions.EvalContext)."""

    def __init__(
        self,
        line: str,
        stream_env: dict[str, str],
        job_env: dict[str, str],
        facts: Facts,
        measures: dict[tuple[str, str], int | None],
        sig_id: str,
        last_error: str | None = None,
        near: tuple[str, ...] | None = None,
    ):
        self.line = line
        self.near = near
        self._last_error = last_error
        self._stream_env, self._job_env, self._facts = stream_env, job_env, facts
        self._measures, self._sig = measures, sig_id

    def env(self, name: str) -> tuple[str | None, str | None]:
        img = self._facts.image
        s = settings_k.resolve(
            name, img, ((self._stream_env, "log of the failing rank"), (self._job_env, "log")), job=self._facts.job
        )
        if s is not None:
            if s.origin in (settings_k.ORIGIN_LOG, settings_k.ORIGIN_JOB):
                return s.value, s.where
            where = "Env" if s.origin == settings_k.ORIGIN_ENV else settings_k.NCCL_CONF_PATH
            assert img is not None  # an Env or nccl.conf value comes from the image
            return s.value, f"image {img.reference} {where}"
        if img is not None or self._facts.job is not None:
            return None, "neither the log, the launch spec nor the image sets it"
        return None, None

    def measure(self, signature_id: str | None, what: str) -> int | None:
        key = (signature_id or self._sig, what)
        if key not in self._measures and signature_id and what in ("count", "hosts") and self._measures:
            return 0  # the whole log was read: a signature that never matched occurred 0 times
        return self._measures.get(key)

    def predicate(self, name: str) -> tuple[bool | None, str]:
        return ALL_PREDICATES[name](self._facts)

    def warn(self) -> str | None:
        """NCCL's account of the failure: the log's first NCCL WARN line, else PyTorch's 'Last error:' text."""
        return self._facts.log.nccl_warn or self._last_error


def last_error(w: Work, ev: Event) -> str | None:
    """The 'Last error:' text PyTorch printed for the writer of `ev` (NCCL's last WARN, quoted), if any."""
    st = w.stream_of[id(ev)]
    for raw, line in w.scan.last_errors.items():
        if raw in w.mapping and w.mapping[raw] == st.key:
            return line.text
    return next((ln.text for ln in w.scan.last_errors.values()), None)


def evaluate_causes(sig: Signature, ctx: CauseContext) -> tuple[CauseResult, ...]:
    rated = []
    # a generic result code's producer site, from the WARN that reports it (the matched line, else the log's first)
    producer = result_sites.producer_of(sig.id, ctx.line) or result_sites.producer_of(sig.id, ctx.warn())
    for idx, cause in enumerate(sig.causes):
        values, reasons = [], []
        for cond in cause.when:
            v, why = cond.evaluate(ctx)
            values.append(v)
            reasons.append(f"{cond.text}: {why}")
        assumed = []
        for cond in cause.assumes:
            v, why = cond.evaluate(ctx)
            assumed.append(v)
            reasons.append(f"assumes {cond.text}: {why}")
        # Data order is the advice order. Facts only demote a cause (a condition is false) or,
        # for causes marked promote, move it first when every condition holds.
        if not cause.when:
            status, bucket = CAUSE_UNCONDITIONAL, 1.0
        elif any(v is False for v in values):
            status, bucket = CAUSE_UNLIKELY, 2.0
        elif all(v is True for v in values):
            status, bucket = CAUSE_SUPPORTED, (-1.0 if cause.promote_first else 0.0) if cause.promote else 1.0
        else:
            status, bucket = CAUSE_UNKNOWN, 1.0
        needed = []
        for cond in cause.needs:
            v, why = cond.evaluate(ctx)
            needed.append(v)
            reasons.append(f"needs {cond.text}: {why}")
        if producer is not None and cause.producers:
            site = (
                f"the WARN comes from NCCL's {producer.name} site of {producer.code} "
                f"(NCCL {producer.first}..{producer.last}, nccl_result_sites.json)"
            )
            shown = producer.name in cause.producers
            reasons.append(f"{site}: {'this cause explains it' if shown else 'not a site this cause explains'}")
            if not shown:
                needed.append(False)
            elif len(cause.producers) == 1:
                needed.append(True)  # the cause is that site's own mechanism
        elif cause.producers and len(cause.producers) == 1 and result_sites.RESULT_OF_SIGNATURE.get(sig.id):
            needed.append(None)  # the cause is one site's mechanism, and no WARN of that site is in the log
            reasons.append(f"needs a WARN from NCCL's {cause.producers[0]} site: the log holds none")
        if any(v is False for v in needed):
            # the log or the facts contradict the evidence this cause needs
            status, bucket = CAUSE_UNLIKELY, 2.0
        elif needed and all(v is True for v in needed) and status in (CAUSE_UNCONDITIONAL, CAUSE_SUPPORTED):
            status = CAUSE_SUPPORTED
            bucket = min(bucket, (-1.0 if cause.promote_first else 0.0) if cause.promote else 0.5)
        elif needed and status != CAUSE_UNLIKELY:
            # its evidence is absent: after the advice to read more (read causes sit at 1.0 or 1.8)
            status, bucket = CAUSE_UNKNOWN, 1.9
        if any(v is False for v in assumed):
            # the environment the cause presumes is not this job's (no container on a host run)
            status, bucket = CAUSE_UNLIKELY, 2.0
        elif bucket < 2 and any(v is None for v in assumed):
            bucket = max(bucket, 1.5)  # after the causes that presume nothing about the environment
        # Within a bucket: what the log or the facts support, then the advice to read more, then what nothing
        # supports. A generic result code's line names no mechanism, so a cause of it that no condition supports
        # is a guess and must not outrank reading the line that names the call; a specific signature's own line
        # is evidence for its causes, so there the advice ranks after every concrete cause still possible.
        tier = 0.0
        if cause.kind == "read" and bucket < 2:
            if sig.generic:
                bucket, tier = min(bucket, 1.0), 0.5
            else:
                bucket = 1.8
        elif sig.generic and status != CAUSE_SUPPORTED:
            tier = 1.0
        rated.append((bucket, tier, idx, cause, status, tuple(reasons)))
    rated.sort(key=lambda r: (r[0], r[1], r[2]))
    return tuple(
        CauseResult(
            order=i + 1,
            id=c.id,
            text=c.text,
            next=c.next,
            confidence=c.confidence,
            status=status,
            because=because,
            kind=c.kind,
        )
        for i, (_b, _t, _idx, c, status, because) in enumerate(rated)
    )


def _measures(
    events: list[Event], stream_of: dict[int, Stream], counts: dict[str, int]
) -> dict[tuple[str, str], int | None]:
    """Per signature: distinct hosts, distinct GPUs, occurrences. Where lines carry no host name,
    distinct input files stand in for hosts (one dmesg file per node is the usual way to pass them)."""
    hosts: dict[str, set[str]] = {}
    files: dict[str, set[str]] = {}
    gpus: dict[str, set[tuple[str, str]]] = {}
    for ev in events:
        st = stream_of[id(ev)]
        h = ev.line.host or (next(iter(st.hosts)) if len(st.hosts) == 1 else None)
        if h:
            hosts.setdefault(ev.signature, set()).add(h)
        files.setdefault(ev.signature, set()).add(ev.line.source)
        pci = dict(ev.captures).get("pci")
        if pci:
            gpus.setdefault(ev.signature, set()).add((h or ev.line.source, pci.lower()))
    out: dict[tuple[str, str], int | None] = {}
    for sig, fs in files.items():
        out[(sig, "hosts")] = len(hosts[sig]) if sig in hosts else len(fs)
        out[(sig, "gpus")] = len(gpus[sig]) if sig in gpus else None
        out[(sig, "count")] = counts.get(sig)
    return out


@dataclass
class Work:
    """What decide()'s phases read and fill in, in phase order."""

    scan: ScanResult
    sigset: SignatureSet
    image: ImageFacts | None
    node: NodeFacts | None
    job: JobFacts | None = None
    sigs: dict[str, Signature] = field(default_factory=dict)
    mapping: dict[RawKey, RawKey] = field(default_factory=dict)
    streams: dict[RawKey, Stream] = field(default_factory=dict)
    events: list[Event] = field(default_factory=list)
    stream_of: dict[int, Stream] = field(default_factory=dict)
    log_context: LogContext = field(default_factory=LogContext)
    facts: Facts | None = None
    suppressed: dict[RawKey, set[str]] = field(default_factory=dict)
    as_info: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    failures: list[Event] = field(default_factory=list)
    first_failure: FirstFailure | None = None
    lead_key: RawKey | None = None
    timeline: list[TimelineEntry] = field(default_factory=list)
    silent: tuple[int, ...] = ()
    diagnoses: list[Diagnosis] = field(default_factory=list)
    verdict: str = VERDICT_NONE
    outcome: RunOutcome = field(default_factory=lambda: RunOutcome(state=STATE_UNKNOWN))
    went_on: dict[str, str] = field(default_factory=dict)  # advisory signatures the run went on past -> marker
    # warnings whose failure the log cannot confirm (a hang candidate, and nothing shows the job was stopped) -> why:
    # shown with their causes, never the located failure (verdict advisory_only)
    unconfirmed: dict[str, str] = field(default_factory=dict)

    @property
    def full_year(self) -> int | None:
        return self.scan.full_year

    def add_event(self, ev: Event, st: Stream) -> None:
        self.events.append(ev)
        self.stream_of[id(ev)] = st


def phase_streams(w: Work) -> None:
    """Writers -> one stream per rank; the job's INFO context."""
    w.sigs = w.sigset.by_id()
    w.mapping, w.streams = resolve_streams(w.scan)
    w.events = list(w.scan.events)
    w.stream_of = {id(ev): w.streams[w.mapping[ev.key]] for ev in w.events}
    job_ctx = ContextAccumulator()
    for st in w.streams.values():
        job_ctx.merge(st.ctx)
    w.outcome = summarise(w.scan.outcomes)
    single, single_why = _single_node(job_ctx.summary(), w.streams)
    ev = w.scan.container_evidence
    summary = job_ctx.summary()
    if ev is not None:
        container_why = f"log: {ev.text.strip()[:160]} ({ev.source}:{ev.lineno})"
    elif summary.docker_hostname is not None:
        container_why = (
            f"log: the host name {summary.docker_hostname} is a Docker container ID (Docker's default hostname)"
        )
    else:
        container_why = ""
    w.log_context = dataclasses.replace(
        summary,
        single_node=single,
        single_node_why=single_why,
        in_container=True if container_why else None,
        in_container_why=container_why,
    )
    w.facts = Facts(image=w.image, node=w.node, log=w.log_context, job=w.job)


def _single_node(ctx: LogContext, streams: dict[RawKey, Stream]) -> tuple[bool | None, str]:
    """Did the job run on one node? From what NCCL and nccl-tests print about every rank; None when they do not say."""
    nets = [t for t in ctx.transports if t.startswith(("NET/", "CollNet"))]
    if nets:
        return False, f"log: channels run via {', '.join(nets[:3])} (NCCL's network transport joins nodes)"
    hosts = sorted({h for st in streams.values() for h in st.hosts})
    if len(hosts) >= 2:
        return False, f"log: writers on {len(hosts)} hosts ({', '.join(hosts[:4])})"
    if ctx.init_all_nranks:
        return True, (
            f"log: 'NCCL INFO nranks {ctx.init_all_nranks}' is ncclCommInitAll's line (the releases that print it): one process "
            "drives every GPU of the job"
        )
    table: dict[str, set[int]] = {}
    for st in streams.values():
        for (host, _pid), ranks in st.ctx.test_ranks.items():
            table.setdefault(host, set()).update(ranks)
    if len(table) >= 2:
        return False, f"log: nccl-tests lists ranks on {len(table)} hosts ({', '.join(sorted(table)[:4])})"
    if len(table) == 1:
        host, ranks = next(iter(table.items()))
        if ctx.nranks is None or len(ranks) >= ctx.nranks:
            return True, f"log: nccl-tests lists every rank ({len(ranks)}) on {host}"
    if ctx.nranks and len(hosts) == 1:
        seen = {i.rank for st in streams.values() for i in st.ctx.inits.values() if i.nranks == ctx.nranks}
        if len(seen) >= ctx.nranks:
            return True, f"log: every rank of the {ctx.nranks}-rank communicator logged on {hosts[0]}"
    return None, "the log does not show where every rank ran (NCCL_DEBUG=INFO comm lines or nccl-tests' rank table)"


def phase_suppress(w: Work) -> None:
    """A specific signature in a stream explains a generic one there (e.g. the verbs EINVAL line
    explains "unhandled system error")."""
    present: dict[RawKey, set[str]] = {}
    for ev in w.events:
        present.setdefault(w.stream_of[id(ev)].key, set()).add(ev.signature)
    for skey, ids in present.items():
        w.suppressed[skey] = {s for t in ids for s in w.sigs[t].suppresses}
    w.events = [ev for ev in w.events if ev.signature not in w.suppressed[w.stream_of[id(ev)].key]]


def phase_information(w: Work) -> None:
    """Signatures that are information for this job, not failures."""
    assert w.facts is not None  # phase_streams built them
    w.as_info = _information_here(w.sigset, w.events, w.stream_of, w.facts)


def phase_retire(w: Work) -> None:
    """Lines that are not failures of this job: a benign probe's message where its harmless condition holds
    (data/triage/benign_probes.json), and errors the run went on past (a completion or progress marker later in
    the same run of the same input, data/triage/run_outcome.json; a degradation the run went on past stays a
    warning but is never the located failure). A signature all of whose lines are retired is information;
    otherwise only those lines are left out."""
    assert w.facts is not None  # phase_streams built them
    probes = load_probes(frozenset(w.sigs))
    retired: dict[int, str] = {}
    said: set[str] = set()
    # "sig:ID.count" conditions: how often each signature matched in this log (absent ones count 0)
    counts: dict[tuple[str, str], int | None] = {}
    for ev in w.events:
        counts[(ev.signature, "count")] = (counts.get((ev.signature, "count")) or 0) + 1
    for ev in w.events:
        if ev.signature in w.as_info:
            continue
        st = w.stream_of[id(ev)]
        for pr in probes:
            if not pr.applies(ev.signature, ev.line.text):
                continue
            ok, why = pr.judge(CauseContext(ev.line.text, st.ctx.env, w.log_context.env, w.facts, counts, ev.signature))
            if ok:
                retired[id(ev)] = (
                    f"a probe, not a failure ({pr.component}, benign_probes.json {pr.id}): {pr.harmless} Here: {why}."
                )
            else:
                if ok is None and ev.signature not in w.unconfirmed:
                    # whether this job is the probe's failure case is not known: a warning with its question, never
                    # the located failure on its own (a log of only such lines is advisory_only)
                    w.unconfirmed[ev.signature] = (
                        f"not confirmed as a failure: a probe {pr.component} prints in working runs too "
                        f"(benign_probes.json {pr.id}); the log does not show whether this job is the case where it "
                        f"matters ({pr.matters_when}). Here: {why}"
                    )
                if pr.id not in said:
                    said.add(pr.id)
                    w.notes.append(
                        f"{ev.signature} at {ev.line.source}:{ev.line.lineno} is a probe {pr.component} prints in "
                        f"working runs. It matters when: {pr.matters_when} Here: {why}"
                    )
            break
        if id(ev) in retired or w.sigs[ev.signature].severity not in ("error", "warning"):
            continue
        seen = survived_by(w.scan.outcomes.get(ev.line.source), ev.line)
        if seen is not None and w.sigs[ev.signature].role == "advisory":
            # a degradation (GPUDirect RDMA off, sockets instead of IB): the run going on does not refute it, but it
            # is not what stopped the job either: a warning worth a look, never the located failure
            if ev.signature not in w.went_on:
                w.went_on[ev.signature] = f"{seen.line.source}:{seen.line.lineno}"
                w.notes.append(
                    f"{ev.signature} ({ev.line.source}:{ev.line.lineno}) did not stop the run: {seen.marker.component} "
                    f"printed '{seen.line.text.strip()[:100]}' later ({seen.line.source}:{seen.line.lineno}); it is a "
                    "degradation to check (bandwidth, the transport used), not a located failure"
                )
            continue
        if seen is not None:
            retired[id(ev)] = (
                f"the run went on past this line: {seen.marker.component} printed '{seen.line.text.strip()[:120]}' "
                f"later ({seen.line.source}:{seen.line.lineno}: {seen.marker.meaning})"
            )
    if not retired:
        return
    by_sig: dict[str, list[Event]] = {}
    for ev in w.events:
        by_sig.setdefault(ev.signature, []).append(ev)
    drop: set[int] = set()
    for sid, evs in by_sig.items():
        gone = [e for e in evs if id(e) in retired]
        if not gone:
            continue
        if len(gone) == len(evs):
            w.as_info[sid] = "information here: " + retired[id(gone[0])]
        else:
            drop.update(id(e) for e in gone)
            w.notes.append(f"{len(gone)} line(s) matched as {sid} are not failures: {retired[id(gone[0])]}")
    if drop:
        w.events = [e for e in w.events if id(e) not in drop]


def phase_derived(w: Work) -> None:
    """Signatures computed from the log's structure: a communicator that started init but never
    completed with nothing else to explain it; writers that loaded different NCCL versions."""
    sigs = w.sigs
    serious = any(
        sigs[ev.signature].severity in ("error", "warning") and not sigs[ev.signature].external_end
        for ev in w.events
        if ev.signature not in w.as_info
    )
    stall_sig = next((s for s in w.sigset.signatures if s.derived == "init_incomplete"), None)
    if stall_sig is not None and not serious:
        for st in w.streams.values():
            for init in st.ctx.inits.values():
                if init.started is not None and not init.completed:
                    raw = next(k for k, v in w.mapping.items() if v == st.key)
                    w.add_event(Event(stall_sig.id, init.started, 0, raw), st)
                    if not _ended_after(w, init.started):
                        w.as_info[stall_sig.id] = (
                            "information here: a communicator logged 'Init START' and no 'Init COMPLETE', but nothing "
                            "after it shows the job stopped there (no error, timeout, signal or scheduler cancel): a "
                            "log cut during init reads the same. If the job did hang there, the causes below apply."
                        )
                    break
    hang_sig = next((s for s in w.sigset.signatures if s.derived == "stall_after_init"), None)
    if hang_sig is not None and not serious and w.outcome.state != STATE_COMPLETED:
        _stall_after_init(w, hang_sig.id)
    mismatch_sig = next((s for s in w.sigset.signatures if s.derived == "nccl_version_mismatch"), None)
    if mismatch_sig is not None and len(w.log_context.nccl_versions) > 1:
        found = _version_mismatch_event(mismatch_sig.id, w.streams, w.mapping)
        if found is not None:
            w.add_event(*found)
    if w.scan.lines_merged:
        w.notes.append(
            f"the log names more than {MAX_WRITERS} writers (host:pid, rank or host); {w.scan.lines_merged} line(s) "
            "of the others are counted together under their file's name"
        )
    if w.scan.context_lines_dropped:
        w.notes.append(
            f"the log names more than {len(w.scan.contexts)} writers; the INFO context (versions, devices, ranks) "
            f"of {w.scan.context_lines_dropped} line(s) from the others was not kept"
        )
    if any(ev.line.when is not None and not ev.line.has_year for ev in w.events):
        w.notes.append(
            "some timestamps carry no year; "
            + (f"assumed {w.full_year}" if w.full_year else "assumed to be the same year")
        )


def _stall_after_init(w: Work, sig_id: str) -> None:
    """Every communicator completed init, then the work began (a progress bar at 0, nccl-tests' table header:
    run_outcome.json 'waiting') and no step completed before the log stops: where a hang with no error line sits.
    A log that simply ends after 'Init COMPLETE' is not one: a working run cut there reads the same."""
    done = [st for st in w.streams.values() if any(i.completed for i in st.ctx.inits.values())]
    if not done or any(i.started is not None and not i.completed for st in done for i in st.ctx.inits.values()):
        return
    for source, st_out in w.scan.outcomes.items():
        waiting = st_out.last.get("waiting")
        if waiting is None:
            continue
        later = (s for k in ("completed", "progressed") for s in st_out.seen.get(k, ()))
        if any(s.line.lineno > waiting.line.lineno for s in later):
            continue
        st = next((x for x in done if source in {ln.source for ln in _init_lines(x)}), done[0])
        raw = next(k for k, v in w.mapping.items() if v == st.key)
        w.add_event(Event(sig_id, waiting.line, 0, raw), st)
        if not _ended_after(w, waiting.line):
            w.unconfirmed[sig_id] = (
                f"not confirmed as a failure: NCCL init completed and the work began ({waiting.marker.component}: "
                f"'{waiting.line.text.strip()[:80]}'), then the log stops with no error and no step completed. Nothing "
                "after it shows the job was stopped (a time limit, a cancel, a watchdog), so a log cut there reads the "
                "same; if the job hung there, these are the candidates and what tells them apart."
            )
        return


def _init_lines(st: Stream) -> list[LogLine]:
    return [i.started for i in st.ctx.inits.values() if i.started is not None]


def _ended_after(w: Work, line: LogLine) -> bool:
    """The job was stopped from outside (scheduler cancel, agent SIGTERM) after `line`, in the same input."""
    st = w.scan.outcomes.get(line.source)
    seen = st.last.get("ended") if st is not None else None
    return seen is not None and seen.line.lineno > line.lineno


def phase_first_failure(w: Work) -> None:
    """Each stream's first failing line, then the writers in the order used: by timestamp when every
    failing line has one, else local errors before consequences."""
    sigs, full_year = w.sigs, w.full_year
    w.failures = [
        ev
        for ev in w.events
        if sigs[ev.signature].role != "advisory" and ev.signature not in w.as_info and ev.signature not in w.unconfirmed
    ]
    if not w.failures:
        # No error line, but a warning the job does not survive unharmed (GPUDirect RDMA off, no IB device
        # although IB was meant): that warning is the located failure, so the verdict and the certainty agree.
        w.failures = [
            ev
            for ev in w.events
            if ev.signature not in w.as_info
            and ev.signature not in w.went_on
            and ev.signature not in w.unconfirmed
            and not sigs[ev.signature].continues
            and sigs[ev.signature].severity in ("error", "warning")
        ]
    first_by_stream: dict[RawKey, Event] = {}
    # within one writer, a signature naming a concrete cause comes before a generic result code
    # (PyTorch's DistBackendError, torchrun's exitcode), wherever the two appear in the log
    for ev in sorted(w.failures, key=lambda e: (sigs[e.signature].generic, e.order, -sigs[e.signature].priority)):
        first_by_stream.setdefault(w.stream_of[id(ev)].key, ev)
    if not first_by_stream:
        return
    cands = list(first_by_stream.values())
    all_ts = all(ev.line.when is not None for ev in cands)
    far = datetime.max
    if all_ts:
        cands.sort(
            key=lambda e: (
                _when(e, full_year),
                ROLE_RANK[sigs[e.signature].role],
                -sigs[e.signature].priority,
                e.order,
            )
        )
        basis = "earliest timestamp across ranks" if len(cands) > 1 else "only one failing writer"
    else:
        cands.sort(
            key=lambda e: (
                ROLE_RANK[sigs[e.signature].role],
                sigs[e.signature].generic,  # a writer's concrete cause before another writer's bare result code
                0 if e.line.when else 1,
                _when(e, full_year) or far,
                -sigs[e.signature].priority,
                e.order,
            )
        )
        if len(cands) == 1:
            basis = "only one failing writer"
        else:
            basis = (
                "not all failing lines carry timestamps: writers with a local error are ranked before writers "
                "that only report consequences (timeouts, remote errors), then by timestamp, then input order"
            )
    for ev in cands:
        st = w.stream_of[id(ev)]
        w.timeline.append(TimelineEntry(stream=st.label(), signature=ev.signature, where=_where(ev, st, full_year)))
    lead = cands[0]
    lst = w.stream_of[id(lead)]
    w.lead_key = lst.key
    w.first_failure = FirstFailure(
        stream=lst.label(), signature=lead.signature, where=_where(lead, lst, full_year), basis=basis
    )


def phase_last_error(w: Work) -> None:
    """PyTorch's 'Last error:' is NCCL's own account of the failure: say it, and say when no signature
    names it (the result code alone is not the diagnosis)."""
    matched = {(ev.line.source, ev.line.lineno) for ev in w.events if not w.sigs[ev.signature].generic}
    said: set[str] = set()
    for raw, line in w.scan.last_errors.items():
        text = line.text.strip()[:300]
        if text in said:
            continue
        said.add(text)
        st = w.streams[w.mapping[raw]] if raw in w.mapping else None
        who = st.label() if st is not None else line.source
        if (line.source, line.lineno) in matched:
            w.notes.append(f"{who}: PyTorch's 'Last error:' names the cause: {text}")
        else:
            w.notes.append(
                f"{who}: PyTorch's 'Last error:' is the diagnosis, and no signature names it: {text} "
                f"({line.source}:{line.lineno})"
            )
        if len(said) >= MAX_LAST_ERROR_NOTES:
            break


def phase_warn_in_log(w: Work) -> None:
    """A generic result code is never answered with "read the preceding WARN" when that WARN is in the
    log: quote it (the cause that says so is demoted by its condition, log.nccl_warn_present)."""
    ff = w.first_failure
    if ff is not None and w.sigs[ff.signature].generic and w.log_context.nccl_warn:
        w.notes.append(f"NCCL's WARN is in the log; it is the diagnosis to read: {w.log_context.nccl_warn}")


def phase_peer_first(w: Work) -> None:
    """A completion or connection error that names its peer: read that peer's process first."""
    ff = w.first_failure
    if ff is None:
        return
    m = _PEER.search(ff.where.text)
    if m is None or _loopback(m.group("peer")):
        return
    peer = m.group("peer")
    here = [st.label() for st in w.streams.values() if peer in st.hosts or any(peer in s for s in st.sources)]
    w.notes.append(
        f"the first failing line names its peer {peer}: the process there is the one to read first"
        + (f" ({', '.join(here[:3])} in these logs)" if here else " (its log is not among the inputs)")
    )


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def phase_silent_ranks(w: Work) -> None:
    """Ranks the job had (from "nranks" or observed rank numbers) that report no failure, and the
    rank that completed the fewest collectives."""
    failing_ranks = {w.stream_of[id(ev)].rank for ev in w.failures if w.stream_of[id(ev)].rank is not None}
    known_ranks = {st.rank for st in w.streams.values() if st.rank is not None}
    nranks = w.log_context.nranks
    if nranks:
        # A log line claims the communicator size; trust it only as far as a real job could be
        # checked: "nranks 100000000" must not build a set of that size.
        claimed = min(nranks, RANK_LIST_LIMIT)
        known_ranks |= set(range(claimed))
        if nranks > claimed:
            w.notes.append(
                f"the log claims {nranks} ranks but {len(w.streams)} writer(s) were seen; only ranks "
                f"0..{claimed - 1} are searched for silent ranks"
            )
    ff = w.first_failure
    if failing_ranks and ff is not None and w.sigs[ff.signature].role == "secondary":
        w.silent = tuple(sorted(known_ranks - failing_ranks))
        if w.silent:
            w.notes.append(
                f"rank(s) {', '.join(map(str, w.silent[:16]))} reported no error while others timed out or lost a "
                "peer: look at those first (crashed, hung, or starved)"
            )
    lagging = _laggards(w.failures, w.stream_of)
    if lagging:
        w.notes.append(lagging)


def phase_diagnoses(w: Work) -> None:
    """The first failing writer's signatures (in the order they appeared), then the rest; each with
    its cause candidates ordered by the conditions that hold."""
    sigs, full_year, lead_key, as_info = w.sigs, w.full_year, w.lead_key, w.as_info
    assert w.facts is not None  # phase_streams built them
    by_sig: dict[str, list[Event]] = {}
    for ev in sorted(w.events, key=lambda e: e.order):
        by_sig.setdefault(ev.signature, []).append(ev)
    totals = {
        sid: max(
            len(evs),
            sum(
                n
                for (k, s), n in w.scan.counts.items()
                if s == sid and sid not in w.suppressed.get(w.mapping[k], set())
            ),
        )
        for sid, evs in by_sig.items()
    }
    measures = _measures(w.events, w.stream_of, totals)
    order: list[str] = []
    if lead_key is not None:
        for ev in sorted(
            (e for e in w.events if w.stream_of[id(e)].key == lead_key),
            key=lambda e: (ROLE_RANK[sigs[e.signature].role] == 2, e.order, -sigs[e.signature].priority),
        ):
            if ev.signature not in order:
                order.append(ev.signature)
    if w.first_failure is not None and w.first_failure.signature in order:  # the text leads with it
        order.remove(w.first_failure.signature)
        order.insert(0, w.first_failure.signature)
    rest = [s for s in by_sig if s not in order]
    rest.sort(
        key=lambda s: (
            ROLE_RANK[sigs[s].role] == 2 or s in as_info,
            2 if s in as_info else severity_rank(sigs[s].severity),
            min(_when(e, full_year) or datetime.max for e in by_sig[s]),
            -sigs[s].priority,
            by_sig[s][0].order,
        )
    )
    order += rest
    for sid in order:
        sig = sigs[sid]
        evs = by_sig[sid]
        in_lead = [e for e in evs if lead_key is not None and w.stream_of[id(e)].key == lead_key]
        rep = in_lead[0] if in_lead else evs[0]
        st = w.stream_of[id(rep)]
        ctx = CauseContext(
            rep.line.text, st.ctx.env, w.log_context.env, w.facts, measures, sid, last_error(w, rep), rep.before
        )
        ranks = sorted({r for e in evs if (r := w.stream_of[id(e)].rank) is not None})
        hosts = sorted({h for e in evs for h in ([e.line.host] if e.line.host else w.stream_of[id(e)].hosts)})
        w.diagnoses.append(
            Diagnosis(
                signature=sid,
                title=sig.title,
                severity="info" if sid in as_info else sig.severity,
                role="advisory" if sid in as_info else sig.role,
                meaning=sig.meaning,
                note=as_info.get(sid) or w.unconfirmed.get(sid),
                confidence=sig.confidence,
                sources=sig.source,
                occurrences=totals[sid],
                ranks=tuple(ranks),
                hosts=tuple(hosts),
                first=_where(rep, st, full_year),
                at_first_failure=bool(in_lead),
                causes=evaluate_causes(sig, ctx),
            )
        )


def phase_release_defect(w: Work) -> None:
    """A failure whose symptom a later NCCL release fixes, for the release the log shows (release_defects.py)."""
    assert w.facts is not None  # phase_streams built them
    out = []
    # the failure that leads the answer only: a consequence (a watchdog timeout after a verbs error) is not
    # compared with the release's defects on its own
    lead = next((d.signature for d in w.diagnoses if d.severity in ("error", "warning")), None)
    if w.first_failure is not None:
        lead = w.first_failure.signature
    for d in w.diagnoses:
        extra = None
        if d.signature == lead:
            release = release_defects.release_of(w.log_context.nccl_versions, (d.first.text,))
            if release is not None:
                extra = release_defects.cause(w.facts.kb, release, d.signature, d.first.text)
        out.append(d if extra is None else dataclasses.replace(d, causes=release_defects.placed(d.causes, extra)))
    w.diagnoses = out


def phase_crash_components(w: Work) -> None:
    """A crash whose stack frames are in a known component (UCX, Open MPI, ...): the component, and what its later
    releases fix in those functions (crash_components.py), ahead of the generic advice to read the stack."""
    assert w.facts is not None  # phase_streams built them
    if not w.log_context.crash_frames:
        return
    ucx = w.image.ucx.version if w.image is not None and w.image.ucx is not None else None
    out = []
    done = False
    for d in w.diagnoses:
        extra = None
        if not done and any(c.id in CRASH_READ_CAUSES for c in d.causes):
            extra = crash_components.cause(w.facts.kb, w.log_context.crash_frames, ucx, w.log_context.stack_lines)
            done = True  # one stack, one diagnosis: the first crash signature that advises reading it
        out.append(
            d if extra is None else dataclasses.replace(d, causes=crash_components.placed_first(d.causes, extra))
        )
    w.diagnoses = out


def phase_read_advice(w: Work) -> None:
    """A generic result code with no NCCL WARN in the log: its concrete causes lead, and the advice to get the
    line that names the call (a cause of kind "read") is said as the next step."""
    ff = w.first_failure
    if ff is None or not w.diagnoses or w.diagnoses[0].signature != ff.signature or w.log_context.nccl_warn:
        return
    read = [c for c in w.diagnoses[0].causes if c.kind == "read" and c.status != CAUSE_UNLIKELY]
    if read and w.sigs[ff.signature].generic:
        w.notes.append(
            f"{ff.signature} is a result code and the log holds no NCCL WARN naming the failing call: the causes "
            f"are in advice order. Next: {read[0].next}"
        )


def phase_verdict(w: Work) -> None:
    severities = {d.severity for d in w.diagnoses}
    if severities & {"error", "warning"}:
        # a located failure and "warnings worth a look" are different answers (verdict and exit code)
        matters = [
            d
            for d in w.diagnoses
            if d.severity in ("error", "warning")
            and not w.sigs[d.signature].continues
            and d.signature not in w.went_on
            and d.signature not in w.unconfirmed
        ]
        w.verdict = VERDICT_FOUND if w.first_failure is not None or matters else VERDICT_ADVISORY
    elif w.diagnoses:
        w.verdict = VERDICT_INFO
    else:
        w.verdict = VERDICT_NONE


# decide() runs these in order; each reads what the earlier ones filled in.
PHASES = (
    phase_streams,
    host_catalog.phase_line_owner,
    phase_suppress,
    phase_information,
    phase_retire,
    phase_derived,
    phase_first_failure,
    phase_last_error,
    phase_warn_in_log,
    phase_peer_first,
    phase_silent_ranks,
    phase_diagnoses,
    phase_release_defect,
    phase_crash_components,
    phase_read_advice,
    phase_verdict,
)


def decide(
    scan: ScanResult,
    sigset: SignatureSet,
    image: ImageFacts | None = None,
    node: NodeFacts | None = None,
    job: JobFacts | None = None,
) -> TriageReport:
    w = Work(scan=scan, sigset=sigset, image=image, node=node, job=job)
    for phase in PHASES:
        phase(w)
    return _report(w)


def _report(w: Work) -> TriageReport:
    general: tuple[GeneralOrderStep, ...] = ()
    if w.verdict != VERDICT_FOUND and w.outcome.state not in ("completed", "progressed"):
        # no failure located and the run did not go on: the general order is where to look next
        general = tuple(GeneralOrderStep(i + 1, s.step, s.next) for i, s in enumerate(w.sigset.general_order))
    joined = w.image is not None or w.node is not None or w.job is not None
    certainty = assess(w.verdict, w.first_failure, tuple(w.diagnoses), w.sigs, joined)
    if w.outcome.state != STATE_UNKNOWN and certainty is not None:
        went_on = w.outcome.state in ("completed", "progressed") and w.verdict in (VERDICT_INFO, VERDICT_NONE)
        certainty = dataclasses.replace(
            certainty,
            # "no failure" backed by the run's own completion or progress lines is the strongest answer triage gives
            level="high" if went_on else certainty.level,
            reasons=(f"run outcome: {w.outcome.state} ({w.outcome.evidence}; {w.outcome.where})",) + certainty.reasons,
        )
    return TriageReport(
        verdict=w.verdict,
        certainty=certainty,
        first_failure=w.first_failure,
        diagnoses=tuple(w.diagnoses),
        timeline=tuple(w.timeline),
        silent_ranks=w.silent,
        notes=tuple(w.notes),
        context=w.log_context,
        inputs=tuple(InputInfo(name, w.scan.lines_by_source.get(name, 0)) for name in w.scan.sources),
        general_order=general,
        general_sources=w.sigset.general_source if general else (),
        signatures_version=w.sigset.version or None,
        outcome=w.outcome,
    )


def _information_here(
    sigset: SignatureSet, events: list[Event], stream_of: dict[int, Stream], facts: Facts
) -> dict[str, str]:
    """Signatures that are information for this job (every `info_when` condition holds, judged on
    their first line): they are reported with the reason, never picked as the first failure."""
    out: dict[str, str] = {}
    for sig in sigset.signatures:
        if not sig.info_when:
            continue
        rep = next((e for e in events if e.signature == sig.id), None)
        if rep is None:
            continue
        st = stream_of[id(rep)]
        ctx = CauseContext(rep.line.text, st.ctx.env, facts.log.env, facts, {}, sig.id)
        results = [c.evaluate(ctx) for c in sig.info_when]
        if all(v is True for v, _why in results):
            out[sig.id] = "information here: " + "; ".join(why for _v, why in results)
    return out


def _version_mismatch_event(
    sig_id: str, streams: dict[RawKey, Stream], mapping: dict[RawKey, RawKey]
) -> tuple[Event, Stream] | None:
    """The first 'NCCL version' line of the version the fewest writers loaded: the odd one out."""
    writers: dict[str, list[Stream]] = {}
    for st in streams.values():
        for v in st.ctx.nccl_versions:
            writers.setdefault(v, []).append(st)
    if len(writers) < 2:
        return None
    odd = min(writers, key=lambda v: (len(writers[v]), v))
    odd_st = next((s for s in writers[odd] if odd in s.ctx.version_lines), None)
    raw = next((k for k, v in mapping.items() if odd_st is not None and v == odd_st.key), None)
    if raw is None or odd_st is None:  # raw is found only with odd_st
        return None
    return Event(sig_id, odd_st.ctx.version_lines[odd], 0, raw), odd_st


def _laggards(failures: list[Event], stream_of: dict[int, Stream]) -> str | None:
    """PyTorch's watchdog prints each rank's 'last completed NCCL work' per process group; within
    one group, the rank with the lowest count is the laggard. Counts of different groups
    ("[PG ID 11 PG GUID 119 Rank 1]" vs "... GUID 112 ...") are not comparable."""
    done: dict[str, dict[int, int]] = {}
    for ev in failures:
        st = stream_of[id(ev)]
        m = _LAST_COMPLETED.search(ev.line.text)
        if m and st.rank is not None:
            g = _PG.search(ev.line.text)
            group = done.setdefault(g.group("pg").strip() if g else "", {})
            n = int(m.group("n"))
            group[st.rank] = min(n, group.get(st.rank, n))
    found = []
    for pg, ranks in done.items():
        if len(ranks) < 2:
            continue
        low = min(ranks.values())
        behind = sorted(r for r, n in ranks.items() if n == low)
        if len(behind) < len(ranks):
            found.append(
                f"rank(s) {', '.join(map(str, behind))} completed the fewest collectives"
                f"{' in process group ' + pg if pg else ''} (last completed NCCL work {low}; "
                f"others up to {max(ranks.values())}): the laggard"
            )
    return "; ".join(found) or None
