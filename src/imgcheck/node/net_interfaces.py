"""The network interfaces of the probed network namespace: /sys/class/net/<name> and its operstate.

operstate is RFC 2863's state as the kernel reports it ("up", "down", "lowerlayerdown", "dormant", "unknown", ...;
Documentation/ABI/testing/sysfs-class-net). NCCL only considers interfaces with IFF_RUNNING and an IPv4/IPv6
address (NVIDIA/nccl src/os/linux.cc ncclOsFindInterfaces); sysfs shows no addresses, so only the names and
states are facts here. sysfs lists the interfaces of the network namespace that mounted it: the host's /sys
(the probe DaemonSet's /host/sys) shows the node's, a container's own /sys its own.
"""

from __future__ import annotations

from ..model.node import NetInterface
from .hostroot import HostReadError, HostRoot
from .net_addresses import scan_addresses

NET_CLASS = "/sys/class/net"
# A bound on probe work, not a property of Linux: past it (thousands of veths) the list is left unknown rather
# than recorded in part, since a partial list cannot say an interface is absent.
MAX_INTERFACES = 1024


def scan_interfaces(host: HostRoot, unknown: dict[str, str]) -> tuple[NetInterface, ...] | None:
    if not host.is_dir(NET_CLASS):
        unknown["net_interfaces"] = f"{NET_CLASS} is not visible under the probe root (is /sys mounted?)"
        return None
    try:
        names = host.listdir(NET_CLASS)
    except HostReadError as exc:
        unknown["net_interfaces"] = str(exc)
        return None
    if len(names) > MAX_INTERFACES:
        unknown["net_interfaces"] = f"{len(names)} interfaces under {NET_CLASS}, more than the {MAX_INTERFACES} read"
        return None
    found = scan_addresses(host)
    unknown.update(found.unknown)

    def of(table: dict[str, list[str]] | None, name: str) -> tuple[str, ...] | None:
        return None if table is None else tuple(table.get(name, ()))

    # A local address no connected route places may belong to any interface that shows no IPv4 of its own: their
    # IPv4 is then unknown, never "none" (the other interfaces' addresses stay as read).
    ipv4_table = found.ipv4
    if found.unplaced_v4 and ipv4_table is not None:
        unsure = {n for n in names if n != "lo" and not ipv4_table.get(n)}
        if unsure:
            unknown["net_interfaces.ipv4"] = (
                f"{len(found.unplaced_v4)} local IPv4 address(es) with no connected route (a /32 on a dummy or "
                f"link interface) may belong to {', '.join(sorted(unsure)[:8])}"
            )

        def of_v4(name: str) -> tuple[str, ...] | None:
            return None if name in unsure else tuple(ipv4_table.get(name, ()))

    else:

        def of_v4(name: str) -> tuple[str, ...] | None:
            return of(ipv4_table, name)

    return tuple(
        NetInterface(
            name=n,
            operstate=_operstate(host, n),
            ipv4=of_v4(n),
            ipv6=of(found.ipv6, n),
            routes=of(found.routes, n),
        )
        for n in names
    )


def _operstate(host: HostRoot, name: str) -> str | None:
    try:
        return host.read_value(f"{NET_CLASS}/{name}/operstate") or None
    except HostReadError:
        return None
