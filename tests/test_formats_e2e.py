"""End to end: the real CLI checks the real Debian bookworm image against node facts and writes every
format at once; each file is validated by a real consumer (JSON Schema, SARIF schema, junitparser,
markdown-it), and the formats agree with each other and with the exit code."""

from __future__ import annotations

import dataclasses
import json
import os

import jsonschema
import junitparser
import pytest
from formats_sample import inbox_node, ofed_node
from markdown_it import MarkdownIt

from imgcheck.cli.main import main
from imgcheck.model.node import Limits
from imgcheck.model.node_io import dump_node_facts

pytestmark = pytest.mark.e2e

HERE = os.path.dirname(__file__)


def _schema(*parts: str) -> dict:
    with open(os.path.join(HERE, *parts), encoding="utf-8") as fh:
        return json.load(fh)


@pytest.fixture
def node_files(tmp_path):
    # gpu-a01: unlimited memlock (fine); gpu-b01: 64 KiB, which NCCL's registrations cannot live with
    nodes = [
        dataclasses.replace(ofed_node("gpu-a01"), limits=Limits(memlock_kib=-1)),
        dataclasses.replace(inbox_node("gpu-b01"), limits=Limits(memlock_kib=64), unknown={}),
    ]
    paths = []
    for node in nodes:
        path = tmp_path / f"{node.name}.json"
        path.write_text(dump_node_facts(node), encoding="utf-8")
        paths.append(str(path))
    return paths


def _run(tmp_path, archive, node_files, *extra) -> tuple[int, dict[str, str]]:
    files = {
        fmt: str(tmp_path / name)
        for fmt, name in (
            ("json", "r.json"),
            ("sarif", "r.sarif"),
            ("junit", "r.xml"),
            ("markdown", "r.md"),
            ("table", "r.txt"),
        )
    }
    argv = [f"docker-archive:{archive}", "-q"]
    for path in node_files:
        argv += ["--node-facts", path]
    for fmt, path in files.items():
        argv += ["-o", f"{fmt}={path}"]
    code = main(argv + list(extra))
    return code, files


def test_all_formats_from_one_real_check_agree(tmp_path, debian_archive, node_files, capsys):
    code, files = _run(tmp_path, debian_archive("bookworm"), node_files)
    assert capsys.readouterr().out == ""  # every format went to a file; nothing leaked to stdout

    report = json.loads(open(files["json"], encoding="utf-8").read())
    jsonschema.Draft202012Validator(_schema("..", "docs", "report.schema.json")).validate(report)
    assert report["image"]["rdma"]["libibverbs"]["version"] == "1.14.44.0"
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    error_nodes = {n for f in errors for n in f["nodes"]}
    assert "gpu-b01" in error_nodes and "gpu-a01" not in error_nodes  # the 64 KiB memlock node fails
    assert code == (1 if errors else 0)  # --fail-on error (default): exit 1, files already written

    sarif = json.loads(open(files["sarif"], encoding="utf-8").read())
    jsonschema.Draft4Validator(
        _schema("data", "sarif-schema-2.1.0.json"), format_checker=jsonschema.FormatChecker()
    ).validate(sarif)
    results = sarif["runs"][0]["results"]
    # one alert per problem (rule and title), however many node groups it is on; info is not an alert
    problems = {(f["id"], f["title"]) for f in report["findings"] if f["severity"] != "info"}
    assert sorted(r["ruleId"] for r in results) == sorted(rule for rule, _ in problems)

    xml = junitparser.JUnitXml.fromfile(files["junit"])
    failing = {
        case.classname
        for suite in xml
        for case in suite
        if any(isinstance(r, junitparser.Failure) for r in case.result)
    }
    assert failing == error_nodes

    md = open(files["markdown"], encoding="utf-8").read()
    MarkdownIt("commonmark").enable("table").parse(md)
    assert md.count("<details>") == len({(f["id"], f["title"]) for f in report["findings"]})  # one per problem
    table = open(files["table"], encoding="utf-8").read()
    assert table.startswith("FAIL " if errors else "OK ")
    assert "\x1b[" not in table  # a file is never coloured


def test_fail_on_never_exits_zero_with_the_same_reports(tmp_path, debian_archive, node_files):
    code, files = _run(tmp_path, debian_archive("bookworm"), node_files, "--fail-on", "never")
    assert code == 0
    report = json.loads(open(files["json"], encoding="utf-8").read())
    assert report["verdict"] == "fail"  # the verdict is the report's; the gate is the exit code
    xml = junitparser.JUnitXml.fromfile(files["junit"])
    assert all(not any(isinstance(r, junitparser.Failure) for r in case.result) for suite in xml for case in suite)
