"""UCX's RoCE GID entry, judged against the node's GID table: a pinned UCX_IB_GID_INDEX, and UCX's own choice.

UCX_IB_GID_INDEX (default auto; openucx/ucx src/uct/ib/base/ib_md.c) names the sgid_index every RoCE address
handle of the port uses. A pinned value bypasses UCX's choice (knowledge/ucx_gid.py): uct_ib_device_port_check
queries that entry for every port and drops a port whose entry is unused ("invalid gid[N]", at diagnostic level)
or beyond the table ("ibv_query_gid(dev=... index=N) failed", an error), so UCX has no IB/RoCE transport there.
A RoCE v1 or link-local entry is used as is: RoCE v1 packets are not IP and fe80:: is not routed, so peers in
another subnet, or whose entry is RoCE v2, cannot be reached. The same facts and words as NCCL's GID rules
(engine/env_node_names.py), for the library Open MPI, UCC and HPC-X use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ..knowledge.ucx_gid import V2, ucx_choice
from ..model.node import GID_LINK_LOCAL, GidEntry, RdmaPort
from ..model.report import Evidence
from ..versions import ranges
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding, unknown
from .ucx import ALIASES, has_ucx

NO_GID = "ENV-UCX-IB-GID-INDEX-NO-GID"
ROCE_V1 = "ENV-UCX-IB-GID-INDEX-ROCE-V1"
LINK_LOCAL = "ENV-UCX-IB-GID-INDEX-LINK-LOCAL"
AUTO_LINK_LOCAL = "UCX-ROCE-GID-AUTO-NOT-ROUTABLE"
GID_SETTING = "UCX_IB_GID_INDEX"
_PINNED = (facts.UCX, facts.setting(GID_SETTING))
_READS = (facts.NODE_RDMA, facts.setting("UCX_NET_DEVICES", "UCX_TLS", "UCX_IB_ROCE_SUBNETS"))
_FEATURES = {"ucx_features": {"roce_gid_auto_priorities", "roce_gid_prefer_global"}}


def _ucx_feature(ctx: Ctx, feature: str) -> bool | None:
    row = ctx.matrix.need("ucx_features", feature=feature)
    version = ctx.image.ucx.version if ctx.image.ucx else None
    return ranges.within(version, row["ucx_min"], row.get("ucx_below")) if version else None


def _roce_ports(ctx: Ctx) -> tuple[list[tuple[str, RdmaPort]], list[str]]:
    """(label, port) of the Ethernet ports UCX_NET_DEVICES leaves UCX (all when unset or 'all'), and the ports
    whose link layer is not known."""
    s = ctx.setting("UCX_NET_DEVICES")
    names = [d.strip() for d in s.value.split(",") if d.strip()] if s is not None else []
    wanted = None if not names or "all" in names else set(names)
    ports, unsure = [], []
    for device in ctx.node.rdma.devices:
        for port in device.ports:
            label = f"{device.name}:{port.port}"
            if wanted is not None and label not in wanted:
                continue
            if port.link_layer == "Ethernet":
                ports.append((label, port))
            elif port.link_layer is None:
                unsure.append(f"{label} (link layer unknown)")
    return ports, unsure


def _tls_without_ib(ctx: Ctx) -> str | None:
    """UCX_TLS allowing no IB/RoCE transport: the GID is never used."""
    s = ctx.setting("UCX_TLS")
    if s is None or s.value.strip().startswith("^"):
        return None
    items = [i.strip().lstrip("\\") for i in s.value.split(",") if i.strip()]
    named = {n for i in items for n in ALIASES.get(i, {i})}
    return None if "all" in items or named & ALIASES["ib"] else s.label


def _applies(ctx: Ctx, rule_id: str) -> Iterator[Outcome]:
    """An outcome when the rule cannot look at any port (empty: go on)."""
    if ctx.node_has_rdma is False:
        yield decided(rule_id, "the node has no RDMA device")
    elif (label := _tls_without_ib(ctx)) is not None:
        yield decided(rule_id, f"{label} allows no InfiniBand/RoCE transport: UCX uses no GID")
    elif not ctx.node.rdma.devices:
        yield unknown(rule_id, "which RoCE ports the node has: " + ctx.unknown_why("rdma.devices"), ("node.rdma",))


def _pinned(ctx: Ctx, value: int) -> tuple[int, list[tuple[str, str, RdmaPort]], list[str]]:
    """(index, [(what the entry is, port label, port)], unread ports) for a pinned UCX_IB_GID_INDEX."""
    ports, unread = _roce_ports(ctx)
    out = []
    for label, port in ports:
        what, entry = port.gid_entry(value)
        if what == "unknown":
            if port.gids is None:
                unread.append(f"{label}: its GID table was not read")
            elif port.gid_table_len is None:
                unread.append(
                    f"{label}: entry {value} is not among its listed entries and the table's length is unknown"
                )
            else:
                unread.append(f"{label}: only its first {port.gids_read} entries were read")
        elif what in ("beyond", "zero"):
            out.append((what, label, port))
        elif entry is not None and entry.type and entry.type != V2 and _has(port, lambda g: g.type == V2):
            out.append(("v1", label, port))
        elif entry is not None and entry.kind == GID_LINK_LOCAL and _has(port, _routable_v2):
            out.append(("link-local", label, port))
    return value, out, unread


def _has(port: RdmaPort, test: Callable[[GidEntry], bool]) -> bool:
    return any(test(g) for g in port.gids or ())


def _routable_v2(g: GidEntry) -> bool:
    return g.type == V2 and g.kind not in (GID_LINK_LOCAL, None)


def _table(ctx: Ctx, ports: list[tuple[str, RdmaPort]]) -> Evidence:
    words = []
    for label, port in ports:
        entries = ", ".join(f"{g.index}={g.type or '?'}/{g.kind or '?'}" for g in port.gids or ())
        words.append(f"{label}: {entries or 'no entries'} (table of {port.gid_table_len})")
    return ctx.node_ev("rdma.devices.ports.gids", "; ".join(words))


def _v2_words(ports: list[tuple[str, RdmaPort]]) -> str:
    per_port = [{g.index for g in p.gids or () if _routable_v2(g)} for _l, p in ports]
    common = sorted(set.intersection(*per_port)) if per_port else []
    return ", ".join(map(str, common)) if common else "none common to these ports"


def _pinned_rule(ctx: Ctx, rule_id: str, kinds: tuple[str, ...]) -> Iterator[Outcome]:
    s = ctx.setting(GID_SETTING)
    value = s.as_int() if s is not None else None
    if not has_ucx(ctx) or value is None or value < 0:
        # no UCX reads it (UCX unknown: the engine asks, then judges as if it were there, hypothesis.py); auto or
        # unset: UCX's own choice (a word UCX cannot parse is the Env lint's)
        return
    stop = list(_applies(ctx, rule_id))
    if stop:
        yield from stop
        return
    index, bad, unread = _pinned(ctx, value)
    assert s is not None  # value is set
    hits = [(what, label, port) for what, label, port in bad if what in kinds]
    if hits:
        ports = [(label, port) for _w, label, port in hits]
        yield finding(
            ctx.matrix,
            rule_id,
            [
                s.evidence,
                _table(ctx, ports),
                Evidence("image.ucx.version", ctx.image.ucx.version if ctx.image.ucx else None),
            ],
            setting=s.label,
            index=index,
            ports=", ".join(f"{label} ({what})" for what, label, _p in hits),
            v2=_v2_words(ports),
        )
    elif unread and not bad:
        yield unknown(rule_id, f"{s.label}: GID entry {index} is not in the node facts for {'; '.join(unread)}")


@rule(NO_GID, requires=_PINNED, reads=_READS, needs=_FEATURES)
def no_gid(ctx: Ctx) -> Iterator[Outcome]:
    yield from _pinned_rule(ctx, NO_GID, ("beyond", "zero"))


@rule(ROCE_V1, requires=_PINNED, reads=_READS)
def roce_v1(ctx: Ctx) -> Iterator[Outcome]:
    yield from _pinned_rule(ctx, ROCE_V1, ("v1",))


@rule(LINK_LOCAL, requires=_PINNED, reads=_READS)
def link_local(ctx: Ctx) -> Iterator[Outcome]:
    yield from _pinned_rule(ctx, LINK_LOCAL, ("link-local",))


@rule(AUTO_LINK_LOCAL, requires=(facts.UCX,), reads=_READS, needs=_FEATURES)
def auto_not_routable(ctx: Ctx) -> Iterator[Outcome]:
    """UCX_IB_GID_INDEX auto on a port whose choice is a link-local IPv6 entry or the RoCE v1 fallback."""
    if not has_ucx(ctx):
        return  # no UCX reads it; UCX unknown: the engine asks, then judges as if it were there (hypothesis.py)
    stop = list(_applies(ctx, AUTO_LINK_LOCAL))
    if stop:
        yield from stop
        return
    s = ctx.setting(GID_SETTING)
    if s is not None and (s.as_int() or 0) >= 0 and s.value.strip().lower() != "auto":
        yield decided(AUTO_LINK_LOCAL, f"{s.label} pins the entry (judged by the UCX_IB_GID_INDEX rules)")
        return
    if _ucx_feature(ctx, "roce_gid_auto_priorities") is False:
        yield unknown(
            AUTO_LINK_LOCAL,
            f"UCX {ctx.image.ucx.version if ctx.image.ucx else '?'} predates the GID priorities imgcheck simulates",
        )
        return
    prefer_global = _ucx_feature(ctx, "roce_gid_prefer_global")
    subnets = ctx.setting("UCX_IB_ROCE_SUBNETS")
    ports, unread = _roce_ports(ctx)
    stuck, newer_fixes = [], False
    for label, port in ports:
        choice, how = ucx_choice(port, prefer_global, subnets.value if subnets is not None else None)
        if choice is None:
            unread.append(f"{label}: {how}")
            continue
        # a RoCE v1-only port is a fabric choice (one L2 segment); a link-local or fallback choice is not
        if choice.fallback or (choice.kind == GID_LINK_LOCAL and choice.version == V2):
            stuck.append(f"{label}: {how}")
            if prefer_global is not True and choice.kind == GID_LINK_LOCAL and _has(port, _routable_v2):
                newer_fixes = True
    if stuck:
        version = ctx.image.ucx.version if ctx.image.ucx else None
        yield finding(
            ctx.matrix,
            AUTO_LINK_LOCAL,
            [Evidence("image.ucx.version", version), _table(ctx, ports)],
            variant="old-release" if newer_fixes else None,
            ucx=version or "(version unknown)",
            ports="; ".join(stuck),
        )
    elif unread:
        yield unknown(AUTO_LINK_LOCAL, "which GID entry UCX picks: " + "; ".join(unread))


RULES, NEEDS, REQUIRES, READS, check = family(no_gid, roce_v1, link_local, auto_not_routable)
