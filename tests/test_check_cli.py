"""`imgcheck check IMAGE` / `imgcheck IMAGE`: real Debian image, node facts files, exit codes, outputs."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from engine_facts import NODES_DIR, real_facts, with_nccl

from imgcheck.cli.main import main
from imgcheck.formats.json_format import render_facts
from imgcheck.matrix import load_matrix
from imgcheck.matrix.files import packaged_root


def nf(name: str) -> str:
    return os.path.join(NODES_DIR, name + ".json")


@pytest.fixture(scope="module")
def bookworm(debian_archive):
    return debian_archive("bookworm")


@pytest.fixture()
def failing_facts(tmp_path, bookworm):
    """A torch-style image on the real bookworm userspace with NCCL_IB_RETRY_CNT=16 baked in (an error)."""
    path = tmp_path / "facts.json"
    path.write_text(render_facts(with_nccl(real_facts(bookworm), "2.21.5", env={"NCCL_IB_RETRY_CNT": "16"})))
    return str(path)


@pytest.fixture()
def warning_facts(tmp_path, bookworm):
    """Only warnings: no GPUDirect RDMA on an inbox node with the proprietary driver."""
    path = tmp_path / "warn.json"
    path.write_text(render_facts(with_nccl(real_facts(bookworm), "2.21.5")))
    return str(path)


def run_json(capsys, argv):
    code = main(argv + ["-o", "json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if captured.out.strip() else None, captured.err


def test_bare_form_on_the_real_image(capsys, bookworm):
    code, doc, err = run_json(
        capsys,
        [
            f"docker-archive:{bookworm}",
            "--node-facts",
            nf("inbox-6.8-open-570"),
            "--node-facts",
            nf("mofed-23.10-open-550-peermem"),
        ],
    )
    assert code == 0, err
    assert doc["verdict"] == "ok"
    m = load_matrix()
    assert doc["matrix"] == {"version": m.version, "digest": m.digest}
    assert doc["image"]["rdma"]["libibverbs"]["rdma_core"] == "44.0"
    assert [n["name"] for n in doc["nodes"]] == ["gpu-inbox-68", "gpu-mofed2310"]
    assert doc["tool_version"] and doc["generated_at"]
    assert not [f for f in doc["findings"] if f["severity"] in ("error", "warning")]


def test_check_subcommand_is_the_same(capsys, bookworm):
    a = run_json(capsys, ["check", f"docker-archive:{bookworm}", "--node-facts", nf("inbox-6.8-open-570")])[1]
    b = run_json(capsys, [f"docker-archive:{bookworm}", "--node-facts", nf("inbox-6.8-open-570")])[1]
    for doc in (a, b):
        doc.pop("generated_at")
    assert a == b


def test_findings_exit_1_and_report_still_written(tmp_path, capsys, failing_facts):
    out = tmp_path / "report.json"
    code = main([f"facts:{failing_facts}", "--node-facts", nf("inbox-6.8-open-570"), "-o", f"json={out}"])
    assert code == 1
    doc = json.loads(out.read_text())
    assert doc["verdict"] == "fail"
    f = next(f for f in doc["findings"] if f["id"] == "ENV-NCCL-IB-RETRY-CNT")
    assert f["severity"] == "error" and f["nodes"] == ["gpu-inbox-68"]
    assert f["predicted_error"].startswith("NCCL WARN NET/IB: Got completion from peer")
    assert f["evidence"][0] == {
        "fact": "image.env.NCCL_IB_RETRY_CNT",
        "value": "16",
        "path": None,
        "layer": None,
        "origin": "image config Env",
    }  # not a file: the config's Env
    assert capsys.readouterr().err == ""


def test_fail_on(capsys, warning_facts):
    args = [f"facts:{warning_facts}", "--node-facts", nf("inbox-5.15-proprietary-535")]
    code, doc, _ = run_json(capsys, args)
    assert code == 0 and doc["verdict"] == "warn"
    assert run_json(capsys, args + ["--fail-on", "warning"])[0] == 1
    assert run_json(capsys, args + ["--fail-on", "never"])[0] == 0


def test_ignore_with_reason(capsys, failing_facts):
    args = [f"facts:{failing_facts}", "--node-facts", nf("inbox-6.8-open-570")]
    code, doc, _ = run_json(capsys, args + ["--ignore", "ENV-NCCL-IB-RETRY-CNT", "--reason", "fabric has no loss"])
    assert code == 0
    assert "ENV-NCCL-IB-RETRY-CNT" not in [f["id"] for f in doc["findings"]]
    assert doc["suppressed"] == [
        {"rule": "ENV-NCCL-IB-RETRY-CNT", "node": None, "reason": "fabric has no loss", "expires": None, "origin": None}
    ]
    code, _, err = run_json(capsys, args + ["--ignore", "ENV-NCCL-IB-RETRY-CNT"])
    assert code == 2 and "--reason" in err


def test_several_formats_in_one_run(tmp_path, capsys, failing_facts):
    from imgcheck.formats.report_formats import REPORT_FORMATS

    args = [f"facts:{failing_facts}", "--node-facts", nf("inbox-6.8-open-570")]
    for fmt in ("sarif", "junit", "markdown"):
        if fmt in REPORT_FORMATS:
            args += ["-o", f"{fmt}={tmp_path / ('out.' + fmt)}"]
    args += ["-o", "table"]
    assert main(args) == 1
    table = capsys.readouterr().out
    assert "ENV-NCCL-IB-RETRY-CNT" in table and "IBV_WC_RETRY_EXC_ERR(12)" in table
    for fmt in ("sarif", "junit", "markdown"):
        if fmt in REPORT_FORMATS:
            assert "ENV-NCCL-IB-RETRY-CNT" in (tmp_path / f"out.{fmt}").read_text()


@pytest.mark.parametrize(
    "argv_tail, code, words",
    [
        ([], 2, "no nodes to check against"),
        (["--node-facts", "MISSING"], 3, "no such file"),
        (["--node-facts", nf("inbox-6.8-open-570"), "-o", "yaml"], 2, "unknown output format"),
        (["--node-facts", nf("inbox-6.8-open-570"), "--reason", "x"], 2, "--reason goes with --ignore"),
        (["--node-facts", nf("inbox-6.8-open-570"), "--fail-on", "sometimes"], 2, "invalid choice"),
    ],
)
def test_usage_errors(capsys, bookworm, argv_tail, code, words):
    argv = [f"docker-archive:{bookworm}"] + [a if a != "MISSING" else "/nonexistent/node.json" for a in argv_tail]
    assert main(argv) == code
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


def test_bad_node_facts(tmp_path, capsys, bookworm):
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps({"schema_version": 99, "name": "n1"}))
    assert main([f"docker-archive:{bookworm}", "--node-facts", str(newer)]) == 2
    assert "newer than this imgcheck understands" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "n1", "gpu": {"kernel_module": 7}}))
    assert main([f"docker-archive:{bookworm}", "--node-facts", str(bad)]) == 2
    assert "kernel_module" in capsys.readouterr().err


def test_missing_image_is_exit_3(tmp_path, capsys):
    assert main([f"docker-archive:{tmp_path / 'nope.tar'}", "--node-facts", nf("inbox-6.8-open-570")]) == 3
    assert "Traceback" not in capsys.readouterr().err


def test_broken_matrix_is_exit_2(tmp_path, capsys, bookworm):
    copy = tmp_path / "m"
    shutil.copytree(str(packaged_root()), copy)
    (copy / "catalogs" / "thresholds.json").write_text("[]")
    assert main([f"docker-archive:{bookworm}", "--node-facts", nf("inbox-6.8-open-570"), "--matrix", str(copy)]) == 2
    assert "compat matrix" in capsys.readouterr().err


def test_handwritten_node_gives_unknowns_not_passes(capsys, warning_facts):
    code, doc, _ = run_json(capsys, [f"facts:{warning_facts}", "--node-facts", nf("handwritten-minimal")])
    rules = {u["rule"] for u in doc["unknowns"]}
    assert {"GDR-PEERMEM-MISSING", "MEMLOCK-TOO-LOW", "UVERBS-ABI-RANGE"} <= rules
    assert all(u["nodes"] == ["legacy-07"] for u in doc["unknowns"])


def test_nodes_from_the_inventory(tmp_path, monkeypatch, capsys, warning_facts):
    from imgcheck.model.node_io import load_node_facts
    from imgcheck.node.inventory import Inventory

    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path / "home"))
    inv = Inventory.default()
    inv.add(load_node_facts(nf("inbox-5.15-proprietary-535")))
    inv.add(load_node_facts(nf("inbox-6.8-open-570")))
    code, doc, err = run_json(capsys, [f"facts:{warning_facts}", "--node", "gpu-inbox-515"])
    assert code == 0, err
    assert [n["name"] for n in doc["nodes"]] == ["gpu-inbox-515"]
    assert any(f["id"] == "GDR-PEERMEM-MISSING" for f in doc["findings"])
    assert main([f"facts:{warning_facts}", "--node", "no-such-node"]) == 3


def test_fleet_from_the_inventory(tmp_path, monkeypatch, capsys, warning_facts):
    """A 30-node fleet of two node kinds: every node is named in the findings, two engine evaluations."""
    import dataclasses

    from imgcheck.engine import report as engine_report
    from imgcheck.model.node_io import load_node_facts
    from imgcheck.node.inventory import Inventory

    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path / "home"))
    inv = Inventory.default()
    for i in range(20):
        n = load_node_facts(nf("inbox-5.15-proprietary-535"))
        inv.add(dataclasses.replace(n, name=f"a{i:02d}", labels={"pool": "train"}))
    for i in range(10):
        n = load_node_facts(nf("doca-24.10-open-580-peermem"))
        inv.add(dataclasses.replace(n, name=f"b{i:02d}", labels={"pool": "train"}))
    calls = []
    real = engine_report.evaluate
    monkeypatch.setattr(engine_report, "evaluate", lambda *a: calls.append(a[1].name) or real(*a))
    code, doc, err = run_json(capsys, [f"facts:{warning_facts}", "--fleet", "pool=train"])
    assert code == 0, err
    assert len(doc["nodes"]) == 30 and len(calls) == 2
    gdr = next(f for f in doc["findings"] if f["id"] == "GDR-PEERMEM-MISSING")
    assert sorted(gdr["nodes"]) == [f"a{i:02d}" for i in range(20)]
    assert main([f"facts:{warning_facts}", "--fleet", "pool=none"]) == 3
