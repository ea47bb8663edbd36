"""ELF symbol-version needs between the image's RDMA consumers and the libraries they load.

A shared object records, per library it links, the version nodes it binds to (.gnu.version_r: libefa.so.1 EFA_1.2,
libibverbs.so.1 IBVERBS_1.13, libfabric.so.1 FABRIC_1.7); the library that the loader opens defines its nodes
(.gnu.version_d). A needed node the library lacks makes the loader refuse the consumer with "<library>: version `X'
not found (required by <consumer>)" (glibc elf/dl-version.c, match_symbol). GLIBC_x.y needs are engine/glibc.py's;
UCX modules against libibverbs/libmlx5 are engine/ucx.py's (UCX-IB-MODULE-VERSIONS). This family covers libfabric
against libefa and libibverbs, and NCCL net plugins against libfabric. A library the image does not ship (a node
mount) is asked about, never assumed.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from dataclasses import dataclass

from ..model.location import Location
from ..model.report import Evidence
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, finding, unknown

RULE = "ELF-VERSION-NOT-FOUND"


@dataclass(frozen=True)
class _Need:
    consumer: str  # what the user knows it as: "libfabric 1.17.0", "NCCL net plugin libnccl-net.so"
    consumer_path: str
    consumer_location: Location | None
    library: str  # the soname the consumer links: libefa.so.1
    needs: tuple[str, ...]
    defined: tuple[str, ...] | None  # the versions the image's copy defines; None: not known
    library_path: str | None  # the image's file, when it has one
    library_location: Location | None
    why_unknown: str | None = None


def _needs(ctx: Ctx) -> list[_Need]:
    image = ctx.image
    found: list[_Need] = []
    lf = image.libfabric
    if lf is not None:
        name = f"libfabric {lf.version or '(version unknown)'}"
        if lf.needs_efa:
            efa = [p for p in image.rdma.providers if p.name == "efa"]
            chosen = next((p for p in efa if p.loaded), efa[0] if efa else None)
            why: str | None
            if chosen is None:
                why = "the image ships no libefa.so.1 (a node mount, or the EFA installer's copy under /opt?)"
            else:
                why = None if chosen.symbol_versions else f"{chosen.library or chosen.path}'s EFA_x.y versions not read"
            found.append(
                _Need(
                    name,
                    lf.path,
                    lf.location,
                    "libefa.so.1",
                    lf.needs_efa,
                    chosen.symbol_versions if chosen is not None and chosen.symbol_versions else None,
                    (chosen.library or chosen.path) if chosen is not None else None,
                    chosen.location if chosen is not None else None,
                    why,
                )
            )
        lib = ctx.lib
        if lf.needs_ibverbs:
            defined = lib.symbol_versions if lib is not None and lib.symbol_versions else None
            why_verbs = (
                None if defined else (ctx.lib_unknown or "the image's libibverbs IBVERBS_x.y versions are not read")
            )
            path = lib.path if lib is not None else None
            found.append(
                _Need(
                    name,
                    lf.path,
                    lf.location,
                    "libibverbs.so.1",
                    lf.needs_ibverbs,
                    defined,
                    path,
                    lib.location if lib is not None else None,
                    why_verbs,
                )
            )
    for plugin in image.nccl_net_plugins:
        if plugin.loaded is False or not plugin.needs_libfabric:
            continue
        defined = lf.symbol_versions if lf is not None and lf.symbol_versions else None
        why_fabric = (
            None if defined else ("the image ships no libfabric.so.1" if lf is None else "its FABRIC_x.y not read")
        )
        found.append(
            _Need(
                f"NCCL net plugin {plugin.name}",
                plugin.path,
                plugin.location,
                "libfabric.so.1",
                plugin.needs_libfabric,
                defined,
                lf.path if lf is not None else None,
                lf.location if lf is not None else None,
                why_fabric,
            )
        )
    return found


def _opened(path: str | None, soname: str) -> str:
    """The loader names the library by the path it opened: the soname link beside the real file."""
    return posixpath.join(posixpath.dirname(path), soname) if path else soname


@rule(RULE, requires=(), reads=(facts.LIBIBVERBS, facts.PROVIDERS, facts.PLUGINS))
def version_needs(ctx: Ctx) -> Iterator[Outcome]:
    needs = _needs(ctx)
    for need in needs:
        if need.defined is None:
            continue
        missing = [v for v in need.needs if v not in need.defined]
        if not missing:
            continue
        missing.sort()
        library = _opened(need.library_path, need.library)
        evidence = [
            Evidence(f"image.elf_needs.{need.consumer_path}", ", ".join(need.needs), need.consumer_location),
            Evidence(f"image.elf_defines.{library}", ", ".join(need.defined), need.library_location),
        ]
        yield finding(
            ctx.matrix,
            RULE,
            evidence,
            consumer=need.consumer,
            consumer_path=need.consumer_path,
            library=library,
            version=missing[-1],
            missing=", ".join(missing),
            defined=", ".join(need.defined) or "none",
        )
        return
    pending = [n for n in needs if n.defined is None]
    if pending:
        n = pending[0]
        yield unknown(
            RULE,
            f"{n.consumer_path} needs {', '.join(n.needs)} from {n.library}; whether the {n.library} it loads "
            f"defines them is unknown: {n.why_unknown}",
        )


RULES, NEEDS, REQUIRES, READS, check = family(version_needs)
