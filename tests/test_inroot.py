"""One in-root symlink resolution for the image view and the node's host root: the same tree of
links, once in an image's merged view and once on disk under a root, resolves to the same place,
and never out of the root."""

from __future__ import annotations

import os

import pytest

from imgcheck.node.hostroot import HostReadError, HostRoot
from imgcheck.view.fileview import FileView, SymlinkLoop
from imgcheck.view.layer_index import FILE, SYMLINK, Entry, LayerIndex

FILES = ["etc/passwd", "usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0", "opt/x/lib.so"]
LINKS = {
    "lib": "usr/lib",  # usrmerge, relative
    "usr/lib/x86_64-linux-gnu/libibverbs.so.1": "libibverbs.so.1.14.44.0",
    "usr/lib/x86_64-linux-gnu/libx.so": "/opt/x/lib.so",  # absolute: the root's /opt, not the reader's
    "escape": "../../../../etc/passwd",  # '..' stops at the root
    "abs-escape": "/../../etc/passwd",
    "loop-a": "loop-b",
    "loop-b": "loop-a",
}
ASKED = [
    "lib/x86_64-linux-gnu/libibverbs.so.1",
    "usr/lib/x86_64-linux-gnu/libx.so",
    "escape",
    "abs-escape",
    "usr/lib/../../etc/passwd",
    "./usr//lib/./x86_64-linux-gnu/libibverbs.so.1",
]


def view() -> FileView:
    layer = LayerIndex(digest="sha256:" + "0" * 64)
    for path in FILES:
        layer.entries[path] = Entry(path, FILE)
    for path, target in LINKS.items():
        layer.entries[path] = Entry(path, SYMLINK, linkname=target)
    return FileView([layer])


@pytest.fixture
def host(tmp_path):
    root = tmp_path / "host"
    for path in FILES:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(b"")
    for path, target in LINKS.items():
        os.symlink(target, root / path)
    return HostRoot(str(root))


@pytest.mark.parametrize("path", ASKED)
def test_the_image_view_and_the_host_root_resolve_alike(path, host):
    in_view = view().resolve(path)
    on_host = host.resolve(path)
    assert on_host == os.path.join(host.root, in_view)
    assert in_view in FILES  # inside the root, at a real file


def test_a_symlink_loop_stops_both(host):
    with pytest.raises(SymlinkLoop):
        view().resolve("loop-a")
    with pytest.raises(HostReadError, match="too many symlinks"):
        host.resolve("loop-a")


def test_a_missing_component_is_absent_on_the_host_and_named_in_the_view(host):
    assert host.resolve("lib/nothing/here") is None
    assert view().resolve("lib/nothing/here") == "usr/lib/nothing/here"  # the view names what a lookup finds absent


def test_dot_dot_after_a_symlink_climbs_from_its_target_as_the_kernel_does(host):
    # /lib -> usr/lib, so /lib/.. is /usr (not /): both readers agree
    assert view().resolve("lib/../etc/passwd") == "usr/etc/passwd"
    assert host.resolve("lib/../etc/passwd") is None  # no /usr/etc/passwd on this host
