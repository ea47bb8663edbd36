"""`imgcheck triage` exit codes and error paths: one line on stderr, never a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from imgcheck.cli.main import main

HERE = os.path.dirname(__file__)
EINVAL = os.path.join(HERE, "logs", "nccl-1842-einval.log")
NONE = os.path.join(HERE, "logs", "gpustack-3067-socket-no-error.log")
NODE = os.path.join(HERE, "nodes", "no-peermem.json")


def run(args, capsys):
    rc = main(["triage", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def test_found_and_not_found(capsys):
    assert run([EINVAL, "-o", "json"], capsys)[0] == 1
    assert run([NONE, "-o", "json"], capsys)[0] == 0


@pytest.mark.parametrize(
    "make,expect",
    [
        (lambda d: os.path.join(d, "missing.log"), "no such file"),
        (lambda d: d, "is a directory"),
    ],
)
def test_unreadable_log_is_bad_input(tmp_path, capsys, make, expect):
    rc, out, err = run([make(str(tmp_path)), "-o", "json"], capsys)
    assert rc == 2 and expect in err and "Traceback" not in err and out == ""


def test_binary_log_is_refused(tmp_path, capsys):
    p = tmp_path / "core"
    p.write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00" * 50)
    rc, out, err = run([str(p)], capsys)
    assert rc == 2 and "looks binary" in err


def test_corrupt_gzip_is_bad_input(tmp_path, capsys):
    p = tmp_path / "r.log.gz"
    p.write_bytes(b"\x1f\x8b\x08\x00garbage-not-deflate")
    rc, _, err = run([str(p)], capsys)
    assert rc == 2 and err.startswith("imgcheck: error:")


def test_stdin_twice_is_usage_error(capsys):
    rc, _, err = run(["-", "-"], capsys)
    assert rc == 2 and "only once" in err


def test_node_and_node_facts_together_is_usage_error(capsys):
    rc, _, err = run([EINVAL, "--node", "x", "--node-facts", NODE], capsys)
    assert rc == 2 and "not allowed with" in err


def test_unknown_node_and_missing_image_cannot_be_obtained(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path))
    rc, _, err = run([EINVAL, "--node", "gpu-node-404"], capsys)
    assert rc == 3 and "not in the inventory" in err
    rc, _, err = run([EINVAL, "--image", f"docker-archive:{tmp_path}/nope.tar"], capsys)
    assert rc == 3 and "Traceback" not in err
    rc, _, err = run([EINVAL, "--node-facts", str(tmp_path / "nope.json")], capsys)
    assert rc == 3


def test_bad_log_fails_before_the_image_is_read(tmp_path, capsys):
    # the log is read first, so a typo in its name is reported as bad input even if the image is also missing
    rc, _, err = run([str(tmp_path / "typo.log"), "--image", f"docker-archive:{tmp_path}/nope.tar"], capsys)
    assert rc == 2 and "no such file" in err


def test_malformed_node_facts_and_signatures_are_bad_input(tmp_path, capsys):
    bad = tmp_path / "n.json"
    bad.write_text("{not json")
    assert run([EINVAL, "--node-facts", str(bad)], capsys)[0] == 2
    sig = tmp_path / "s.json"
    sig.write_text(json.dumps({"schema_version": 1, "signatures": []}))
    rc, _, err = run([EINVAL, "--signatures", str(sig)], capsys)
    assert rc == 2 and "non-empty" in err


def test_node_from_inventory(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path))
    assert main(["node", "add", NODE]) == 0
    capsys.readouterr()
    rc, out, _ = run(
        [os.path.join(HERE, "logs", "nv-peer-memory-115-efault.log"), "--node", "h100-no-peermem", "-o", "json"], capsys
    )
    doc = json.loads(out)
    assert rc == 1 and doc["join"]["node"] == "h100-no-peermem"
    assert doc["diagnoses"][0]["causes"][0]["status"] == "supported"


def test_output_to_file_and_stdout(tmp_path, capsys):
    target = tmp_path / "t.json"
    rc, out, _ = run([EINVAL, "-o", f"json={target}", "-o", "table"], capsys)
    assert rc == 1 and "FIRST FAILURE" in out
    assert json.loads(target.read_text())["first_failure"]["signature"] == "IBV-REG-MR-EINVAL"


def test_stdin_through_the_installed_command():
    exe = os.path.join(os.path.dirname(sys.executable), "imgcheck")
    with open(EINVAL, "rb") as fh:
        proc = subprocess.run([exe, "triage", "-", "-o", "json"], stdin=fh, capture_output=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["inputs"][0]["name"] == "<stdin>" and doc["first_failure"]["where"]["rank"] == 3


def test_triage_job_spec_errors_are_one_line(tmp_path, capsys):
    """--job: a missing spec is exit 3 (unavailable), a malformed one exit 2 (bad input), one line each."""
    from imgcheck.cli.main import main as cli

    logf = os.path.join(os.path.dirname(__file__), "logs", "redn-5-cuda-no-device.log")
    assert cli(["triage", logf, "--job", str(tmp_path / "missing.yaml")]) == 3
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: [\n")
    assert cli(["triage", logf, "--job", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len([x for x in err.splitlines() if x.startswith("imgcheck: error")]) == 2
