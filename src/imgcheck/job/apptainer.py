"""Apptainer / SingularityCE command lines (`apptainer exec|run|shell|test IMAGE ...`, also behind srun or mpirun in a
plain shell script) as launch facts.

What each launch gives the container, from the launchers' own documentation and source (apptainer/apptainer@v1.5.3
internal/pkg/runtime/launch/launcher_linux.go; catalog container_launchers):
- no namespaces by default: the host's network, IPC (so its /dev/shm) and /dev are the container's, and the host
  environment passes through unless --cleanenv / --containall; --contain / --containall give a minimal /dev;
- --nv: the host driver's libraries that nvliblist.conf names, found in the host's ld.so cache, and nvidia-smi, bound
  in ("legacy" binds); --nvccli: the host's nvidia-container-cli sets the container up instead (it implies --nv);
- --device nvidia.com/gpu=... (Apptainer 1.5.0 and later): the CDI spec's edits, from --cdi-dirs or /etc/cdi,
  /var/run/cdi.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from .model import EnvVar, JobFacts
from .shell import Unknown, Word, parse_script

RUNTIME_APPTAINER = "apptainer"
INJECT_NV = "apptainer-nv"
INJECT_NVCCLI = "apptainer-nvccli"
INJECT_CDI = "cdi"
_PROGRAMS = {"apptainer", "singularity"}
_ACTIONS = {"exec", "run", "shell", "test"}
# flags of the actions that take a value (apptainer exec --help); the rest are booleans
_VALUE_FLAGS = {
    "-B",
    "--bind",
    "--env",
    "--env-file",
    "--device",
    "--cdi-dirs",
    "-H",
    "--home",
    "--pwd",
    "-W",
    "--workdir",
    "-o",
    "--overlay",
    "--network",
    "--network-args",
    "--security",
    "--hostname",
    "--mount",
    "--app",
    "-S",
    "--scratch",
    "--apply-cgroups",
    "--fusemount",
    "--pem-path",
    "--drop-caps",
    "--add-caps",
    "--memory",
    "--cpus",
    "--dns",
}
CDI_GPU = "nvidia.com/gpu="


_COMMAND = re.compile(r"\b(?:apptainer|singularity)\s+(?:exec|run|shell|test)\b")


def looks_like_apptainer(text: str) -> bool:
    return bool(_COMMAND.search(text))


def parse_apptainer_text(text: str, path: str) -> list[JobFacts]:
    found = []
    for command in parse_script(text, path).commands:
        words = list(command.words)
        start = next(
            (
                i
                for i, w in enumerate(words[:-1])
                if isinstance(w, str) and os.path.basename(w) in _PROGRAMS and words[i + 1] in _ACTIONS
            ),
            None,
        )
        if start is not None:
            found.append(_facts(words[start + 2 :], str(words[start + 1]), command.line, path))
    return found


def _facts(words: Sequence[Word], action: str, line: int, path: str) -> JobFacts:
    flags: list[tuple[str, str | None]] = []
    open_flags: list[str] = []
    image: str | None = None
    i = 0
    while i < len(words):
        word = words[i]
        if isinstance(word, Unknown):
            if word.many:
                open_flags.append(word.text)
                i += 1
                continue
            image = None  # the image is a variable the script does not decide
            break
        if not word.startswith("-"):
            image = word
            break
        name, eq, value = word.partition("=")
        if name in _VALUE_FLAGS and not eq:
            nxt = words[i + 1] if i + 1 < len(words) else None
            flags.append((name, nxt if isinstance(nxt, str) else None))
            i += 2
            continue
        flags.append((name, value if eq else None))
        i += 1
    names = {f for f, _ in flags}
    contain = bool(names & {"-c", "--contain", "-C", "--containall"})
    clean = bool(names & {"-e", "--cleanenv", "-C", "--containall"})
    cdi = [v for f, v in flags if f == "--device" and v and v.startswith(CDI_GPU)]
    injection = INJECT_NVCCLI if "--nvccli" in names else (INJECT_NV if "--nv" in names else None)
    if cdi:
        injection = INJECT_CDI
    pairs = [v.split("=", 1) for f, v in flags if f == "--env" and v and "=" in v]
    env = tuple(EnvVar(name, value, line) for name, value in pairs)
    return JobFacts(
        path=path,
        kind=f"apptainer {action}",
        runtime=RUNTIME_APPTAINER,
        line=line,
        image=image,
        host_network="--net" not in names and "-n" not in names,
        host_ipc="--ipc" not in names and "-i" not in names,
        # the host's whole /dev (its /dev/infiniband and /dev/nvidia* included), unless a minimal one
        devices=None if contain else ("/dev", "/dev/infiniband"),
        gpus=-1 if injection else 0,
        gpus_setting=next((f"--device {v}" for v in cdi), None)
        or ("--nvccli" if "--nvccli" in names else None)
        or ("--nv" if "--nv" in names else None),
        shm_from_host=not contain,
        shm_stated=not contain,
        env=env,
        env_incomplete=not clean or "--env-file" in names,
        open_flags=tuple(open_flags),
        gpu_injection=injection,
        notes=("apptainer shares the host's network, IPC and /dev unless --net, --ipc or --contain say otherwise",),
    )
