"""The env and ranks an MPI launcher command line gives every rank it starts.

Open MPI mpirun(1): `-x NAME=VALUE` sets NAME in each launched process, `-x NAME` exports the launcher's own
value; `--mca KEY VALUE` / `-mca` / `--gmca` set MCA parameter KEY for the processes (the same as
`OMPI_MCA_KEY=VALUE` in their environment); `-N n` / `--npernode n` / `--map-by ppr:n:node` start n processes
per node. MPICH/Intel MPI hydra: `-genv NAME VALUE` (every process), `-env NAME VALUE`, `-ppn n`.
https://docs.open-mpi.org/en/main/man-openmpi/man1/mpirun.1.html, https://www.mpich.org/static/docs/latest/www1/mpiexec.html
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .shell import Unknown, Word

LAUNCHERS = ("mpirun", "mpiexec", "orterun", "mpiexec.hydra")
# Options that take one value (the rest are flags); used only to find where the program starts.
_ONE_VALUE = {
    "-np",
    "-n",
    "-c",
    "--np",
    "-N",
    "--npernode",
    "-npernode",
    "-ppn",
    "--bind-to",
    "-bind-to",
    "--map-by",
    "-map-by",
    "--rank-by",
    "--hostfile",
    "-hostfile",
    "--machinefile",
    "-machinefile",
    "-f",
    "-H",
    "--host",
    "-host",
    "-hosts",
    "--prefix",
    "-wdir",
    "--wdir",
    "-x",
    "--output-filename",
    "--tune",
    "--am",
    "-launcher",
    "-iface",
}
_TWO_VALUES = {"--mca", "-mca", "--gmca", "-gmca", "-genv", "-env", "--prtemca", "--pmixmca"}
_HOSTS = {"-H", "--host", "-host", "-hosts", "--hostfile", "-hostfile", "--machinefile", "-machinefile", "-f"}
_PPR = re.compile(r"^ppr:(\d+):node\b")


@dataclass(frozen=True)
class LauncherFacts:
    env: tuple[tuple[str, str | None], ...]  # (NAME, value or None when the launcher's own value is passed)
    ranks_per_node: int | None
    ranks_setting: str | None
    unknown: tuple[str, ...]  # words the launcher takes whose value the spec does not decide
    total_ranks: int | None = None  # -n / -np / -c: processes in all
    total_setting: str | None = None
    hosts_given: bool = False  # -H / --host / --hostfile / -f ...: ranks may run on other hosts


def is_launcher(word: Word) -> bool:
    return isinstance(word, str) and os.path.basename(word) in LAUNCHERS


def read_launcher(words: Sequence[Word]) -> LauncherFacts:
    """`words` without the launcher's own name; stops at the program it starts."""
    env: list[tuple[str, str | None]] = []
    unknown: list[str] = []
    ranks, ranks_setting = None, None
    total: int | None = None
    total_setting: str | None = None
    hosts = False
    i = 0
    while i < len(words):
        w = words[i]
        if isinstance(w, Unknown):
            if w.many:
                unknown.append(f"{w.text} ({w.why})")
            i += 1
            continue
        if not w.startswith("-"):
            break  # the program
        name, eq, inline = w.partition("=") if w.startswith("--") else (w, "", "")
        if name in _TWO_VALUES:
            key, value = (words[i + 1] if i + 1 < len(words) else None), (words[i + 2] if i + 2 < len(words) else None)
            i += 3
            if not isinstance(key, str):
                unknown.append(f"{w} {key}")
                continue
            val = value if isinstance(value, str) else None
            if name in ("-genv", "-env"):
                env.append((key, val))
            elif name in ("--mca", "-mca", "--gmca", "-gmca"):
                env.append((f"OMPI_MCA_{key}", val))
            continue
        if name in _ONE_VALUE:
            value = inline if eq else (words[i + 1] if i + 1 < len(words) else None)
            i += 1 if eq else 2
            if name == "-x":
                if not isinstance(value, str):
                    unknown.append(f"-x {value}")
                    continue
                var, has, val = value.partition("=")
                env.append((var, val if has else None))
            elif name in _HOSTS:
                hosts = True
            elif name in ("-n", "-np", "--np", "-c") and isinstance(value, str) and value.isdigit():
                total, total_setting = int(value), f"{name} {value}"
            elif name in ("-N", "--npernode", "-npernode", "-ppn") and isinstance(value, str) and value.isdigit():
                ranks, ranks_setting = int(value), f"{name} {value}"
            elif name in ("--map-by", "-map-by") and isinstance(value, str):
                m = _PPR.match(value.lower())
                if m:
                    ranks, ranks_setting = int(m.group(1)), f"{name} {value}"
            continue
        i += 1
    return LauncherFacts(tuple(env), ranks, ranks_setting, tuple(unknown), total, total_setting, hosts)


# torchrun / python -m torch.distributed.run (and the older torch.distributed.launch): --nproc-per-node N starts
# N processes in the container or task; "gpu"/"auto" start one per visible GPU (torch/distributed/run.py).
_TORCHRUN_MODULES = ("torch.distributed.run", "torch.distributed.launch")
PER_GPU = -1  # --nproc-per-node gpu/auto: one process per GPU the container sees


def torchrun_procs(words: Sequence[Word]) -> tuple[int | None, str | None]:
    """(processes per torchrun, the option that says so) for a command that runs torchrun (or DeepSpeed's
    launcher); (None, None) when the command is neither or the count is not decided (PER_GPU for gpu/auto)."""
    i = _torchrun_start(words)
    if i is None:
        return deepspeed_procs(words)
    rest = words[i:]
    for j, w in enumerate(rest):
        if not isinstance(w, str):
            continue
        name, eq, value = w.partition("=")
        if name in ("--nproc-per-node", "--nproc_per_node"):
            v = value if eq else (rest[j + 1] if j + 1 < len(rest) else None)
            if not isinstance(v, str):
                return None, None
            if v in ("gpu", "auto"):
                return PER_GPU, f"torchrun {name}={v}"
            return (int(v), f"torchrun {name}={v}") if v.isdigit() else (None, None)
        if not w.startswith("-") and j > 0 and not _is_value_of(rest, j):
            break  # the training script: its own flags are not torchrun's
    return None, None


# DeepSpeed's launcher (deepspeed/launcher/runner.py): --num_gpus/--num_accelerators N starts N processes on each
# node with GPU ids 0..N-1, not clamped to the GPUs there; without it (and without --include/--exclude) one process
# per GPU the node has, or per CUDA_VISIBLE_DEVICES entry on a single node.
_DS_COUNT = ("--num_gpus", "--num_accelerators")
_DS_FILTER = ("-i", "--include", "-e", "--exclude")


def deepspeed_procs(words: Sequence[Word]) -> tuple[int | None, str | None]:
    start = next(
        (i + 1 for i, w in enumerate(words[:6]) if isinstance(w, str) and os.path.basename(w) == "deepspeed"), None
    )
    if start is None:
        return None, None
    rest = words[start:]
    for j, w in enumerate(rest):
        if not isinstance(w, str):
            return None, None  # a word decided at run time may be the count
        name, eq, value = w.partition("=")
        if name in _DS_COUNT:
            v = value if eq else (rest[j + 1] if j + 1 < len(rest) else None)
            return (int(v), f"deepspeed {name}={v}") if isinstance(v, str) and v.isdigit() else (None, None)
        if name in _DS_FILTER:
            return None, None  # per-host slot lists: not a per-node count
        if not w.startswith("-") and j > 0 and not _is_value_of(rest, j):
            break  # the user script
        if not w.startswith("-") and j == 0:
            break
    return PER_GPU, "deepspeed (no --num_gpus: one process per GPU)"


def _torchrun_start(words: Sequence[Word]) -> int | None:
    for i, w in enumerate(words[:6]):
        if not isinstance(w, str):
            continue
        if os.path.basename(w) == "torchrun":
            return i + 1
        if w == "-m" and i + 1 < len(words) and words[i + 1] in _TORCHRUN_MODULES:
            return i + 2
    return None


def _is_value_of(words: Sequence[Word], j: int) -> bool:
    prev = words[j - 1]
    return isinstance(prev, str) and prev.startswith("--") and "=" not in prev
