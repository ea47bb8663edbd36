"""A crash's stack frames mapped to the component each is in, and to what that component's releases fix there.

Each frame's component comes from catalogs/mpi_stack_components.json (library file name, function name, source path;
the signal handler's own frames and glibc's loader frames have their own roles). The crash site is the innermost frame
in a component (past the handler printing the stack and the loader or libc it called). The release of that component
is read from a path the frames print (ucx-X.Y.Z/, openmpi-X.Y.Z/), else from the image (--image: its UCX).
It is then compared with
- catalogs/mpi_crash_sites.json: a crash site whose mechanism is known from the upstream fix (all its functions are in
  the stack);
- catalogs/mpi_crash_fixes.json: every UCX / Open MPI commit that fixes a crash, hang or corruption, with the
  functions it changes (tools/upstreams/gen_mpi_crash_fixes.py): a later release's fix that changed a function of
  this stack;
- catalogs/upstream_release_notes.json: a UCX NEWS crash/hang fix whose text names a function of this stack.
A later fix that touched the crashing function is a candidate (worth an A/B with that release), never a verdict: a
commit changing a function does not show this crash was its bug. A known crash site with the release inside its
range is supported; without a release it stays a candidate and says which fact decides (the release, the build).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..matrix.load import Matrix
from ..versions import ranges
from ..versions.ecosystems import numeric_tuple
from .frames import Frame, parse
from .result import CAUSE_SUPPORTED, CAUSE_UNCONDITIONAL, CauseResult

CAUSE_ID = "crash-in-component"
LISTED = 3  # fixes named in the cause's text; the rest are counted
NEAR_FRAMES = 3  # the crashing frame and its two nearest callers in the same component are compared with fixes
ROLE_COMPONENT = "component"
ROLE_HANDLER = "handler"
ROLE_LOADER = "loader"
ROLE_REPORT = "error-report"  # the component's own report of an error it ends the process on
CRASH_SYMPTOMS = ("crash", "hang", "data-corruption")  # upstream_release_notes symptoms that are a crash's kind
FRAME_MATCHES = ("library", "function", "path")  # rows that place a frame; the others read releases and builds
NAMES = {"ucx": "UCX", "open-mpi": "Open MPI", "hcoll": "HCOLL", "nccl": "NCCL", "glibc": "glibc"}


@dataclass(frozen=True)
class Placed:
    frame: Frame
    component: str | None
    part: str | None
    role: str | None
    isolate: str | None = None  # a setting that takes this part out of the job, to A/B


@dataclass(frozen=True)
class Release:
    version: str
    where: str


@dataclass(frozen=True)
class Fix:
    release: str
    text: str
    functions: tuple[str, ...]  # the stack's functions it changed (or names)
    source: str
    at_site: bool  # it changed the crashing frame's own function


def _rows(matrix: Matrix, table: str) -> list[dict[str, Any]]:
    return list(matrix.rows(table))


@functools.lru_cache(maxsize=4)
def _component_rules(key: int, rows: tuple[tuple[str, str, str, str | None, str, str | None], ...]) -> tuple[Any, ...]:
    del key  # the cache key is the rows themselves
    return tuple((match, re.compile(pattern), comp, part, role, iso) for match, pattern, comp, part, role, iso in rows)


def _rules(matrix: Matrix) -> tuple[Any, ...]:
    rows = tuple(
        (r["match"], r["pattern"], r["component"], r.get("part"), r["role"], r.get("isolate"))
        for r in _rows(matrix, "mpi_stack_components")
        if r["match"] in FRAME_MATCHES
    )
    return _component_rules(hash(rows), rows)


def place(matrix: Matrix, frame: Frame) -> Placed:
    """The first catalog row the frame's library, function or path matches (rows are in catalog order)."""
    for match, rx, comp, part, role, isolate in _rules(matrix):
        value = {"library": frame.library, "function": frame.function, "path": frame.path}.get(match)
        if value and rx.search(value):
            return Placed(frame, comp, part, role, isolate)
    return Placed(frame, None, None, None)


def frames_of(lines: Iterable[str]) -> list[Frame]:
    return [f for f in (parse(t) for t in lines) if f is not None]


def release_from_paths(matrix: Matrix, placed: list[Placed], component: str) -> Release | None:
    for row in _rows(matrix, "mpi_stack_components"):
        if row["match"] != "release-path" or row["component"] != component:
            continue
        rx = re.compile(row["pattern"])
        for p in placed:
            m = rx.search(p.frame.path or "")
            if m and p.component == component:
                return Release(m.group("release"), f"the frames' path {m.group(0).strip('/')}/")
    return None


def _line_rows(matrix: Matrix, match: str, component: str) -> list[re.Pattern[str]]:
    return [
        re.compile(r["pattern"])
        for r in _rows(matrix, "mpi_stack_components")
        if r["match"] == match and r["component"] == component
    ]


def release_from_lines(matrix: Matrix, lines: tuple[str, ...], component: str) -> Release | None:
    """The release a version line shows (ucx_info -v, ompi_info, mpirun --version), when exactly one is shown."""
    found: dict[str, str] = {}
    for rx in _line_rows(matrix, "release-line", component):
        for text in lines:
            m = rx.search(text)
            if m:
                found.setdefault(m.group("release"), text.strip())
    if len(found) != 1:
        return None  # none, or several writers with different releases: not one release to compare
    (version, text), *_ = found.items()
    return Release(version, f"the log's line '{text[:120]}'")


def build_of(matrix: Matrix, lines: tuple[str, ...], component: str) -> str | None:
    """The configure command a build line shows (ucx_info -v '# configured with:', ompi_info)."""
    for rx in _line_rows(matrix, "build-line", component):
        for text in lines:
            m = rx.search(text)
            if m:
                return m.group("config")
    return None


def _fixed_in_series(version: str, fixed: Iterable[str]) -> bool:
    """A release of the same series (major.minor) at or below the log's release has the fix."""
    series = version.split(".")[:2]
    return any(f.split(".")[:2] == series and ranges.at_least(version, f) for f in fixed)


def _later(version: str | None, fixed: list[str]) -> bool | None:
    """The log's release lacks the fix: True; has it: False; the release is unknown: None."""
    if version is None:
        return None
    if _fixed_in_series(version, fixed):
        return False
    return any(not ranges.at_least(version, f) for f in fixed)


def _touches(names: Iterable[str], function: str) -> bool:
    """A row's function names cover a frame's function: the same name, a component prefix ('mca_pml_ucx_*'), or
    the same MPI call in any case and with or without the profiling prefix (MPI_FINALIZE / PMPI_Finalize)."""
    call = function.removeprefix("P").lower() if function.upper().startswith(("MPI_", "PMPI_")) else None
    for n in names:
        if n == function or (n.endswith("*") and function.startswith(n[:-1])):
            return True
        if call is not None and n.removeprefix("P").lower() == call:
            return True
    return False


def fixes(matrix: Matrix, component: str, functions: list[str], release: str | None) -> list[Fix]:
    """Later releases' crash/hang/corruption fixes that changed (or, in NEWS, name) a function of the stack."""
    site = functions[0] if functions else None
    by_subject: dict[str, list[dict[str, Any]]] = {}
    for row in _rows(matrix, "mpi_crash_fixes"):
        if row["upstream"] == component and any(_touches(row["functions"], f) for f in functions):
            by_subject.setdefault(row["subject"], []).append(row)
    out: list[Fix] = []
    for subject, rows in by_subject.items():
        released = sorted({r["release"] for r in rows}, key=numeric_tuple)
        if _later(release, released) is False:
            continue
        first = min(rows, key=lambda r: numeric_tuple(r["release"]))
        touched = tuple(f for f in functions if _touches(first["functions"], f))
        out.append(Fix(first["release"], subject, touched, first["source"], site in touched))
    if component == "ucx":
        for row in _rows(matrix, "upstream_release_notes"):
            if row["upstream"] != "ucx" or row["kind"] != "fix" or row.get("symptom") not in CRASH_SYMPTOMS:
                continue
            named = tuple(f for f in functions if re.search(rf"\b{re.escape(f)}\b", row["text"]))
            if named and _later(release, [row["release"]]) is not False:
                out.append(Fix(row["release"], row["text"], named, row["source"], site in named))
    out.sort(key=lambda f: (not f.at_site, numeric_tuple(f.release)))
    return out


def _sites(matrix: Matrix, component: str, functions: set[str]) -> list[dict[str, Any]]:
    return [
        r for r in _rows(matrix, "mpi_crash_sites") if r["upstream"] == component and set(r["functions"]) <= functions
    ]


def _chain(placed: list[Placed], site: int) -> str:
    """The crashing frame, what it called (loader/libc frames above it) and two callers: 'a -> b -> dlopen'."""
    callers = [p.frame.function or p.frame.library or "?" for p in placed[site + 1 : site + 3]][::-1]
    called = [p for p in placed[:site] if p.role == ROLE_LOADER]
    tail = f" -> {called[0].part} ({called[-1].frame.function or called[-1].frame.library})" if called else ""
    return " -> ".join([*callers, placed[site].frame.function or placed[site].frame.library or "?"]) + tail


def cause(
    matrix: Matrix, lines: tuple[str, ...], image_ucx: str | None = None, info: tuple[str, ...] = ()
) -> CauseResult | None:
    """`lines`: the frame lines; `info`: the log's release and build lines (LogContext.stack_lines)."""
    placed = [place(matrix, f) for f in frames_of(lines)]
    return _with_isolate(_cause(matrix, placed, image_ucx, info), placed)


def _cause(matrix: Matrix, placed: list[Placed], image_ucx: str | None, info: tuple[str, ...]) -> CauseResult | None:
    site = next((i for i, p in enumerate(placed) if p.role in (ROLE_COMPONENT, ROLE_REPORT)), None)
    if site is None:
        return None  # no frame in a known component: the generic advice stays
    comp = placed[site].component
    assert comp is not None  # a placed frame has one
    if placed[site].role == ROLE_REPORT:
        return _reported(placed, site, comp)
    mine = [p for p in placed if p.component == comp and p.role == ROLE_COMPONENT]
    functions = list(dict.fromkeys(p.frame.function for p in mine if p.frame.function))
    release = release_from_paths(matrix, placed, comp) or release_from_lines(matrix, info, comp)
    if release is None and comp == "ucx" and image_ucx:
        release = Release(image_ucx, "the image's UCX")
    version = release.version if release else None
    name = NAMES.get(comp, comp)
    shown = f"{name} {version} ({release.where})" if release else name
    part = placed[site].part or name
    others = list(dict.fromkeys(p.component for p in placed if p.role == ROLE_COMPONENT and p.component != comp))
    head = f"The crash is in {shown}, {part}: {_chain(placed, site)}"
    if others:
        head += f" (also on the stack: {', '.join(NAMES.get(o, o) for o in others if o)})"
    because = [f"crashing frame: {placed[site].frame.text[:200]}"]
    if release:
        because.append(f"{name} {release.version}: {release.where}")
    found_sites = _sites(matrix, comp, set(functions))
    if found_sites:
        s = found_sites[0]
        inside = _later(version, list(s["fixed"]))
        supported = inside is True and s.get("first_affected") is not None
        if inside is False:
            found_sites = []
        else:
            if not s["fixed"]:
                when = "no fixed release is stated"
            elif inside:
                when = f"{name} {version} predates the fixes ({', '.join(s['fixed'])})"
            else:
                when = f"the log does not show the {name} release; fixed in {', '.join(s['fixed'])}"
            because += [f"{s['id']}: {s['source']}", f"needs: {s['condition']}"]
            config = build_of(matrix, info, comp)
            if config is not None:
                flag = s.get("build_flag")
                shown_flag = "shows" if flag and flag in config else "does not show"
                because.append(f"the log's configure line {shown_flag} {flag}: {config[:160]}" if flag else config)
            return CauseResult(
                order=0,
                id=CAUSE_ID,
                text=f"{head}. A known crash site: {s['mechanism']}. It needs {s['condition']}; {when}.",
                next=s["next"],
                confidence=s["confidence"] if supported else "reported",
                status=CAUSE_SUPPORTED if supported else CAUSE_UNCONDITIONAL,
                because=tuple(because),
            )
    if comp not in {r["upstream"] for r in _rows(matrix, "mpi_crash_fixes")}:
        # no release history of this component is enumerated here: name where it crashed, claim nothing about fixes
        return CauseResult(
            0,
            CAUSE_ID,
            f"{head}. Its release fixes are not compared here (only UCX's and Open MPI's are)",
            f"read the {name} frames above with the {name} release the job loaded; compare with its release notes",
            "reported",
            CAUSE_UNCONDITIONAL,
            tuple(because),
        )
    # the crashing function and its nearest callers: a fix deep in the callers (ucp_worker_progress) says little
    found = fixes(matrix, comp, functions[:NEAR_FRAMES], version)
    if found:
        listed = "; ".join(
            f"{f.release}: {f.text} (changes {', '.join(f.functions)}; {f.source.split(' ')[0]})"
            for f in found[:LISTED]
        )
        more = f" and {len(found) - LISTED} more" if len(found) > LISTED else ""
        if version:
            text = (
                f"{head}. Later {name} releases fix crashes, hangs or corruption in these functions: {listed}{more}. "
                f"{name} {version} predates them: a defect fixed later is possible, worth an A/B with a newer release"
            )
            nxt = (
                f"rerun with {name} {found[0].release} or newer (the same binary with a newer {name}, e.g. "
                f"LD_LIBRARY_PATH to its lib/ or a newer image); if the crash goes away, that was it"
            )
        else:
            text = (
                f"{head}. The log does not show the {name} release; {name} fixes of crashes, hangs or corruption in "
                f"these functions: {listed}{more}"
            )
            nxt = f"find the {name} release the job loaded (ucx_info -v / ompi_info --version); if it predates a fix "
            nxt += "above, rerun with a newer one"
        because += [f"{f.release}: {f.source}" for f in found[:LISTED]]
        return CauseResult(0, CAUSE_ID, text, nxt, "reported", CAUSE_UNCONDITIONAL, tuple(because))
    return CauseResult(
        0,
        CAUSE_ID,
        f"{head}. No {name} release fix found changes these functions"
        + (f" after {version}" if version else " (the log does not show the release)"),
        f"report it to {name} with this stack; try the newest {name} release",
        "reported",
        CAUSE_UNCONDITIONAL,
        tuple(because),
    )


def _reported(placed: list[Placed], site: int, comp: str) -> CauseResult:
    """The stack starts in the component's own error report: it ended the process on an error it printed (a
    completion with error, a fatal log line), so the error line is the failure, not a defect in the code."""
    name = NAMES.get(comp, comp)
    fn = placed[site].frame.function or "?"
    return CauseResult(
        0,
        CAUSE_ID,
        f"The stack starts in {name}'s own error report ({placed[site].part}: {_chain(placed, site)}): {name} ended "
        f"the process on an error it printed just before the backtrace, not on a fault in its code",
        f"read the {name} error line printed before the backtrace (for a completion with error: the status, QP and "
        "opcode it names, then the fabric: port state, link errors, the peer)",
        "reported",
        CAUSE_UNCONDITIONAL,
        (f"first frame past the handler: {placed[site].frame.text[:200]}", f"{fn}: the component's error report"),
    )


def _with_isolate(result: CauseResult | None, placed: list[Placed]) -> CauseResult | None:
    """The crashing part's own off switch, when the catalog knows one: an A/B without upgrading."""
    site = next((p for p in placed if p.role in (ROLE_COMPONENT, ROLE_REPORT)), None)
    if result is None or site is None or site.role != ROLE_COMPONENT or not site.isolate:
        return result
    if site.isolate.split("=", 1)[0] in result.next:
        return result  # the next step already names that setting
    from dataclasses import replace

    return replace(result, next=f"{result.next}; to confirm without a rebuild, rerun with {site.isolate}")


def placed_first(causes: tuple[CauseResult, ...], extra: CauseResult) -> tuple[CauseResult, ...]:
    """The component cause goes after the causes a condition supports and before the rest (the generic 'read the
    stack' advice included: the frames were read). Orders are renumbered."""
    from dataclasses import replace

    items = list(causes)
    at = next((i for i, c in enumerate(items) if c.status != CAUSE_SUPPORTED), len(items))
    items.insert(at, extra)
    return tuple(replace(c, order=i + 1) for i, c in enumerate(items))
