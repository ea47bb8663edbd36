"""Settings that name a GID table entry or a network interface, judged against what the node has.

NCCL_IB_GID_INDEX: on a RoCE port a value >= 0 is the sgid_index NCCL queries and puts in the QP's address
vector as is; unset or -1, NCCL >= 2.21.5 chooses an entry itself (src/transport/net_ib/connect.cc
ncclIbGetGidIndex, compat_matrix nccl_features roce_gid_auto). InfiniBand ports do not use it (the RTR
transition sets sgid_index from it only for the Ethernet link layer).
NCCL_SOCKET_IFNAME: when set (two characters or more) NCCL considers only the interfaces it selects, with
matchIfList's rules ('^' excludes, '=' exact, prefixes otherwise); none selected is "Bootstrap : no socket
interface found" (src/misc/socket.cc ncclFindInterfaces, src/bootstrap.cc).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from ..job.model import RUNTIME_ENROOT
from ..knowledge import frameworks, net_select
from ..knowledge import nccl as nccl_k
from ..knowledge.nccl_gid import AF_INET, AF_INET6, nccl_choice
from ..knowledge.settings import Setting
from ..model.location import Location
from ..model.node import GID_GLOBAL, GID_IPV4_MAPPED, GID_LINK_LOCAL, NetInterface, RdmaPort
from ..model.report import Evidence, Finding
from . import facts
from .context import Ctx
from .emit import Outcome, assuming, decided, finding, unknown

RULES = (
    "ENV-NCCL-IB-GID-INDEX-NO-GID",
    "ENV-NCCL-IB-GID-INDEX-ROCE-V1",
    "ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE",
    "ENV-NCCL-IB-GID-INDEX-LINK-LOCAL",
    "ENV-GLOO-SOCKET-IFNAME-NO-ADDRESS",
    "ENV-NCCL-SOCKET-NODE-LOCAL",
    "ENV-GLOO-HOSTNAME-LOOPBACK",
)
NEEDS = {"nccl_features": {"roce_gid_auto"}}
SOCKET_LOCAL = "ENV-NCCL-SOCKET-NODE-LOCAL"
GID_INDEX = "NCCL_IB_GID_INDEX"
GID_RULES = ("ENV-NCCL-IB-GID-INDEX-NO-GID", "ENV-NCCL-IB-GID-INDEX-ROCE-V1", "ENV-NCCL-IB-GID-INDEX-LINK-LOCAL")
GLOO_LOOPBACK = "ENV-GLOO-HOSTNAME-LOOPBACK"
ROCE_V2 = "RoCE v2"
ROCE_VERSION_DEFAULT = 2  # NCCL_PARAM(IbRoceVersionNum, "IB_ROCE_VERSION_NUM", 2): NCCL's default, not a version
# operstate values for which the kernel does not set IFF_RUNNING (RFC 2863 states other than up/unknown/dormant)
NOT_RUNNING = ("down", "lowerlayerdown", "notpresent")
ENROOT_NETNS = (
    "runs under enroot, which shares the node's network namespace unless ENROOT_UNSHARE_NET=yes gives it one "
    "with only lo"
)


def check(ctx: Ctx) -> Iterator[Outcome]:
    yield from _gloo_ifname(ctx)  # a GLOO_SOCKET_IFNAME is only ever read by Gloo: set, the job means Gloo
    yield from _gloo_hostname(ctx)
    if ctx.nccl_present is not True:
        # no NCCL: its settings are read by nobody; unknown: the engine asks, and judges the interface rules as if
        # the image shipped NCCL (a conditional finding, engine/hypothesis.py, citing the job's NCCL_* settings)
        return
    yield from _socket_ifname(ctx)
    yield from _socket_node_local(ctx)
    # the GID index NCCL uses when none is pinned depends on its version (a copy whose version is unknown: the
    # engine asks); a pinned index >= 0 is the sgid_index every release that reads NCCL_IB_GID_INDEX uses as is,
    # so it is judged without the version, conditional on the releases that read it (nccl_params)
    if ctx.node_has_rdma is not False and ctx.ib_disabled_by is None and (ctx.nccl is not None or _pinned_gid(ctx)):
        yield from _gid_index(ctx)


def _roce_ports(ctx: Ctx) -> tuple[list[tuple[str, RdmaPort]], list[str]]:
    """(device name, port) for the Ethernet ports of the devices NCCL_IB_HCA leaves NCCL (all when unset), and
    the devices or ports it cannot tell about: a device without a name (NCCL_IB_HCA cannot be matched), a port
    whose link layer is not known (RoCE uses the GID index, InfiniBand does not)."""
    hca = ctx.setting("NCCL_IB_HCA")
    wanted = net_select.IfList.parse(hca.value.strip()) if hca is not None and hca.value.strip() else None
    ports: list[tuple[str, RdmaPort]] = []
    unsure: list[str] = []
    for device in ctx.node.rdma.devices:
        if not device.name:
            if any(p.link_layer != "InfiniBand" for p in device.ports) or not device.ports:
                unsure.append(f"a device without a name ({device.pci_address or 'PCI address unknown'})")
            continue
        if wanted is not None and not wanted.selects(device.name):
            continue
        for port in device.ports:
            if port.link_layer == "Ethernet":
                ports.append((device.name, port))
            elif port.link_layer is None and (device.link_layer or "Ethernet") == "Ethernet":
                unsure.append(f"{device.name}:{port.port} (link layer unknown)")
    return ports, unsure


def _pinned_gid(ctx: Ctx) -> bool:
    """NCCL_IB_GID_INDEX is set to an index >= 0 (strtoll's reading)."""
    s = ctx.setting(GID_INDEX)
    value = s.as_int() if s is not None else None
    return value is not None and value >= 0


def _gid_index(ctx: Ctx) -> Iterator[Outcome]:
    spoke = set()
    for item in _gid_index_outcomes(ctx):
        if isinstance(item, Finding) and ctx.nccl is None:
            # the version is unknown, the index pinned: the finding holds for every release that reads the setting
            item = assuming(item, nccl_k.param_reach(ctx.matrix, GID_INDEX), "image.nccl.version")
        spoke.add(item.id if isinstance(item, Finding) else item.rule)
        yield item
    if ctx.nccl is None:  # pinned: the version would not change what the table says
        for rule in GID_RULES:
            if rule not in spoke:
                yield decided(rule, f"{GID_INDEX} is pinned; every release that reads it uses that entry as is")


def _gid_index_outcomes(ctx: Ctx) -> Iterator[Outcome]:
    version = ctx.nccl.version if ctx.nccl is not None else None
    s = ctx.setting(GID_INDEX)
    explicit = s.as_int() if s is not None else None
    auto = ctx.nccl_at_least("roce_gid_auto")
    # before 2.21.5 NCCL's default (and its fallback for an unparsable value) is entry 0
    index = explicit if explicit is not None else 0 if auto is False else None
    if explicit is None and auto is None:
        yield unknown(
            "ENV-NCCL-IB-GID-INDEX-NO-GID",
            f"whether NCCL {version or '(version unknown)'} picks the RoCE GID itself or uses entry 0: "
            + ctx.nccl_unknown_reason("roce_gid_auto"),
            facts=("image.nccl",),
        )
        return
    if index is None or index < 0:
        if auto:  # -1, or unset / unparsable: NCCL's own choice, judged from the table
            yield from _auto_choice(ctx)
        return
    said = s.label if s is not None and explicit is not None else f"NCCL {version}'s default GID index 0"
    if not ctx.node.rdma.devices:
        yield unknown("ENV-NCCL-IB-GID-INDEX-NO-GID", f"{said} is used; " + ctx.unknown_why("rdma.devices"))
        return
    ports, unsure = _roce_ports(ctx)
    if unsure:
        yield unknown(
            "ENV-NCCL-IB-GID-INDEX-NO-GID",
            f"{said} is used; the node facts cannot tell whether NCCL uses GID entry {index} on {'; '.join(unsure)}",
            facts=("node.rdma",),
        )
    if not ports:
        return  # InfiniBand (or no RoCE port NCCL would use): the index is not used
    missing, v1, unread, link_local = [], [], [], []
    for name, port in ports:
        what, entry = port.gid_entry(index)
        label = f"{name}:{port.port}"
        if what == "beyond":
            missing.append(f"{label} (table of {port.gid_table_len})")
        elif what == "zero":
            missing.append(f"{label} (entry {index} unused)")
        elif what == "unknown":
            unread.append(
                f"{label}: "
                + (
                    f"only its first {port.gids_read} entries were read"
                    if port.gids is not None and port.gids_read is not None
                    else f"the entries in use are listed ({', '.join(str(g.index) for g in port.gids)}), but not "
                    "the table's length or whether the list is all of it (gid_table_len, gids_read)"
                    if port.gids is not None
                    else ctx.unknown_why(f"rdma.devices.{name}.ports.{port.port}.gids")
                )
            )
        elif entry is not None and entry.type and entry.type != ROCE_V2 and _has_v2(port):
            v1.append(f"{label} ({entry.type})")
        elif entry is not None and entry.kind == GID_LINK_LOCAL and _routable_v2(port):
            link_local.append((label, entry, port))
    table = ctx.node_ev("rdma.devices.ports.gids", "; ".join(_table_words(n, p) for n, p in ports))
    evidence = [s.evidence, table] if s is not None and explicit is not None else [*ctx.nccl_evidence(), table]
    variant = "default" if explicit is None else "auto" if auto else "pin"
    words = dict(setting=said, index=index, v2=_v2_words(ports), nccl=version or "(version unknown)")
    if missing:
        yield finding(
            ctx.matrix, "ENV-NCCL-IB-GID-INDEX-NO-GID", evidence, variant=variant, ports=", ".join(missing), **words
        )
    elif v1:
        yield finding(
            ctx.matrix, "ENV-NCCL-IB-GID-INDEX-ROCE-V1", evidence, variant=variant, ports=", ".join(v1), **words
        )
    elif link_local:
        yield finding(
            ctx.matrix,
            "ENV-NCCL-IB-GID-INDEX-LINK-LOCAL",
            evidence,
            variant=variant,
            ports=", ".join(f"{label} (entry {e.index}: fe80::/64)" for label, e, _p in link_local),
            choice="; ".join(f"{label}: {_choice_words(ctx, p)}" for label, _e, p in link_local),
            **words,
        )
    if unread and not missing and not unsure:
        yield unknown(
            "ENV-NCCL-IB-GID-INDEX-NO-GID",
            f"{said} is used; GID entry {index} is not in the node facts for {'; '.join(unread)}",
        )


def _auto_choice(ctx: Ctx) -> Iterator[Outcome]:
    """NCCL choosing its GID itself still lands on a link-local entry when the port has no routable one: its netdev
    has no IPv4 (or global IPv6) address, so the table holds only fe80:: entries (ncclUpdateGidIndex keeps
    entry 0 then)."""
    rule = "ENV-NCCL-IB-GID-INDEX-LINK-LOCAL"
    nccl = ctx.nccl
    assert nccl is not None  # _gid_index runs with NCCL only
    if not ctx.node.rdma.devices:
        return  # nothing pinned: no GID claim to make without devices (other rules say the devices are unknown)
    ports, unsure = _roce_ports(ctx)
    stuck, unread = [], list(unsure)
    for name, port in ports:
        family, version, rng = _choice_settings(ctx)
        index, how = nccl_choice(port, family, version, rng)
        if index is None:
            unread.append(f"{name}:{port.port}: {how}")
            continue
        _what, entry = port.gid_entry(index)
        if entry is not None and entry.kind == GID_LINK_LOCAL and not _routable_v2(port):
            iface = next((i for i in ctx.node.net_interfaces or () if i.name == (entry.netdev or port.netdev)), None)
            words = address_words(iface) if iface is not None else "not in the node facts"
            stuck.append(
                f"{name}:{port.port} entry {index} ({entry.type}); netdev {entry.netdev or port.netdev}: {words}"
            )
    if stuck:
        evidence = [
            *ctx.nccl_evidence(),
            ctx.node_ev("rdma.devices.ports.gids", "; ".join(_table_words(n, p) for n, p in ports)),
        ]
        yield finding(
            ctx.matrix,
            rule,
            evidence,
            variant="no-routable",
            ports="; ".join(stuck),
            nccl=nccl.version,
            setting="NCCL's own GID choice",
            index="auto",
            choice="a link-local entry",
            v2=_v2_words(ports),
        )
    elif unread:
        yield unknown(rule, "NCCL chooses the GID itself; which entry is unknown for " + "; ".join(unread))


def _choice_settings(ctx: Ctx) -> tuple[str, int, str | None]:
    fam = ctx.setting("NCCL_IB_ADDR_FAMILY")
    ver = ctx.setting("NCCL_IB_ROCE_VERSION_NUM")
    rng = ctx.setting("NCCL_IB_ADDR_RANGE")
    family = AF_INET6 if fam is not None and fam.value.strip() == AF_INET6 else AF_INET
    version = ver.as_int() if ver is not None and ver.as_int() is not None else ROCE_VERSION_DEFAULT
    return family, version or ROCE_VERSION_DEFAULT, rng.value if rng is not None else None


def _routable_v2(port: RdmaPort) -> bool:
    """Whether the port has a RoCE v2 entry with a routable address (IPv4-mapped or global IPv6)."""
    return any(g.type == ROCE_V2 and g.kind in (GID_IPV4_MAPPED, GID_GLOBAL) for g in port.gids or ())


def _choice_words(ctx: Ctx, port: RdmaPort) -> str:
    """What NCCL would pick itself on this port, with the image's NCCL_IB_ADDR_FAMILY / NCCL_IB_ROCE_VERSION_NUM."""
    family, version, rng = _choice_settings(ctx)
    index, how = nccl_choice(port, family, version, rng)
    return how if index is not None else f"NCCL's own choice is unknown ({how})"


def _has_v2(port: RdmaPort) -> bool:
    return any(g.type == ROCE_V2 for g in port.gids or ())


def _v2_words(ports: list[tuple[str, RdmaPort]]) -> str:
    found = [
        f"{n}:{p.port} {', '.join(str(g.index) for g in p.gids or () if g.type == ROCE_V2)}"
        for n, p in ports
        if _has_v2(p)
    ]
    return "; ".join(found) if found else "none recorded"


def _table_words(name: str, port: RdmaPort) -> str:
    if port.gids is None:
        return f"{name}:{port.port} not read"
    used = ", ".join(f"{g.index} {g.type or '?'}" for g in port.gids) or "none"
    return f"{name}:{port.port} {port.gid_table_len} entries, in use: {used}"


def _node_netns(ctx: Ctx, rule: str, s: Setting) -> Iterator[Outcome | str]:
    """Words saying the job sees the node's interfaces (yielded as a str), or an unknown saying why not."""
    job = ctx.job
    if job is not None and job.runtime == RUNTIME_ENROOT:
        yield ENROOT_NETNS
    elif job is None or not job.host_network:
        why = (
            "without --job it is not known whether the container shares the node's network namespace"
            if job is None
            else "the container has its own network namespace (no hostNetwork / --network host), "
            "whose interfaces the node facts do not show"
        )
        yield unknown(rule, f"{s.label} names interfaces; {why}")
    else:
        yield "shares the node's network namespace"


def _gloo_ifname(ctx: Ctx) -> Iterator[Outcome]:
    """GLOO_SOCKET_IFNAME: PyTorch's Gloo binds to each named interface (comma-separated, exact names) and takes
    its first IPv4 or IPv6 address from getifaddrs; none is 'Unable to find address for: NAME'
    (pytorch/gloo gloo/transport/tcp/device.cc lookupAddrForIface)."""
    rule = "ENV-GLOO-SOCKET-IFNAME-NO-ADDRESS"
    s = ctx.setting("GLOO_SOCKET_IFNAME")
    if s is None or not s.value.strip():
        return
    # NCCL's list syntax ('^' exclude, '=' exact) is not Gloo's: each comma item is looked up as a name as is,
    # whatever the node has (Linux interface names never start with these in practice: nobody names one so)
    nccl_syntax = [n.strip() for n in s.value.split(",") if n.strip().startswith(("^", "="))]
    if nccl_syntax:
        yield finding(ctx.matrix, rule, [s.evidence], variant="nccl-syntax", setting=s.label, first=nccl_syntax[0])
        return
    # an address where a name belongs: Gloo looks each item up by interface name, and no interface is named so
    addresses = net_select.address_items(s.value)
    if addresses:
        yield finding(ctx.matrix, rule, [s.evidence], variant="address", setting=s.label, first=addresses[0])
        return
    netns = None
    for item in _node_netns(ctx, rule, s):
        if isinstance(item, str):
            netns = item
        else:
            yield item
    if netns is None:
        return  # _node_netns yielded the unknown that says why the job's interfaces are not known
    interfaces = ctx.node.net_interfaces
    if interfaces is None:
        yield unknown(rule, f"{s.label} is set; " + ctx.unknown_why("net_interfaces"))
        return
    by_name = {i.name: i for i in interfaces}
    missing, unread = [], []
    for name in [n.strip() for n in s.value.split(",") if n.strip()]:
        iface = by_name.get(name)
        if iface is None:
            missing.append(f"{name} (no such interface)")
        elif iface.ipv4 is None or iface.ipv6 is None:
            unread.append(name)
        elif not iface.ipv4 and not iface.ipv6:
            missing.append(f"{name} (no IPv4 or IPv6 address)")
    names = ", ".join(f"{i.name} ({address_words(i)})" for i in interfaces)
    if missing:
        yield finding(
            ctx.matrix,
            rule,
            [s.evidence, ctx.node_ev("net_interfaces", names)],
            setting=s.label,
            missing=", ".join(missing),
            first=missing[0].split(" ", 1)[0],
            interfaces=names,
            netns=netns,
        )
    elif unread:
        yield unknown(
            rule,
            f"{s.label}: the addresses of {', '.join(unread)} are unknown: " + ctx.unknown_why("net_interfaces.ipv4"),
        )


def _bootstrap_keeps_ipv4(
    ctx: Ctx, sel: net_select.Selection, local: list[tuple[NetInterface, net_select.Reach]]
) -> bool:
    """The node-local links among several selected interfaces matter only to the socket transport when none of them
    has an IPv4 address and a routable IPv4 one is selected: the bootstrap takes the first getifaddrs entry (IPv4
    entries come first), and with RDMA devices and IB not turned off NCCL's data does not use its sockets."""
    if ctx.node_has_rdma is not True or ctx.ib_disabled_by is not None:
        return False
    for iface, _reach in local:
        row = net_select.node_local_row(ctx.matrix, iface.name)
        documented_v4 = row is not None and row["address"] is not None and ":" not in row["address"]
        if iface.ipv4 is None or iface.ipv4 or documented_v4:
            return False
    return any(i.ipv4 and net_select.reach(ctx.matrix, i).reachable for i in sel.chosen)


def _gloo_hostname(ctx: Ctx) -> Iterator[Outcome]:
    """Without GLOO_SOCKET_IFNAME, PyTorch's Gloo binds to the address the host name resolves to and advertises it
    to the other ranks (ProcessGroupGloo::createDefaultDevice; a name that resolves to nothing falls back to
    loopback with 'Unable to resolve hostname to a (local) address'). In the node's network namespace the host name
    and /etc/hosts are the node's (node/hostname.py): a line mapping it to 127.x (Debian/Ubuntu's 127.0.1.1) makes
    every rank advertise loopback, and connectFullMesh across nodes is refused."""
    rule = GLOO_LOOPBACK
    s = ctx.setting("GLOO_SOCKET_IFNAME")
    if s is not None and s.value.strip():
        return  # the interface is named: _gloo_ifname judges it
    job = ctx.job
    if job is None:
        return  # which namespace, host name and hosts file the job gets is the launch's: not applicable without it
    runtime_set = job.env_value("GLOO_SOCKET_IFNAME")
    if runtime_set is not None:
        yield decided(rule, f"{job.where} sets GLOO_SOCKET_IFNAME at run time (its value is not in the spec)")
        return
    if job.runtime != RUNTIME_ENROOT and not job.host_network:
        if job.host_network is False:
            yield decided(
                rule, "the container has its own network namespace: the runtime maps its host name to its own address"
            )
        return  # host_network unknown: the engine asks nothing more than the spec can say
    kind = _hosts_kind(ctx.node.hostname_in_hosts)
    if kind is None:
        yield unknown(
            rule,
            "the job shares the node's network namespace and sets no GLOO_SOCKET_IFNAME: Gloo binds to what the "
            "node's host name resolves to; " + ctx.unknown_why("hostname_in_hosts"),
        )
        return
    if kind == "none":
        yield decided(rule, "the node's /etc/hosts does not name its host name: DNS gives its address")
        return
    if kind == "routable":
        yield decided(rule, "the node's /etc/hosts maps its host name to a routable address")
        return
    use = frameworks.gloo_by_hostname(ctx.matrix, ctx.image)  # which framework of the image brings such a Gloo
    if not use.by_hostname:
        yield _gloo_use_open_or_ruled_out(rule, kind, use)
        return
    netns = ENROOT_NETNS if job.runtime == RUNTIME_ENROOT else "shares the node's network namespace"
    yield finding(
        ctx.matrix,
        rule,
        [_job_words_ev(ctx), ctx.node_ev("hostname_in_hosts", kind)]
        + [
            Evidence("image.packages", f"{f.package.name} {f.package.version}", f.package.location)
            for f in use.by_hostname
        ],
        kind=kind,
        netns=netns,
        where=job.where,
        framework=frameworks.names(use.by_hostname),
    )


def _gloo_use_open_or_ruled_out(rule: str, kind: str, use: frameworks.GlooUse) -> Outcome:
    """No framework of the image is known to bind Gloo to the host name: ask, or decide from the frameworks seen."""
    prefix = f"the node's /etc/hosts maps its host name to a {kind} address, which a Gloo group would bind to; "
    if use.undecided:
        return unknown(
            rule,
            prefix + f"the image carries {frameworks.names(use.undecided)}, whose Gloo address choice is not in "
            "the distributed_frameworks table (or depends on its launcher), so whether the job binds Gloo to the "
            "host name is not known",
        )
    if use.without:
        return decided(
            rule, prefix + f"the image's frameworks ({frameworks.names(use.without)}) bring no Gloo of their own"
        )
    return unknown(
        rule,
        prefix + "no framework of the distributed_frameworks table (PyTorch, PaddlePaddle, Horovod, TensorFlow, "
        "JAX, ...) is among the image's packages read, so whether the job uses Gloo is not known",
    )


_HOSTS_KINDS = ("loopback", "link-local", "routable", "none")


def _hosts_kind(value: str | None) -> str | None:
    """The kind node/hostname.py records; a facts file written by hand may give the address itself, which is
    classified the same way (loopback, link-local, else routable). Anything else is not known."""
    if value is None or value in _HOSTS_KINDS:
        return value
    try:
        addr = ipaddress.ip_address(value.split("%", 1)[0])
    except ValueError:
        return None
    return "loopback" if addr.is_loopback else "link-local" if addr.is_link_local else "routable"


def _job_words_ev(ctx: Ctx) -> Evidence:
    job = ctx.job
    assert job is not None  # _gloo_hostname runs with a launch spec only
    return Evidence("job.env.GLOO_SOCKET_IFNAME", "not set", Location.file(job.path))


def _socket_ifname(ctx: Ctx) -> Iterator[Outcome]:
    s = ctx.setting("NCCL_SOCKET_IFNAME")
    if s is None or len(s.value.strip()) < 2:  # NCCL ignores a value of one character (strlen(env) > 1)
        return
    wanted = net_select.IfList.parse(s.value.strip())
    addresses = net_select.address_items(s.value)
    if addresses and not wanted.exclude and len(addresses) == len(wanted.names):
        # every item is an address: NCCL compares name prefixes, so it selects no interface on any node
        yield finding(
            ctx.matrix,
            "ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE",
            [s.evidence],
            variant="address",
            setting=s.label,
            first=addresses[0],
        )
        return
    job = ctx.job
    if job is not None and job.runtime == RUNTIME_ENROOT:
        # enroot shares the host's network namespace unless ENROOT_UNSHARE_NET=yes, which leaves only lo
        # (enroot doc/cmd/start.md): a value that selects none of the node's interfaces fails either way
        netns = ENROOT_NETNS
    elif job is None or not job.host_network:
        why = (
            "without --job it is not known whether the container shares the node's network namespace"
            if job is None
            else "the container has its own network namespace (no hostNetwork / --network host), "
            "whose interfaces the node facts do not show"
        )
        yield unknown("ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE", f"{s.label} names interfaces NCCL looks for; {why}")
        return
    else:
        netns = "shares the node's network namespace"
    interfaces = ctx.node.net_interfaces
    if interfaces is None:
        yield unknown("ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE", f"{s.label} is set; " + ctx.unknown_why("net_interfaces"))
        return
    wanted = net_select.IfList.parse(s.value.strip())
    chosen = [i for i in interfaces if wanted.selects(i.name)]
    names = ", ".join(f"{i.name} ({i.operstate or 'state unknown'})" for i in interfaces) or "none"
    evidence = [s.evidence, ctx.node_ev("net_interfaces", names)]
    if not chosen:
        yield finding(
            ctx.matrix, "ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE", evidence, setting=s.label, interfaces=names, netns=netns
        )
    elif all(i.operstate in NOT_RUNNING for i in chosen) and _skips_down(ctx) is None:
        yield unknown(
            "ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE",
            f"{s.label} selects only interfaces that are down ({', '.join(i.name for i in chosen)}); NCCL skips "
            f"them from {_running_check_first(ctx)} (IFF_RUNNING) and uses them before: "
            + (f"NCCL {_nccl_version(ctx)}" if _nccl_version(ctx) else "the image's NCCL version is not known"),
        )
    elif all(i.operstate in NOT_RUNNING for i in chosen) and _skips_down(ctx):
        yield finding(
            ctx.matrix,
            "ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE",
            evidence,
            variant="down",
            setting=s.label,
            interfaces=names,
            chosen=", ".join(i.name for i in chosen),
        )
    else:
        usable = [i for i in chosen if i.operstate not in NOT_RUNNING] if _skips_down(ctx) else chosen
        yield from _socket_addresses(ctx, s, usable or chosen, evidence)


def _running_check_first(ctx: Ctx) -> str:
    """The first NCCL release that skips interfaces without IFF_RUNNING (nccl_socket_select)."""
    return next((r["first"] for r in ctx.matrix.rows("nccl_socket_select") if r["requires_running"]), "no release")


def _skips_down(ctx: Ctx) -> bool | None:
    """Whether the image's NCCL skips interfaces without IFF_RUNNING (nccl_socket_select requires_running)."""
    found = {bool(r["requires_running"]) for r in net_select.rows_for(ctx.matrix, _nccl_version(ctx))}
    return found.pop() if len(found) == 1 else None


def address_words(iface: NetInterface) -> str:
    """What kinds of address an interface has, never the node's own values (nodes are grouped without them)."""
    if iface.ipv4 is None or iface.ipv6 is None:
        return "addresses not read"
    kinds = ["IPv4"] if iface.ipv4 else []
    scopes = {a.rsplit(" ", 1)[-1] for a in iface.ipv6}
    if scopes - {"link", "host"}:
        kinds.append("IPv6")
    elif "link" in scopes:
        kinds.append("IPv6 link-local only" if not kinds else "IPv6 link-local")
    elif "host" in scopes:
        kinds.append("IPv6 loopback")
    return ", ".join(kinds) or "no IP address"


def _usable(addresses: tuple[str, ...]) -> list[str]:
    """The IPv6 addresses NCCL accepts (all but loopback)."""
    return [a for a in addresses if not a.endswith(" host")]


def _socket_addresses(ctx: Ctx, s: Setting, running: list[NetInterface], evidence: list[Evidence]) -> Iterator[Outcome]:
    """Running interfaces the setting selects: do any have an address NCCL accepts, and one routable beyond the link?"""
    rule = "ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE"
    if any(i.ipv4 for i in running):
        return
    if any(i.ipv4 is None or i.ipv6 is None for i in running):
        fact = "net_interfaces.ipv4" if any(i.ipv4 is None for i in running) else "net_interfaces.ipv6"
        yield unknown(
            rule,
            f"{s.label} selects {', '.join(i.name for i in running)}; their addresses are unknown: "
            + ctx.unknown_why(fact),
        )
        return
    v6 = {i.name: _usable(i.ipv6 or ()) for i in running}
    words = "; ".join(f"{i.name}: {address_words(i)}" for i in running)
    chosen = ", ".join(i.name for i in running)
    evidence = [*evidence, ctx.node_ev("net_interfaces.addresses", words)]
    if not any(v6.values()):
        yield finding(ctx.matrix, rule, evidence, variant="no-address", setting=s.label, chosen=chosen, addresses=words)
    elif all(a.endswith(" link") for addrs in v6.values() for a in addrs):
        yield finding(ctx.matrix, rule, evidence, variant="link-local", setting=s.label, chosen=chosen, addresses=words)


def _nccl_version(ctx: Ctx) -> str | None:
    return ctx.nccl.version if ctx.nccl is not None else None


def _socket_node_local(ctx: Ctx) -> Iterator[Outcome]:
    """The interfaces NCCL takes for its bootstrap and socket transport (its default order, or the
    NCCL_SOCKET_IFNAME list), simulated per release from nccl_socket_select: does it take one other nodes cannot
    reach (loopback, link-local, a bridge with the same address on every node)?"""
    rule = SOCKET_LOCAL
    s = ctx.setting("NCCL_SOCKET_IFNAME")
    value = s.value.strip() if s is not None else None
    if value is None and ctx.nccl_present is not True:
        return  # NCCL's own default is judged only when NCCL is there; unknown: the engine asks
    job = ctx.job
    if job is not None and job.runtime != RUNTIME_ENROOT and job.host_network is False:
        if value is None:
            yield decided(
                rule,
                "the container has its own network namespace (no hostNetwork / --network host): NCCL's default "
                "takes the container's own interface (eth0), never lo, and not the node's links",
            )
        else:
            yield unknown(
                rule,
                f"{s.label if s else value} chooses among the container's own interfaces, which the node facts do not "
                "show (no hostNetwork / --network host)",
            )
        return
    interfaces = ctx.node.net_interfaces
    if interfaces is None:
        return  # the engine asks (node.net_interfaces is read)
    comm_id = ctx.setting("NCCL_COMM_ID")
    if value is None and comm_id is not None and comm_id.value.strip():
        yield unknown(rule, f"{comm_id.label}: NCCL prefers the interface in that address's subnet (not simulated)")
        return
    fam = ctx.setting("NCCL_SOCKET_FAMILY")
    family = (
        fam.value.strip()
        if fam is not None and fam.value.strip() in (net_select.AF_INET, net_select.AF_INET6)
        else None
    )
    outcomes = []
    for row in net_select.rows_for(ctx.matrix, _nccl_version(ctx)):
        used = value if value is not None and len(value) >= (row["ifname_min_len"] or 2) else None
        sel = net_select.select(ctx.matrix, row, interfaces, used, family)
        if sel is None:
            continue
        fam_row = family if row["socket_family_env"] else None
        local = [(i, r) for i in sel.chosen for r in [net_select.reach(ctx.matrix, i, fam_row)] if r.reachable is False]
        if used is not None and net_select.IfList.parse(used).exclude:
            local = [
                (i, r) for i, r in local if i.name != "lo"
            ]  # an exclusion admitting lo: ENV-NCCL-SOCKET-IFNAME-ALLOWS-LO
        other = [i.name for i in sel.chosen if net_select.reach(ctx.matrix, i, fam_row).reachable is not False]
        outcomes.append((row, sel, local, other))
    flagged = [o for o in outcomes if o[2]]
    if not flagged:
        unsure = sorted({u for o in outcomes for u in o[1].unsure})
        if unsure and any(net_select.node_local_row(ctx.matrix, u.split(":", 1)[0]) for u in unsure):
            yield unknown(rule, "NCCL may select " + "; ".join(unsure))
        elif value is None and any(len(o[1].chosen) > 1 for o in outcomes):
            names = ", ".join(i.name for i in max((o[1].chosen for o in outcomes), key=len))
            yield unknown(
                rule,
                f"NCCL_SOCKET_IFNAME is unset: NCCL's bootstrap takes the first of {names} in the kernel's address "
                "order and its socket transport all of them; whether each reaches the other nodes is not in the facts",
            )
        return
    if len(flagged) != len(outcomes):
        releases = ", ".join(o[0]["id"] for o in flagged)
        yield unknown(
            rule,
            f"NCCL releases {releases} would take a node-local interface here, others would not: "
            + (f"NCCL {_nccl_version(ctx)}" if _nccl_version(ctx) else "the image's NCCL version is not known"),
        )
        return
    row, sel, local, other = flagged[0]
    only = not other and not sel.unsure
    if not only and _bootstrap_keeps_ipv4(ctx, sel, local):
        yield decided(
            rule,
            f"{', '.join(i.name for i, _ in local)} carry no IPv4 address, NCCL's bootstrap takes an IPv4 one first "
            "(getifaddrs lists IPv4 before IPv6) and the data goes over the node's RDMA devices, not NCCL's sockets",
        )
        return
    names = ", ".join(f"{i.name} ({i.operstate or 'state unknown'})" for i in interfaces)
    netns = (
        ENROOT_NETNS
        if job is not None and job.runtime == RUNTIME_ENROOT
        else (
            "shares the node's network namespace"
            if job is not None and job.host_network
            else "is assumed to share the node's network namespace (no launch spec says otherwise)"
        )
    )
    if job is None and not only:
        yield unknown(
            rule,
            "without --job it is not known whether the container shares the node's network namespace, where NCCL "
            f"would also take {', '.join(i.name for i, _ in local)}",
        )
        return
    setting_words = (
        s.label
        if s is not None and value is not None and len(value) >= 2
        else (f"NCCL_SOCKET_IFNAME unset (NCCL's default order: {', '.join(row['default_order'])})")
    )
    evidence = [
        *([s.evidence] if s is not None and value is not None else ctx.nccl_evidence()),
        ctx.node_ev("net_interfaces", names),
    ]
    yield finding(
        ctx.matrix,
        rule,
        evidence,
        variant="only" if only else None,
        setting=setting_words,
        local="; ".join(f"{i.name}: {r.why}" for i, r in local),
        others=", ".join(other) + (f" (and maybe {'; '.join(sel.unsure)})" if sel.unsure else "") or "none",
        used=sel.used_list or "none",
        releases=row["id"],
        netns=netns,
        first=local[0][0].name,
    )


# The facts each rule needs present (absent: the rule does not apply) and the further facts it reads;
# silence with one of them unknown is reported as unknown (engine/contract.py).
_GID_SETTINGS = facts.each_setting(GID_INDEX, "NCCL_IB_HCA")
# NCCL's own GID choice (unset / -1) reads these too (ncclIbGetGidIndex)
_GID_CHOICE = facts.each_setting("NCCL_IB_ADDR_FAMILY", "NCCL_IB_ROCE_VERSION_NUM", "NCCL_IB_ADDR_RANGE")
_SOCKET_SETTINGS = facts.each_setting("NCCL_SOCKET_IFNAME", "NCCL_COMM_ID", "NCCL_SOCKET_FAMILY")
REQUIRES = {
    "ENV-NCCL-IB-GID-INDEX-NO-GID": (facts.NCCL, facts.NODE_RDMA),
    "ENV-NCCL-IB-GID-INDEX-ROCE-V1": (facts.NCCL, facts.NODE_RDMA),
    "ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE": (facts.NCCL, facts.setting("NCCL_SOCKET_IFNAME")),
    "ENV-NCCL-IB-GID-INDEX-LINK-LOCAL": (facts.NCCL, facts.NODE_RDMA),
    "ENV-GLOO-SOCKET-IFNAME-NO-ADDRESS": (facts.setting("GLOO_SOCKET_IFNAME"),),
    SOCKET_LOCAL: (facts.NCCL,),
    GLOO_LOOPBACK: (),
}
# The settings each rule reasons on when they are unset (NCCL's or Gloo's default) are declared one by one: with the
# launch given and the image's Env not read they are UNSET_BY_LAUNCH, and the rule decides under "the image does
# not set them" (engine/hypothesis.py)
READS = {
    "ENV-NCCL-IB-GID-INDEX-NO-GID": (facts.NCCL, facts.NODE_RDMA, *_GID_SETTINGS),
    "ENV-NCCL-IB-GID-INDEX-ROCE-V1": (facts.NCCL, facts.NODE_RDMA, *_GID_SETTINGS),
    "ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE": (facts.NCCL, facts.setting("NCCL_SOCKET_IFNAME")),
    "ENV-NCCL-IB-GID-INDEX-LINK-LOCAL": (facts.NCCL, facts.NODE_RDMA, *_GID_SETTINGS, *_GID_CHOICE),
    "ENV-GLOO-SOCKET-IFNAME-NO-ADDRESS": (facts.setting("GLOO_SOCKET_IFNAME"),),
    SOCKET_LOCAL: (facts.NCCL, *_SOCKET_SETTINGS, facts.NET_INTERFACES),
    GLOO_LOOPBACK: (facts.setting("GLOO_SOCKET_IFNAME"), facts.PACKAGES),
}
