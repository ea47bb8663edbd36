"""Which manifests are images, and which Env values a report may show."""

from __future__ import annotations

import json

import pytest

from imgcheck.model.env_redact import REDACTED, redact_env, redact_report_dict
from imgcheck.service.artifacts import artifact_reason, is_artifact_tag

CFG = {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": "sha256:" + "1" * 64, "size": 2}


def manifest(config=CFG, layers=("application/vnd.oci.image.layer.v1.tar+gzip",), **extra) -> bytes:
    return json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": config,
            "layers": [{"mediaType": m, "digest": "sha256:" + "2" * 64, "size": 1} for m in layers],
            **extra,
        }
    ).encode()


@pytest.mark.parametrize(
    "data",
    [
        manifest(),
        manifest(layers=("application/vnd.oci.image.layer.v1.tar+zstd", "application/vnd.oci.image.layer.v1.tar")),
        manifest(
            config={**CFG, "mediaType": "application/vnd.docker.container.image.v1+json"},
            layers=("application/vnd.docker.image.rootfs.diff.tar.gzip",),
        ),
        json.dumps(
            {"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": []}
        ).encode(),
    ],
)
def test_images_are_images(data):
    assert artifact_reason(data) is None


@pytest.mark.parametrize(
    "data,why",
    [
        (manifest(layers=("application/vnd.dev.cosign.simplesigning.v1+json",)), "simplesigning"),  # cosign .sig
        (manifest(layers=("application/vnd.dsse.envelope.v1+json",)), "dsse"),  # cosign .att
        (
            manifest(
                config={**CFG, "mediaType": "application/vnd.cncf.helm.config.v1+json"},
                layers=("application/vnd.cncf.helm.chart.content.v1.tar+gzip",),
            ),
            "helm",
        ),
        (
            manifest(
                config={**CFG, "mediaType": "application/vnd.oci.empty.v1+json"},
                layers=("application/spdx+json",),
                artifactType="application/spdx+json",
            ),
            "spdx",
        ),
    ],
)
def test_artifacts_are_named(data, why):
    assert why in artifact_reason(data)


def test_cosign_tag_scheme():
    assert is_artifact_tag("sha256-" + "a" * 64 + ".sig") and is_artifact_tag("sha256-" + "b" * 64 + ".att")
    assert not is_artifact_tag("v1.sig") and not is_artifact_tag("sha256-abc.sig") and not is_artifact_tag(None)


def test_env_redaction_keeps_what_rules_read():
    env = {
        "NCCL_IB_HCA": "mlx5_0",
        "UCX_TLS": "rc",
        "CUDA_VERSION": "12.4",
        "NVIDIA_VISIBLE_DEVICES": "all",
        "PATH": "/bin",
        "LD_LIBRARY_PATH": "/x",
        "PYTHONPATH": "/p",
        "LD_PRELOAD": "libfoo.so",
        "GITHUB_TOKEN": "ghp_x",
        "NCCL": "not-a-prefix-match",
        "DB_PASSWORD": "p",
    }
    out = redact_env(env)
    assert {k for k, v in out.items() if v != REDACTED} == {
        "NCCL_IB_HCA",
        "UCX_TLS",
        "CUDA_VERSION",
        "NVIDIA_VISIBLE_DEVICES",
        "PATH",
        "LD_LIBRARY_PATH",
        "PYTHONPATH",
        "LD_PRELOAD",
    }
    assert set(out) == set(env)  # names stay visible
    stored = {"verdict": "ok", "image": {"env": {"GITHUB_TOKEN": "ghp_x"}}}
    assert redact_report_dict(stored)["image"]["env"] == {"GITHUB_TOKEN": REDACTED}
    assert stored["image"]["env"]["GITHUB_TOKEN"] == "ghp_x"  # not mutated
    assert redact_report_dict({"verdict": "ok"}) == {"verdict": "ok"}
