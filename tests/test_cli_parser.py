"""The command line's shape: `imgcheck IMAGE ...` is `check`, its options may come first, typos of a
command are usage errors, --help lists the commands. Runs the real CLI on the shipped incident example."""

from __future__ import annotations

import json
import os

import pytest

from imgcheck.cli import commands
from imgcheck.cli.main import main

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IMAGE = "facts:" + os.path.join(REPO, "examples", "incidents", "nccl-1842-image.json")
NODE = os.path.join(REPO, "examples", "incidents", "nccl-1842-node.json")


def _lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def _report(capsys, argv):
    code = main(argv)
    out = capsys.readouterr()
    doc = json.loads(out.out)
    doc.pop("generated_at")
    return code, doc, out.err


@pytest.mark.parametrize(
    "argv",
    [
        [IMAGE, "--node-facts", NODE, "-o", "json", "--fail-on", "warning"],  # the documented form
        ["--node-facts", NODE, "-o", "json", "--fail-on", "warning", IMAGE],  # every option before the image
        ["-o", "json", IMAGE, "--fail-on", "warning", "--node-facts", NODE],  # -o first
        ["--debug", "--fail-on", "warning", "--node-facts", NODE, IMAGE, "-o", "json"],  # --debug anywhere
    ],
)
def test_options_before_or_after_the_image_give_the_check_report(capsys, argv):
    expected = _report(capsys, ["check", IMAGE, "--node-facts", NODE, "-o", "json", "--fail-on", "warning"])
    code, doc, err = _report(capsys, argv)
    assert (code, doc) == expected[:2], err
    # the example's warnings fail under --fail-on warning however the options are placed
    assert code == 1 and doc["verdict"] == "warn" and doc["nodes"][0]["name"]


def test_output_path_given_first(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["-o", f"json={out}", "--node-facts", NODE, IMAGE]) == 0  # warnings only: exit 0
    assert json.loads(out.read_text())["image"]["reference"] == "incident:nccl-1842"


@pytest.mark.parametrize(
    "word, meant",
    [("chek", "check"), ("nod", "node"), ("serv", "serve"), ("recomend", "recommend"), ("inspct", "inspect")],
)
def test_a_mistyped_command_is_a_usage_error(capsys, word, meant):
    assert main([word, IMAGE, "--node-facts", NODE]) == 2
    out = capsys.readouterr()
    assert out.out == "" and _lines(out.err) == [out.err.strip()]  # one line, nothing was checked
    assert f"unknown command '{word}' (did you mean '{meant}'?)" in out.err
    assert f"imgcheck check {word}" in out.err  # how to check an image really named so


@pytest.mark.parametrize(
    "image", ["chek:latest", "library/chek", "chek@sha256:" + "0" * 64, "./nod", "ubuntu", "pytorch"]
)
def test_a_reference_or_an_unlike_word_is_an_image(capsys, image):
    # no nodes given: check stops at its own usage error before reading any image (no network)
    assert main([image]) == 2
    err = capsys.readouterr().err
    assert "no nodes to check against" in err and "unknown command" not in err


def test_check_spelled_out_takes_any_image_name(capsys):
    assert main(["check", "chek"]) == 2
    assert "no nodes to check against" in capsys.readouterr().err


def test_help_lists_every_command_and_the_default_rule(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in commands.names():
        assert f"\n    {name}" in out, name
    assert "imgcheck [CHECK OPTIONS] IMAGE" in out and "typo" in out


def test_help_after_check_options_is_checks_help(capsys):
    assert main(["--node", "gpu01", "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: imgcheck [CHECK OPTIONS] IMAGE") and "--fail-on" in out


@pytest.mark.parametrize(
    "argv, words",
    [
        ([], "usage: imgcheck"),  # no command at all: the help, on stderr
        (["--node-facts", NODE], "the following arguments are required: IMAGE"),
        (["--node-facts", NODE, IMAGE, "--no-such-flag"], "unrecognized arguments: --no-such-flag"),
        (["-o", "json"], "the following arguments are required: IMAGE"),
    ],
)
def test_incomplete_command_lines_exit_2(capsys, argv, words):
    assert main(argv) == 2
    out = capsys.readouterr()
    assert words in out.err and out.out == "" and "Traceback" not in out.err


def test_debug_shows_the_cause_in_the_options_first_form(capsys):
    assert main(["--debug", "--node-facts", "/nonexistent/node.json", IMAGE]) == 3
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and _lines(err)[-1].startswith("imgcheck: error: ")
