"""Issue 37: errors that repeat what the user typed stay one short line, suggest the name they meant,
and `check --help` says what each exit code means."""

from __future__ import annotations

import subprocess
import sys

import pytest

from imgcheck.cli.main import main
from imgcheck.errors import EXIT_FINDINGS, EXIT_INTERRUPTED, EXIT_UNAVAILABLE, EXIT_USAGE
from imgcheck.user_text import clip_words, did_you_mean


@pytest.mark.parametrize(
    "argv",
    [
        ["inspect", "a" * 100_000],
        ["inspect", "registry:" + "A" * 20_000 + "/x:1"],
        ["inspect", "x", "-o", "b" * 50_000],
        ["node", "show", "n" * 10_000],
        ["check", "x", "--job", "/tmp/" + "j" * 30_000, "--node-facts", "/nonexistent"],
    ],
)
def test_long_input_is_quoted_short(capsys, argv):
    code = main(argv)
    err = capsys.readouterr().err
    assert code in (EXIT_USAGE, EXIT_UNAVAILABLE)
    assert err.count("\n") == 1 and len(err) < 600, err[:300]
    assert "characters)" in err


def test_argparse_errors_are_cut_short_too(capsys):
    assert main(["check", "x", "--fail-on", "q" * 10_000]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert len(err.splitlines()[-1]) < 400 and "(10000 characters)" in err


def test_fleet_name_typo_is_suggested(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path))
    (tmp_path / "fleets").mkdir()
    (tmp_path / "fleets" / "prod.txt").write_text("gpu-a01\n")
    assert main(["check", "x", "--fleet", "prdo"]) == EXIT_UNAVAILABLE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "did you mean 'prod'?" in err


def test_check_help_lists_the_exit_codes():
    for argv in (["check", "--help"], ["--help-check-default"]):
        if argv[0] == "--help-check-default":
            argv = ["--node", "n", "--help"]  # the bare `imgcheck [CHECK OPTIONS] IMAGE` form
        out = subprocess.run([sys.executable, "-m", "imgcheck.cli.main", *argv], capture_output=True, text=True).stdout
        text = " ".join(out.split())
        assert "exit codes:" in text
        for code in (0, EXIT_FINDINGS, EXIT_USAGE, EXIT_UNAVAILABLE, EXIT_INTERRUPTED):
            assert f"{code} " in text.split("exit codes:", 1)[1]


def test_helpers():
    assert did_you_mean("GDR-PERMEM-MISSING", ["GDR-PEERMEM-MISSING", "RDMA-PABI-MISMATCH"]) == (
        " (did you mean 'GDR-PEERMEM-MISSING'?)"
    )
    assert did_you_mean("zzzz", ["GDR-PEERMEM-MISSING"]) == ""
    assert clip_words("short words stay") == "short words stay"
    assert clip_words(f"bad name '{'x' * 500}': why") == f"bad name '{'x' * 80}... (500 characters)': why"


def test_node_name_typo_is_suggested(tmp_path, monkeypatch, capsys):
    from pathlib import Path

    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path))
    node = Path(__file__).parent / "fixtures" / "engine_nodes" / "cpu-no-rdma.json"
    assert main(["node", "add", str(node)]) == 0
    name = sorted(p.stem for p in (tmp_path / "nodes").glob("*.json"))[0]
    capsys.readouterr()
    assert main(["check", "x", "--node", name[:-1] + "z"]) == EXIT_UNAVAILABLE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"did you mean {name!r}?" in err
