"""SARIF 2.1.0 for GitHub code scanning (upload with github/codeql-action/upload-sarif).

Shape, following GitHub's "SARIF support for code scanning" reference:
- one rule (reportingDescriptor) per finding id, with shortDescription (title), fullDescription
  (mechanism), help (fixes), helpUri (first source) and defaultConfiguration.level;
- one result per error or warning problem (formats/collapse.py: the same rule and title on several node
  groups is one alert naming all their nodes): level error|warning, a message that carries the predicted
  error and the nodes, one location, and partialFingerprints. GitHub keys an alert on its location and
  fingerprint, so both leave out the tag and digest, which change with every build: the location is the
  image *name* (region line 1, as trivy and grype give an image), plus one logical location per node;
- info findings and unknowns are tool execution notifications (level note / warning), not alerts.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any
from urllib.parse import quote

from ..model.report import Finding, Report, report_outcome
from .collapse import collapse

SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
FINGERPRINT_KEY = "imgcheckFinding/v2"  # v2: rule + repository (+ fleet), no longer the nodes
# RFC 3986 unreserved + sub-delims + '/' '@'. Not ':': `host:port/repo` would read as a URI scheme
# `host` (and `127.0.0.1:5000/...` is no URI reference at all), so a port's colon is written %3A.
_URI_SAFE = "/@+-._~!$&'()*,;="
MAX_NAMED_NODES = 100  # fleets of thousands: name the first 100 in messages/locations
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


# files: keep the path
_PATH_SCHEMES = ("docker-archive:", "oci-archive:", "oci-dir:", "oci:", "facts:", "enroot:", "sif:")
# skopeo's PATH[:REF], split at the first ":"
_REF_SCHEMES = ("docker-archive:", "oci-archive:", "oci-dir:", "oci:")
_NAME_SCHEMES = ("registry:", "docker:")


def image_repository(reference: str) -> str:
    """The image name without tag or digest: registry.example/team/trainer:abc@sha256:.. -> registry.example/team/trainer.

    Fingerprints use this, not the tag or digest: CI tags every build differently, and the same problem
    in the next build of the same image must stay the same alert. File references keep their path.
    """
    if reference.startswith(_REF_SCHEMES):  # PATH[:REF]: the REF (name:tag, a ref name) is per build
        scheme, _, rest = reference.partition(":")
        return f"{scheme}:{rest.partition(':')[0]}"
    if reference.startswith(_PATH_SCHEMES):
        return reference
    for scheme in _NAME_SCHEMES:
        if reference.startswith(scheme):
            reference = reference[len(scheme) :]
    name = reference.split("@", 1)[0]
    if name.rfind(":") > name.rfind("/"):  # a tag, not a registry port
        name = name[: name.rfind(":")]
    return name


def artifact_uri(reference: str) -> str:
    """The alert location: a relative URI reference naming the image without tag or digest.

    File references keep their scheme word (`docker-archive:`, a valid URI scheme) and path.
    """
    repository = image_repository(reference)
    scheme = next((s for s in _PATH_SCHEMES if repository.startswith(s)), "")
    return scheme + quote(repository[len(scheme) :], safe=_URI_SAFE)


def fingerprint(finding: Finding, reference: str, fleet: str | None = None) -> str:
    """Stable across runs and fleet changes: rule id + image repository (+ the fleet name when one was given,
    + the launch spec file and line of a finding about a job spec, so two containers' findings stay two
    alerts). Not the nodes: a node added, drained or replaced must not close and reopen every alert (they
    are in the message and properties). No timestamps, no tool version."""
    parts = [finding.id, image_repository(reference)]
    if fleet:
        parts.append(f"fleet={fleet}")
    spec = job_spec_location(finding)
    if spec is not None:
        parts.append(f"{spec[0]}:{spec[1]}")
    key = "\0".join(parts)
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def job_spec_location(finding: Finding) -> tuple[str, int] | None:
    """(spec file, line) of a finding whose evidence comes from a launch spec (imgcheck.job), else None."""
    paths = [e.path for e in finding.evidence if e.fact.startswith("job.") and e.path]
    if not paths:
        return None
    line = next((e.value for e in finding.evidence if e.fact == "job.line" and isinstance(e.value, int)), 1)
    return paths[0], line


def _rule_name(rule_id: str) -> str:
    """RDMA-PABI-MISMATCH -> RdmaPabiMismatch (SARIF names are identifiers meant for people)."""
    return "".join(part.capitalize() for part in rule_id.replace("_", "-").split("-") if part)


def _rule(finding: Finding) -> dict[str, Any]:
    rule: dict[str, Any] = {
        "id": finding.id,
        "name": _rule_name(finding.id),
        "shortDescription": {"text": finding.title},
        "fullDescription": {"text": finding.mechanism},
        "defaultConfiguration": {"level": _LEVEL.get(finding.severity, "warning")},
        "properties": {"confidence": finding.confidence, "tags": ["imgcheck", "compatibility"]},
    }
    if finding.sources:
        rule["helpUri"] = finding.sources[0]
    if finding.fixes:
        rule["help"] = {
            "text": "Fixes:\n" + "\n".join(f"- {fix}" for fix in finding.fixes),
            "markdown": "**Fixes**\n\n"
            + "\n".join(f"- {fix}" for fix in finding.fixes)
            + ("\n\n**Sources**\n\n" + "\n".join(f"- <{s}>" for s in finding.sources) if finding.sources else ""),
        }
    return rule


def _node_list(nodes: tuple[str, ...]) -> str:
    shown = ", ".join(nodes[:MAX_NAMED_NODES])
    return shown + (f" and {len(nodes) - MAX_NAMED_NODES} more" if len(nodes) > MAX_NAMED_NODES else "")


def _message(finding: Finding) -> str:
    parts = [(f"If {'; '.join(finding.assumes)}: " if finding.assumes else "") + finding.title + "."]
    if finding.nodes:
        parts.append("Nodes: " + _node_list(finding.nodes) + ".")
    if finding.predicted_error:
        parts.append(f"Predicted error: {finding.predicted_error}")
    parts.append(f"Why ({finding.confidence}): {finding.mechanism}")
    if finding.fixes:
        parts.append("Fix: " + " / ".join(finding.fixes))
    return "\n".join(parts)


def _result(finding: Finding, report: Report, rule_index: int, fingerprint_value: str) -> dict[str, Any]:
    reference = report.image.reference
    location: dict[str, Any] = {
        # uri must be a URI reference: percent-encode what a reference or path may hold (spaces, ...)
        "physicalLocation": {"artifactLocation": {"uri": artifact_uri(reference)}, "region": {"startLine": 1}},
        "message": {"text": f"image {reference}" + (f" ({report.image.digest})" if report.image.digest else "")},
    }
    if finding.nodes:
        # GitHub keeps only the first 100 locations' worth of detail; all names stay in properties.nodes
        location["logicalLocations"] = [{"name": node, "kind": "node"} for node in finding.nodes[:MAX_NAMED_NODES]]
    locations = [location]
    spec = job_spec_location(finding)
    if spec is not None:  # a launch finding: the alert belongs on the spec's line, the image stays second
        locations.insert(
            0,
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": quote(spec[0], safe=_URI_SAFE)},
                    "region": {"startLine": spec[1]},
                },
                "message": {"text": "the launch spec"},
            },
        )
    return {
        "ruleId": finding.id,
        "ruleIndex": rule_index,
        # a conditional finding (a hypothesis about the image) is a note: it must not fail a code-scanning gate
        "level": "note" if finding.assumes else _LEVEL.get(finding.severity, "warning"),
        "kind": "fail",
        "message": {"text": _message(finding)},
        "locations": locations,
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint_value},
        "properties": {
            "severity": finding.severity,
            **({"assumes": list(finding.assumes)} if finding.assumes else {}),  # a conditional finding's hypothesis
            "confidence": finding.confidence,
            "nodes": list(finding.nodes),
            "predictedError": finding.predicted_error,
            "evidence": [
                {
                    k: v
                    for k, v in (
                        ("fact", e.fact),
                        ("value", e.value),
                        ("path", e.path),
                        ("layer", e.layer),
                        ("origin", e.origin),
                    )
                    if v is not None
                }
                for e in finding.evidence
            ],
            "fixes": list(finding.fixes),
            "sources": list(finding.sources),
        },
    }


def _fingerprints(problems: list[Finding], reference: str, fleet: str | None) -> list[str]:
    """One fingerprint per alert. Two alerts of one rule in one run (a variant with another title on other
    nodes) would share one and GitHub would merge them: the title separates them, the nodes never do."""
    prints = [fingerprint(f, reference, fleet) for f in problems]
    seen: dict[str, int] = {}
    for fp in prints:
        seen[fp] = seen.get(fp, 0) + 1
    return [
        hashlib.sha256(f"{fp}\0{f.title}".encode()).hexdigest() if seen[fp] > 1 else fp
        for fp, f in zip(prints, problems)
    ]


def information_uri() -> str | None:
    """The tool's home page from the installed package's metadata (Project-URL), when it names one."""
    from importlib import metadata

    try:
        urls = metadata.metadata("imgcheck").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    by_label = {label.strip().lower(): url.strip() for label, _, url in (u.partition(",") for u in urls)}
    for label in ("documentation", "homepage", "source", "repository"):
        if by_label.get(label, "").startswith("https://"):
            url: str = by_label[label]
            return url
    return None


def to_sarif(report: Report, fleet: str | None = None) -> dict[str, Any]:
    """`fleet`: the fleet name the nodes were selected by (`--fleet`), part of each alert's identity."""
    rules: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    results = []
    problems = [p.finding for p in collapse(report.findings)]
    alerts = [p for p in problems if p.severity != "info"]
    for finding, fp in zip(alerts, _fingerprints(alerts, report.image.reference, fleet)):
        if finding.id not in index:
            index[finding.id] = len(rules)
            rules.append(_rule(finding))
        results.append(_result(finding, report, index[finding.id], fp))
    driver: dict[str, Any] = {"name": "imgcheck", "rules": rules}
    uri = information_uri()
    if uri:
        driver["informationUri"] = uri
    if report.tool_version:
        driver["version"] = report.tool_version
        driver["semanticVersion"] = report.tool_version
    invocation: dict[str, Any] = {"executionSuccessful": True}
    notes = [  # info findings: what was checked and found fine, worth reading, never an alert
        {
            "level": "note",
            "descriptor": {"id": f.id},
            "message": {"text": f.title + (f" ({_node_list(f.nodes)})" if f.nodes else "")},
        }
        for f in problems
        if f.severity == "info"
    ] + [
        {
            "level": "warning",
            "descriptor": {"id": u.rule},
            "message": {
                "text": f"{u.rule} could not be decided"
                + (f" for {', '.join(u.nodes)}" if u.nodes else "")
                + f": {u.reason}"
            },
        }
        for u in report.unknowns
    ]
    if notes:
        invocation["toolExecutionNotifications"] = notes
    if report.generated_at:
        invocation["endTimeUtc"] = report.generated_at
    run: dict[str, Any] = {
        "tool": {"driver": driver},
        "invocations": [invocation],
        "results": results,
        "automationDetails": {"id": f"imgcheck/{image_repository(report.image.reference)}/"},
        "properties": {
            "verdict": report.verdict,
            "outcome": report_outcome(report),
            "image": {
                "reference": report.image.reference,
                "digest": report.image.digest,
                "platform": report.image.platform,
            },
            "nodes": [n.name for n in report.nodes],
            **({"fleet": fleet} if fleet else {}),
            "reportSchemaVersion": report.schema_version,
        },
    }
    suppressed = getattr(report, "suppressed", ())  # Report.suppressed: what --ignore removed
    if suppressed:
        run["properties"]["suppressed"] = [
            {
                "rule": s.rule,
                "node": s.node,
                "reason": s.reason,
                "expires": getattr(s, "expires", None),
                "origin": getattr(s, "origin", None),
            }
            for s in suppressed
        ]
    if report.recommendations:  # engine-checked changes for a failing check (env, pip pin, image, node upgrade)
        run["properties"]["recommendations"] = [
            {"kind": r.kind, "image": r.image, "why": r.why, "differences": list(r.differences)}
            for r in report.recommendations
        ]
    if report.matrix.version or report.matrix.digest:
        run["properties"]["matrix"] = {"version": report.matrix.version, "digest": report.matrix.digest}
    return {"$schema": SARIF_SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render_sarif(report: Report, fleet: str | None = None) -> str:
    return json.dumps(to_sarif(report, fleet), indent=2) + "\n"
