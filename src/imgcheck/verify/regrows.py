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


def explain(reg: Registration, dev: DeviceResult, out: VerifierOutput) -> RowMatch | None:
    """The table row for one failed registration; None when it did not fail."""
    if reg.ok or not reg.symbol_available:
        return None
    gpu = reg.memory.startswith("gpu:")
    dmabuf = reg.call == "ibv_reg_dmabuf_mr"
    memlock = out.memlock.soft
    e = reg.errno
    if reg.label == "base+atomic+ro" and e in (errno.EINVAL, errno.EOPNOTSUPP):
        ro = _sibling(dev, reg.memory, "base+ro", "ibv_reg_mr_iova2")
        if ro is not None and ro.ok:
            return RowMatch(
                "RE-FLAG-ATOMIC",
                "the same registration without REMOTE_ATOMIC succeeds: the RDMA "
                "driver rejects the flag NCCL >= 2.28.7 adds",
            )
    if e == errno.EPERM:
        return RowMatch(
            "RE-EPERM-MEMLOCK0",
            "RLIMIT_MEMLOCK is 0 and the process lacks CAP_IPC_LOCK"
            + (" (the container's limit is 0)" if memlock == 0 else ""),
        )
    if e == errno.ENOMEM and not dmabuf:
        if memlock is not None and memlock >= 0:
            return RowMatch("RE-ENOMEM-MEMLOCK", f"the pinned pages exceed RLIMIT_MEMLOCK ({memlock // 1024} KiB)")
        if gpu:
            return RowMatch(
                "RE-ENOMEM-P2P",
                "memlock is unlimited: the GPU driver ran out of resources after nvidia-peermem claimed the buffer",
            )
        return RowMatch("RE-ENOMEM-PIN", "memlock is unlimited: the kernel could not pin or migrate the pages")
    if e == errno.EINVAL:
        if dmabuf:
            return RowMatch(
                "RE-EINVAL-DMABUF", "mlx5 could not load the MR through UMR, or the dma-buf is shorter than the range"
            )
        if gpu:
            return RowMatch(
                "RE-EINVAL-PEER-DMAMAP",
                "nvidia-peermem claimed the buffer, then nv_dma_map / "
                "nvidia_p2p_dma_map_pages refused it (or get_pages failed: "
                "RE-EINVAL-PEER-GETPAGES); the node's kernel log names which",
            )
        return _host_einval(reg, dev)
    if e == errno.EFAULT:
        if not gpu:
            return RowMatch(None, "EFAULT on host memory the verifier allocated itself")
        buf = _buffer(out, reg.memory)
        if reg.memory == "gpu:cuMemCreate" and buf is not None and buf.gpu_direct_rdma_capable_flag is False:
            return RowMatch(
                "RE-EFAULT-CUMEM-FLAG",
                "the GPU does not report GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, "
                "so the cuMem buffer lacks gpuDirectRDMACapable and no peer "
                "client claims it",
            )
        return RowMatch(
            "RE-EFAULT-DECLINED",
            "no peer-memory client claimed the GPU buffer: nvidia-peermem is not "
            "loaded (RE-EFAULT-NO-PEER) or declined it",
        )
    if e in (errno.EOPNOTSUPP, errno.EPROTONOSUPPORT):
        if dmabuf:
            return RowMatch("RE-EOPNOTSUPP-DMABUF", "the kernel cannot register dma-buf memory")
    if e == ENOTSUPP and gpu:
        return RowMatch("RE-ENOTSUPP-524", "the GPU driver returned NV_ERR_NOT_SUPPORTED after claiming the buffer")
    return RowMatch(None, f"{reg.errno_name or e} from {reg.call} on {reg.memory} memory")


def _host_einval(reg: Registration, dev: DeviceResult) -> RowMatch:
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
    return RowMatch(None, "EINVAL for host memory with NCCL's flags; no row of the table reaches this")


def explain_all(out: VerifierOutput) -> list[tuple[DeviceResult, Registration, RowMatch]]:
    found = []
    for dev in out.device_results:
        for reg in dev.registrations:
            match = explain(reg, dev, out)
            if match is not None:
                found.append((dev, reg, match))
    return found
