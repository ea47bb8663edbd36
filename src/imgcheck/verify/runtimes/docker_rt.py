"""Run the verifier with the Docker daemon through the `docker` SDK.

Safety: network none, read-only root filesystem, verifier bind-mounted read-only, all capabilities
dropped (IPC_LOCK added back only when RDMA devices are passed, so pinning memory beyond the limit
is possible), no-new-privileges, never privileged, devices passed one by one, pids and memory
capped, a time limit, and the container is removed in every case (finally), also on timeout.
"""

from __future__ import annotations

import platform as _platform
from typing import Any

from ...errors import BadInputError, UnavailableError
from .base import LABEL, VERIFIER_IN_CONTAINER, RunOutcome, RunRequest

NAME = "docker"
_ARCH = {"x86_64": "amd64", "aarch64": "arm64", "ppc64le": "ppc64le", "s390x": "s390x"}


def _client(timeout: float) -> Any:  # a docker.DockerClient: the SDK ships no type hints
    try:
        import docker  # type: ignore[import-untyped]  # ships no type hints
    except ImportError:  # pragma: no cover - a declared dependency
        raise UnavailableError("the docker Python package is not installed") from None
    try:
        client = docker.from_env(timeout=max(30, int(timeout) + 30))
        client.ping()
        return client
    except Exception as exc:  # DockerException, requests errors: the daemon is not reachable
        raise UnavailableError(f"cannot reach the Docker daemon: {exc}") from None


def unavailable_reason() -> str | None:
    try:
        _client(30).close()
    except UnavailableError as exc:
        return str(exc)
    return None


def container_options(req: RunRequest, image_id: str, with_memlock: bool = True) -> tuple[dict[str, Any], list[str]]:
    """The SDK arguments for containers.create, and the same settings in words."""
    from docker.types import DeviceRequest, Ulimit  # type: ignore[import-untyped]  # ships no type hints

    settings = [
        "network none",
        "read-only root filesystem",
        "verifier mounted read-only",
        "capabilities dropped",
        "no-new-privileges",
        "not privileged",
        f"time limit {req.timeout:g}s",
    ]
    cap_add = []
    if req.devices:
        cap_add = ["IPC_LOCK"]
        settings.append(f"devices {', '.join(req.devices)} with IPC_LOCK")
    ulimits = []
    if req.memlock is not None and with_memlock:
        ulimits = [Ulimit(name="memlock", soft=req.memlock, hard=req.memlock)]
        settings.append("memlock " + ("unlimited" if req.memlock < 0 else f"{req.memlock} bytes"))
    device_requests = []
    if req.gpus:
        device_requests = [DeviceRequest(count=-1, capabilities=[["gpu"]])]
        settings.append("all GPUs (NVIDIA container toolkit)")
    options = dict(
        image=image_id,
        entrypoint=[VERIFIER_IN_CONTAINER],
        command=[],
        environment=dict(req.env),
        network_mode="none",
        read_only=True,
        volumes={req.verifier: {"bind": VERIFIER_IN_CONTAINER, "mode": "ro"}},
        devices=[f"{d}:{d}:rwm" for d in req.devices],
        cap_drop=["ALL"],
        cap_add=cap_add,
        security_opt=["no-new-privileges"],
        privileged=False,
        ulimits=ulimits,
        device_requests=device_requests,
        mem_limit="1g",
        pids_limit=256,
        labels={LABEL: "1"},
        detach=True,
        tty=False,
        stdin_open=False,
    )
    return options, settings


def _explain(exc: Exception) -> str:
    return str(getattr(exc, "explanation", None) or exc)


def _attempt(client: Any, options: dict[str, Any], settings: list[str], notes: list[str], timeout: float) -> RunOutcome:
    """Create, start, wait, collect, and always remove one container."""
    from docker.errors import APIError, NotFound  # type: ignore[import-untyped]  # ships no type hints

    container = None
    try:
        try:
            container = client.containers.create(**options)
        except APIError as exc:
            raise UnavailableError(f"docker could not create the verifier container: {_explain(exc)}") from None
        try:
            container.start()
        except APIError as exc:
            return RunOutcome(
                NAME, None, "", "", settings=tuple(settings), notes=tuple(notes), start_error=_explain(exc)
            )
        timed_out, exit_code = False, None
        try:
            exit_code = int(container.wait(timeout=timeout).get("StatusCode", -1))
        except Exception:  # requests ReadTimeout / ConnectionError: the time limit passed
            timed_out = True
            try:
                container.kill()
            except (APIError, NotFound):
                pass
        stdout = container.logs(stdout=True, stderr=False).decode("utf-8", "replace")
        stderr = container.logs(stdout=False, stderr=True).decode("utf-8", "replace")
        return RunOutcome(
            NAME, exit_code, stdout, stderr, timed_out=timed_out, settings=tuple(settings), notes=tuple(notes)
        )
    finally:
        if container is not None:
            try:
                container.remove(force=True)
            except (APIError, NotFound):
                pass  # already gone, or "removal already in progress"


def run(req: RunRequest) -> RunOutcome:
    from docker.errors import APIError, ImageNotFound

    client = _client(req.timeout)
    try:
        try:
            image = client.images.get(req.image)
        except ImageNotFound:
            raise UnavailableError(
                f"image {req.image} is not in the local Docker daemon (docker pull it first)"
            ) from None
        except APIError as exc:  # e.g. 400 "invalid reference format": the name itself is wrong
            raise BadInputError(f"image {req.image!r}: the Docker daemon says {exc.explanation or exc}") from None
        host_arch = _ARCH.get(_platform.machine(), _platform.machine())
        image_arch = image.attrs.get("Architecture")
        if image_arch and image_arch != host_arch:
            raise UnavailableError(
                f"image {req.image} is {image_arch}; this node is {host_arch} and the verifier runs natively"
            )
        options, settings = container_options(req, image.id)
        outcome = _attempt(client, options, settings, [], req.timeout)
        if outcome.start_error and "rlimit" in outcome.start_error and req.memlock is not None:
            # A daemon without CAP_SYS_RESOURCE cannot raise memlock past its own limit: run with its default.
            options, settings = container_options(req, image.id, with_memlock=False)
            note = (
                f"the Docker daemon could not set memlock ({outcome.start_error.split(': ')[-2:][0]}): "
                "the runtime's default limit applies"
            )
            outcome = _attempt(client, options, settings, [note], req.timeout)
        return outcome
    finally:
        client.close()
