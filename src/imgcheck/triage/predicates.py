"""Named fact predicates that signature conditions may use (`node.peermem_loaded`, ...).

Each returns (True | False | None, a short reason naming the fact). None means the fact is
unknown: no --image/--node was given, or the facts do not say.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..job.model import RUNTIME_DOCKER, RUNTIME_KUBERNETES, JobFacts
from ..knowledge import cuda as cuda_k
from ..knowledge import driver_userspace as driver_userspace_k
from ..knowledge import gpus as gpus_k
from ..knowledge import nccl as nccl_k
from ..knowledge import shipped
from ..knowledge import stack as stack_k
from ..matrix import Matrix
from ..model.image import ImageFacts
from ..model.node import NodeFacts
from .context import LogContext

# Every number (driver floors, NCCL versions, stack releases, limits) comes from the matrix through
# imgcheck.knowledge, so triage and the check engine answer the same question the same way.


@dataclass(frozen=True)
class Facts:
    image: ImageFacts | None
    node: NodeFacts | None
    log: LogContext
    matrix: Matrix | None = None  # None: the shipped matrix
    job: JobFacts | None = None  # the launch spec's container (--job), when given

    @property
    def kb(self) -> Matrix:
        return self.matrix if self.matrix is not None else shipped()


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
    return loaded, (
        f"node {f.node.name}: nvidia-peermem loaded" + (f" ({pm.version})" if pm.version else "")
        if loaded
        else f"node {f.node.name}: nvidia-peermem not loaded"
    )


def uvm_missing(f: Facts) -> Result:
    """True: the node's facts show nvidia_uvm not loaded or /dev/nvidia-uvm absent; False: both there."""
    if f.node is None:
        return _no_node()
    gpu = f.node.gpu
    if gpu.uvm_loaded is False or gpu.uvm_device is False:
        what = "nvidia_uvm not loaded" if gpu.uvm_loaded is False else "/dev/nvidia-uvm absent"
        return True, f"node {f.node.name}: {what}"
    if gpu.uvm_loaded and gpu.uvm_device:
        return False, f"node {f.node.name}: nvidia_uvm loaded and /dev/nvidia-uvm present"
    return None, "node facts do not say whether nvidia_uvm is loaded and /dev/nvidia-uvm present"


def gdrdrv_device_missing(f: Facts) -> Result:
    """True: GDRCopy's gdrdrv is loaded and /dev/gdrdrv absent (or not a character device); False: the node has a
    usable /dev/gdrdrv; None: the facts do not say (node/gdrdrv.py)."""
    if f.node is None:
        return _no_node()
    gpu = f.node.gpu
    if gpu.gdrdrv_device is True and gpu.gdrdrv_device_mode != "not-char":
        return False, f"node {f.node.name}: /dev/gdrdrv present" + (
            f" (mode {gpu.gdrdrv_device_mode})" if gpu.gdrdrv_device_mode else ""
        )
    if gpu.gdrdrv_loaded and gpu.gdrdrv_device is not None:
        return True, f"node {f.node.name}: gdrdrv loaded, /dev/gdrdrv " + (
            "absent" if gpu.gdrdrv_device is False else "not a character device"
        )
    return None, "node facts do not say whether gdrdrv is loaded with /dev/gdrdrv present"


def gdrdrv_not_loaded(f: Facts) -> Result:
    if f.node is None:
        return _no_node()
    loaded = f.node.gpu.gdrdrv_loaded
    if loaded is None:
        return None, "node facts do not say whether gdrdrv is loaded"
    return (not loaded), f"node {f.node.name}: gdrdrv " + ("loaded" if loaded else "not loaded")


def gpu_without_gdr(f: Facts) -> Result:
    """True: a GPU of the node has no GPUDirect RDMA (the same knowledge as GDRCOPY-GPU-NO-GDR / NODE-GPU-NO-GDR)."""
    if f.node is None:
        return _no_node()
    if not f.node.gpu.gpus:
        return None, f"node {f.node.name}: the GPUs are not recorded"
    answers = [(g, gpus_k.without_gpudirect_rdma(g, f.kb)) for g in f.node.gpu.gpus]
    hit = next((g for g, a in answers if a), None)
    if hit is not None:
        return True, f"node {f.node.name}: {hit.name or 'a GPU'} has no GPUDirect RDMA"
    if any(a is None for _, a in answers):
        return None, f"node {f.node.name}: the GPUDirect RDMA support of some GPU is not known"
    return False, f"node {f.node.name}: every GPU supports GPUDirect RDMA"


def peer_memory_api(f: Facts) -> Result:
    if f.node is None:
        return _no_node()
    v, why = stack_k.memory_peers_api(f.kb, f.node)  # seen by the probe, else inferred from stack and release
    return v, f"node {f.node.name}: {why}"


def memlock_low(f: Facts) -> Result:
    if f.node is None:
        return _no_node()
    kib = f.node.limits.memlock_kib
    if kib is None:
        return None, "node facts do not record the memlock limit"
    if kib == -1:
        return False, f"node {f.node.name}: memlock unlimited"
    low = f.kb.threshold("memlock_low_kib")
    return kib < low, f"node {f.node.name}: memlock {kib} KiB (low: below {low} KiB)"


def dmabuf_kernel_capable(f: Facts) -> Result:
    if f.node is None:
        return _no_node()
    ok, why = stack_k.node_has_feature(f.kb, f.node, "dmabuf_mr")
    return ok, f"node {f.node.name}: {why} (dma-buf MR)"


def driver_below_image_cuda(f: Facts) -> Result:
    if f.node is None:
        return _no_node()
    if f.image is None:
        return _no_image()
    cuda = f.image.cuda.version if f.image.cuda else None
    meets, why = cuda_k.driver_meets(f.kb, f.node.gpu.driver_version, cuda)
    if meets is None:
        return None, why
    return not meets, f"{why} (node {f.node.name})"


def driver_userspace_mismatch(f: Facts) -> Result:
    if f.node is None:
        return _no_node()
    module, userspace = f.node.gpu.driver_version, f.node.gpu.userspace_driver_version
    if not module or not userspace:
        return (
            None,
            f"node {f.node.name}: the loaded module's or the installed user-space driver's version is not recorded",
        )
    return module != userspace, f"node {f.node.name}: kernel module {module}, user-space driver {userspace}"


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


def kmod_flavour_unsupported(f: Facts) -> Result:
    """Does the node's kernel-module flavour refuse one of its GPUs (nvidia_kmod_support, the same knowledge as
    NODE-KMOD-FLAVOUR-UNSUPPORTED-GPU)?"""
    if f.node is None:
        return _no_node()
    km = f.node.gpu.kernel_module
    if km is None:
        return None, f"node {f.node.name}: open or proprietary GPU kernel module is not recorded"
    if not f.node.gpu.gpus:
        return None, f"node {f.node.name}: the GPUs are not recorded"
    unknown = None
    for gpu in f.node.gpu.gpus:
        row, how = gpus_k.kmod_support(gpu, f.kb)
        if row is None:
            unknown = f"node {f.node.name}: {how}"
        elif row[km] == "unsupported":
            return True, f"node {f.node.name}: the {km} module does not drive {gpu.name or 'a GPU'} ({how})"
    if unknown is not None:
        return None, unknown
    return False, f"node {f.node.name}: the {km} module drives every GPU"


def provider_pabi_mismatch(f: Facts) -> Result:
    if f.image is None:
        return _no_image()
    lib = f.image.rdma.libibverbs
    if lib is None or lib.private_abi is None or not f.image.rdma.providers:
        return None, "image libibverbs private ABI or providers unknown"
    bad = [p for p in f.image.rdma.providers if p.pabi is not None and p.pabi != lib.private_abi]
    if bad:
        return True, (
            f"image providers {', '.join(p.name + '-rdmav' + str(p.pabi) for p in bad[:3])} vs "
            f"libibverbs IBVERBS_PRIVATE_{lib.private_abi}"
        )
    return False, f"image providers match IBVERBS_PRIVATE_{lib.private_abi}"


def no_libibverbs(f: Facts) -> Result:
    if f.image is None:
        return _no_image()
    lib = f.image.rdma.libibverbs
    return lib is None, (
        "image has no libibverbs" if lib is None else f"image has libibverbs {lib.version} at {lib.path}"
    )


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
    return (
        lib.has_reg_mr_iova2,
        f"image libibverbs {lib.version} {'exports' if lib.has_reg_mr_iova2 else 'lacks'} ibv_reg_mr_iova2@IBVERBS_1.8",
    )


def nccl_version(f: Facts) -> tuple[str | None, str]:
    """The NCCL the job actually loaded (log) first, else the image's only NCCL."""
    if len(f.log.nccl_versions) == 1:
        return f.log.nccl_versions[0], "log 'NCCL version' line"
    chosen = nccl_k.nccl_in_use(f.image)
    if chosen is not None and f.image is not None:  # a chosen NCCL comes from an image
        return chosen.version, "image (" + nccl_k.selection_words(f.image, chosen) + ")"
    return None, "NCCL version unknown (no single version in the log or image)"


def nccl_lacks(f: Facts, feature: str) -> Result:
    """True when the NCCL in use predates `feature` (a nccl_features row)."""
    v, where = nccl_version(f)
    if v is None:
        return None, where
    has = nccl_k.has_feature(f.kb, v, feature)
    floor = nccl_k.feature_floor(f.kb, feature)
    if has is None:
        return None, f"NCCL {v} ({where}) may be before or after {floor}"
    return not has, f"NCCL {v} ({where}) {'>=' if has else '<'} {floor}"


def nccl_before_gdr_module_check(f: Facts) -> Result:
    return nccl_lacks(f, "gdr_module_sysfs_check")


def nccl_nic_fusion_net_id_0(f: Facts) -> Result:
    """The NCCL in use is in the range of the NIC-fusion known issue whose fallback hard-codes NET/0."""
    v, where = nccl_version(f)
    hit, why = nccl_k.in_known_issue(f.kb, v, "nic_fusion_fallback_net_id_0")
    return hit, f"{why} ({where})" if v else why


def _known_issue(issue: str) -> Callable[[Facts], Result]:
    """The NCCL in use is in the range of a nccl_known_issues row."""

    def predicate(f: Facts) -> Result:
        v, where = nccl_version(f)
        hit, why = nccl_k.in_known_issue(f.kb, v, issue)
        return hit, f"{why} ({where})" if v else why

    return predicate


def _traced(issue: str) -> Callable[[Facts], Result]:
    """The NCCL in use has the bug of a traced release-note fix (catalogs/nccl_fix_ranges.json)."""

    def predicate(f: Facts) -> Result:
        v, where = nccl_version(f)
        hit, why = nccl_k.in_traced_fix(f.kb, v, issue)
        return hit, f"{why} ({where})" if v else why

    return predicate


def _behaviour(parameter: str, symptom: str) -> Callable[[Facts], Result]:
    """The NCCL in use is past a default change (catalogs/release_behaviour_changes.json) whose consequence is of kind
    `symptom`, and before the release that removes it."""

    def predicate(f: Facts) -> Result:
        v, where = nccl_version(f)
        hit, why = nccl_k.in_behaviour_window(f.kb, v, parameter, symptom)
        return hit, f"{why} ({where})" if v else why

    return predicate


def log_ro(f: Facts) -> Result:
    if f.log.relaxed_ordering is None:
        return None, "no 'NET/IB : Using' line in the log"
    return f.log.relaxed_ordering, f"log: NET/IB {'[RO]' if f.log.relaxed_ordering else 'without [RO]'}"


def log_nvls(f: Facts) -> Result:
    """NCCL said NVLS multicast is available on a GPU (src/transport/nvls.cc INFO, 2.17.1 on)."""
    if f.log.nvls_available is None:
        return None, "the log does not say whether NVLS multicast is available (NCCL_DEBUG=INFO prints it)"
    return f.log.nvls_available, f"log: NVLS multicast support is {'' if f.log.nvls_available else 'not '}available"


def log_multi_port_nic(f: Facts) -> Result:
    """NCCL's IB transport uses a second port of one NIC ("NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_0:2/IB")."""
    ports: dict[str, set[str]] = {}
    for dev in f.log.ib_devices:
        name, _, rest = dev.partition(":")
        ports.setdefault(name, set()).add(rest.split("/")[0])
    if not ports:
        return None, "no 'NET/IB : Using' line in the log"
    multi = sorted(n for n, p in ports.items() if len(p) >= 2)
    if multi:
        return True, f"log: NET/IB uses several ports of {', '.join(multi)}"
    # a dual-port ConnectX shows each port as its own device (one PCI function each): names cannot tell
    return None, "log: NET/IB uses one port per device; whether two devices are the ports of one card is not shown"


def image_driver_userspace(f: Facts) -> Result:
    """True when the image's packages install the NVIDIA driver's user space (catalog driver_userspace_packages)."""
    if f.image is None:
        return None, "no image facts (use --image)"
    if f.image.unknown_reason("packages"):
        return None, "the image's package list was not read"
    found = driver_userspace_k.driver_packages(f.kb, f.image)
    if found:
        return True, "image packages: " + ", ".join(f"{p.name} {p.version}" for p, _ in found)
    return False, "no package of the image installs the NVIDIA driver's user space"


def log_gpu_pv(f: Facts) -> Result:
    """True when the log shows a WSL2 / Hyper-V GPU-PV guest path; None otherwise (a log rarely says it is not)."""
    if f.log.gpu_pv:
        return True, "log: a WSL2 / GPU-PV path (/usr/lib/wsl, /dev/dxg, dxcore)"
    return None, "log shows no WSL2 / GPU-PV path"


def log_dmabuf(f: Facts) -> Result:
    if f.log.dmabuf_gpus:
        return True, "log: 'DMA-BUF is available on GPU device'"
    return None, "log does not mention DMA-BUF"


# The /dev/shm a runtime gives a container whose spec does not size it (matrix rows with their sources).
_DEFAULT_SHM_ROW = {RUNTIME_DOCKER: "docker_default_shm_mib", RUNTIME_KUBERNETES: "containerd_default_shm_mib"}


def job_shm_default_small(f: Facts) -> Result:
    """True: the spec leaves /dev/shm at the runtime's small default (or sizes it no larger); False: the
    container shares the host's IPC namespace or sizes /dev/shm by memory; None otherwise."""
    job = f.job
    if job is None:
        return None, "no launch spec (use --job SPEC)"
    if job.host_ipc:
        return False, f"{job.where}: the host's IPC namespace (its /dev/shm)"
    size = job.shm_size_mib
    if size is not None and size < 0:
        return False, f"{job.where}: /dev/shm sized by memory ({job.shm_setting})"
    row = _DEFAULT_SHM_ROW.get(job.runtime) if job.runtime is not None else None
    default = float(f.kb.threshold(row)) if row else None
    if size is None:
        if job.shm_setting is None and default is not None and not job.open_flags:
            return True, f"{job.where}: no /dev/shm setting: the runtime default of {default:g} MiB"
        return None, f"{job.where}: the size of /dev/shm is not known from the spec"
    if default is not None and size <= default:
        return True, f"{job.where}: /dev/shm {size:g} MiB ({job.shm_setting}), no larger than the default"
    return None, f"{job.where}: /dev/shm {size:g} MiB ({job.shm_setting}); whether that is enough depends on the ranks"


PREDICATES: dict[str, Callable[[Facts], Result]] = {
    "job.shm_default_small": job_shm_default_small,
    "node.peermem_loaded": peermem_loaded,
    "node.uvm_missing": uvm_missing,
    "node.gdrdrv_device_missing": gdrdrv_device_missing,
    "node.gdrdrv_not_loaded": gdrdrv_not_loaded,
    "node.gpu_without_gdr": gpu_without_gdr,
    "node.peer_memory_api": peer_memory_api,
    "node.memlock_low": memlock_low,
    "node.dmabuf_kernel_capable": dmabuf_kernel_capable,
    "node.driver_below_image_cuda": driver_below_image_cuda,
    "node.driver_userspace_mismatch": driver_userspace_mismatch,
    "node.arch_arm64": arch_arm64,
    "node.gpu_open_module": gpu_open_module,
    "node.kmod_flavour_unsupported": kmod_flavour_unsupported,
    "image.provider_pabi_mismatch": provider_pabi_mismatch,
    "image.no_libibverbs": no_libibverbs,
    "image.no_providers": no_providers,
    "image.has_reg_mr_iova2": image_has_reg_mr_iova2,
    "nccl.before_gdr_module_check": nccl_before_gdr_module_check,
    "nccl.below_2_23_4": nccl_before_gdr_module_check,  # the old name, kept for signature files that use it
    "nccl.nic_fusion_net_id_0": nccl_nic_fusion_net_id_0,
    # fixes traced to their first release (nccl_fix_ranges): 2.18.3's crash after a failed SHM map, 2.26.2's
    # progress thread spinning after a network error
    "nccl.shm_close_crash": _traced("shm_close_crash_after_failed_map"),
    "nccl.cumem_host_numa": _known_issue("cumem_host_numa_in_container"),
    "nccl.cumem_default_memory": _behaviour("NCCL_CUMEM_ENABLE", "memory"),
    "nccl.cumem_host_no_p2p": _known_issue("cumem_host_shm_without_p2p"),
    "nccl.nvls_multi_nic": _known_issue("nvls_multi_nic_per_gpu"),
    "nccl.progress_spin_after_error": _traced("progress_thread_spin_after_error"),
    "log.ro": log_ro,
    "log.dmabuf": log_dmabuf,
    "log.nvls": log_nvls,
    "log.multi_port_nic": log_multi_port_nic,
    "log.gpu_pv": log_gpu_pv,
    "image.driver_userspace": image_driver_userspace,
}
