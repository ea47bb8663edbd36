"""JobFacts to and from plain dicts (the JSON of a facts file, test corpora). Unknown keys are bad input."""

from __future__ import annotations

import dataclasses

from ..errors import BadInputError
from .model import RUNTIME_HOST, EnvVar, JobFacts

_TUPLES = ("cap_add", "devices", "env_overrides_image", "open_flags", "notes")


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
    if doc.get("runtime") == RUNTIME_HOST:
        # processes on the host share its network and IPC namespaces (its interfaces, its /dev/shm)
        doc["host_network"] = True if doc.get("host_network") is None else doc["host_network"]
        doc["host_ipc"] = True if doc.get("host_ipc") is None else doc["host_ipc"]
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
