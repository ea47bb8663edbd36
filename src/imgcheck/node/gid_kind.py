"""What address a RoCE GID is, by the tests NCCL applies to it (NVIDIA/nccl src/transport/net_ib.cc, v2.21.5 on;
src/transport/net_ib/connect.cc from v2.30): getGidAddrFamily (IPv4-mapped ::ffff:0:0/96, or its multicast form
ff0e::ffff:0:0/96, is AF_INET), linkLocalGid (fe80::/64) and configuredGid (all zeros, or fe80:: with nothing
after it, is no address)."""

from __future__ import annotations

from ..model.node import GID_GLOBAL as GLOBAL
from ..model.node import GID_IPV4_MAPPED as IPV4_MAPPED
from ..model.node import GID_LINK_LOCAL as LINK_LOCAL
from ..model.node import GID_UNCONFIGURED as UNCONFIGURED

__all__ = ["GLOBAL", "IPV4_MAPPED", "LINK_LOCAL", "UNCONFIGURED", "gid_kind", "ipv4_of", "words"]


def words(gid: str) -> tuple[int, int, int, int] | None:
    """The GID's four 32-bit words, from sysfs's eight colon-separated 16-bit groups; None when malformed."""
    groups = gid.strip().split(":")
    if len(groups) != 8:
        return None
    try:
        values = [int(g, 16) for g in groups]
    except ValueError:
        return None
    if any(v > 0xFFFF for v in values):
        return None
    return (
        values[0] << 16 | values[1],
        values[2] << 16 | values[3],
        values[4] << 16 | values[5],
        values[6] << 16 | values[7],
    )


def gid_kind(gid: str | None) -> str | None:
    w = words(gid) if gid else None
    if w is None:
        return None
    trailer = w[1] | w[2] | w[3]
    if (w[0] | trailer) == 0 or (w[0] == 0xFE800000 and trailer == 0):
        return UNCONFIGURED
    if (w[0] | w[1]) == 0 and w[2] == 0x0000FFFF or (w[0] == 0xFF0E0000 and w[1] == 0 and w[2] == 0x0000FFFF):
        return IPV4_MAPPED
    if w[0] == 0xFE800000 and w[1] == 0:
        return LINK_LOCAL
    return GLOBAL


def ipv4_of(gid: str | None) -> str | None:
    """a.b.c.d of an IPv4-mapped GID."""
    w = words(gid) if gid else None
    if w is None or gid_kind(gid) != IPV4_MAPPED:
        return None
    return ".".join(str((w[3] >> s) & 0xFF) for s in (24, 16, 8, 0))
