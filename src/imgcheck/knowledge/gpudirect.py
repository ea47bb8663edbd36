"""The GPUDirect path NCCL takes on a node: DMA-BUF, peer memory (nvidia-peermem), or neither.

Each answer is (True | False | None, words). Inputs are plain facts so the engine (Ctx), triage and
recommend ask the same question the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..matrix import Matrix
from ..model.node import NodeFacts
from . import nccl as nccl_k
from . import stack
from .settings import Setting


def nccl_why(matrix: Matrix, version: str | None, feature: str) -> str:
    """Why NCCL's behaviour `feature` cannot be decided for `version`."""
    if not version:
        return (
            "no NCCL found in the image (it may be linked statically into the framework); "
            "give the NCCL version with a facts file to decide"
        )
    return f"NCCL {version} may be older or newer than {nccl_k.feature_floor(matrix, feature)} ({feature.replace('_', ' ')})"


def nic_dmabuf(
    matrix: Matrix,
    node: NodeFacts,
    lib_present: bool | None,
    lib_dmabuf: bool | None,
    lib_version: str | None,
    dmabuf_first_release: str,
) -> tuple[bool | None, str]:
    """Whether the image's libibverbs and the node's RDMA stack can register DMA-BUF memory."""
    if lib_present is False:
        return False, "the image has no libibverbs"
    if lib_present is None:
        return None, "whether the image has libibverbs is unknown"
    if lib_dmabuf is False:
        lib = f"libibverbs {lib_version}" if lib_version else "libibverbs"
        return False, (f"the image's {lib} lacks ibv_reg_dmabuf_mr (first in rdma-core {dmabuf_first_release})")
    ok, why = stack.node_has_feature(matrix, node, "dmabuf_mr")
    if ok is False:
        return False, f"the node cannot register DMA-BUF memory ({why})"
    if lib_dmabuf is None:
        return None, f"whether the image's libibverbs exports ibv_reg_dmabuf_mr is unknown; node: {why}"
    return ok, why


def dmabuf_usable(
    matrix: Matrix,
    node: NodeFacts,
    nccl_version: str | None,
    dmabuf_setting: Setting | None,
    nic: tuple[bool | None, str],
) -> tuple[bool | None, str]:
    """Whether NCCL will use DMA-BUF for GPU buffers on this node, and why (not). What rules it out for every NCCL
    release (the setting, the proprietary GPU modules, a NIC side that cannot register dma-buf) is decided before
    the version is asked: the version matters only where the node could do it."""
    newer = nccl_k.has_feature(matrix, nccl_version, "dmabuf")
    if newer is False:
        return False, f"NCCL {nccl_version} predates DMA-BUF support ({nccl_k.feature_floor(matrix, 'dmabuf')})"
    if dmabuf_setting is not None and dmabuf_setting.as_int() == 0:
        return False, f"{dmabuf_setting.label} disables it"
    module = node.gpu.kernel_module
    if module is not None and module != "open":
        return False, "the GPU driver uses the proprietary kernel modules (DMA-BUF export needs the open ones)"
    if nic[0] is False:
        return nic
    if newer is None:
        return None, nccl_why(matrix, nccl_version, "dmabuf")
    if module is None:
        return None, stack.unknown_why(node, "gpu.kernel_module")
    return nic


def peermem_visible(matrix: Matrix, node: NodeFacts, nccl_version: str | None) -> tuple[bool | None, str]:
    """Whether NCCL's own GDR check (version-dependent) finds a peer-memory module on this node."""
    pm = node.gpu.peermem
    if pm.legacy_nv_peer_mem:
        return True, "the legacy nv_peer_mem / memory_peers/nv_mem entry exists"
    if pm.loaded is None:
        return None, stack.unknown_why(node, "gpu.peermem.loaded")
    if not pm.loaded:
        return False, "nvidia-peermem is not loaded"
    modern = nccl_k.has_feature(matrix, nccl_version, "gdr_module_sysfs_check")
    if modern is None:
        return None, nccl_why(matrix, nccl_version, "gdr_module_sysfs_check")
    if modern:
        return True, "nvidia-peermem is loaded (/sys/module/nvidia_peermem/version)"
    peers, why = stack.memory_peers_api(matrix, node)
    if peers is None:
        return None, why
    if peers:
        return True, f"nvidia-peermem is registered under /sys/kernel/mm/memory_peers ({why})"
    return False, f"NCCL {nccl_version} only checks /sys/kernel/mm/memory_peers, and {why}"


def nccl_gdr_checks_words(matrix: Matrix, nccl_version: str | None) -> str:
    """Which files this NCCL's GDR check looks at."""
    floor = nccl_k.feature_floor(matrix, "gdr_module_sysfs_check")
    if nccl_k.has_feature(matrix, nccl_version, "gdr_module_sysfs_check"):
        return (
            f"NCCL >= {floor} checks /sys/kernel/mm/memory_peers/{{nv_mem,nv_mem_nc}}/version "
            "and /sys/module/nvidia_peermem/version"
        )
    if nccl_version is None:  # the same finding for every release: say what each looks at
        return (
            f"NCCL checks /sys/kernel/mm/memory_peers/*/version, and from {floor} also "
            "/sys/module/nvidia_peermem/version"
        )
    return f"NCCL {nccl_version} (< {floor}) checks only /sys/kernel/mm/memory_peers/*/version"


@dataclass(frozen=True)
class NodeGpuDirect:
    """The GPUDirect RDMA paths a node offers any CUDA + verbs workload, before any image is considered."""

    dmabuf: tuple[bool | None, str]  # open GPU kernel modules and a stack that registers dma-buf MRs
    peer_memory: tuple[bool | None, str]  # a peer-memory module loaded on a stack with the peer-memory API


def node_paths(matrix: Matrix, node: NodeFacts) -> NodeGpuDirect:
    module = node.gpu.kernel_module
    dmabuf: tuple[bool | None, str]
    peer: tuple[bool | None, str]
    mr, mr_why = stack.node_has_feature(matrix, node, "dmabuf_mr")
    if module is None:
        dmabuf = (
            None if mr is not False else False,
            stack.unknown_why(node, "gpu.kernel_module") if mr is not False else f"the stack cannot: {mr_why}",
        )
    elif module != "open":
        dmabuf = (False, "the GPU driver uses the proprietary kernel modules (DMA-BUF export needs the open ones)")
    else:
        dmabuf = (mr, f"open GPU kernel modules; {mr_why}")
    pm = node.gpu.peermem
    api, api_why = stack.node_has_feature(matrix, node, "peer_memory_api")
    if api is False:
        peer = (False, f"{api_why}: nvidia-peermem cannot register there")
    elif pm.loaded or pm.legacy_nv_peer_mem:
        peer = (True if api else None, "a peer-memory module is loaded" + ("" if api else f"; {api_why}"))
    elif pm.loaded is False:
        peer = (False, "nvidia-peermem is not loaded")
    else:
        peer = (None, stack.unknown_why(node, "gpu.peermem.loaded"))
    return NodeGpuDirect(dmabuf=dmabuf, peer_memory=peer)
