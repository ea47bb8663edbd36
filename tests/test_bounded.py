"""Bounded work whatever the input: one line and exit 2 or 3 (never a traceback, never exit 1),
and no hang or unbounded memory from a tiny hostile input.

Hang cases are written so that the old code would not finish (quadratic or 2**32 loops on the
inputs below): a regression hangs the test run rather than making a timing assertion.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import sqlite3
import struct
import tarfile
import tracemalloc

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from imagebuild import build_oci, make_layer, sha256, write_docker_archive, write_oci_dir

from imgcheck import api, safejson
from imgcheck.cli.main import main
from imgcheck.errors import BadInputError, LimitExceededError, UnavailableError
from imgcheck.sources.read_options import ReadOptions

DEEP = "[" * 100_000 + "]" * 100_000
FUZZ = settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def one_line_exit(argv: list[str], capsys, code: int = 2) -> str:
    assert main(argv) == code
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("imgcheck: error:") and "Traceback" not in err, err
    return err


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def oci(tmp_path, name="img", layers=None):
    layers = layers or [make_layer({"etc/os-release": b'ID=debian\nVERSION_ID="12"\n'})]
    return write_oci_dir(str(tmp_path / name), build_oci(layers))


# -- deeply nested JSON, anywhere ---------------------------------------------------------------


def test_deep_index_json(tmp_path, home, capsys):
    path = oci(tmp_path)
    with open(os.path.join(path, "index.json"), "w") as fh:
        fh.write(DEEP)
    assert "nested too deeply" in one_line_exit(["inspect", f"oci-dir:{path}"], capsys)


def test_deep_config_blob(tmp_path, home, capsys):
    """A config blob that verifies against its digest but nests 100,000 levels."""
    layer = make_layer({"a": b"b"})
    image = build_oci([layer])
    config = f'{{"rootfs": {{"type": "layers", "diff_ids": ["{sha256(layer)}"]}}, "x": {DEEP}}}'.encode()
    manifest = json.loads(image.manifest)
    old = manifest["config"]["digest"]
    manifest["config"].update(digest=sha256(config), size=len(config))
    image.blobs.pop(old)
    image.blobs[sha256(config)] = config
    image.manifest = json.dumps(manifest).encode()
    assert "nested too deeply" in one_line_exit(
        ["inspect", f"oci-dir:{write_oci_dir(str(tmp_path / 'i'), image)}"], capsys
    )


@pytest.mark.parametrize("doc", [DEEP, '{"a":' * 50_000 + "1" + "}" * 50_000])
def test_deep_facts_and_node_facts(tmp_path, capsys, doc):
    path = tmp_path / "deep.json"
    path.write_text(doc)
    one_line_exit(["inspect", f"facts:{path}"], capsys)
    one_line_exit(["check", f"facts:{path}", "--node-facts", str(path)], capsys)


def test_number_of_thousands_of_digits(tmp_path, capsys):
    path = tmp_path / "n.json"
    path.write_text('{"schema_version": ' + "9" * 5000 + "}")
    one_line_exit(["inspect", f"facts:{path}"], capsys)


def test_deep_version_json_in_a_layer_is_unknown_not_a_crash(tmp_path, home):
    layer = make_layer({"etc/os-release": b"ID=debian\n", "usr/local/cuda/version.json": DEEP.encode()})
    facts = api.inspect_image(f"oci-dir:{oci(tmp_path, layers=[layer])}", ReadOptions(use_cache=False))
    assert facts.cuda is None or facts.cuda.version is None


@pytest.mark.parametrize("media_type", [["a"], {"x": 1}, 7, True])
def test_media_type_that_is_not_a_string(tmp_path, home, capsys, media_type):
    path = oci(tmp_path)
    with open(os.path.join(path, "index.json")) as fh:
        index = json.load(fh)
    index["manifests"][0]["mediaType"] = media_type
    with open(os.path.join(path, "index.json"), "w") as fh:
        json.dump(index, fh)
    assert "mediaType" in one_line_exit(["inspect", f"oci-dir:{path}"], capsys)


def test_layer_media_type_that_is_not_a_string():
    from imgcheck.sources.manifest import layers_of_manifest

    with pytest.raises(BadInputError, match="mediaType"):
        layers_of_manifest({"layers": [{"mediaType": ["x"], "digest": "sha256:" + "0" * 64}]}, "m")


# -- caches -------------------------------------------------------------------------------------


def _cache_files(home, kind):
    root = home / "cache" / kind
    return [os.path.join(b, f) for b, _d, fs in os.walk(root) for f in fs]


@pytest.mark.parametrize(
    "content",
    [
        json.dumps({"format": 2, "digest": "sha256:x", "entries": "not a list"}).encode(),
        json.dumps({"format": 2, "digest": 5}).encode(),
        json.dumps([1, 2, 3]).encode(),
        DEEP.encode(),
        json.dumps(
            {
                "format": 2,
                "digest": "d",
                "entries": [["p", "file", 10**30, 0, None, "!!", False]],
                "whiteouts": [],
                "opaque_dirs": [],
                "nondir_hashes": "",
                "dir_hashes": "",
                "entry_count": 1,
                "uncompressed_bytes": 1,
            }
        ).encode(),
    ],
)
def test_layer_cache_entry_of_the_wrong_shape_is_a_miss(tmp_path, home, content):
    from imgcheck.view.reader import ReadStats

    path = oci(tmp_path)
    api.inspect_image(f"oci-dir:{path}")
    for f in _cache_files(home, "facts"):
        os.unlink(f)
    (entry,) = _cache_files(home, "layers")
    with open(entry, "wb") as fh:
        fh.write(gzip.compress(content))
    stats = ReadStats()
    facts = api.inspect_image(f"oci-dir:{path}", ReadOptions(stats=stats))
    assert facts.os.id == "debian" and stats.layers_read and not stats.layers_cached


@pytest.mark.parametrize("content", [DEEP, "[]", '{"digest": 5}', '{"schema_version": 1, "os": [1]}'])
def test_facts_cache_entry_of_the_wrong_shape_is_a_miss(tmp_path, home, content):
    path = oci(tmp_path)
    api.inspect_image(f"oci-dir:{path}")
    for f in _cache_files(home, "facts"):
        with open(f, "w") as fh:
            fh.write(content)
    assert api.inspect_image(f"oci-dir:{path}").os.id == "debian"


# -- environment --------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["0", "nan", "inf", "-5", "1e400", "soon"])
def test_registry_timeout_must_be_finite_and_positive(monkeypatch, capsys, value):
    monkeypatch.setenv("IMGCHECK_REGISTRY_TIMEOUT", value)
    assert "IMGCHECK_REGISTRY_TIMEOUT" in one_line_exit(["inspect", "127.0.0.1:9/none/x:y", "--no-cache"], capsys)


@pytest.mark.parametrize("var", ["IMGCHECK_MAX_LAYER_BYTES", "IMGCHECK_MAX_WANTED_BYTES"])
def test_limit_env_of_thousands_of_digits_or_negative(tmp_path, monkeypatch, capsys, var):
    path = oci(tmp_path)
    for value in ("9" * 5000, "-1"):
        monkeypatch.setenv(var, value)
        assert var in one_line_exit(["inspect", f"oci-dir:{path}", "--no-cache"], capsys)


# -- the CLI's last line of defence -------------------------------------------------------------


@pytest.mark.parametrize(
    "exc,code",
    [
        (ZeroDivisionError("x"), 2),
        (RecursionError(), 2),
        (OSError(28, "No space"), 3),
        (MemoryError(), 3),
        (KeyError("k"), 2),
    ],
)
def test_unexpected_exceptions_are_one_line_and_never_exit_1(monkeypatch, capsys, exc, code):
    from imgcheck import api as api_module

    def boom(*args, **kwargs):
        raise exc

    monkeypatch.setattr(api_module, "inspect_image", boom)
    one_line_exit(["inspect", "oci-dir:/nonexistent"], capsys, code)


# -- hangs from tiny inputs ---------------------------------------------------------------------

LIBIBVERBS = "/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0"  # Debian's libibverbs1 (a real library)


@pytest.mark.skipif(not os.path.exists(LIBIBVERBS), reason="Debian libibverbs1 not installed")
def test_elf_version_definition_count_0xffffffff():
    """sh_info of .gnu.version_d = 0xFFFFFFFF and vd_next = 0: pyelftools would yield the first
    entry four billion times."""
    from elftools.elf.elffile import ELFFile

    from imgcheck.elf.reader import MAX_VERSIONS, read_elf

    data = bytearray(open(LIBIBVERBS, "rb").read())
    elf = ELFFile(io.BytesIO(bytes(data)))
    index = next(i for i, s in enumerate(elf.iter_sections()) if s.name == ".gnu.version_d")
    section = elf.get_section(index)
    struct.pack_into("<I", data, elf["e_shoff"] + index * elf["e_shentsize"] + 44, 0xFFFFFFFF)  # sh_info
    struct.pack_into("<I", data, section["sh_offset"] + 16, 0)  # vd_next of the first entry
    info = read_elf(bytes(data))
    assert len(info.defined_versions) <= MAX_VERSIONS
    assert read_elf(open(LIBIBVERBS, "rb").read()).defined_versions  # the genuine file still reads


def test_ofed_info_regex_does_not_backtrack():
    from imgcheck.extractors.rdma import _OFED_INFO

    assert _OFED_INFO.search("DOCA" * 200_000) is None
    assert _OFED_INFO.search("DOCA-" * 100_000 + "x") is None
    assert _OFED_INFO.search("MLNX_OFED_LINUX-" + "1" * 200_000) is None
    m = _OFED_INFO.search("junk\nMLNX_OFED_LINUX-24.10-1.1.4.0 (OFED-24.10-1.1.4):\n")
    assert m and m.group(2) == "24.10-1.1.4.0"
    assert _OFED_INFO.search("OFED-internal-24.10-1.1.4:").group(2) == "24.10-1.1.4"


def _rpmdb(setup: str) -> bytes:
    con = sqlite3.connect(":memory:")
    con.executescript(setup)
    data = con.serialize()
    con.close()
    return data


@pytest.mark.parametrize(
    "setup",
    [
        # a recursive view: endless rows
        "CREATE VIEW Packages AS WITH RECURSIVE c(blob) AS (SELECT 1 UNION ALL SELECT blob + 1 FROM c) SELECT blob FROM c;",
        # a table whose 'blob' values are not blobs: bytes(10**9) would allocate a gigabyte
        "CREATE TABLE Packages (hnum INTEGER PRIMARY KEY, blob); INSERT INTO Packages (blob) VALUES (1000000000), ('text');",
    ],
)
def test_hostile_rpmdb(setup):
    from imgcheck.extractors.packages import parse_rpmdb_sqlite

    try:
        assert parse_rpmdb_sqlite(_rpmdb(setup), "var/lib/rpm/rpmdb.sqlite", None) == []
    except sqlite3.DatabaseError:
        pass  # what extract() notes as an unreadable database


def test_symlink_target_of_many_dotdots():
    from imgcheck.view.fileview import FileView, SymlinkLoop
    from imgcheck.view.layer_index import SYMLINK, Entry, LayerIndex

    idx = LayerIndex(digest="d")
    idx.entries["a"] = Entry("a", SYMLINK, linkname="../" * 1300 + "etc/x")  # as long as Linux allows
    idx.entries["b"] = Entry("b", SYMLINK, linkname="../" * 500_000 + "etc/x")  # longer than any filesystem holds
    # 40 hops of the longest legal target: bounded work
    for i in range(40):
        idx.entries[f"c{i}"] = Entry(f"c{i}", SYMLINK, linkname="../" * 1300 + f"c{i + 1}")
    view = FileView([idx])
    assert view.resolve("a") == "etc/x"
    with pytest.raises(SymlinkLoop):
        view.resolve("b")
    assert view.resolve("c0") == "c40"


def test_large_and_many_global_pax_headers():
    from imgcheck.view.tarwalk import MAX_META, TarFormatError, TarWalker

    records = {f"k{i}": "v" * 100 for i in range(5000)}  # ~0.5 MiB of global records per header
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT, pax_headers=records) as tar:
        for i in range(300):
            info = tarfile.TarInfo(f"f{i}")
            tar.addfile(info, io.BytesIO(b""))
    assert [m.name for m in TarWalker(io.BytesIO(buf.getvalue()))] == [f"f{i}" for i in range(300)]
    huge = {"k": "v" * (MAX_META + 10)}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT, pax_headers=huge) as tar:
        tar.addfile(tarfile.TarInfo("f"), io.BytesIO(b""))
    with pytest.raises(TarFormatError):
        list(TarWalker(io.BytesIO(buf.getvalue())))


def test_index_json_that_is_a_fifo(tmp_path, home, capsys):
    path = oci(tmp_path)
    os.unlink(os.path.join(path, "index.json"))
    os.mkfifo(os.path.join(path, "index.json"))  # no writer: a plain open() would block for ever
    assert "regular file" in one_line_exit(["inspect", f"oci-dir:{path}"], capsys)


def test_archive_that_is_a_fifo(tmp_path, capsys):
    fifo = tmp_path / "a.tar"
    os.mkfifo(fifo)
    one_line_exit(["inspect", f"docker-archive:{fifo}"], capsys)


def test_compressed_outer_archive_inflate_cap(tmp_path, monkeypatch, capsys):
    from imgcheck.sources import blobstore

    layer = make_layer({"zeros": b"\0" * (4 << 20)})
    plain = write_docker_archive(str(tmp_path / "a.tar"), [layer])
    with open(plain, "rb") as src, gzip.open(str(tmp_path / "a.tar.gz"), "wb") as dst:
        dst.write(src.read())
    monkeypatch.setattr(blobstore, "MIN_INFLATE_CAP", 1 << 20)
    monkeypatch.setattr(blobstore, "MAX_INFLATE_RATIO", 10)
    assert "inflates" in one_line_exit(["inspect", f"docker-archive:{tmp_path / 'a.tar.gz'}", "--no-cache"], capsys)


def test_trickling_blob_hits_its_total_deadline():
    """A body that keeps sending (so no read times out) still ends at the blob's deadline."""
    from imgcheck.sources.http import ResumingBody

    class Trickle:
        status_code = 200
        headers: dict = {}

        class raw:
            @staticmethod
            def read(n, decode_content=False):
                return b"x"

        def close(self):
            pass

    now = [0.0]

    def clock():
        now[0] += 1.0  # one simulated second per read
        return now[0]

    body = ResumingBody(lambda offset: Trickle(), "blob sha256:x", None, 0, deadline=100.0, clock=clock)
    buf = bytearray(10)
    with pytest.raises(UnavailableError, match="too slow"):
        while body.readinto(buf):
            pass
    assert now[0] < 200


def test_total_wanted_bytes_cap(tmp_path, monkeypatch, capsys):
    layers = [
        make_layer(
            {
                f"usr/lib/x86_64-linux-gnu/libibverbs/lib{i}x{j}-rdmav34.so": b"\x7fELF" + b"\0" * 60_000
                for i in range(4)
            }
        )
        for j in range(3)
    ]
    path = write_oci_dir(str(tmp_path / "w"), build_oci(layers))
    monkeypatch.setenv("IMGCHECK_MAX_WANTED_BYTES", str(1_000_000))
    api.inspect_image(f"oci-dir:{path}", ReadOptions(use_cache=False))  # 3 layers x 240 kB
    monkeypatch.setenv("IMGCHECK_MAX_WANTED_BYTES", str(500_000))  # each layer under it, the image not
    assert "IMGCHECK_MAX_WANTED_BYTES" in one_line_exit(["inspect", f"oci-dir:{path}", "--no-cache"], capsys)
    monkeypatch.setenv("IMGCHECK_MAX_WANTED_BYTES", str(100_000))  # ... and per layer
    with pytest.raises(LimitExceededError):
        api.inspect_image(f"oci-dir:{path}", ReadOptions(use_cache=False))


def test_copies_an_upper_layer_replaces_do_not_count_toward_the_image_cap(tmp_path, monkeypatch):
    """Every layer that installs a package carries its own copy of the whole package database: only the copy the
    image shows is held, so three layers' copies of one path cost one copy."""
    layers = [
        make_layer({f"usr/lib/x86_64-linux-gnu/libibverbs/lib{i}-rdmav34.so": bytes([j]) * 60_000 for i in range(4)})
        for j in range(3)
    ]
    path = write_oci_dir(str(tmp_path / "w"), build_oci(layers))
    monkeypatch.setenv("IMGCHECK_MAX_WANTED_BYTES", str(500_000))  # one layer's 240 kB, not three
    facts = api.inspect_image(f"oci-dir:{path}", ReadOptions(use_cache=False))
    assert facts.rdma.providers  # the check went on: the top layer's files were read


def test_dpkg_status_is_parsed_in_bounded_memory():
    """A status of a million short lines: memory stays a small multiple of the file, not one
    Python string per line held at once."""
    from imgcheck.extractors.packages import parse_dpkg_status

    data = b"Package: p\nVersion: 1\nStatus: install ok installed\n" + b"X-Junk: y\n" * 1_000_000 + b"\n"
    tracemalloc.start()
    try:
        packages = parse_dpkg_status(data, "var/lib/dpkg/status", None)
        _now, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [p.name for p in packages] == ["p"]
    assert peak < 4 * len(data)


def test_dpkg_status_package_cap(monkeypatch):
    from imgcheck.extractors import packages

    monkeypatch.setattr(packages, "MAX_PACKAGES", 100)
    data = b"".join(b"Package: p%d\nVersion: 1\nStatus: install ok installed\n\n" % i for i in range(101))
    with pytest.raises(LimitExceededError):
        packages.parse_dpkg_status(data, "var/lib/dpkg/status", None)


# -- seeded fuzzing: the next member of each class ------------------------------------------------

JSON_LEAVES = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
JSON = st.recursive(
    JSON_LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "mediaType",
                    "digest",
                    "size",
                    "manifests",
                    "layers",
                    "config",
                    "rootfs",
                    "diff_ids",
                    "platform",
                    "os",
                    "architecture",
                    "annotations",
                    "schemaVersion",
                    "Config",
                    "Layers",
                    "RepoTags",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=40,
)


@FUZZ
@given(JSON, st.integers(0, 200))
def test_fuzz_documents_wrapped_deep(doc, depth):
    """Any JSON-shaped manifest/index/config, at any nesting: a documented error or a result."""
    from imgcheck.sources.manifest import check_config, layers_of_manifest, with_diff_ids
    from imgcheck.sources.platform import parse_platform, select_manifest

    text = "[" * depth + json.dumps(doc) + "]" * depth
    try:
        parsed = safejson.loads(text, "doc")
    except BadInputError:
        return
    for call in (
        lambda: layers_of_manifest(parsed, "m"),
        lambda: select_manifest(parsed, parse_platform("linux/amd64"), "i"),
        lambda: with_diff_ids([], check_config(parsed, "c"), "c"),
    ):
        try:
            call()
        except BadInputError:
            pass


@FUZZ
@given(JSON)
def test_fuzz_layer_cache_decode(doc):
    from imgcheck.view.cache import _decode

    try:
        _decode(doc, io.BytesIO(b"kept bytes").read)
    except (ValueError, KeyError, TypeError):
        pass


@FUZZ
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "GNU.sparse.major",
                "GNU.sparse.minor",
                "GNU.sparse.map",
                "GNU.sparse.name",
                "GNU.sparse.size",
                "GNU.sparse.realsize",
                "path",
                "size",
                "linkpath",
            ]
        ),
        st.text(alphabet="0123456789,.-x ", max_size=12),
        max_size=6,
    ),
    st.binary(max_size=600),
)
def test_fuzz_pax_and_sparse_records(pax, data):
    from imgcheck.view.tarwalk import TarFormatError, TarWalker

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("f")
        info.size, info.pax_headers = len(data), pax
        tar.addfile(info, io.BytesIO(data))
    walker = TarWalker(io.BytesIO(buf.getvalue()))
    try:
        for member in walker:
            got = walker.read_data(1 << 16)
            assert got is None or len(got) == member.size
    except TarFormatError:
        pass


def test_compressed_outer_archive_pax_header_bomb(tmp_path, monkeypatch, capsys):
    """A PAX header whose claimed size tarfile reads in one go: capped while it inflates."""
    from imgcheck.sources import blobstore

    header = tarfile.TarInfo("././@PaxHeader")
    header.type, header.size = tarfile.XHDTYPE, 4 << 20
    raw = header.tobuf(format=tarfile.USTAR_FORMAT) + b"0" * (4 << 20) + b"\0" * 1024
    with gzip.open(str(tmp_path / "bomb.tar.gz"), "wb") as fh:
        fh.write(raw)
    monkeypatch.setattr(blobstore, "MIN_INFLATE_CAP", 1 << 20)
    monkeypatch.setattr(blobstore, "MAX_INFLATE_RATIO", 10)
    assert "inflates" in one_line_exit(["inspect", f"docker-archive:{tmp_path / 'bomb.tar.gz'}"], capsys)


def test_compressed_outer_docker_archive_still_reads(tmp_path, home):
    layer = make_layer({"etc/os-release": b"ID=debian\n"})
    plain = write_docker_archive(str(tmp_path / "a.tar"), [layer])
    for suffix, opener in ((".gz", gzip.open), (".xz", __import__("lzma").open), (".bz2", __import__("bz2").open)):
        with open(plain, "rb") as src, opener(plain + suffix, "wb") as dst:
            dst.write(src.read())
        assert api.inspect_image(f"docker-archive:{plain + suffix}", ReadOptions(use_cache=False)).os.id == "debian"


def _write_oci(path, index_doc, manifest_doc=None, config_doc=None) -> str:
    """An OCI layout whose index.json is `index_doc`; `manifest_doc`/`config_doc` become real,
    digest-correct blobs that the index (or a descriptor the fuzzer left intact) may point at."""
    blobs = os.path.join(path, "blobs", "sha256")
    os.makedirs(blobs, exist_ok=True)
    with open(os.path.join(path, "oci-layout"), "w") as fh:
        fh.write('{"imageLayoutVersion": "1.0.0"}')
    for doc in (manifest_doc, config_doc):
        if doc is not None:
            data = json.dumps(doc).encode()
            with open(os.path.join(blobs, sha256(data).split(":")[1]), "wb") as fh:
                fh.write(data)
    with open(os.path.join(path, "index.json"), "w") as fh:
        fh.write(json.dumps(index_doc))
    return path


@FUZZ
@given(JSON, JSON, st.integers(0, 3))
def test_fuzz_oci_layout_source(tmp_path_factory, manifest_doc, config_doc, shape):
    """Whole-source fuzz: a real layout whose index points at a fuzzed (but digest-correct)
    manifest, whose config descriptor points at a fuzzed config. Only documented errors."""
    from imgcheck.errors import ImgcheckError
    from imgcheck.sources.oci_layout import OciLayoutSource

    manifest_bytes = json.dumps(manifest_doc).encode()
    if shape and isinstance(manifest_doc, dict):  # steer some inputs past the first checks
        config_bytes = json.dumps(config_doc).encode()
        manifest_doc = {
            **manifest_doc,
            "config": {"digest": sha256(config_bytes), "size": len(config_bytes)},
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
        }
        if shape > 1:
            manifest_doc["layers"] = []
        manifest_bytes = json.dumps(manifest_doc).encode()
    index = {
        "schemaVersion": 2,
        "manifests": [
            {
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": sha256(manifest_bytes),
                "size": len(manifest_bytes),
            }
        ],
    }
    path = _write_oci(str(tmp_path_factory.mktemp("oci")), index, manifest_doc, config_doc)
    try:
        OciLayoutSource.from_dir(path).open()
    except ImgcheckError:
        pass


@FUZZ
@given(JSON)
def test_fuzz_docker_archive_manifest(tmp_path_factory, manifest_doc):
    from imgcheck.errors import ImgcheckError
    from imgcheck.sources.docker_archive import DockerArchiveSource

    path = str(tmp_path_factory.mktemp("da") / "a.tar")
    with tarfile.open(path, "w") as tar:
        data = json.dumps(manifest_doc).encode()
        info = tarfile.TarInfo("manifest.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    for tag in (None, "t:latest"):
        try:
            DockerArchiveSource(path, tag).open()
        except ImgcheckError:
            pass


def test_trickling_registry_blob_is_ended_by_the_watchdog():
    """A real HTTP server that sends one byte at a time, each well within the read timeout, while
    the client reads into a 1 MiB buffer (one read that would wait for the whole buffer)."""
    import socket as socketlib
    import threading
    import time as timelib
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    import requests

    from imgcheck.sources.http import ResumingBody

    stop = threading.Event()

    class Trickler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Length", str(1 << 20))
            self.end_headers()
            while not stop.is_set():
                try:
                    self.wfile.write(b"x")
                    self.wfile.flush()
                except OSError:
                    return
                stop.wait(0.05)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Trickler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/blob"
    session = requests.Session()
    try:
        body = ResumingBody(
            lambda offset: session.get(url, stream=True, timeout=(5, 30)), "blob sha256:x", 1 << 20, 2, deadline=1.0
        )
        buf = bytearray(1 << 20)
        with pytest.raises(UnavailableError, match="too slow"):
            while body.readinto(buf):
                pass
        body.close()
    finally:
        stop.set()
        server.shutdown()
        server.server_close()


def test_rpmdb_with_undecodable_schema_text():
    """Found by tests/fuzz/long_fuzz.py: a schema byte that is not UTF-8 made sqlite's error
    message undecodable, and Python raised UnicodeDecodeError out of execute()."""
    from imgcheck.extractors.packages import parse_rpmdb_sqlite

    data = bytearray(_rpmdb("CREATE TABLE Packages (hnum INTEGER PRIMARY KEY, blob BLOB NOT NULL);"))
    at = data.index(b"tablePackagesPackages") + len(b"tablePa")  # the table's name in sqlite_master
    data[at] = 0xF3
    with pytest.raises(sqlite3.DatabaseError):
        parse_rpmdb_sqlite(bytes(data), "var/lib/rpm/rpmdb.sqlite", None)


@pytest.mark.parametrize("sep", ["\x0b", "\x0c", "\x1c", "\x1e", "\x85", "\u2028"])
def test_dpkg_status_with_other_line_separators(sep):
    """Found by the long fuzz: a separator str.splitlines() breaks at (but a file's line iteration
    does not) left deb822 a value with a blank line, which it raises on."""
    from imgcheck.extractors.packages import parse_dpkg_status

    data = f"Package: p\nVersion: 1\nStatus: install ok installed\n{sep}Package: q\nVersion: 2\n\n".encode()
    names = [p.name for p in parse_dpkg_status(data, "var/lib/dpkg/status", None)]
    assert "q" in names
