"""NCCL settings baked into the image (Env or /etc/nccl.conf) that break or hobble the node (F11 and friends)."""

from __future__ import annotations

from collections.abc import Iterator

from ..knowledge import nccl as nccl_k
from . import facts
from .context import Ctx
from .emit import Outcome, assuming, finding, unknown

RULES = ("ENV-NCCL-IB-RETRY-CNT", "ENV-NCCL-IB-TIMEOUT", "ENV-DISABLES-IB", "ENV-DISABLES-GDR", "ENV-DISABLES-DMABUF")
NEEDS = {
    "thresholds": {"nccl_ib_retry_cnt_max", "nccl_ib_timeout_min", "nccl_ib_timeout_max"},
    "nccl_features": {"dmabuf", "gdr_module_sysfs_check"},
    "kernel_rdma_features": {
        ("dmabuf_mr", "inbox"),
        ("dmabuf_mr", "mlnx_ofed"),
        ("peer_memory_api", "inbox"),
        ("peer_memory_api", "mlnx_ofed"),
        ("memory_peers_sysfs_removed", "mlnx_ofed"),
    },
    "rdma_core_functions": {"ibv_reg_dmabuf_mr"},
}
# The facts each rule needs present (absent: the rule does not apply) and the further facts it reads;
# silence with one of them unknown is reported as unknown (engine/contract.py).
REQUIRES = {
    "ENV-NCCL-IB-RETRY-CNT": (facts.NCCL, facts.NODE_RDMA, facts.setting("NCCL_IB_RETRY_CNT")),
    "ENV-NCCL-IB-TIMEOUT": (facts.NCCL, facts.NODE_RDMA, facts.setting("NCCL_IB_TIMEOUT")),
    "ENV-DISABLES-IB": (facts.NCCL, facts.NODE_RDMA, facts.setting("NCCL_IB_DISABLE", "NCCL_NET")),
    "ENV-DISABLES-GDR": (facts.NCCL, facts.NODE_RDMA, facts.setting("NCCL_NET_GDR_LEVEL")),
    "ENV-DISABLES-DMABUF": (facts.NCCL, facts.NODE_RDMA, facts.setting("NCCL_DMABUF_ENABLE")),
}
READS = {
    "ENV-NCCL-IB-RETRY-CNT": (facts.NCCL, facts.NODE_RDMA, facts.setting("NCCL_IB_RETRY_CNT")),
    "ENV-NCCL-IB-TIMEOUT": (facts.NCCL, facts.NODE_RDMA, facts.setting("NCCL_IB_TIMEOUT")),
    "ENV-DISABLES-IB": (facts.NCCL, facts.NODE_RDMA, facts.setting("NCCL_IB_DISABLE", "NCCL_NET")),
    "ENV-DISABLES-GDR": (
        facts.NCCL,
        facts.NODE_RDMA,
        facts.setting("NCCL_NET_GDR_LEVEL"),
        facts.LIBIBVERBS,
        facts.PEERMEM,
    ),
    "ENV-DISABLES-DMABUF": (facts.NCCL, facts.NODE_RDMA, facts.setting("NCCL_DMABUF_ENABLE")),
}


def check(ctx: Ctx) -> Iterator[Outcome]:
    if ctx.node_has_rdma is False:
        return  # NCCL's IB settings do nothing on a node without RDMA devices
    yield from _retry_cnt(ctx)
    yield from _timeout(ctx)
    yield from _disables(ctx)


def _retry_cnt(ctx: Ctx) -> Iterator[Outcome]:
    s = ctx.setting("NCCL_IB_RETRY_CNT")
    if s is None:
        return  # unset (NCCL's default is in range), or the Env unread: READS asks the settings question
    top = ctx.matrix.threshold("nccl_ib_retry_cnt_max")
    value = s.as_int()
    params = dict(setting=s.label, value=s.value, peer="<peer address>")
    if value is None:
        yield finding(ctx.matrix, "ENV-NCCL-IB-RETRY-CNT", [s.evidence], variant="invalid", **params)
    elif value > top or value < 0:
        effective = value & top  # the 3-bit QPC field keeps the low bits (top is 7, all ones)
        # 15 keeps 7, the most retries the field holds: out of range, but it costs no retries
        yield finding(
            ctx.matrix,
            "ENV-NCCL-IB-RETRY-CNT",
            [s.evidence],
            effective=effective,
            variant="masked-to-max" if effective == top else None,
            **params,
        )
    elif value < top:
        yield finding(ctx.matrix, "ENV-NCCL-IB-RETRY-CNT", [s.evidence], variant="low", effective=value, **params)


def _timeout(ctx: Ctx) -> Iterator[Outcome]:
    s = ctx.setting("NCCL_IB_TIMEOUT")
    if s is None:
        return  # unset (NCCL's default is in range), or the Env unread: READS asks the settings question
    lo, hi = ctx.matrix.threshold("nccl_ib_timeout_min"), ctx.matrix.threshold("nccl_ib_timeout_max")
    value = s.as_int()
    if value is None or not lo <= value <= hi:
        yield finding(ctx.matrix, "ENV-NCCL-IB-TIMEOUT", [s.evidence], setting=s.label, min=lo, max=hi)


def _disables(ctx: Ctx) -> Iterator[Outcome]:
    off = ctx.ib_disabled_by
    if off is not None and ctx.node_has_rdma:
        yield finding(
            ctx.matrix,
            "ENV-DISABLES-IB",
            [off.evidence, ctx.node_ev("rdma.stack", ctx.node.rdma.stack)],
            variant="net-socket" if off.name == "NCCL_NET" else None,
            setting=off.label,
        )
        return  # with IB off, GDR and DMA-BUF settings are moot
    gdr = ctx.setting("NCCL_NET_GDR_LEVEL")
    gdr_off = gdr is not None and gdr.value.strip().upper() in ("LOC", "0")
    if gdr is not None and gdr_off and ctx.lib is None and ctx.lib_unknown and ctx.nccl_present is not False:
        # without libibverbs NCCL has no IB transport and no GDR to turn off; whether the image has it is not known
        yield unknown("ENV-DISABLES-GDR", f"{gdr.label} turns GPUDirect RDMA off; {ctx.lib_unknown}")
    if ctx.lib is None or ctx.nccl_present is not True or not ctx.node_has_rdma:
        return
    # NCCL there with its version unknown: what the node shows decides where it can (a GDR path that exists for
    # every release), the rest asks the version (dmabuf_usable, peermem_visible and nccl_at_least say None)
    if gdr is not None and gdr_off:
        paths = []
        if ctx.dmabuf_usable[0]:
            paths.append("DMA-BUF")
        if ctx.peermem_visible[0]:
            paths.append("nvidia-peermem")
        undecided = [why for known, why in (ctx.dmabuf_usable, ctx.peermem_visible) if known is None]
        if not paths and undecided:
            # no GDR path shown, but one is undecided: whether the setting turns a working path off is not known
            yield unknown("ENV-DISABLES-GDR", f"{gdr.label} turns GPUDirect RDMA off; " + "; ".join(undecided))
        if paths:
            found = finding(
                ctx.matrix,
                "ENV-DISABLES-GDR",
                [gdr.evidence] + ctx.nccl_evidence(),
                setting=gdr.label,
                gdr_path=" and ".join(paths),
            )
            reach = nccl_k.param_reach(ctx.matrix, gdr.name) if ctx.nccl is None else None
            yield assuming(found, reach, "image.nccl.version")
    dmabuf = ctx.setting("NCCL_DMABUF_ENABLE")
    if dmabuf is not None and dmabuf.as_int() == 0 and ctx.nccl_at_least("dmabuf"):
        visible, why_not = ctx.peermem_visible
        nic_ok, _ = ctx.nic_dmabuf
        if visible is False and nic_ok and ctx.node.gpu.kernel_module == "open":
            yield finding(
                ctx.matrix,
                "ENV-DISABLES-DMABUF",
                [dmabuf.evidence]
                + ctx.nccl_evidence()
                + [
                    ctx.node_ev("gpu.kernel_module", "open"),
                    ctx.node_ev("gpu.peermem.loaded", ctx.node.gpu.peermem.loaded),
                ],
                setting=dmabuf.label,
                hca=ctx.hca,
                why_no_peermem=why_not,
            )
