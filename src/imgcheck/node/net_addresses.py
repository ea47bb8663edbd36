"""Interface addresses and routes of the probed network namespace, from procfs (/proc/net is /proc/self/net: the
namespace of the process reading it, the node's own for a probe on the host or a hostNetwork pod).

IPv4: /proc/net/fib_trie lists every local address as a `/32 host LOCAL` leaf (net/ipv4/fib_trie.c
fib_trie_seq_show) but names no interface; /proc/net/route lists the main table's routes per interface
(net/ipv4/fib_trie.c fib_route_seq_show: Iface, Destination, Gateway, Flags, ..., Mask, little-endian hex), so
an address belongs to the interface whose connected route (no gateway) holds it, longest prefix first.
IPv6: /proc/net/if_inet6 (address, ifindex, prefix length, scope, flags, name: net/ipv6/addrconf.c if6_seq_show)
and /proc/net/ipv6_route (destination, prefix, source, prefix, next hop, metric, refcnt, use, flags, name:
net/ipv6/route.c). NCCL considers an interface only with an IPv4 or non-loopback IPv6 address and IFF_RUNNING
(NVIDIA/nccl src/os/linux.cc ncclOsFindInterfaces).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from .hostroot import HostReadError, HostRoot

FIB_TRIE = "/proc/net/fib_trie"
ROUTE = "/proc/net/route"
IF_INET6 = "/proc/net/if_inet6"
IPV6_ROUTE = "/proc/net/ipv6_route"
_MAX = 4 * 1024 * 1024
_RTF_GATEWAY = 0x2
_SCOPES = {0x00: "global", 0x10: "host", 0x20: "link", 0x40: "site"}


@dataclass
class Addresses:
    ipv4: dict[str, list[str]] | None = None  # interface -> ["172.19.0.60/24"]; None: not readable
    ipv6: dict[str, list[str]] | None = None  # interface -> ["fe80::e42:a1ff:fe5d:4db8/64 link"]
    routes: dict[str, list[str]] | None = None  # interface -> ["default via 172.19.0.1", "172.19.0.0/24", "::/0 ..."]
    unplaced_v4: list[str] = field(default_factory=list)  # local IPv4 addresses no connected route places
    unknown: dict[str, str] = field(default_factory=dict)


def _read(host: HostRoot, path: str) -> str | None:
    try:
        return host.read_text(path, _MAX)
    except HostReadError:
        return None


def _le_ip(hex_text: str) -> ipaddress.IPv4Address:
    return ipaddress.IPv4Address(int.from_bytes(bytes.fromhex(hex_text), "little"))


def _v4_routes(text: str) -> list[tuple[str, ipaddress.IPv4Network, ipaddress.IPv4Address | None]]:
    routes = []
    for line in text.splitlines()[1:]:
        f = line.split()
        if len(f) < 8:
            continue
        try:
            dest, gateway, flags, mask = _le_ip(f[1]), _le_ip(f[2]), int(f[3], 16), _le_ip(f[7])
            net = ipaddress.IPv4Network(f"{dest}/{mask}", strict=False)
        except ValueError:
            continue
        routes.append((f[0], net, gateway if flags & _RTF_GATEWAY else None))
    return routes


def _local_v4(text: str) -> list[ipaddress.IPv4Address]:
    found: list[ipaddress.IPv4Address] = []
    last = None
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("|-- "):
            last = s[4:].strip()
        elif s == "/32 host LOCAL" and last:
            try:
                addr = ipaddress.IPv4Address(last)
            except ValueError:
                continue
            if addr not in found:
                found.append(addr)
    return found


def _v6(hex_text: str) -> ipaddress.IPv6Address:
    return ipaddress.IPv6Address(int(hex_text, 16))


def scan_addresses(host: HostRoot) -> Addresses:
    out = Addresses()
    route_text, trie_text = _read(host, ROUTE), _read(host, FIB_TRIE)
    if route_text is None or trie_text is None:
        out.unknown["net_interfaces.ipv4"] = f"{ROUTE} or {FIB_TRIE} is not readable under the probe root"
    else:
        routes = _v4_routes(route_text)
        out.routes = {}
        for iface, net, gw in routes:
            out.routes.setdefault(iface, []).append(
                f"default via {gw}" if net.prefixlen == 0 and gw else f"{net} via {gw}" if gw else str(net)
            )
        out.ipv4 = {}
        for addr in _local_v4(trie_text):
            connected = [(net, iface) for iface, net, gw in routes if gw is None and net.prefixlen and addr in net]
            if connected:
                net, iface = max(connected, key=lambda c: c[0].prefixlen)
                out.ipv4.setdefault(iface, []).append(f"{addr}/{net.prefixlen}")
            elif addr.is_loopback:
                out.ipv4.setdefault("lo", []).append(f"{addr}/8")
            else:
                # a /32 on a dummy or point-to-point link (EKS Pod Identity's 169.254.170.23, NodeLocal DNSCache,
                # kube-ipvs0's ClusterIPs) has no connected route in the main table: its interface is not known
                out.unplaced_v4.append(str(addr))
    inet6 = _read(host, IF_INET6)
    if inet6 is None:
        out.unknown["net_interfaces.ipv6"] = f"{IF_INET6} is not readable (no IPv6 in this kernel, or /proc)"
    else:
        out.ipv6 = {}
        for line in inet6.splitlines():
            f = line.split()
            if len(f) < 6:
                continue
            try:
                addr6, prefix, scope = _v6(f[0]), int(f[2], 16), int(f[3], 16)
            except ValueError:
                continue
            out.ipv6.setdefault(f[5], []).append(f"{addr6}/{prefix} {_SCOPES.get(scope, hex(scope))}")
    v6routes = _read(host, IPV6_ROUTE)
    if v6routes is not None and out.routes is not None:
        for line in v6routes.splitlines():
            f = line.split()
            if len(f) < 10 or f[9] == "lo":
                continue
            try:
                dest, prefix, hop = _v6(f[0]), int(f[1], 16), _v6(f[4])
            except ValueError:
                continue
            if dest.is_multicast:
                continue
            via = f" via {hop}" if int(hop) else ""
            out.routes.setdefault(f[9], []).append(("default" if prefix == 0 else f"{dest}/{prefix}") + via)
    return out
