"""Real ELF shared objects (gcc + objcopy) carrying a `.nv_fatbin` section, to test reading NCCL's architectures.

The section's content is CONSTRUCTED from the documented fat binary layout (no nvcc on the test machine), as
src/imgcheck/view/fatbin.py describes it with its sources: CUDA's fatbinary_section.h (FATBIN_MAGIC 0xBA55ED50,
fatBinaryHeader), n-eiling/cuda-fatbin-decompression fatbin-decompress.h (fat_elf_header, fat_text_header) and
GrigoryEvko/nvopen-tools fatbin/FORMAT_SPECIFICATION.md (entry kinds, next_entry = entry + size +
aligned_data_size). Payloads are filler bytes: the reader never looks inside them.
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import tempfile

import pytest

PTX, ELF = 1, 2


def entry(kind: int, arch: int, payload: bytes, header_size: int = 64) -> bytes:
    aligned = (len(payload) + 7) & ~7
    # kind, 0x0101, header size, aligned payload size, compressed size, minor, major, arch; rest of the header 0
    head = struct.pack("<HHIQQHHI", kind, 0x0101, header_size, aligned, len(payload), 0, 0, arch)
    return head + bytes(header_size - len(head)) + payload + bytes(aligned - len(payload))


def container(entries: list[tuple[int, int]], payload_size: int = 200) -> bytes:
    """One fat binary container holding an entry per (kind, arch)."""
    body = b"".join(entry(kind, arch, bytes([arch % 251]) * payload_size) for kind, arch in entries)
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


def build_lib(
    fatbin: bytes | None, pad_bytes: int = 0, soname: str = "libnccl.so.2", relfatbin: bytes | None = None
) -> bytes:
    """A gcc-built shared object; `fatbin` added as its .nv_fatbin section, `relfatbin` as __nv_relfatbin (the
    per-object fat binaries a relocatable-device-code build keeps), `pad_bytes` of filler (a .pad section) so the
    file is larger than a content want would keep."""
    if shutil.which("gcc") is None or shutil.which("objcopy") is None:
        pytest.skip("gcc and objcopy are needed")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "lib.c")
        with open(src, "w") as fh:
            fh.write("int ncclGetVersion(int *v) { *v = 22203; return 0; }\n")
        out = os.path.join(tmp, "out.so")
        subprocess.run(
            ["gcc", "-shared", "-fPIC", "-nostdlib", "-o", out, src, f"-Wl,-soname,{soname}"],
            check=True,
            capture_output=True,
        )
        cmd = ["objcopy"]
        if pad_bytes:
            pad = os.path.join(tmp, "pad.bin")
            with open(pad, "wb") as fh:
                fh.write(os.urandom(pad_bytes))
            cmd += ["--add-section", f".pad={pad}"]
        if relfatbin is not None:
            rel = os.path.join(tmp, "relfatbin.bin")
            with open(rel, "wb") as fh:
                fh.write(relfatbin)
            cmd += ["--add-section", f"__nv_relfatbin={rel}", "--set-section-flags", "__nv_relfatbin=alloc,readonly"]
        if fatbin is not None:
            blob = os.path.join(tmp, "fatbin.bin")
            with open(blob, "wb") as fh:
                fh.write(fatbin)
            cmd += ["--add-section", f".nv_fatbin={blob}", "--set-section-flags", ".nv_fatbin=alloc,readonly"]
        if len(cmd) > 1:
            subprocess.run([*cmd, out], check=True, capture_output=True)
        with open(out, "rb") as fh:
            return fh.read()
