"""Pyxis/Enroot references (`registry#repo:tag`, `docker://...`) name the same image as the registry form."""

from __future__ import annotations

import pytest

from imgcheck.errors import UsageError
from imgcheck.sources.pyxis import is_pyxis_reference, to_registry_reference
from imgcheck.sources.read_options import ReadOptions
from imgcheck.sources.resolve import open_source, parse_image_ref

DIGEST = "sha256:" + "ab" * 32

MAPPING = [
    # Pyxis --container-image (no scheme) and Enroot docker:// with the '#' separator
    ("nvcr.io#nvidia/pytorch:24.10-py3", "nvcr.io/nvidia/pytorch:24.10-py3"),
    ("docker://nvcr.io#nvidia/pytorch:24.10-py3", "nvcr.io/nvidia/pytorch:24.10-py3"),
    ("docker://nvcr.io#nvidia/pytorch", "nvcr.io/nvidia/pytorch"),
    ("docker://$oauthtoken@nvcr.io#nvidia/pytorch:24.10-py3", "nvcr.io/nvidia/pytorch:24.10-py3"),
    ("me@corp.example@nvcr.io#nvidia/pytorch:24.10-py3", "nvcr.io/nvidia/pytorch:24.10-py3"),
    ("127.0.0.1:5000#team/trainer:abc", "127.0.0.1:5000/team/trainer:abc"),
    ("docker://registry.example:5000#team/trainer:abc@" + DIGEST, "registry.example:5000/team/trainer:abc@" + DIGEST),
    ("docker://nvcr.io#nvidia/pytorch@" + DIGEST, "nvcr.io/nvidia/pytorch@" + DIGEST),
    # Docker's own syntax inside docker://, and Docker Hub when no registry is named
    ("docker://nvcr.io/nvidia/pytorch:24.10-py3", "nvcr.io/nvidia/pytorch:24.10-py3"),
    ("docker://localhost:5000/foo:1", "localhost:5000/foo:1"),
    ("docker://ubuntu:22.04", "ubuntu:22.04"),
    ("docker://ubuntu", "ubuntu"),
    ("docker://library/ubuntu:22.04", "library/ubuntu:22.04"),
    ("docker://user@ubuntu:22.04", "ubuntu:22.04"),
    ("docker://ubuntu@" + DIGEST, "ubuntu@" + DIGEST),
    ("registry:nvcr.io#nvidia/pytorch:24.10-py3", "nvcr.io/nvidia/pytorch:24.10-py3"),
]


@pytest.mark.parametrize("pyxis,plain", MAPPING)
def test_mapping(pyxis, plain):
    assert is_pyxis_reference(pyxis, "registry" if pyxis.startswith("registry:") else None)
    assert to_registry_reference(pyxis) == plain


@pytest.mark.parametrize("pyxis,plain", MAPPING)
def test_mapped_reference_parses_to_the_same_image_as_the_plain_form(pyxis, plain):
    reference = pytest.importorskip("imgcheck.sources.reference")
    assert reference.parse_reference(to_registry_reference(pyxis)) == reference.parse_reference(plain)


@pytest.mark.parametrize(
    "bad",
    [
        "docker://",
        "nvcr.io#",
        "#nvidia/pytorch",
        "nvcr.io#Nvidia/PyTorch:1",
        "nvcr.io#nvidia/pytorch:bad tag",
        "nvcr/io#nvidia/pytorch",
        "docker://nvcr.io#nvidia/pytorch@sha256:short",
        "nvcr.io#nvidia/pytorch:",
        "docker://a#b#c",
    ],
)
def test_malformed_references_are_usage_errors(bad):
    with pytest.raises(UsageError):
        to_registry_reference(bad)


@pytest.mark.parametrize(
    "ref,scheme",
    [
        ("oci-dir:/data/images#1", "oci-dir"),
        ("enroot:/scratch/img#v1.sqsh", "enroot"),
        ("sif:/x#y.sif", "sif"),
        ("docker-archive:/tmp/a#b.tar", "docker-archive"),
        ("nvcr.io/nvidia/pytorch:24.10-py3", None),
        ("docker:my-local-image", "docker"),
        ("/scratch/images/x#1.sqsh", None),
        ("./x#1.sqsh", None),
    ],
)
def test_local_paths_and_plain_references_are_not_pyxis(ref, scheme):
    assert not is_pyxis_reference(ref, scheme)


def test_open_source_dispatches_pyxis_references_to_the_registry_source():
    registry = pytest.importorskip("imgcheck.sources.registry")
    for pyxis in (
        "nvcr.io#nvidia/pytorch:24.10-py3",
        "docker://nvcr.io#nvidia/pytorch:24.10-py3",
        "docker://nvcr.io/nvidia/pytorch:24.10-py3",
    ):
        source = open_source(parse_image_ref(pyxis))
        plain = open_source(parse_image_ref("nvcr.io/nvidia/pytorch:24.10-py3"))
        try:
            assert type(source) is registry.RegistrySource
            assert source.ref == plain.ref
        finally:
            source.close()
            plain.close()


def test_open_source_dispatches_enroot_and_sif_schemes(tmp_path):
    from imgcheck.sources.enroot import SquashfsRangeSource
    from imgcheck.sources.sif import SifSource

    assert type(open_source(parse_image_ref(f"enroot:{tmp_path}/a.sqsh"))) is SquashfsRangeSource
    assert type(open_source(parse_image_ref(f"sif:{tmp_path}/a.sif"))) is SifSource


@pytest.mark.registry
def test_pyxis_references_resolve_to_the_same_image_against_a_local_registry(registry):
    from imagebuild import build_oci, make_layer
    from registrypush import Pusher

    from imgcheck import api

    img = build_oci(
        [make_layer({"etc/os-release": b'ID=debian\nVERSION_ID="12"\n'})], compression="gzip", env=["NCCL_DEBUG=INFO"]
    )
    Pusher(registry.url).push_image("slurm/pyxis", "v1", img)
    plain = api.inspect_image(f"{registry.host}/slurm/pyxis:v1", ReadOptions(use_cache=False))
    assert plain.digest == img.manifest_digest
    for ref in (
        f"{registry.host}#slurm/pyxis:v1",
        f"docker://{registry.host}#slurm/pyxis:v1",
        f"docker://{registry.host}/slurm/pyxis:v1",
    ):
        facts = api.inspect_image(ref, ReadOptions(use_cache=False))
        assert facts.digest == img.manifest_digest
        assert (facts.os, facts.env, facts.layers) == (plain.os, plain.env, plain.layers)


from registryfixture import registry  # noqa: E402,F401  (the real docker-registry fixture)
