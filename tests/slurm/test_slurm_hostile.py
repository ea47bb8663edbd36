"""Hostile and broken Slurm images: one BadInputError line (exit 2), never a traceback or a hang."""

from __future__ import annotations

import os
import random
import struct

import pytest
from conftest import mksquashfs_dir
from sifwriter import DATA_GENERIC_JSON, DATA_PARTITION, DESCRIPTOR, FS_ENCRYPTED_SQUASH, FS_EXT3, Obj, write_sif

from imgcheck import api
from imgcheck.cli.main import main
from imgcheck.errors import BadInputError, ImgcheckError, UnavailableError
from imgcheck.sources.enroot import enroot_source
from imgcheck.sources.read_options import ReadOptions
from imgcheck.view.layer_index import Limits
from imgcheck.view.reader import index_image_layer
from imgcheck.view.squashfs import SquashfsImage
from imgcheck.view.wants import Want, WantSet

EVERYTHING = WantSet([Want(r"(?s:.*)", content=True, max_bytes=1 << 20)])


def _small_tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile-tree")
    (root / "etc").mkdir()
    (root / "etc" / "os-release").write_bytes(b'ID=debian\nVERSION_ID="12"\n')
    (root / "lib").mkdir()
    (root / "lib" / "big").write_bytes(bytes(range(256)) * 900)
    for i in range(40):
        (root / "lib" / f"f{i}").write_bytes(b"x" * i)
    os.symlink("lib/f3", root / "link")
    return root


@pytest.fixture(scope="module")
def small_sqsh(tmp_path_factory):
    out = tmp_path_factory.mktemp("hostile") / "small.sqsh"
    return mksquashfs_dir(str(_small_tree(tmp_path_factory)), str(out), ["-comp", "gzip", "-no-xattrs"])


@pytest.fixture(scope="module")
def small_raw_sqsh(tmp_path_factory):
    """Uncompressed tables and data: mutations hit the structures themselves, not a checksum."""
    out = tmp_path_factory.mktemp("hostile") / "raw.sqsh"
    return mksquashfs_dir(str(_small_tree(tmp_path_factory)), str(out), ["-noI", "-noD", "-noF", "-noX", "-no-xattrs"])


def inspect(ref: str):
    return api.inspect_image(ref, ReadOptions(use_cache=False))


def read_everything(path: str) -> None:
    source = enroot_source(path)
    try:
        image = source.open()
        index_image_layer(image, image.layers[0], EVERYTHING, Limits())
    finally:
        source.close()


def one_line_exit_2(ref: str, capsys) -> str:
    assert main(["inspect", ref, "-q"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("imgcheck: error: ") and "Traceback" not in err
    return err


# -- squashfs -------------------------------------------------------------------------------


def test_garbage_is_not_a_squashfs(tmp_path, capsys):
    bad = tmp_path / "garbage.sqsh"
    bad.write_bytes(random.Random(1).randbytes(64 * 1024))
    with pytest.raises(BadInputError, match="not a squashfs"):
        inspect(f"enroot:{bad}")
    assert "not a squashfs" in one_line_exit_2(f"enroot:{bad}", capsys)


@pytest.mark.parametrize("size", [0, 10, 95])
def test_too_short_file(tmp_path, size):
    bad = tmp_path / "short.sqsh"
    bad.write_bytes(b"hsqs" + bytes(max(0, size - 4)) if size else b"")
    with pytest.raises(BadInputError):
        inspect(f"enroot:{bad}")


def test_truncated_squashfs(small_sqsh, tmp_path, capsys):
    data = open(small_sqsh, "rb").read()
    bad = tmp_path / "truncated.sqsh"
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(BadInputError, match="truncated"):
        inspect(f"enroot:{bad}")
    one_line_exit_2(f"enroot:{bad}", capsys)


def test_missing_file_is_unavailable_and_directory_is_bad_input(tmp_path):
    with pytest.raises(UnavailableError):
        inspect(f"enroot:{tmp_path}/nope.sqsh")
    with pytest.raises(BadInputError):
        inspect(f"enroot:{tmp_path}")
    with pytest.raises(UnavailableError):
        inspect(f"sif:{tmp_path}/nope.sif")


def test_directory_loop_is_refused(tmp_path):
    """A directory entry pointing back at the root: refused, not walked forever."""
    root = tmp_path / "tree"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "file").write_bytes(b"x")
    sqsh = mksquashfs_dir(str(root), str(tmp_path / "loop.sqsh"), ["-noI", "-noD", "-noF", "-noX", "-no-xattrs"])
    with open(sqsh, "r+b") as fh:
        fs = SquashfsImage(fh, 0, os.path.getsize(sqsh), "t")
        root_inode = fs.inode(fs.sb.root_inode)
        assert root_inode.dir_offset + 20 < 8192  # the root listing sits in the first (uncompressed) block
        at = fs.sb.directory_table_start + root_inode.dir_block + 2 + root_inode.dir_offset
        fh.seek(at)
        count, start, _number = struct.unpack("<III", fh.read(12))
        name = fh.read(8 + 3)[8:]
        assert (count, name) == (0, b"sub")
        fh.seek(at + 4)
        fh.write(struct.pack("<I", fs.sb.root_inode >> 16))  # the header's inode block ...
        fh.seek(at + 12)
        fh.write(struct.pack("<H", fs.sb.root_inode & 0xFFFF))  # ... and the entry's offset: the root
    with pytest.raises(BadInputError, match="loops"):
        read_everything(sqsh)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("image", ["small_sqsh", "small_raw_sqsh"])
def test_corrupted_bytes_never_escape_as_other_errors(image, request, tmp_path, seed):
    """Flip bytes all over a real image (mostly in the metadata tables): each read either works or
    ends in an imgcheck error; nothing else (IndexError, struct.error, zlib.error, MemoryError...)."""
    data = bytearray(open(request.getfixturevalue(image), "rb").read())
    fs_start = struct.unpack_from("<Q", data, 64)[0]  # inode_table_start
    rnd = random.Random(seed)
    outcomes = {"ok": 0, "error": 0}
    for _ in range(40):
        bad = bytearray(data)
        for _ in range(rnd.randint(1, 4)):
            pos = rnd.randrange(fs_start - 64, len(bad)) if rnd.random() < 0.8 else rnd.randrange(0, 96)
            bad[pos] = rnd.randrange(256)
        path = tmp_path / "mutant.sqsh"
        path.write_bytes(bad)
        try:
            read_everything(str(path))
            outcomes["ok"] += 1
        except ImgcheckError:
            outcomes["error"] += 1
    assert outcomes["ok"] + outcomes["error"] == 40


# -- SIF ------------------------------------------------------------------------------------


def test_truncated_sif(small_sqsh, tmp_path, capsys):
    sif = write_sif(str(tmp_path / "ok.sif"), [Obj(DATA_PARTITION, path=small_sqsh)])
    data = open(sif, "rb").read()
    for cut, why in ((50, "truncated SIF"), (5000, "descriptor table"), (len(data) - 100, "outside")):
        bad = tmp_path / f"cut{cut}.sif"
        bad.write_bytes(data[:cut])
        with pytest.raises(BadInputError, match=why):
            inspect(f"sif:{bad}")
    one_line_exit_2(f"sif:{tmp_path}/cut50.sif", capsys)


def test_descriptor_pointing_outside_the_file(small_sqsh, tmp_path, capsys):
    sif = write_sif(str(tmp_path / "ok.sif"), [Obj(DATA_PARTITION, path=small_sqsh)])
    with open(sif, "r+b") as fh:
        fh.seek(4096 + 17)  # descriptor 0: datatype, used, id, groupid, linkedid, then int64 offset
        fh.write(struct.pack("<q", 1 << 40))
    with pytest.raises(BadInputError, match="descriptor 0 points at .* outside"):
        inspect(f"sif:{sif}")
    with open(sif, "r+b") as fh:
        fh.seek(4096 + 17)
        fh.write(struct.pack("<qq", 32768, -5))  # a negative size
    with pytest.raises(BadInputError, match="outside"):
        inspect(f"sif:{sif}")
    one_line_exit_2(f"sif:{sif}", capsys)


def test_not_a_sif_and_wrong_version(small_sqsh, tmp_path):
    with pytest.raises(BadInputError, match="not a SIF"):
        inspect(f"sif:{small_sqsh}")
    sif = write_sif(str(tmp_path / "v.sif"), [Obj(DATA_PARTITION, path=small_sqsh)])
    with open(sif, "r+b") as fh:
        fh.seek(42)
        fh.write(b"99\0")
    with pytest.raises(BadInputError, match="version '99'"):
        inspect(f"sif:{sif}")


def test_hostile_descriptor_count(small_sqsh, tmp_path):
    sif = write_sif(str(tmp_path / "n.sif"), [Obj(DATA_PARTITION, path=small_sqsh)])
    with open(sif, "r+b") as fh:
        fh.seek(64 + 8 * 3)  # DescriptorsTotal
        fh.write(struct.pack("<q", 1 << 40))
    with pytest.raises(BadInputError, match="descriptors"):
        inspect(f"sif:{sif}")


@pytest.mark.parametrize("fstype,why", [(FS_ENCRYPTED_SQUASH, "encrypted"), (FS_EXT3, "no squashfs partition")])
def test_partitions_we_cannot_read(small_sqsh, tmp_path, fstype, why):
    sif = write_sif(str(tmp_path / "p.sif"), [Obj(DATA_PARTITION, path=small_sqsh, fstype=fstype)])
    with pytest.raises(BadInputError, match=why):
        inspect(f"sif:{sif}")


def test_partition_holding_garbage(tmp_path):
    sif = write_sif(str(tmp_path / "g.sif"), [Obj(DATA_PARTITION, data=random.Random(2).randbytes(8192))])
    with pytest.raises(BadInputError, match="not a squashfs"):
        inspect(f"sif:{sif}")


def test_bad_oci_config_json(small_sqsh, tmp_path):
    sif = write_sif(
        str(tmp_path / "j.sif"),
        [Obj(DATA_GENERIC_JSON, name="oci-config.json", data=b"{nope"), Obj(DATA_PARTITION, path=small_sqsh)],
    )
    with pytest.raises(BadInputError, match="oci-config.json is not valid JSON"):
        inspect(f"sif:{sif}")


def test_sif_env_script_fallback_and_arch(small_sqsh, tmp_path):
    """No oci-config.json object: Env comes from Apptainer's 10-docker2singularity.sh, read not run."""
    from imgcheck.sources.sif import parse_docker2singularity

    script = (
        '#!/bin/sh\nexport PATH="/usr/local/nvidia/bin:/usr/bin"\n'
        'export CUDA_VERSION="${CUDA_VERSION:-"12.4.1"}"\n'
        'export NCCL_IB_HCA="${NCCL_IB_HCA:-"mlx5_\\\\$x \\\\"q\\\\""}"\n'
        'export EMPTY="${EMPTY:-}"\n'
        'export EVIL="$(rm -rf /)"\n'
        "echo not-an-export\n"
    )
    assert parse_docker2singularity(script) == [
        "PATH=/usr/local/nvidia/bin:/usr/bin",
        "CUDA_VERSION=12.4.1",
        'NCCL_IB_HCA=mlx5_$x "q"',
        "EMPTY=",
    ]
    assert DESCRIPTOR.size == 585
    sif = write_sif(str(tmp_path / "a.sif"), [Obj(DATA_PARTITION, path=small_sqsh, arch=b"04")])
    facts = inspect(f"sif:{sif}")
    assert facts.platform == "linux/arm64" and facts.os.version_id == "12"
