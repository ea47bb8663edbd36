"""Hostile input: property-based fuzzing of every image-side parser, and decompression bombs.

Each parser must end in facts or a documented error (BadInputError / its own documented
exception), never anything else, and in bounded time. Example counts are recorded in docs/reliability.md.
"""

from __future__ import annotations

import gzip
import io
import json
import tarfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from imagebuild import build_oci, make_layer, write_oci_dir

from imgcheck import api
from imgcheck.elf.reader import NotElf, read_elf
from imgcheck.errors import BadInputError, LimitExceededError, UsageError
from imgcheck.extractors.env import parse_nccl_conf
from imgcheck.extractors.os_release import parse_os_release
from imgcheck.extractors.packages import parse_apk_installed, parse_dpkg_status, parse_rpm_header
from imgcheck.model.node_io import parse_node_facts
from imgcheck.sources.manifest import layers_of_manifest
from imgcheck.sources.platform import parse_platform, select_manifest
from imgcheck.sources.read_options import ReadOptions
from imgcheck.view.layer_index import Limits, index_layer
from imgcheck.view.tarwalk import TarWalker
from imgcheck.view.wants import Want, WantSet

FUZZ = settings(max_examples=200, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
WANTS = WantSet((Want(r".*", content=True, max_bytes=1 << 16),))
VALID_TAR = make_layer({"etc/os-release": b"ID=debian\n", "usr/lib/libibverbs.so.1": b"\x7fELF" + b"\0" * 200})


@FUZZ
@given(st.binary(max_size=4096))
def test_tar_walker_on_random_bytes(data):
    try:
        for _ in TarWalker(io.BytesIO(data)):
            pass
    except BadInputError:
        pass


@FUZZ
@given(st.integers(0, len(VALID_TAR) - 1), st.integers(0, 255), st.integers(1, 64))
def test_tar_walker_on_mutated_tar(pos, value, span):
    data = bytearray(VALID_TAR)
    data[pos : pos + span] = bytes([value]) * min(span, len(data) - pos)
    try:
        idx = index_layer(io.BytesIO(bytes(data)), "sha256:" + "0" * 64, WANTS)
        assert idx.entry_count <= 10
    except BadInputError:
        pass


@FUZZ
@given(st.binary(max_size=2048))
def test_gzip_and_zstd_streams(data):
    for prefix in (b"\x1f\x8b\x08\x00", b"\x28\xb5\x2f\xfd"):
        try:
            index_layer(io.BytesIO(prefix + data), "sha256:" + "0" * 64, WANTS)
        except BadInputError:
            pass


@FUZZ
@given(st.binary(max_size=4096))
def test_elf_reader(data):
    try:
        read_elf(b"\x7fELF" + data)
    except NotElf:
        pass


@FUZZ
@given(st.binary(max_size=2048))
def test_rpm_header(data):
    try:
        parse_rpm_header(data)
    except ValueError:
        pass


@FUZZ
@given(st.binary(max_size=2048))
def test_text_databases(data):
    parse_dpkg_status(data, "var/lib/dpkg/status", None)
    parse_apk_installed(data, "lib/apk/db/installed", None)
    text = data.decode("utf-8", "replace")
    parse_os_release(text)
    parse_nccl_conf(text)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
    max_leaves=20,
)
NODE_KEYS = ["name", "schema_version", "kernel", "os", "rdma", "gpu", "limits", "labels", "unknown"]


@FUZZ
@given(st.dictionaries(st.sampled_from(NODE_KEYS), json_values, max_size=6))
def test_node_facts_json(doc):
    try:
        parse_node_facts(doc, "fuzz.json")
    except BadInputError:
        pass


@FUZZ
@given(json_values)
def test_manifests_and_indexes(doc):
    try:
        layers_of_manifest(doc, "fuzz")  # type: ignore[arg-type]
    except BadInputError:
        pass
    except AttributeError:
        assert not isinstance(doc, dict)  # only non-objects reach attribute access
        raise
    if isinstance(doc, dict):
        try:
            select_manifest(doc, parse_platform("linux/amd64"), "fuzz")
        except BadInputError:
            pass


@FUZZ
@given(st.text(max_size=30))
def test_platform_strings(text):
    try:
        parse_platform(text)
    except UsageError:
        pass


def test_decompression_bomb_is_limited(tmp_path, monkeypatch, capsys):
    from imgcheck.cli.main import main

    bomb = make_layer({"zeros.bin": b"\0" * (8 * 1024 * 1024)})
    oci = write_oci_dir(str(tmp_path / "bomb"), build_oci([bomb]))
    assert len(gzip.compress(bomb)) < 100_000
    monkeypatch.setenv("IMGCHECK_MAX_LAYER_BYTES", str(1024 * 1024))
    assert main(["inspect", f"oci-dir:{oci}", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "limit" in err and err.count("\n") == 1


def test_many_entries_are_limited():
    layer = make_layer({f"f{i}": b"" for i in range(50)})
    with pytest.raises(LimitExceededError):
        index_layer(io.BytesIO(layer), "sha256:" + "0" * 64, WANTS, Limits(max_entries=10))


def test_bad_limit_env_is_usage_error(tmp_path, monkeypatch, capsys):
    from imgcheck.cli.main import main

    oci = write_oci_dir(str(tmp_path / "x"), build_oci([make_layer({"a": b"b"})]))
    monkeypatch.setenv("IMGCHECK_MAX_LAYER_ENTRIES", "lots")
    assert main(["inspect", f"oci-dir:{oci}"]) == 2
    assert "IMGCHECK_MAX_LAYER_ENTRIES" in capsys.readouterr().err


def test_huge_dpkg_status_is_name_only(tmp_path, monkeypatch):
    """A 'dpkg status' over the read limit is noted, not read into memory."""
    from imgcheck.extractors import assemble

    shrunk = tuple(Want(w.pattern, w.content, 16) if "dpkg/status" in w.pattern else w for w in assemble.ALL_WANTS)
    monkeypatch.setattr(assemble, "ALL_WANTS", shrunk)
    big = b"Package: x\nVersion: 1\nStatus: install ok installed\n\n" * 10
    layer = make_layer({"var/lib/dpkg/status": big, "etc/os-release": b"ID=debian\n"})
    oci = write_oci_dir(str(tmp_path / "big"), build_oci([layer]))
    facts = api.inspect_image(f"oci-dir:{oci}", ReadOptions(use_cache=False))
    assert facts.packages == ()
    assert any("larger than the read limit" in n for n in facts.notes)
    assert facts.os.id == "debian"


def test_symlink_bomb_is_limited():
    from imagebuild import Symlink

    layer = make_layer({f"l{i}": Symlink(f"l{i + 1}") for i in range(30)})
    with pytest.raises(LimitExceededError):
        index_layer(io.BytesIO(layer), "sha256:" + "0" * 64, WANTS, Limits(max_symlinks=20))
