"""The layer walk and merged view: whiteouts, opaque dirs, symlinks, hard links, path safety."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from imagebuild import Dir, Hardlink, Opaque, Symlink, Whiteout, make_layer

from imgcheck.errors import BadInputError
from imgcheck.view.fileview import FileView
from imgcheck.view.layer_index import index_layer, normalise
from imgcheck.view.wants import Want, WantSet

WANTS = WantSet((Want(r"(?:[^/]+/)*[^/]*\.(?:so[.0-9]*|conf|txt)", content=True),))


def view_of(*layers: dict) -> FileView:
    indexes = [index_layer(io.BytesIO(make_layer(files)), f"sha256:{i:064x}", WANTS) for i, files in enumerate(layers)]
    return FileView(indexes)


def test_upper_layer_file_wins():
    view = view_of({"etc/a.conf": b"lower"}, {"etc/a.conf": b"upper"})
    assert view.read("etc/a.conf") == b"upper"
    assert view.file("etc/a.conf").layer == f"sha256:{1:064x}"


def test_whiteout_hides_lower_file_only():
    view = view_of({"etc/a.conf": b"x", "etc/b.conf": b"y"}, {"etc/a.conf": Whiteout()})
    assert view.read("etc/a.conf") is None
    assert view.read("etc/b.conf") == b"y"


def test_whiteout_of_directory_hides_its_contents():
    view = view_of({"opt/lib/x.so": b"x"}, {"opt/lib": Whiteout()})
    assert view.read("opt/lib/x.so") is None


def test_whiteout_does_not_hide_same_layer_or_upper_files():
    view = view_of({"a/x.so": b"1"}, {"a/x.so": Whiteout()}, {"a/x.so": b"3"})
    assert view.read("a/x.so") == b"3"


def test_opaque_directory_hides_lower_contents_but_keeps_its_own():
    view = view_of({"opt/d/old.so": b"old", "opt/keep.so": b"k"}, {"opt/d": Opaque(), "opt/d/new.so": b"new"})
    assert view.read("opt/d/old.so") is None
    assert view.read("opt/d/new.so") == b"new"
    assert view.read("opt/keep.so") == b"k"


def test_file_replacing_directory_hides_lower_tree():
    # an upper regular file (not wanted itself) at a path that was a directory below
    view = view_of({"usr/lib64/x.so": b"x"}, {"usr/lib64": b"now a file"})
    assert view.read("usr/lib64/x.so") is None


def test_symlink_chain_relative_and_absolute():
    view = view_of(
        {
            "usr/lib/x86_64-linux-gnu/libfoo.so.1.2.3": b"real",
            "usr/lib/x86_64-linux-gnu/libfoo.so.1": Symlink("libfoo.so.1.2.3"),
            "lib": Symlink("usr/lib"),
            "opt/link.so": Symlink("/lib/x86_64-linux-gnu/libfoo.so.1"),
        }
    )
    ref = view.file("opt/link.so")
    assert ref is not None and ref.data == b"real"
    assert ref.real_path == "usr/lib/x86_64-linux-gnu/libfoo.so.1.2.3"


def test_symlink_directory_swap_in_upper_layer():
    # merged-usr conversion: lower has lib/ as dir, upper makes lib a symlink
    view = view_of({"lib/a.so": b"old"}, {"lib": Symlink("usr/lib"), "usr/lib/a.so": b"new"})
    assert view.read("lib/a.so") == b"new"


def test_symlink_loop_detected():
    view = view_of({"a.so": Symlink("b.so"), "b.so": Symlink("a.so")})
    assert view.file("a.so") is None  # no hang, no exception


def test_symlink_cannot_escape_root():
    view = view_of({"etc/x.conf": Symlink("../../../../etc/passwd"), "etc/passwd": b"image passwd"})
    # ../ clamps at the image root: it resolves to the image's /etc/passwd, never the host's
    assert view.resolve("etc/x.conf") == "etc/passwd"


def test_absolute_symlink_is_relative_to_image_root():
    view = view_of({"etc/y.conf": Symlink("/etc/real.conf"), "etc/real.conf": b"inside"})
    assert view.read("etc/y.conf") == b"inside"


def test_hard_link_to_kept_target():
    view = view_of({"usr/lib/libz.so.1": b"data", "usr/lib/libz-copy.so": Hardlink("usr/lib/libz.so.1")})
    assert view.read("usr/lib/libz-copy.so") == b"data"


def test_hard_link_to_unwanted_target_is_re_read():
    import tempfile

    from imagebuild import build_oci, write_oci_dir

    from imgcheck.sources.oci_layout import OciLayoutSource
    from imgcheck.view.reader import read_view

    layer = make_layer({"data/blob.bin": b"payload", "usr/lib/libq.so.1": Hardlink("data/blob.bin")})
    with tempfile.TemporaryDirectory() as tmp:
        write_oci_dir(tmp, build_oci([layer]))
        src = OciLayoutSource.from_dir(tmp)
        view, _ = read_view(src.open(), WANTS)
        src.close()
    assert view.read("usr/lib/libq.so.1") == b"payload"


@pytest.mark.parametrize(
    "name,expected",
    [
        ("./usr/lib/x", "usr/lib/x"),
        ("/abs/path", "abs/path"),
        ("../../etc/passwd", "etc/passwd"),
        ("a/../../b", "b"),
        ("./", None),
        ("usr/lib/", "usr/lib"),
        ("usr//lib/./x", "usr/lib/x"),
        ("usr\\lib\\x", "usr/lib/x"),
        (".hidden/x", ".hidden/x"),
        ("./etc/.wh.passwd", "etc/.wh.passwd"),
        ("a/b/..", "a"),
    ],
)
def test_normalise_never_leaves_root(name, expected):
    assert normalise(name) == expected


def _normalise_by_parts(name):
    parts = []
    for part in name.replace("\\", "/").split("/"):
        if part == "..":
            parts = parts[:-1]
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts) or None


@settings(max_examples=500)
@given(st.lists(st.sampled_from(["usr", "lib", ".", "..", "", ".wh.x", "a.b", "\\", "./"]), max_size=8))
def test_normalise_fast_path_agrees_with_resolving_every_part(parts):
    name = "/".join(parts)
    assert normalise(name) == _normalise_by_parts(name)


@settings(max_examples=300)
@given(
    st.lists(
        st.sampled_from(
            [
                "usr",
                "lib",
                "libibverbs.so.1",
                "libibverbs",
                "libmlx5-rdmav34.so",
                "ucx.pc",
                "etc",
                "os-release",
                "x86_64-linux-gnu",
                "dist-packages",
                "libnccl.so.2",
            ]
        ),
        min_size=1,
        max_size=6,
    )
)
def test_combined_wants_match_exactly_what_the_patterns_match(parts):
    import re

    from imgcheck.extractors.assemble import ALL_WANTS, want_set

    path = "/".join(parts)
    assert want_set().wanted(path) == any(re.fullmatch(w.pattern, path) for w in ALL_WANTS)


def test_truncated_layer_is_bad_input():
    data = make_layer({"etc/a.conf": b"x" * 5000})
    with pytest.raises(BadInputError):
        index_layer(io.BytesIO(data[:3000]), "sha256:" + "0" * 64, WANTS)


def test_corrupt_gzip_layer_is_bad_input():
    import gzip

    data = gzip.compress(make_layer({"etc/a.conf": b"x" * 5000}))
    corrupt = data[:40] + bytes(b ^ 0xFF for b in data[40:80]) + data[80:]
    with pytest.raises(BadInputError):
        index_layer(io.BytesIO(corrupt), "sha256:" + "0" * 64, WANTS)


def test_content_over_limit_is_kept_by_name_only():
    wants = WantSet((Want(r"big\.txt", content=True, max_bytes=10),))
    idx = index_layer(io.BytesIO(make_layer({"big.txt": b"x" * 100})), "sha256:" + "0" * 64, wants)
    entry = idx.entries["big.txt"]
    assert entry.data is None and entry.truncated and entry.size == 100


def test_unwanted_files_are_not_kept():
    idx = index_layer(
        io.BytesIO(make_layer({"home/user/notes.md": b"x", "etc/a.conf": b"y", "d": Dir()})),
        "sha256:" + "0" * 64,
        WANTS,
    )
    assert set(idx.entries) == {"etc/a.conf"}
    assert idx.has_nondir("home/user/notes.md") and not idx.has_nondir("d")


def test_whiteouts_naming_parents_hide_nothing_above():
    layer = make_layer({"etc/.wh..": b"", "etc/.wh...": b"", "a/b/.wh.": b""})
    idx = index_layer(io.BytesIO(layer), "sha256:" + "0" * 64, WANTS)
    assert idx.whiteouts == set()
    view = view_of({"etc/x.conf": b"kept", "a/b/c.conf": b"kept"}, {"etc/.wh..": b"", "a/b/.wh.": b""})
    assert view.read("etc/x.conf") == b"kept" and view.read("a/b/c.conf") == b"kept"


def test_hard_link_outside_root_is_clamped():
    view = view_of({"etc/shadow.conf": b"image", "usr/lib/evil.so": Hardlink("../../../etc/shadow.conf")})
    assert view.read("usr/lib/evil.so") == b"image"
