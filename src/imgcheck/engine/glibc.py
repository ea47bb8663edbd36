"""Libraries on the image's load path that need a newer glibc than the image has.

The dynamic loader checks every GLIBC_x.y a library's ELF needs (.gnu.version_r) against the versions the
image's glibc defines, and refuses the library when one is missing (glibc elf/dl-version.c:
"version `GLIBC_2.38' not found (required by ...)"). A libibverbs, provider, UCX module or NCCL net plugin
copied from a newer distribution, or reached through LD_LIBRARY_PATH, fails to load whatever the node has.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ..knowledge import nccl as nccl_k
from ..model.location import Location
from ..model.report import Evidence
from ..versions.ecosystems import numeric_tuple
from . import facts
from .context import Ctx
from .emit import Outcome, finding, unknown

RULES = ("GLIBC-TOO-OLD-FOR-LIBRARY",)
# What the rule reads (engine/contract.py): the image's glibc and the libraries whose GLIBC_x.y needs it compares.
REQUIRES: dict[str, tuple[facts.Fact, ...]] = {"GLIBC-TOO-OLD-FOR-LIBRARY": ()}
READS = {
    "GLIBC-TOO-OLD-FOR-LIBRARY": (facts.GLIBC, facts.LIBIBVERBS, facts.PROVIDERS, facts.UCX, facts.NCCL, facts.PLUGINS)
}


@dataclass(frozen=True)
class _Lib:
    what: str  # "libibverbs", "provider mlx5", "UCX module uct_ib", "NCCL net plugin libnccl-net.so"
    path: str
    needs: str
    location: Location | None


def _libraries(ctx: Ctx) -> list[_Lib]:
    """The libraries imgcheck resolves on the load path, with the newest GLIBC_x.y each needs."""
    image = ctx.image
    found: list[_Lib] = []
    lib = image.rdma.libibverbs
    if lib is not None and lib.needs_glibc and lib.path:
        found.append(_Lib("libibverbs", lib.path, lib.needs_glibc, lib.location))
    for p in image.rdma.providers:
        if p.loaded and p.needs_glibc:
            found.append(_Lib(f"provider {p.name}", p.library or p.path, p.needs_glibc, p.location))
    if image.ucx is not None:
        for m in image.ucx.modules:
            if m.needs_glibc:
                found.append(_Lib(f"UCX module {m.name}", m.path, m.needs_glibc, m.location))
    nccl = nccl_k.nccl_in_use(image)
    if nccl is not None and nccl.needs_glibc:
        found.append(
            _Lib(f"NCCL {nccl.version}", nccl.archs_from or nccl.path or "libnccl", nccl.needs_glibc, nccl.location)
        )
    for plugin in image.nccl_net_plugins:
        if plugin.loaded and plugin.needs_glibc:
            found.append(_Lib(f"NCCL net plugin {plugin.name}", plugin.path, plugin.needs_glibc, plugin.location))
    return found


def check(ctx: Ctx) -> Iterator[Outcome]:
    rule = "GLIBC-TOO-OLD-FOR-LIBRARY"
    libs = _libraries(ctx)
    if not libs:
        return  # nothing resolved that needs glibc: no library to refuse
    newest = max(libs, key=lambda l: numeric_tuple(l.needs))
    glibc = ctx.image.glibc
    if glibc is None or glibc.version is None:
        why = ctx.image_unknown("glibc") or (
            "no glibc was found in the image (musl, static or a compat layer?)"
            if glibc is None
            else "its release was not read"
        )
        yield unknown(rule, f"{newest.path} needs GLIBC_{newest.needs}; the image's glibc release is unknown: {why}")
        return
    have = numeric_tuple(glibc.version)
    failing = [l for l in libs if numeric_tuple(l.needs) > have and l.needs not in glibc.defines]
    if not failing:
        return
    if glibc.origin == "symbol versions":
        # a lower bound: a release can add no GLIBC_x.y of its own to libc.so.6 (bullseye's 2.31 defines up to 2.30)
        yield unknown(
            rule,
            f"{failing[0].path} needs GLIBC_{failing[0].needs}; the image's libc.so.6 defines up to "
            f"GLIBC_{glibc.version}, but no package names glibc's release (image.glibc.version is a lower bound)",
        )
        return
    failing.sort(key=lambda l: numeric_tuple(l.needs), reverse=True)
    first = failing[0]
    evidence = [
        Evidence.member("image.glibc_needs", l.what, "needs_glibc", f"GLIBC_{l.needs}", l.location) for l in failing
    ]
    evidence.append(Evidence("image.glibc.version", glibc.version, glibc.location))
    yield finding(
        ctx.matrix,
        rule,
        evidence,
        library=first.path,
        what=first.what,
        needed=first.needs,
        glibc=glibc.version,
        glibc_origin=glibc.origin or "unknown",
        libc=glibc.library or "libc.so.6",
        others=", ".join(f"{l.path} (GLIBC_{l.needs})" for l in failing[1:]) or "none",
    )
