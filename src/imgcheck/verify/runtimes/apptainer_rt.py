"""Run the verifier with Apptainer (or SingularityCE) through its command line.

IMAGE is anything `apptainer exec` accepts: a SIF file, docker://..., docker-daemon:..., oras://...
Safety: --containall (own PID/IPC namespaces, minimal /dev, no home, clean environment), the SIF
root filesystem is read-only, the verifier is bind-mounted read-only; /dev/infiniband is bound in
explicitly when the host has it, GPUs with --nv. Unprivileged Apptainer cannot detach the network
(`--net --network none` needs root or setuid), and the memlock limit is the caller's.
`apptainer exec` leaves no container behind; on timeout its process group is killed.
"""

from __future__ import annotations

import shutil

from ...errors import UnavailableError
from .base import VERIFIER_IN_CONTAINER, RunOutcome, RunRequest
from .cli_exec import run_cli

NAME = "apptainer"


def binary() -> str | None:
    return shutil.which("apptainer") or shutil.which("singularity")


def unavailable_reason() -> str | None:
    if binary() is None:
        return "apptainer is not installed on this machine (no `apptainer` or `singularity` command in PATH)"
    return None


def exec_argv(req: RunRequest, program: str = "apptainer") -> list[str]:
    argv = [program, "exec", "--containall", "--cleanenv", "--no-home"]
    for key, value in sorted(req.env.items()):
        argv += ["--env", f"{key}={value}"]
    argv += ["--bind", f"{req.verifier}:{VERIFIER_IN_CONTAINER}:ro"]
    if req.devices:
        argv += ["--bind", "/dev/infiniband"]
    if req.gpus:
        argv.append("--nv")
    argv += [req.image, VERIFIER_IN_CONTAINER]
    return argv


def run(req: RunRequest) -> RunOutcome:
    program = binary()
    if program is None:
        raise UnavailableError(unavailable_reason() or "apptainer is not installed")
    settings = [
        "--containall (own PID/IPC namespaces, minimal /dev, clean environment)",
        "read-only image",
        "verifier mounted read-only",
        f"time limit {req.timeout:g}s",
    ]
    if req.devices:
        settings.append("/dev/infiniband bound in")
    notes = ["unprivileged apptainer shares the host network: network isolation is not applied"]
    if req.memlock is not None:
        notes.append("apptainer cannot raise the memlock limit: the verifier sees the caller's `ulimit -l`")
    code, out, err, timed_out = run_cli(exec_argv(req, program), req.timeout)
    return RunOutcome(NAME, code, out, err, timed_out=timed_out, settings=tuple(settings), notes=tuple(notes))
