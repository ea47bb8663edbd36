"""`imgcheck check IMAGE --job FILE` and `imgcheck job check FILE` end to end: exit codes, JSON, one-line errors."""

from __future__ import annotations

import json
import os

import pytest
from engine_facts import NODES_DIR, committed_facts, with_nccl

from imgcheck.cli.main import main
from imgcheck.formats.json_format import render_facts

SPECS = os.path.join(os.path.dirname(__file__), "specs")
NODE = os.path.join(NODES_DIR, "mofed-23.10-open-550-peermem.json")


@pytest.fixture()
def image_ref(tmp_path):
    path = tmp_path / "image.json"
    path.write_text(render_facts(with_nccl(committed_facts("bookworm"), "2.21.5")))
    return f"facts:{path}"


@pytest.fixture()
def p2p_off_ref(tmp_path):
    """The same image with NCCL_P2P_DISABLE=1 in its Env: the ranks of a node then talk over NCCL's SHM transport,
    so its /dev/shm need is no longer conditional on the node's GPU topology."""
    path = tmp_path / "image-p2p-off.json"
    path.write_text(render_facts(with_nccl(committed_facts("bookworm"), "2.21.5", env={"NCCL_P2P_DISABLE": "1"})))
    return f"facts:{path}"


def _report(capsys, argv):
    code = main(argv)
    out = capsys.readouterr().out
    return code, json.loads(out)


def _job_findings(doc):
    return {f["id"]: f for f in doc["findings"] if f["id"].startswith("JOB-")}


def test_check_with_job_reports_the_launch_and_fails(capsys, image_ref, p2p_off_ref):
    spec = os.path.join(SPECS, "mpijob.yaml")
    # whether the node's GPUs use P2P or NCCL's SHM transport is not in the facts: a conditional finding, exit 0
    code, doc = _report(capsys, ["check", image_ref, "--job", spec, "--node-facts", NODE, "-o", "json", "-q"])
    assert code == 0 and _job_findings(doc)["JOB-SHM-TOO-SMALL"]["assumes"]
    code, doc = _report(capsys, ["check", p2p_off_ref, "--job", spec, "--node-facts", NODE, "-o", "json", "-q"])
    assert code == 1
    shm = _job_findings(doc)["JOB-SHM-TOO-SMALL"]
    assert any(e["path"] == spec and e["fact"] == "job.ranks_per_node" for e in shm["evidence"])
    # without the spec the same image and node pass this rule: the finding is the launch's
    code, doc = _report(capsys, ["check", image_ref, "--node-facts", NODE, "-o", "json", "-q"])
    assert "JOB-SHM-TOO-SMALL" not in _job_findings(doc)


def test_job_check_takes_the_spec_and_an_image(capsys, image_ref):
    spec = os.path.join(SPECS, "lws-vllm-gpu.yaml")
    code, doc = _report(
        capsys,
        ["job", "check", spec, "--image", image_ref, "--node-facts", NODE, "-o", "json", "-q", "--fail-on", "warning"],
    )
    assert code == 1
    found = _job_findings(doc)["JOB-RDMA-DEVICES-NOT-EXPOSED"]
    assert "vllm-leader" in found["mechanism"] or "vllm-worker" in found["mechanism"]


def test_job_check_without_a_known_image_is_bad_input(capsys):
    code = main(["job", "check", os.path.join(SPECS, "vllm-run_cluster.sh"), "--node-facts", NODE])
    err = capsys.readouterr().err
    assert code == 2 and "--image" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("text", ["kind: Pod\nspec: [unclosed\n", "apiVersion: v1\nkind: ConfigMap\n", "\xff\xfe"])
def test_unparseable_spec_is_one_line_exit_2(capsys, tmp_path, image_ref, text):
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(text.encode("latin-1"))
    code = main(["check", image_ref, "--job", str(bad), "--node-facts", NODE])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err and str(bad) in err


def test_missing_spec_is_exit_3(capsys, tmp_path, image_ref):
    code = main(["check", image_ref, "--job", str(tmp_path / "absent.yaml"), "--node-facts", NODE])
    err = capsys.readouterr().err
    assert code == 3 and len(err.strip().splitlines()) == 1


def test_a_launch_only_failure_recommends_no_other_image(capsys, p2p_off_ref):
    code, doc = _report(
        capsys,
        ["check", p2p_off_ref, "--job", os.path.join(SPECS, "mpijob.yaml"), "--node-facts", NODE, "-o", "json", "-q"],
    )
    errors = {f["id"] for f in doc["findings"] if f["severity"] == "error"}
    assert code == 1 and errors == {"JOB-SHM-TOO-SMALL"}
    assert not doc.get("recommendations")  # another image would not fix the pod's /dev/shm


def test_sarif_puts_launch_findings_on_the_spec_line(capsys, image_ref, tmp_path, monkeypatch):
    monkeypatch.chdir(os.path.dirname(SPECS))  # CI runs from the repository root: spec paths are relative
    out = tmp_path / "r.sarif"
    main(["check", image_ref, "--job", "specs/mpijob.yaml", "--node-facts", NODE, "-o", f"sarif={out}", "-q"])
    capsys.readouterr()
    results = json.loads(out.read_text())["runs"][0]["results"]
    shm = next(r for r in results if r["ruleId"] == "JOB-SHM-TOO-SMALL")
    first = shm["locations"][0]["physicalLocation"]
    assert first["artifactLocation"]["uri"] == "specs/mpijob.yaml" and first["region"]["startLine"] == 24
    assert len(shm["locations"]) == 2  # the image stays a location
    other = [r for r in results if not r["ruleId"].startswith("JOB-")]
    assert all(len(r["locations"]) == 1 for r in other)


def test_job_check_takes_several_files_and_exits_with_the_worst(capsys, tmp_path, p2p_off_ref):
    good, shm = os.path.join(SPECS, "lws-vllm-gpu.yaml"), os.path.join(SPECS, "mpijob.yaml")
    base = ["--image", p2p_off_ref, "--node-facts", NODE, "-q"]
    assert main(["job", "check", good, *base]) == 0
    capsys.readouterr()
    bad = tmp_path / "configmap.yaml"
    bad.write_text("apiVersion: v1\nkind: ConfigMap\n")
    code = main(["job", "check", good, shm, str(bad), *base])  # no -o: tables, one after another
    out, err = capsys.readouterr()
    assert code == 2  # the highest: bad input (2) over findings (1) over clean (0)
    assert [line for line in out.splitlines() if line.startswith("== ")] == [
        f"== imgcheck job check {p}" for p in (good, shm, bad)
    ]
    assert "ERROR JOB-SHM-TOO-SMALL" in out.split(f"== imgcheck job check {shm}")[1]
    assert err.count("imgcheck: error:") == 1 and str(bad) in err and "Traceback" not in err
    assert main(["job", "check", good, shm, *base]) == 1
    capsys.readouterr()
    # one document per run: json, sarif, junit and files are for one FILE
    for output in ("json", "table=report.txt"):
        assert main(["job", "check", good, shm, *base, "-o", output]) == 2
        assert "several FILEs" in capsys.readouterr().err


def test_deeply_nested_script_is_one_line_exit_2(tmp_path, capsys):
    spec = tmp_path / "deep.sbatch"
    spec.write_text("#SBATCH -N 1\n" + "if true; then " * 3000 + "srun --container-image=a#b x" + "; fi" * 3000 + "\n")
    code = main(["job", "check", str(spec)])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1 and "nested too deeply" in err
