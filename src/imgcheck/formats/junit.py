"""JUnit XML: one test case per (node, rule), so a CI test tab shows which node fails which rule.

- one <testsuite> per node (classname = node name, name = rule id); findings about the image alone
  (no node) go to a suite named after the image; above MAX_NODE_SUITES nodes, nodes with identical
  results share one suite ("gpu-a01 and 499 more nodes", all names in its "nodes" property);
- an error finding is a <failure>; a warning is a <failure> only when fail_on == "warning" (as with
  `--fail-on warning`), otherwise a passing case whose <system-out> says why; info always passes;
- an unknown (rule not decidable) is <skipped>, and so is a rule the user ignored with --ignore;
- a rule that appears for other nodes but not for this one is a passing case, so the tab lists it green.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from ..model.report import (
    FAIL_ON_UNKNOWN,
    Finding,
    Report,
    Unknown,
    at_or_above,
    report_outcome,
    unconditional,
    undecided_errors,
)
from .report_text import value_text

IMAGE_SUITE_PREFIX = "image "
# Up to this many nodes, one suite per node; above it (fleets of thousands) nodes with identical results
# share a suite whose "nodes" property lists them all, keeping the XML small enough for CI test tabs.
MAX_NODE_SUITES = 200
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")  # not allowed in XML 1.0


def _clean(text: str) -> str:
    return _XML_INVALID.sub("\ufffd", text)


def _details(finding: Finding) -> str:
    lines = [f"{finding.severity.upper()} {finding.id}: {finding.title}"]
    lines += [f"only if: {a}" for a in finding.assumes]  # a conditional finding: what it assumes present
    if finding.predicted_error:
        lines.append(f"predicted error: {finding.predicted_error}")
    lines.append(f"why ({finding.confidence}): {finding.mechanism}")
    for ev in finding.evidence:
        where = "".join(
            part
            for part in (
                f"  {ev.path}" if ev.path else "",
                f"  layer {ev.layer}" if ev.layer else "",
                f"  ({ev.origin})" if ev.origin else "",
            )
        )
        lines.append(f"evidence: {ev.fact} = {value_text(ev.value)}{where}")
    lines += [f"fix: {fix}" for fix in finding.fixes]
    lines += [f"source: {src}" for src in finding.sources]
    return "\n".join(lines)


def _fails(finding: Finding, fail_on: str) -> bool:
    return not finding.assumes and at_or_above(finding.severity, fail_on)  # a conditional finding fails nothing


class _Suite:
    def __init__(self, name: str, classname: str):
        self.name = name
        self.classname = classname
        self.members: list[str] = []  # node names, when this suite stands for a group of nodes
        self.is_image = False  # the suite of findings about the image alone
        self.cases: dict[str, tuple[list[Finding], list[Unknown]]] = {}
        self.ignored: dict[str, str] = {}  # rule -> reason it was ignored (--ignore)

    def case(self, rule: str) -> tuple[list[Finding], list[Unknown]]:
        return self.cases.setdefault(rule, ([], []))


def _suites(report: Report) -> list[_Suite]:
    image_name = IMAGE_SUITE_PREFIX + report.image.reference
    image_suite = _Suite(image_name, report.image.reference)
    image_suite.is_image = True
    node_suites = {n.name: _Suite(n.name, n.name) for n in report.nodes}

    def suite_for(node: str) -> _Suite:
        if node not in node_suites:  # a finding may name a node whose facts are not in report.nodes
            node_suites[node] = _Suite(node, node)
        return node_suites[node]

    for f in report.findings:
        for suite in [suite_for(n) for n in f.nodes] or [image_suite]:
            suite.case(f.id)[0].append(f)
    for u in report.unknowns:
        for suite in [suite_for(n) for n in u.nodes] or [image_suite]:
            suite.case(u.rule)[1].append(u)
    for sup in getattr(report, "suppressed", ()):  # what --ignore removed: skipped, with the reason
        targets = [suite_for(sup.node)] if sup.node else (list(node_suites.values()) or [image_suite])
        for suite in targets:
            suite.case(sup.rule)
            suite.ignored[sup.rule] = sup.reason or "no reason given"
    node_rules = list(dict.fromkeys(r for s in node_suites.values() for r in s.cases))
    for suite in node_suites.values():
        for rule in node_rules:  # rules that hit other nodes pass here
            suite.case(rule)
        if not suite.cases:
            suite.case("compatible")
    order = {
        rule: i
        for i, rule in enumerate(dict.fromkeys([f.id for f in report.findings] + [u.rule for u in report.unknowns]))
    }
    for suite in (image_suite, *node_suites.values()):  # the same rule order in every suite
        suite.cases = dict(sorted(suite.cases.items(), key=lambda kv: order.get(kv[0], len(order))))
    suites = list(node_suites.values())
    if image_suite.cases or not suites:
        if not image_suite.cases:
            image_suite.case("compatible")
        suites.insert(0, image_suite)
    return suites


def _grouped(suites: list[_Suite]) -> list[_Suite]:
    """Merge node suites whose every case has the same outcome: one suite per group of nodes."""
    groups: dict[tuple[object, ...], list[_Suite]] = {}
    for suite in suites:
        signature = tuple(
            (rule, tuple(map(id, fs)), tuple(u.reason for u in us), suite.ignored.get(rule))
            for rule, (fs, us) in suite.cases.items()
        )
        groups.setdefault(signature, []).append(suite)
    merged = []
    for members in groups.values():
        first = members[0]
        label = first.name if len(members) == 1 else f"{first.name} and {len(members) - 1} more nodes"
        group = _Suite(label, label)
        group.cases, group.ignored = first.cases, first.ignored
        group.members = [m.name for m in members]
        merged.append(group)
    return merged


def to_junit(report: Report, fail_on: str = "error", max_node_suites: int = MAX_NODE_SUITES) -> ET.Element:
    root = ET.Element("testsuites", name="imgcheck")
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    suites = _suites(report)
    node_suites = [s for s in suites if not s.is_image]
    if len(node_suites) > max_node_suites:
        suites = [s for s in suites if s.is_image] + _grouped(node_suites)
    for suite in suites:
        counts = {"tests": 0, "failures": 0, "skipped": 0}
        el = ET.SubElement(root, "testsuite", name=_clean(suite.name))
        props = ET.SubElement(el, "properties")
        for key, value in (
            ("image", report.image.reference),
            ("digest", report.image.digest),
            ("verdict", report.verdict),
            ("outcome", report_outcome(report)),
            ("fail_on", fail_on),
        ):
            if value:
                ET.SubElement(props, "property", name=key, value=_clean(value))
        if suite.members:
            ET.SubElement(props, "property", name="nodes", value=_clean(",".join(suite.members)))
        for rec in report.recommendations:  # engine-checked changes, smallest first
            text = f"{rec.label()}: {rec.image}" + (f" ({'; '.join(rec.differences)})" if rec.differences else "")
            ET.SubElement(props, "property", name="recommendation", value=_clean(text))
        for rule, (findings, unknowns) in suite.cases.items():
            counts["tests"] += 1
            case = ET.SubElement(el, "testcase", classname=_clean(suite.classname), name=_clean(rule), time="0")
            failing = [f for f in findings if _fails(f, fail_on)]
            if failing:
                counts["failures"] += 1
                first = failing[0]
                failure = ET.SubElement(
                    case,
                    "failure",
                    type=f"{first.severity}:{first.id}",
                    message=_clean(first.predicted_error or first.title),
                )
                failure.text = _clean("\n\n".join(_details(f) for f in failing))
            elif rule in suite.ignored and not unconditional(findings):
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=_clean(f"ignored (--ignore): {suite.ignored[rule]}"))
            elif fail_on == FAIL_ON_UNKNOWN and not unconditional(findings) and undecided_errors(unknowns):
                # --fail-on unknown: a check that could give an error and was not decided fails the gate (exit 4)
                counts["failures"] += 1
                failure = ET.SubElement(
                    case, "failure", type=f"undecided:{rule}", message=_clean("not decided: " + unknowns[0].reason)
                )
                failure.text = _clean("\n".join(u.reason for u in unknowns))
            elif unknowns and not unconditional(findings):
                counts["skipped"] += 1
                skipped = ET.SubElement(case, "skipped", message=_clean("; ".join(u.reason for u in unknowns)))
                if findings:  # conditional findings: what holds if the unknown component is there
                    skipped.text = _clean("\n\n".join(_details(f) for f in findings))
            elif findings:  # warnings/info below the fail threshold: pass, but say why
                out = ET.SubElement(case, "system-out")
                out.text = _clean("\n\n".join(_details(f) for f in findings))
        for key, count in counts.items():
            el.set(key, str(count))
            totals[key] += count
        el.set("errors", "0")
    for key, total in totals.items():
        root.set(key, str(total))
    root.set("errors", "0")
    return root


def render_junit(report: Report, fail_on: str = "error", max_node_suites: int = MAX_NODE_SUITES) -> str:
    root = to_junit(report, fail_on=fail_on, max_node_suites=max_node_suites)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
