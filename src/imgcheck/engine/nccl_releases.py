"""The NCCL release in the image against what is known about releases: known failures (nccl_known_issues) and the
first release that supports the node's GPU generation (nccl_gpu_generations)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator

from ..versions import ranges
from . import facts
from .context import Ctx
from .emit import Outcome, finding, unknown

RULES = ("NCCL-RELEASE-KNOWN-ISSUE", "NCCL-TOO-OLD-FOR-GPU")
# The facts each rule needs present (absent: the rule does not apply) and the further facts it reads;
# silence with one of them unknown is reported as unknown (engine/contract.py).
REQUIRES = {
    "NCCL-RELEASE-KNOWN-ISSUE": (facts.NCCL,),
    "NCCL-TOO-OLD-FOR-GPU": (facts.NCCL,),
}
READS = {
    "NCCL-RELEASE-KNOWN-ISSUE": (facts.NCCL,),
    "NCCL-TOO-OLD-FOR-GPU": (facts.NCCL, facts.GPU_DRIVER),
}

# image platform words for the rows' arch (a row's arch is the GOARCH-style name OCI platforms use)
_ARCH_ALIASES = {"aarch64": "arm64", "x86_64": "amd64"}


def check(ctx: Ctx) -> Iterator[Outcome]:
    if ctx.nccl is None:
        return
    yield from _known_issues(ctx)
    yield from _gpu_generation(ctx)


def _image_arch(ctx: Ctx) -> str | None:
    platform = ctx.image.platform or ""
    parts = platform.split("/")
    arch = parts[1] if len(parts) > 1 else None
    return _ARCH_ALIASES.get(arch, arch) if arch else (ctx.node.arch or None)


def _known_issues(ctx: Ctx) -> Iterator[Outcome]:
    nccl = ctx.nccl
    assert nccl is not None  # check() returns before this without NCCL
    version = nccl.version
    for row in ctx.matrix.rows("nccl_known_issues"):
        hit = ranges.within(version, row["nccl_min"], row["nccl_below"])
        if hit is False:
            continue
        if row.get("arch") and (arch := _image_arch(ctx)) is not None and arch != row["arch"]:
            continue
        if hit is None:
            yield unknown(
                "NCCL-RELEASE-KNOWN-ISSUE",
                f"NCCL {version} may or may not be in {row['nccl_min']}..{row['nccl_below']} ({row['issue']}); "
                f"it also needs {'; '.join(row.get('conditions') or ()) or 'nothing more'}",
            )
            continue
        name, value = row.get("workaround_setting"), row.get("workaround_value")
        applied = ctx.setting(name) if name else None
        if applied is not None and applied.value.strip() == value:
            continue  # the image already avoids it
        evidence = ctx.nccl_evidence() + ([applied.evidence] if applied else [])
        conditions = tuple(row.get("conditions") or ())
        found = finding(
            ctx.matrix,
            "NCCL-RELEASE-KNOWN-ISSUE",
            evidence,
            variant=None if name else "upgrade-only",
            conditions="; ".join(conditions) or "nothing more",
            nccl=version,
            issue=row["summary"],
            nccl_min=row["nccl_min"],
            fixed_in=row["nccl_below"],
            workaround=f"{name}={value}" if name else "none known",
        )
        yield dataclasses.replace(found, unshown=conditions)  # ranks below findings whose trigger was shown


def _gpu_generation(ctx: Ctx) -> Iterator[Outcome]:
    nccl = ctx.nccl
    assert nccl is not None  # check() returns before this without NCCL
    rule = "NCCL-TOO-OLD-FOR-GPU"
    names = sorted({g.name for g in ctx.node.gpu.gpus if g.name})
    if not names:
        return
    rows = ctx.matrix.rows("nccl_gpu_generations")
    for name in names:
        row = next((r for r in rows if re.search(r["pattern"], name)), None)
        if row is None:
            continue
        ok = ranges.at_least(nccl.version, row["nccl_min"])
        if ok is None:
            yield unknown(rule, f"NCCL {nccl.version} may or may not be {row['nccl_min']} or newer ({name})")
        elif not ok:
            yield finding(
                ctx.matrix,
                rule,
                ctx.nccl_evidence() + [ctx.node_ev("gpu.gpus.name", name)],
                nccl=nccl.version,
                gpu=name,
                generation=row["generation"],
                nccl_min=row["nccl_min"],
            )
        return  # one finding per node: the GPUs of one node are one generation in practice
