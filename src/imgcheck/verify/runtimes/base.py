"""What a runtime is asked to do, what it reports back, and the host facts every runtime needs."""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field

VERIFIER_IN_CONTAINER = "/.imgcheck-verifier"  # where the binary is bind-mounted (read-only)
LABEL = "io.imgcheck.verify"  # every container verify creates carries this label
DEFAULT_TIMEOUT = 120.0


@dataclass(frozen=True)
class RunRequest:
    image: str  # in the runtime's own words: docker reference, enroot squashfs/container, SIF path
    verifier: str  # host path of the verifier binary
    timeout: float = DEFAULT_TIMEOUT
    env: dict[str, str] = field(default_factory=dict)
    devices: tuple[str, ...] = ()  # host device nodes to pass in (/dev/infiniband/*)
    gpus: bool = False  # ask the runtime for the node's GPUs
    memlock: int | None = -1  # bytes for RLIMIT_MEMLOCK; -1 unlimited; None = the runtime's default


@dataclass(frozen=True)
class RunOutcome:
    runtime: str
    exit_code: int | None  # None when killed on timeout
    stdout: str
    stderr: str
    timed_out: bool = False
    settings: tuple[str, ...] = ()  # what isolation was applied, in words, for the report
    notes: tuple[str, ...] = ()  # what could not be applied, and why
    start_error: str | None = None  # the runtime could not start the verifier at all


def rdma_device_nodes(root: str = "/") -> tuple[str, ...]:
    """The host's RDMA character devices (uverbsN, rdma_cm, umadN, issmN), as NCCL needs uverbs + rdma_cm."""
    base = os.path.join(root, "dev/infiniband")
    return tuple(sorted("/" + os.path.relpath(p, root) for p in glob.glob(os.path.join(base, "*"))))


def host_has_gpu(root: str = "/") -> bool:
    """An NVIDIA driver is loaded on this host (its control device exists)."""
    return os.path.exists(os.path.join(root, "dev/nvidiactl"))


def verifier_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {"IBV_SHOW_WARNINGS": "1"}  # libibverbs then says why a provider did not load
    env.update(extra or {})
    return env
