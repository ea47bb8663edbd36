"""AWS EFA nodes: NCCL reaches EFA only through a network plugin (aws-ofi-nccl) over libfabric's efa provider, so
the image must carry the plugin, a libfabric the plugin accepts, and no libfabric with a known NCCL failure."""

from __future__ import annotations

from collections.abc import Iterator

from ..knowledge import providers
from ..model.image import NcclNetPlugin
from ..model.location import Location
from ..model.report import Evidence, EvidenceValue, Finding
from ..versions import ranges
from ..versions.ecosystems import numeric_tuple
from . import facts
from .context import Ctx
from .emit import Outcome, finding, unknown

RULES = ("EFA-NO-OFI-PLUGIN", "OFI-PLUGIN-LIBFABRIC-TOO-OLD", "EFA-LIBFABRIC-CUDA-SYNC-MEMOPS")
NEEDS = {"efa_known_issues": {"efa_cuda_sync_memops"}}

EFA_PREFIX = "/opt/amazon/efa/"  # where the EFA installer puts its libfabric (efa_installer.sh LIBFABRIC_INSTALL_PATH)


def _image_ev(fact: str, value: EvidenceValue, path: str | None = None, layer: str | None = None) -> Evidence:
    return Evidence(f"image.{fact}", value, Location.file(path, layer))


def _efa_devices(ctx: Ctx) -> list[str]:
    return [d.name or "efa" for d in ctx.node.rdma.devices if providers.provider_of(d) == "efa" or d.driver == "efa"]


def check(ctx: Ctx) -> Iterator[Outcome]:
    devices = _efa_devices(ctx)
    if not devices or ctx.nccl_present is not True:
        return
    # NCCL reaches EFA only through a net plugin in every release: the plugin rules need its presence, not its
    # version; the sync-memops issue is a version range (asked by the engine when the version is unknown)
    nccl = ctx.nccl.version if ctx.nccl is not None else None
    device_ev = ctx.node_ev("rdma.devices.driver", f"efa ({', '.join(devices)})")
    plugins_unknown = ctx.image_unknown("nccl_net_plugins")
    loaded = next((p for p in ctx.image.nccl_net_plugins if p.loaded), None)
    undecided = [p for p in ctx.image.nccl_net_plugins if p.loaded is None]
    if plugins_unknown is None and loaded is None and undecided:
        # a plugin file whose loading was not decided (a facts file without `loaded`, no libnccl to resolve it
        # against) may well be the one NCCL opens: ask, never report it missing
        yield unknown(
            "EFA-NO-OFI-PLUGIN",
            f"whether NCCL loads the net plugin {undecided[0].path} is not known "
            "(NCCL opens libnccl-net.so, or the file NCCL_NET_PLUGIN names, through the dynamic loader)",
        )
        return
    if plugins_unknown is None and loaded is None:
        yield _no_plugin(ctx, nccl, device_ev)
        return
    if loaded is not None:
        yield from _libfabric_too_old(ctx, loaded, device_ev)
    if nccl is not None:
        yield from _sync_memops(ctx, nccl, device_ev)


def _no_plugin(ctx: Ctx, nccl: str | None, device_ev: Evidence) -> Finding:
    files = ", ".join(p.path for p in ctx.image.nccl_net_plugins)
    value = f"none that NCCL loads ({files}: {ctx.image.nccl_net_plugins[0].how})" if files else "none"
    evidence = ctx.nccl_evidence() + [device_ev, _image_ev("nccl_net_plugins", value)]
    return finding(ctx.matrix, "EFA-NO-OFI-PLUGIN", evidence, nccl=nccl)


def _libfabric_too_old(ctx: Ctx, plugin: NcclNetPlugin, device_ev: Evidence) -> Iterator[Outcome]:
    rule = "OFI-PLUGIN-LIBFABRIC-TOO-OLD"
    fabric = ctx.image.libfabric
    if fabric is None:
        why = ctx.image_unknown("libfabric")
        if why:
            yield unknown(rule, f"the net plugin {plugin.path} needs libfabric; whether the image has one: {why}")
        # absent: the plugin cannot load at all, which NCCL-NET-PLUGIN-DEPENDENCY-MISSING reports
        return
    plugin_ev = _image_ev(
        "nccl_net_plugins", f"{plugin.project or plugin.name} {plugin.version or ''}".strip(), plugin.path, plugin.layer
    )
    missing = sorted(set(plugin.needs_libfabric) - set(fabric.symbol_versions))
    if plugin.needs_libfabric and fabric.symbol_versions and missing:
        evidence = [
            device_ev,
            plugin_ev,
            _image_ev("nccl_net_plugins.needs_libfabric", ", ".join(plugin.needs_libfabric), plugin.path),
            _image_ev("libfabric.symbol_versions", ", ".join(fabric.symbol_versions), fabric.path, fabric.layer),
        ]
        yield finding(
            ctx.matrix,
            rule,
            evidence,
            plugin=plugin.path,
            libfabric=fabric.path,
            missing=", ".join(missing),
            version=missing[-1],
        )
        return
    if plugin.project != "aws-ofi-nccl" or not plugin.version:
        return
    row = next(
        (
            r
            for r in ctx.matrix.rows("ofi_nccl_releases")
            if ranges.within(plugin.version, r["plugin_min"], r["plugin_below"])
        ),
        None,
    )
    if row is None:
        first = min((r["plugin_min"] for r in ctx.matrix.rows("ofi_nccl_releases")), key=numeric_tuple)
        if ranges.at_least(plugin.version, first) is False:
            return  # releases before the first row check no libfabric floor at run time (the row's note)
        yield unknown(rule, f"aws-ofi-nccl {plugin.version} cannot be placed among the ofi_nccl_releases rows")
        return
    ok = ranges.at_least(fabric.version, row["efa_libfabric_min"])
    if ok is None:
        yield unknown(
            rule,
            f"aws-ofi-nccl {plugin.version} needs libfabric >= {row['efa_libfabric_min']} for EFA; "
            f"the image's libfabric ({fabric.path}) release is {fabric.version or 'unknown'}",
        )
    elif not ok:
        evidence = [device_ev, plugin_ev, _image_ev("libfabric.version", fabric.version, fabric.path, fabric.layer)]
        yield finding(
            ctx.matrix,
            rule,
            evidence,
            variant="floor",
            plugin=f"aws-ofi-nccl {plugin.version}",
            libfabric=fabric.version,
            libfabric_min=row["efa_libfabric_min"],
        )


def _sync_memops(ctx: Ctx, nccl: str | None, device_ev: Evidence) -> Iterator[Outcome]:
    rule = "EFA-LIBFABRIC-CUDA-SYNC-MEMOPS"
    row = ctx.matrix.need("efa_known_issues", issue="efa_cuda_sync_memops")  # in NEEDS: validated at load
    installer = ctx.image.efa_installer
    fabric = ctx.image.libfabric
    if fabric is not None and not fabric.path.startswith(EFA_PREFIX):
        return  # NCCL's plugin loads another libfabric than the installer's
    affected_nccl = ranges.at_least(nccl, row["nccl_min"])
    if affected_nccl is False:
        return
    if installer is None or not installer.version:
        if ctx.image_unknown("efa_installer") is not None and affected_nccl:
            yield unknown(
                rule,
                f"NCCL {nccl} fails to register CUDA memory with the libfabric of EFA "
                f"installers before {row['efa_installer_below']}; the image's EFA installer is unknown",
            )
        return
    old = ranges.below(installer.version, row["efa_installer_below"])
    unsure = ranges.below(installer.version, row["efa_installer_unsure_below"] or row["efa_installer_below"])
    if old is False and unsure is False:
        return
    setting = ctx.setting(row["workaround_setting"])
    if setting is not None and setting.value.strip() == row["workaround_value"]:
        return  # the image (or the launch) already avoids it
    if affected_nccl is None or old is None or not old:
        yield unknown(
            rule,
            f"EFA installer {installer.version} with NCCL {nccl}: sources differ on "
            f"whether installers before {row['efa_installer_unsure_below']} carry the fix",
        )
        return
    evidence = ctx.nccl_evidence() + [
        device_ev,
        _image_ev("efa_installer.version", installer.version, installer.path, installer.layer),
    ]
    yield finding(
        ctx.matrix,
        rule,
        evidence,
        nccl=nccl,
        installer=installer.version,
        installer_fixed=row["efa_installer_below"],
        setting=row["workaround_setting"],
        value=row["workaround_value"],
    )


# The facts each rule needs present (absent: the rule does not apply) and the further facts it reads;
# silence with one of them unknown is reported as unknown (engine/contract.py).
REQUIRES = {
    "EFA-NO-OFI-PLUGIN": (facts.NCCL, facts.NODE_RDMA),
    "OFI-PLUGIN-LIBFABRIC-TOO-OLD": (facts.NCCL, facts.NODE_RDMA, facts.PLUGINS),
    "EFA-LIBFABRIC-CUDA-SYNC-MEMOPS": (facts.NCCL, facts.NODE_RDMA),
}
READS = {
    "EFA-NO-OFI-PLUGIN": (facts.NCCL, facts.NODE_RDMA, facts.PLUGINS),
    "OFI-PLUGIN-LIBFABRIC-TOO-OLD": (facts.NCCL, facts.NODE_RDMA, facts.PLUGINS),
    "EFA-LIBFABRIC-CUDA-SYNC-MEMOPS": (facts.NCCL, facts.NODE_RDMA),
}
