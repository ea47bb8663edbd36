"""The SM architectures libnccl carries device code for, read from its fat binaries while the file streams.

The libraries are real gcc-built ELF files; their .nv_fatbin content is constructed from the documented layout
(tests/fatbinbuild.py names the sources)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile

import pytest
from fatbinbuild import ELF, PTX, build_lib, container, entry
from imagebuild import Symlink, build_oci, make_layer, write_docker_archive, write_oci_dir

from imgcheck import api
from imgcheck.sources.read_options import ReadOptions
from imgcheck.view.fatbin import FatbinScan, NeedStream, parse_result, scan_structure

LIB = "usr/lib/x86_64-linux-gnu"


def scan(data: bytes, chunk: int) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    s = FatbinScan(len(data))
    for i in range(0, len(data), chunk):
        s.feed(memoryview(data)[i : i + chunk])
    return parse_result(s.result())


@pytest.fixture(scope="module")
def sm80_90_lib() -> bytes:
    return build_lib(container([(ELF, 80), (ELF, 90), (PTX, 90)]))


@pytest.mark.parametrize("chunk", [1, 7, 63, 4096, 1 << 30])
def test_architectures_whatever_the_chunking(sm80_90_lib, chunk):
    assert scan(sm80_90_lib, chunk) == ((80, 90), (90,))


def test_several_containers_are_one_set_and_big_headers_are_skipped():
    blob = container([(ELF, 70), (ELF, 80)]) + b"\0" * 13 + container([(ELF, 90), (PTX, 90)])
    # a Blackwell-style 112-byte entry header (nvopen-tools: SM 100+ ELF entries)
    body = entry(ELF, 100, b"x" * 50, header_size=112)
    blob += (
        b"\x50\xed\x55\xba" + (1).to_bytes(2, "little") + (16).to_bytes(2, "little") + len(body).to_bytes(8, "little")
    )
    blob += body
    lib = build_lib(blob)
    assert scan(lib, 4096) == ((70, 80, 90, 100), (90,))


def test_the_runtime_section_wins_over_relocatable_copies():
    # NCCL builds with relocatable device code: PTX in __nv_relfatbin is for device linking, not what the runtime
    # loads (.nv_fatbin); with the section headers read, only .nv_fatbin counts
    rel = container([(ELF, 80), (ELF, 90), (PTX, 90)]) + container([(ELF, 80), (PTX, 90)])
    lib = build_lib(container([(ELF, 80), (ELF, 90)]), relfatbin=rel)
    s = FatbinScan(len(lib))
    s.feed(lib)
    assert json.loads(s.result()) == {"sass": [80, 90], "ptx": [], "containers": 1, "section": ".nv_fatbin"}
    # no .nv_fatbin section: every container counts
    assert scan(build_lib(None, relfatbin=rel), 4096) == ((80, 90), (90,))


def test_no_fat_binary_is_unknown_not_empty():
    assert scan(build_lib(None), 4096) is None


def test_a_stray_magic_is_not_a_container():
    # the magic and a plausible header, but entries that do not chain to the container's end
    fake = b"\x50\xed\x55\xba" + (1).to_bytes(2, "little") + (16).to_bytes(2, "little") + (100).to_bytes(8, "little")
    fake += entry(ELF, 35, b"y" * 300)  # longer than the container says: rejected
    assert scan(build_lib(fake), 4096) is None
    # the real container after it is still found
    assert scan(build_lib(fake + container([(ELF, 37)])), 4096) == ((37,), ())


class Ranges:
    """A file read by offset, counting what is read."""

    def __init__(self, data: bytes):
        self.data, self.reads, self.bytes = data, 0, 0

    def read_at(self, offset: int, n: int) -> bytes:
        self.reads += 1
        self.bytes += n
        return self.data[offset : offset + n]


def stream_result(data: bytes) -> str | None:
    s = FatbinScan(len(data))
    s.feed(data)
    return s.result()


def test_reading_by_structure_gives_the_streaming_result_and_skips_payloads():
    blob = container([(ELF, 70), (ELF, 80)], payload_size=300_000) + b"\0" * 13 + container([(ELF, 90), (PTX, 90)])
    rel = container([(ELF, 80), (ELF, 90), (PTX, 90)]) + container([(ELF, 80), (PTX, 90)])
    libs = [
        build_lib(blob, pad_bytes=2 * 1024 * 1024),
        build_lib(container([(ELF, 80), (ELF, 90)]), relfatbin=rel),
        build_lib(b"\x50\xed\x55\xba" + bytes(40) + container([(ELF, 37)])),  # a stray magic first
    ]
    for lib in libs:
        ranges = Ranges(lib)
        assert scan_structure(ranges.read_at, len(lib)) == stream_result(lib)
    big = Ranges(libs[0])
    scan_structure(big.read_at, len(libs[0]))
    assert big.bytes < len(libs[0]) / 4  # the 600 KB of payloads and the 2 MB pad are not read
    # where the stream looks at every container of the file, the structure is not enough
    for lib in (build_lib(None, relfatbin=rel), build_lib(None), b"not an ELF file" * 10):
        with pytest.raises(NeedStream):
            scan_structure(Ranges(lib).read_at, len(lib))


def test_reading_by_structure_agrees_with_the_stream_on_random_layouts():
    import random

    rng = random.Random(39)
    for _ in range(12):
        blob = b""
        for _c in range(rng.randrange(1, 5)):
            entries = [(rng.choice((ELF, ELF, PTX)), rng.choice((50, 70, 80, 86, 90, 100))) for _e in range(4)]
            blob += container(entries[: rng.randrange(1, 5)], payload_size=rng.randrange(1, 70_000))
            gap = rng.choice((b"", bytes(rng.randrange(1, 64)), rng.randbytes(rng.randrange(1, 64))))
            blob += gap + (b"\x50\xed\x55\xba" + rng.randbytes(20) if rng.random() < 0.3 else b"")
        rel = container([(ELF, 61), (PTX, 61)]) if rng.random() < 0.5 else None
        lib = build_lib(blob, pad_bytes=rng.choice((0, 300_000)), relfatbin=rel)
        expected = stream_result(lib)
        try:
            got = scan_structure(Ranges(lib).read_at, len(lib))
        except NeedStream:
            got = None
        # a container the structure cannot reach is one the stream found outside .nv_fatbin only
        assert got == expected or (got is None and (expected is None or json.loads(expected)["section"] is None))


def test_reading_by_structure_is_bounded_on_hostile_entries():
    # entry sizes that run past the section and the file, a section claimed larger than the file
    body = entry(ELF, 80, b"z" * 8)
    body = body[:8] + (1 << 62).to_bytes(8, "little") + body[16:]
    hostile = (
        b"\x50\xed\x55\xba" + (1).to_bytes(2, "little") + (16).to_bytes(2, "little") + len(body).to_bytes(8, "little")
    )
    lib = build_lib((hostile + body) * 50)
    ranges = Ranges(lib)
    with pytest.raises(NeedStream):
        scan_structure(ranges.read_at, len(lib))
    assert ranges.bytes <= 2 * len(lib)


def _nccl_layer(lib: bytes, where: str = LIB) -> bytes:
    return make_layer({f"{where}/libnccl.so.2": Symlink("libnccl.so.2.22.3"), f"{where}/libnccl.so.2.22.3": lib})


def test_inspect_reads_a_library_larger_than_any_kept_file(tmp_path):
    lib = build_lib(container([(ELF, 80), (PTX, 80)]), pad_bytes=12 * 1024 * 1024)
    assert len(lib) > 8 * 1024 * 1024  # over every content want's max_bytes: only the stream sees it
    layer = _nccl_layer(lib)
    refs = [
        "oci-dir:" + write_oci_dir(str(tmp_path / "oci"), build_oci([layer], "gzip")),
        "docker-archive:" + write_docker_archive(str(tmp_path / "da.tar"), [layer]),
    ]
    for ref in refs:
        facts = api.inspect_image(ref, ReadOptions(use_cache=False))
        (nccl,) = [n for n in facts.nccl if n.origin == "library"]
        assert (nccl.version, nccl.sass_archs, nccl.ptx_archs) == ("2.22.3", (80,), (80,))
        assert nccl.archs_from == f"/{LIB}/libnccl.so.2.22.3"
        assert facts.unknown_reason("nccl.sass_archs") is None


def test_cached_index_keeps_the_architectures(tmp_path, monkeypatch):
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path / "home"))
    ref = "oci-dir:" + write_oci_dir(str(tmp_path / "oci"), build_oci([_nccl_layer(build_lib(container([(ELF, 90)])))]))
    first = api.inspect_image(ref)
    cached = [os.path.join(d, f) for d, _, files in os.walk(tmp_path / "home") for f in files]
    assert cached  # the layer index and the facts were written
    again = api.inspect_image(ref)
    assert [n.sass_archs for n in first.nccl] == [n.sass_archs for n in again.nccl] == [(90,)]


def test_a_library_without_fat_binaries_leaves_the_architectures_unknown(tmp_path):
    ref = "oci-dir:" + write_oci_dir(str(tmp_path / "oci"), build_oci([_nccl_layer(build_lib(None))]))
    facts = api.inspect_image(ref, ReadOptions(use_cache=False))
    (nccl,) = facts.nccl
    assert nccl.sass_archs is None and nccl.ptx_archs is None
    assert f"/{LIB}/libnccl.so.2.22.3" in facts.unknown_reason("nccl.sass_archs")


def test_pip_wheel_library(tmp_path):
    site = "usr/local/lib/python3.10/dist-packages"
    meta = b"Metadata-Version: 2.1\nName: nvidia-nccl-cu12\nVersion: 2.21.5\n"
    layer = make_layer(
        {
            f"{site}/nvidia_nccl_cu12-2.21.5.dist-info/METADATA": meta,
            f"{site}/nvidia/nccl/lib/libnccl.so.2": build_lib(container([(ELF, 50), (ELF, 90), (PTX, 90)])),
        }
    )
    ref = "oci-dir:" + write_oci_dir(str(tmp_path / "oci"), build_oci([layer]))
    facts = api.inspect_image(ref, ReadOptions(use_cache=False))
    (pip,) = [n for n in facts.nccl if n.origin == "pip"]
    assert (pip.version, pip.sass_archs, pip.ptx_archs) == ("2.21.5", (50, 90), (90,))
    assert pip.archs_from == f"/{site}/nvidia/nccl/lib/libnccl.so.2"


def test_squashfs_image_streams_the_library_too(tmp_path):
    tool = shutil.which("mksquashfs")
    if tool is None:
        pytest.skip("mksquashfs is not installed")
    tar = tmp_path / "root.tar"
    tar.write_bytes(_nccl_layer(build_lib(container([(ELF, 86), (PTX, 86)]), pad_bytes=3 * 1024 * 1024)))
    root = tmp_path / "root"
    with tarfile.open(tar) as tf:
        tf.extractall(root, filter="tar")
    out = str(tmp_path / "img.sqsh")
    subprocess.run([tool, str(root), out, "-noappend", "-quiet", "-no-progress", "-comp", "gzip"], check=True)
    assert os.path.getsize(out) > 0
    from imgcheck.view.squashfs import SquashfsImage

    blocks = []
    real = SquashfsImage._data_block

    def counting(self, pos, size_word, expect_max):
        blocks.append(pos)
        return real(self, pos, size_word, expect_max)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(SquashfsImage, "_data_block", counting)
        facts = api.inspect_image(f"enroot:{out}", ReadOptions(use_cache=False))
    (nccl,) = facts.nccl
    assert (nccl.sass_archs, nccl.ptx_archs) == ((86,), (86,))
    # read by structure: the 3 MB pad and the payloads are not decompressed (the library is 24+ blocks of 128 KiB)
    assert len(blocks) < 12


def test_layer_cache_round_trip_keeps_the_scan():
    import io

    from imgcheck.extractors.assemble import want_set
    from imgcheck.view.cache import index_bytes, index_from_bytes
    from imgcheck.view.layer_index import index_layer

    idx = index_layer(io.BytesIO(_nccl_layer(build_lib(container([(ELF, 35), (PTX, 35)])))), "sha256:x", want_set())
    back = index_from_bytes(index_bytes(idx), "test")
    entry = back.entries[f"{LIB}/libnccl.so.2.22.3"]
    assert entry.scan == idx.entries[f"{LIB}/libnccl.so.2.22.3"].scan
    assert parse_result(entry.scan) == ((35,), (35,))


def test_hostile_bytes_never_raise_and_hold_little():
    import random

    rng = random.Random(7)
    magic = b"\x50\xed\x55\xba"
    good_header = magic + (1).to_bytes(2, "little") + (16).to_bytes(2, "little")
    parts = []
    for _ in range(2000):
        choice = rng.randrange(4)
        if choice == 0:
            parts.append(magic)
        elif choice == 1:  # a header whose size runs past the file
            parts.append(good_header + (1 << 60).to_bytes(8, "little"))
        elif choice == 2:  # a container with an entry whose header size is absurd
            body = entry(ELF, 80, b"z" * 8)
            body = body[:4] + (1 << 31).to_bytes(4, "little") + body[8:]
            parts.append(good_header + len(body).to_bytes(8, "little") + body)
        else:
            parts.append(rng.randbytes(rng.randrange(1, 300)))
    data = b"".join(parts)
    s = FatbinScan(len(data))
    for i in range(0, len(data), 4096):
        s.feed(data[i : i + 4096])
        assert len(s._buf) <= 4096 + 64  # never more than a chunk and one entry header
    assert s.result() is None and s.rejected > 0


REAL_NCCL = "nvidia-nccl-cu12==2.21.5"


def test_real_nccl_wheel_library():
    """The real libnccl.so.2 of nvidia-nccl-cu12 2.21.5 (251 MB; its wheel is 189 MB, so only run when it is in
    the wheel cache or IMGCHECK_TEST_REAL_NCCL=1 asks for the download). readelf -S shows its __nv_relfatbin
    (112 containers, cubins and compute_90 PTX) and .nv_fatbin (one container, the same cubins, no PTX): the
    architectures are those of .nv_fatbin, what the CUDA runtime loads."""
    import glob
    import zipfile

    from wheelcache import WHEEL_CACHE, _key, wheel

    if not glob.glob(os.path.join(WHEEL_CACHE, _key(REAL_NCCL), "*.whl")) and not os.environ.get(
        "IMGCHECK_TEST_REAL_NCCL"
    ):
        pytest.skip(f"{REAL_NCCL} is not in the wheel cache (IMGCHECK_TEST_REAL_NCCL=1 downloads it, 189 MB)")
    with zipfile.ZipFile(wheel(REAL_NCCL)) as whl, whl.open("nvidia/nccl/lib/libnccl.so.2") as lib:
        size = whl.getinfo("nvidia/nccl/lib/libnccl.so.2").file_size
        s = FatbinScan(size)
        data = bytearray()
        while chunk := lib.read(1 << 20):
            s.feed(chunk)
            data += chunk
    # read by structure: the same answer from the ELF and fat binary headers, a fraction of a percent of the file
    ranges = Ranges(bytes(data))
    assert scan_structure(ranges.read_at, size) == s.result()
    assert ranges.bytes < size / 500
    # libnccl's combined scan (fat binaries, build line from .rodata, GLIBC needs) by structure gives what the
    # stream gives, reading well under a percent of the file
    from imgcheck.view.fatbin import NcclScan, scan_nccl_structure

    whole = NcclScan(size)
    whole.feed(bytes(data))
    ranges = Ranges(bytes(data))
    by_structure = json.loads(scan_nccl_structure(ranges.read_at, size) or "{}")
    assert by_structure == json.loads(whole.result() or "{}") and by_structure["nccl"] == "2.21.5"
    assert ranges.bytes < size / 100
    assert json.loads(s.result()) == {
        "sass": [50, 60, 61, 70, 80, 90],
        "ptx": [],
        "containers": 1,
        "section": ".nv_fatbin",
    }
