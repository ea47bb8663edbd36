"""A fleet's launch specs (`[fleets.NAME] job_specs`) are checked with every pushed image they run.

Debian's docker-registry notifies the service of a push of the real Debian bookworm rootfs image (no Env
trap of its own); the `lab` fleet's manifests directory holds a Pod that runs that repository and sets
NCCL_IB_RETRY_CNT=16, and a Pod that runs another image with another bad setting. The stored `lab` report
has the Pod's setting, with the manifest as its evidence, and nothing of the other Pod; `prod`, which has
no specs, is checked on the image alone. A job_specs path that does not exist makes /readyz say so.
"""

from __future__ import annotations

import pytest
import requests
from registryfixture import RegistryServer
from registrypush import Pusher, push_rootfs_image
from servicekit import (
    NODES,
    SECRET,
    ThreadedService,
    db_rows,
    free_port,
    imgcheck_home,
    need_registry,
    notifications_yaml,
    wait_for,
)  # noqa: F401 (fixture)

pytestmark = pytest.mark.registry

POD = """apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
    - name: train
      image: {image}
      env:
        - name: {var}
          value: "{value}"
      resources:
        limits:
          nvidia.com/gpu: 8
"""


def _config(path, registry_host, database, specs) -> str:
    path.write_text(f"""
[server]
database = "{database}"
workers = 1
backoff_seconds = 0.2
poll_seconds = 0.2

[registries.main]
host = "{registry_host}"
secret = "{SECRET}"

[fleets.lab]
node_facts = ["{NODES}/lab-memlock.json"]
job_specs = ["{specs}"]

[fleets.prod]
node_facts = ["{NODES}/prod-mofed.json"]
""")
    return str(path)


@pytest.fixture
def stack(tmp_path, imgcheck_home):
    need_registry()
    port = free_port()
    registry = RegistryServer(str(tmp_path / "registry"), notifications_yaml(f"http://127.0.0.1:{port}/webhook"))
    specs = tmp_path / "manifests"
    specs.mkdir()
    (specs / "trainer.yaml").write_text(
        POD.format(name="trainer", image=f"{registry.host}/team/trainer:v1", var="NCCL_IB_RETRY_CNT", value="16")
    )
    (specs / "other.yml").write_text(
        POD.format(name="other", image="nvcr.io/nvidia/pytorch:24.05-py3", var="NCCL_IB_TIMEOUT", value="99")
    )
    (specs / "README.md").write_text("not a spec: only *.yaml / *.yml are read\n")
    db = str(tmp_path / "imgcheck.db")
    try:
        service = ThreadedService(_config(tmp_path / "imgcheck.toml", registry.host, db, specs), port=port)
    except BaseException:
        registry.stop()
        raise
    yield registry, service, db, specs
    service.stop()
    registry.stop()


def test_pushed_image_is_checked_with_the_fleets_manifests(stack, rootfs):
    registry, service, db, specs = stack
    digest = push_rootfs_image(Pusher(registry.url), "team/trainer", "v1", rootfs("bookworm"))
    wait_for(
        lambda: db_rows(db, "SELECT state FROM jobs WHERE digest = ?", (digest,)) in ([("done",)], [("failed",)]),
        60,
        "the pushed image to be checked",
    )
    job = requests.get(f"{service.base}/results/{digest}", timeout=10).json()["images"][0]
    assert job["state"] == "done", job["last_error"]

    lab = requests.get(f"{service.base}/results/{digest}", params={"fleet": "lab"}, timeout=10).json()
    retry = [f for f in lab["findings"] if f["id"] == "ENV-NCCL-IB-RETRY-CNT"]
    assert retry and retry[0]["severity"] == "error"
    assert {"fact": "job.env.NCCL_IB_RETRY_CNT", "value": "16", "path": str(specs / "trainer.yaml")} in [
        {k: e[k] for k in ("fact", "value", "path")} for e in retry[0]["evidence"]
    ]
    assert "ENV-NCCL-IB-TIMEOUT" not in {f["id"] for f in lab["findings"]}  # the other Pod runs another image
    prod = requests.get(f"{service.base}/results/{digest}", params={"fleet": "prod"}, timeout=10).json()
    assert not {"ENV-NCCL-IB-RETRY-CNT", "ENV-NCCL-IB-TIMEOUT"} & {f["id"] for f in prod["findings"]}
    assert job["verdicts"]["lab"] == "fail"

    # a manifests path that disappears is a readiness problem, not a failure at the next push
    (specs / "trainer.yaml").unlink()
    (specs / "other.yml").unlink()
    (specs / "README.md").unlink()
    specs.rmdir()
    ready = requests.get(f"{service.base}/readyz", timeout=10)
    assert ready.status_code == 503 and any("job_specs" in p for p in ready.json()["problems"])
