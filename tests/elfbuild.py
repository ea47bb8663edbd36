"""Tiny ELF shared libraries built with gcc and a version script, to test symbol-version reading."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

import pytest


def build_versioned_lib(
    soname: str, versions: list[str], needs: tuple[str, str] | None = None, runpath: str | None = None
) -> bytes:
    """A shared object defining one function per symbol version in `versions`.

    `needs=(lib_bytes_soname, version)` links against a previously built library so that the
    result's .gnu.version_r names that version (as a provider needs IBVERBS_PRIVATE_NN).
    `runpath` is written as DT_RUNPATH (-Wl,-rpath with --enable-new-dtags).
    """
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "lib.c")
        script = os.path.join(tmp, "lib.map")
        funcs = []
        blocks = []
        prev = None
        prefix = "".join(c for c in soname.split(".")[0] if c.isalnum())
        for i, ver in enumerate(versions):
            fn = f"{prefix}_{i}"
            funcs.append(f"int {fn}(void) {{ return {i}; }}")
            inherit = f" {prev}" if prev else ""
            blocks.append(f"{ver} {{ global: {fn}; {'local: *;' if i == 0 else ''} }}{inherit};")
            prev = ver
        body = "\n".join(funcs)
        cmd = [
            "gcc",
            "-shared",
            "-fPIC",
            "-o",
            os.path.join(tmp, "out.so"),
            src,
            f"-Wl,-soname,{soname}",
            f"-Wl,--version-script={script}",
            "-nostdlib",
        ]
        if runpath:
            cmd += [f"-Wl,-rpath,{runpath}", "-Wl,--enable-new-dtags"]
        if needs:
            dep_soname, dep_version = needs
            dep_dir = os.path.join(tmp, "dep")
            os.makedirs(dep_dir)
            dep = build_versioned_lib(dep_soname, ["IBVERBS_1.1", dep_version])
            with open(os.path.join(dep_dir, dep_soname), "wb") as fh:
                fh.write(dep)
            # reference a symbol of the needed version so the linker records it
            dep_fn = "".join(c for c in dep_soname.split(".")[0] if c.isalnum()) + "_1"
            body += f"\nextern int {dep_fn}(void);\nint use_dep(void) {{ return {dep_fn}(); }}"
            cmd += [os.path.join(dep_dir, dep_soname)]
        with open(src, "w") as fh:
            fh.write(body + "\n")
        with open(script, "w") as fh:
            fh.write("\n".join(blocks) + "\n")
        subprocess.run(cmd, check=True, capture_output=True)
        with open(os.path.join(tmp, "out.so"), "rb") as fh:
            return fh.read()
