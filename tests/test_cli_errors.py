"""Every error is one line on stderr and exit 2 or 3, with or without --debug, wherever --debug is written."""

from __future__ import annotations

import pytest

from imgcheck.cli import check_cmd
from imgcheck.cli.main import main


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "facts:/nonexistent/facts.json", "--node-facts", "/nonexistent/node.json"],
        ["inspect", "oci-dir:/nonexistent/layout"],
    ],
)
def test_cannot_obtain_is_3_with_and_without_debug(capsys, argv):
    assert main(argv) == 3
    err = capsys.readouterr().err
    assert len(_lines(err)) == 1 and err.startswith("imgcheck: error: ")
    for placed in (["--debug"] + argv, argv + ["--debug"]):  # before or after the subcommand
        assert main(placed) == 3
        err = capsys.readouterr().err
        assert "Traceback (most recent call last)" in err
        assert _lines(err)[-1].startswith("imgcheck: error: ")


def test_bad_input_stays_2_under_debug(capsys):
    assert main(["inspect", "registry:UPPER/Case::bad", "--debug"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and _lines(err)[-1].startswith("imgcheck: error: ")


def test_debug_after_double_dash_is_an_operand(capsys, tmp_path):
    # `--` ends the options: a file really named --debug is a path, not the flag
    assert main(["inspect", "--", "--debug"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(_lines(err)) == 1


@pytest.mark.parametrize(
    "exc, code",
    [(RuntimeError("engine bug"), 2), (KeyError("x"), 2), (ConnectionResetError(104, "Connection reset by peer"), 3)],
)
def test_unexpected_exception_is_one_line_never_1(capsys, monkeypatch, exc, code):
    def boom(args):
        raise exc

    monkeypatch.setattr(check_cmd, "run", boom)  # a fake only for the error path
    argv = ["check", "facts:x.json", "--node-facts", "n.json"]
    assert main(argv) == code
    err = capsys.readouterr().err
    assert _lines(err) == [err.strip()] and type(exc).__name__ in err and "--debug" in err
    assert main(argv + ["--debug"]) == code
    assert "Traceback" in capsys.readouterr().err


def test_verify_docker_scheme_is_one_line(capsys):
    # The command: imgcheck's own `docker:` spelling given to verify (Docker itself wants REF).
    # No image named debian:12 is in this machine's daemon (or no daemon): 3, one line, no traceback.
    code = main(["verify", "docker:debian:12", "--no-static"])
    err = capsys.readouterr().err
    assert code in (2, 3) and len(_lines(err)) == 1 and "Traceback" not in err, err
    assert "docker:debian:12" not in err  # the scheme word was understood, not sent to Docker


def test_debug_shows_the_cause_of_a_wrapped_error(capsys, tmp_path, monkeypatch):
    """`raise ... from exc`: the one line is imgcheck's, the traceback under --debug goes down to YAML's error."""
    import os

    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    bad = tmp_path / ".imgcheckignore"
    bad.write_text("ignore: [unclosed\n")
    argv = [
        "facts:" + os.path.join(repo, "examples", "incidents", "nccl-1842-image.json"),
        "--node-facts",
        os.path.join(repo, "examples", "incidents", "nccl-1842-node.json"),
        "--ignore-file",
        str(bad),
    ]
    assert main(argv) == 2
    assert len(_lines(capsys.readouterr().err)) == 1
    assert main(argv + ["--debug"]) == 2
    err = capsys.readouterr().err
    assert "The above exception was the direct cause" in err and "yaml" in err and "line 2" in err
    assert _lines(err)[-1].startswith("imgcheck: error: ") and "not valid YAML" in _lines(err)[-1]
