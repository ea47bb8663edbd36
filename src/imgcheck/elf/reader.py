"""Symbol-version facts from an ELF shared object held in memory (pyelftools; nothing executed)."""

from __future__ import annotations

import io
from dataclasses import dataclass
from itertools import islice

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
                    if tag.entry.d_tag == "DT_SONAME":
                        soname = tag.soname
                    elif tag.entry.d_tag == "DT_NEEDED":
                        needed.append(tag.needed)
                    elif tag.entry.d_tag == "DT_RPATH":
                        rpath += [d for d in tag.rpath.split(":") if d]
                    elif tag.entry.d_tag == "DT_RUNPATH":
                        runpath += [d for d in tag.runpath.split(":") if d]
            elif isinstance(section, GNUVerDefSection):
                for verdef, auxiter in islice(section.iter_versions(), MAX_VERSIONS):
                    names = [aux.name for aux in islice(auxiter, MAX_VERSION_NAMES)]
                    # the VER_FLG_BASE entry names the file itself, not a symbol version
                    if names and not (verdef.entry.vd_flags & 0x1):
                        defined.append(names[0])
            elif isinstance(section, GNUVerNeedSection):
                for verneed, auxiter in islice(section.iter_versions(), MAX_VERSIONS):
                    needed_versions[verneed.name] = tuple(aux.name for aux in islice(auxiter, MAX_VERSION_NAMES))
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
