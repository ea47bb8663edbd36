"""RDMA devices and network namespaces: what a container in a network namespace of its own sees of the node's RDMA.

Two kernel mechanisms decide it. ib_core's netns mode (node/rdma_netns.py): in "shared" mode (the default) every RDMA
device is visible from every network namespace; in "exclusive" mode a device belongs to one namespace (init_net unless
moved with `rdma dev set <dev> netns`), so a container in another namespace sees no /sys/class/infiniband entry and no
uverbs device works for it (torvalds/linux@v5.3:drivers/infiniband/core/device.c, iproute2 rdma-system(8)). And RoCE
addressing: a RoCE port's GIDs are made from the IP addresses of its net devices (roce_gid_mgmt.c), so a verbs user
needs a net device of the RoCE NIC (the PF, a VF, or a macvlan/ipvlan on it) in its namespace; the CNI's veth is not
one, and the pod sees no usable GID (k8s-rdma-shared-dev-plugin's README pairs the plugin with a macvlan network;
projectcalico/calico#8482).
"""

from __future__ import annotations

from collections.abc import Iterator

from ..job.model import JobFacts
from ..node.rdma_netns import EXCLUSIVE
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding, unknown
from .facts import State
from .job_launch import _ev, _passes_rdma
from .node_only import node_only

EXCLUSIVE_RULE = "NODE-RDMA-NETNS-EXCLUSIVE"
ROCE_NETDEV = "JOB-ROCE-POD-NO-NETDEV"
# runtimes whose containers get a network namespace of their own unless the spec puts them in the host's
_OWN_NETNS = ("docker", "kubernetes")
_SECONDARY = (
    "if one of them is a net device of the RoCE NIC (an SR-IOV VF, or macvlan/ipvlan with the NIC's port as master)"
)


def _own_netns(job: JobFacts | None) -> tuple[bool | None, str]:
    """(whether the job's container is in a network namespace of its own, why)."""
    if job is None:
        return None, "no launch spec says where the job runs"
    if job.runtime not in _OWN_NETNS:
        return False, f"a {job.runtime or 'host'} job runs in the node's network namespace"
    if job.host_network:
        return False, f"{job.kind}: host network (the node's namespace, every net device and GID)"
    if job.host_network is False:
        return True, f"{job.kind}: its own network namespace (no host network)"
    return None, f"the {job.kind} spec does not say whether it uses the host network"


def _networks(job: JobFacts) -> tuple[str, ...] | None:
    if job.pod_networks is None and job.host_network is False:
        return ()  # facts that state the network placement and name no extra network attach none
    return job.pod_networks


def _out_of_scope(ctx: Ctx) -> str | None:
    """Why no container of this check is given RDMA devices in a namespace of its own (the decided reason), or None.
    Without a launch spec there is no namespace to judge, as for the JOB-* rules."""
    if not node_only(ctx) and facts.LIBIBVERBS.state(ctx) is State.ABSENT:
        return "the image ships no libibverbs: it opens no RDMA device, in any namespace"
    own, why = _own_netns(ctx.job)
    if own is False or ctx.job is None:
        return why
    if _passes_rdma(ctx.job) is None:
        return "the launch spec passes no RDMA device or resource"
    return None


@rule(EXCLUSIVE_RULE, reads=(facts.NODE_RDMA, facts.RDMA_NETNS_MODE, facts.LIBIBVERBS))
def netns_exclusive(ctx: Ctx) -> Iterator[Outcome]:
    """Exclusive netns mode hides every RDMA device that was not moved into the container's namespace: the shared
    device plugin and a /dev/infiniband mount hand over device files whose devices the container cannot see."""
    out = _out_of_scope(ctx)
    if out or ctx.job is None:
        yield decided(EXCLUSIVE_RULE, out or "no launch spec")
        return
    job = ctx.job
    own, why = _own_netns(job)
    passes = _passes_rdma(job)
    mode = ctx.node.state.rdma_netns_mode
    if mode is None:
        yield unknown(
            EXCLUSIVE_RULE,
            f"{job.where} gets RDMA devices ({passes}) in a network namespace of its own: is the node's RDMA "
            "subsystem in shared or exclusive netns mode (rdma system show; node.state.rdma_netns_mode)?",
            (facts.RDMA_NETNS_MODE.name,),
        )
        return
    if mode != EXCLUSIVE:
        yield decided(EXCLUSIVE_RULE, f"the RDMA subsystem's netns mode is {mode}")
        return
    if own is None:
        yield unknown(EXCLUSIVE_RULE, f"the node's RDMA netns mode is exclusive and {why}")
        return
    networks = _networks(job)
    if networks:
        yield unknown(
            EXCLUSIVE_RULE,
            f"exclusive netns mode: {job.where} sees an RDMA device only if its network attachment moves one into its "
            f"namespace (SR-IOV CNI with rdma-cni); does one of {', '.join(networks)} do so?",
        )
        return
    ev = [
        ctx.node_ev("state.rdma_netns_mode", mode),
        _ev(ctx, "host_network", job.host_network if job.host_network is not None else "not set (false)"),
        _ev(ctx, "rdma", passes),
    ]
    yield finding(ctx.matrix, EXCLUSIVE_RULE, ev, node=ctx.node.name, where=job.where, passes=passes)


@rule(ROCE_NETDEV, reads=(facts.NODE_RDMA, facts.RDMA_NETNS_MODE, facts.LIBIBVERBS))
def roce_pod_no_netdev(ctx: Ctx) -> Iterator[Outcome]:
    """A RoCE port is addressed by GIDs made from its net devices' IP addresses; a container whose namespace holds no
    net device of the NIC has no usable GID (ibv_query_gid gives zeros), so QPs cannot be moved to RTR and RDMA CM
    cannot resolve an address. InfiniBand ports are addressed by LID and need no net device."""
    out = _out_of_scope(ctx)
    if out or ctx.job is None:
        yield decided(ROCE_NETDEV, out or "no launch spec")
        return
    job = ctx.job
    own, why = _own_netns(job)
    passes = _passes_rdma(job)
    ports = [(d.name, p) for d in ctx.node.rdma.devices for p in d.ports]
    if not ports:
        return  # the node's RDMA devices are not known: the engine asks
    layers = {(p.link_layer or "").lower() for _, p in ports}
    if layers == {"infiniband"}:
        yield decided(ROCE_NETDEV, "every RDMA port is InfiniBand: addressed by LID, no net device needed")
        return
    roce = [f"{name} port {p.port} ({p.netdev or 'its netdev'})" for name, p in ports if p.link_layer == "Ethernet"]
    if not roce:
        yield unknown(ROCE_NETDEV, "the link layer of the node's RDMA ports is not known (InfiniBand or RoCE)")
        return
    if own is None:
        yield unknown(ROCE_NETDEV, f"the node's RDMA ports are RoCE ({', '.join(roce)}) and {why}")
        return
    networks = _networks(job)
    if ctx.node.state.rdma_netns_mode == EXCLUSIVE and not networks:
        yield decided(ROCE_NETDEV, f"exclusive netns mode: {job.where} sees no RDMA device at all ({EXCLUSIVE_RULE})")
        return
    if networks is None:
        yield unknown(
            ROCE_NETDEV,
            f"{job.where} uses RoCE ({', '.join(roce)}) in its own network namespace: which networks does it get "
            "besides the CNI's default (Multus k8s.v1.cni.cncf.io/networks)?",
        )
        return
    if networks:
        yield unknown(
            ROCE_NETDEV,
            f"{job.where} gets {', '.join(networks)} besides its default network: {_SECONDARY}, the pod has "
            "RoCE GIDs; otherwise it has none. Which device does each attach?",
        )
        return
    ev = [
        ctx.node_ev("rdma.devices", ", ".join(roce)),
        _ev(ctx, "host_network", job.host_network if job.host_network is not None else "not set (false)"),
        _ev(ctx, "pod_networks", "none"),
        _ev(ctx, "rdma", passes),
    ]
    yield finding(ctx.matrix, ROCE_NETDEV, ev, node=ctx.node.name, where=job.where, ports=", ".join(roce))


RULES, NEEDS, REQUIRES, READS, check = family(netns_exclusive, roce_pod_no_netdev)
