"""Tokens planted in an image's Env never leave the service, and reads can require a token.

A real Debian bookworm rootfs is pushed to Debian's docker-registry with Env holding build-time
secrets next to the settings the rules read; the registry notifies the service, which pulls and
checks the image. /results (both shapes) and the CLI's JSON show the NCCL/CUDA/PATH values and
redact the rest; `--show-env` shows everything. With `read_token` set, reads without it are 401.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import requests
from registryfixture import RegistryServer
from registrypush import Pusher, push_rootfs_image
from servicekit import (
    ThreadedService,
    db_rows,
    free_port,
    imgcheck_home,
    need_registry,
    notifications_yaml,
    wait_for,
    write_config,
)  # noqa: F401 (fixture)

pytestmark = pytest.mark.registry

PLANTED = [
    "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "HF_TOKEN=hf_planted_0123456789abcdef",
    "PIP_INDEX_URL=https://user:pypi-s3cr3t@pypi.example/simple",
]
KEPT = [
    "NCCL_IB_HCA=mlx5_0,mlx5_1",
    "CUDA_VERSION=12.4.1",
    "LD_LIBRARY_PATH=/usr/local/nvidia/lib64",
    "PATH=/usr/local/bin:/usr/bin:/bin",
]
SECRETS = ("wJalrXUtnFEMI", "hf_planted", "pypi-s3cr3t")
READ_TOKEN = "r3ad-t0ken"


@pytest.fixture
def stack(tmp_path, imgcheck_home):
    need_registry()
    port = free_port()
    registry = RegistryServer(str(tmp_path / "registry"), notifications_yaml(f"http://127.0.0.1:{port}/webhook"))
    db = str(tmp_path / "imgcheck.db")
    cfg = write_config(
        str(tmp_path / "imgcheck.toml"), registry.host, database=db, extra_server=f'read_token = "{READ_TOKEN}"'
    )
    try:
        service = ThreadedService(cfg, port=port)
    except BaseException:
        registry.stop()
        raise
    yield registry, service, db
    service.stop()
    registry.stop()


def test_planted_env_tokens_are_redacted_everywhere(stack, rootfs):
    registry, service, db = stack
    digest = push_rootfs_image(Pusher(registry.url), "team/leaky", "v1", rootfs("bookworm"), env=KEPT + PLANTED)
    wait_for(
        lambda: db_rows(db, "SELECT state FROM jobs WHERE digest = ?", (digest,)) in ([("done",)], [("failed",)]),
        60,
        "the pushed image to be checked",
    )
    bearer = {"Authorization": f"Bearer {READ_TOKEN}"}

    # reads need the token: none, a wrong one, and the right one as Bearer or as a Basic password
    assert requests.get(f"{service.base}/results/{digest}", timeout=10).status_code == 401
    assert requests.get(f"{service.base}/", headers={"Authorization": "Bearer nope"}, timeout=10).status_code == 401
    page = requests.get(f"{service.base}/", timeout=10)
    assert page.status_code == 401 and page.headers["WWW-Authenticate"].startswith("Basic")
    assert requests.get(f"{service.base}/", auth=("anyone", READ_TOKEN), timeout=10).status_code == 200
    assert requests.get(f"{service.base}/images/team/leaky", timeout=10).status_code == 401
    assert requests.get(f"{service.base}/healthz", timeout=10).status_code == 200  # probes stay open

    whole = requests.get(f"{service.base}/results/{digest}", headers=bearer, timeout=10)
    one = requests.get(f"{service.base}/results/{digest}", params={"fleet": "lab"}, headers=bearer, timeout=10)
    assert whole.status_code == 200 and one.status_code == 200, whole.text
    for text in (whole.text, one.text, json.dumps(db_rows(db, "SELECT report FROM results"))):
        assert not any(s in text for s in SECRETS), text[:500]
    env = one.json()["image"]["env"]
    assert env["NCCL_IB_HCA"] == "mlx5_0,mlx5_1" and env["CUDA_VERSION"] == "12.4.1"
    assert env["LD_LIBRARY_PATH"] == "/usr/local/nvidia/lib64" and env["PATH"].startswith("/usr/local/bin")
    assert env["AWS_SECRET_ACCESS_KEY"] == env["HF_TOKEN"] == env["PIP_INDEX_URL"] == "<redacted>"

    # the CLI reads the same image: its JSON redacts too, unless --show-env
    reference = f"registry:{registry.host}/team/leaky@{digest}"
    cli = [sys.executable, "-m", "imgcheck.cli.main"]
    inspected = subprocess.run(
        cli + ["inspect", reference, "-o", "json", "-q"], capture_output=True, text=True, timeout=120, env=os.environ
    )
    assert inspected.returncode == 0, inspected.stderr
    assert not any(s in inspected.stdout for s in SECRETS)
    assert json.loads(inspected.stdout)["image"]["env"]["NCCL_IB_HCA"] == "mlx5_0,mlx5_1"
    shown = subprocess.run(
        cli + ["inspect", reference, "-o", "json", "-q", "--show-env"],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ,
    )
    assert json.loads(shown.stdout)["image"]["env"]["HF_TOKEN"] == "hf_planted_0123456789abcdef"
    nodes = os.path.join(os.path.dirname(__file__), "nodes", "prod-mofed.json")
    checked = subprocess.run(
        cli + [reference, "--node-facts", nodes, "-o", "json", "-q"],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ,
    )
    assert checked.returncode in (0, 1), checked.stderr
    assert not any(s in checked.stdout for s in SECRETS)
    assert json.loads(checked.stdout)["image"]["env"]["AWS_SECRET_ACCESS_KEY"] == "<redacted>"
