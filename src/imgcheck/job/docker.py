"""`docker run` command lines (in a shell script or alone) and docker compose files.

Flag meanings: https://docs.docker.com/reference/cli/docker/container/run/ (--device, --cap-add, --privileged,
--ulimit, --shm-size, --ipc, --network, -e/--env, --env-file, -v, --mount, --gpus) and the Compose file
reference https://docs.docker.com/reference/compose-file/services/ (devices, cap_add, ulimits, shm_size, ipc,
network_mode, environment, deploy.resources.reservations.devices).
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
from collections.abc import Sequence
from typing import Any

from ..errors import BadInputError
from .launcher import PER_GPU, is_launcher, read_launcher, torchrun_procs
from .model import RUNTIME_DOCKER, EnvVar, JobFacts
from .shell import Command, Unknown, Word, parse_script
from .units import MIB, docker_size_bytes, memlock_kib

# Flags of `docker run` / `docker container run` that take a value (the rest are booleans).
_VALUE_FLAGS = {
    "-a",
    "--attach",
    "--add-host",
    "--annotation",
    "--blkio-weight",
    "--cap-add",
    "--cap-drop",
    "--cgroup-parent",
    "--cgroupns",
    "--cidfile",
    "--cpu-period",
    "--cpu-quota",
    "--cpu-shares",
    "-c",
    "--cpus",
    "--cpuset-cpus",
    "--cpuset-mems",
    "--device",
    "--device-cgroup-rule",
    "--dns",
    "--dns-option",
    "--dns-search",
    "--domainname",
    "--entrypoint",
    "-e",
    "--env",
    "--env-file",
    "--expose",
    "--gpus",
    "--group-add",
    "--health-cmd",
    "--health-interval",
    "--health-retries",
    "--health-start-period",
    "--health-timeout",
    "-h",
    "--hostname",
    "--ip",
    "--ip6",
    "--ipc",
    "--isolation",
    "--kernel-memory",
    "-l",
    "--label",
    "--label-file",
    "--link",
    "--log-driver",
    "--log-opt",
    "--mac-address",
    "-m",
    "--memory",
    "--memory-reservation",
    "--memory-swap",
    "--memory-swappiness",
    "--mount",
    "--name",
    "--network",
    "--net",
    "--network-alias",
    "--oom-score-adj",
    "--pid",
    "--pids-limit",
    "--platform",
    "-p",
    "--publish",
    "--pull",
    "--restart",
    "--runtime",
    "--security-opt",
    "--shm-size",
    "--stop-signal",
    "--stop-timeout",
    "--storage-opt",
    "--sysctl",
    "--tmpfs",
    "-u",
    "--user",
    "--userns",
    "--ulimit",
    "--uts",
    "-v",
    "--volume",
    "--volume-driver",
    "--volumes-from",
    "-w",
    "--workdir",
}
_RUN = re.compile(r"\bdocker\s+(?:container\s+)?run\b")


def _commands(text: str) -> list[tuple[int, str]]:
    """(first line, command) for each `docker run` in a script, with backslash continuations joined."""
    out, buf, start = [], [], None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if start is None:
            run = _RUN.search(line)
            if not run or line.lstrip().startswith("#"):
                continue
            start, line = number, line[run.start() :]
        if line.endswith("\\"):
            buf.append(line[:-1])
            continue
        buf.append(line)
        out.append((start, " ".join(buf)))
        buf, start = [], None
    if start is not None:
        out.append((start, " ".join(buf)))
    return out


def looks_like_docker_run(text: str) -> bool:
    return bool(_RUN.search(text))


def parse_docker_run_text(text: str, path: str) -> list[JobFacts]:
    """Each `docker run` the script runs, its variables and arrays expanded where the script decides them
    (job/shell.py); a `docker run` only inside a string (cmd="docker run ..."; eval) is read as written."""
    found = _script_runs(text, path) or [_run(cmd, line, path) for line, cmd in _commands(text)]
    if not found:
        raise BadInputError(f"{path}: no `docker run` command found")
    return found


_DOCKERS = {"docker", "nvidia-docker", "podman"}
_WRAPPERS = {"sudo", "exec", "time", "nohup", "command"}


def _script_runs(text: str, path: str) -> list[JobFacts]:
    out = []
    for command in parse_script(text, path).commands:
        words = list(command.words)
        while words and isinstance(words[0], str) and os.path.basename(words[0]) in _WRAPPERS:
            words = words[1:]
        if len(words) < 2 or not isinstance(words[0], str) or os.path.basename(words[0]) not in _DOCKERS:
            continue
        rest = words[2:] if words[1] == "container" else words[1:]
        if rest and rest[0] == "run":
            facts = _run_words(rest[1:], command.line, path)
            if os.path.basename(words[0]) == "nvidia-docker" and facts.oci_runtime is None:
                # NVIDIA/nvidia-docker: 2.x is docker with --runtime=nvidia added to run/create; 1.x injected the
                # driver volume and the GPUs NV_GPU names (all by default) itself. Which one the host has is unknown
                facts = dataclasses.replace(facts, oci_runtime="nvidia-docker")
            if facts.image is None and not facts.open_flags and not _names_image(rest[1:]):
                raise BadInputError(f"{path}: line {command.line}: {_no_image(text, command)}")
            out.append(facts)
    return out


def _names_image(words: list[Word]) -> bool:
    """Whether a word stands where the image goes (a variable the script does not decide counts)."""
    return any(isinstance(w, Unknown) for w in words)


def _no_image(text: str, command: Command) -> str:
    """Why a `docker run` names no image: usually a line continuation that is not one."""
    end = command.end_line or command.line
    lines = text.splitlines()
    last = lines[end - 1] if 0 < end <= len(lines) else ""
    if re.search(r"\\[ \t]+(#.*)?$", last):
        return (
            f"`docker run` names no image: the command ends on line {end}, where a backslash is followed by "
            "a space or tab, so it does not continue the line"
        )
    return f"`docker run` names no image (the command ends on line {end})"


def _split(cmd: str, path: str, line: int) -> list[str]:
    try:
        return shlex.split(cmd, comments=True)
    except ValueError as exc:
        raise BadInputError(f"{path}: line {line}: cannot split the docker run command: {exc}") from None


def _run(cmd: str, line: int, path: str) -> JobFacts:
    words = _split(cmd, path, line)
    if "run" not in words:  # "docker run" inside quotes or a comment the line reader could not tell apart
        raise BadInputError(f"{path}: line {line}: cannot read the `docker run` command")
    return _run_words(words[words.index("run") + 1 :], line, path)


# Flags whose value, when the script does not decide it, may give devices or privileges
_DEVICE_FLAGS = {"--device", "-v", "--volume", "--mount", "--cap-add", "--ulimit", "--shm-size", "--ipc"}


def _fixed_target(flag: str, text: str) -> bool:
    """-v "$SRC:/root/.cache": the source is decided at run time but the target is not a device or /dev/shm."""
    if flag not in ("-v", "--volume"):
        return False
    target = text.strip("\"'").split(":")[1:2]
    return bool(target) and "$" not in target[0] and not target[0].startswith("/dev")


def _run_words(words: Sequence[Word], line: int, path: str) -> JobFacts:
    opts: list[tuple[str, str | None]] = []
    image: str | None = None
    value: Word | None
    i = 0
    while i < len(words):
        w = words[i]
        if isinstance(w, Unknown):
            if w.many:
                opts.append((w.text, None))  # "${ARGS[@]}" the script does not decide: any flag may be in it
                i += 1
                continue
            if w.text.startswith("--") and "=" in w.text:  # --volume=$X:/data: a flag whose value is not known
                flag = w.text.partition("=")[0]
                if flag in _DEVICE_FLAGS and not _fixed_target(flag, w.text.partition("=")[2]):
                    opts.append((w.text, None) if w.text.startswith("$") else (f"{flag} {w.text}", None))
                i += 1
                continue
            break  # the image, named by a variable the script does not decide
        if w == "--":
            nxt = words[i + 1] if i + 1 < len(words) else None
            image = nxt if isinstance(nxt, str) else None
            break
        if w.startswith("$") and ("[@]" in w or "[*]" in w):
            opts.append((w, None))  # a shell array of more flags ("${ARGS[@]}"): unknown until run time
        elif not w.startswith("-") or w == "-":
            image = w
            break
        elif w.startswith("--") and "=" in w:
            name, value = w.split("=", 1)
            opts.append((name, value))
        elif w in _VALUE_FLAGS:
            value = words[i + 1] if i + 1 < len(words) else None
            if isinstance(value, Unknown):
                if w in _DEVICE_FLAGS and not _fixed_target(w, value.text):
                    opts.append((f"{w} {value.text}", None))  # its value is decided at run time
                value = value.text if w in ("-e", "--env") else None
            opts.append((w, value))
            i += 1
        elif not w.startswith("--") and len(w) > 2 and f"-{w[1]}" in _VALUE_FLAGS:
            opts.append((f"-{w[1]}", w[2:]))  # -eNAME=value
        else:
            opts.append((w, None))
        i += 1
    facts = _facts(opts, image, line, path)
    procs, setting = torchrun_procs(words[i + 1 :]) if image is not None else (None, None)
    if procs == PER_GPU:
        return dataclasses.replace(facts, ranks_setting=setting, ranks_follow_gpus=True)
    if procs is not None:
        return dataclasses.replace(facts, ranks_per_node=procs, ranks_setting=setting)
    command = words[i + 1 :] if image is not None else []
    if command and is_launcher(command[0]):
        launched = read_launcher(command[1:])
        if launched.ranks_per_node is not None:
            return dataclasses.replace(
                facts, ranks_per_node=launched.ranks_per_node, ranks_setting=launched.ranks_setting
            )
        if launched.total_ranks is not None and not launched.hosts_given:
            # mpirun in one container with no host list (and no resource manager there) starts every rank here
            where = f"mpirun {launched.total_setting} (no host list: all in this container)"
            return dataclasses.replace(facts, ranks_per_node=launched.total_ranks, ranks_setting=where)
    return facts


def _facts(opts: list[tuple[str, str | None]], image: str | None, line: int, path: str) -> JobFacts:
    def values(*names: str) -> list[str]:
        return [v for n, v in opts if n in names and v is not None]

    flags = {n for n, _ in opts}
    devices = [v.split(":", 1)[0] for v in values("--device")]
    shm_host = None
    for v in values("-v", "--volume"):
        src, _, rest = v.partition(":")
        if src.rstrip("/") == "/dev/shm" and rest.split(":", 1)[0].rstrip("/") == "/dev/shm":
            shm_host = f"-v {v}"  # the host's /dev/shm, not the 64 MiB tmpfs Docker makes
        elif src.startswith("/dev/"):
            devices.append(src.rstrip("/"))
    for v in values("--mount"):
        parts = dict(p.split("=", 1) for p in v.split(",") if "=" in p)
        src = parts.get("source") or parts.get("src") or ""
        dst = parts.get("target") or parts.get("destination") or parts.get("dst") or ""
        if src.rstrip("/") == "/dev/shm" and dst.rstrip("/") == "/dev/shm":
            shm_host = f"--mount {v}"
        elif src.startswith("/dev/"):
            devices.append(src.rstrip("/"))
    memlock = None
    for v in values("--ulimit"):
        name, _, limits = v.partition("=")
        if name.strip() == "memlock":
            memlock = memlock_kib(limits.split(":", 1)[0])  # the soft limit is what setrlimit checks against
    shm, shm_setting = None, None
    for v in values("--shm-size"):
        size = docker_size_bytes(v)
        shm, shm_setting = (None if size is None else size / MIB), f"--shm-size {v}"
    ipcs, networks = values("--ipc"), values("--network", "--net")
    ipc = ipcs[-1] if ipcs else None
    network = networks[-1] if networks else None
    env = []
    for v in values("-e", "--env"):
        name, eq, value = v.partition("=")
        if "$" in name:
            continue  # -e "$VAR": the name itself is decided at run time (open_flags covers it below)
        # NAME alone: the value comes from the caller's env; NAME=$VAR: decided at run time
        env.append(EnvVar(name, value if eq and "$" not in value else None, line))
    gpus = None
    for v in values("--gpus"):
        spec = v.strip("\"'")
        if spec == "all":
            gpus = -1
        elif spec.isdigit():
            gpus = int(spec)
        else:
            m = re.search(r"device=([^,\"']+(?:,[^\"'=]+)*)", spec)
            gpus = len(m.group(1).split(",")) if m else None
    caps = tuple(c.upper().removeprefix("CAP_") for v in values("--cap-add") for c in v.split(","))
    runtimes = [r for r in values("--runtime") if "$" not in r]
    return JobFacts(
        path=path,
        kind="docker run",
        runtime=RUNTIME_DOCKER,
        line=line,
        container=next((n for n in values("--name")[-1:] if "$" not in n), None),
        image=None if image is None or "$" in image else image,  # a shell variable: not known from the file
        privileged="--privileged" in flags,
        cap_add=caps,
        host_network=network == "host",
        host_ipc=ipc == "host",
        devices=tuple(devices),
        resources=(),
        gpus=gpus,
        # --ipc host/container:/none: /dev/shm is not Docker's sized default; private/shareable keep --shm-size's
        shm_size_mib=shm,
        shm_from_host=shm_host is not None,
        shm_setting=shm_host or shm_setting or (f"--ipc {ipc}" if ipc not in (None, "private", "shareable") else None),
        memlock_kib=memlock,
        env=tuple(env),
        env_incomplete=bool(values("--env-file")) or any(n.startswith("$") for n, _ in opts),
        open_flags=tuple(w for w, _ in opts if w.startswith("$") or " " in w),
        oci_runtime=runtimes[-1] if runtimes else None,
    )


def compose_services(doc: dict[str, Any], path: str) -> list[JobFacts]:
    services = doc.get("services")
    if not isinstance(services, dict):
        raise BadInputError(f"{path}: a compose file needs a services mapping")
    return [_service(name, svc, path) for name, svc in services.items() if isinstance(svc, dict)]


def _service(name: Any, svc: dict[str, Any], path: str) -> JobFacts:
    from .yamlload import line_of

    devices: list[str] = []
    for d in svc.get("devices") or ():
        src = d.get("source") if isinstance(d, dict) else str(d).split(":", 1)[0]
        if src:
            devices.append(str(src).rstrip("/"))
    shm_host = None
    for v in svc.get("volumes") or ():
        src = v.get("source") if isinstance(v, dict) else str(v).split(":", 1)[0]
        dst = v.get("target") if isinstance(v, dict) else (str(v).split(":") + [""])[1]
        if isinstance(src, str) and src.rstrip("/") == "/dev/shm" and str(dst).rstrip("/") == "/dev/shm":
            shm_host = "volumes: /dev/shm:/dev/shm"
        elif isinstance(src, str) and src.startswith("/dev/"):
            devices.append(src.rstrip("/"))
    memlock = None
    ulimit = (svc.get("ulimits") or {}).get("memlock") if isinstance(svc.get("ulimits"), dict) else None
    if isinstance(ulimit, dict):
        memlock = memlock_kib(ulimit.get("soft"))
    elif ulimit is not None:
        memlock = memlock_kib(ulimit)
    shm, shm_setting = None, None
    if svc.get("shm_size") is not None:
        size = docker_size_bytes(svc["shm_size"])
        shm, shm_setting = (None if size is None else size / MIB), f"shm_size {svc['shm_size']}"
    env_doc = svc.get("environment") or {}
    if isinstance(env_doc, dict):
        env = [EnvVar(str(k), None if v is None else str(v), line_of(env_doc)) for k, v in env_doc.items()]
    else:
        env = []
        for item in env_doc:
            k, eq, v = str(item).partition("=")
            env.append(EnvVar(k, v if eq else None, line_of(svc)))
    gpus = None
    reservations = ((svc.get("deploy") or {}).get("resources") or {}).get("reservations") or {}
    for d in reservations.get("devices") or () if isinstance(reservations, dict) else ():
        if isinstance(d, dict) and (d.get("driver") == "nvidia" or "gpu" in (d.get("capabilities") or ())):
            count = d.get("count")
            gpus = (
                -1
                if count == "all"
                else (len(d["device_ids"]) if d.get("device_ids") else (count if isinstance(count, int) else None))
            )
    caps = tuple(str(c).upper().removeprefix("CAP_") for c in svc.get("cap_add") or ())
    ipc = svc.get("ipc")
    return JobFacts(
        path=path,
        kind="compose",
        runtime=RUNTIME_DOCKER,
        workload=name,
        container=svc.get("container_name"),
        line=line_of(svc),
        image=svc.get("image"),
        privileged=bool(svc.get("privileged", False)),
        cap_add=caps,
        host_network=svc.get("network_mode") == "host",
        host_ipc=ipc == "host",
        devices=tuple(devices),
        resources=(),
        gpus=gpus,
        shm_size_mib=shm,
        shm_from_host=shm_host is not None,
        shm_setting=shm_host or shm_setting or (f"ipc: {ipc}" if ipc not in (None, "private", "shareable") else None),
        memlock_kib=memlock,
        env=tuple(env),
        env_incomplete=bool(svc.get("env_file")),
        oci_runtime=str(svc["runtime"]) if svc.get("runtime") else None,
    )
