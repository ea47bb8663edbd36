"""--ignore and the ignore file (.imgcheckignore YAML or [tool.imgcheck] in pyproject.toml), on the real example.

The example image (Debian bookworm's real RDMA files) carries NCCL_IB_RETRY_CNT=16, an error on the
example node, so an accepted ignore turns exit 1 into exit 0 and the report keeps what was ignored and why.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from imgcheck.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
ARGV = [
    f"oci-dir:{ROOT / 'examples' / 'bookworm-rdma'}",
    "--node-facts",
    str(ROOT / "examples" / "nodes" / "inbox-535-proprietary.json"),
]
RULE = "ENV-NCCL-IB-RETRY-CNT"


def _run(capsys, *extra):
    code = main(ARGV + list(extra) + ["-o", "json"])
    out = capsys.readouterr()
    return code, (json.loads(out.out) if out.out.strip() else None), out.err


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the ignore file is looked up in the working directory


def test_without_ignores_the_example_fails(capsys):
    code, doc, _ = _run(capsys)
    assert code == 1 and RULE in [f["id"] for f in doc["findings"]]


def test_unknown_rule_id_is_exit_2_with_a_suggestion(capsys):
    code, _, err = _run(capsys, "--ignore", "ENV-NCCL-IB-RETRY-COUNT", "--reason", "typo")
    assert code == 2
    assert err.count("\n") == 1 and "unknown rule id ENV-NCCL-IB-RETRY-COUNT" in err
    assert f"did you mean '{RULE}'?" in err  # issue 37: the close rule id, not a list of every rule
    assert "RDMA-PABI-MISMATCH" not in err


def test_unknown_rule_id_in_the_ignore_file_gets_a_suggestion(tmp_path, capsys):
    (tmp_path / ".imgcheckignore").write_text("ignore:\n  - rule: env-nccl-ib-retry-cnt\n    reason: x\n")
    code, _, err = _run(capsys)
    assert code == 2 and err.count("\n") == 1
    assert f"did you mean '{RULE}'?" in err


def test_yaml_ignore_file_with_reason_and_expiry(tmp_path, capsys):
    (tmp_path / ".imgcheckignore").write_text(
        "ignore:\n"
        f"  - rule: {RULE}\n"
        "    reason: the retry count is overridden by the job launcher (INFRA-12)\n"
        "    expires: 2999-12-31\n"
    )
    code, doc, err = _run(capsys)
    assert code == 0, err
    assert RULE not in [f["id"] for f in doc["findings"]]
    assert doc["suppressed"] == [
        {
            "rule": RULE,
            "node": None,
            "expires": "2999-12-31",
            "origin": "./.imgcheckignore",
            "reason": "the retry count is overridden by the job launcher (INFRA-12)",
        }
    ]
    assert main(ARGV + ["-o", "table"]) == 0
    table = capsys.readouterr().out
    assert "until 2999-12-31" in table and "INFRA-12" in table


def test_expired_entry_no_longer_applies_and_says_so(tmp_path, capsys):
    (tmp_path / ".imgcheckignore").write_text(
        f"ignore:\n  - rule: {RULE}\n    reason: temporary\n    expires: 2001-01-31\n"
    )
    code, doc, err = _run(capsys)
    assert code == 1 and RULE in [f["id"] for f in doc["findings"]]
    assert "warning" in err and "expired on 2001-01-31" in err and doc["suppressed"] == []


def test_node_list_narrows_the_ignore(tmp_path, capsys):
    (tmp_path / ".imgcheckignore").write_text(
        f"ignore:\n  - rule: {RULE}\n    reason: not this node\n    nodes: [some-other-node]\n"
    )
    code, doc, _ = _run(capsys)
    assert code == 1 and RULE in [f["id"] for f in doc["findings"]]


def test_pyproject_section(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "trainer"\n\n'
        f'[[tool.imgcheck.ignore]]\nrule = "{RULE}"\nreason = "accepted for the eval pool"\nexpires = 2999-01-01\n'
    )
    code, doc, err = _run(capsys)
    assert code == 0, err
    assert doc["suppressed"][0]["origin"].endswith("pyproject.toml")
    assert doc["suppressed"][0]["expires"] == "2999-01-01"


def test_a_pyproject_without_the_section_is_not_an_ignore_file(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "trainer"\n')
    assert _run(capsys)[0] == 1


@pytest.mark.parametrize(
    "text, words",
    [
        ("ignore:\n  - rule: ENV-NCCL-IB-RETRY-CNT\n", "reason is missing"),
        ("ignore:\n  - rule: NO-SUCH-RULE\n    reason: x\n", "unknown rule id NO-SUCH-RULE"),
        ("ignore:\n  - rule: ENV-NCCL-IB-RETRY-CNT\n    reason: x\n    expires: soon\n", "not a date"),
        ("ignore:\n  - rule: ENV-NCCL-IB-RETRY-CNT\n    reason: x\n    until: 2030-01-01\n", "unknown key(s) until"),
        ("ignore: [\n", "not valid YAML"),
        ("- ENV-NCCL-IB-RETRY-CNT\n", "expected a mapping"),
    ],
)
def test_bad_ignore_file_is_exit_2_one_line(tmp_path, capsys, text, words):
    (tmp_path / ".imgcheckignore").write_text(text)
    code, doc, err = _run(capsys)
    assert code == 2 and doc is None
    assert err.count("\n") == 1 and words in err and ".imgcheckignore" in err


def test_explicit_file_and_opting_out(tmp_path, capsys):
    (tmp_path / "accepted.yaml").write_text(f"ignore:\n  - rule: {RULE}\n    reason: ok\n")
    assert _run(capsys, "--ignore-file", str(tmp_path / "accepted.yaml"))[0] == 0
    assert _run(capsys, "--ignore-file", str(tmp_path / "missing.yaml"))[0] == 3
    (tmp_path / ".imgcheckignore").write_text(f"ignore:\n  - rule: {RULE}\n    reason: ok\n")
    assert _run(capsys, "--no-ignore-file")[0] == 1
