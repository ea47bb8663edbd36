"""The GID entry UCX picks itself on a RoCE port (UCX_IB_GID_INDEX=auto, its default), from the node's GID table.

openucx/ucx src/uct/ib/base/ib_device.c uct_ib_device_select_gid walks a priority list and, for each priority in
turn, the table from entry 0, taking the first entry whose RoCE version and address family match (and, from the
release in ucx_features "roce_gid_prefer_global", a global IPv6 entry before a link-local one: openucx/ucx#10939).
An all-zero entry is skipped (its address handle cannot be created, uct_ib_device_test_roce_gid_index; from 1.18 a
validity check skips it first). No match: entry 0, treated as RoCE v1. UCX_IB_ROCE_SUBNETS (an allow/deny list of
subnets) filters candidates; it is not simulated here (None).

Priorities (v1.7.0 .. v1.20.x): v2 IPv4, v2 IPv6, v1 IPv4, v1 IPv6.
From roce_gid_prefer_global: v2 IPv4, v2 IPv6 not link-local, v2 IPv6 link-local, v1 IPv4, v1 IPv6 not link-local,
v1 IPv6 link-local.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..model.node import GID_IPV4_MAPPED, GID_LINK_LOCAL, GidEntry, RdmaPort

V1, V2 = "IB/RoCE v1", "RoCE v2"
Priority = tuple[str, str, bool]  # (RoCE version, address family, link-local allowed)
_OLD: tuple[Priority, ...] = ((V2, "ipv4", True), (V2, "ipv6", True), (V1, "ipv4", True), (V1, "ipv6", True))
_NEW: tuple[Priority, ...] = (
    (V2, "ipv4", True),
    (V2, "ipv6", False),
    (V2, "ipv6", True),
    (V1, "ipv4", True),
    (V1, "ipv6", False),
    (V1, "ipv6", True),
)


@dataclass(frozen=True)
class UcxGid:
    """UCX's choice on one port: the entry index and its kind (GidEntry.kind or None for the fallback)."""

    index: int
    version: str  # V1 | V2 as sysfs names them
    kind: str | None
    fallback: bool = False  # nothing matched: entry 0, used as RoCE v1


def _family(entry: GidEntry) -> str:
    return "ipv4" if entry.kind == GID_IPV4_MAPPED else "ipv6"


def _matches(entry: GidEntry, version: str, family: str, allow_link_local: bool) -> bool:
    # sysfs prints "IB/RoCE v1" or "RoCE v2"; UCX reads a missing type file as v1
    kind = V2 if entry.type == V2 else V1
    return kind == version and _family(entry) == family and (allow_link_local or entry.kind != GID_LINK_LOCAL)


def _walk(table: list[GidEntry], priorities: tuple[Priority, ...]) -> UcxGid:
    for version, family, allow_ll in priorities:
        for entry in table:
            if _matches(entry, version, family, allow_ll):
                return UcxGid(entry.index, version, entry.kind)
    return UcxGid(0, V1, None, fallback=True)


def ucx_choice(port: RdmaPort, prefer_global: bool | None, subnets: str | None = None) -> tuple[UcxGid | None, str]:
    """(UCX's choice, how) or (None, why it cannot be told). prefer_global: whether the UCX release prefers a global
    IPv6 entry to a link-local one (None: release unknown; decided only when both orders agree)."""
    if subnets:
        return None, "UCX_IB_ROCE_SUBNETS is set: its subnet filter is not simulated"
    gap = port.gid_table_gap(need_type=True)
    if gap is not None:
        return None, gap
    assert port.gids is not None  # gid_table_gap
    table = sorted(port.gids, key=lambda g: g.index)
    orders = (_NEW,) if prefer_global else (_OLD,) if prefer_global is False else (_OLD, _NEW)
    choices = {_walk(table, order) for order in orders}
    if len(choices) > 1:
        return None, "the entry depends on the UCX release (a global IPv6 entry is preferred from a later one)"
    choice = choices.pop()
    if choice.fallback:
        return choice, "no RoCE entry matched: UCX falls back to entry 0 as RoCE v1"
    return choice, f"entry {choice.index} ({choice.kind}, {choice.version}) by UCX's own choice"


def best_class(port: RdmaPort) -> str | None:
    """The best kind of entry the port offers, as the RoCE libraries rank them (both NCCL and UCX try a RoCE v2
    IPv4-mapped entry first): what a fleet must agree on for their automatic choices to be able to connect."""
    if port.gid_table_gap(need_type=True) is not None:
        return None
    assert port.gids is not None  # gid_table_gap
    v2 = [g for g in port.gids if g.type == V2]
    if any(g.kind == GID_IPV4_MAPPED for g in v2):
        return "RoCE v2 IPv4"
    if any(g.kind != GID_LINK_LOCAL for g in v2):
        return "RoCE v2 global IPv6"
    if v2:
        return "RoCE v2 link-local only"
    return "RoCE v1 only" if port.gids else "no GID"


def v2_ipv4_indexes(port: RdmaPort) -> frozenset[int] | None:
    """The entries that are RoCE v2 IPv4-mapped (the ones a pinned NCCL_IB_GID_INDEX / UCX_IB_GID_INDEX should
    name), None when the table was not fully read."""
    if best_class(port) is None:
        return None
    assert port.gids is not None  # best_class
    return frozenset(g.index for g in port.gids if g.type == V2 and g.kind == GID_IPV4_MAPPED)
