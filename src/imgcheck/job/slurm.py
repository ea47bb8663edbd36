"""Slurm batch scripts: #SBATCH lines and `srun --container-image` steps (Pyxis/Enroot); one JobFacts per step.

Flag meanings: sbatch/srun man pages (https://slurm.schedmd.com/sbatch.html, --ntasks-per-node, --gpus-per-node,
--gres) and Pyxis's srun options (https://github.com/NVIDIA/pyxis, src/args.c): --container-image,
--container-mounts=SRC:DST[:FLAGS][,...], --container-env=NAME[,NAME...] ("all exported host environment
variables are set in the container ... but their existing values in the image take precedence; the variables
specified with this flag are preserved from the host").
"""

from __future__ import annotations

import re
import shlex

from ..errors import BadInputError
from .model import RUNTIME_ENROOT, EnvVar, JobFacts

_SBATCH = re.compile(r"^#SBATCH\s+(.*)$")
_EXPORT = re.compile(r"^\s*export\s+([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_SRUN = re.compile(r"\bsrun\b")


def looks_like_slurm(text: str) -> bool:
    return any(_SBATCH.match(line) for line in text.splitlines()) or bool(
        re.search(r"\bsrun\b.*--container-image", text.replace("\\\n", " "))
    )


def _options(words: list[str]) -> dict[str, str | None]:
    """--name=value / --name value / -N value options; the last wins, as in Slurm."""
    out: dict[str, str | None] = {}
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("--"):
            name, eq, value = w[2:].partition("=")
            if (
                not eq
                and i + 1 < len(words)
                and not words[i + 1].startswith("-")
                and name.startswith(("container-", "ntasks", "gpus", "gres", "nodes", "export"))
            ):
                value, i = words[i + 1], i + 1
            out[name] = value if (eq or value) else None
        elif w.startswith("-") and len(w) == 2:
            if i + 1 < len(words) and not words[i + 1].startswith("-"):
                out[w[1]] = words[i + 1]  # -N 2, -J name (a flag such as -l takes no value)
                i += 1
            else:
                out[w[1]] = None
        else:
            break  # the command the step runs
        i += 1
    return out


def _gpus(opts: dict) -> int | None:
    for key in ("gpus-per-node", "gpus-per-task"):
        value = opts.get(key)
        if value:
            count = value.rsplit(":", 1)[-1]
            if count.isdigit():
                return int(count) * (int(opts.get("ntasks-per-node") or 1) if key == "gpus-per-task" else 1)
    gres = opts.get("gres") or ""
    m = re.search(r"\bgpu(?::[\w.-]+)?:(\d+)", gres)
    return int(m.group(1)) if m else None


def _shell_value(text: str) -> str | None:
    try:
        words = shlex.split(text, comments=True)
    except ValueError:
        return None
    value = words[0] if len(words) == 1 else ("" if not words else None)
    return None if value is None or "$" in value else value  # an expansion: known only at run time


def parse_slurm_text(text: str, path: str) -> list[JobFacts]:
    batch: dict[str, str | None] = {}
    exported: list[EnvVar] = []
    steps: list[JobFacts] = []
    lines = text.splitlines()
    number = 0
    while number < len(lines):
        start = number + 1
        line = lines[number]
        while line.rstrip().endswith("\\") and number + 1 < len(lines):
            number += 1
            line = line.rstrip()[:-1] + " " + lines[number]
        number += 1
        m = _SBATCH.match(line.strip())
        if m:
            try:
                batch.update(_options(shlex.split(m.group(1), comments=True)))
            except ValueError as exc:
                raise BadInputError(f"{path}: line {start}: cannot read the #SBATCH line: {exc}") from None
            continue
        m = _EXPORT.match(line)
        if m:
            exported.append(EnvVar(m.group(1), _shell_value(m.group(2)), start))
            continue
        s = _SRUN.search(line)
        if s and "--container-image" in line and not line.lstrip().startswith("#"):
            try:
                # no comment stripping: enroot image URIs write the registry as REGISTRY#IMAGE
                words = shlex.split(line[s.end() :])
            except ValueError as exc:
                raise BadInputError(f"{path}: line {start}: cannot split the srun command: {exc}") from None
            steps.append(_step({**batch, **_options(words)}, tuple(exported), start, path))
    if not steps:
        raise BadInputError(f"{path}: no `srun --container-image` step found (imgcheck checks Pyxis container steps)")
    return steps


def _step(opts: dict, exported: tuple[EnvVar, ...], line: int, path: str) -> JobFacts:
    mounts = [m.split(":") for m in (opts.get("container-mounts") or "").split(",") if m]
    devices = tuple(m[0].rstrip("/") for m in mounts if m[0].startswith("/dev/"))
    names = tuple(n for n in (opts.get("container-env") or "").split(",") if n)
    ntasks = opts.get("ntasks-per-node")
    image = opts.get("container-image")
    return JobFacts(
        path=path,
        kind="slurm",
        runtime=RUNTIME_ENROOT,
        workload=opts.get("job-name") or opts.get("J"),
        container=opts.get("container-name"),
        line=line,
        image=None if not image or "$" in image else image,
        privileged=None,
        cap_add=None,
        host_network=None,
        host_ipc=None,
        devices=devices or None,
        resources=None,
        gpus=_gpus(opts),
        shm_size_mib=None,
        memlock_kib=None,  # enroot's /dev/shm and the limits slurmd propagates are not in the script
        ranks_per_node=int(ntasks) if ntasks and ntasks.isdigit() else None,
        env=exported,
        env_overrides_image=names,
    )
