"""The image's own NVIDIA driver user space against what the GPU container runtime mounts from the host.

The NVIDIA container runtime gives a container the host driver's user space: libnvidia-container mounts each
library of the requested capabilities (catalog container_runtime_injects, from src/nvc_info.c) as the host's
`<name>.<driver version>` file and runs ldconfig in the container, which points the SONAME link (libcuda.so.1,
libnvidia-ml.so.1) at the newest file of that name in the directory. A driver package installed in the image
(catalog driver_userspace_packages) puts its own `<name>.<its version>` files there too. When the image's release is
newer than the host's, ldconfig picks the image's copy, which cannot talk to the host's older kernel module
(NVML: "Driver/library version mismatch"; CUDA: error 803). Only a CUDA forward-compatibility package (its libcuda in
/usr/local/cuda/compat, which rules in cuda_compat judge) is made to run on an older driver.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import cast

from ..knowledge.driver_userspace import driver_packages as _driver_packages
from ..knowledge.driver_userspace import driver_release
from ..model.report import Evidence
from ..versions.ecosystems import compare_numeric, numeric_tuple
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding, unknown

RULE = "IMAGE-DRIVER-USERSPACE"
PLUGIN_RULE = "PLUGIN-DLOPENS-UNVERSIONED-CUDA"
_RELEASE = re.compile(r"\d+\.\d+(?:\.\d+)?")


def _injected(ctx: Ctx, shipped: set[str]) -> list[str]:
    """The files the runtime mounts (legacy mode) that the image's packages ship too."""
    names = [str(r["name"]) for r in ctx.matrix.rows("container_runtime_injects") if r["mode"] == "legacy"]
    return [n for n in names if n in shipped]


@rule(
    RULE,
    requires=(facts.PACKAGES,),
    reads=(facts.GPU_DRIVER,),
    needs={"container_runtime_injects": {"legacy:libcuda.so", "legacy:libnvidia-ml.so"}},
)
def driver_userspace_in_image(ctx: Ctx) -> Iterator[Outcome]:
    found = _driver_packages(ctx.matrix, ctx.image)
    if not found and ctx.image.unknown_reason("packages"):
        return  # the package list was not read: the contract asks it (PACKAGES)
    if not found:
        yield decided(RULE, "no package of the image installs the NVIDIA driver's user space")
        return
    host = ctx.node.gpu.driver_version
    if not host:
        return  # the contract asks the node's driver (GPU_DRIVER)
    shipped = {str(name) for _, row in found for name in cast("list[str]", row["ships"])}  # a text_list column
    releases = sorted({r for p, _ in found if (r := driver_release(p.version))}, key=numeric_tuple)
    words = ", ".join(f"{p.name} {p.version}" for p, _ in found)
    evidence = [
        *(Evidence.member("image.packages", p.name, "version", p.version, p.location) for p, _ in found),
        ctx.node_ev("gpu.driver_version", host),
    ]
    params = {
        "packages": words,
        "host": host,
        "files": ", ".join(_injected(ctx, shipped)) or ", ".join(sorted(shipped)),
    }
    if not releases:
        yield finding(ctx.matrix, RULE, evidence, variant="release-unknown", image_release="unknown", **params)
        return
    newest = releases[-1]
    order = compare_numeric(newest, host)
    variant = None if order > 0 else ("same" if order == 0 else "older")
    yield finding(ctx.matrix, RULE, evidence, variant=variant, image_release=newest, **params)


def _release(version: str | None) -> str | None:
    m = _RELEASE.search(version or "")
    return m.group(0) if m else None


def _in_range(release: str, row: dict[str, object]) -> bool:
    first, last = _release(str(row["first"])), _release(str(row["last"]))
    return bool(first and last) and compare_numeric(release, first or "") >= 0 >= compare_numeric(release, last or "")


@rule(
    PLUGIN_RULE,
    requires=(facts.PLUGINS,),
    reads=(facts.PLUGINS,),
    needs={"container_runtime_injects": {"legacy:libcuda.so", "cdi:libcuda.so"}},
)
def plugin_unversioned_cuda(ctx: Ctx) -> Iterator[Outcome]:
    """aws-ofi-nccl releases that dlopen "libcuda.so" / "libcudart.so" (catalog plugin_cuda_dlopen, generated from
    every tag): the unversioned name is a development link the runtime's legacy mode never creates."""
    if ctx.image.unknown_reason("nccl_net_plugins"):
        return  # not read: the contract asks (PLUGINS)
    # a plugin whose project was not read may be aws-ofi-nccl: asked below, like an unknown release
    plugins = [
        p
        for p in ctx.image.nccl_net_plugins
        if (p.project or "").startswith("aws-ofi-nccl") or (p.project is None and "ofi" in p.name)
    ]
    unidentified = [p for p in ctx.image.nccl_net_plugins if p.project is None and p not in plugins]
    if not plugins and not unidentified:
        yield decided(PLUGIN_RULE, "the image has no aws-ofi-nccl plugin (the catalog covers that plugin only)")
        return
    rows = ctx.matrix.rows("plugin_cuda_dlopen")
    spans = ", ".join(f"{r['name']} in {r['first']}..{r['last']}" for r in rows)
    for plugin in unidentified:
        yield unknown(
            PLUGIN_RULE,
            f"which plugin {plugin.path} is (aws-ofi-nccl releases load CUDA by an unversioned name: {spans})",
            ("image.nccl_net_plugins.project",),
        )
    for plugin in plugins:
        release = _release(plugin.version)
        if release is None:
            yield unknown(
                PLUGIN_RULE,
                f"which aws-ofi-nccl release {plugin.path} is: some releases load CUDA by an unversioned name ({spans})",
                ("image.nccl_net_plugins.version",),
            )
            continue
        for row in (r for r in rows if _in_range(release, r)):
            evidence = [
                Evidence.member("image.nccl_net_plugins", plugin.name, "version", plugin.version, plugin.location)
            ]
            variant = "cudart" if row["name"] != "libcuda.so" else None
            if row["build_option"]:
                variant = "build-option"
            yield finding(
                ctx.matrix,
                PLUGIN_RULE,
                evidence,
                variant=variant,
                plugin=f"aws-ofi-nccl {plugin.version}",
                path=plugin.path,
                name=row["name"],
                site=row["site"],
                option=row["build_option"] or "",
            )


RULES, NEEDS, REQUIRES, READS, check = family(driver_userspace_in_image, plugin_unversioned_cuda)
