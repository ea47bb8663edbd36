"""The pieces behind the real-world layouts, on real bytes: ld.so.cache, site directories, pins, UCX versions."""

from __future__ import annotations

import re
import struct
import tarfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from imagebuild import Symlink, build_oci, make_layer, write_oci_dir
from rootfs import build_rootfs

from imgcheck import api
from imgcheck.extractors.loader import CacheError, parse_ld_so_cache
from imgcheck.extractors.python import Distribution, pinned
from imgcheck.extractors.ucx import upstream_version
from imgcheck.sources.read_options import ReadOptions


def _member(suite: str, name: str) -> bytes:
    with tarfile.open(build_rootfs(suite)) as tar:
        return tar.extractfile("./" + name).read()


@pytest.mark.parametrize("suite", ["bullseye", "bookworm", "trixie"])
def test_real_ld_so_cache(suite):
    entries = parse_ld_so_cache(_member(suite, "etc/ld.so.cache"))
    by_name = {e.soname: e for e in entries}
    # ldconfig records the soname link in the directories of ld.so.conf.d/x86_64-linux-gnu.conf
    assert re.fullmatch(r"/(usr/)?lib/x86_64-linux-gnu/libibverbs\.so\.1", by_name["libibverbs.so.1"].path)
    assert by_name["libibverbs.so.1"].flags == 0x0303  # ELF libc6, x86-64
    assert "libc.so.6" in by_name


def test_old_format_table_before_the_new_one():
    """glibc 2.2-2.31's ldconfig wrote the old table first, then the new one aligned after it."""
    new = _member("bookworm", "etc/ld.so.cache")
    old = b"ld.so-1.7.0" + b"\0" + struct.pack("<I", 1) + struct.pack("<iII", 1, 0, 0)
    old += b"\0" * (-len(old) % 8)
    entries = parse_ld_so_cache(old + new)
    assert entries == parse_ld_so_cache(new)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_garbage_cache_raises_cache_error_only(data):
    for blob in (data, b"glibc-ld.so.cache1.1" + data, b"ld.so-1.7.0" + data):
        try:
            parse_ld_so_cache(blob)
        except CacheError:
            pass


def test_unreadable_cache_is_a_note_and_default_dirs_still_work(tmp_path):
    lib = "usr/lib/x86_64-linux-gnu"
    layer = make_layer(
        {
            "etc/ld.so.cache": b"glibc-ld.so.cache1.1\xff\xff\xff\xff",
            f"{lib}/libnccl.so.2.21.5": b"\x7fELF not read",
            f"{lib}/libnccl.so.2": Symlink("libnccl.so.2.21.5"),
            "opt/old/libnccl.so.2.18.1": b"\x7fELF not read",
        }
    )
    facts = api.inspect_image(
        "oci-dir:" + write_oci_dir(str(tmp_path / "i"), build_oci([layer])), ReadOptions(use_cache=False)
    )
    assert any("ld.so.cache: unreadable" in n for n in facts.notes)
    loaded = [n for n in facts.nccl if n.loaded]
    assert [(n.version, n.how) for n in loaded] == [("2.21.5", f"default directory /{lib}")]
    assert facts.nccl[0] == loaded[0]  # the loader's copy first


def test_pth_and_pythonpath_sites(tmp_path):
    site = "usr/local/lib/python3.11/dist-packages"
    layer = make_layer(
        {
            f"{site}/distutils-precedence.pth": b"import os; var = 'SETUPTOOLS_USE_DISTUTILS'\n",
            f"{site}/extra.pth": b"# a comment\n/opt/extra\n../../../../../../escape\n",
            f"{site}/a-1.0.dist-info/METADATA": b"Name: a\nVersion: 1.0\n",
            "opt/extra/b-2.0.dist-info/METADATA": b"Name: b\nVersion: 2.0\n",
            "opt/target/nvidia_nccl_cu12-2.26.2.dist-info/METADATA": b"Name: nvidia-nccl-cu12\nVersion: 2.26.2\n",
            "opt/conda/pkgs/torch-2.1.0-py311/lib/python3.11/site-packages/torch-2.1.0.dist-info/METADATA": b"Name: torch\nVersion: 2.1.0\n",
        }
    )
    path = write_oci_dir(str(tmp_path / "i"), build_oci([layer], env=["PYTHONPATH=/opt/target:relative"]))
    facts = api.inspect_image("oci-dir:" + path, ReadOptions(use_cache=False))
    assert facts.python_sites == ("/opt/target", f"/{site}", "/opt/extra")
    py = {p.name: p.version for p in facts.packages if p.db == "python"}
    assert py == {"a": "1.0", "b": "2.0", "nvidia-nccl-cu12": "2.26.2"}  # not conda's package cache
    assert [(n.version, n.origin) for n in facts.nccl] == [("2.26.2", "pip")]


def _torch(lines: str) -> Distribution:
    return Distribution(
        "torch", "2.x", "s", "s/t/METADATA", None, "Name: torch\n" + lines + "\n\nbody\nRequires-Dist: x==1\n"
    )


@pytest.mark.parametrize(
    "line,expected",
    [
        (
            'Requires-Dist: nvidia-nccl-cu12 (==2.21.5) ; platform_system == "Linux" and platform_machine == "x86_64"',
            [("nvidia-nccl-cu12", "2.21.5")],
        ),
        (
            'Requires-Dist: nvidia-nccl-cu12==2.26.2; platform_system == "Linux" and platform_machine == "x86_64"',
            [("nvidia-nccl-cu12", "2.26.2")],
        ),
        ("Requires-Dist: nvidia_nccl_cu12 ===2.20.5", [("nvidia-nccl-cu12", "2.20.5")]),
        ('Requires-Dist: nvidia-nccl-cu12==2.21.5; extra == "cuda"', []),  # only with the extra
        ("Requires-Dist: nvidia-nccl-cu12>=2.18", []),  # a range is no pin
        ("Requires-Dist: nvidia-nccl-cu12 (==2.*)", []),
        ("Requires-Dist: not a (requirement", []),
    ],
)
def test_pin_forms(line, expected):
    found = pinned(_torch(line), re.compile(r"nvidia-nccl-cu[0-9]+"), "x86_64")
    assert [(n, v) for n, v, _ in found] == expected


def test_requirements_in_the_body_are_not_read():
    assert pinned(_torch(""), re.compile(r"x"), "x86_64") == []


@pytest.mark.parametrize(
    "package,upstream",
    [
        ("1.10.1~rc1+really.1.10.0-1", "1.10.0"),
        ("1.13.1-1", "1.13.1"),
        ("1.16.0-1.2310213", "1.16.0"),
        ("1:1.18.1+ds-2", "1.18.1"),
    ],
)
def test_ucx_upstream_version(package, upstream):
    assert upstream_version(package) == upstream


@pytest.mark.parametrize("runpath", [None, "$ORIGIN/providers"])
def test_provider_by_bare_name_through_libibverbs_runpath(tmp_path, runpath):
    """A driver file naming `mlx5` and no copy in the provider dir: libibverbs dlopens libmlx5-rdmav34.so
    by name, so its own DT_RUNPATH ($ORIGIN/providers) is searched (ld.so(8)); without one the file is
    off every search path."""
    from elfbuild import build_versioned_lib

    verbs = build_versioned_lib("libibverbs.so.1", ["IBVERBS_1.1", "IBVERBS_PRIVATE_34"], runpath=runpath)
    mlx5 = build_versioned_lib("libmlx5.so.1", ["MLX5_1.0"], needs=("libibverbs.so.1", "IBVERBS_PRIVATE_34"))
    lib = "opt/rdma/lib"
    layer = make_layer(
        {
            f"{lib}/libibverbs.so.1.14.50.0": verbs,
            f"{lib}/libibverbs.so.1": Symlink("libibverbs.so.1.14.50.0"),
            f"{lib}/providers/libmlx5-rdmav34.so": mlx5,
            "opt/stale/libmlx5-rdmav34.so": mlx5,
            "etc/libibverbs.d/mlx5.driver": b"driver mlx5\n",
        }
    )
    env = ["LD_LIBRARY_PATH=/opt/rdma/lib"]
    facts = api.inspect_image(
        "oci-dir:" + write_oci_dir(str(tmp_path / "i"), build_oci([layer], env=env)), ReadOptions(use_cache=False)
    )
    verbs_facts = facts.rdma.libibverbs
    assert verbs_facts.path == f"/{lib}/libibverbs.so.1.14.50.0"
    assert verbs_facts.runpath == ((runpath,) if runpath else ())
    provider = f"/{lib}/providers/libmlx5-rdmav34.so"
    if runpath:
        [mlx5_facts] = facts.rdma.providers
        assert mlx5_facts.path == provider and mlx5_facts.loaded and "search path" in mlx5_facts.how
        assert [p.path for p in facts.rdma.other_providers] == ["/opt/stale/libmlx5-rdmav34.so"]
    else:
        assert facts.rdma.providers == ()
        assert {p.path for p in facts.rdma.other_providers} == {provider, "/opt/stale/libmlx5-rdmav34.so"}


def test_looping_links_in_loader_inputs_are_not_a_crash(tmp_path):
    """Hostile: a driver file, LD_LIBRARY_PATH and ld.so.cache-free lookups through symlink loops."""
    from elfbuild import build_versioned_lib

    verbs = build_versioned_lib("libibverbs.so.1", ["IBVERBS_1.1", "IBVERBS_PRIVATE_34"])
    layer = make_layer(
        {
            "usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.50.0": verbs,
            "usr/lib/x86_64-linux-gnu/libibverbs.so.1": Symlink("libibverbs.so.1.14.50.0"),
            "loop/a": Symlink("b"),
            "loop/b": Symlink("a"),
            "etc/libibverbs.d/evil.driver": b"driver /loop/a/libevil\n",
            "loop/a/libevil-rdmav34.so": b"x",
            "usr/lib/x86_64-linux-gnu/libibverbs/libmlx5-rdmav34.so": Symlink("/loop/a"),
            "usr/local/lib/python3.11/dist-packages/x.pth": b"/loop/a\n../../../../../../../../../etc\n",
        }
    )
    env = ["LD_LIBRARY_PATH=/loop/a:/loop/b", "PYTHONPATH=/loop/b", "RDMAV_DRIVERS=/loop/b/x"]
    facts = api.inspect_image(
        "oci-dir:" + write_oci_dir(str(tmp_path / "i"), build_oci([layer], env=env)), ReadOptions(use_cache=False)
    )
    assert facts.rdma.libibverbs.path == "/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.50.0"
    assert all(not s.startswith("/..") for s in facts.python_sites)


def test_cuda_runtime_placeholder_wheel_is_no_cuda(tmp_path):
    """PyPI's nvidia-cuda-runtime-cu13 is a 0.0.1 placeholder (CUDA 13 ships as nvidia-cuda-runtime 13.x):
    a version whose major is not the name's says nothing about CUDA."""
    site = "usr/local/lib/python3.11/dist-packages"
    layer = make_layer(
        {
            f"{site}/nvidia_cuda_runtime_cu13-0.0.1.dist-info/METADATA": b"Name: nvidia-cuda-runtime-cu13\nVersion: 0.0.1\n",
            f"{site}/torch-2.5.1+cu121.dist-info/METADATA": b"Name: torch\nVersion: 2.5.1+cu121\n",
        }
    )
    facts = api.inspect_image(
        "oci-dir:" + write_oci_dir(str(tmp_path / "i"), build_oci([layer])), ReadOptions(use_cache=False)
    )
    assert [(r.version, r.origin) for r in facts.cuda.runtime] == [("12.1", "torch local version")]
    assert facts.cuda.version == "12.1"
