"""Which network interfaces NCCL's bootstrap and socket transport use on a node, per NCCL release.

The behaviour comes from compat_matrix nccl_socket_select (generated from every release's ncclFindInterfaces by
tools/nccl/gen_socket_select.py): with NCCL_SOCKET_IFNAME set (at least `ifname_min_len` characters) only the
interfaces its list selects ('^' excludes, '=' exact, prefixes otherwise); unset, the default prefix lists in
order, each tried only when the ones before found nothing. An interface counts when it has an IPv4 or non-loopback
IPv6 address and, from the release whose row says requires_running, IFF_RUNNING. The bootstrap takes the first
match in getifaddrs order (IPv4 before IPv6, by interface index); the socket transport takes them all.
Which interfaces other nodes cannot reach: loopback and link-local addresses when the facts have them, else the
node_local_interfaces rows (interfaces node software creates with the same or a link-local address on every node).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Any

from ..matrix import Matrix
from ..model.node import NetInterface
from ..versions import ranges

COMM_ID_SUBNET = "@comm_id_subnet"
AF_INET, AF_INET6 = "AF_INET", "AF_INET6"  # the NCCL_SOCKET_FAMILY values NCCL honours (envSocketFamily)
# operstate values for which the kernel does not set IFF_RUNNING (RFC 2863 states other than up/unknown/dormant)
NOT_RUNNING = ("down", "lowerlayerdown", "notpresent")


@dataclass(frozen=True)
class IfList:
    """NCCL's interface list syntax (matchIfList/parseStringList): '^' excludes, '=' exact, ':port' ignored."""

    exclude: bool
    exact: bool
    names: tuple[str, ...]
    ports: tuple[int | None, ...] = ()  # per name: the ':port' NCCL_IB_HCA gives (atoi), None when absent

    @classmethod
    def parse(cls, text: str) -> IfList:
        exclude = text.startswith("^")
        text = text[1:] if exclude else text
        exact = text.startswith("=")
        text = text[1:] if exact else text
        entries = [e.split(":") for e in text.split(",") if e.split(":", 1)[0]]
        ports = tuple(_atoi(e[1]) if len(e) > 1 and e[1] else None for e in entries)
        return cls(exclude, exact, tuple(e[0] for e in entries), ports)

    def _hit(self, name: str, e: str) -> bool:
        return name == e if self.exact else name.startswith(e)

    def selects(self, name: str) -> bool:
        hit = any(self._hit(name, e) for e in self.names)
        return hit != self.exclude

    def selects_port(self, name: str, port: int) -> bool:
        """matchIfList with a port (NCCL_IB_HCA): an entry without a port matches every port of its device."""
        ports = self.ports or (None,) * len(self.names)
        hit = any(self._hit(name, e) and (p is None or p == port) for e, p in zip(self.names, ports, strict=True))
        return hit != self.exclude


def _atoi(text: str) -> int:
    """C's atoi: leading digits after an optional sign, 0 when there are none."""
    m = re.match(r"\s*([+-]?\d+)", text)
    return int(m.group(1)) if m else 0


def address_items(text: str) -> tuple[str, ...]:
    """The items of an interface list ('^'/'=' prefix, comma-separated) that are IP addresses or networks
    (10.1.2.3, 10.1.0.0/16, fe80::1, [::1]) rather than names: NCCL, Gloo and UCX compare every item with
    interface names (getifaddrs ifa_name), so such an item selects nothing on any node."""
    body = text.strip().lstrip("^").lstrip("=")
    found = []
    for item in (i.strip() for i in body.split(",")):
        bare = item.strip("[]")
        try:
            ipaddress.ip_network(bare, strict=False)
        except ValueError:
            continue
        if not bare.isdigit():  # a bare number is neither: no interface list holds one as an address
            found.append(item)
    return tuple(found)


@dataclass(frozen=True)
class Reach:
    """Whether peers on other nodes can reach an interface's address: False (node-local), True, None (unknown)."""

    reachable: bool | None
    why: str


@dataclass(frozen=True)
class Selection:
    """What one NCCL release selects on these interfaces."""

    rows: str  # the nccl_socket_select row id(s)
    used_list: str | None  # the list that found interfaces (the setting, or one of the default lists)
    chosen: tuple[NetInterface, ...]  # certainly selected
    unsure: tuple[str, ...]  # "name: why" for interfaces whose selection the facts cannot settle


def rows_for(matrix: Matrix, version: str | None) -> list[dict[str, Any]]:
    """The nccl_socket_select rows a version may fall in (every row when the version is unknown or older than
    the first row); a row runs to the next row's first release."""
    rows = list(matrix.rows("nccl_socket_select"))
    if version:
        bounds = [r["first"] for r in rows[1:]] + [None]
        hit = [r for r, nxt in zip(rows, bounds, strict=True) if ranges.within(version, r["first"], nxt) is not False]
        if hit:
            return hit
    return rows


def node_local_row(matrix: Matrix, name: str) -> dict[str, Any] | None:
    for row in matrix.rows("node_local_interfaces"):
        if (name == row["prefix"]) if row["match"] == "exact" else name.startswith(row["prefix"]):
            return row
    return None


def reach(matrix: Matrix, iface: NetInterface, family: str | None = None) -> Reach:
    """family: NCCL_SOCKET_FAMILY when NCCL honours it (then only that family's addresses are advertised)."""
    row = node_local_row(matrix, iface.name)
    if iface.ipv4 is not None and iface.ipv6 is not None and (iface.ipv4 or iface.ipv6):
        v4 = [ipaddress.ip_interface(a).ip for a in iface.ipv4 if _parses(a)] if family != AF_INET6 else []
        routable_v4 = [a for a in v4 if not (a.is_loopback or a.is_link_local)]
        v6 = iface.ipv6 if family != AF_INET else ()
        routable_v6 = [a for a in v6 if a.rsplit(" ", 1)[-1] not in ("link", "host")]
        if row is not None and row["kind"] == "same-on-every-node":
            return Reach(False, f"{row['owner']}: the same private network on every node")
        if row is not None and not routable_v4:
            # a documented node-local link (pod-id-link0 also carries fd00:ec2::23, the same on every node)
            return Reach(False, f"{row['owner']} ({row['kind']}, no routable IPv4 address)")
        if not routable_v4 and not routable_v6:
            return Reach(False, "only loopback or link-local addresses")
        return Reach(True, "a routable address")
    first = _first_ipv4(iface, family)
    if first is not None:
        # IPv6 not read, IPv4 known: NCCL keeps the first address of each interface and getifaddrs lists IPv4 first
        # (NVIDIA/nccl@v2.21.5-1:src/misc/socket.cc findInterfaces), so the IPv4 address is the one advertised
        if row is not None and row["kind"] == "same-on-every-node":
            return Reach(False, f"{row['owner']}: the same private network on every node")
        if first.is_loopback or first.is_link_local:
            return Reach(
                False, f"its first IPv4 address {first} is {'loopback' if first.is_loopback else 'link-local'}"
            )
        return Reach(True, "a routable IPv4 address")
    if row is not None:
        return Reach(False, f"{row['owner']} ({row['kind']}{', ' + row['address'] if row['address'] else ''})")
    return Reach(None, "its addresses are not in the node facts")


def _first_ipv4(iface: NetInterface, family: str | None) -> Any:
    """The interface's first IPv4 address when its IPv4 addresses are known and some parse (NCCL may use IPv4)."""
    if family == AF_INET6 or not iface.ipv4:
        return None
    parsed = [ipaddress.ip_interface(a).ip for a in iface.ipv4 if _parses(a)]
    return parsed[0] if parsed else None


def _parses(text: str) -> bool:
    try:
        ipaddress.ip_interface(text)
    except ValueError:
        return False
    return True


def _eligible(
    matrix: Matrix, row: dict[str, Any], iface: NetInterface, family: str | None = None
) -> tuple[bool | None, str]:
    """Whether this release would consider the interface at all (an address it accepts, of the forced family;
    running where it asks)."""
    if row["requires_running"] and iface.operstate in NOT_RUNNING:
        return False, f"{iface.operstate} (no IFF_RUNNING)"
    if iface.ipv4 is not None and iface.ipv6 is not None:
        v4 = iface.ipv4 if family != AF_INET6 else ()
        v6 = [a for a in iface.ipv6 if not a.endswith(" host")] if family != AF_INET else []
        if v4 or v6:
            if row["requires_running"] and iface.operstate is None:
                return None, "its state is not in the node facts"
            return True, "has an address"
        return False, f"no {family or 'IPv4 or IPv6'} address NCCL accepts"
    if _first_ipv4(iface, family) is not None:  # an IPv4 address NCCL accepts, whatever the unread IPv6 ones
        if row["requires_running"] and iface.operstate is None:
            return None, "its state is not in the node facts"
        return True, "has an IPv4 address"
    known = node_local_row(matrix, iface.name)
    if known is not None and known["address"]:
        if row["requires_running"] and iface.operstate is None:
            return None, "its state is not in the node facts"
        return True, f"{known['owner']} gives it {known['address']}"
    return None, "its addresses are not in the node facts"


def select(
    matrix: Matrix,
    row: dict[str, Any],
    interfaces: tuple[NetInterface, ...],
    setting: str | None,
    family: str | None = None,
) -> Selection | None:
    """What the release of `row` selects (with NCCL_SOCKET_FAMILY's family where the release reads it); None when
    NCCL_COMM_ID's subnet match would decide (not simulated)."""
    family = family if row["socket_family_env"] else None
    lists = [setting] if setting is not None else list(row["default_order"])
    for text in lists:
        if text == COMM_ID_SUBNET:
            continue  # only with NCCL_COMM_ID set: the caller asks about it
        wanted = IfList.parse(text)
        matched = [i for i in interfaces if wanted.selects(i.name)]
        sure = [i for i in matched if _eligible(matrix, row, i, family)[0] is True]
        unsure = [f"{i.name}: {why}" for i in matched for ok, why in [_eligible(matrix, row, i, family)] if ok is None]
        if sure or setting is not None:
            return Selection(row["id"], text, tuple(sure), tuple(unsure))
        if unsure:  # this list may or may not find something: the lists after it are in doubt
            return Selection(row["id"], text, (), tuple(unsure))
    return Selection(row["id"], None, (), ())
