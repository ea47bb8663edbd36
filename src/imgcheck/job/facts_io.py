"""JobFacts to and from plain dicts (the JSON of a facts file, test corpora). Unknown keys are bad input."""

from __future__ import annotations

import dataclasses

from ..errors import BadInputError
from .model import COMPLETE, PARTIAL, RUNTIME_ENROOT, RUNTIME_HOST, EnvVar, JobFacts

_TUPLES = ("cap_add", "devices", "pod_networks", "reuse_conflicts", "env_overrides_image", "open_flags", "notes")
# The keys that say how the launch sets /dev/shm. A facts file that names none of them has not said (a file is
# what someone wrote down, not the launch line): /dev/shm is unknown there, never the runtime's default.
# "shm_size_mib": null states it: the launch gives no size, so the runtime's default applies.
_SHM_KEYS = ("shm_size_mib", "shm_setting", "shm_from_host")


def _pyxis(doc: dict[str, object]) -> bool:
    """A facts file that names Pyxis, or a Slurm step with a container image (srun --container-image is Pyxis)."""
    runtime, kind = str(doc.get("runtime") or "").lower(), str(doc.get("kind") or "").lower()
    return runtime == "pyxis" or (runtime == "slurm" and ("container-image" in kind or "pyxis" in kind))


def parse_job_facts(doc: object, where: str) -> JobFacts:
    if not isinstance(doc, dict):
        raise BadInputError(f"{where}: job facts must be a mapping")
    known = {f.name for f in dataclasses.fields(JobFacts)}
    extra = sorted(set(doc) - known)
    if extra:
        raise BadInputError(f"{where}: unknown job facts {', '.join(extra)}")
    doc = dict(doc)
    doc.setdefault("path", where)
    doc.setdefault("kind", doc.get("runtime") or "job")
    doc.setdefault("runtime", None)
    if _pyxis(doc):
        doc["runtime"] = RUNTIME_ENROOT  # Slurm's container steps run through Pyxis, which starts them with enroot
    if doc.get("runtime") == RUNTIME_HOST:
        # processes on the host share its network and IPC namespaces (its interfaces, its /dev/shm)
        doc["host_network"] = True if doc.get("host_network") is None else doc["host_network"]
        doc["host_ipc"] = True if doc.get("host_ipc") is None else doc["host_ipc"]
    # a facts file is what someone wrote down of a launch: a key it leaves out is unknown unless it says it is whole
    doc.setdefault("completeness", PARTIAL)
    if doc["completeness"] not in (COMPLETE, PARTIAL):
        raise BadInputError(f"{where}: completeness must be {COMPLETE!r} or {PARTIAL!r}")
    if "shm_stated" not in doc:
        doc["shm_stated"] = any(k in doc for k in _SHM_KEYS) or doc.get("host_ipc") is True
    for key in _TUPLES:
        if doc.get(key) is not None:
            doc[key] = tuple(doc[key])
    if doc.get("resources") is not None:
        items = doc["resources"].items() if isinstance(doc["resources"], dict) else doc["resources"]
        doc["resources"] = tuple((str(k), str(v)) for k, v in items)
    env = doc.get("env") or ()
    if isinstance(env, dict):
        doc["env"] = tuple(EnvVar(k, None if v is None else str(v)) for k, v in env.items())
    else:
        doc["env"] = tuple(EnvVar(e["name"], e.get("value"), e.get("line")) for e in env)
    return JobFacts(**doc)
