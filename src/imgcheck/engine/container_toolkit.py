"""The node's NVIDIA Container Toolkit release against the image and the launch (CONTAINER-TOOLKIT-KNOWN-DEFECT).

The toolkit's runtime hook (nvidia-container-runtime-hook, run by docker, containerd and CRI-O in its default mode)
reads the image's Env to decide what to mount, so a defect of a toolkit release shows only with some images and
launches: catalogs/container_toolkit_defects.json names each with its releases and the conditions, which the image's
Env, the launch and the node's toolkit release decide.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..job.model import RUNTIME_DOCKER, RUNTIME_KUBERNETES
from ..model.location import Location
from ..model.report import Evidence
from ..versions import ranges
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding, unknown

DEFECT = "CONTAINER-TOOLKIT-KNOWN-DEFECT"
HOOK_RUNTIMES = (RUNTIME_DOCKER, RUNTIME_KUBERNETES)  # enroot/Pyxis call libnvidia-container without this hook
IMEX = "NVIDIA_IMEX_CHANNELS"


def _affected(version: str, row: dict[str, Any]) -> bool | None:
    low = ranges.at_least(version, row["affected_min"])
    if low is not True:
        return low
    return True if not row.get("fixed_in") else ranges.below(version, row["fixed_in"])


def _condition(ctx: Ctx, cond: str) -> tuple[bool | None, str]:
    """Whether the facts show one condition, and the question when they cannot."""
    if cond == "toolkit_hook":
        job = ctx.job
        if job is None:
            return (
                None,
                "which runtime starts the container (docker and Kubernetes run the toolkit's hook; enroot does not)",
            )
        if job.runtime is None:
            return None, "which runtime the launch spec uses"
        return job.runtime in HOOK_RUNTIMES, ""
    if cond == "legacy_image":
        if ctx.image_unknown("env") is not None:
            return None, f"the image's Env ({ctx.image_unknown('env')})"
        env = ctx.image.env
        return ("CUDA_VERSION" in env and "NVIDIA_REQUIRE_CUDA" not in env), ""
    if cond == "imex_default":
        setting = ctx.setting(IMEX)
        if setting is not None:
            return setting.value.strip().lower() == "all", ""
        if ctx.image_unknown("env") is not None:
            return None, f"whether the image sets {IMEX}"
        job = ctx.job
        if job is not None and job.env_incomplete:
            return None, f"whether the launch sets {IMEX} (its env is not all shown)"
        return True, ""
    return None, f"condition {cond} (not a condition this rule knows)"


@rule(DEFECT, requires=(facts.GPU_WORKLOAD,), reads=(facts.CONTAINER_TOOLKIT, facts.setting(IMEX)))
def known_defect(ctx: Ctx) -> Iterator[Outcome]:
    if not ctx.gpu_image:
        return  # the hook sets nothing up for a container that does not ask for GPUs
    version = ctx.node.gpu.container_toolkit_version
    if version is None:
        return  # settled as unknown through CONTAINER_TOOLKIT (READS)
    if version == "":
        yield decided(DEFECT, "the node has no nvidia-container-toolkit package")
        return
    shown: list[dict[str, Any]] = []
    asked: list[str] = []
    for row in ctx.matrix.rows("container_toolkit_defects"):
        affected = _affected(version, row)
        if affected is False:
            continue
        states = [_condition(ctx, c) for c in row.get("conditions") or []]
        if any(v is False for v, _ in states):
            continue
        questions = [q for v, q in states if v is None]
        if affected is None:
            questions.append(f"whether toolkit {version} is in {row['affected_min']} .. {row.get('fixed_in')}")
        if questions:
            asked.append(f"{row['issue']}: {', '.join(questions)}")
        else:
            shown.append(row)
    if shown:
        row = shown[0]
        image_env = ctx.image.env
        yield finding(
            ctx.matrix,
            DEFECT,
            [
                ctx.node_ev("gpu.container_toolkit_version", version),
                *(
                    [
                        Evidence(
                            "image.env.CUDA_VERSION", image_env["CUDA_VERSION"], Location.described("image config Env")
                        )
                    ]
                    if "CUDA_VERSION" in image_env
                    else []
                ),
            ],
            version=version,
            issue=row["issue"],
            trigger=row["trigger"],
            symptom=row["symptom"],
            row_fix=row["fix"],
            fixed_in=row.get("fixed_in") or "no fixed release named",
        )
    elif asked:
        yield unknown(
            DEFECT,
            f"known defects of nvidia-container-toolkit {version} may apply; the facts cannot show: "
            + "; ".join(asked),
        )
    else:
        yield decided(DEFECT, f"no known defect of nvidia-container-toolkit {version} whose conditions the facts show")


RULES, NEEDS, REQUIRES, READS, check = family(known_defect)
