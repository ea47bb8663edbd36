"""The node-side alternative: which driver / OFED / DOCA / kernel / module change makes the CURRENT image clean.

Nothing here is asserted from text: each proposal is a modified copy of the node's facts (a newer driver
branch from the matrix's driver->CUDA catalog, nvidia-peermem loaded, the open kernel modules, a newer
MLNX_OFED/DOCA-OFED series, a kernel at a feature's minimum, an unlimited memlock limit) on which the engine
is re-run; only changes the engine then predicts clean are proposed, the smallest set of changes first.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from ..engine.evaluate import Evaluation, evaluate
from ..job.model import JobFacts
from ..knowledge.stack import release_series as series_of
from ..matrix import Matrix
from ..model.image import ImageFacts
from ..model.node import STACK_DOCA, STACK_INBOX, STACK_MLNX_OFED, NodeFacts
from ..versions.ecosystems import at_least, compare_numeric, numeric_tuple
from .candidates import BLOCKING

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

MAX_CHANGES = 3  # more than three simultaneous node changes is a rebuild, not an upgrade path
MAX_SOLUTIONS = 3
T = TypeVar("T", bound="DataclassInstance")


@dataclass(frozen=True)
class Change:
    category: str  # driver | peermem | open-modules | kernel | ofed | memlock
    words: str
    apply: Callable[[NodeFacts], NodeFacts]


@dataclass(frozen=True)
class NodePath:
    changes: tuple[str, ...]  # the words of each change, e.g. "GPU driver 535.104.05 -> branch 550 (>= 550.54.14)"


def _set(obj: T, path: str, value: object) -> T:
    head, _, rest = path.partition(".")
    return dataclasses.replace(obj, **{head: value if not rest else _set(getattr(obj, head), rest, value)})


def _driver_changes(node: NodeFacts, matrix: Matrix) -> list[Change]:
    current = node.gpu.driver_version
    nums = numeric_tuple(current or "")
    if not nums:
        return []
    out = []
    rows = sorted(matrix.rows("nvidia_driver_cuda"), key=lambda r: numeric_tuple(r["driver_branch"]))
    for row in rows:
        branch = row["driver_branch"]
        if numeric_tuple(branch)[0] <= nums[0]:
            continue
        target = row.get("cuda_ga_min_linux_driver") or branch

        def apply(n: NodeFacts, target: str = target, row: dict[str, Any] = row) -> NodeFacts:
            n = _set(n, "gpu.driver_version", target)
            if row.get("newest_cuda_native"):
                n = _set(n, "gpu.cuda_driver_version", row["newest_cuda_native"])
            if n.gpu.peermem.loaded:  # nvidia-peermem ships with the driver: it moves with it
                n = _set(n, "gpu.peermem.version", target)
            return n

        floor = f" (>= {row['cuda_ga_min_linux_driver']})" if row.get("cuda_ga_min_linux_driver") else ""
        native = f", CUDA {row['newest_cuda_native']} native" if row.get("newest_cuda_native") else ""
        out.append(
            Change(
                "driver",
                f"GPU driver {current} -> branch {branch}{floor}{native} [{row['confidence']}: {row['source']}]",
                apply,
            )
        )
    return out


def _peermem_changes(node: NodeFacts, matrix: Matrix) -> list[Change]:
    pm = node.gpu.peermem
    stack = node.rdma.stack
    if pm.loaded or stack not in (STACK_INBOX, STACK_MLNX_OFED, STACK_DOCA):
        return []
    row = matrix.row(
        "kernel_rdma_features",
        feature="peer_memory_api",
        stack=STACK_INBOX if stack == STACK_INBOX else STACK_MLNX_OFED,
    )
    if row is None or row.get("min_version") is None:
        return []  # e.g. inbox kernels: no peer-memory client API, nvidia-peermem cannot load
    driver = node.gpu.driver_version

    def apply(n: NodeFacts) -> NodeFacts:
        return _set(_set(n, "gpu.peermem.loaded", True), "gpu.peermem.version", driver)

    return [
        Change(
            "peermem",
            "load nvidia-peermem (modprobe nvidia-peermem; it ships with the GPU driver) "
            f"[{row['confidence']}: {row['source']}]",
            apply,
        )
    ]


def _open_module_changes(node: NodeFacts) -> list[Change]:
    if node.gpu.kernel_module != "proprietary":
        return []
    return [
        Change(
            "open-modules",
            "switch the GPU driver to the open kernel modules (DMA-BUF export needs them)",
            lambda n: _set(n, "gpu.kernel_module", "open"),
        )
    ]


def _kernel_changes(node: NodeFacts, matrix: Matrix) -> list[Change]:
    release = node.kernel.release
    if node.rdma.stack != STACK_INBOX or not numeric_tuple(release or ""):
        return []
    minimums = sorted(
        {
            r["min_version"]
            for r in matrix.rows("kernel_rdma_features")
            if r.get("stack") == STACK_INBOX and r.get("min_version") and not at_least(release, r["min_version"])
        },
        key=numeric_tuple,
    )
    return [Change("kernel", f"kernel {release} -> >= {m} (inbox RDMA stack)", _kernel_at(m)) for m in minimums]


def _kernel_at(release: str) -> Callable[[NodeFacts], NodeFacts]:
    return lambda n: _set(n, "kernel.release", release)


def _ofed_changes(node: NodeFacts, image: ImageFacts, matrix: Matrix) -> list[Change]:
    stack = node.rdma.stack
    current = series_of(node.rdma.ofed_version)
    if stack in (STACK_MLNX_OFED, STACK_DOCA):
        if current is None:
            return []
    elif stack == STACK_INBOX and image.rdma.flavor in ("mlnx_ofed", "doca"):
        current = None  # installing MLNX_OFED/DOCA-OFED on an inbox node, for an image that carries its userspace
    else:
        return []
    newest_per_series: dict[str, dict[str, Any]] = {}
    for row in matrix.rows("mlnx_ofed_releases"):
        series = row["series"]
        if current is not None and compare_numeric(series, current) <= 0:
            continue
        best = newest_per_series.get(series)
        if best is None or compare_numeric(row["release"], best["release"]) > 0:
            newest_per_series[series] = row
    removed = matrix.row("kernel_rdma_features", feature="memory_peers_sysfs_removed", stack=STACK_MLNX_OFED)
    out = []
    for series in sorted(newest_per_series, key=numeric_tuple):
        row = newest_per_series[series]
        release = row["release"]
        new_stack = stack if stack in (STACK_MLNX_OFED, STACK_DOCA) else STACK_MLNX_OFED

        def apply(n: NodeFacts, release: str = release, new_stack: str | None = new_stack) -> NodeFacts:
            n = _set(_set(n, "rdma.stack", new_stack), "rdma.ofed_version", release)
            if removed and removed.get("min_version"):
                n = _set(n, "rdma.peer_memory_api", not at_least(release, removed["min_version"]))
            return n

        name = "DOCA-OFED" if new_stack == STACK_DOCA else "MLNX_OFED"
        before = node.rdma.ofed_version or f"{stack} stack"
        out.append(Change("ofed", f"{name} {before} -> {release} [{row['confidence']}: {row['source']}]", apply))
    return out


def _memlock_changes(node: NodeFacts) -> list[Change]:
    memlock = node.limits.memlock_kib
    if memlock is None or memlock < 0:
        return []
    return [
        Change(
            "memlock",
            f"memlock limit {memlock} KiB -> unlimited (LimitMEMLOCK=infinity / ulimit -l unlimited "
            "for the job's processes)",
            lambda n: _set(n, "limits.memlock_kib", -1),
        )
    ]


def changes_for(node: NodeFacts, image: ImageFacts, matrix: Matrix) -> dict[str, list[Change]]:
    """Every single change imgcheck can model for this node, by category, least invasive first within each."""
    found = {
        "memlock": _memlock_changes(node),
        "peermem": _peermem_changes(node, matrix),
        "open-modules": _open_module_changes(node),
        "driver": _driver_changes(node, matrix),
        "kernel": _kernel_changes(node, matrix),
        "ofed": _ofed_changes(node, image, matrix),
    }
    return {k: v for k, v in found.items() if v}


def _runs(image: ImageFacts, node: NodeFacts, matrix: Matrix, jobs: tuple[JobFacts, ...] = ()) -> list[Evaluation]:
    """The engine on the image alone, or on each launch-spec container that runs it (the job's values count)."""
    return [evaluate(image, node, matrix, job=job) for job in jobs] if jobs else [evaluate(image, node, matrix)]


def _clean(
    image: ImageFacts,
    node: NodeFacts,
    matrix: Matrix,
    must_decide: AbstractSet[str],
    ignore: frozenset[str],
    jobs: tuple[JobFacts, ...] = (),
) -> bool:
    for result in _runs(image, node, matrix, jobs):
        if any(f.severity in BLOCKING and f.id not in ignore and not f.assumes for f in result.findings):
            return False
        if {u.rule for u in result.unknowns} & must_decide:
            return False
    return True


def node_paths(
    image: ImageFacts,
    node: NodeFacts,
    matrix: Matrix,
    ignore: frozenset[str] = frozenset(),
    jobs: tuple[JobFacts, ...] = (),
) -> list[NodePath]:
    """The smallest sets of node changes after which the engine predicts `image` clean on `node` (empty if none).
    `jobs`: the launch-spec containers running the image; the re-check includes them."""
    failing = {
        f.id
        for result in _runs(image, node, matrix, jobs)
        for f in result.findings
        if f.severity in BLOCKING and f.id not in ignore and not f.assumes  # a hypothesis is no failure
    }
    if not failing:
        return []
    options = changes_for(node, image, matrix)
    categories = list(options)
    for size in range(1, min(MAX_CHANGES, len(categories)) + 1):
        solutions = []
        for combo in itertools.combinations(categories, size):
            for picks in itertools.product(*(options[c] for c in combo)):  # ascending: the first hit is the smallest
                modified = node
                for change in picks:
                    modified = change.apply(modified)
                if _clean(image, modified, matrix, failing, ignore, jobs):
                    solutions.append(NodePath(tuple(c.words for c in picks)))
                    break
            if len(solutions) >= MAX_SOLUTIONS:
                break
        if solutions:
            return solutions
    return []
