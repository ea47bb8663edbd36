"""The squashfs reader against trees made on disk and squashed by Debian's mksquashfs.

Every compressor mksquashfs offers, uncompressed tables, tiny blocks, fragments and none: the
reader must list exactly the tree that was squashed, with the same kinds, symlink targets and bytes.
"""

from __future__ import annotations

import os
import stat

import pytest
from conftest import mksquashfs_dir

from imgcheck.sources.enroot import enroot_source
from imgcheck.view.fileview import FileView
from imgcheck.view.image_env import with_env_from_view
from imgcheck.view.layer_index import FILE, OTHER, SYMLINK, Limits, path_hash
from imgcheck.view.reader import index_image_layer
from imgcheck.view.wants import Want, WantSet

EVERYTHING = WantSet([Want(r"(?s:.*)", content=True, max_bytes=64 * 1024 * 1024)])


def _write(root: bytes, rel: bytes, data: bytes) -> None:
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(data)


def make_tree(root: str) -> None:
    r = os.fsencode(root)
    rnd = os.urandom  # incompressible bytes exercise uncompressed data blocks in every compressor
    for size in (0, 1, 4095, 4096, 4097, 131072, 2 * 131072 + 5):
        _write(r, b"sizes/f%d" % size, (b"abc" * (size // 3 + 1))[:size])
    _write(r, b"sizes/random", rnd(300_000))
    _write(r, b"names/with space and\ttab", b"spaces")
    _write(r, b"names/new\nline", b"newline")
    _write(r, "names/ünïcödé".encode(), b"unicode")
    _write(r, b"names/not-utf8-\xff\xfe", b"bytes")
    _write(r, b"etc/os-release", b'ID=debian\nVERSION_ID="12"\n')
    _write(
        r, b"etc/environment", b"PATH=/usr/local/bin:/usr/bin\nNCCL_DEBUG=INFO\n# comment\n\nLD_LIBRARY_PATH=/a:/b=c\n"
    )
    sparse = os.path.join(r, b"sizes/sparse")
    with open(sparse, "wb") as fh:
        fh.seek(3 * 131072 + 17)
        fh.write(b"end")
    os.symlink(b"../sizes/f1", os.path.join(r, b"names/rel-link"))
    os.symlink(b"/etc/os-release", os.path.join(r, b"names/abs-link"))
    os.symlink(b"does/not/exist", os.path.join(r, b"names/dangling"))
    os.symlink(b"x" * 1000, os.path.join(r, b"names/long-target"))
    os.link(os.path.join(r, b"sizes/f4097"), os.path.join(r, b"names/hardlink"))
    os.mkfifo(os.path.join(r, b"names/fifo"))
    os.makedirs(os.path.join(r, b"empty/dir"))
    for i in range(600):  # > 256 entries per directory header, listing spans metadata blocks
        _write(r, b"many/entry-%04d-with-a-longish-name" % i, b"%d" % i)
    deep = b"/".join(b"d%d" % i for i in range(40))
    _write(r, b"deep/" + deep + b"/leaf", b"leaf")


def walk_tree(root: str) -> dict[str, tuple]:
    """path -> (kind, bytes or link target), as the reader should report it (paths as str)."""
    expect = {}
    r = os.fsencode(root)
    for dirpath, dirnames, filenames in os.walk(r):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, r).decode("utf-8", "surrogateescape")
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                expect[rel] = (SYMLINK, os.readlink(full).decode("utf-8", "surrogateescape"))
            elif stat.S_ISREG(st.st_mode):
                with open(full, "rb") as fh:
                    expect[rel] = (FILE, fh.read())
            elif not stat.S_ISDIR(st.st_mode):
                expect[rel] = (OTHER, None)
    return expect


def read_all(sqsh: str):
    """The opened image (its Env from the view, as api.inspect_image fills it) and its one layer's index."""
    source = enroot_source(sqsh)
    image = source.open()
    try:
        idx = index_image_layer(image, image.layers[0], EVERYTHING, Limits())
    finally:
        source.close()
    return with_env_from_view(image, FileView([idx])), idx


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("tree") / "root")
    os.makedirs(root)
    make_tree(root)
    return root, walk_tree(root)


VARIANTS = {
    "gzip": ["-comp", "gzip"],
    "lzo-enroot-default": ["-comp", "lzo", "-noD"],
    "lzo": ["-comp", "lzo"],
    "xz": ["-comp", "xz"],
    "lzma": ["-comp", "lzma"],
    "lz4": ["-comp", "lz4"],
    "zstd": ["-comp", "zstd"],
    "uncompressed": ["-noI", "-noD", "-noF", "-noX"],
    "4k-blocks-all-fragments": ["-b", "4096", "-always-use-fragments"],
    "no-fragments": ["-no-fragments", "-comp", "zstd"],
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_reader_lists_exactly_the_squashed_tree(variant, tree, tmp_path):
    root, expect = tree
    sqsh = mksquashfs_dir(root, str(tmp_path / f"{variant}.sqsh"), VARIANTS[variant] + ["-no-xattrs"])
    image, idx = read_all(sqsh)
    got = {
        p: (e.kind, e.data if e.kind == FILE else e.linkname if e.kind == SYMLINK else None)
        for p, e in idx.entries.items()
    }
    assert got == expect
    assert not any(e.truncated for e in idx.entries.values())
    # every non-directory is known by hash (what hides lower layers' paths in a merged view)
    assert list(idx.nondir_hashes) == sorted({path_hash(p) for p in expect})
    assert image.config == {
        "config": {"Env": ["PATH=/usr/local/bin:/usr/bin", "NCCL_DEBUG=INFO", "LD_LIBRARY_PATH=/a:/b=c"]}
    }


def test_only_wanted_files_are_read_and_big_ones_are_kept_by_name(tree, tmp_path):
    root, _ = tree
    sqsh = mksquashfs_dir(root, str(tmp_path / "w.sqsh"), ["-comp", "gzip"])
    wants = WantSet([Want(r"sizes/f.*", content=True, max_bytes=5000), Want(r"etc/os-release")])
    source = enroot_source(sqsh)
    image = source.open()
    idx = index_image_layer(image, image.layers[0], wants, Limits())
    source.close()
    files = {p: e for p, e in idx.entries.items() if e.kind == FILE}
    assert set(files) == {
        "sizes/f0",
        "sizes/f1",
        "sizes/f4095",
        "sizes/f4096",
        "sizes/f4097",
        "sizes/f131072",
        "sizes/f262149",
        "etc/os-release",
    }
    assert files["sizes/f4096"].data == (b"abc" * 1366)[:4096]
    assert files["sizes/f131072"].data is None and files["sizes/f131072"].truncated
    assert files["sizes/f131072"].size == 131072
    assert files["etc/os-release"].data is None and not files["etc/os-release"].truncated
    # symlinks are always kept, whatever is wanted
    assert idx.entries["names/abs-link"].linkname == "/etc/os-release"


def test_entry_limit_is_enforced(tree, tmp_path):
    from imgcheck.errors import LimitExceededError

    root, _ = tree
    sqsh = mksquashfs_dir(root, str(tmp_path / "l.sqsh"), [])
    source = enroot_source(sqsh)
    image = source.open()
    with pytest.raises(LimitExceededError, match="more than 100 entries"):
        index_image_layer(image, image.layers[0], EVERYTHING, Limits(max_entries=100))
    source.close()
