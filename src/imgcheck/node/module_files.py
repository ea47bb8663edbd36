"""How kernel modules on disk were built: read from the .ko file as ELF bytes, never loaded or run.

- `.modinfo`: NUL-separated `key=value` strings (`vermagic=`, `srcversion=`, `depends=`, `version=`)
  that modpost writes into every module (linux scripts/mod/modpost.c, include/linux/moduleparam.h).
- `__versions`: with CONFIG_MODVERSIONS, one `struct modversion_info {unsigned long crc; char
  name[64 - sizeof(unsigned long)];}` per imported symbol (include/linux/module.h). At load, the kernel
  compares each CRC with the one the exporting module carries and refuses the module on a mismatch:
  "<mod>: disagrees about version of symbol <sym>" (kernel/module/version.c check_version()).
- the exporter's CRCs: symbols `__crc_<sym>` in the exporting .ko (an absolute symbol in older kernels,
  a 32-bit value in `__kcrctab` in newer ones), or the `Module.symvers` an out-of-tree stack installs
  for other modules to build against (MLNX_OFED: /usr/src/ofa_kernel/<arch>/<release>/Module.symvers).
- DKMS builds: /var/lib/dkms/<module>/<version>/<release>/<arch>/module/*.ko (dkms's tree layout);
  `dkms install` copies them to /lib/modules/<release>/updates/dkms/.
"""

from __future__ import annotations

import io
import lzma
import struct
import zlib
from collections.abc import Collection
from typing import TYPE_CHECKING

from ..model.node import DkmsModule, KernelModule
from .hostroot import HostReadError, HostRoot
from .modules import module_name

if TYPE_CHECKING:
    from elftools.elf.elffile import ELFFile

# The peer-memory client API that nvidia-peermem / nv_peer_mem import from MLNX_OFED's ib_core.
PEER_SYMBOLS = ("ib_register_peer_memory_client", "ib_unregister_peer_memory_client")
PEER_MODULE_FILES = ("nvidia_peermem", "nv_peer_mem", "ib_core")
DKMS_ROOT = "/var/lib/dkms"
# where `dkms install` puts a build's modules: updates/dkms (Debian/Ubuntu, dkms's default), extra (RHEL/SUSE dkms
# packages set DEST_MODULE_LOCATION to /extra), weak-updates (RHEL kABI links)
DKMS_DEST_DIRS = ("updates/dkms", "extra", "updates", "weak-updates")
MAX_KO = 64 * 1024 * 1024


class ModuleFileError(Exception):
    pass


def _decompress(data: bytes, path: str) -> bytes:
    """The module's bytes; never more than MAX_KO of them (a hostile root may hold a decompression bomb)."""
    try:
        if path.endswith(".xz"):
            out = lzma.LZMADecompressor().decompress(data, max_length=MAX_KO + 1)
        elif path.endswith(".gz"):
            out = zlib.decompressobj(wbits=31).decompress(data, MAX_KO + 1)
        elif path.endswith(".zst"):
            import zstandard  # a dependency of the image readers already

            out = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)).read(MAX_KO + 1)
        else:
            return data
    except Exception as exc:  # lzma/zlib/zstandard each raise their own error types on corrupt input
        raise ModuleFileError(f"{path}: cannot decompress ({exc})") from None
    if len(out) > MAX_KO:
        raise ModuleFileError(f"{path}: decompresses to more than {MAX_KO} bytes")
    return out


def parse_ko(data: bytes, path: str, symbols: Collection[str] = PEER_SYMBOLS) -> KernelModule:
    """The build facts of one module file (bytes already decompressed)."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    try:
        elf = ELFFile(io.BytesIO(data))
        info = _modinfo(elf)
        crcs = _imported_crcs(elf, symbols)
        exported = _exported_crcs(elf, symbols)
    except (ELFError, struct.error, ValueError, KeyError, IndexError, AttributeError, TypeError) as exc:
        # pyelftools raises assorted errors on malformed headers; none of them may escape as a traceback
        raise ModuleFileError(f"{path}: not a readable kernel module ({type(exc).__name__}: {exc})") from None
    depends = info.get("depends")
    merged = {**exported, **crcs}  # a module both imports and exports distinct symbols
    return KernelModule(
        version=info.get("version"),
        path=path,
        file_vermagic=info.get("vermagic"),
        file_srcversion=info.get("srcversion"),
        file_depends=tuple(d for d in depends.split(",") if d) if depends is not None else None,
        symbol_crcs=merged or None,
    )


def _modinfo(elf: ELFFile) -> dict[str, str]:
    section = elf.get_section_by_name(".modinfo")
    if section is None:
        return {}
    values: dict[str, str] = {}
    for raw in section.data().split(b"\0"):
        key, sep, value = raw.decode("utf-8", "replace").partition("=")
        if sep and key not in values:
            values[key] = value
    return values


def _imported_crcs(elf: ELFFile, symbols: Collection[str]) -> dict[str, str]:
    section = elf.get_section_by_name("__versions")
    if section is None:
        return {}
    word = 8 if elf.elfclass == 64 else 4
    order = "<" if elf.little_endian else ">"
    data = section.data()
    crcs: dict[str, str] = {}
    for off in range(0, len(data) - 63, 64):
        (crc,) = struct.unpack_from(order + ("Q" if word == 8 else "I"), data, off)
        name = data[off + word : off + 64].split(b"\0", 1)[0].decode("ascii", "replace")
        if name in symbols:
            crcs[name] = f"0x{crc & 0xFFFFFFFF:08x}"
    return crcs


def _exported_crcs(elf: ELFFile, symbols: Collection[str]) -> dict[str, str]:
    from elftools.elf.sections import SymbolTableSection

    symtab = elf.get_section_by_name(".symtab")
    if symtab is None:
        return {}
    if not isinstance(symtab, SymbolTableSection):
        raise ValueError(".symtab is not a symbol table")  # parse_ko: not a readable kernel module
    order = "<" if elf.little_endian else ">"
    wanted = {f"__crc_{s}": s for s in symbols}
    crcs: dict[str, str] = {}
    for sym in symtab.iter_symbols():
        name = wanted.get(sym.name)
        if name is None:
            continue
        shndx = sym["st_shndx"]
        if shndx == "SHN_ABS":
            crcs[name] = f"0x{sym['st_value'] & 0xFFFFFFFF:08x}"
        elif isinstance(shndx, int):
            sec = elf.get_section(shndx)
            raw = sec.data()[sym["st_value"] : sym["st_value"] + 4] if sec.header["sh_type"] != "SHT_NOBITS" else b""
            if len(raw) == 4:
                crcs[name] = f"0x{struct.unpack(order + 'I', raw)[0]:08x}"
    return crcs


def read_module_file(host: HostRoot, path: str) -> KernelModule:
    data = host.read_bytes(path, MAX_KO)
    if data is None:
        raise ModuleFileError(f"{path} is absent")
    return parse_ko(_decompress(data, path), path)


def scan_module_files(host: HostRoot, paths: dict[str, str | None], unknown: dict[str, str]) -> dict[str, KernelModule]:
    """name -> build facts of the file modprobe would load, for the peer-memory modules and ib_core."""
    result: dict[str, KernelModule] = {}
    for name, path in paths.items():
        if not path or path == "(built-in)":
            continue
        try:
            result[name] = read_module_file(host, path)
        except (HostReadError, ModuleFileError) as exc:
            unknown[f"rdma.module_files.{name}"] = str(exc)
    return result


def parse_symvers(text: str, symbols: Collection[str] = PEER_SYMBOLS) -> dict[str, str]:
    """`0xCRC<TAB>symbol<TAB>module<TAB>EXPORT_SYMBOL[<TAB>namespace]` lines (scripts/mod/modpost.c)."""
    crcs: dict[str, str] = {}
    for line in text.splitlines():
        fields = line.split("\t")
        if len(fields) >= 2 and fields[1] in symbols:
            try:
                crcs[fields[1]] = f"0x{int(fields[0], 16) & 0xFFFFFFFF:08x}"
            except ValueError:
                continue
    return crcs


def symvers_candidates(release: str | None, arch: str | None) -> list[str]:
    paths = []
    if release:
        for machine in ([arch] if arch else []) + ["x86_64", "aarch64"]:
            paths.append(f"/usr/src/ofa_kernel/{machine}/{release}/Module.symvers")
        paths.append(f"/usr/src/ofa_kernel/{release}/Module.symvers")
    paths.append("/usr/src/ofa_kernel/default/Module.symvers")
    return list(dict.fromkeys(paths))


def read_ofed_symvers(
    host: HostRoot, release: str | None, arch: str | None
) -> tuple[dict[str, str] | None, str | None]:
    for path in symvers_candidates(release, arch):
        try:
            text = host.read_text(path, 64 * 1024 * 1024)
        except HostReadError:
            continue
        if text is not None:
            return parse_symvers(text), path
    return None, None


def scan_dkms(host: HostRoot, unknown: dict[str, str]) -> tuple[DkmsModule, ...] | None:
    if not host.is_dir(DKMS_ROOT):
        unknown["dkms"] = f"no {DKMS_ROOT} (DKMS not installed, or not visible under the probe root)"
        return None
    found = []
    try:
        for name in host.listdir(DKMS_ROOT):
            for version in host.listdir(f"{DKMS_ROOT}/{name}"):
                vdir = f"{DKMS_ROOT}/{name}/{version}"
                if version in ("source", "build") or version.startswith("kernel-") or not host.is_dir(vdir):
                    continue
                for kernel in host.listdir(vdir):
                    if kernel in ("source", "build") or not host.is_dir(f"{vdir}/{kernel}"):
                        continue
                    for arch in host.listdir(f"{vdir}/{kernel}"):
                        kos = [k for k in host.listdir(f"{vdir}/{kernel}/{arch}/module") if ".ko" in k]
                        if not kos:
                            continue
                        installed = all(
                            any(host.exists(f"/lib/modules/{kernel}/{d}/{k}") for d in DKMS_DEST_DIRS) for k in kos
                        )
                        names = tuple(sorted({module_name(k) or k for k in kos}))
                        found.append(
                            DkmsModule(
                                name=name, version=version, kernel=kernel, arch=arch, installed=installed, modules=names
                            )
                        )
    except HostReadError as exc:
        unknown["dkms"] = str(exc)
        return None
    return tuple(found)
