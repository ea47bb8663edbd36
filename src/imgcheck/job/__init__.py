"""The launch: what a job spec (Kubernetes, Slurm/Pyxis, docker run, compose) states about each container."""

from .model import RUNTIME_DOCKER, RUNTIME_ENROOT, RUNTIME_KUBERNETES, EnvVar, JobFacts
from .parse import load_job_spec, parse_job_spec

__all__ = [
    "EnvVar",
    "JobFacts",
    "RUNTIME_DOCKER",
    "RUNTIME_ENROOT",
    "RUNTIME_KUBERNETES",
    "load_job_spec",
    "parse_job_spec",
]
