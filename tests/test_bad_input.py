"""Bad input ends in one clear line on stderr and the documented exit code, never a traceback."""

from __future__ import annotations

import gzip
import json
import os
import tarfile

import pytest
from imagebuild import build_oci, make_layer, write_docker_archive, write_oci_dir

from imgcheck.cli.main import main


def run(argv, capsys):
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_one_line(err: str):
    lines = [l for l in err.splitlines() if l.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("imgcheck: error: ")
    assert "Traceback" not in err


def good_oci(tmp_path, name="img", layers=None):
    return write_oci_dir(str(tmp_path / name), build_oci(layers or [make_layer({"etc/os-release": b"ID=debian\n"})]))


def test_missing_file_is_exit_3(tmp_path, capsys):
    code, out, err = run(["inspect", f"docker-archive:{tmp_path}/nope.tar"], capsys)
    assert code == 3 and out == ""
    assert_one_line(err)


def test_not_a_tar_is_exit_2(tmp_path, capsys):
    path = tmp_path / "junk.tar"
    path.write_bytes(os.urandom(3000))
    code, _, err = run(["inspect", f"docker-archive:{path}"], capsys)
    assert code == 2
    assert_one_line(err)


def test_archive_without_manifest(tmp_path, capsys):
    path = tmp_path / "empty.tar"
    with tarfile.open(path, "w") as tar:
        info = tarfile.TarInfo("hello.txt")
        tar.addfile(info)
    code, _, err = run(["inspect", f"docker-archive:{path}"], capsys)
    assert code == 2 and "manifest.json" in err
    assert_one_line(err)


def test_truncated_docker_archive(tmp_path, capsys):
    layer = make_layer({"etc/os-release": b"ID=debian\n", "usr/lib/libibverbs.so.1": os.urandom(50000)})
    full = write_docker_archive(str(tmp_path / "full.tar"), [layer])
    data = open(full, "rb").read()
    cut = tmp_path / "cut.tar"
    cut.write_bytes(data[: len(data) // 2])
    code, _, err = run(["inspect", f"docker-archive:{cut}"], capsys)
    assert code == 2
    assert_one_line(err)


def test_corrupt_gzip_layer(tmp_path, capsys):
    oci = good_oci(tmp_path, layers=[make_layer({"etc/os-release": b"ID=x\n" * 2000})])
    blobs = os.path.join(oci, "blobs", "sha256")
    index = json.load(open(os.path.join(oci, "index.json")))
    manifest = json.load(open(os.path.join(blobs, index["manifests"][0]["digest"].split(":")[1])))
    layer_path = os.path.join(blobs, manifest["layers"][0]["digest"].split(":")[1])
    data = bytearray(open(layer_path, "rb").read())
    data[30:60] = b"\xff" * 30
    open(layer_path, "wb").write(bytes(data))
    code, _, err = run(["inspect", f"oci-dir:{oci}", "--no-cache"], capsys)
    assert code == 2
    assert_one_line(err)


def test_digest_mismatch_is_an_error_not_a_result(tmp_path, capsys):
    oci = good_oci(tmp_path)
    blobs = os.path.join(oci, "blobs", "sha256")
    index = json.load(open(os.path.join(oci, "index.json")))
    manifest = json.load(open(os.path.join(blobs, index["manifests"][0]["digest"].split(":")[1])))
    layer_path = os.path.join(blobs, manifest["layers"][0]["digest"].split(":")[1])
    # a different but valid gzip tar under the old digest
    open(layer_path, "wb").write(gzip.compress(make_layer({"etc/os-release": b"ID=evil\n"})))
    code, out, err = run(["inspect", f"oci-dir:{oci}", "-o", "json", "--no-cache"], capsys)
    assert code == 2 and out == "" and "digest mismatch" in err
    assert_one_line(err)


def test_unknown_layer_media_type(tmp_path, capsys):
    oci = good_oci(tmp_path)
    blobs = os.path.join(oci, "blobs", "sha256")
    index_path = os.path.join(oci, "index.json")
    index = json.load(open(index_path))
    manifest = json.load(open(os.path.join(blobs, index["manifests"][0]["digest"].split(":")[1])))
    manifest["layers"][0]["mediaType"] = "application/x-mystery"
    data = json.dumps(manifest).encode()
    import hashlib

    digest = hashlib.sha256(data).hexdigest()
    open(os.path.join(blobs, digest), "wb").write(data)
    index["manifests"][0].update(digest="sha256:" + digest, size=len(data))
    json.dump(index, open(index_path, "w"))
    code, _, err = run(["inspect", f"oci-dir:{oci}"], capsys)
    assert code == 2 and "application/x-mystery" in err
    assert_one_line(err)


def test_malformed_index_json(tmp_path, capsys):
    oci = good_oci(tmp_path)
    open(os.path.join(oci, "index.json"), "w").write("{not json")
    code, _, err = run(["inspect", f"oci-dir:{oci}"], capsys)
    assert code == 2 and "not valid JSON" in err
    assert_one_line(err)


def test_manifest_digest_must_name_a_blob_not_a_path(tmp_path, capsys):
    oci = good_oci(tmp_path)
    index_path = os.path.join(oci, "index.json")
    index = json.load(open(index_path))
    index["manifests"][0]["digest"] = "sha256:../../../../etc/passwd"
    json.dump(index, open(index_path, "w"))
    code, _, err = run(["inspect", f"oci-dir:{oci}"], capsys)
    assert code == 2 and "malformed digest" in err
    assert_one_line(err)


def test_facts_file_from_newer_schema(tmp_path, capsys):
    path = tmp_path / "facts.json"
    path.write_text(json.dumps({"schema_version": 99, "image": {"schema_version": 99, "reference": "x"}}))
    code, _, err = run(["inspect", f"facts:{path}"], capsys)
    assert code == 2 and "newer" in err
    assert_one_line(err)


def test_malformed_facts_file(tmp_path, capsys):
    path = tmp_path / "facts.json"
    path.write_text(json.dumps({"image": {"reference": "x", "rdma": {"providers": "mlx5"}}}))
    code, _, err = run(["inspect", f"facts:{path}"], capsys)
    assert code == 2 and "providers" in err
    assert_one_line(err)


def test_bad_output_format_and_platform(tmp_path, capsys):
    oci = good_oci(tmp_path)
    code, _, err = run(["inspect", f"oci-dir:{oci}", "-o", "yaml"], capsys)
    assert code == 2
    assert_one_line(err)
    code, _, err = run(["inspect", f"oci-dir:{oci}", "--platform", "linux"], capsys)
    assert code == 2
    assert_one_line(err)


def test_failed_write_leaves_nothing_behind(tmp_path, capsys):
    oci = good_oci(tmp_path)
    target = tmp_path / "no-such-dir" / "out.json"
    code, _, err = run(["inspect", f"oci-dir:{oci}", "-o", f"json={target}"], capsys)
    assert code == 3
    assert_one_line(err)
    assert not target.exists()


def test_layer_limit_function():
    from imgcheck.errors import LimitExceededError
    from imgcheck.sources.manifest import layers_of_manifest

    manifest = {
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": "sha256:" + "a" * 64, "size": 1}]
        * 5
    }
    with pytest.raises(LimitExceededError):
        layers_of_manifest(manifest, "test", max_layers=4)


@pytest.mark.parametrize(
    "argv", [["inspect", "facts:{d}"], ["inspect", "enroot:{d}"], ["inspect", "sif:{d}"], ["triage", "{d}"]]
)
def test_a_directory_where_a_file_is_expected_is_exit_2(tmp_path, capsys, argv):
    code, out, err = run([a.format(d=tmp_path) for a in argv], capsys)
    assert code == 2 and out == "" and "is a directory, expected" in err
    assert_one_line(err)


def test_a_file_that_fails_while_being_read_is_exit_3(capsys):
    code, out, err = run(["inspect", "facts:/proc/self/mem"], capsys)  # opens, then EIO on the first read
    assert code == 3 and out == "" and "cannot read" in err
    assert_one_line(err)
