"""Which row of docs/registration-errors.md explains a registration the verifier saw fail.

The verifier registers memory exactly as NCCL does (host, cudaMalloc, cuMem; peer memory and DMA-BUF), so
a failure it sees is one of the table's rows, decided by the errno, the memory kind, the call and what the
other registrations on the same device did. A failure no row explains is said to contradict the table.
"""

from __future__ import annotations

import errno
from dataclasses import dataclass

from .result import DeviceResult, GpuBuffer, Registration, VerifierOutput

DOC = "docs/registration-errors.md"
ENOTSUPP = 524  # kernel-internal; user space prints "Unknown error 524"


@dataclass(frozen=True)
class RowMatch:
    row: str | None  # None: no row of the table explains it
    meaning: str

    def words(self) -> str:
        return f"{DOC} {self.row}: {self.meaning}" if self.row else f"not explained by {DOC}: {self.meaning}"


def _sibling(dev: DeviceResult, memory: str, label: str, call: str) -> Registration | None:
    return next(
        (
            r
            for r in dev.registrations
            if r.memory == memory and r.label == label and r.call == call and r.symbol_available
        ),
        None,
    )


def _buffer(out: VerifierOutput, memory: str) -> GpuBuffer | None:
    return next((b for b in out.gpu.buffers if b.memory == memory), None)


def _gpu_attr(out: VerifierOutput, name: str) -> int | None:
    return out.gpu.attributes.get(name) if out.gpu.attributes else None


def _memlock_can_explain(reg: Registration, dev: DeviceResult, out: VerifierOutput) -> tuple[bool, str]:
    """Whether RLIMIT_MEMLOCK can be what refused this registration, and the words for either answer."""
    soft = out.memlock.soft
    if soft is None or soft < 0:
        return False, "memlock is unlimited"
    if out.cap_ipc_lock and not reg.label.startswith("memlock-"):
        return False, f"the verifier held CAP_IPC_LOCK, which bypasses RLIMIT_MEMLOCK ({soft // 1024} KiB)"
    held = 0  # what stayed registered when this one was tried: only the BAR1 sweep keeps its MRs
    if reg.label == "bar1-sweep" and dev.bar1_sweep is not None:
        held = dev.bar1_sweep.registered_bytes
    if reg.length is not None and reg.length + held <= soft:
        return False, (
            f"the registration ({reg.length // 1024} KiB, {held // 1024} KiB already registered) fits under "
            f"RLIMIT_MEMLOCK ({soft // 1024} KiB)"
        )
    return True, f"the pinned pages exceed RLIMIT_MEMLOCK ({soft // 1024} KiB)"


def explain(reg: Registration, dev: DeviceResult, out: VerifierOutput) -> RowMatch | None:
    """The table row for one failed registration; None when it did not fail."""
    if reg.ok or not reg.symbol_available:
        return None
    gpu = reg.memory.startswith("gpu:")
    dmabuf = reg.call in ("ibv_reg_dmabuf_mr", "mlx5dv_reg_dmabuf_mr")
    e = reg.errno
    if reg.label == "base+atomic+ro" and e in (errno.EINVAL, errno.EOPNOTSUPP):
        ro = _sibling(dev, reg.memory, "base+ro", "ibv_reg_mr_iova2")
        if ro is not None and ro.ok:
            return RowMatch(
                "RE-FLAG-ATOMIC",
                "the same registration without REMOTE_ATOMIC succeeds: the RDMA "
                "driver rejects the flag NCCL >= 2.28.7 adds",
            )
    if e == ENOTSUPP and dmabuf:
        forced = reg.label.endswith("+pcie")
        return RowMatch(
            "RE-ENOTSUPP-DMABUF-ATTACH",
            "the GPU driver refused the NIC's dma-buf attach ("
            + (
                "with the forced PCIe mapping NCCL >= 2.26.2 asks for on C2C GPUs: this NIC-GPU PCIe topology is not "
                "supported for it"
                if forced
                else "nv-dmabuf.c: PCIe topology not supported, or an importer without peer2peer"
            )
            + "); dmesg names which ('NVRM: dma-buf attach failed')",
        )
    if reg.call == "mlx5dv_reg_dmabuf_mr" and e in (errno.EINVAL, errno.EOPNOTSUPP, errno.EPROTONOSUPPORT):
        return RowMatch(
            "RE-DATA-DIRECT",
            "mlx5 refused the Data Direct registration NCCL >= 2.27.3 makes on this device ("
            + ("no Data Direct device bound to it" if e == errno.EINVAL else "unaligned address, ODP, or no method")
            + "); NCCL_IB_DATA_DIRECT=0 falls back to ibv_reg_dmabuf_mr",
        )
    if dmabuf:
        return _dmabuf_row(reg)
    if e == errno.EPERM:
        if out.cap_ipc_lock and not reg.label.startswith("memlock-"):
            return RowMatch(None, "EPERM although the verifier held CAP_IPC_LOCK: RLIMIT_MEMLOCK cannot be the reason")
        return RowMatch(
            "RE-EPERM-MEMLOCK0",
            "RLIMIT_MEMLOCK is 0 and the process lacks CAP_IPC_LOCK"
            + (" (the container's limit is 0)" if out.memlock.soft == 0 else ""),
        )
    if e == errno.ENOMEM:
        memlock, why = _memlock_can_explain(reg, dev, out)
        if memlock:
            return RowMatch("RE-ENOMEM-MEMLOCK", why)
        if gpu:
            return RowMatch(
                "RE-ENOMEM-P2P",
                f"not memlock ({why}): the GPU driver ran out of resources after nvidia-peermem claimed the buffer, "
                "or the pages could not be DMA-mapped (RE-DMA-MAP: 'failed to map scatterlist' in dmesg)",
            )
        return RowMatch(
            "RE-ENOMEM-PIN",
            f"not memlock ({why}): the kernel could not pin or migrate the pages, or DMA-map them (RE-DMA-MAP: "
            "'failed to map scatterlist' in dmesg)" + _fork_words(out, "ENOMEM past vm.max_map_count"),
        )
    if e == errno.EINVAL:
        if gpu:
            return RowMatch(
                "RE-EINVAL-PEER-DMAMAP",
                "nvidia-peermem claimed the buffer, then nv_dma_map / "
                "nvidia_p2p_dma_map_pages refused it (or get_pages failed: "
                "RE-EINVAL-PEER-GETPAGES; legacy nv_peer_mem: RE-EINVAL-NV-PEER-MEM; mlx5 finding no mkey page "
                "size: RE-EINVAL-PGSZ); the node's kernel log names which",
            )
        return _host_einval(reg, dev, out)
    if e == errno.EFAULT:
        if not gpu:
            return RowMatch(None, "EFAULT on host memory the verifier allocated itself")
        if _gpu_attr(out, "gpu_direct_rdma_supported") == 0:
            return RowMatch(
                "RE-EFAULT-NOGDR-GPU",
                "this GPU reports no GPUDirect RDMA support (e.g. GeForce): no peer client will claim its memory; "
                "NCCL itself disables GDR here and stages through host memory",
            )
        buf = _buffer(out, reg.memory)
        if reg.memory == "gpu:cuMemCreate" and buf is not None and buf.gpu_direct_rdma_capable_flag is False:
            return RowMatch(
                "RE-EFAULT-CUMEM-FLAG",
                "the GPU does not report GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, "
                "so the cuMem buffer lacks gpuDirectRDMACapable and no peer "
                "client claims it",
            )
        if reg.label == "bar1-sweep" and dev.bar1_sweep is not None and dev.bar1_sweep.registered > 0:
            mib = dev.bar1_sweep.registered_bytes // (1 << 20)
            return RowMatch(
                "RE-EFAULT-DECLINED",
                f"{dev.bar1_sweep.registered} chunks ({mib} MiB) of the same buffer registered, then nvidia-peermem "
                "declined the next: BAR1 is exhausted (nvidia-smi -q -d MEMORY shows BAR1 used)",
            )
        return RowMatch(
            "RE-EFAULT-DECLINED",
            "no peer-memory client claimed the GPU buffer: nvidia-peermem is not "
            "loaded (RE-EFAULT-NO-PEER) or declined it (BAR1, MIG, vGPU, APM)",
        )
    if gpu and e in (errno.EIO, errno.EBUSY, errno.ENODEV):
        row = {errno.EIO: "RE-EIO-P2P", errno.EBUSY: "RE-EBUSY-P2P", errno.ENODEV: "RE-ENODEV-P2P"}[e]
        return RowMatch(row, "the GPU driver's status passed through by nvidia-peermem after it claimed the buffer")
    if e == ENOTSUPP and gpu:
        return RowMatch("RE-ENOTSUPP-524", "the GPU driver returned NV_ERR_NOT_SUPPORTED after claiming the buffer")
    return RowMatch(None, f"{reg.errno_name or e} from {reg.call} on {reg.memory} memory")


def _dmabuf_row(reg: Registration) -> RowMatch:
    e = reg.errno
    if e in (errno.EOPNOTSUPP, errno.EPROTONOSUPPORT):
        return RowMatch("RE-EOPNOTSUPP-DMABUF", "the kernel cannot register dma-buf memory")
    if e == errno.EINVAL:
        return RowMatch(
            "RE-EINVAL-DMABUF", "mlx5 could not load the MR through UMR, or the dma-buf is shorter than the range"
        )
    if e == errno.ENOMEM:
        return RowMatch(
            "RE-DMABUF-ENOMEM",
            "memory ran out building the dma-buf mapping; not memlock, which DMA-BUF registrations do not count",
        )
    if e == errno.EBADF:
        return RowMatch("RE-DMABUF-EBADF", "the dma-buf fd is not an open file")
    if e == errno.EFAULT:
        return RowMatch("RE-DMABUF-EFAULT", "the kernel could not read the registration command")
    return RowMatch(None, f"{reg.errno_name or e} from {reg.call} on {reg.memory} memory")


def _fork_words(out: VerifierOutput, what: str) -> str:
    """Fork protection on (ibv_fork_init as NCCL calls it): every registration ran madvise(MADV_DONTFORK) first."""
    fork = out.fork_init
    if fork is None or not fork.symbol_available or fork.rc not in (0, None) or fork.status not in (None, "enabled"):
        return ""
    return f"; fork protection is on, so madvise(MADV_DONTFORK) may have refused the range ({what}: RE-FORK-MADVISE)"


def _host_einval(reg: Registration, dev: DeviceResult, out: VerifierOutput) -> RowMatch:
    """Host memory: only the optional flags differ between the verifier's host cases, so they decide."""
    if reg.label in ("base+ro", "base+atomic+ro"):
        base = _sibling(dev, "host", "base", "ibv_reg_mr_iova2")
        if base is not None and base.ok:
            return RowMatch(
                "RE-EINVAL-RO-BACKPORT",
                "the same call without RELAXED_ORDERING succeeds: this kernel "
                "advertises optional access but rejects the flag (the seed "
                "explanation holds on this node)",
            )
    return RowMatch(
        "RE-EINVAL-PGSZ",
        "EINVAL for page-aligned host memory with NCCL's flags, relaxed ordering not the difference: the remaining "
        "site is mlx5 finding no mkey page size (a kernel WARN from mr.c next to it in dmesg); without that WARN "
        "this contradicts the table" + _fork_words(out, "EINVAL for VM_IO or unaligned hugetlb"),
    )


def attempts(dev: DeviceResult) -> list[Registration]:
    """Every registration the verifier made on a device: NCCL's cases, the BAR1 sweep's refusal, the memlock probe."""
    regs = list(dev.registrations)
    if dev.bar1_sweep is not None and dev.bar1_sweep.failure is not None:
        regs.append(dev.bar1_sweep.failure)
    if dev.memlock_probe is not None:
        regs.extend(dev.memlock_probe.registrations)
    return regs


def explain_all(out: VerifierOutput) -> list[tuple[DeviceResult, Registration, RowMatch]]:
    found = []
    for dev in out.device_results:
        for reg in attempts(dev):
            match = explain(reg, dev, out)
            if match is not None:
                found.append((dev, reg, match))
    return found
