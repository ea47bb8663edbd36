"""The local references skopeo and syft users type: oci:PATH[:REF], a bare image.tar or layout directory,
docker-archive:x.tar:name:tag. Real images: the shipped example layout and a docker-archive of Debian's rootfs."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from imgcheck.cli.main import main
from imgcheck.sources.resolve import registry_reference

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "bookworm-rdma"


def _inspect(capsys, ref):
    code = main(["inspect", ref, "-o", "json", "--no-cache"])
    out = capsys.readouterr()
    return code, (json.loads(out.out) if code == 0 else None), out.err


def _digest(capsys, ref) -> str:
    code, doc, err = _inspect(capsys, ref)
    assert code == 0, err
    return doc["digest"] if "digest" in doc else doc["image"]["digest"]


@pytest.fixture(scope="module")
def bookworm(debian_archive):
    return debian_archive("bookworm")  # tagged rdma-bookworm:latest, as `docker save` writes RepoTags


def test_oci_scheme_is_an_oci_layout_directory(capsys):
    want = _digest(capsys, f"oci-dir:{EXAMPLE}")
    assert _digest(capsys, f"oci:{EXAMPLE}") == want
    assert _digest(capsys, f"oci:{EXAMPLE}:latest") == want  # skopeo's oci:PATH:REF
    code, _, err = _inspect(capsys, f"oci:{EXAMPLE}:v9")
    assert code == 2 and "no manifest named 'v9'" in err


def test_bare_layout_directory(capsys):
    assert _digest(capsys, str(EXAMPLE)) == _digest(capsys, f"oci-dir:{EXAMPLE}")


def test_bare_oci_archive_tar(tmp_path, capsys):
    archive = tmp_path / "image.tar"
    with tarfile.open(archive, "w") as tar:  # what `skopeo copy ... oci-archive:image.tar` holds
        for item in sorted(EXAMPLE.rglob("*")):
            tar.add(item, arcname=str(item.relative_to(EXAMPLE)), recursive=False)
    assert _digest(capsys, str(archive)) == _digest(capsys, f"oci-dir:{EXAMPLE}")


def test_bare_docker_archive_and_name_tag(capsys, bookworm):
    want = _digest(capsys, f"docker-archive:{bookworm}")
    assert _digest(capsys, bookworm) == want
    assert _digest(capsys, f"docker-archive:{bookworm}:rdma-bookworm:latest") == want
    code, _, err = _inspect(capsys, f"docker-archive:{bookworm}:rdma-bookworm:other")
    assert code == 2 and "no image tagged 'rdma-bookworm:other'" in err


def test_a_tar_that_is_no_image_is_exit_2(tmp_path, capsys):
    archive = tmp_path / "notes.tar"
    (tmp_path / "a.txt").write_text("hello")
    with tarfile.open(archive, "w") as tar:
        tar.add(tmp_path / "a.txt", arcname="a.txt")
    code, _, err = _inspect(capsys, str(archive))
    assert code == 2 and "neither manifest.json" in err and err.count("\n") == 1


def test_a_plain_directory_does_not_shadow_a_registry_name(tmp_path, monkeypatch, bookworm):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ubuntu").mkdir()  # no oci-layout inside: `ubuntu` stays the registry image
    assert registry_reference("ubuntu") is not None
    assert registry_reference("trainer.tar") is not None  # no such file: a (strange) registry name
    assert registry_reference(bookworm) is None  # an existing archive is never asked of a registry
    assert registry_reference(str(EXAMPLE)) is None
