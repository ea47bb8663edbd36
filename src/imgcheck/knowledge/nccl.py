"""NCCL in the image: which copy a process loads, and what a version does (nccl_features rows)."""

from __future__ import annotations

import re

from ..matrix import Matrix
from ..model.image import ImageFacts, Nccl
from ..versions import ranges
from ..versions.ecosystems import numeric_tuple

# Which copy of NCCL a process in the image loads, most likely first. A pip wheel (nvidia-nccl-cuXX)
# is what PyPI torch loads through its rpath; torch's pin names the wheel pip would install; a system
# libnccl is what source-built frameworks (NGC images) and nccl-tests link; a package record alone is last.
NCCL_ORIGIN_ORDER = ("pip", "torch-requirement", "library", "dpkg", "rpm")
ORIGIN_WORDS = {
    "pip": "pip wheel (PyPI torch loads it through its rpath)",
    "torch-requirement": "torch's Requires-Dist pin (the wheel pip installs with torch)",
    "library": "system library (what the dynamic loader finds)",
    "dpkg": "libnccl2 package record",
    "rpm": "libnccl package record",
}


# nvidia-nccl-cu12 / nvidia_nccl_cu13-2.29.7.dist-info: the CUDA major a wheel (or a pin on it) is built for
_WHEEL_CUDA = re.compile(r"nvidia[-_]nccl[-_]cu(\d+)", re.IGNORECASE)


def wheel_cuda_major(nccl: Nccl) -> int | None:
    """The CUDA major of an nvidia-nccl-cuXX wheel or pin: from its dist-info path, or from the requirement line
    a pin quotes (None: not a wheel, or the name was not recorded)."""
    m = _WHEEL_CUDA.search(nccl.path or "") or _WHEEL_CUDA.search(getattr(nccl, "how", None) or "")
    return int(m.group(1)) if m else None


def nccl_in_use(image: ImageFacts | None) -> Nccl | None:
    """The NCCL copy a process in the image most likely loads (None: no versioned NCCL found)."""
    if image is None:
        return None
    candidates = [n for n in image.nccl if n.version and numeric_tuple(n.version)]
    if not candidates:
        return None
    rank = {origin: i for i, origin in enumerate(NCCL_ORIGIN_ORDER)}
    return sorted(candidates, key=lambda n: rank.get(n.origin or "", len(rank)))[0]


def selection_words(image: ImageFacts, chosen: Nccl) -> str:
    why = ORIGIN_WORDS.get(chosen.origin or "", chosen.origin or "unknown origin")
    others = [f"{n.origin} {n.version} at {n.path}" for n in image.nccl if n is not chosen]
    return f"used: {why}" + (f"; also present: {', '.join(others)}" if others else "")


def feature_floor(matrix: Matrix, feature: str) -> str:
    """The first NCCL version with `feature` (nccl_features.nccl_min)."""
    return str(matrix.need("nccl_features", feature=feature)["nccl_min"])


def param_reach(matrix: Matrix, name: str) -> str | None:
    """The words for the NCCL releases that read setting `name` the way the catalog describes (nccl_params: the
    first and last release scanned that read it, and the one that stopped), for a finding that holds for every
    one of them while the image's NCCL version is unknown; None when the catalog has no row for it."""
    row = matrix.row("nccl_params", name=name)
    if row is None:
        return None
    if row.get("removed_in"):
        span = f"NCCL {row['first']} up to (not including) {row['removed_in']}"
    else:
        span = f"NCCL {row['first']} or later (every release scanned up to {row['last']})"
    return f"the job's NCCL is {span}, the releases that read {name} (compat_matrix nccl_params, from their source)"


def has_feature(matrix: Matrix, version: str | None, feature: str) -> bool | None:
    """Whether NCCL `version` has `feature`; None when the version is unknown or a partial version
    ("2.13") straddles the row's bounds."""
    row = matrix.need("nccl_features", feature=feature)
    if not version:
        return None
    return ranges.within(version, row["nccl_min"], row.get("nccl_below"))


def older_than_gpu_generation(matrix: Matrix, version: str, gpu_names: list[str]) -> tuple[bool | None, str]:
    """Is NCCL `version` below the first release for the generation of these GPUs (nccl_gpu_generations rows)?

    (True | False | None, why); None when no row names the GPUs or the version cannot be ordered."""
    rows = matrix.rows("nccl_gpu_generations")
    for name in gpu_names:
        row = next((r for r in rows if re.search(r["pattern"], name)), None)
        if row is None:
            continue
        ok = ranges.at_least(version, row["nccl_min"])
        if ok is None:
            return None, f"NCCL {version} cannot be ordered against {row['nccl_min']} ({name})"
        return (not ok), (
            f"NCCL {version} {'>=' if ok else '<'} {row['nccl_min']}, the first release for {row['generation']} "
            f"GPUs ({name})"
        )
    return None, f"no nccl_gpu_generations row names {', '.join(gpu_names[:3])}"


def in_known_issue(matrix: Matrix, version: str | None, issue: str) -> tuple[bool | None, str]:
    """Whether NCCL `version` is in the affected range of the nccl_known_issues row `issue`."""
    row = matrix.need("nccl_known_issues", issue=issue)
    fixed = row["nccl_below"]
    span = f"{row['nccl_min']}..{fixed} (fixed in {fixed})" if fixed else f"{row['nccl_min']} on (no fixed release)"
    if not version:
        return None, f"NCCL version unknown; {issue} affects {span}"
    hit = ranges.within(version, row["nccl_min"], row["nccl_below"])
    words = {True: "is in", False: "is outside", None: "may or may not be in"}[hit]
    return hit, f"NCCL {version} {words} {span}"


def in_behaviour_window(matrix: Matrix, version: str | None, parameter: str, symptom: str) -> tuple[bool | None, str]:
    """Whether NCCL `version` is past the release_behaviour_changes row that changes `parameter` with a consequence of
    kind `symptom` (memory, error, ...), and before the release that removes the consequence (fixed_in)."""
    row = next(
        r
        for r in matrix.rows("release_behaviour_changes")
        if r["component"] == "nccl" and r["parameter"] == parameter and r.get("symptom") == symptom
    )
    fixed = row.get("fixed_in")
    span = f"{row['release']}..{fixed} (gone in {fixed})" if fixed else f"{row['release']} on"
    if not version:
        return None, f"NCCL version unknown; {parameter}'s default change affects {span}"
    hit = ranges.within(version, row["release"], fixed)
    words = {True: "is in", False: "is outside", None: "may or may not be in"}[hit]
    return hit, f"NCCL {version} {words} {span}: {row['behaviour']}"


def in_traced_fix(matrix: Matrix, version: str | None, issue: str) -> tuple[bool | None, str]:
    """Whether NCCL `version` has the bug of the traced fix named `issue` (nccl_fix_ranges: first_affected up to, not
    including, the fixing release of its nccl_release_notes entry)."""
    trace = matrix.need("nccl_fix_ranges", issue=issue)
    entry = trace["entry"]
    fixed = matrix.need("nccl_release_notes", entry=entry)["release"]
    first = trace["first_affected"]
    span = f"{first or '?'}..{fixed} (fixed in {fixed})"
    if not version:
        return None, f"NCCL version unknown; the bug of {entry} affects {span}"
    if first:
        hit = ranges.within(version, first, fixed)
    else:
        hit = False if ranges.at_least(version, fixed) else None
    words = {True: "has", False: "does not have", None: "may or may not have"}[hit]
    return hit, f"NCCL {version} {words} the bug fixed in {fixed} (affects {span})"
