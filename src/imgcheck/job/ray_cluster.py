"""Ray cluster launcher configs (`ray up cluster.yaml`): one JobFacts per node type that runs in a container.

How Ray starts the container, from ray-project/ray@023e4f080ab5ded12e629783f18dc9c8c01a5c7d
python/ray/autoscaler/_private/command_runner.py (DockerCommandRunner.run_init) and
python/ray/autoscaler/_private/docker.py (docker_start_cmds): `docker run --rm --name NAME -d -it <file mounts>
-e LC_ALL=C.UTF-8 -e LANG=C.UTF-8 <run_options> <head_|worker_run_options> [--runtime=nvidia]
[--shm-size=<30% of MemAvailable, +10%>] --net=host IMAGE bash`. The image is docker.head_image /
docker.worker_image, else docker.image; a node type's own `docker` section overrides the top-level one
(https://docs.ray.io/en/latest/cluster/vms/references/ray-cluster-configuration.html). `--runtime=nvidia` is
added when the host's docker has the NVIDIA runtime and nvidia-smi runs; the shm size unless
disable_shm_size_detection is set.
"""

from __future__ import annotations

import dataclasses
import shlex
from typing import Any

from ..errors import BadInputError
from . import docker
from .model import JobFacts
from .yamlload import line_of


def looks_like_ray_cluster(doc: dict[str, Any]) -> bool:
    return "cluster_name" in doc and ("available_node_types" in doc or "head_node_type" in doc or "provider" in doc)


def ray_cluster_containers(doc: dict[str, Any], path: str) -> list[JobFacts]:
    top = doc.get("docker")
    if not isinstance(top, dict) or not (top.get("image") or top.get("head_image") or top.get("worker_image")):
        raise BadInputError(
            f"{path}: a Ray cluster launcher config without docker.image: Ray runs on the nodes' own "
            "environment, not in a container image"
        )
    head_type = doc.get("head_node_type")
    types = doc.get("available_node_types")
    if not isinstance(types, dict) or not types:
        types = {"head": {}, "worker": {}}
        head_type = "head"
    out: list[JobFacts] = []
    for name, node_type in types.items():
        node_type = node_type if isinstance(node_type, dict) else {}
        own = node_type.get("docker")
        if not isinstance(own, dict):
            own = {}
        cfg = {**top, **own}
        role = "head" if name == head_type else "worker"
        image = cfg.get(f"{role}_image") or cfg.get("image")
        options = [str(o) for o in (cfg.get("run_options") or []) + (cfg.get(f"{role}_run_options") or [])]
        if not image:
            continue
        out.append(_container(str(name), role, str(image), options, cfg, line_of(own) or line_of(node_type), path))
    if not out:
        raise BadInputError(f"{path}: a Ray cluster launcher config whose node types name no image")
    return out


def _container(
    name: str, role: str, image: str, options: list[str], cfg: dict[str, Any], line: int | None, path: str
) -> JobFacts:
    try:
        flags = [w for o in options for w in shlex.split(o)]
    except ValueError as exc:
        raise BadInputError(f"{path}: docker.run_options: {exc}") from None
    command = shlex.join(["docker", "run", *flags, "--net=host", image, "bash"])
    (facts,) = docker.parse_docker_run_text(command, path)
    shm_auto = not cfg.get("disable_shm_size_detection") and not any(f.startswith("--shm-size") for f in flags)
    return dataclasses.replace(
        facts,
        kind="Ray cluster",
        workload=name,
        role=role,
        container=cfg.get("container_name"),
        line=line,
        # Ray's own --shm-size: a third of the node's available memory, not Docker's 64 MiB
        shm_size_mib=-1 if shm_auto else facts.shm_size_mib,
        shm_setting="Ray's --shm-size (30% of the node's MemAvailable)" if shm_auto else facts.shm_setting,
        # --runtime=nvidia when the host has it (all GPUs by the image's NVIDIA_VISIBLE_DEVICES); not in the file
        gpus=facts.gpus,
        notes=facts.notes + ("Ray adds --runtime=nvidia when the node's docker has the NVIDIA runtime",),
    )
