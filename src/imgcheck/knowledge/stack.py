"""What a node's RDMA kernel stack offers, from kernel_rdma_features rows (range-aware, unknown kept)."""

from __future__ import annotations

from ..matrix import Matrix
from ..model.node import STACK_DOCA, STACK_INBOX, STACK_MLNX_OFED, NodeFacts
from ..versions import ranges
from ..versions.ecosystems import compare_numeric, numeric_tuple

MLNX_STACKS = (STACK_MLNX_OFED, STACK_DOCA)
KNOWN_STACKS = (STACK_INBOX, *MLNX_STACKS)


def unknown_why(node: NodeFacts, fact: str) -> str:
    reason = node.unknown.get(fact)
    return f"node fact {fact} is unknown" + (f" ({reason})" if reason else "")


def matrix_stack(stack: str | None) -> str | None:
    """The kernel_rdma_features stack key: DOCA-OFED continues MLNX_OFED's numbering and rows."""
    if stack == STACK_INBOX:
        return STACK_INBOX
    return STACK_MLNX_OFED if stack in MLNX_STACKS else None


def stack_version(node: NodeFacts) -> str | None:
    """The number compared with kernel_rdma_features.min_version: kernel release (inbox) or OFED release."""
    if node.rdma.stack == STACK_INBOX:
        return node.kernel.release
    if node.rdma.stack in MLNX_STACKS:
        return node.rdma.ofed_version
    return None


def release_series(version: str | None) -> str | None:
    """'23.10-1.1.9.0' -> '23.10', '5.8-3.0.7.0' -> '5.8' (MLNX_OFED / DOCA-OFED release series)."""
    nums = numeric_tuple(version or "")
    return f"{nums[0]}.{nums[1]}" if len(nums) >= 2 else None


def _ofed_dotted(version: str) -> str:
    """'5.1-2.3.7.1' -> '5.1.2.3.7.1': an MLNX_OFED/DOCA release compares by every number, not only the series."""
    return version.replace("-", ".", 1)


def version_fact(node: NodeFacts) -> str:
    return "kernel.release" if node.rdma.stack == STACK_INBOX else "rdma.ofed_version"


def feature_floor(matrix: Matrix, feature: str, stack: str | None) -> str | None:
    """min_version of `feature` on `stack` (None: that stack never has it, or the stack is unknown)."""
    key = matrix_stack(stack)
    if key is None:
        return None
    return matrix.need("kernel_rdma_features", feature=feature, stack=key).get("min_version")


def node_has_feature(matrix: Matrix, node: NodeFacts, feature: str) -> tuple[bool | None, str]:
    """(supported?, words) for a kernel RDMA feature on this node's stack."""
    stack = node.rdma.stack
    if stack not in KNOWN_STACKS:
        return None, unknown_why(node, "rdma.stack")
    if feature == "peer_memory_api" and stack == STACK_INBOX:
        seen = inbox_peer_api_seen(node)
        if seen is not None:
            return seen
    row = matrix.need("kernel_rdma_features", feature=feature, stack=matrix_stack(stack))
    version = stack_version(node)
    what = "kernel" if stack == STACK_INBOX else f"{stack} release"
    floor = row.get("min_version")
    if floor is None:
        if feature == "peer_memory_api" and stack == STACK_INBOX:
            return False, (
                "the inbox stack (upstream ib_core) has no peer-memory API, and nothing read from this kernel shows "
                "it carrying one (no /sys/kernel/mm/memory_peers, nvidia-peermem not loaded, ib_core's exports "
                f"{'read without' if _core_read(node) else 'not read for'} {PEER_API_SYMBOL})"
            )
        return False, f"the {stack} stack has no {feature.replace('_', ' ')}"
    if version is None:
        return None, unknown_why(node, version_fact(node))
    ok = (
        ranges.at_least(_ofed_dotted(version), _ofed_dotted(floor))
        if stack != STACK_INBOX
        else ranges.at_least(version, floor)
    )
    if ok is None:
        return None, f"cannot tell whether {what} {version} is >= {floor}"
    return ok, f"{what} {version} {'>=' if ok else '<'} {floor}"


PEER_API_SYMBOL = "ib_register_peer_memory_client"


def inbox_peer_api_seen(node: NodeFacts) -> tuple[bool, str] | None:
    """What the running kernel itself shows about the peer-memory API on a distribution (inbox) kernel.

    Upstream has no peer-memory API, but distribution kernels may carry the patches (reported for some Ubuntu
    kernels), so the kernel's own symbols decide, not the word "inbox": ib_core exporting
    ib_register_peer_memory_client, its /sys/kernel/mm/memory_peers directory, or nvidia-peermem loaded (it
    cannot load without the API). None: the node facts show none of these, the matrix's upstream answer stands.
    """
    if node.rdma.peer_memory_api:
        return True, "/sys/kernel/mm/memory_peers exists: this kernel's ib_core carries the peer-memory API"
    if node.gpu.peermem.loaded:
        return True, "nvidia-peermem is loaded, which it cannot be without the kernel's peer-memory API"
    core = (node.rdma.module_files or {}).get("ib_core")
    if core is not None and core.symbol_crcs and PEER_API_SYMBOL in core.symbol_crcs:
        return True, f"the kernel's ib_core ({core.path}) exports {PEER_API_SYMBOL}"
    return None


def _core_read(node: NodeFacts) -> bool:
    core = (node.rdma.module_files or {}).get("ib_core")
    return core is not None and core.symbol_crcs is not None


def memory_peers_api(matrix: Matrix, node: NodeFacts) -> tuple[bool | None, str]:
    """Whether /sys/kernel/mm/memory_peers exists: seen by the probe, else inferred from the stack and release.

    The directory belongs to the MLNX_OFED/DOCA peer-memory API (ib_core's peer_mem); upstream kernels have
    none, and newer OFED releases stopped creating it. Inferred answers say so.
    """
    seen = node.rdma.peer_memory_api
    if seen is not None:
        return seen, f"/sys/kernel/mm/memory_peers {'exists' if seen else 'is absent'} on the node"
    has_api, why = node_has_feature(matrix, node, "peer_memory_api")
    if has_api is False:
        return False, f"inferred: {why}, so there is no /sys/kernel/mm/memory_peers"
    if has_api is None:
        return None, f"{unknown_why(node, 'rdma.peer_memory_api')}; cannot infer it: {why}"
    if node.rdma.stack not in MLNX_STACKS:  # the removal is an OFED release fact; the matrix has no inbox row
        return None, (
            f"{unknown_why(node, 'rdma.peer_memory_api')}; the {node.rdma.stack} stack shows a peer-memory API "
            f"({why}), but whether it creates /sys/kernel/mm/memory_peers is not known"
        )
    removed, removed_why = node_has_feature(matrix, node, "memory_peers_sysfs_removed")
    if removed:
        return False, f"inferred: {removed_why}, a release without /sys/kernel/mm/memory_peers"
    last = matrix.row("thresholds", key="memory_peers_sysfs_last_seen_ofed_series")
    series = release_series(stack_version(node))
    if removed is False and last is not None and series and compare_numeric(series, str(last["value"])) <= 0:
        return True, (
            f"inferred: {node.rdma.stack} release series {series} <= {last['value']}, whose sources "
            "still create /sys/kernel/mm/memory_peers"
        )
    return None, (
        f"{unknown_why(node, 'rdma.peer_memory_api')}; the matrix cannot tell for "
        f"{node.rdma.stack} {stack_version(node) or '(release unknown)'}"
    )


def capabilities(matrix: Matrix, node: NodeFacts) -> dict[str, tuple[bool | None, str]]:
    """Every kernel_rdma_features feature the matrix knows for this node's stack: {feature: (offered?, words)}."""
    key = matrix_stack(node.rdma.stack)
    features = sorted({r["feature"] for r in matrix.rows("kernel_rdma_features") if key is None or r["stack"] == key})
    return {f: node_has_feature(matrix, node, f) for f in features}
