"""docs/ci/: the CI recipes parse as YAML, call imgcheck with flags it knows, and upload what it writes."""

from __future__ import annotations

import os
import shlex

import pytest
import yaml

from imgcheck.cli import main as cli_main
from imgcheck.formats.report_formats import REPORT_FORMATS

CI_DIR = os.path.join(os.path.dirname(__file__), "..", "docs", "ci")


def _load(name: str) -> dict:
    with open(os.path.join(CI_DIR, name), encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def _imgcheck_lines(scripts: list[str]) -> list[list[str]]:
    return [shlex.split(s) for s in scripts if s.strip().startswith("imgcheck ")]


def _outputs(argv: list[str]) -> dict[str, str | None]:
    out = {}
    for flag, value in zip(argv, argv[1:]):
        if flag in ("-o", "--output"):
            fmt, _, path = value.partition("=")
            out[fmt] = path or None
    return out


def _assert_cli_accepts(argv: list[str]) -> None:
    """Parse the recipe's command line with imgcheck's own parser (nothing runs)."""
    args = list(argv[1:])
    try:  # `imgcheck IMAGE ...` is parsed as `imgcheck check IMAGE ...`, by the parser main() picks
        parsed = cli_main.parser_for(args).parse_args(args)
    except SystemExit as exc:  # argparse printed which flag it does not know
        pytest.fail(f"imgcheck does not accept the recipe's command line {argv!r} (exit {exc.code})")
    assert parsed.command == "check"


def _check_common(argv: list[str]) -> dict[str, str | None]:
    outputs = _outputs(argv)
    assert set(outputs) <= set(REPORT_FORMATS)
    assert "--fleet" in argv and "--fail-on" in argv
    assert [p for p in outputs.values() if p is None] == [None]  # exactly one format on stdout (the log)
    return outputs


def test_github_actions_recipe():
    wf = _load("github-actions.yml")
    assert wf["permissions"]["security-events"] == "write"
    steps = wf["jobs"]["imgcheck"]["steps"]
    lines = _imgcheck_lines([s.get("run", "") for s in steps])
    assert len(lines) == 1
    argv = lines[0]
    outputs = _check_common(argv)
    assert outputs["sarif"] == "imgcheck.sarif" and outputs["junit"] == "imgcheck.xml"
    by_action = {s["uses"].split("@")[0]: s for s in steps if "uses" in s}
    upload = by_action["github/codeql-action/upload-sarif"]
    assert upload["with"]["sarif_file"] == outputs["sarif"]
    # reports are uploaded even when imgcheck's exit code failed the job
    assert "!cancelled()" in upload["if"]
    assert by_action["mikepenz/action-junit-report"]["with"]["report_paths"] == outputs["junit"]
    assert outputs["junit"] in by_action["actions/upload-artifact"]["with"]["path"]


def test_gitlab_ci_recipe():
    ci = _load("gitlab-ci.yml")
    job = ci["imgcheck"]
    lines = _imgcheck_lines(job["script"])
    assert len(lines) == 1
    argv = lines[0]
    outputs = _check_common(argv)
    assert job["artifacts"]["when"] == "always"  # the report is kept when the gate fails the job
    assert job["artifacts"]["reports"]["junit"] == outputs["junit"]
    assert ci["build-image"]["stage"] in ci["stages"] and job["stage"] in ci["stages"]


def _recipe_command(name: str) -> list[str]:
    doc = _load(name)
    if name == "gitlab-ci.yml":
        return _imgcheck_lines(doc["imgcheck"]["script"])[0]
    return _imgcheck_lines([s.get("run", "") for s in doc["jobs"]["imgcheck"]["steps"]])[0]


@pytest.mark.parametrize("name", ["github-actions.yml", "gitlab-ci.yml"])
def test_recipes_use_flags_imgcheck_knows(name):
    _assert_cli_accepts(_recipe_command(name))


def test_parser_check_really_rejects_unknown_flags():
    """The acceptance check above would catch a renamed flag."""
    for args in (["check", "img", "--no-such-flag"], ["img", "--no-such-flag"]):
        with pytest.raises(SystemExit):
            cli_main.parser_for(args).parse_args(args)


def test_sarif_run_category_is_per_image_repository():
    """The recipe relies on the SARIF's own automationDetails.id instead of a `category:` input."""
    import dataclasses
    import json

    from formats_sample import sample_report

    from imgcheck.formats.report_formats import render

    report = sample_report()
    ids = {
        json.loads(
            render(dataclasses.replace(report, image=dataclasses.replace(report.image, reference=ref)), "sarif")
        )["runs"][0]["automationDetails"]["id"]
        for ref in ("registry.example/team/trainer:abc", "registry.example/team/trainer:def")
    }
    assert ids == {"imgcheck/registry.example/team/trainer/"}  # same image, new tag: same category
    steps = _load("github-actions.yml")["jobs"]["imgcheck"]["steps"]
    upload = next(s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif"))
    assert "category" not in upload["with"]
