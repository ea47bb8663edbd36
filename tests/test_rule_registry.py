"""A rule is one registered unit: its family module (RULES, check, NEEDS) registered in engine/evaluate.py,
its rules.json row, and either a live check in imgcheck verify or a stated reason it has none. The rule docs
(docs/rules.md: its rule table and rule texts) are generated from rules.json and fail here when they drift."""

from __future__ import annotations

import importlib
import pathlib
import types

import pytest

from imgcheck.matrix import load_matrix, read_files
from imgcheck.matrix.docs import GENERATED, rules_markdown, rules_table
from imgcheck.matrix.schema import validate_files
from imgcheck.verify.join import LIVE_CHECKED_RULES

ev = importlib.import_module("imgcheck.engine.evaluate")  # the module (the package exports the function)
ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def matrix():
    return load_matrix(required=ev.REQUIRED_ROWS)


def test_every_registered_rule_has_one_row_and_every_row_is_registered(matrix):
    rows = [r["id"] for r in matrix.rows("rules")]
    assert sorted(rows) == sorted(ev.RULE_IDS)
    family_of = {rule: family.__name__.rsplit(".", 1)[-1] for family in ev.REGISTERED for rule in family.RULES}
    for row in matrix.rows("rules"):
        assert row["family"] == family_of[row["id"]], row["id"]


def test_registering_a_family_derives_rule_ids_and_required_rows():
    fake = types.SimpleNamespace(RULES=("X-NEW-RULE",), NEEDS={"thresholds": {"x_limit"}}, check=lambda ctx: ())
    ids = ev.rule_ids(ev.REGISTERED + (fake,))
    needs = ev.required_rows(ev.REGISTERED + (fake,), ids)
    assert "X-NEW-RULE" in ids and "X-NEW-RULE" in needs["rules"] and "x_limit" in needs["thresholds"]
    files, _ = read_files(None)
    problems = validate_files(files, needs)
    assert any("X-NEW-RULE" in p for p in problems) and any("x_limit" in p for p in problems)
    with pytest.raises(ValueError):
        ev.rule_ids(ev.REGISTERED + (types.SimpleNamespace(RULES=("RDMA-NO-LIBIBVERBS",)),))


def test_every_rule_is_verified_live_or_says_why_not(matrix):
    neither = [
        r["id"] for r in matrix.rows("rules") if r["id"] not in LIVE_CHECKED_RULES and not r.get("not_verifiable_live")
    ]
    both = [r["id"] for r in matrix.rows("rules") if r["id"] in LIVE_CHECKED_RULES and r.get("not_verifiable_live")]
    assert not neither, (
        "give each a check in verify/join.py check_from_finding (and LIVE_CHECKED_RULES) "
        f"or a not_verifiable_live reason in rules.json: {neither}"
    )
    assert not both, f"a live check and a reason it has none: {both}"
    assert LIVE_CHECKED_RULES <= set(ev.RULE_IDS)


def test_docs_rules_md_is_generated_from_rules_json(matrix):
    committed = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed == rules_markdown(matrix), "run: imgcheck matrix docs --write ."


def test_rule_table_lives_only_in_docs_rules_md_and_says_it_is_generated(matrix):
    committed = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed.startswith(f"<!-- {GENERATED} -->\n") and rules_table(matrix) in committed
    for rule in ev.RULE_IDS:
        assert f"| [`{rule}`](#{rule.lower()}) |" in committed and f"\n## {rule}\n" in committed
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "| Rule | Severity |" not in readme, "the README links to docs/rules.md instead of copying its table"
    assert "(docs/rules.md)" in readme


def test_matrix_docs_write_rewrites_docs_rules_md_only(matrix, tmp_path, capsys):
    from imgcheck.cli.main import main

    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("front page\n", encoding="utf-8")
    assert main(["matrix", "docs", "--write", str(tmp_path)]) == 0
    assert (tmp_path / "docs" / "rules.md").read_text(encoding="utf-8") == rules_markdown(matrix)
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == "front page\n"
    assert main(["matrix", "docs", "--write", str(tmp_path / "nowhere")]) == 3
    assert "no such directory" in capsys.readouterr().err


def test_rule_texts_name_matrix_values_and_validate_refuses_a_dangling_one(matrix):
    import json

    from imgcheck.engine import emit

    # the text says the floor the rows hold: edit the row and the message follows
    f = emit.finding(matrix, "DMABUF-UNSUPPORTED", (), nccl="2.13.4", why="x", nic_fix="y")
    assert f"NCCL >= {matrix.row('nccl_features', feature='dmabuf')['nccl_min']} uses DMA-BUF" in f.mechanism
    files, _ = read_files(None)
    rules = json.loads(files["rules.json"])
    rules["rows"][0]["mechanism"] += " {nccl_min[no_such_feature]} {stack_min[peer_memory_api.inbox]}"
    problems = validate_files({**files, "rules.json": json.dumps(rules).encode()}, ev.REQUIRED_ROWS)
    assert any("nccl_min[no_such_feature]" in p for p in problems)
    assert any("stack_min[peer_memory_api.inbox]" in p for p in problems)  # a null min_version is no value
