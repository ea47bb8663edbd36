"""An NCCL setting as the process sees it, resolved one way for the engine, triage and recommend.

Order: the job's environment as a log shows it (the ranks' real Env) > the launch spec's env (when it wins over
the image's, imgcheck.job) > the image config Env > /etc/nccl.conf. NCCL reads /etc/nccl.conf with setenv(..., overwrite=0), so any Env value wins
(NVIDIA/nccl src/misc/param.cc setEnvFile).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..model.image import ImageFacts
from ..model.location import Location
from ..model.report import Evidence

if TYPE_CHECKING:
    from ..job.model import JobFacts

ORIGIN_LOG = "log"
ORIGIN_ENV = "env"
ORIGIN_CONF = "nccl.conf"
ORIGIN_JOB = "job"  # the launch spec (imgcheck.job): `where` says which container and line, `path` the file
# the image's Env not read, its reference naming an NVIDIA image family that sets it (knowledge/image_env.py):
# `where` says which family, catalog row and confidence
ORIGIN_INFERRED = "inferred"
ENV_CONFIG_PATH = "image config Env"  # not a file: the image config's Env list
IMAGE_ENV = Location.described(ENV_CONFIG_PATH)
NCCL_CONF_PATH = "/etc/nccl.conf"


@dataclass(frozen=True)
class Setting:
    """One NCCL setting and where its value comes from."""

    name: str
    value: str
    origin: str  # "log" | "env" | "nccl.conf"
    where: str | None = None  # for origin "log": which log (e.g. "log of the failing rank"); "job": which container
    path: str | None = None  # for origin "job": the spec file

    @property
    def evidence(self) -> Evidence:
        if self.origin == ORIGIN_LOG:
            return Evidence(f"log.env.{self.name}", self.value, Location.described(self.where) if self.where else None)
        if self.origin == ORIGIN_JOB:
            return Evidence(f"job.env.{self.name}", self.value, Location.file(self.path))
        if self.origin == ORIGIN_ENV:
            return Evidence(f"image.env.{self.name}", self.value, IMAGE_ENV)
        if self.origin == ORIGIN_INFERRED:
            return Evidence(f"image.env.{self.name}", self.value, Location.described(self.where or self.origin))
        return Evidence(f"image.nccl_conf.{self.name}", self.value, Location.file(NCCL_CONF_PATH))

    @property
    def source_words(self) -> str:
        if self.origin in (ORIGIN_LOG, ORIGIN_JOB):
            return self.where or self.origin
        if self.origin == ORIGIN_INFERRED:
            return "image Env as its family sets it (inferred)"
        return "image Env" if self.origin == ORIGIN_ENV else "image /etc/nccl.conf"

    @property
    def label(self) -> str:
        where = {ORIGIN_ENV: "image Env", ORIGIN_CONF: NCCL_CONF_PATH}.get(self.origin, self.source_words)
        return f"{self.name}={self.value} ({where})"

    def as_int(self) -> int | None:
        """The value the way NCCL's strtoll(str, NULL, 0) reads it, or None if NCCL would fall back to its default."""
        text = self.value.strip()
        try:
            return int(text, 0)
        except ValueError:
            return None


def resolve(
    name: str,
    image: ImageFacts | None = None,
    log_envs: Iterable[tuple[dict[str, str], str]] = (),
    job: JobFacts | None = None,
) -> Setting | None:
    """The setting `name` as the process sees it; log_envs are (env, words) pairs, most specific first; job is
    the launch spec's container (imgcheck.job.JobFacts), whose env wins over the image's where its runtime says so."""
    for env, words in log_envs:
        if env and name in env:
            return Setting(name, env[name], ORIGIN_LOG, words)
    var = job.env_value(name) if job is not None else None
    if job is not None and var is not None and var.value is not None:
        image_has = image is not None and name in image.env
        if job.wins_over_image(name, image_has):
            where = job.where if var.line is None else f"{job.where.rstrip(')')}, env line {var.line})"
            return Setting(name, var.value, ORIGIN_JOB, where, job.path)
    if image is not None:
        if name in image.env:
            return Setting(name, image.env[name], ORIGIN_ENV)
        if name in image.nccl_conf:
            return Setting(name, image.nccl_conf[name], ORIGIN_CONF)
    return None
