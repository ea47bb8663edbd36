"""NCCL wheels that do not match what torch was built against (the copy torch loads is the one in nvidia/nccl/lib).

torch's Requires-Dist pins one nvidia-nccl-cuXX release; torch's libraries bind NCCL symbols of that release through
their RPATH ($ORIGIN/../../nvidia/nccl/lib). Every nvidia-nccl-cuXX wheel installs the same file there
(nvidia/nccl/lib/libnccl.so.2), so a second wheel, or a wheel pip was told to keep at another version, decides which
libnccl torch gets.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from packaging.version import InvalidVersion, Version

from .. import driver_dirs
from ..knowledge import nccl as nccl_k
from ..model.image import Nccl
from ..model.report import Evidence
from ..versions import ranges
from ..versions.ecosystems import numeric_tuple
from . import facts
from .context import Ctx
from .emit import Outcome, decided, finding, unknown

OLDER_LOADED = "NCCL-OLDER-COPY-LOADED"
RULES = ("NCCL-WHEEL-NOT-TORCH-PIN", "NCCL-WHEELS-TWO-CUDA-MAJORS", OLDER_LOADED)
# The facts each rule needs present (absent: the rule does not apply) and the further facts it reads;
# silence with one of them unknown is reported as unknown (engine/contract.py).
REQUIRES = {
    "NCCL-WHEEL-NOT-TORCH-PIN": (facts.NCCL,),
    "NCCL-WHEELS-TWO-CUDA-MAJORS": (facts.NCCL,),
    OLDER_LOADED: (facts.NCCL,),
}
READS = {
    "NCCL-WHEEL-NOT-TORCH-PIN": (facts.NCCL,),
    "NCCL-WHEELS-TWO-CUDA-MAJORS": (facts.NCCL,),
    OLDER_LOADED: (facts.NCCL, facts.setting("LD_LIBRARY_PATH"), facts.setting("LD_PRELOAD")),
}


def _ev(n: Nccl, fact: str) -> Evidence:
    return Evidence(fact, f"{n.origin} {n.version}", n.location)


def check(ctx: Ctx) -> Iterator[Outcome]:
    yield from _older_loaded(ctx)
    wheels = [n for n in ctx.image.nccl if n.origin == "pip" and n.version]
    if not wheels:
        return
    yield from _two_majors(ctx, wheels)
    yield from _pin(ctx, wheels)


def _two_majors(ctx: Ctx, wheels: list[Nccl]) -> Iterator[Outcome]:
    majors: dict[int, Nccl] = {}
    for n in wheels:
        major = nccl_k.wheel_cuda_major(n)
        if major is not None:
            majors.setdefault(major, n)
    if len(majors) < 2:
        return
    names = ", ".join(f"nvidia-nccl-cu{m} {n.version}" for m, n in sorted(majors.items()))
    yield finding(
        ctx.matrix,
        "NCCL-WHEELS-TWO-CUDA-MAJORS",
        [_ev(n, "image.nccl.wheel") for n in majors.values()],
        wheels=names,
        keep=f"nvidia-nccl-cu{max(majors)}",
    )


def _pep440(text: str | None) -> Version | None:
    if text is None:  # the callers keep only set versions; None would not parse either
        return None
    try:
        return Version(text)
    except InvalidVersion:
        return None


def _pin(ctx: Ctx, wheels: list[Nccl]) -> Iterator[Outcome]:
    pins = [n for n in ctx.image.nccl if n.origin == "torch-requirement" and n.version]
    for pin in pins:
        pin_major = nccl_k.wheel_cuda_major(pin)
        same = [w for w in wheels if pin_major is None or nccl_k.wheel_cuda_major(w) in (None, pin_major)]
        wanted = _pep440(pin.version)
        # wheel and pin are Python distributions: PEP 440 decides what is equal and what is newer
        versions = [(w, _pep440(w.version)) for w in same]
        if (
            wanted is None
            or not versions
            or any(v == wanted for _, v in versions)
            or any(v is None for _, v in versions)
        ):
            continue  # the pinned release is installed, nothing comparable is, or a version does not parse
        wheel, have = versions[0]
        assert have is not None  # unparsed versions were skipped above
        newer = have > wanted
        major = pin_major if pin_major is not None else nccl_k.wheel_cuda_major(wheel)
        yield finding(
            ctx.matrix,
            "NCCL-WHEEL-NOT-TORCH-PIN",
            [_ev(pin, "image.nccl.torch_pin"), _ev(wheel, "image.nccl.wheel")],
            variant="newer" if newer else None,
            pinned=pin.version,
            installed=wheel.version,
            wheel=f"nvidia-nccl-cu{major}" if major is not None else "the nvidia-nccl wheel",
        )


def _native_copies(ctx: Ctx) -> list[Nccl]:
    """The libnccl files a program linked against libnccl.so.2 may get through the loader's search path: not a
    wheel's (torch reaches those through its RPATH) and not a conda environment's (its packages reach it through
    their RUNPATH), and not conda's package cache."""
    prefixes = tuple(
        p.path.rpartition("/conda-meta/")[0] + "/" for p in ctx.image.packages if p.db == "conda" and p.path
    )
    return [
        n
        for n in ctx.image.nccl
        if n.origin == "library"
        and n.version
        and n.path
        and "/pkgs/" not in n.path
        and not (prefixes and n.path.startswith(prefixes))
    ]


def _loader_choice(ctx: Ctx, copies: list[Nccl]) -> tuple[Nccl | None, str]:
    """The copy the dynamic loader gives a program without RPATH, and how: a libnccl LD_PRELOAD names, else the
    extractor's choice (it walked the image's LD_LIBRARY_PATH, ld.so.cache and default directories), else, for facts
    stated without it, the LD_LIBRARY_PATH entry or system library directory holding a copy (ld.so(8) order)."""
    preload = ctx.setting("LD_PRELOAD")
    for path in re.split(r"[\s:]+", preload.value if preload else ""):
        if posixpath.basename(path).startswith("libnccl.so"):
            # an object LD_PRELOAD names is loaded before any search and satisfies every later libnccl.so.2 need
            # (ld.so(8)); a link named there (libnccl.so.2) resolves to the copy in its directory
            named = [n for n in copies if posixpath.dirname(n.path or "") == posixpath.dirname(path)]
            if named:
                return named[0], f"LD_PRELOAD {path}"
    chosen = next((n for n in copies if n.loaded), None)
    if chosen is not None:
        return chosen, chosen.how or "the loader's choice"
    if any(n.loaded is False for n in copies):
        return None, "no copy is on the loader's search path"
    setting = ctx.setting("LD_LIBRARY_PATH")
    by_dir = {posixpath.dirname(n.path or ""): n for n in copies}
    for entry in (setting.value if setting else "").split(":"):
        if entry.startswith("/") and posixpath.normpath(entry) in by_dir:
            return by_dir[posixpath.normpath(entry)], f"LD_LIBRARY_PATH {entry}"
    system = [d for d in driver_dirs.SYSTEM_LIBRARY_DIRS if d in by_dir]
    if len(system) == 1:
        return by_dir[system[0]], f"the system library directory {system[0]} (ld.so.cache)"
    if system:
        # their order in ld.so.cache is the image's ld.so.conf(.d) order (Debian's libc.conf puts /usr/local/lib
        # first; RHEL's names no /usr/local/lib), which stated facts do not carry
        return None, f"which copy the loader picks is not in the facts ({', '.join(system)} rank by ld.so.conf)"
    return None, "which copy the loader picks is not in the facts (no copy is in a system library directory)"


def _added_after(ctx: Ctx, older: str, newer: str) -> list[str]:
    """The functions NCCL's header declares from a release after `older` up to `newer`'s minor (a build from a
    release branch has its minor's API before the tag)."""
    top = ".".join(newer.split(".")[:2]) + ".999"
    return [
        str(r["symbol"])
        for r in ctx.matrix.rows("nccl_api_symbols")
        if ranges.at_least(str(r["first"]), older)
        and not ranges.at_least(older, str(r["first"]))
        and ranges.at_least(top, str(r["first"]))
    ]


def _older_loaded(ctx: Ctx) -> Iterator[Outcome]:
    copies = _native_copies(ctx)
    versions = {n.version for n in copies}
    if len(versions) < 2:
        return  # one release (or none) on the search path: nothing to choose between
    chosen, how = _loader_choice(ctx, copies)
    if chosen is None:
        if "not in the facts" in how:
            yield unknown(
                OLDER_LOADED,
                f"libnccl {', '.join(sorted(str(v) for v in versions))} are in the image; {how}",
                ("image.nccl.loaded",),
            )
        else:
            yield decided(OLDER_LOADED, f"{how}: programs find their libnccl through their own RPATH")
        return
    assert chosen.version is not None  # _native_copies keeps versioned copies only
    newer = [
        n for n in copies if n.version and ranges.at_least(n.version, chosen.version) and n.version != chosen.version
    ]
    if not newer:
        yield decided(OLDER_LOADED, f"the loader's libnccl {chosen.version} is the newest copy in the image")
        return
    top = max(newer, key=lambda n: numeric_tuple(n.version or ""))
    assert top.version is not None
    symbols = _added_after(ctx, chosen.version, top.version)
    yield finding(
        ctx.matrix,
        OLDER_LOADED,
        [
            Evidence("image.nccl.loaded", f"{chosen.version} ({how})", chosen.location),
            Evidence("image.nccl.library", top.version, top.location),
        ],
        variant=None if symbols else "same_api",
        loaded=chosen.version,
        loaded_path=chosen.path,
        how=how,
        newer=top.version,
        newer_path=top.path,
        newer_dir=posixpath.dirname(top.path or ""),
        symbols=", ".join(symbols),
    )
