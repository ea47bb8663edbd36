"""NCCL's own CUDA release and libcudart sonames, read from real PyPI wheels.

nvidia-nccl-cu12 2.18.1 (PyPI) ships libnccl.so.2 (279 MB) with the line `NCCL version 2.18.1+cuda12.1`
(NVIDIA/nccl src/init.cc VERSION_STRING); NCCL links its CUDA runtime statically, so that release sets a driver
floor of its own. nvidia-cuda-runtime-cu11 11.8.89 ships only libcudart.so.11.0, the soname every CUDA 11.x
runtime has: the file name is not the version. The wheels' files are laid out under site-packages as pip
installs them (a wheel's purelib tree unpacked verbatim, its dist-info beside it). The NCCL wheel is 210 MB:
as in tests/test_fatbin.py, its tests run when it is in the wheel cache or IMGCHECK_TEST_REAL_NCCL=1 asks for
the download; the engine's use of the fact is tested on committed facts either way.
"""

from __future__ import annotations

import dataclasses
import os
import tarfile
import zipfile

import pytest
from engine_facts import by_id, committed_facts, node, run, unknown_rules, with_nccl
from imagebuild import write_docker_archive
from wheelcache import wheel

from imgcheck import api
from imgcheck.sources.read_options import ReadOptions
from imgcheck.view.fatbin import NcclScan, parse_build, parse_result

NCCL = "nvidia-nccl-cu12==2.18.1"
CUDART11 = "nvidia-cuda-runtime-cu11==11.8.89"
SITE = "opt/venv/lib/python3.11/site-packages"

pytestmark = pytest.mark.e2e


def _real_nccl_wheel() -> str:
    import glob

    from wheelcache import WHEEL_CACHE, _key

    if not glob.glob(os.path.join(WHEEL_CACHE, _key(NCCL), "*.whl")) and not os.environ.get("IMGCHECK_TEST_REAL_NCCL"):
        pytest.skip(f"{NCCL} is not in the wheel cache (IMGCHECK_TEST_REAL_NCCL=1 downloads it, 210 MB)")
    return wheel(NCCL)


@pytest.fixture(scope="module")
def libnccl(tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("nccl")
    with zipfile.ZipFile(_real_nccl_wheel()) as zf:
        return zf.extract("nvidia/nccl/lib/libnccl.so.2", str(out))


def _scan(path: str, chunk: int, first: int | None = None) -> str | None:
    scan = NcclScan(os.path.getsize(path))
    with open(path, "rb") as fh:
        if first:
            scan.feed(fh.read(first))
        while block := fh.read(chunk):
            scan.feed(block)
    return scan.result()


def test_build_line_of_the_real_libnccl_whatever_the_chunking(libnccl):
    with open(libnccl, "rb") as fh:
        at = fh.read().find(b"NCCL version 2.18.1+cuda12.1")
    assert at > 0
    # whole megabytes, and a first chunk that cuts the line in the middle
    for first in (None, at + 5, at + 20):
        result = _scan(libnccl, 1 << 20, first)
        assert parse_build(result) == ("2.18.1", "12.1")
        assert parse_result(result) is not None and 90 in parse_result(result)[0]  # the fat binaries still read


def test_no_build_line_is_none():
    scan = NcclScan(100)
    scan.feed(b"\0" * 40 + b"NCCL version 2.18.1 compiled with CUDA 12.1\n" + b"\0" * 16)  # RAS text, no "+cuda"
    assert parse_build(scan.result()) is None


def _wheel_layer(path: str, wheels: list[str]) -> str:
    """A layer holding each wheel as pip lays it out in the venv's site-packages."""
    with tarfile.open(path, "w") as tar:
        for whl in wheels:
            with zipfile.ZipFile(whl) as zf:
                for info in zf.infolist():
                    if info.is_dir():
                        continue
                    member = tarfile.TarInfo(f"{SITE}/{info.filename}")
                    member.size = info.file_size
                    member.mode = 0o755 if info.filename.endswith((".so", ".so.2", ".so.11.0", ".so.1")) else 0o644
                    with zf.open(info) as src:
                        tar.addfile(member, src)
    return path


def _image(work, wheels: list[str]):
    layer = _wheel_layer(str(work / "wheels.tar"), wheels)
    archive = str(work / "image.tar")
    write_docker_archive(archive, [], layer_files=[layer])
    return api.inspect_image(f"docker-archive:{archive}", ReadOptions(use_cache=False))


@pytest.fixture(scope="module")
def cudart11_image(tmp_path_factory):
    return _image(tmp_path_factory.mktemp("cu11"), [wheel(CUDART11)])


@pytest.fixture(scope="module")
def wheel_image(tmp_path_factory):
    return _image(tmp_path_factory.mktemp("wheels"), [_real_nccl_wheel(), wheel(CUDART11)])


def test_the_nccl_wheel_says_its_cuda_release(wheel_image):
    [nccl] = [n for n in wheel_image.nccl if n.origin == "pip"]
    assert (nccl.version, nccl.cuda, nccl.cuda_from) == ("2.18.1", "12.1", "library build string")


def test_cu11_soname_is_not_a_version(cudart11_image):
    runtimes = cudart11_image.cuda.runtime
    versions = [r.version for r in runtimes]
    assert "11.0" not in versions  # the phantom the soname libcudart.so.11.0 used to give
    [lib] = [r for r in runtimes if r.library and r.origin in ("soname", "library file name")]
    assert (lib.version, lib.origin, lib.soname) == ("11", "soname", "libcudart.so.11.0")
    [pip] = [r for r in runtimes if r.origin == "pip nvidia-cuda-runtime-cu11"]
    assert pip.version == "11.8.89"
    assert pip.library == f"/{SITE}/nvidia/cuda_runtime/lib/libcudart.so.11.0"  # the soname names its major
    assert cudart11_image.cuda.version == "11.8.89"
    assert cudart11_image.nccl == ()


def test_nccl_built_for_cuda12_needs_the_cuda12_driver_even_with_cuda11_runtime(wheel_image):
    # the image's CUDA runtime is 11.8 (R470 runs it); its libnccl carries CUDA 12.1 statically
    f = by_id(run(wheel_image, node("mofed-5.8-470-peermem")), "CUDA-DRIVER-TOO-OLD")
    assert f.severity == "error" and "NCCL 2.18.1" in f.title and "CUDA 12.1" in f.title
    [ev] = [e for e in f.evidence if e.fact == "image.nccl.cuda"]
    assert ev.value == "12.1" and ev.path.endswith("nvidia_nccl_cu12-2.18.1.dist-info/METADATA")
    assert "CUDA-DRIVER-TOO-OLD" not in [x.id for x in run(wheel_image, node("inbox-5.15-proprietary-535")).findings]


@pytest.fixture(scope="module")
def bookworm():
    return committed_facts("bookworm")


def test_nccl_build_alone_sets_the_floor(bookworm):
    image = with_nccl(bookworm, "2.18.1", "library", cuda=None)
    image = dataclasses.replace(image, nccl=(dataclasses.replace(image.nccl[0], cuda="12.1", cuda_from="x"),))
    f = by_id(run(image, node("mofed-5.8-470-peermem")), "CUDA-DRIVER-TOO-OLD")
    assert "NCCL 2.18.1" in f.title
    # same major as the toolkit: the toolkit's evidence stands
    same = dataclasses.replace(image, cuda=with_nccl(bookworm, "2.18.1", cuda="12.4.1").cuda)
    f = by_id(run(same, node("mofed-5.8-470-peermem")), "CUDA-DRIVER-TOO-OLD")
    assert any(e.fact == "image.cuda.version" for e in f.evidence)
    # neither the toolkit nor NCCL's build known: unknown, naming the NCCL fact
    unread = with_nccl(bookworm, "2.18.1", "library", cuda=None)
    result = run(unread, node("mofed-5.8-470-peermem"))
    assert "CUDA-DRIVER-TOO-OLD" in unknown_rules(result)
    assert any("image.nccl.cuda" in u.reason for u in result.unknowns if u.rule == "CUDA-DRIVER-TOO-OLD")


@pytest.mark.parametrize("chunk", [1, 7, 30, 4096])
def test_build_line_split_across_chunks(chunk):
    # the literal as NCCL's VERSION_STRING compiles it (src/init.cc), NUL-terminated in .rodata
    data = b"\x7fELF" + b"\0" * 500 + b"NCCL version 2.18.1+cuda12.1\0" + b"\0" * 300
    scan = NcclScan(len(data))
    for i in range(0, len(data), chunk):
        scan.feed(data[i : i + chunk])
    assert parse_build(scan.result()) == ("2.18.1", "12.1")


def test_glibc_need_of_the_real_libnccl(libnccl):
    # a manylinux2014 wheel: readelf -V shows GLIBC_2.17 (libc.so.6) as its newest glibc need
    from imgcheck.view.fatbin import parse_glibc

    assert parse_glibc(_scan(libnccl, 1 << 20)) == "2.17"


def test_streamed_version_needs_match_pyelftools(tmp_path):
    # a gcc-built shared object linking glibc (getrandom: GLIBC_2.25), padded so its section headers lie far from
    # the kept head: the .gnu.version_r read while streaming equals what pyelftools reads from the whole file
    import shutil
    import subprocess

    from imgcheck.elf.reader import glibc_need, read_elf
    from imgcheck.view.fatbin import parse_glibc

    if shutil.which("gcc") is None or shutil.which("objcopy") is None:
        pytest.skip("gcc and objcopy are needed")
    src, out, pad = tmp_path / "lib.c", tmp_path / "lib.so", tmp_path / "pad.bin"
    src.write_text("#include <sys/random.h>\nint f(void *b) { return (int)getrandom(b, 8, 0); }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(out), str(src)], check=True, capture_output=True)
    pad.write_bytes(b"\0" * (3 * 1024 * 1024))
    subprocess.run(["objcopy", "--add-section", f".pad={pad}", str(out)], check=True, capture_output=True)
    lib = out.read_bytes()
    scan = NcclScan(len(lib))
    for i in range(0, len(lib), 65536):
        scan.feed(lib[i : i + 65536])
    need = glibc_need(read_elf(lib))
    assert need is not None and need[0] == "2.25"
    assert parse_glibc(scan.result()) == "2.25"


def test_nccl_needing_a_newer_glibc_fails(bookworm):
    image = with_nccl(bookworm, "2.18.1", "library", cuda=None)
    image = dataclasses.replace(image, nccl=(dataclasses.replace(image.nccl[0], needs_glibc="2.38"),))
    f = [f for f in run(image, node("inbox-6.8-open-570")).findings if f.id == "GLIBC-TOO-OLD-FOR-LIBRARY"]
    assert len(f) == 1 and "GLIBC_2.38" in f[0].predicted_error and "NCCL 2.18.1" in f[0].title  # bookworm: 2.36
