"""NCCL device and interface selections in the image (Env or /etc/nccl.conf) read the way NCCL reads them.

NCCL_IB_HCA: an optional leading '^' excludes, then an optional '=' makes names exact; entries are name[:port],
matched as name prefixes (NVIDIA/nccl src/transport/net_ib/init.cc, src/misc/utils.cc matchIfList).
NCCL_SOCKET_IFNAME: when set, it replaces NCCL's default choice, which skips docker*, lo* and virbr* interfaces
unless nothing else exists (src/misc/socket.cc ncclFindInterfaces).
"""

from __future__ import annotations

from collections.abc import Iterator

from ..knowledge.net_select import IfList
from ..model.report import Evidence
from . import facts
from .context import Ctx
from .emit import Outcome, finding, unknown

RULES = ("ENV-NCCL-IB-HCA-NO-DEVICE", "ENV-NCCL-IB-HCA-PREFIX", "ENV-NCCL-SOCKET-IFNAME-ALLOWS-LO")
# The facts each rule needs present (absent: the rule does not apply) and the further facts it reads;
# silence with one of them unknown is reported as unknown (engine/contract.py).
REQUIRES = {
    "ENV-NCCL-IB-HCA-NO-DEVICE": (facts.NCCL, facts.NODE_RDMA, facts.setting("NCCL_IB_HCA")),
    "ENV-NCCL-IB-HCA-PREFIX": (facts.NCCL, facts.NODE_RDMA, facts.setting("NCCL_IB_HCA")),
    "ENV-NCCL-SOCKET-IFNAME-ALLOWS-LO": (facts.NCCL, facts.setting("NCCL_SOCKET_IFNAME")),
}
READS = {
    "ENV-NCCL-IB-HCA-NO-DEVICE": (facts.NCCL, facts.NODE_RDMA, facts.setting("NCCL_IB_HCA")),
    "ENV-NCCL-IB-HCA-PREFIX": (facts.NCCL, facts.NODE_RDMA, facts.setting("NCCL_IB_HCA")),
    "ENV-NCCL-SOCKET-IFNAME-ALLOWS-LO": (facts.NCCL, facts.setting("NCCL_SOCKET_IFNAME")),
}


def check(ctx: Ctx) -> Iterator[Outcome]:
    if ctx.nccl_present is not True:
        return  # no NCCL; unknown: the engine asks (these settings do not depend on NCCL's version)
    if ctx.node_has_rdma is not False:
        yield from _ib_hca(ctx)
    yield from _socket_ifname(ctx)  # bootstrap runs over sockets on every node


def _ib_hca(ctx: Ctx) -> Iterator[Outcome]:
    s = ctx.setting("NCCL_IB_HCA")
    if s is None or not s.value.strip():
        return
    devices = [d.name for d in ctx.node.rdma.devices if d.name]
    if not devices:
        yield unknown("ENV-NCCL-IB-HCA-NO-DEVICE", f"{s.label} is set; " + ctx.unknown_why("rdma.devices"))
        return
    wanted = IfList.parse(s.value.strip())
    chosen = [d for d in devices if wanted.selects(d)]
    evidence = [s.evidence, ctx.node_ev("rdma.devices", ", ".join(devices))]
    if not chosen:
        yield finding(ctx.matrix, "ENV-NCCL-IB-HCA-NO-DEVICE", evidence, setting=s.label, devices=", ".join(devices))
        return
    yield from _ib_hca_ports(ctx, s.label, wanted, chosen, evidence)
    if any(p is not None for p in wanted.ports):
        return  # the prefix check below is about names; a port list is judged above
    if wanted.exclude or wanted.exact:
        return
    # a prefix that also catches longer names: mlx5_1 selects mlx5_10, mlx5_11 (the maintainers' warning)
    extra = sorted({d for e in wanted.names for d in devices if d != e and d.startswith(e) and e in devices})
    if extra:
        yield finding(
            ctx.matrix,
            "ENV-NCCL-IB-HCA-PREFIX",
            evidence,
            setting=s.label,
            extra=", ".join(extra),
            exact="=" + s.value.strip(),
        )


def _ib_hca_ports(
    ctx: Ctx, label: str, wanted: IfList, chosen: list[str], evidence: list[Evidence]
) -> Iterator[Outcome]:
    """NCCL matches NCCL_IB_HCA per (device, port) over each device's ports 1..phys_port_cnt
    (src/transport/net_ib/init.cc: matchIfList(name, port_num, ...)): a ':port' no selected device has selects
    nothing, although the device name matches."""
    if wanted.exclude or not any(p is not None for p in wanted.ports):
        return
    ports = {d.name: [p.port for p in d.ports] for d in ctx.node.rdma.devices if d.name in chosen}
    if any(not nums or None in nums for nums in ports.values()):
        return  # port numbers not read: nothing to compare
    hits = [f"{d}:{n}" for d, nums in ports.items() for n in nums if n is not None and wanted.selects_port(d, n)]
    if hits:
        return
    have = ", ".join(f"{d} ports {','.join(str(n) for n in nums)}" for d, nums in sorted(ports.items()))
    yield finding(
        ctx.matrix,
        "ENV-NCCL-IB-HCA-NO-DEVICE",
        [*evidence, ctx.node_ev("rdma.devices.ports", have)],
        variant="port",
        setting=label,
        devices=have,
    )


def _socket_ifname(ctx: Ctx) -> Iterator[Outcome]:
    s = ctx.setting("NCCL_SOCKET_IFNAME")
    if s is None or len(s.value.strip()) < 2:  # NCCL ignores a value of one character (strlen(env) > 1)
        return
    wanted = IfList.parse(s.value.strip())
    if wanted.exclude and wanted.selects("lo"):
        yield finding(ctx.matrix, "ENV-NCCL-SOCKET-IFNAME-ALLOWS-LO", [s.evidence], setting=s.label)
