"""Named fact predicates that signature conditions may use (`node.peermem_loaded`, ...).

Each returns (True | False | None, a short reason naming the fact). None means the fact is
unknown: no --image/--node was given, or the facts do not say.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..model.image import ImageFacts
from ..model.node import STACK_DOCA, STACK_INBOX, STACK_MLNX_OFED, NodeFacts
from ..versions.ecosystems import at_least, numeric_tuple
from .context import LogContext

# Minimum driver per CUDA major under minor-version compatibility.
# Source: https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html (vendor-guidance)
MIN_DRIVER_FOR_CUDA_MAJOR = {11: 450, 12: 525, 13: 580}
MEMLOCK_LOW_KIB = 1024 * 1024  # heuristic: below 1 GiB and not unlimited is "low" for NCCL's registrations


@dataclass(frozen=True)
class Facts:
    image: ImageFacts | None
    node: NodeFacts | None
    log: LogContext


Result = tuple[bool | None, str]


def _no_node() -> Result:
    return None, "no node facts (use --node or --node-facts)"


def _no_image() -> Result:
    return None, "no image facts (use --image)"


def peermem_loaded(f: Facts) -> Result:
    if f.node is None:
        return _no_node()
    pm = f.node.gpu.peermem
    if pm.loaded is None and pm.legacy_nv_peer_mem is None:
        return None, "node facts do not say whether nvidia-peermem is loaded"
    loaded = bool(pm.loaded) or bool(pm.legacy_nv_peer_mem)
    return loaded, (f"node {f.node.name}: nvidia-peermem loaded" + (f" ({pm.version})" if pm.version else "")
                    if loaded else f"node {f.node.name}: nvidia-peermem not loaded")


def peer_memory_api(f: Facts) -> Result:
    if f.node is None:
        return _no_node()
    v = f.node.rdma.peer_memory_api
    if v is None:
        return None, "node facts do not say whether /sys/kernel/mm/memory_peers exists"
    return v, f"node {f.node.name}: /sys/kernel/mm/memory_peers {'exists' if v else 'absent'}"


def memlock_low(f: Facts) -> Result:
    if f.node is None:
        return _no_node()
    kib = f.node.limits.memlock_kib
    if kib is None:
        return None, "node facts do not record the memlock limit"
    if kib == -1:
        return False, f"node {f.node.name}: memlock unlimited"
    return kib < MEMLOCK_LOW_KIB, f"node {f.node.name}: memlock {kib} KiB"


def dmabuf_kernel_capable(f: Facts) -> Result:
    if f.node is None:
        return _no_node()
    n = f.node
    if n.rdma.stack == STACK_DOCA:
        return True, f"node {n.name}: DOCA-OFED kernel stack"
    if n.rdma.stack == STACK_MLNX_OFED:
        ok = at_least(n.rdma.ofed_version, "5.5")
        return ok, f"node {n.name}: MLNX_OFED {n.rdma.ofed_version or 'unknown version'} (dma-buf MR from 5.5)"
    if n.rdma.stack == STACK_INBOX:
        ok = at_least(n.kernel.release, "5.12")
        return ok, f"node {n.name}: inbox RDMA, kernel {n.kernel.release or 'unknown'} (dma-buf MR from 5.12)"
    return None, f"node {n.name}: RDMA stack unknown"


def driver_below_image_cuda(f: Facts) -> Result:
    if f.node is None:
        return _no_node()
    if f.image is None:
        return _no_image()
    cuda = f.image.cuda.version if f.image.cuda else None
    drv = f.node.gpu.driver_version
    if not cuda or not drv or not numeric_tuple(cuda) or not numeric_tuple(drv):
        return None, "image CUDA version or node driver version unknown"
    need = MIN_DRIVER_FOR_CUDA_MAJOR.get(numeric_tuple(cuda)[0])
    if need is None:
        return None, f"no minimum driver recorded for CUDA {cuda}"
    below = numeric_tuple(drv)[0] < need
    return below, f"image CUDA {cuda} needs driver >= {need}; node {f.node.name} has {drv}"


def arch_arm64(f: Facts) -> Result:
    if f.node is None:
        return _no_node()
    if not f.node.arch:
        return None, "node architecture unknown"
    arm = f.node.arch in ("arm64", "aarch64")
    return arm, f"node {f.node.name}: {f.node.arch}"


def gpu_open_module(f: Facts) -> Result:
    if f.node is None:
        return _no_node()
    km = f.node.gpu.kernel_module
    if km is None:
        return None, "node facts do not say open or proprietary GPU kernel module"
    return km == "open", f"node {f.node.name}: {km} GPU kernel module"


def provider_pabi_mismatch(f: Facts) -> Result:
    if f.image is None:
        return _no_image()
    lib = f.image.rdma.libibverbs
    if lib is None or lib.private_abi is None or not f.image.rdma.providers:
        return None, "image libibverbs private ABI or providers unknown"
    bad = [p for p in f.image.rdma.providers if p.pabi is not None and p.pabi != lib.private_abi]
    if bad:
        return True, (f"image providers {', '.join(p.name + '-rdmav' + str(p.pabi) for p in bad[:3])} vs "
                      f"libibverbs IBVERBS_PRIVATE_{lib.private_abi}")
    return False, f"image providers match IBVERBS_PRIVATE_{lib.private_abi}"


def no_libibverbs(f: Facts) -> Result:
    if f.image is None:
        return _no_image()
    lib = f.image.rdma.libibverbs
    return lib is None, ("image has no libibverbs" if lib is None else f"image has libibverbs {lib.version} at {lib.path}")


def no_providers(f: Facts) -> Result:
    if f.image is None:
        return _no_image()
    n = len(f.image.rdma.providers)
    return n == 0, f"image has {n} libibverbs provider(s)"


def image_has_reg_mr_iova2(f: Facts) -> Result:
    if f.image is None:
        return _no_image()
    lib = f.image.rdma.libibverbs
    if lib is None:
        return False, "image has no libibverbs"
    return lib.has_reg_mr_iova2, f"image libibverbs {lib.version} {'exports' if lib.has_reg_mr_iova2 else 'lacks'} ibv_reg_mr_iova2@IBVERBS_1.8"


def nccl_version(f: Facts) -> tuple[str | None, str]:
    """The NCCL the job actually loaded (log) first, else the image's only NCCL."""
    if len(f.log.nccl_versions) == 1:
        return f.log.nccl_versions[0], "log 'NCCL version' line"
    if f.image is not None:
        versions = sorted({n.version for n in f.image.nccl if n.version})
        if len(versions) == 1:
            return versions[0], "image"
    return None, "NCCL version unknown (no single version in the log or image)"


def nccl_below_2_23_4(f: Facts) -> Result:
    v, where = nccl_version(f)
    if v is None:
        return None, where
    below = not at_least(v, "2.23.4")
    return below, f"NCCL {v} ({where}) {'<' if below else '>='} 2.23.4"


def log_ro(f: Facts) -> Result:
    if f.log.relaxed_ordering is None:
        return None, "no 'NET/IB : Using' line in the log"
    return f.log.relaxed_ordering, f"log: NET/IB {'[RO]' if f.log.relaxed_ordering else 'without [RO]'}"


def log_dmabuf(f: Facts) -> Result:
    if f.log.dmabuf_gpus:
        return True, "log: 'DMA-BUF is available on GPU device'"
    return None, "log does not mention DMA-BUF"


PREDICATES: dict[str, Callable[[Facts], Result]] = {
    "node.peermem_loaded": peermem_loaded,
    "node.peer_memory_api": peer_memory_api,
    "node.memlock_low": memlock_low,
    "node.dmabuf_kernel_capable": dmabuf_kernel_capable,
    "node.driver_below_image_cuda": driver_below_image_cuda,
    "node.arch_arm64": arch_arm64,
    "node.gpu_open_module": gpu_open_module,
    "image.provider_pabi_mismatch": provider_pabi_mismatch,
    "image.no_libibverbs": no_libibverbs,
    "image.no_providers": no_providers,
    "image.has_reg_mr_iova2": image_has_reg_mr_iova2,
    "nccl.below_2_23_4": nccl_below_2_23_4,
    "log.ro": log_ro,
    "log.dmabuf": log_dmabuf,
}
