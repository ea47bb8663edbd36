"""NCCL's network plugin as a shared object: NCCL dlopen()s it (RTLD_NOW), so every DT_NEEDED library of the
plugin must resolve in the image, or the dlopen fails and NCCL goes on with its internal IB/Socket transports
(NVIDIA/nccl src/plugin/plugin_open.cc, net.cc), or fails its init when NCCL_NET names the plugin's network."""

from __future__ import annotations

from collections.abc import Iterator

from ..model.image import NcclNetPlugin
from ..model.report import Evidence
from . import facts
from .context import Ctx
from .emit import Outcome, finding, unknown

RULES = ("NCCL-NET-PLUGIN-DEPENDENCY-MISSING",)
# The facts each rule needs present (absent: the rule does not apply) and the further facts it reads;
# silence with one of them unknown is reported as unknown (engine/contract.py).
REQUIRES = {
    "NCCL-NET-PLUGIN-DEPENDENCY-MISSING": (facts.NCCL, facts.PLUGINS),
}
READS = {
    "NCCL-NET-PLUGIN-DEPENDENCY-MISSING": (facts.NCCL, facts.PLUGINS),
}
NEEDS: dict[str, set[str]] = {}

RULE = RULES[0]
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
