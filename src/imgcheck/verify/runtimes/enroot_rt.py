"""Run the verifier with NVIDIA enroot (the `enroot` command line).

IMAGE is an enroot squashfs (`*.sqsh`, as `enroot import` writes it) or the name of an existing enroot
container. A squashfs is unpacked into a temporary container that is removed afterwards, also on
timeout or error. enroot is unprivileged: the root filesystem is read-only (no --rw), the verifier
is bind-mounted read-only, but the container shares the host's network namespace and /dev (so
/dev/infiniband is visible without passing it) and inherits the caller's memlock limit, which
enroot cannot raise: run verify under `ulimit -l unlimited` (Slurm: PropagateResourceLimits).
enroot runs the command through the image's /etc/rc, so the image needs /bin/sh.
"""

from __future__ import annotations

import os
import shutil
import uuid

from ...errors import UnavailableError
from .base import VERIFIER_IN_CONTAINER, RunOutcome, RunRequest
from .cli_exec import run_cli

NAME = "enroot"


def unavailable_reason() -> str | None:
    if shutil.which("enroot") is None:
        return "enroot is not installed on this machine (no `enroot` command in PATH)"
    return None


def start_argv(req: RunRequest, target: str) -> list[str]:
    argv = ["enroot", "start"]
    for key, value in sorted(req.env.items()):
        argv += ["--env", f"{key}={value}"]
    if req.gpus:  # enroot's 98-nvidia hook acts on these
        argv += ["--env", "NVIDIA_VISIBLE_DEVICES=all", "--env", "NVIDIA_DRIVER_CAPABILITIES=compute,utility"]
    argv += ["--mount", f"{req.verifier}:{VERIFIER_IN_CONTAINER}:none:x-create=file,bind,ro"]
    argv += ["--", target, VERIFIER_IN_CONTAINER]
    return argv


def run(req: RunRequest) -> RunOutcome:
    reason = unavailable_reason()
    if reason:
        raise UnavailableError(reason)
    settings = [
        "read-only root filesystem",
        "verifier mounted read-only",
        f"time limit {req.timeout:g}s",
        "unprivileged (user namespace)",
    ]
    notes = [
        "enroot shares the host network namespace: network isolation is not applied",
        "enroot shares the host /dev: RDMA devices are visible without being passed",
    ]
    if req.memlock is not None:
        notes.append("enroot cannot raise the memlock limit: the verifier sees the caller's `ulimit -l`")
    created = None
    target = req.image
    try:
        if os.path.isfile(req.image):
            created = f"imgcheck-verify-{uuid.uuid4().hex[:12]}"
            code, _, err, timed_out = run_cli(["enroot", "create", "--name", created, req.image], req.timeout)
            if timed_out or code != 0:
                raise UnavailableError(
                    f"enroot create failed for {req.image}: {(err.strip().splitlines() or ['timed out'])[-1]}"
                )
            target = created
        code, out, err, timed_out = run_cli(start_argv(req, target), req.timeout)
        return RunOutcome(NAME, code, out, err, timed_out=timed_out, settings=tuple(settings), notes=tuple(notes))
    finally:
        if created:
            run_cli(["enroot", "remove", "--force", created], 120)
