"""libfabric/EFA lines vs the image's NCCL net plugin and libfabric (the facts the engine's EFA rules read:
EFA-NO-OFI-PLUGIN, OFI-PLUGIN-LIBFABRIC-TOO-OLD, EFA-LIBFABRIC-CUDA-SYNC-MEMOPS)."""

from __future__ import annotations

from collections.abc import Iterator

from ...model.report import Evidence
from ..result import JoinNote
from .context import CONSISTENT, EXPLAINS, UNKNOWN, JoinContext

SIGNATURES: tuple[str, ...] = (
    "EFA-PROVIDER-ERROR",
    "EFA-CREATE-AH",
    "EFA-NO-DEVICE",
    "AWS-OFI-ERROR",
    "LIBFABRIC-WARN",
)


def join(ctx: JoinContext) -> Iterator[JoinNote]:
    image = ctx.image
    if image is None:
        return
    plugin = next((p for p in image.nccl_net_plugins if p.loaded), None)
    fabric = image.libfabric
    ev = [
        Evidence(
            "image.nccl_net_plugins",
            f"{plugin.project or plugin.name} {plugin.version or ''}".strip() if plugin else None,
            plugin.location if plugin else None,
        ),
        Evidence("image.libfabric.version", fabric.version if fabric else None, fabric.location if fabric else None),
    ]
    if plugin is None and image.nccl_net_plugins:
        yield ctx.note("efa-stack", EXPLAINS, "efa-stack.plugin-not-loaded", ev, files=image.nccl_net_plugins[0].path)
    elif plugin is None:
        yield ctx.note("efa-stack", EXPLAINS, "efa-stack.no-plugin", ev)
    elif fabric is None:
        yield ctx.note("efa-stack", UNKNOWN, "efa-stack.no-libfabric", ev, plugin=plugin.project or plugin.name)
    else:
        yield ctx.note(
            "efa-stack",
            CONSISTENT,
            "efa-stack.present",
            ev,
            plugin=f"{plugin.project or plugin.name} {plugin.version or '(version unknown)'}",
            libfabric=fabric.version or "(version unknown)",
        )
