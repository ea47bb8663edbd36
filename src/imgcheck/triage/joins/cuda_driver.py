"""`CUDA driver version is insufficient` vs the node's driver and the image's CUDA."""

from __future__ import annotations

from collections.abc import Iterator

from ...model.report import Evidence, node_evidence
from ..predicates import driver_below_image_cuda
from ..result import JoinNote
from .context import CONTRADICTS, EXPLAINS, UNKNOWN, JoinContext

SIGNATURES: tuple[str, ...] = ("CUDA-DRIVER-INSUFFICIENT",)


def join(ctx: JoinContext) -> Iterator[JoinNote]:
    image, node = ctx.image, ctx.node
    v, why = driver_below_image_cuda(ctx.facts)
    ev = [
        Evidence("image.cuda.version", image.cuda.version if image and image.cuda else None),
        Evidence("image.cuda.compat_driver", image.cuda.compat_driver if image and image.cuda else None),
        node_evidence(node, "gpu.driver_version", node.gpu.driver_version if node else None),
    ]
    if v is None:
        yield JoinNote("cuda-driver", UNKNOWN, why, tuple(ev))
    elif v:
        yield ctx.note("cuda-driver", EXPLAINS, "cuda-driver.below", ev, why=why)
    else:
        yield ctx.note("cuda-driver", CONTRADICTS, "cuda-driver.enough", ev, why=why)
