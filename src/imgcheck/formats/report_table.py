"""Readable report for a terminal: verdict first, then one block per problem.

By default a block is the headline, the nodes, the predicted error and the first fix (three real problems
on a fleet fit on a screen); verbose (`-v`) adds why, evidence, every fix and the sources, and shows each
node group's own reasoning where they differ. A problem seen on several node groups is one block
(formats/collapse.py). With color=False (not a TTY, or written to a file) the output is plain text
with no escape codes and no hard wrapping, so it greps and diffs well in CI logs.
"""

from __future__ import annotations

import io

from rich.console import Console
from rich.padding import Padding
from rich.text import Text

from ..model.report import Finding, Report, deciding_questions, report_outcome
from .collapse import collapse
from .report_text import condition_words, decides_words, rule_list, short_layer, unknown_layout, value_text
from .safe_text import escape_markup as escape  # control characters too, not only [markup]

_SEVERITY_STYLE = {"error": "bold red", "warning": "bold yellow", "info": "cyan"}
_VERDICT_STYLE = {
    "fail": "bold white on red",
    "incomplete": "bold white on magenta",
    "warn": "bold black on yellow",
    "ok": "bold white on green",
}
_VERDICT_WORD = {"fail": "FAIL", "incomplete": "INCOMPLETE", "warn": "WARN", "ok": "OK"}
_QUESTIONS_SHOWN = 5  # deciding questions on the first screen; the rest are listed under Unknown


def _count(report: Report, severity: str) -> int:
    return sum(1 for p in collapse(report.findings) if p.finding.severity == severity and not p.finding.assumes)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _nodes_text(nodes: tuple[str, ...], limit: int = 8) -> str:
    if len(nodes) <= limit:
        return ", ".join(nodes)
    return ", ".join(nodes[:limit]) + f", ... ({len(nodes) - limit} more)"


def render_table(report: Report, color: bool = False, width: int = 110, verbose: bool = False) -> str:
    buf = io.StringIO()
    console = Console(
        file=buf,
        force_terminal=color,
        no_color=not color,
        color_system="standard" if color else None,
        width=width,
        highlight=False,
        emoji=False,
        soft_wrap=not color,  # plain output: one logical line per line, no wrapping at a fixed width
    )

    def out(markup: str = "", indent: int = 0) -> None:
        if not color or not markup:
            console.print(" " * indent + markup)
        else:  # on a terminal, wrapped lines keep their indent
            console.print(Padding(Text.from_markup(markup), (0, 0, 0, indent), expand=False))

    image = report.image
    verdict = report_outcome(report)
    summary = ", ".join(
        [_plural(_count(report, "error"), "error"), _plural(_count(report, "warning"), "warning")]
        + ([f"{conditional} conditional"] if (conditional := sum(1 for f in report.findings if f.assumes)) else [])
        + ([_plural(len(report.unknowns), "unknown")] if report.unknowns else [])
    )
    node_word = _plural(len(report.nodes), "node") if report.nodes else "no node facts"
    word = _VERDICT_WORD.get(verdict, verdict.upper())
    out(
        (f"[{_VERDICT_STYLE.get(verdict, 'bold')}] {word} [/] " if color else f"{word} ")
        + f"[bold]{escape(image.reference)}[/bold] on {node_word}: {summary}"
    )
    details = [f"digest {image.digest or '?'}", f"platform {image.platform or '?'}"]
    if report.matrix.version:
        details.append(f"matrix {report.matrix.version}")
    out(escape("  ".join(details)), 2)

    questions = deciding_questions(report.unknowns)
    if questions:  # before any finding: the verdict is only as good as these answers
        out()
        undecided = sum(len(rules) for _, rules in questions)
        found = (
            "No error found, but " if not any(f.severity == "error" and not f.assumes for f in report.findings) else ""
        )
        out(
            f"{found}{_plural(undecided, 'check')} that could give an error could not be decided; "
            "the questions that decide them:"
        )
        for question, rules in questions[:_QUESTIONS_SHOWN]:
            out(f"? {escape(question)} [{escape(rule_list(rules))}]", 2)
        if len(questions) > _QUESTIONS_SHOWN:
            out(f"... {len(questions) - _QUESTIONS_SHOWN} more under Unknown below", 2)
    elif not report.findings:  # say it plainly, before any unknowns qualify it
        out()
        undecided_words = (
            f" ({_plural(len(report.unknowns), 'lesser check')} could not be decided, see below)"
            if report.unknowns
            else ""
        )
        out(f"No compatibility problems found{undecided_words}.")

    def evidence(finding: Finding, indent: int) -> None:
        if not finding.evidence:
            return
        out("evidence:", indent)
        for ev in finding.evidence:
            where = ""
            if ev.path:
                where += f"  {ev.path}"
            elif ev.origin:
                where += f"  ({ev.origin})"
            if ev.layer:
                where += f"  (layer {short_layer(ev.layer)})"
            out(f"{escape(ev.fact)} = {escape(value_text(ev.value))}[dim]{escape(where)}[/dim]", indent + 2)

    problems = collapse(report.findings)
    for problem in problems:
        finding = problem.finding
        out()
        style = _SEVERITY_STYLE.get(finding.severity, "bold")
        sure = "" if verbose else f"  [dim]({escape(finding.confidence)})[/dim]"  # -v says it in "why"
        label = f"{finding.severity.upper()} (conditional)" if finding.assumes else finding.severity.upper()
        out(f"[{style}]{label}[/] [bold]{escape(finding.id)}[/bold]  {escape(finding.title)}{sure}")
        if finding.assumes:  # a hypothesis about the image, never a claim: say on what it rests
            out(escape(condition_words(finding.assumes)), 2)
        if finding.nodes:
            out(f"nodes: {escape(_nodes_text(finding.nodes))}", 2)
        if finding.unshown:  # matched on a version range: what else it needs, which the facts do not show
            out(f"not shown to hold: {escape('; '.join(finding.unshown))}", 2)
        if finding.predicted_error:
            out("predicted error:", 2)
            out(f"[bold]{escape(finding.predicted_error)}[/bold]", 4)
        if not verbose:
            if finding.fixes:
                more = f"  (+{len(finding.fixes) - 1} more with -v)" if len(finding.fixes) > 1 else ""
                out(f"fix: {escape(finding.fixes[0])}[dim]{escape(more)}[/dim]", 2)
            continue
        if len(problem.variants) == 1:
            out(f"why ({escape(finding.confidence)}): {escape(finding.mechanism)}", 2)
            evidence(finding, 2)
        else:  # each node group's own facts and reasoning
            for variant in problem.variants:
                out(f"on {escape(_nodes_text(variant.nodes))}:", 2)
                out(f"why ({escape(variant.confidence)}): {escape(variant.mechanism)}", 4)
                evidence(variant, 4)
        if finding.fixes:
            out("fix:", 2)
            for fix in finding.fixes:
                out(f"[green]-[/green] {escape(fix)}", 4)
        if finding.sources:
            out("sources:", 2)
            for src in finding.sources:
                out(f"{escape(src)}", 4)

    if report.recommendations:
        out()
        out("[bold]Recommendations[/bold]")
        for rec in report.recommendations:
            label = rec.label()
            out(f"[green]*[/green] {label}: [bold]{escape(rec.image)}[/bold] - {escape(rec.why)}", 2)
            for diff in rec.differences:
                out(f"{escape(diff)}", 6)

    if report.unknowns:
        out()
        out("[bold]Unknown (could not be decided)[/bold]")
        # a question asked of several rules (does the image ship NCCL? which settings does the job see?) once, with
        # the rules it decides; then the rules a question of their own decides (-o json: every rule's unknown)
        shared, singles = unknown_layout(report.unknowns)
        for group in shared:
            out(f"? {escape(group.question)} {decides_words(group.rules, group.error_rules)}:", 2)
            out(escape(rule_list(group.rules)), 4)
        for unk in singles:
            on = f" [{_nodes_text(unk.nodes)}]" if unk.nodes else ""
            out(f"? {escape(unk.rule)}{escape(on)}: {escape(unk.reason)}", 2)

    suppressed = getattr(report, "suppressed", ())  # Report.suppressed: what --ignore removed
    if suppressed:
        out()
        out("[bold]Ignored (--ignore, ignore file)[/bold]")
        for sup in suppressed:
            where = f"@{sup.node}" if sup.node else " on every node"
            extra = [f"until {sup.expires}"] if getattr(sup, "expires", None) else []
            extra += [sup.origin] if getattr(sup, "origin", None) else []
            tail = f" ({', '.join(extra)})" if extra else ""
            out(f"- {escape(sup.rule)}{escape(where)}: {escape(sup.reason or 'no reason given')}{escape(tail)}", 2)

    if problems and not verbose:
        out()
        out("[dim]-v adds why, evidence, every fix and the sources; -o json has everything.[/dim]")

    return buf.getvalue()
