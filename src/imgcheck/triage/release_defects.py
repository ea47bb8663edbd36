"""A failure in the log against what is known about the NCCL release that printed it.

The release comes from the log: its "NCCL version x.y.z" line, or, when it has none, the file:line of a "Cuda
failure" WARN (data/triage/nccl_cuda_check_sites.json: the releases that call a CUDA check macro on that line). The
failure's symptom class (data/triage/nccl_defect_symptoms.json) is compared with every row of the release knowledge
that has symptom text: nccl_fix_ranges (a release-note fix traced to its first affected release), nccl_known_issues
(an affected range), and the nccl_release_notes fixes (fixed in a later release; where the bug starts is not
stated). The answer is one cause, "a known defect of NCCL x fixed in y", with the rows and their sources:
- supported: a traced row whose own symptom text names this symptom (or whose WARN format matches the failing line),
  and the release is inside its range;
- candidate: the release predates fixes of the same kind of failure whose start is not stated, or only the symptom
  class matches: worth an A/B with a newer NCCL, never a verdict.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from .. import safejson
from ..errors import BadInputError
from ..matrix.load import Matrix
from ..versions import ranges
from .result import CAUSE_SUPPORTED, CAUSE_UNCONDITIONAL, CauseResult

CAUSE_ID = "nccl-release-defect"
SYMPTOMS_FILE = "nccl_defect_symptoms.json"
SITES_FILE = "nccl_cuda_check_sites.json"
LISTED = 3  # rows named in the cause's text; the rest are counted
_SITE = re.compile(r"(?P<site>[\w./+-]+\.(?:cc|cu|c|h|cpp|hpp):\d+)(?: \([^)]*\))? NCCL WARN Cuda failure")
_SPEC = re.compile(r"%[-+ #0-9.*]*[hlLzjt]*[diouxXeEfgGcsp%]")
_ROW_FILE = re.compile(r"\((?:src/)?(?P<file>[\w/]+\.(?:cc|cu|c|h|cpp|hpp))\b")
_LINE_FILE = re.compile(r"(?P<file>[\w./+-]+\.(?:cc|cu|c|h|cpp|hpp)):\d+(?: \([^)]*\))? NCCL WARN")
MIN_FORMAT_TEXT = 24  # fixed characters a format needs to be matched without a site to agree with
_WARN_FORMAT = re.compile(r"WARN (?P<fmt>.+?)(?: \((?:src/|include/|[\w/]+\.(?:cc|h))[^)]*\))?$")


@dataclass(frozen=True)
class SymptomClass:
    id: str
    words: str
    log: re.Pattern[str] | None
    signatures: tuple[str, ...]
    row: re.Pattern[str]
    row_classes: tuple[str, ...]


@dataclass(frozen=True)
class Release:
    """The NCCL release(s) the log shows and how it shows them."""

    versions: tuple[str, ...]  # one from a version line; possibly several from a check site
    where: str


@dataclass(frozen=True)
class Match:
    entry: str  # the release-note entry (or known-issue name)
    fixed: str | None  # first fixed release; None: no fixed release
    first: str | None  # first affected release; None: not stated
    text: str
    source: str
    confidence: str
    specific: bool  # the row's own symptom text names this symptom (or its WARN format matches the line)
    inside: bool | None  # every release the log shows is inside the row's range (None: some may be)
    conditions: tuple[str, ...] = ()  # what else the row needs; triage does not decide them (the check engine does)


def _load(name: str) -> dict[str, Any]:
    where = f"imgcheck.data.triage/{name}"
    doc = safejson.loads(resources.files("imgcheck.data.triage").joinpath(name).read_text("utf-8"), where)
    if not isinstance(doc, dict):
        raise BadInputError(f"{where}: expected an object")
    return doc


@functools.cache
def symptom_classes() -> tuple[SymptomClass, ...]:
    doc = _load(SYMPTOMS_FILE)
    return tuple(
        SymptomClass(
            id=c["id"],
            words=c["words"],
            log=re.compile(c["log"]) if c.get("log") else None,
            signatures=tuple(c.get("signatures", ())),
            row=re.compile(c["row"]),
            row_classes=tuple(c["row_classes"]),
        )
        for c in doc["classes"]
    )


@functools.cache
def _check_sites() -> dict[str, tuple[tuple[str, str], ...]]:
    doc = _load(SITES_FILE)
    return {site: tuple((a, b) for a, b in runs) for site, runs in doc["sites"].items()}


@functools.cache
def _releases() -> tuple[str, ...]:
    doc = _load(SITES_FILE)
    return tuple(doc["releases"])


def releases_at_site(text: str) -> tuple[str, ...]:
    """The NCCL releases whose source calls a CUDA check macro at the file:line a 'Cuda failure' WARN names."""
    m = _SITE.search(text)
    if m is None:
        return ()
    site = m.group("site").split("/src/")[-1].removeprefix("src/")
    runs = _check_sites().get(site, ())
    known = _releases()
    out: list[str] = []
    for first, last in runs:
        if first in known and last in known:
            out.extend(known[known.index(first) : known.index(last) + 1])
    return tuple(out)


def release_of(log_versions: tuple[str, ...], lines: tuple[str, ...]) -> Release | None:
    if len(log_versions) == 1:
        return Release(log_versions, "the log's 'NCCL version' line")
    for text in lines:
        found = releases_at_site(text)
        if found:
            span = found[0] if len(found) == 1 else f"{found[0]}..{found[-1]}"
            site = _SITE.search(text)
            assert site is not None  # releases_at_site found one
            return Release(found, f"{site.group('site')}, a CUDA check only NCCL {span} has on that line")
    return None


def classes_of(signature: str, text: str) -> tuple[SymptomClass, ...]:
    return tuple(
        c for c in symptom_classes() if signature in c.signatures or (c.log is not None and c.log.search(text))
    )


def _format_matches(symptom: str, text: str) -> bool:
    """A row symptom quoting NCCL's WARN format ('WARN Cuda failure %d '%s' (site)') matches the failing line."""
    m = _WARN_FORMAT.search(symptom)
    if m is None:
        return False
    pieces = _SPEC.split(m.group("fmt"))
    if "NCCL WARN" not in text:
        # the message re-printed without NCCL's prefix (torch's DistBackendError carries NCCL's last error): only a
        # format long enough to be one site's own words is matched
        if len("".join(pieces).strip()) < MIN_FORMAT_TEXT:
            return False
        return re.search(".*?".join(re.escape(p) for p in pieces if p), text) is not None
    # a short format ("Cuda failure %d '%s'") is printed from many sites: the row's own site must be the line's
    row_file = _ROW_FILE.search(symptom)
    line_file = _LINE_FILE.search(text)
    if row_file and line_file:
        if not row_file.group("file").endswith(line_file.group("file").split("/src/")[-1].removeprefix("src/")):
            return False
    elif len("".join(pieces).strip()) < MIN_FORMAT_TEXT:
        return False
    rx = ".*?".join(re.escape(p) for p in pieces)
    return re.search(rx, text.split("NCCL WARN", 1)[1]) is not None


def _inside(versions: tuple[str, ...], first: str | None, fixed: str | None) -> bool | None:
    """Every version inside [first, fixed): True; none: False; some, or the start not stated: None."""
    if first is None:
        if fixed is not None and all(ranges.at_least(v, fixed) for v in versions):
            return False
        return None
    hits = [ranges.within(v, first, fixed) for v in versions]
    if all(h is True for h in hits):
        return True
    if all(h is False for h in hits):
        return False
    return None


def matches(matrix: Matrix, release: Release, classes: tuple[SymptomClass, ...], text: str) -> list[Match]:
    """Every row of the release knowledge whose symptom is this failure's and whose range may hold the release."""
    notes = {r["entry"]: r for r in matrix.rows("nccl_release_notes")}
    out: list[Match] = []
    traced: set[str] = set()
    for row in matrix.rows("nccl_fix_ranges"):
        note = notes.get(row["entry"])
        if note is None:
            continue
        traced.add(row["entry"])
        symptoms = " / ".join(row.get("symptoms") or ())
        specific = any(c.row.search(symptoms) for c in classes) or any(
            _format_matches(s, text) for s in row.get("symptoms") or ()
        )
        if not specific and note.get("symptom") not in {k for c in classes for k in c.row_classes}:
            continue
        inside = _inside(release.versions, row.get("first_affected"), note["release"])
        if inside is False:
            continue
        out.append(
            Match(
                row["entry"],
                note["release"],
                row.get("first_affected"),
                f"{note['text']} ({symptoms})",
                row["source"],
                row.get("confidence", "reported"),
                specific,
                inside,
                tuple(row.get("conditions") or ()),
            )
        )
    for row in matrix.rows("nccl_known_issues"):
        symptoms = " / ".join(row.get("symptoms") or ())
        words = f"{row['summary']} / {symptoms}"
        specific = any(c.row.search(words) for c in classes) or any(
            _format_matches(s, text) for s in row.get("symptoms") or ()
        )
        if not specific:
            continue
        inside = _inside(release.versions, row["nccl_min"], row.get("nccl_below"))
        if inside is False:
            continue
        src = row["source"]
        out.append(
            Match(
                row["issue"],
                row.get("nccl_below"),
                row["nccl_min"],
                row["summary"],
                src if isinstance(src, str) else "; ".join(src),
                row.get("confidence", "reported"),
                True,
                inside,
                # a known issue's platform is in its summary when it lists no conditions: never decided here
                tuple(row.get("conditions") or ("the platform its summary names",))
                + ((str(row["arch"]),) if row.get("arch") else ()),
            )
        )
    row_classes = {k for c in classes for k in c.row_classes}
    for note in notes.values():
        if note["kind"] != "fix" or note["entry"] in traced:
            continue
        specific = any(c.row.search(note["text"]) for c in classes)
        if not specific and note.get("symptom") not in row_classes:
            continue
        if _inside(release.versions, None, note["release"]) is False:
            continue
        out.append(
            Match(
                note["entry"],
                note["release"],
                None,
                note["text"],
                note["source"],
                note.get("confidence", "reported"),
                specific,
                None,
                tuple(note.get("conditions") or ()),
            )
        )
    # the strongest first: inside a traced range with the symptom named, then named, then the nearest fix
    out.sort(key=lambda m: (not _decided(m), not m.specific, bool(m.conditions), _order(m.fixed)))
    return out


def _quoted(matrix: Matrix, text: str) -> bool:
    """A traced fix or known issue quotes the format of the failing line (its WARN printed by that release)."""
    rows = [*matrix.rows("nccl_fix_ranges"), *matrix.rows("nccl_known_issues")]
    return any(_format_matches(s, text) for r in rows for s in r.get("symptoms") or ())


def _decided(m: Match) -> bool:
    """The log alone shows this row's defect: its own symptom text names the failure, the release is inside its
    traced range, and it needs nothing else (a row with conditions stays a candidate: triage does not read them)."""
    return m.specific and m.inside is True and not m.conditions


def _short(text: str, limit: int = 110) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _order(version: str | None) -> tuple[int, ...]:
    if version is None:
        return (1 << 30,)
    return tuple(int(x) if x.isdigit() else 0 for x in version.split("."))


def cause(matrix: Matrix, release: Release, signature: str, text: str) -> CauseResult | None:
    classes = classes_of(signature, text)
    if not classes and not _quoted(matrix, text):
        return None  # no symptom class, and no row quotes the failing line's own format
    found = matches(matrix, release, classes, text)
    if not found:
        return None
    best = found[0]
    vs = release.versions
    shown = vs[0] if len(vs) == 1 else f"{vs[0]}..{vs[-1]} (one of {len(vs)} releases)"
    symptom = " / ".join(c.words for c in classes) or "the failing line's own message"
    supported = _decided(best)
    listed = "; ".join(
        f"{m.entry} (fixed in {m.fixed or 'no release yet'}"
        + (f", affects {m.first} on" if m.first else ", start not stated")
        + f"): {_short(m.text)}"
        for m in found[:LISTED]
    )
    more = f" and {len(found) - LISTED} more fixes of the same kind" if len(found) > LISTED else ""
    if supported:
        text_out = (
            f"A known defect of NCCL {shown} ({release.where}), fixed in {best.fixed or 'no release yet'}: {best.text}"
        )
    elif best.specific and best.fixed is None:
        # a known issue no release fixes, whose own text names this failure: say so, not "fixed later"
        text_out = (
            f"A known defect of NCCL {shown} ({release.where}) that no release fixes yet, if the job meets its "
            f"conditions ({'; '.join(best.conditions) or 'none stated'}): {listed}{more}"
        )
    else:
        text_out = (
            f"A defect of NCCL {shown} ({release.where}) fixed in a later release: the release notes of later "
            f"releases fix {symptom} or failures of the same kind ({len(found)} entries): {listed}{more}"
        )
    newest_fix = best.fixed
    nxt = (
        f"rerun with NCCL {newest_fix} or newer (a pip wheel: pip install -U nvidia-nccl-cu12 / -cu13; a container: "
        "a newer image's NCCL); if the failure goes away, that was it"
        if newest_fix
        else "no NCCL release fixes it yet: use the row's workaround setting, or an NCCL before the affected range"
    )
    because = (
        f"NCCL {shown}: {release.where}",
        f"symptom: {symptom}",
        *(f"{best.entry} also needs: {'; '.join(best.conditions)}" for _ in (0,) if best.conditions),
        *(f"{m.entry}: {m.source}" for m in found[:LISTED]),
    )
    return CauseResult(
        order=0,
        id=CAUSE_ID,
        text=text_out,
        next=nxt,
        confidence=best.confidence if supported else "reported",
        status=CAUSE_SUPPORTED if supported else CAUSE_UNCONDITIONAL,
        because=because,
    )


def placed(causes: tuple[CauseResult, ...], extra: CauseResult) -> tuple[CauseResult, ...]:
    """A supported release defect ranks after the causes a condition already supports; a candidate after every
    possible cause and before the unlikely ones. Orders are renumbered."""
    items = list(causes)
    if extra.status == CAUSE_SUPPORTED:
        at = next((i for i, c in enumerate(items) if c.status != CAUSE_SUPPORTED), len(items))
    else:
        at = next((i for i, c in enumerate(items) if c.status == "unlikely"), len(items))
    items.insert(at, extra)
    return tuple(_renumber(c, i + 1) for i, c in enumerate(items))


def _renumber(c: CauseResult, order: int) -> CauseResult:
    from dataclasses import replace

    return replace(c, order=order)
