"""The smallest image-side changes that keep the user's image: an Env edit, or a pip pin of the NCCL wheel.

Nothing is proposed from text: each change is applied to a copy of the image's facts and the engine is run
again on the same nodes; only changes after which it predicts the image clean are returned, single changes
before pairs. Env knobs come from NCCL's documented environment variables; the NCCL versions a pin may
choose are the nvidia-nccl-cu* versions PyPI torch releases pin (compat_matrix torch_wheels), so every
proposed version is a wheel that exists and that some torch release ships with.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from ..job.model import EnvVar, JobFacts
from ..matrix import Matrix
from ..model.image import ImageFacts, Nccl
from ..versions.ecosystems import compare_numeric, numeric_tuple

NCCL_ENV_DOC = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html"
# Settings NCCL documents that turn off one mechanism without turning off RDMA: adding one is a candidate
# fix only when the engine then predicts clean (e.g. ENV-DISABLES-DMABUF still rules out DMABUF=0 where
# DMA-BUF is the only GPUDirect path).
ADDABLE = (("NCCL_CUMEM_ENABLE", "0"), ("NCCL_DMABUF_ENABLE", "0"))
PIP_ORIGINS = ("pip", "torch-requirement")
_WHEEL = re.compile(r"nvidia[_-]nccl[_-](cu\d+)", re.IGNORECASE)


Jobs = tuple[JobFacts, ...]


def _same_image(facts: ImageFacts) -> ImageFacts:
    return facts


@dataclass(frozen=True)
class ImageChange:
    kind: str  # env | pip-pin
    words: str  # what to do, e.g. "set NCCL_CUMEM_ENABLE=0 in the image's ENV (or the job's environment)"
    source: str
    apply: Callable[[ImageFacts], ImageFacts]
    # a change to what the launch spec sets (its container env): the job's value is what the process sees
    apply_jobs: Callable[[Jobs], Jobs] | None = None


def applied(change: ImageChange, image: ImageFacts, jobs: Jobs) -> tuple[ImageFacts, Jobs]:
    return change.apply(image), (change.apply_jobs(jobs) if change.apply_jobs is not None else jobs)


def _job_without(jobs: Jobs, name: str) -> Jobs:
    return tuple(dataclasses.replace(j, env=tuple(v for v in j.env if v.name != name)) for j in jobs)


def _job_with(jobs: Jobs, name: str, value: str) -> Jobs:
    return tuple(dataclasses.replace(j, env=(*(v for v in j.env if v.name != name), EnvVar(name, value))) for j in jobs)


def _spec_lines(jobs: Jobs, name: str) -> str:
    """'k8s/train.yaml line 23' (each file once, with the lines where it sets `name`)."""
    by_file: dict[str, list[str]] = {}
    for job in jobs:
        lines = [str(v.line) for v in job.env if v.name == name and v.line]
        by_file.setdefault(job.path, []).extend(x for x in lines if x not in by_file.get(job.path, []))
    return ", ".join(f"{path} line {', '.join(lines)}" if lines else path for path, lines in by_file.items())


def job_env_changes(jobs: Jobs) -> list[ImageChange]:
    """Removing each NCCL_* value the launch spec sets (pointing at its file and line), then adding each
    ADDABLE setting to the spec's container env (Kubernetes, docker: the spec's value wins over the image's)."""
    out = []
    stated = sorted({v.name for j in jobs for v in j.env if v.name.startswith("NCCL_") and v.value is not None})
    for name in stated:
        values = sorted({v.value for j in jobs for v in j.env if v.name == name and v.value is not None})
        out.append(
            ImageChange(
                "env",
                f"remove {name}={'/'.join(values)} from the container env in {_spec_lines(jobs, name)} "
                "(the launch spec sets it; NCCL's default applies)",
                NCCL_ENV_DOC,
                _same_image,
                partial(_job_without, name=name),
            )
        )
    settable = tuple(j for j in jobs if j.env_overrides_image is None)  # Pyxis passes host env only when named
    if settable and len(settable) == len(jobs):
        files = ", ".join(dict.fromkeys(j.path for j in jobs))
        for name, value in ADDABLE:
            if all((j.env_value(name) or EnvVar(name, None)).value == value for j in jobs):
                continue
            out.append(
                ImageChange(
                    "env",
                    f"set {name}={value} in the container env in {files}",
                    NCCL_ENV_DOC,
                    _same_image,
                    partial(_job_with, name=name, value=value),
                )
            )
    return out


def loaded_nccl(facts: ImageFacts) -> Nccl | None:
    """The NCCL entry the engine considers loaded (engine.context.NCCL_ORIGIN_ORDER)."""
    from ..engine.context import NCCL_ORIGIN_ORDER

    rank = {o: i for i, o in enumerate(NCCL_ORIGIN_ORDER)}
    found = sorted(
        (n for n in facts.nccl if n.version and numeric_tuple(n.version)),
        key=lambda n: rank.get(n.origin or "", len(rank)),
    )
    return found[0] if found else None


def _with_env(facts: ImageFacts, name: str, value: str) -> ImageFacts:
    return dataclasses.replace(_without(facts, name), env=dict(_without(facts, name).env, **{name: value}))


def _without(facts: ImageFacts, name: str) -> ImageFacts:
    return dataclasses.replace(
        facts,
        env={k: v for k, v in facts.env.items() if k != name},
        nccl_conf={k: v for k, v in facts.nccl_conf.items() if k != name},
    )


def env_changes(facts: ImageFacts) -> list[ImageChange]:
    """Removing each NCCL_* setting the image carries, then adding each ADDABLE one it does not set."""
    out = []
    for name in sorted(set(facts.env) | set(facts.nccl_conf)):
        if not name.startswith("NCCL_"):
            continue
        where = " and ".join(w for w, d in (("ENV", facts.env), ("/etc/nccl.conf", facts.nccl_conf)) if name in d)
        value = facts.env.get(name, facts.nccl_conf.get(name))
        out.append(
            ImageChange(
                "env",
                f"remove {name}={value} from the image's {where} (NCCL's default applies)",
                NCCL_ENV_DOC,
                partial(_without, name=name),
            )
        )
    for name, value in ADDABLE:
        if facts.env.get(name, facts.nccl_conf.get(name)) == value:
            continue
        out.append(
            ImageChange(
                "env",
                f"set {name}={value} in the image's ENV (or the job's environment)",
                NCCL_ENV_DOC,
                partial(_with_env, name=name, value=value),
            )
        )
    return out


def _wheel_package(facts: ImageFacts, chosen: Nccl) -> str | None:
    m = _WHEEL.search(chosen.path or "")
    if m:
        return f"nvidia-nccl-{m.group(1).lower()}"
    nums = numeric_tuple(facts.cuda.version) if facts.cuda and facts.cuda.version else ()
    return f"nvidia-nccl-cu{nums[0]}" if nums else None


def pip_changes(facts: ImageFacts, chosen: Nccl | None, matrix: Matrix) -> list[ImageChange]:
    """Pins of the image's NCCL wheel to a newer version some torch release pins, nearest first. Only when the
    NCCL that NCCL-using code loads is a pip wheel (a system libnccl is not a pip pin)."""
    if chosen is None or chosen.origin not in PIP_ORIGINS or not numeric_tuple(chosen.version or ""):
        return []
    package = _wheel_package(facts, chosen)
    pins: dict[str, list[str]] = {}
    sources: dict[str, str] = {}
    for row in matrix.rows("torch_wheels"):
        if row.get("nccl_pip_package") == package and row.get("nccl") and row["nccl"] != chosen.version:
            pins.setdefault(row["nccl"], []).append(row["torch"])
            sources.setdefault(row["nccl"], row["source"])
    torch = next((p for p in facts.packages if p.db == "pip" and p.name.lower() == "torch"), None)
    torch_row = matrix.row("torch_wheels", torch=torch.version.split("+", 1)[0]) if torch else None
    # Only newer NCCL: libnccl.so.2 stays backward compatible, but torch built against one NCCL may call
    # functions an older one lacks, so nothing older than the current wheel or torch's own pin is offered.
    floor = chosen.version or ""  # a version: checked above
    if torch_row and torch_row.get("nccl_pip_package") == package and compare_numeric(torch_row["nccl"], floor) > 0:
        floor = torch_row["nccl"]
    newer = sorted(
        (v for v in pins if compare_numeric(v, floor) > 0 or (v == floor and v != chosen.version)), key=numeric_tuple
    )
    own = torch_row["nccl"] if torch_row and torch_row.get("nccl_pip_package") == package else None
    torch_name = torch_row["torch"] if torch_row else None
    out = []
    for version in newer:

        def apply(f: ImageFacts, version: str = version) -> ImageFacts:
            return dataclasses.replace(
                f, nccl=tuple(dataclasses.replace(n, version=version) if n.origin in PIP_ORIGINS else n for n in f.nccl)
            )

        if own == version:
            conflict = f"; the version PyPI torch {torch_name} itself requires"
        elif own:
            conflict = (
                f"; PyPI torch {torch_name} requires {package}=={own} exactly, so pip reports the "
                f"conflict and installs the pin anyway"
            )
        else:
            conflict = (
                "; if the image's torch requires another version exactly, pip reports the conflict and "
                "installs the pin anyway"
            )
        out.append(
            ImageChange(
                "pip-pin",
                f"pip install {package}=={version} in the image (NCCL {chosen.version} -> {version}; the "
                f"wheel torch {', '.join(pins[version])} pins on PyPI{conflict})",
                sources[version],
                apply,
            )
        )
    return out


def smallest_changes(
    changes: list[ImageChange],
    clean: Callable[[ImageFacts, Jobs], bool],
    image: ImageFacts,
    max_size: int = 2,
    limit: int = 3,
    jobs: Jobs = (),
) -> list[tuple[ImageChange, ...]]:
    """The smallest combinations (one change, else two) after which `clean(modified image, modified jobs)` holds."""
    found: list[tuple[ImageChange, ...]] = []
    for size in range(1, max_size + 1):
        for combo in itertools.combinations(changes, size):
            if size > 1 and len({c.kind for c in combo}) < size and combo[0].kind == "pip-pin":
                continue  # two pins of the same wheel are not a combination
            modified, modified_jobs = image, jobs
            for change in combo:
                modified, modified_jobs = applied(change, modified, modified_jobs)
            if clean(modified, modified_jobs):
                found.append(combo)
                if len(found) >= limit:
                    return found
        if found:
            return found
    return found
