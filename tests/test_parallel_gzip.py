"""One large gzip layer inflated in parallel (rapidgzip) gives what ISA-L gives: the same index, the same facts,
the same one-line error on a corrupt or truncated stream, and the same digest checks. Real Debian rootfs layers
(tests/rootfs.py); the threshold is lowered with IMGCHECK_PARALLEL_GZIP_MIN so a test-sized layer takes the path."""

from __future__ import annotations

import contextlib
import gzip
import os
import subprocess
import sys

import pytest
from imagebuild import build_oci, write_oci_dir
from rootfs import build_rootfs

from imgcheck import api
from imgcheck.errors import BadInputError
from imgcheck.extractors.assemble import want_set
from imgcheck.model.serde import to_dict
from imgcheck.sources.read_options import ReadOptions
from imgcheck.sources.resolve import open_source, parse_image_ref
from imgcheck.view import parallel_gzip
from imgcheck.view.layer_index import Limits
from imgcheck.view.reader import index_image_layer

pytest.importorskip("rapidgzip")


@pytest.fixture(scope="module")
def bullseye_oci(tmp_path_factory) -> str:
    with open(build_rootfs("bullseye"), "rb") as fh:
        tar = fh.read()
    return "oci-dir:" + write_oci_dir(str(tmp_path_factory.mktemp("oci") / "img"), build_oci([tar], "gzip"))


def _index(ref: str, monkeypatch, threshold: str):
    monkeypatch.setenv("IMGCHECK_PARALLEL_GZIP_MIN", threshold)
    used = []
    real = parallel_gzip.index_parallel

    def spy(*args, **kwargs):
        used.append(True)
        return real(*args, **kwargs)

    monkeypatch.setattr(parallel_gzip, "index_parallel", spy)
    # other tests of this process may leave a thread behind (a test server's); whether the inflate runs alone
    # is not what these tests are about
    monkeypatch.setattr(parallel_gzip, "_alone", lambda: True)
    with opened(ref) as image:
        (layer,) = image.layers
        idx = index_image_layer(image, layer, want_set(), Limits())
    return idx, bool(used)


@contextlib.contextmanager
def opened(ref: str):
    source = open_source(parse_image_ref(ref))
    try:
        yield source.open()
    finally:
        source.close()


def test_both_decoders_give_the_same_index_and_facts(bullseye_oci, monkeypatch):
    isal, used = _index(bullseye_oci, monkeypatch, "")
    assert not used  # off unless a threshold is set
    parallel, used = _index(bullseye_oci, monkeypatch, "1")
    assert used
    assert isal == parallel  # entries with their kept bytes, path hashes, counts, the verified diff_id
    assert parallel.uncompressed_digest and parallel.entries
    assert any(p.endswith("libibverbs.so.1") for p in parallel.entries)  # the rootfs's rdma-core was read
    monkeypatch.setenv("IMGCHECK_PARALLEL_GZIP_MIN", "1")
    fast = api.inspect_image(bullseye_oci, ReadOptions(use_cache=False))
    monkeypatch.setenv("IMGCHECK_PARALLEL_GZIP_MIN", "off")
    slow = api.inspect_image(bullseye_oci, ReadOptions(use_cache=False))
    assert to_dict(fast) == to_dict(slow)


def _blob_path(ref: str) -> str:
    with opened(ref) as image:
        (layer,) = image.layers
    return os.path.join(ref.split(":", 1)[1], "blobs", "sha256", layer.digest.split(":")[1])


def _error(ref: str, threshold: str) -> str:
    """The one line `imgcheck inspect` prints, and its exit code, in a process of its own."""
    env = dict(os.environ, IMGCHECK_PARALLEL_GZIP_MIN=threshold, IMGCHECK_HOME=os.path.dirname(_blob_path(ref)))
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from imgcheck.cli.main import main; sys.exit(main())",
            "inspect",
            ref,
            "--no-cache",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    return f"{run.returncode} {run.stderr.strip()}"


@pytest.mark.parametrize("damage", ["corrupt", "truncated"])
def test_a_damaged_gzip_gives_the_same_one_line_error(bullseye_oci, tmp_path, damage):
    src = _blob_path(bullseye_oci)
    with open(src, "rb") as fh:
        blob = bytearray(fh.read())
    if damage == "corrupt":
        blob[len(blob) // 2 : len(blob) // 2 + 64] = b"x" * 64
    else:
        # cut at the end of a whole member and its trailer kept out: what rapidgzip alone reads without an error
        blob = bytearray(gzip.compress(gzip.decompress(bytes(blob))[: 40 << 20], compresslevel=1, mtime=0)[:-8])
    # a layout whose manifest names the damaged blob, so the compressed digest passes and the stream decides
    tar_ref = _damaged_layout(tmp_path, bytes(blob), bullseye_oci)
    isal = _error(tar_ref, "off")
    parallel = _error(tar_ref, "1")
    assert isal == parallel
    assert isal.split(" ", 1)[0] not in ("0", "1") and "Traceback" not in isal and isal.count("\n") == 0
    assert "corrupt" in isal or "truncated" in isal


def _damaged_layout(tmp_path, blob: bytes, good_ref: str) -> str:
    import hashlib
    import json

    root = good_ref.split(":", 1)[1]
    out = tmp_path / "damaged"
    blobs = out / "blobs" / "sha256"
    blobs.mkdir(parents=True)
    index = json.loads(open(os.path.join(root, "index.json")).read())
    manifest_digest = index["manifests"][0]["digest"]
    manifest = json.loads(open(os.path.join(root, "blobs", "sha256", manifest_digest.split(":")[1])).read())
    config_digest = manifest["config"]["digest"]
    (blobs / config_digest.split(":")[1]).write_bytes(
        open(os.path.join(root, "blobs", "sha256", config_digest.split(":")[1]), "rb").read()
    )
    digest = hashlib.sha256(blob).hexdigest()
    (blobs / digest).write_bytes(blob)
    manifest["layers"][0].update(digest=f"sha256:{digest}", size=len(blob))
    data = json.dumps(manifest).encode()
    mdigest = hashlib.sha256(data).hexdigest()
    (blobs / mdigest).write_bytes(data)
    index["manifests"][0].update(digest=f"sha256:{mdigest}", size=len(data))
    (out / "index.json").write_text(json.dumps(index))
    (out / "oci-layout").write_text(json.dumps({"imageLayoutVersion": "1.0.0"}))
    return f"oci-dir:{out}"


def test_a_blob_that_is_not_what_its_digest_names_fails_the_same_way(bullseye_oci, tmp_path):
    src = _blob_path(bullseye_oci)
    ref = _damaged_layout(tmp_path, open(src, "rb").read(), bullseye_oci)
    # the blob under the manifest's digest swapped for other (valid gzip) bytes of the same size
    path = _blob_path(ref)
    good = open(path, "rb").read()
    other = gzip.compress(b"\0" * 10240, compresslevel=1, mtime=0)
    with open(path, "wb") as fh:
        fh.write(other + bytes(len(good) - len(other)))
    isal, parallel = _error(ref, "off"), _error(ref, "1")
    assert isal == parallel and "digest mismatch" in isal


def test_missing_rapidgzip_falls_back_to_isal(bullseye_oci, monkeypatch):
    monkeypatch.setitem(sys.modules, "rapidgzip", None)  # import fails as when it is not installed
    assert not parallel_gzip.available()
    idx, used = _index(bullseye_oci, monkeypatch, "1")
    assert not used and idx.uncompressed_digest


def test_corrupt_error_is_a_bad_input(bullseye_oci, tmp_path, monkeypatch):
    blob = bytearray(open(_blob_path(bullseye_oci), "rb").read())
    blob[len(blob) // 3 : len(blob) // 3 + 32] = b"\xff" * 32
    ref = _damaged_layout(tmp_path, bytes(blob), bullseye_oci)
    monkeypatch.setenv("IMGCHECK_PARALLEL_GZIP_MIN", "1")
    with opened(ref) as image, pytest.raises(BadInputError):
        index_image_layer(image, image.layers[0], want_set(), Limits())
