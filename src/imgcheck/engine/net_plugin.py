"""NCCL's network plugin as a shared object: NCCL dlopen()s it (RTLD_NOW), so every DT_NEEDED library of the
plugin must resolve in the image, or the dlopen fails and NCCL goes on with its internal IB/Socket transports
(NVIDIA/nccl src/plugin/plugin_open.cc, net.cc), or fails its init when NCCL_NET names the plugin's network. Once
opened, NCCL looks up the plugin's ncclNet_t by versioned symbol names (ncclNetPlugin_v12, v11, ...): a plugin
exporting none of the versions the release looks up is closed the same way (catalogs/nccl_plugin_api.json,
net_plugin_exports.json)."""

from __future__ import annotations

from collections.abc import Iterator

from ..model.image import NcclNetPlugin
from ..model.report import Evidence
from ..versions import ranges
from ..versions.ecosystems import numeric_tuple
from . import facts
from .context import Ctx
from .emit import Outcome, finding, unknown

RULES = ("NCCL-NET-PLUGIN-DEPENDENCY-MISSING", "NCCL-NET-PLUGIN-API-MISMATCH")
# The facts each rule needs present (absent: the rule does not apply) and the further facts it reads;
# silence with one of them unknown is reported as unknown (engine/contract.py).
REQUIRES = {
    "NCCL-NET-PLUGIN-DEPENDENCY-MISSING": (facts.NCCL, facts.PLUGINS),
    "NCCL-NET-PLUGIN-API-MISMATCH": (facts.NCCL, facts.PLUGINS),
}
READS = {
    "NCCL-NET-PLUGIN-DEPENDENCY-MISSING": (facts.NCCL, facts.PLUGINS),
    "NCCL-NET-PLUGIN-API-MISMATCH": (facts.NCCL, facts.PLUGINS),
}
NEEDS: dict[str, set[str]] = {}

RULE, API_RULE = RULES
INTERNAL_NETS = ("ib", "socket")  # the names of NCCL's own ncclNet_t (src/transport/net_ib.cc, net_socket.cc)


def check(ctx: Ctx) -> Iterator[Outcome]:
    if ctx.nccl_present is not True:
        return  # no NCCL; unknown: the engine asks (any NCCL dlopens the plugin the same way)
    plugin = next((p for p in ctx.image.nccl_net_plugins if p.loaded), None)
    if plugin is None:
        return  # no plugin NCCL opens (EFA-NO-OFI-PLUGIN speaks for EFA nodes), or the plugins are unknown
    net = ctx.setting("NCCL_NET")
    if net is not None and net.value.strip().lower() in INTERNAL_NETS:
        return  # NCCL_NET picks an internal transport: the plugin failing to load changes nothing
    yield from _dependencies(ctx, plugin)
    yield from _api_versions(ctx, plugin)


def _dependencies(ctx: Ctx, plugin: NcclNetPlugin) -> Iterator[Outcome]:
    if plugin.needed is None:
        yield unknown(RULE, f"the DT_NEEDED libraries of {plugin.path} were not read (its ELF was not kept)")
        return
    missing = [n for n in plugin.needed if n.found is False]
    if not missing:
        undecided = [n for n in plugin.needed if n.found is None]
        if undecided:
            yield unknown(RULE, "; ".join(f"{n.name}: {n.how}" for n in undecided))
        return
    yield _missing(ctx, plugin, [n.name for n in missing])


def _api_versions(ctx: Ctx, plugin: NcclNetPlugin) -> Iterator[Outcome]:
    """The ncclNetPlugin_vN versions the image's NCCL looks up against those the plugin's release exports."""
    nccl = ctx.nccl
    if nccl is None or not nccl.version:
        return  # the NCCL version is unknown: the engine asks for it (READS)
    rows = sorted(ctx.matrix.rows("nccl_plugin_api"), key=lambda r: numeric_tuple(r["nccl"]))
    if ranges.at_least(nccl.version, rows[-1]["nccl"]) and nccl.version != rows[-1]["nccl"]:
        yield unknown(API_RULE, f"NCCL {nccl.version} is newer than the releases read (through {rows[-1]['nccl']})")
        return
    placed = [r for r in rows if ranges.at_least(nccl.version, r["nccl"])]
    if not placed:
        return  # older than any release read: before network plugins existed
    looks_up = placed[-1]["net"]
    if not looks_up:
        return  # this release opens no network plugin
    if plugin.project is None or not plugin.version:
        yield unknown(API_RULE, f"which release {plugin.path} is (and so which ncclNetPlugin_vN it exports) is unknown")
        return
    exports = [r for r in ctx.matrix.rows("net_plugin_exports") if r["project"] == plugin.project]
    if not exports:
        yield unknown(API_RULE, f"the ncclNetPlugin_vN versions {plugin.project} exports are not enumerated")
        return
    release = numeric_tuple(plugin.version)[:3]
    row = next((r for r in exports if numeric_tuple(r["version"])[:3] == release), None)
    if row is None or row["net"] is None:
        why = row["note"] if row is not None else "the release is not among the tags read"
        yield unknown(API_RULE, f"{plugin.project} {plugin.version}: {why}")
        return
    if set(row["net"]) & set(looks_up):
        return
    too_old = max(row["net"]) < min(looks_up)
    setting = ctx.setting("NCCL_NET")
    evidence = ctx.nccl_evidence() + [
        Evidence(
            "image.nccl_net_plugins.version",
            f"{plugin.project} {plugin.version} at {plugin.path} ({plugin.how or 'the plugin NCCL opens'})",
            plugin.location,
        )
    ]
    if setting is not None:
        evidence.append(setting.evidence)
    yield finding(
        ctx.matrix,
        API_RULE,
        evidence,
        variant="forced" if setting is not None else None,
        plugin=plugin.path,
        project=plugin.project,
        plugin_version=plugin.version,
        exports=", ".join(f"v{v}" for v in row["net"]),
        nccl=nccl.version,
        looks_up=", ".join(f"v{v}" for v in looks_up),
        which="older" if too_old else "newer",
        upgrade=(
            f"a {plugin.project} release that exports one of {', '.join(f'v{v}' for v in looks_up)}"
            if too_old
            else f"an NCCL release that looks up v{min(row['net'])} or newer, or an older {plugin.project}"
        ),
        fallback=_fallback(ctx),
        net=setting.value if setting is not None else "",
    )


def _fallback(ctx: Ctx) -> str:
    efa = [d for d in ctx.node.rdma.devices if d.driver == "efa"]
    return (
        "TCP sockets: the node's EFA devices are reachable only through the plugin"
        if efa
        else "its internal transports (IB verbs where the node has RDMA devices, else TCP sockets)"
    )


def _missing(ctx: Ctx, plugin: NcclNetPlugin, missing: list[str]) -> Outcome:
    where = plugin.location
    evidence = ctx.nccl_evidence() + [
        Evidence("image.nccl_net_plugins.loaded", f"{plugin.path} ({plugin.how})", where),
        Evidence(
            "image.nccl_net_plugins.needed",
            "; ".join(f"{n.name}: {n.how}" for n in (plugin.needed or ()) if n.found is False),
            where,
        ),
    ]
    if plugin.runpath or plugin.rpath:
        evidence.append(Evidence("image.nccl_net_plugins.runpath", ":".join(plugin.runpath or plugin.rpath), where))
    setting = ctx.setting("NCCL_NET")
    if setting is not None:
        evidence.append(setting.evidence)
    efa = [d.name or "efa" for d in ctx.node.rdma.devices if d.driver == "efa"]
    if efa:
        evidence.append(ctx.node_ev("rdma.devices.driver", f"efa ({', '.join(efa)})"))
    fallback = (
        "TCP sockets: the node's EFA devices are reachable only through the plugin"
        if efa
        else "its internal transports (IB verbs where the node has RDMA devices, else TCP sockets)"
    )
    return finding(
        ctx.matrix,
        RULE,
        evidence,
        variant="forced" if setting is not None else None,
        plugin=plugin.path,
        name=plugin.name,
        missing=", ".join(missing),
        first=missing[0],
        fallback=fallback,
        net=setting.value if setting is not None else "",
    )
