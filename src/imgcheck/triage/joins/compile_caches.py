"""Compile-cache collisions and stalled init vs where the image puts Inductor's and Triton's caches."""

from __future__ import annotations

from collections.abc import Iterator

from ...model.report import Evidence
from ..result import JoinNote
from .context import EXPLAINS, UNKNOWN, JoinContext

SIGNATURES: tuple[str, ...] = ("COMPILE-CACHE-SHARED", "NCCL-INIT-STALL")
CACHE_VARS = ("TMPDIR", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "HOME")


def join(ctx: JoinContext) -> Iterator[JoinNote]:
    image = ctx.image
    if image is None:
        return
    ev = [Evidence(f"image.env.{n}", image.env.get(n)) for n in CACHE_VARS]
    unset = [n for n in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR") if not image.env.get(n)]
    if unset:
        yield ctx.note(
            "compile-caches",
            EXPLAINS,
            "compile-caches.unset",
            ev,
            unset=" or ".join(unset),
            tmpdir=image.env.get("TMPDIR", "unset"),
            home=image.env.get("HOME", "unset"),
        )
    else:
        yield ctx.note(
            "compile-caches",
            UNKNOWN,
            "compile-caches.pinned",
            ev,
            inductor=image.env["TORCHINDUCTOR_CACHE_DIR"],
            triton=image.env["TRITON_CACHE_DIR"],
        )
