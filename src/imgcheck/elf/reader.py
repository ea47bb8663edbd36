"""Symbol-version facts from an ELF shared object held in memory (pyelftools; nothing executed)."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from itertools import islice
from typing import Any

# A version section's entry counts come from the file: 0xFFFFFFFF entries (or a vd_next of 0,
# which makes pyelftools yield the same entry again) must not loop for hours. Real libraries
# define tens of versions (glibc about 40) with one or two names each.
MAX_VERSIONS = 4096
MAX_VERSION_NAMES = 64


@dataclass(frozen=True)
class ElfInfo:
    soname: str | None
    defined_versions: tuple[str, ...]  # .gnu.version_d names, minus the file's own soname entry
    needed_versions: dict[str, tuple[str, ...]]  # library -> versions it needs (.gnu.version_r)
    needed_libraries: tuple[str, ...]
    machine: str | None
    rpath: tuple[str, ...] = ()  # DT_RPATH entries (searched before LD_LIBRARY_PATH when there is no DT_RUNPATH)
    runpath: tuple[str, ...] = ()  # DT_RUNPATH entries (searched after LD_LIBRARY_PATH)


class NotElf(Exception):
    """The bytes are not a readable ELF file."""


def read_elf(data: bytes) -> ElfInfo:
    if not data.startswith(b"\x7fELF"):
        raise NotElf("no ELF magic")
    # imported here: pyelftools costs a tenth of a second, and a cached re-check never reads an ELF
    from elftools.common.exceptions import ELFError
    from elftools.elf.dynamic import DynamicSection
    from elftools.elf.elffile import ELFFile
    from elftools.elf.gnuversions import GNUVerDefSection, GNUVerNeedSection

    try:
        elf = ELFFile(io.BytesIO(data))
        soname = None
        needed: list[str] = []
        defined: list[str] = []
        needed_versions: dict[str, tuple[str, ...]] = {}
        rpath: list[str] = []
        runpath: list[str] = []
        for section in elf.iter_sections():
            if isinstance(section, DynamicSection):
                for tag in section.iter_tags():
                    t: Any = tag  # pyelftools sets soname/needed/rpath/runpath on the tag at run time
                    if tag.entry.d_tag == "DT_SONAME":
                        soname = t.soname
                    elif tag.entry.d_tag == "DT_NEEDED":
                        needed.append(t.needed)
                    elif tag.entry.d_tag == "DT_RPATH":
                        rpath += [d for d in t.rpath.split(":") if d]
                    elif tag.entry.d_tag == "DT_RUNPATH":
                        runpath += [d for d in t.runpath.split(":") if d]
            elif isinstance(section, GNUVerDefSection):
                for verdef, auxiter in islice(section.iter_versions(), MAX_VERSIONS):
                    names = [aux.name for aux in islice(auxiter, MAX_VERSION_NAMES)]
                    # the VER_FLG_BASE entry names the file itself, not a symbol version
                    if names and not (verdef.entry.vd_flags & 0x1):
                        defined.append(names[0])
            elif isinstance(section, GNUVerNeedSection):
                for verneed, auxiter in islice(section.iter_versions(), MAX_VERSIONS):
                    needed_versions[str(verneed.name)] = tuple(aux.name for aux in islice(auxiter, MAX_VERSION_NAMES))
        return ElfInfo(
            soname=soname,
            defined_versions=tuple(defined),
            needed_versions=needed_versions,
            needed_libraries=tuple(needed),
            machine=elf.get_machine_arch(),
            rpath=tuple(rpath),
            runpath=tuple(runpath),
        )
    except (ELFError, ValueError, KeyError, IndexError, AssertionError, UnicodeDecodeError, OSError) as exc:
        raise NotElf(str(exc)) from None
    except Exception as exc:  # pyelftools raises assorted errors on hostile input
        raise NotElf(f"{exc.__class__.__name__}: {exc}") from None


# The libraries glibc itself provides: a GLIBC_x.y version needed from any of them is a need on the image's glibc
# (they are built and installed together). ld-linux-x86-64.so.2 / ld-linux-aarch64.so.1 are the loader.
_GLIBC_LIBRARY = re.compile(
    r"(?:libc|libm|libpthread|libdl|librt|libresolv|libutil|libanl|libnsl|libmvec)\.so\.\d+|ld-linux[-\w.]*\.so\.\d+"
)
_GLIBC_VERSION = re.compile(r"GLIBC_(\d+\.\d+(?:\.\d+)?)$")


def _numeric(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def glibc_need(info: ElfInfo) -> tuple[str, str] | None:
    """(x.y, library) of the newest GLIBC_x.y the file needs from glibc's libraries (.gnu.version_r), or None
    when it needs no versioned glibc symbol. GLIBC_PRIVATE is not a release and is left out."""
    return glibc_need_of(info.needed_versions)


def glibc_need_of(needed_versions: dict[str, tuple[str, ...]]) -> tuple[str, str] | None:
    """glibc_need over a {library: versions} map (from pyelftools or a streamed .gnu.version_r)."""
    best: tuple[str, str] | None = None
    for library, versions in needed_versions.items():
        if not _GLIBC_LIBRARY.fullmatch(library):
            continue
        for name in versions:
            match = _GLIBC_VERSION.match(name)
            if match and (best is None or _numeric(match.group(1)) > _numeric(best[0])):
                best = (match.group(1), library)
    return best


def glibc_version_needed(info: ElfInfo) -> str | None:
    """The x.y of glibc_need, or None."""
    need = glibc_need(info)
    return need[0] if need else None


def glibc_defined(info: ElfInfo) -> tuple[str, ...]:
    """The GLIBC_x.y versions a glibc library defines (its .gnu.version_d), oldest first, e.g. ("2.2.5", ..., "2.36")."""
    found = {m.group(1) for v in info.defined_versions if (m := _GLIBC_VERSION.match(v))}
    return tuple(sorted(found, key=_numeric))
