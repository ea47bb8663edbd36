"""Which kind of launch spec a file is, and its containers as JobFacts. Bad input: BadInputError (exit 2)."""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Any

from ..errors import BadInputError, UnavailableError
from . import apptainer, docker, k8s, ray_cluster, skypilot, slurm
from .model import PARTIAL, JobFacts
from .yamlload import load_documents

MAX_SPEC_BYTES = 4 * 1024 * 1024  # a launch spec is text a person wrote; anything larger is not one
MAX_CONTAINERS = 1000  # each is checked on each node group; YAML aliases could otherwise multiply them cheaply


def load_job_spec(path: str) -> list[JobFacts]:
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_SPEC_BYTES + 1)
    except OSError as exc:
        raise UnavailableError(f"cannot read job spec {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_SPEC_BYTES:
        raise BadInputError(f"{path}: larger than {MAX_SPEC_BYTES // (1024 * 1024)} MiB: not a job spec")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise BadInputError(f"{path}: not UTF-8 text: not a job spec") from None
    return parse_job_spec(text, path)


def parse_job_spec(text: str, path: str) -> list[JobFacts]:
    """Every container the spec starts; PARTIAL when the text leaves parts out ("..." lines: a snippet)."""
    elided = elision(text)
    if elided is None:
        return _parse(text, path)
    # the marks themselves are no YAML ("key: ..." in a mapping, a bare "..." mid-document): read them as comments
    found = _parse("\n".join("#" if _ELISION.match(line) else line for line in text.splitlines()) + "\n", path)
    note = f"the spec leaves parts out (line {elided}): what it does not show is unknown, not absent"
    return [_partial(j, note) for j in found]


def _partial(job: JobFacts, note: str) -> JobFacts:
    """The container of a snippet: a value the parser filled in because the text does not show it (no device, not
    privileged, no resource, the default /dev/shm) becomes unknown; what the text shows stays."""
    return dataclasses.replace(
        job,
        completeness=PARTIAL,
        notes=(*job.notes, note),
        privileged=job.privileged or None,
        cap_add=job.cap_add or None,
        host_network=job.host_network or None,
        host_ipc=job.host_ipc or None,
        devices=job.devices or None,
        resources=job.resources or None,
        pod_networks=job.pod_networks or None,
        shm_stated=job.shm_stated and (job.shm_setting is not None or job.shm_from_host),
    )


# A line that stands for left-out text: "...", "…", "# ...", "- ...", "key: ...", "<...>". YAML's own document end
# marker is "..." alone at column 0 after a document; a launch spec posted in a thread uses it to cut the rest.
_ELISION = re.compile(r"^\s*(?:#\s*)?(?:-\s*)?(?:[\w./-]+:\s*)?(?:\.\.\.|…|<\.\.\.>|\[\.\.\.\])\s*$")


def elision(text: str) -> int | None:
    """The first line (1-based) that marks left-out text, None when the spec shows everything."""
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        if _ELISION.match(line) and not (line == "..." and number == len(lines)):
            return number  # a final "..." closing the only document is YAML's end marker, not an elision
    return None


def _parse(text: str, path: str) -> list[JobFacts]:
    """Every container the spec starts. Shell scripts: Slurm (#SBATCH / srun --container-image) or docker run."""
    name = os.path.basename(path)
    # Apptainer / Singularity, alone or in a Slurm batch script without Pyxis steps (srun apptainer exec ...)
    if (
        apptainer.looks_like_apptainer(text)
        and "--container-image" not in text
        and not docker.looks_like_docker_run(text)
    ):
        launches = apptainer.parse_apptainer_text(text, path)
        if launches:
            return launches
    if slurm.looks_like_slurm(text):
        return slurm.parse_slurm_text(text, path)
    if (
        name.endswith((".sh", ".bash"))
        or text.startswith("#!")
        or (docker.looks_like_docker_run(text) and not name.endswith((".yaml", ".yml", ".json")))
    ):
        return docker.parse_docker_run_text(text, path)
    template = _template_kind(text)
    if template:
        raise BadInputError(f"{path}: {template}: render it first (helm template)")
    docs = load_documents(text, path)
    claims = _claims(docs)
    found: list[JobFacts] = []
    for number, doc in enumerate(docs, 1):
        if not isinstance(doc, dict):
            continue
        try:
            found += _containers(doc, path, claims)
        except (TypeError, AttributeError, ValueError):
            # a field of the wrong type (a number where a list belongs, ...): the spec, not imgcheck, is wrong
            raise BadInputError(
                f"{path}: document {number} ({doc.get('kind') or 'compose'}): a field has a type "
                "its schema does not allow"
            ) from None
    if len(found) > MAX_CONTAINERS:
        raise BadInputError(f"{path}: {len(found)} containers: more than {MAX_CONTAINERS}, not a job spec to check")
    if not found:
        kinds = sorted({str(d.get("kind")) for d in docs if isinstance(d, dict) and d.get("kind")})
        what = f" (kinds: {', '.join(kinds)})" if kinds else ""
        raise BadInputError(
            f"{path}: no container found{what}: expected a Kubernetes workload, PyTorchJob, MPIJob, "
            "LeaderWorkerSet, JobSet, Volcano Job, KubeRay RayCluster/RayJob, a Ray cluster launcher config, a "
            "SkyPilot task, a compose file, a Slurm script or a docker run command"
        )
    return found


def _containers(doc: dict[str, Any], path: str, claims: dict[str, str]) -> list[JobFacts]:
    if doc.get("kind") == "List" and isinstance(doc.get("items"), list):
        return [c for item in doc["items"] if isinstance(item, dict) for c in k8s.containers(item, path, claims)]
    if "services" in doc and "kind" not in doc:
        return docker.compose_services(doc, path)
    if "kind" in doc:
        return k8s.containers(doc, path, claims)
    if ray_cluster.looks_like_ray_cluster(doc):
        return ray_cluster.ray_cluster_containers(doc, path)
    if skypilot.looks_like_skypilot(doc):
        return skypilot.skypilot_task(doc, path)
    return []


def _template_kind(text: str) -> str | None:
    """A Helm chart template or another Go template: not YAML until rendered."""
    if "{{" not in text or "}}" not in text:
        return None
    if any(word in text for word in (".Values", ".Release", ".Chart", 'include "', "{{-")):
        return "a Helm template ({{ .Values ... }})"
    if _GO_TEMPLATE.search(text):
        return "a Go template ({{.Field}})"
    return None


_GO_TEMPLATE = re.compile(r"\{\{\s*\.[A-Za-z]")


def _claims(docs: list[Any]) -> dict[str, str]:
    """DRA: ResourceClaim / ResourceClaimTemplate name -> "rdma" when it or its DeviceClass selects RDMA devices
    (a CEL selector or class name that says rdma), else the device class names."""
    classes = {
        str(d["metadata"].get("name")): d
        for d in docs
        if isinstance(d, dict) and d.get("kind") == "DeviceClass" and isinstance(d.get("metadata"), dict)
    }
    out: dict[str, str] = {}
    for d in docs:
        if not isinstance(d, dict) or d.get("kind") not in ("ResourceClaim", "ResourceClaimTemplate"):
            continue
        name = str((d.get("metadata") or {}).get("name"))
        spec = d.get("spec") or {}
        if d.get("kind") == "ResourceClaimTemplate":
            spec = spec.get("spec") or {} if isinstance(spec, dict) else {}
        text = repr(spec)
        class_names = sorted(set(re.findall(r"'deviceClassName': '([^']+)'", text)))
        class_text = " ".join(repr(classes[c]) for c in class_names if c in classes)
        rdma = "rdma" in (text + class_text).lower()
        out[name] = "rdma" if rdma else ("device class " + ", ".join(class_names) if class_names else "no device class")
    return out


def for_image(jobs: list[JobFacts], image: str | None) -> list[JobFacts]:
    """The containers that run `image` (all of them when none names an image the check was given)."""
    if image is None:
        return jobs

    def bare(ref: str) -> str:
        return ref.split("://", 1)[-1].removeprefix("docker.io/").removeprefix("library/")

    named = [
        j for j in jobs if j.image and (bare(j.image) == bare(image) or bare(j.image).replace("#", "/") == bare(image))
    ]
    return named or jobs


def running(jobs: list[JobFacts], name: str) -> list[JobFacts]:
    """The containers whose image is `name` (REGISTRY/REPOSITORY) at any tag or digest; none when no container
    runs it (unlike for_image, a spec that names other images says nothing about this one)."""
    from ..errors import UsageError
    from ..sources.reference import parse_reference

    def key(ref: str) -> tuple[str, str] | None:
        try:
            parsed = parse_reference(ref.replace("#", "/", 1))  # Pyxis writes REGISTRY#IMAGE
        except UsageError:
            return None  # a shell variable or a malformed name: not this image
        return parsed.registry, parsed.repository

    wanted = key(name)
    return [j for j in jobs if j.image and wanted is not None and key(j.image) == wanted]
