"""Liveness vs readiness, and the start-up preflight.

/healthz answers while the process can serve at all (a restart would not help otherwise);
/readyz says whether it can do its job: accept and store an event (a writable state directory
with room left) and check an image (every fleet's node_facts path exists). A load balancer or a
Kubernetes readinessProbe then stops sending pushes that would only fail with 503.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..errors import UnavailableError
from .config import ServiceConfig

if TYPE_CHECKING:
    from .storage import JobStore


def fleet_path_problems(config: ServiceConfig) -> list[str]:
    """node_facts and job_specs paths that do not exist (a typo shows here, not at the first push)."""
    problems = []
    for fleet in config.fleets.values():
        for key, paths in (("node_facts", fleet.node_facts), ("job_specs", fleet.job_specs)):
            for path in paths:
                if not os.path.exists(path):
                    problems.append(f"fleet {fleet.name}: {key} {path} does not exist")
                elif not os.access(path, os.R_OK):
                    problems.append(f"fleet {fleet.name}: {key} {path} is not readable")
    return problems


def state_dir_problems(config: ServiceConfig) -> list[str]:
    directory = os.path.dirname(os.path.abspath(config.database))
    try:
        st = os.statvfs(directory)
    except OSError as exc:
        return [f"state directory {directory}: {exc.strerror}"]
    free = st.f_bavail * st.f_frsize
    problems = []
    if free < config.min_free_bytes:
        problems.append(
            f"state directory {directory}: {free // 1024} KiB free, below min_free_bytes "
            f"({config.min_free_bytes // 1024} KiB)"
        )
    # a real write: permissions, a read-only mount and a full disk all show here (root ignores modes)
    from .readiness import writable

    why = writable(directory)
    if why:
        problems.append(f"state directory {why}")
    return problems


def readiness_problems(config: ServiceConfig, store: JobStore | None) -> list[str]:
    from .readiness import check_ready  # the store answers (SQLite or PostgreSQL) and $IMGCHECK_HOME takes writes

    return state_dir_problems(config) + fleet_path_problems(config) + check_ready(store)


def preflight(config: ServiceConfig) -> None:
    """Refuse to start on a config whose fleets point at missing node facts."""
    problems = fleet_path_problems(config)
    if problems:
        raise UnavailableError(f"{config.source}: " + "; ".join(problems))
