"""Slurm batch scripts: #SBATCH lines and `srun --container-image` steps (Pyxis/Enroot); one JobFacts per step.

Flag meanings: sbatch/srun man pages (https://slurm.schedmd.com/sbatch.html, --ntasks-per-node, --gpus-per-node,
--gres) and Pyxis's srun options (https://github.com/NVIDIA/pyxis, src/args.c): --container-image,
--container-mounts=SRC:DST[:FLAGS][,...], --container-env=NAME[,NAME...] ("all exported host environment
variables are set in the container ... but their existing values in the image take precedence; the variables
specified with this flag are preserved from the host").
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
from collections.abc import Sequence

from ..errors import BadInputError
from .launcher import PER_GPU, LauncherFacts, is_launcher, read_launcher, torchrun_procs
from .model import (
    BIND_NONE,
    BIND_PER_TASK,
    FORM_AMBIGUOUS,
    FORM_DOCKER_HUB,
    FORM_REGISTRY,
    FORM_SQUASHFS,
    RUNTIME_ENROOT,
    EnvVar,
    JobFacts,
)
from .shell import Unknown, Word, is_open, parse_script

_SBATCH = re.compile(r"^#SBATCH\s+(.*)$")
_SRUN = re.compile(r"\bsrun\b")


def looks_like_slurm(text: str) -> bool:
    return any(_SBATCH.match(line) for line in text.splitlines()) or bool(
        re.search(r"\bsrun\b.*--container-image", text.replace("\\\n", " "))
    )


def _options(words: Sequence[Word]) -> tuple[dict[str, Word | None], list[str], int]:
    """--name=value / --name value / -N value options; the last wins, as in Slurm. Returns the options, the
    words that may add any option at run time, and the index of the command the step runs."""
    out: dict[str, Word | None] = {}
    open_words: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if is_open(w):
            open_words.append(str(w))  # "${ARGS[@]}" the script does not decide: any flag may be in it
            i += 1
            continue
        if isinstance(w, Unknown) and w.text.startswith("--") and "=" in w.text:
            name = w.text[2:].partition("=")[0]
            out[name] = Unknown(w.text, w.why)  # --container-mounts=...`pwd`...: decided at run time
            i += 1
            continue
        if isinstance(w, Unknown) or not w.startswith("-"):
            break  # the command the step runs
        if w.startswith("--"):
            name, eq, value = w[2:].partition("=")
            nxt = words[i + 1] if i + 1 < len(words) else None
            if (
                not eq
                and nxt is not None
                and not str(nxt).startswith("-")
                and name not in _NO_VALUE
                and name not in _CONTAINER_FLAGS
            ):
                out[name], i = nxt, i + 1
            else:
                out[name] = value if eq else None
        elif len(w) == 2:
            nxt = words[i + 1] if i + 1 < len(words) else None
            if w[1] not in _SHORT_FLAGS and nxt is not None and not str(nxt).startswith("-"):
                out[w[1]] = nxt  # -N 2, -J name, -n 16
                i += 1
            else:
                out[w[1]] = None
        i += 1
    return out, open_words, i


# srun/sbatch long options that take no value, or an optional one only after "=" (srun(1), sbatch(1)); every
# other long option written without "=" takes the next word
_NO_VALUE = {
    "contiguous",
    "disable-status",
    "exact",
    "exclusive",
    "external-launcher",
    "get-user-env",
    "help",
    "hold",
    "ignore-pbs",
    "immediate",
    "kill-on-bad-exit",
    "label",
    "multi-prog",
    "nice",
    "no-allocate",
    "no-kill",
    "no-requeue",
    "overcommit",
    "overlap",
    "oversubscribe",
    "parsable",
    "preserve-env",
    "propagate",
    "pty",
    "quiet",
    "quit-on-interrupt",
    "reboot",
    "requeue",
    "send-libs",
    "spread-job",
    "test-only",
    "unbuffered",
    "usage",
    "use-min-nodes",
    "verbose",
    "version",
    "wait",
    "whole",
    "x11",
}
# Pyxis options that take no value (NVIDIA/pyxis args.c spank_opts, has_arg 0); srun short flags that take none
_CONTAINER_FLAGS = {
    "container-mount-home",
    "no-container-mount-home",
    "container-remap-root",
    "no-container-remap-root",
    "container-entrypoint",
    "no-container-entrypoint",
    "container-entrypoint-log",
    "container-writable",
    "container-readonly",
}
_SHORT_FLAGS = {"E", "H", "I", "l", "K", "k", "O", "Q", "s", "u", "v", "X", "Z", "h", "V"}


_WRAPPERS = {"time", "nohup", "exec", "command"}


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _gpus(opts: dict[str, Word | None]) -> tuple[int | None, str | None]:
    """GPUs per node the step gets, and the option that says so."""
    ntasks = _int(opts.get("ntasks-per-node"))
    for key in ("gpus-per-node", "gpus-per-task", "gpus", "G"):
        value = _str(opts.get(key))
        if not value:
            continue
        count = value.rsplit(":", 1)[-1]
        if not count.isdigit():
            return None, None
        n = int(count)
        if key == "gpus-per-task":
            return (n * ntasks, f"--gpus-per-task={value} x --ntasks-per-node={ntasks}") if ntasks else (None, None)
        if key in ("gpus", "G"):
            nodes = _str(opts.get("nodes") or opts.get("N"))
            if nodes == "1" or (nodes and nodes.isdigit() and n % int(nodes) == 0):
                return n // int(nodes), f"--gpus={value} over --nodes={nodes}"
            return None, None
        return n, f"--{key}={value}"
    gres = _str(opts.get("gres")) or ""
    m = re.search(r"\bgpu(?::[\w.-]+)?:(\d+)", gres)
    return (int(m.group(1)), f"--gres={gres}") if m else (None, None)


# srun(1) --gpu-bind types that give each task only some of the step's GPUs (its CUDA_VISIBLE_DEVICES); "none"
# leaves every task all of them, "verbose" alone binds nothing. --gpus-per-task implies --gpu-bind=per_task:N and
# --ntasks-per-gpu implies --gpu-bind=single:N unless --gpu-bind is given (https://slurm.schedmd.com/srun.html)
_BINDING = ("closest", "map_gpu", "mask_gpu", "none", "per_task", "single")


def _gpu_bind(opts: dict[str, Word | None]) -> str | None:
    """How Slurm binds the step's GPUs to its tasks (model.BIND_*); None: the script does not say."""
    bind = opts.get("gpu-bind")
    if isinstance(bind, str):
        kinds = [w.split(":", 1)[0] for w in bind.split(",") if w.split(":", 1)[0] in _BINDING]
        if kinds:
            return BIND_NONE if kinds[-1] == "none" else BIND_PER_TASK
    elif bind is not None:
        return None  # decided at run time
    if _str(opts.get("gpus-per-task")) or _str(opts.get("ntasks-per-gpu")):
        return BIND_PER_TASK
    return None


def _int(value: object) -> int | None:
    return int(value) if isinstance(value, str) and value.isdigit() else None


def parse_slurm_text(text: str, path: str) -> list[JobFacts]:
    batch: dict[str, Word | None] = {}
    for number, line in enumerate(text.splitlines(), 1):
        m = _SBATCH.match(line.strip())
        if m:
            try:
                sbatch_words = shlex.split(m.group(1), comments=True)
            except ValueError as exc:
                raise BadInputError(f"{path}: line {number}: cannot read the #SBATCH line: {exc}") from None
            batch.update(_options(sbatch_words)[0])
    script = parse_script(text, path)
    mentions_container = "--container-image" in text
    steps: list[JobFacts] = []
    ulimit: tuple[str, int] | None = None
    for command in script.commands:
        words = command.words
        if not words:
            continue
        while len(words) > 1 and isinstance(words[0], str) and os.path.basename(words[0]) in _WRAPPERS:
            words = words[1:]  # /usr/bin/time srun ..., exec srun ...
        first = words[0]
        if first == "ulimit" and "-l" in words[1:] and isinstance(words[-1], str):
            ulimit = (words[-1], command.line)
            continue
        if first != "srun":
            continue
        opts, open_words, at = _options(words[1:])
        named = "container-name" in opts  # a step naming a container runs in it, with or without an image
        if "container-image" not in opts and not named and not (open_words and mentions_container):
            continue  # a step on the host, not in a Pyxis container
        exported = tuple(EnvVar(k, v, line) for k, (v, line) in script.exports.items() if line < command.line)
        program = words[1 + at :]
        launched = read_launcher(program[1:]) if program and is_launcher(program[0]) else None
        policy = _export_policy(opts, batch, exported)
        env, env_open = _exported_env(policy, exported, command.line)
        step = _step({**batch, **opts}, open_words, env, launched, ulimit, command.line, path, env_open)
        steps.append(_reused(_with_torchrun(step, program), steps))
    if not steps:
        raise BadInputError(f"{path}: no `srun --container-image` step found (imgcheck checks Pyxis container steps)")
    return steps


def _reused(step: JobFacts, earlier: list[JobFacts]) -> JobFacts:
    """A step whose --container-name an earlier step of the script already named uses that container (pyxis
    README --container-name; pyxis_slurmstepd.c: an existing container skips the import, and a running one is joined
    and its process environment imported over the step's, except the --container-env names)."""
    if not step.container:
        return step
    name, _, flag = step.container.partition(":")
    if flag == "create":
        return dataclasses.replace(step, container=name, container_reuse="new")
    first = next((s for s in earlier if s.container == name), None)
    if first is None:
        return dataclasses.replace(step, container=name)
    kept = set(step.env_overrides_image or ())
    conflicts = [
        v.name
        for v in step.env
        if v.name not in kept
        and (old := first.env_value(v.name)) is not None
        and v.value is not None
        and old.value != v.value
    ]
    if step.image and first.image and step.image != first.image:
        conflicts.append("--container-image")
    return dataclasses.replace(step, container=name, container_reuse="earlier-step", reuse_conflicts=tuple(conflicts))


def _image(value: Word | None, open_words: list[str]) -> tuple[str | None, str | None, str | None]:
    """(image, how enroot reads the name, a note) for --container-image's value (enroot src/docker.sh)."""
    if value is None:
        note = f"{', '.join(open_words)} may set --container-image" if open_words else None
        return None, None, note
    if isinstance(value, Unknown):
        return None, None, f"--container-image {value.text}: {value.why}"
    return value, image_form(value), None


def image_form(ref: str) -> str:
    """How enroot reads a --container-image value: a squashfs file, REGISTRY#IMAGE, a Docker Hub path, or a name
    whose first component looks like a registry, which enroot reads by release (see docs/job-specs.md)."""
    ref = ref.removeprefix("docker://")
    if ref.startswith(("/", "./", "../", "~")) or ref.endswith((".sqsh", ".squashfs")):
        return FORM_SQUASHFS
    if "#" in ref:
        return FORM_REGISTRY
    head, slash, _ = ref.partition("@")[0].partition("/")
    if slash and ("." in head or ":" in head or head == "localhost"):
        return FORM_AMBIGUOUS
    return FORM_DOCKER_HUB


def _ranks(opts: dict[str, Word | None], gpus: int | None) -> tuple[int | None, str | None]:
    """Tasks per node: --ntasks-per-node; --ntasks-per-gpu x GPUs per node; --ntasks on one node. --ntasks over
    several nodes is not known per node (Slurm's distribution follows each node's CPUs)."""
    per_node = _int(opts.get("ntasks-per-node"))
    if per_node:
        return per_node, f"--ntasks-per-node={per_node}"
    per_gpu = _int(opts.get("ntasks-per-gpu"))
    if per_gpu and gpus and gpus > 0:
        return per_gpu * gpus, f"--ntasks-per-gpu={per_gpu} x {gpus} GPUs"
    total = _int(opts.get("ntasks") or opts.get("n"))
    nodes = _str(opts.get("nodes") or opts.get("N"))
    if total and nodes == "1":
        return total, f"--ntasks={total} on --nodes=1"
    return None, None


def _limits_from(opts: dict[str, Word | None], ulimit: tuple[str, int] | None) -> str:
    """Where the task's memlock comes from (slurm.conf PropagateResourceLimits, default ALL; srun --propagate)."""
    if "propagate" in opts:
        value = _str(opts.get("propagate"))
        names = {n.strip().upper() for n in (value or "ALL").split(",")}
        if names & {"ALL", "MEMLOCK"}:
            source = f"srun --propagate={value or 'ALL'}: the batch shell's soft memlock limit"
        else:
            source = f"srun --propagate={value}: not MEMLOCK, so slurmd's own memlock limit"
    else:
        source = (
            "the submitting shell's soft memlock limit (slurm.conf PropagateResourceLimits, default ALL), "
            "unless PropagateResourceLimits or PropagateResourceLimitsExcept leaves MEMLOCK out, then slurmd's own"
        )
    if ulimit is not None:
        source += f"; the script runs `ulimit -l {ulimit[0]}` (line {ulimit[1]}) first, if the hard limit allows"
    return source


def _with_torchrun(step: JobFacts, program: Sequence[Word]) -> JobFacts:
    """srun ... torchrun --nproc-per-node N: each task starts N processes, so a node runs tasks x N."""
    procs, setting = torchrun_procs(program)
    if procs is None:
        return step
    tasks = step.ranks_per_node
    if procs == PER_GPU:
        if step.gpus is None or step.gpus < 0:
            return dataclasses.replace(step, ranks_per_node=None, ranks_setting=setting, ranks_follow_gpus=True)
        procs = step.gpus
    if tasks is None:
        return dataclasses.replace(
            step, ranks_per_node=None, ranks_setting=f"{setting} per task (tasks per node not known)"
        )
    return dataclasses.replace(
        step,
        ranks_per_node=tasks * procs,
        ranks_setting=f"{step.ranks_setting} x {setting}",
        ranks_follow_gpus=procs == step.gpus and tasks == 1,
    )


def _export_policy(
    opts: dict[str, Word | None], batch: dict[str, Word | None], exported: tuple[EnvVar, ...]
) -> Word | None:
    """The step's --export: srun's own, else SLURM_EXPORT_ENV as the script exports it, else sbatch's (which
    sbatch passes to the steps in SLURM_EXPORT_ENV); None: ALL, the default (srun(1) --export)."""
    if "export" in opts:
        return opts["export"]
    own = next((e for e in reversed(exported) if e.name == "SLURM_EXPORT_ENV"), None)
    if own is not None:
        return (
            own.value if own.value is not None else Unknown("$SLURM_EXPORT_ENV", "SLURM_EXPORT_ENV is set at run time")
        )
    return batch.get("export")


def _exported_env(policy: Word | None, exported: tuple[EnvVar, ...], line: int) -> tuple[list[EnvVar], bool]:
    """The variables the task starts with, and whether more may come from the submitting shell. srun(1):
    --export=ALL (default) passes the caller's whole environment; NAME lists pass only those (plus SLURM_*);
    NAME=value sets a value, which with ALL yields to a value the caller already has."""
    if policy is None:
        return list(exported), False
    if isinstance(policy, Unknown):
        return list(exported), True
    items = [i.strip() for i in policy.split(",") if i.strip()]
    everything = any(i.upper() == "ALL" for i in items)
    own = {e.name: e for e in exported}
    env = list(exported) if everything else []
    for item in items:
        if item.upper() in ("ALL", "NONE", "NIL"):
            continue
        name, eq, value = item.partition("=")
        if everything:
            if name not in own and eq:
                env.append(EnvVar(name, value, line))
        elif eq:
            env.append(EnvVar(name, value, line))
        else:
            env.append(own.get(name) or EnvVar(name, None, line))  # the caller's current value
    return env, False


def _step(
    opts: dict[str, Word | None],
    open_words: list[str],
    exported: Sequence[EnvVar],
    launched: LauncherFacts | None,
    ulimit: tuple[str, int] | None,
    line: int,
    path: str,
    env_open: bool = False,
) -> JobFacts:
    mounts_value = _str(opts.get("container-mounts")) or ""
    mounts = [m.split(":") for m in mounts_value.split(",") if m]
    devices = tuple(m[0].rstrip("/") for m in mounts if m[0].startswith("/dev/") and m[0].rstrip("/") != "/dev/shm")
    shm_from_host = any(
        len(m) > 1 and m[1].rstrip("/") == "/dev/shm" and m[0].rstrip("/") == "/dev/shm" for m in mounts
    )
    names = tuple(n for n in (_str(opts.get("container-env")) or "").split(",") if n)
    image, form, image_note = _image(opts.get("container-image"), open_words)
    gpus, gpus_setting = _gpus(opts)
    env = list(exported)
    notes = [n for n in (image_note,) if n]
    ranks, ranks_setting = _ranks(opts, gpus)
    if launched is not None:
        # mpirun inside the container step: its -x / --mca reach every rank it starts
        env += [EnvVar(k, v, line) for k, v in launched.env]
        names += tuple(k for k, _ in launched.env)
        notes += [f"mpirun takes {u}" for u in launched.unknown]
    return JobFacts(
        path=path,
        kind="slurm",
        runtime=RUNTIME_ENROOT,
        workload=_str(opts.get("job-name") or opts.get("J")),
        container=_str(opts.get("container-name")),
        line=line,
        image=image,
        privileged=None,
        cap_add=None,
        host_network=None,
        host_ipc=None,
        devices=devices or None,
        resources=None,
        gpus=gpus,
        gpus_setting=gpus_setting,
        gpu_bind=_gpu_bind(opts),
        shm_size_mib=None,
        shm_from_host=shm_from_host,
        shm_setting="--container-mounts /dev/shm:/dev/shm" if shm_from_host else None,
        memlock_kib=None,  # enroot's /dev/shm and the limits slurmd propagates are not in the script
        limits_from=_limits_from(opts, ulimit),
        ranks_per_node=ranks,
        ranks_setting=ranks_setting,
        env=tuple(env),
        env_incomplete=bool(open_words) or env_open,
        env_overrides_image=names,
        open_flags=tuple(open_words),
        image_form=form,
        notes=tuple(notes),
    )
