"""Runtime selection, the enroot/apptainer command lines, and the CLI's one-line errors."""

from __future__ import annotations

import shutil
import time

import pytest

from imgcheck.cli.main import main
from imgcheck.errors import UnavailableError
from imgcheck.verify.runtimes import get_runtime
from imgcheck.verify.runtimes.apptainer_rt import exec_argv
from imgcheck.verify.runtimes.base import VERIFIER_IN_CONTAINER, RunRequest
from imgcheck.verify.runtimes.cli_exec import run_cli
from imgcheck.verify.runtimes.enroot_rt import start_argv

REQ = RunRequest(
    image="img.sif",
    verifier="/cache/imgcheck-verifier-x",
    env={"IBV_SHOW_WARNINGS": "1"},
    devices=("/dev/infiniband/uverbs0",),
    gpus=True,
)


@pytest.mark.parametrize("name,program", [("enroot", "enroot"), ("apptainer", "apptainer")])
def test_missing_runtime_says_so_plainly(name, program, capsys):
    if shutil.which(program):
        pytest.skip(f"{program} is installed here")
    with pytest.raises(UnavailableError, match=f"{name} is not installed on this machine"):
        get_runtime(name)
    code = main(["verify", "some-image", "--runtime", name])
    err = capsys.readouterr().err
    assert code == 3 and err.count("\n") == 1 and "is not installed on this machine" in err


def test_bad_arguments_are_usage_errors(capsys):
    assert main(["verify", "x", "--runtime", "podman"]) == 2
    assert main(["verify", "x", "--timeout", "0"]) == 2
    assert main(["verify", "x", "--memlock", "lots"]) == 2
    assert "--memlock" in capsys.readouterr().err


def test_apptainer_command_is_contained_and_read_only():
    argv = exec_argv(REQ)
    assert argv[:5] == ["apptainer", "exec", "--containall", "--cleanenv", "--no-home"]
    assert f"/cache/imgcheck-verifier-x:{VERIFIER_IN_CONTAINER}:ro" in argv
    assert "/dev/infiniband" in argv and "--nv" in argv
    assert argv[-2:] == ["img.sif", VERIFIER_IN_CONTAINER]
    assert "--writable" not in argv


def test_enroot_command_mounts_read_only_and_never_rw():
    argv = start_argv(REQ, "imgcheck-verify-abc")
    assert argv[:2] == ["enroot", "start"] and "--rw" not in argv and "--root" not in argv
    assert f"/cache/imgcheck-verifier-x:{VERIFIER_IN_CONTAINER}:none:x-create=file,bind,ro" in argv
    assert argv[-3:] == ["--", "imgcheck-verify-abc", VERIFIER_IN_CONTAINER]
    assert "NVIDIA_VISIBLE_DEVICES=all" in argv


def test_cli_runtime_time_limit_kills_the_process_group():
    code, out, _, timed_out = run_cli(["sh", "-c", "sleep 300 & echo $!; wait"], timeout=1)
    assert timed_out and code is None
    child = int(out.split()[0])
    for _ in range(100):  # the kill is asynchronous: wait until it is gone or a zombie
        try:
            with open(f"/proc/{child}/stat") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] == "Z":
                    break
        except FileNotFoundError:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"the runtime's child process {child} survived the time limit")
