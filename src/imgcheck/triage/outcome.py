"""How far the run got, from the programs' own end-of-run and progress prints (data/triage/run_outcome.json).

A line a component prints before the job completed, or before every rank finished a collective or a training
step, did not stop the job: decide.py reports it as information. Markers are matched per input file while
scanning (one regex search per line behind a literal gate), and only the first and last of each kind are kept.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from importlib import resources

from .. import safejson
from ..errors import BadInputError
from .logparse import LogLine

# a container runtime's own command or message in the log: the job ran in a container (docker/podman CLI,
# nvidia-container-cli, enroot/pyxis, Apptainer/Singularity, kubectl, the NVIDIA runtime's variable)
CONTAINER_EVIDENCE = re.compile(
    r"\b(?:docker|podman|nerdctl) (?:run|exec|compose)\b|nvidia-container-cli|\benroot (?:start|import|create)\b"
    r"|\bpyxis\b|--container-image|\bkubectl (?:exec|logs|apply)\b|\b(?:apptainer|singularity) (?:exec|run|shell)\b"
    r"|NVIDIA_VISIBLE_DEVICES"
)
MAX_MARKER_LINE = 4096  # characters: markers are short lines; an overlong line is not one
# the fixed words CONTAINER_EVIDENCE needs, tested with `in` first (most lines hold none)
CONTAINER_WORDS = (
    "docker",
    "podman",
    "nerdctl",
    "nvidia-container-cli",
    "enroot",
    "pyxis",
    "--container-image",
    "kubectl",
    "apptainer",
    "singularity",
    "NVIDIA_VISIBLE_DEVICES",
)


def container_line(text: str) -> bool:
    return any(w in text for w in CONTAINER_WORDS) and CONTAINER_EVIDENCE.search(text) is not None


KINDS = ("completed", "progressed", "failed", "ended", "context", "start", "waiting")
MAX_SEEN = 4096  # marker lines kept per kind and input; past it the last slot holds the newest
OUTCOME_FILE = "run_outcome.json"
# the states a report's outcome can take, strongest evidence first
STATE_FAILED, STATE_COMPLETED, STATE_PROGRESSED, STATE_ENDED, STATE_UNKNOWN = (
    "failed_check",
    "completed",
    "progressed",
    "ended",
    "unknown",
)


@dataclass(frozen=True)
class Marker:
    id: str
    component: str
    kind: str
    pattern: re.Pattern[str]
    site: str
    meaning: str
    after: str | None = None  # a context marker that must come first in the same input


@dataclass(frozen=True)
class Seen:
    marker: Marker
    line: LogLine


@dataclass
class SourceOutcome:
    """Per input file: the first and last line of each marker kind (bounded whatever the log size)."""

    first: dict[str, Seen] = field(default_factory=dict)
    last: dict[str, Seen] = field(default_factory=dict)
    context: set[str] = field(default_factory=set)
    # every marker line per kind, in input order (at most MAX_SEEN: the first ones and the newest)
    seen: dict[str, list[Seen]] = field(default_factory=dict)


@functools.cache
def load_markers() -> tuple[Marker, ...]:
    ref = resources.files("imgcheck.data.triage").joinpath(OUTCOME_FILE)
    where = f"imgcheck.data.triage/{OUTCOME_FILE}"
    doc = safejson.loads(ref.read_text(encoding="utf-8"), where)
    return parse_markers(doc, where)


def parse_markers(doc: object, where: str) -> tuple[Marker, ...]:
    if not isinstance(doc, dict) or not isinstance(doc.get("markers"), list):
        raise BadInputError(f"{where}: expected an object with a 'markers' list")
    out: list[Marker] = []
    ids: set[str] = set()
    for i, m in enumerate(doc["markers"]):
        here = f"{where}: markers[{i}]"
        if not isinstance(m, dict):
            raise BadInputError(f"{here}: must be an object")
        fields = {k: m.get(k) for k in ("id", "component", "kind", "pattern", "site", "meaning")}
        if not all(isinstance(v, str) and v.strip() for v in fields.values()):
            raise BadInputError(f"{here}: needs id, component, kind, pattern, site and meaning")
        if fields["kind"] not in KINDS:
            raise BadInputError(f"{here}: kind must be one of {', '.join(KINDS)}")
        after = m.get("after")
        if after is not None and after not in ids:
            raise BadInputError(f"{here}: 'after' must name an earlier marker")
        try:
            rx = re.compile(str(fields["pattern"]))
        except re.error as exc:
            raise BadInputError(f"{here}: bad pattern: {exc}") from None
        ids.add(str(fields["id"]))
        out.append(
            Marker(
                id=str(fields["id"]),
                component=str(fields["component"]),
                kind=str(fields["kind"]),
                pattern=rx,
                site=str(fields["site"]),
                meaning=str(fields["meaning"]),
                after=after,
            )
        )
    return tuple(out)


class OutcomeScanner:
    def __init__(self, markers: tuple[Marker, ...]):
        from .scan import required_literal  # scan imports this module; the helper is only needed here

        self.markers = markers
        # a cheap `in` test before each regex: most lines of a big log contain none of the markers' fixed text
        self.gated = tuple((mk, required_literal(mk.pattern)) for mk in markers)
        self.by_source: dict[str, SourceOutcome] = {}

    def feed(self, line: LogLine) -> None:
        text = line.text
        if not text or len(text) > MAX_MARKER_LINE:
            return
        for mk, lit in self.gated:
            if lit is not None and lit not in text:
                continue
            m = mk.pattern.search(text)
            if m is None:
                continue
            st = self.by_source.setdefault(line.source, SourceOutcome())
            if mk.after is not None and mk.after not in st.context:
                continue
            if mk.kind == "context":
                st.context.add(mk.id)
                continue
            seen = Seen(mk, line)
            st.first.setdefault(mk.kind, seen)
            st.last[mk.kind] = seen
            kept = st.seen.setdefault(mk.kind, [])
            if len(kept) < MAX_SEEN:
                kept.append(seen)
            else:
                kept[-1] = seen
            return


@dataclass(frozen=True)
class RunOutcome:
    """What the log says about how far the run got (in the triage JSON as `outcome`)."""

    state: str  # completed | progressed | failed_check | ended | unknown
    evidence: str | None = None  # the marker's meaning
    marker: str | None = None
    where: str | None = None  # file:line
    text: str | None = None
    site: str | None = None


def summarise(by_source: dict[str, SourceOutcome]) -> RunOutcome:
    """One state for the input, from the last run of each file (after its last start marker): a failed end-of-run
    check beats completion, completion beats being stopped, being stopped beats progress."""
    for kind, state in (
        ("failed", STATE_FAILED),
        ("completed", STATE_COMPLETED),
        ("ended", STATE_ENDED),
        ("progressed", STATE_PROGRESSED),
    ):
        seen = []
        for st in by_source.values():
            last_start = st.last["start"].line.lineno if "start" in st.last else 0
            if kind in st.last and st.last[kind].line.lineno > last_start:
                seen.append(st.last[kind])
        if seen:
            s = seen[0]
            return RunOutcome(
                state=state,
                evidence=f"{s.marker.component}: {s.marker.meaning}",
                marker=s.marker.id,
                where=f"{s.line.source}:{s.line.lineno}",
                text=s.line.text.strip()[:300],
                site=s.marker.site,
            )
    return RunOutcome(state=STATE_UNKNOWN)


def survived_by(st: SourceOutcome | None, line: LogLine) -> Seen | None:
    """The completion or progress marker after `line` and before the next run starts (a command at a prompt, a
    launch header) in the same input: that run went on past the line. None when the run's own end-of-run check
    failed, or nothing of that run shows it went on."""
    if st is None:
        return None
    starts = [s.line.lineno for s in st.seen.get("start", ()) if s.line.lineno > line.lineno]
    end = starts[0] if starts else None

    def within(s: Seen) -> bool:
        return s.line.lineno > line.lineno and (end is None or s.line.lineno < end)

    if any(within(s) for s in st.seen.get("failed", ())):
        return None
    for kind in ("completed", "progressed"):
        hits = [s for s in st.seen.get(kind, ()) if within(s)]
        if hits:
            return hits[-1]
    return None
