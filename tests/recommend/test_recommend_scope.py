"""Issue 37: recommendations scoped to the finding.

A pure Env problem in an image without NCCL or a framework (the README's example: Debian bookworm's real
RDMA files with NCCL_IB_RETRY_CNT=16) is fixed by removing the setting; the report must not go on to a
node change that only makes some other framework's catalog image work. With a launch spec that sets the
value, the fix points at the spec's file and line, and the re-check includes the spec's container."""

from __future__ import annotations

import json
from pathlib import Path

from imgcheck.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
IMAGE = f"oci-dir:{ROOT / 'examples' / 'bookworm-rdma'}"
NODE = str(ROOT / "examples" / "nodes" / "inbox-535-proprietary.json")
# A Pod shaped like tests/job/specs/pod-roce-hostnetwork.yaml (the RDMA shared device plugin's resource,
# IPC_LOCK), whose container env sets the retry count; line 17 holds the value.
POD = """apiVersion: v1
kind: Pod
metadata:
  name: nccl-worker-0
spec:
  restartPolicy: OnFailure
  containers:
    - name: trainer
      image: registry.example/team/trainer:1
      securityContext:
        capabilities:
          add: ["IPC_LOCK"]
      resources:
        limits:
          rdma/rdma_shared_device_a: 1
      env:
        - name: NCCL_IB_RETRY_CNT
          value: "16"
"""


def _report(capsys, *argv) -> dict:
    capsys.readouterr()
    code = main([*argv, "-o", "json", "--no-ignore-file"])
    out = capsys.readouterr().out
    assert code == 1, out[-500:]
    return json.loads(out)


def test_a_pure_env_problem_gets_only_the_env_fix(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path))
    doc = _report(capsys, IMAGE, "--node-facts", NODE)
    assert [f["id"] for f in doc["findings"] if f["severity"] == "error"] == ["ENV-NCCL-IB-RETRY-CNT"]
    recs = doc["recommendations"]
    assert [r["kind"] for r in recs] == ["env"]
    assert recs[0]["differences"] == ["remove NCCL_IB_RETRY_CNT=16 from the image's ENV (NCCL's default applies)"]
    text = json.dumps(recs)
    assert "node-upgrade" not in text and "open kernel modules" not in text and "mxnet" not in text


def test_a_value_the_job_sets_is_fixed_in_the_job_spec(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path))
    # the image without the setting: its facts as inspect reads them, less that one Env entry
    capsys.readouterr()
    assert main(["inspect", IMAGE, "-o", "json", "--show-env"]) == 0
    facts = json.loads(capsys.readouterr().out)
    del facts["image"]["env"]["NCCL_IB_RETRY_CNT"]
    image = tmp_path / "trainer.json"
    image.write_text(json.dumps(facts))
    spec = tmp_path / "pod.yaml"
    spec.write_text(POD)
    doc = _report(capsys, f"facts:{image}", "--node-facts", NODE, "--job", str(spec))
    assert "ENV-NCCL-IB-RETRY-CNT" in [f["id"] for f in doc["findings"]]
    recs = doc["recommendations"]
    assert recs and recs[0]["kind"] == "env"
    first = recs[0]["differences"]
    assert first == [
        f"remove NCCL_IB_RETRY_CNT=16 from the container env in {spec} line 17 "
        "(the launch spec sets it; NCCL's default applies)"
    ]
    assert "launch spec" in recs[0]["why"]
    # nothing proposes the image's ENV for a value the image does not set, nor another image
    assert not any("image's ENV" in d for r in recs for d in r["differences"] if "NCCL_IB_RETRY_CNT" in d)
    assert all(r["kind"] in ("env", "pip-pin") for r in recs)
