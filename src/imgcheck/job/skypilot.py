"""SkyPilot task YAML (`sky launch task.yaml`): what the task file itself states.

Fields (https://docs.skypilot.co/en/latest/reference/yaml-spec.html): resources.accelerators ("A100:8", a
mapping {A100: 8}, or a list/set of alternatives), resources.image_id ("docker:IMAGE" for a container), envs,
num_nodes, run. SkyPilot builds the container or pod launch itself (devices, /dev/shm, limits, capabilities),
so those stay unknown here; the GPUs per node come from the accelerators and the env from envs plus any
mpirun -x / --mca in the run script (the head node's mpirun starts the ranks).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .launcher import is_launcher, read_launcher
from .model import EnvVar, JobFacts
from .shell import parse_script
from .yamlload import line_of


def looks_like_skypilot(doc: dict[str, Any]) -> bool:
    resources = doc.get("resources")
    return ("run" in doc or "setup" in doc or "num_nodes" in doc) and (resources is None or isinstance(resources, dict))


def _count(value: object) -> int | None:
    if isinstance(value, str):
        name, _, count = value.partition(":")
        if not count:
            return 1
        try:
            number = float(count)
        except ValueError:
            return None
        return int(number) if number.is_integer() else None
    if isinstance(value, dict) and len(value) == 1:
        (count,) = value.values()
        return count if isinstance(count, int) else (1 if count is None else None)
    if isinstance(value, (list, set, dict)):
        counts = {_count(v) if not isinstance(value, dict) else _count({k: v}) for k, v in _items(value)}
        return counts.pop() if len(counts) == 1 else None  # alternatives with different counts: not decided
    return None


def _items(value: dict[Any, Any] | list[Any] | set[Any]) -> Iterable[tuple[Any, Any]]:
    return value.items() if isinstance(value, dict) else ((v, None) for v in value)


def skypilot_task(doc: dict[str, Any], path: str) -> list[JobFacts]:
    resources = doc.get("resources")
    if not isinstance(resources, dict):
        resources = {}
    accelerators = resources.get("accelerators")
    gpus = _count(accelerators) if accelerators is not None else 0
    image_id = resources.get("image_id")
    image = None
    notes: list[str] = []
    if isinstance(image_id, str) and image_id.startswith("docker:"):
        image = image_id.removeprefix("docker:")
    elif image_id is None:
        notes.append("no resources.image_id: the task runs in SkyPilot's default image or on the VM itself")
    else:
        notes.append(f"resources.image_id {image_id}: a VM image, not a container image")
    envs = doc.get("envs")
    if not isinstance(envs, dict):
        envs = {}
    env = [EnvVar(str(k), None if v is None else str(v), line_of(envs)) for k, v in envs.items()]
    ranks, ranks_setting = None, None
    run = doc.get("run")
    if isinstance(run, str):
        for command in parse_script(run).commands:
            if command.words and is_launcher(command.words[0]):
                launched = read_launcher(command.words[1:])
                env += [EnvVar(k, v, line_of(doc)) for k, v in launched.env]
                ranks, ranks_setting = launched.ranks_per_node, launched.ranks_setting
                notes += [f"mpirun takes {u}" for u in launched.unknown]
    return [
        JobFacts(
            path=path,
            kind="SkyPilot task",
            runtime=None,  # SkyPilot's own docker run or pod: devices, /dev/shm and limits are not in the file
            workload=None if doc.get("name") is None else str(doc.get("name")),
            line=line_of(resources) or line_of(doc),
            image=image,
            gpus=gpus,
            gpus_setting=f"resources.accelerators: {accelerators}" if gpus else None,
            ranks_per_node=ranks,
            ranks_setting=f"run: mpirun {ranks_setting}" if ranks_setting else None,
            env=tuple(env),
            notes=tuple(notes),
        )
    ]
