"""The verifier binary: built with gcc, needing only old glibc symbol versions; the guard that checks it."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from imgcheck.elf.reader import read_elf
from imgcheck.errors import UnavailableError
from imgcheck.verify import build
from imgcheck.verify.result import parse_output


def _glibc_versions(path: str) -> set[tuple[int, ...]]:
    info = read_elf(open(path, "rb").read())
    return {
        tuple(int(p) for p in v[6:].split("."))
        for vs in info.needed_versions.values()
        for v in vs
        if v.startswith("GLIBC_")
    }


def test_verifier_needs_only_old_glibc(verifier):
    info = read_elf(open(verifier, "rb").read())
    assert set(info.needed_libraries) <= {"libc.so.6", "libdl.so.2"}
    # bullseye's glibc is 2.31; nothing above 2.17 may be needed (no dlopen@GLIBC_2.34, no __libc_start_main@2.34)
    assert max(_glibc_versions(verifier)) <= (2, 17)
    build.check_binary(verifier)  # the same guard verify applies


def test_verifier_runs_on_the_host_and_writes_one_json_document(verifier):
    proc = subprocess.run(
        [verifier],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "IMGCHECK_VERIFY_GPU": "0"},
    )
    assert proc.returncode == 0, proc.stderr
    out = parse_output(proc.stdout)
    assert out.schema_version == 1
    assert out.gpu.status == "skipped"
    if out.libibverbs.opened:  # the host may have rdma-core (libibverbs-dev for the header tests)
        assert {s.name for s in out.symbols} >= {"ibv_reg_mr_iova2", "ibv_reg_dmabuf_mr", "ibv_query_ece"}
    assert "imgcheck-verifier: done" in proc.stderr  # progress lines go to stderr, never into the JSON
    json.loads(proc.stdout)  # exactly one document


def test_normally_linked_binary_is_rejected(compile_c, tmp_path):
    """What the guard is for: an ordinary gcc build on glibc >= 2.34 needs __libc_start_main@GLIBC_2.34."""
    src = tmp_path / "hello.c"
    src.write_text('#include <stdio.h>\nint main(void){puts("hi");return 0;}\n')
    out = tmp_path / "hello"
    subprocess.run(["gcc", "-o", str(out), str(src)], check=True)
    if max(_glibc_versions(str(out))) <= (2, 17):
        pytest.skip("host glibc is older than 2.34: an ordinary build is already compatible")
    with pytest.raises(UnavailableError, match="GLIBC_2.3"):
        build.check_binary(str(out))


def test_build_is_cached_by_source_hash(verifier):
    mtime = os.stat(verifier).st_mtime_ns
    assert build.locate_verifier() == verifier
    assert os.stat(verifier).st_mtime_ns == mtime
    assert os.path.dirname(verifier) == build.cache_dir()


def test_prebuilt_verifier_from_env(verifier, monkeypatch, tmp_path):
    monkeypatch.setenv(build.ENV_VERIFIER, verifier)
    assert build.locate_verifier() == verifier
    monkeypatch.setenv(build.ENV_VERIFIER, str(tmp_path / "missing"))
    with pytest.raises(UnavailableError, match="no such file"):
        build.locate_verifier()
    not_elf = tmp_path / "script"
    not_elf.write_text("#!/bin/sh\n")
    monkeypatch.setenv(build.ENV_VERIFIER, str(not_elf))
    with pytest.raises(UnavailableError, match="not a readable ELF"):
        build.locate_verifier()


def test_missing_compiler_is_one_clear_error(monkeypatch):
    monkeypatch.delenv(build.ENV_VERIFIER, raising=False)
    with pytest.raises(UnavailableError, match="needs a C compiler .*apt-get install gcc"):
        build.locate_verifier(compiler="/nonexistent/cc")
