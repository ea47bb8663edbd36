"""What a size setting costs: NCCL_BUFFSIZE against the GPU's BAR1, which GPUDirect RDMA registration maps it into.

NCCL gives every network connection of every channel its own buffer per protocol, NCCL_BUFFSIZE bytes for Simple
(src/init.cc computeBuffSizes), in GPU memory when GPUDirect is used, and registers each with the NIC
(src/transport/net.cc sendProxySetup/recvProxySetup: regMrDmaBuf / regMr per protocol buffer). A ring channel has
a send and a receive connection, and NCCL opens up to MAXCHANNELS channels. Registered GPU memory is mapped into the
GPU's BAR1 aperture: through nvidia-peermem a full BAR1 fails the pin with EFAULT, through DMA-BUF the driver's
export map fails and the kernel reports ENOMEM (registration.py, REG-BAR1-SMALL has the peer-memory side)."""

from __future__ import annotations

from collections.abc import Iterator

from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, finding, unknown
from .registration import PATH_DMABUF, PATH_HOST, PATH_PEER, gpu_buffer_path

RULE = "ENV-NCCL-BUFFSIZE-BAR1"
VAR = "NCCL_BUFFSIZE"
_CONNECTIONS_PER_CHANNEL = 2  # a send and a receive connection per peer (a ring channel's: the fewest a rank has)


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0 or n >= 1 << (shift + 4):
            return f"{n / (1 << shift):g} {unit}"
    return f"{n} bytes"


@rule(
    RULE,
    requires=(facts.NCCL, facts.NODE_RDMA, facts.setting(VAR)),
    reads=(facts.PEERMEM, facts.GPU_MODULE),
    needs={
        "thresholds": {
            "nccl_default_buffsize_bytes",
            "nccl_maxchannels_max",
            "nccl_max_tree_arity",
            "gpu_bar1_small_mib",
        }
    },
)
def buffsize_bar1(ctx: Ctx) -> Iterator[Outcome]:
    s = ctx.setting(VAR)
    value = s.as_int() if s is not None else None
    default = int(ctx.matrix.threshold("nccl_default_buffsize_bytes"))
    if s is None or value is None or value <= default:
        return  # NCCL's own size or smaller: what every release is tuned for
    if ctx.node_has_rdma is not True or ctx.ib_disabled_by is not None or ctx.nccl_present is not True:
        return  # no GPUDirect registration without RDMA; unknown facts: the engine asks
    kind, why = gpu_buffer_path(ctx)
    if kind == PATH_HOST:
        return  # the buffers live in host memory: no BAR1 mapping
    channels = int(ctx.matrix.threshold("nccl_maxchannels_max"))
    # per channel: the ring's send and receive connection, and a tree's to its parent and children, both ways
    per_channel = _CONNECTIONS_PER_CHANNEL * (1 + 1 + int(ctx.matrix.threshold("nccl_max_tree_arity")))
    low, high = _CONNECTIONS_PER_CHANNEL * value, per_channel * value * channels
    bar1s = [g.bar1_bytes for g in ctx.node.gpu.gpus if g.bar1_bytes]
    if bar1s:
        limit, limit_words = min(bar1s), f"the node's smallest GPU BAR1, {_size(min(bar1s))}"
        if high <= limit:
            return
        variant = None if low > limit else "may"
    else:
        limit = int(ctx.matrix.threshold("gpu_bar1_small_mib")) << 20
        if low <= limit:
            yield unknown(
                RULE,
                f"{s.label} needs {_size(low)} to {_size(high)} of registered GPU memory per GPU and communicator; "
                "the GPUs' BAR1 size is unknown (node facts without gpu.gpus[].bar1_bytes: probe the node again)",
            )
            return
        limit_words = (
            f"the BAR1 of GPUs with the smallest aperture NVIDIA ships ({_size(limit)}); this node's is unknown"
        )
        variant = "bar1-unknown"
    if kind == PATH_DMABUF:
        predicted = "NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Cannot allocate memory"
    elif kind == PATH_PEER:
        predicted = f"NCCL WARN Call to {ctx.reg_fn} failed with error Bad address"
    else:
        predicted = (
            "NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Cannot allocate memory (DMA-BUF), or "
            f"{ctx.reg_fn} ... Bad address (nvidia-peermem)"
        )
    evidence = [s.evidence, *ctx.nccl_evidence()]
    if bar1s:
        evidence.append(ctx.node_ev("gpu.gpus", f"smallest BAR1 {_size(limit)}"))
    yield finding(
        ctx.matrix,
        RULE,
        evidence,
        variant=variant,
        setting=s.label,
        size=_size(value),
        times=f"{value / default:g}",
        low=_size(low),
        high=_size(high),
        channels=channels,
        limit=limit_words,
        path=why if kind else f"the registration path is not known ({why})",
        predicted=predicted,
    )


RULES, NEEDS, REQUIRES, READS, check = family(buffsize_bar1)
