"""The filesystem a container sees, as Docker produces it, for layers a hostile builder could write.

The reference is Docker itself: each case's image is `docker load`ed, `docker create`d and
`docker export`ed, and its regular files and symlinks compared with imgcheck's merged view
(test_matches_docker_export, when a daemon is reachable). The expected sets written below are what
Docker 20.10 (overlay2 storage driver) exported for these exact layers; they keep the cases
meaningful where no daemon runs.
"""

from __future__ import annotations

import io
import os
import subprocess
import tarfile

import pytest
from imagebuild import make_layer, sha256, write_docker_archive

from imgcheck.sources.docker_archive import DockerArchiveSource
from imgcheck.sources.read_options import ReadOptions
from imgcheck.view.fileview import FileView
from imgcheck.view.layer_index import FILE, SYMLINK, Limits, index_layer
from imgcheck.view.reader import read_view
from imgcheck.view.tarwalk import TarWalker
from imgcheck.view.wants import Want, WantSet

ALL = WantSet((Want(r".*", content=True, max_bytes=1 << 24),))
SOCKET = "/var/run/docker.sock"


def _tar(entries: list[tuple]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for kind, name, *rest in entries:
            info = tarfile.TarInfo(name)
            if kind == "f":
                info.size, info.mode = len(rest[0]), 0o644
                tar.addfile(info, io.BytesIO(rest[0]))
            elif kind == "d":
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            elif kind == "l":
                info.type, info.linkname = tarfile.SYMTYPE, rest[0]
                tar.addfile(info)
            elif kind == "g":  # a global PAX header (what `git archive` writes first)
                info.type, info.pax_headers = tarfile.XGLTYPE, rest[0]
                tar.addfile(info)
    return buf.getvalue()


def _global_pax_tar(records: dict, entries: list[tuple]) -> bytes:
    """A tar whose first member is a global PAX header holding `records` (as `git archive` writes)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT, pax_headers=records) as tar:
        for _kind, name, data in entries:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _nul_typed_dir(name: str) -> bytes:
    """A pre-POSIX directory header: typeflag '\\0', the name ending in '/'."""
    info = tarfile.TarInfo(name)
    info.mode = 0o755
    header = bytearray(info.tobuf(format=tarfile.USTAR_FORMAT)[:512])
    header[156] = 0
    header[148:156] = b" " * 8
    header[148:156] = b"%06o\0 " % sum(header)
    return bytes(header)


ELF = b"\x7fELF" + b"\0" * 60
CASES = {
    # a marker at the root of an upper layer: overlayfs never reads the root's opaque flag
    "opaque-root": (
        [
            _tar([("d", "etc"), ("f", "etc/a.txt", b"a"), ("f", "keep.txt", b"k")]),
            _tar([("f", ".wh..wh..opq", b""), ("f", "b.txt", b"b")]),
        ],
        {"b.txt", "etc/a.txt", "keep.txt"},
        set(),
    ),
    # a directory replacing a lower symlink: the link's target is not seen through it
    "dir-over-symlink": (
        [
            _tar([("d", "lib"), ("f", "lib/x.so", b"x"), ("l", "lib64", "lib")]),
            _tar([("d", "lib64"), ("f", "lib64/y.so", b"y")]),
        ],
        {"lib/x.so", "lib64/y.so"},
        set(),
    ),
    # ... also when the directory is only implied by a member's path (no entry of its own)
    "implied-dir-over-symlink": (
        [
            _tar([("d", "usr"), ("d", "usr/lib"), ("f", "usr/lib/a", b"a"), ("l", "lib", "usr/lib")]),
            _tar([("f", "lib/b", b"b")]),
        ],
        {"usr/lib/a", "lib/b"},
        set(),
    ),
    # '\0' typeflag on 'usr/': a directory, not an empty file hiding the lower usr/ tree
    "nul-typed-dir": (
        [
            _tar([("d", "usr"), ("d", "usr/lib"), ("f", "usr/lib/z", b"z")]),
            _nul_typed_dir("usr/") + _tar([("f", "usr/new", b"n")]),
        ],
        {"usr/lib/z", "usr/new"},
        set(),
    ),
    # a local PAX header before a global one is used up by it (Go's Reader.next)
    "global-pax-path": (
        [
            _tar([("d", "opt"), ("f", "opt/base", b"x")]),
            _tar([("g", "pax_global_header", {"path": "evil"}), ("f", "opt/real", b"r")]),
        ],
        {"opt/base", "opt/real"},
        set(),
    ),
    # a real global header: its path, linkpath and size apply to no member
    "global-pax-header": (
        [
            _tar([("d", "opt"), ("f", "opt/base", b"x")]),
            _global_pax_tar(
                {"path": "evil", "linkpath": "x", "size": "0"}, [("f", "opt/real", b"r"), ("f", "opt/two", b"22")]
            ),
        ],
        {"opt/base", "opt/real", "opt/two"},
        set(),
    ),
    "symlink-kept": (
        [
            _tar(
                [
                    ("d", "usr"),
                    ("d", "usr/lib"),
                    ("f", "usr/lib/libibverbs.so.1.14.50.0", ELF),
                    ("l", "usr/lib/libibverbs.so.1", "libibverbs.so.1.14.50.0"),
                ]
            )
        ],
        {"usr/lib/libibverbs.so.1.14.50.0"},
        {"usr/lib/libibverbs.so.1"},
    ),
}


def _archive(tmp_path, name: str, layers: list[bytes]) -> str:
    return write_docker_archive(str(tmp_path / f"{name}.tar"), layers, tag=f"imgcheck-overlay-test:{name}")


def _view(path: str) -> FileView:
    source = DockerArchiveSource(path)
    try:
        view, _ = read_view(source.open(), ALL, workers=1)
    finally:
        source.close()
    return view


def _files_and_links(view: FileView) -> tuple[set[str], set[str]]:
    files = {p for p, e in view.entries.items() if e.kind == FILE}
    links = {p for p, e in view.entries.items() if e.kind == SYMLINK}
    return files, links


@pytest.mark.parametrize("case", sorted(CASES))
def test_view_matches_what_docker_exported(tmp_path, case):
    layers, files, links = CASES[case]
    assert _files_and_links(_view(_archive(tmp_path, case, layers))) == (files, links)


def _docker_export(archive: str, tag: str) -> tuple[set[str], set[str]]:
    subprocess.run(["docker", "load", "-q", "-i", archive], check=True, capture_output=True)
    cid = subprocess.run(["docker", "create", tag, "/none"], check=True, capture_output=True, text=True).stdout.strip()
    try:
        exported = subprocess.run(["docker", "export", cid], check=True, capture_output=True).stdout
    finally:
        subprocess.run(["docker", "rm", cid], capture_output=True)
        subprocess.run(["docker", "rmi", tag], capture_output=True)
    files, links = set(), set()
    with tarfile.open(fileobj=io.BytesIO(exported)) as tar:
        for member in tar:
            name = member.name.rstrip("/")
            if name.startswith(
                ("dev", "proc", "sys", "etc/hosts", "etc/hostname", "etc/resolv.conf", "etc/mtab", ".dockerenv")
            ):
                continue  # what the runtime adds to every container
            if member.isfile():
                files.add(name)
            elif member.issym():
                links.add(name)
    return files, links


@pytest.mark.skipif(not os.path.exists(SOCKET), reason="no Docker daemon")
@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_docker_export(tmp_path, case):
    layers, _files, _links = CASES[case]
    archive = _archive(tmp_path, case, layers)
    assert _files_and_links(_view(archive)) == _docker_export(archive, f"imgcheck-overlay-test:{case}")


def _gnu_sparse(tmp_path, version: str) -> tuple[bytes, bytes]:
    """(a layer written by GNU tar --sparse --format=posix --sparse-version=V, the file's bytes)."""
    root = tmp_path / "root"
    (root / "usr/lib").mkdir(parents=True, exist_ok=True)
    path = root / "usr/lib/libibverbs.so.1"
    with open(path, "wb") as fh:
        fh.write(ELF + b"A" * 100)
        fh.seek(1 << 20)
        fh.write(b"middle")
        fh.seek(3 << 20)
        fh.write(b"end")
    out = tmp_path / f"sparse-{version}.tar"
    subprocess.run(
        ["tar", "-C", str(root), "--sparse", "--format=posix", f"--sparse-version={version}", "-cf", str(out), "usr"],
        check=True,
    )
    return out.read_bytes(), path.read_bytes()


@pytest.mark.parametrize("version", ["0.0", "0.1", "1.0"])
def test_pax_sparse_file_is_the_real_file(tmp_path, version):
    layer, content = _gnu_sparse(tmp_path, version)
    assert len(layer) < len(content)  # the holes really are holes in the archive
    idx = index_layer(io.BytesIO(layer), sha256(layer), ALL, Limits(), verify_uncompressed=True)
    entry = idx.entries["usr/lib/libibverbs.so.1"]
    assert entry.kind == FILE and entry.size == len(content) and entry.data == content
    assert not any("GNUSparseFile" in p for p in idx.entries)


def test_pax_sparse_over_the_content_limit_is_name_only(tmp_path):
    layer, content = _gnu_sparse(tmp_path, "1.0")
    small = WantSet((Want(r".*", content=True, max_bytes=1 << 20),))
    entry = index_layer(io.BytesIO(layer), sha256(layer), small, Limits()).entries["usr/lib/libibverbs.so.1"]
    assert entry.size == len(content) and entry.data is None and entry.truncated


@pytest.mark.parametrize(
    "pax",
    [
        {"GNU.sparse.major": "1", "GNU.sparse.minor": "0", "GNU.sparse.name": "f", "GNU.sparse.realsize": "10"},
        {"GNU.sparse.map": "0,5,3,5", "GNU.sparse.size": "10", "GNU.sparse.name": "f"},  # overlapping
        {"GNU.sparse.map": "0,50", "GNU.sparse.size": "10", "GNU.sparse.name": "f"},  # past the end
        {"GNU.sparse.map": "0,x", "GNU.sparse.size": "10", "GNU.sparse.name": "f"},
    ],
)
def test_malformed_sparse_maps_are_bad_input(pax):
    from imgcheck.view.tarwalk import TarFormatError

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("GNUSparseFile.0/f")
        info.size, info.pax_headers = 4, pax
        tar.addfile(info, io.BytesIO(b"abcd"))
    walker = TarWalker(io.BytesIO(buf.getvalue()))
    with pytest.raises(TarFormatError):
        for _member in walker:
            walker.read_data(1 << 20)


def test_symlink_to_a_file_no_want_collects_is_followed(tmp_path):
    """libibverbs.so.1 -> a file under a path no extractor asks for: its layer is read again and
    the library is found, not reported missing."""
    from imgcheck import api

    lower = make_layer(
        {"etc/os-release": b'ID=debian\nVERSION_ID="12"\n', "opt/vendor/blob/verbs-impl": b"\x7fELF" + b"\0" * 200}
    )
    upper = _tar(
        [
            ("d", "usr"),
            ("d", "usr/lib"),
            ("d", "usr/lib/x86_64-linux-gnu"),
            ("l", "usr/lib/x86_64-linux-gnu/libibverbs.so.1", "/opt/vendor/blob/verbs-impl"),
        ]
    )
    archive = write_docker_archive(str(tmp_path / "img.tar"), [lower, upper])
    view = _view(archive)
    ref = view.file("usr/lib/x86_64-linux-gnu/libibverbs.so.1")
    assert ref is not None and ref.real_path == "opt/vendor/blob/verbs-impl" and ref.data.startswith(b"\x7fELF")
    facts = api.inspect_image(f"docker-archive:{archive}", ReadOptions(use_cache=False))
    assert facts.rdma.libibverbs is not None


def test_hostile_upper_layer_cannot_hide_lower_libibverbs(tmp_path):
    """The opaque-root and '\\0'-directory tricks would have hidden the image's libibverbs (and so
    the mismatch it causes) from the check; Docker shows it, so imgcheck must too."""
    from imgcheck import api

    lib = "usr/lib/x86_64-linux-gnu/libibverbs.so.1"
    lower = make_layer({"etc/os-release": b"ID=debian\n", lib: ELF})
    for upper in (
        _tar([("f", ".wh..wh..opq", b""), ("f", "etc/other", b"x")]),
        _nul_typed_dir("usr/lib/x86_64-linux-gnu/") + _tar([("f", "etc/other", b"x")]),
    ):
        archive = write_docker_archive(str(tmp_path / "img.tar"), [lower, upper])
        facts = api.inspect_image(f"docker-archive:{archive}", ReadOptions(use_cache=False))
        assert facts.rdma.libibverbs is not None and facts.rdma.libibverbs.path == "/" + lib


def test_old_gnu_sparse_member_is_refused_as_docker_refuses_it(tmp_path):
    """GNU tar's default --sparse format writes typeflag 'S' members; Docker 20.10's `docker load`
    fails on them ("unhandled tar header type 83"), so the layer is bad input here too."""
    from imgcheck.errors import BadInputError

    root = tmp_path / "root"
    (root / "usr/lib").mkdir(parents=True)
    with open(root / "usr/lib/f", "wb") as fh:
        fh.write(b"head")
        fh.seek(1 << 20)
        fh.write(b"tail")
    out = tmp_path / "gnu.tar"
    subprocess.run(["tar", "-C", str(root), "--sparse", "--format=gnu", "-cf", str(out), "usr"], check=True)
    layer = out.read_bytes()
    with pytest.raises(BadInputError, match="old GNU sparse"):
        index_layer(io.BytesIO(layer), sha256(layer), ALL, Limits())
