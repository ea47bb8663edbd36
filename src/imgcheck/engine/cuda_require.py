"""The image's NVIDIA_REQUIRE_* Env against the node's driver: the container toolkit's start-time requirement check.

Distinct from CUDA minor-version compatibility (engine/cuda.py, which asks whether CUDA calls succeed once the
container runs): this check refuses to start the container at all. The grammar, as the toolkit implements it
(NVIDIA/nvidia-container-toolkit internal/requirements/constraints/factory.go; libnvidia-container's cli does the
same for the legacy path): every NVIDIA_REQUIRE_* variable (except NVIDIA_REQUIRE_JETPACK) must hold; inside one,
space-separated terms are alternatives and comma-separated factors of a term must all hold; a factor is
`<property><op><value>` with properties cuda (the driver's CUDA version, cuDriverGetVersion), driver, arch and brand;
an unknown property is skipped. An image with CUDA_VERSION and no NVIDIA_REQUIRE_CUDA is "legacy" and gets
`cuda>=<major.minor of CUDA_VERSION>` (internal/config/image/cuda_image.go). NVIDIA_DISABLE_REQUIRE=true turns the
whole check off. The `brand=tesla,driver>=...,driver<...` alternatives NVIDIA's images carry are how the forward-compat
package is honoured: the check never looks at the image's compat libcuda.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ..model.report import Evidence
from ..versions.ecosystems import numeric_tuple
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding, unknown

RULE = "CUDA-REQUIRE-UNSATISFIED"
REQUIRE_PREFIX = "NVIDIA_REQUIRE_"
SKIPPED = "NVIDIA_REQUIRE_JETPACK"  # the toolkit passes every NVIDIA_REQUIRE_* but this one
DISABLE = "NVIDIA_DISABLE_REQUIRE"
LEGACY = "CUDA_VERSION"
CDI_ONLY = {"cdi"}  # toolkit modes that inject by CDI spec and run no requirement check
_FACTOR = re.compile(r"^([a-z]+)(!=|<=|>=|=|<|>)(.*)$")
_TRUE = {"1", "t", "true"}  # Go's strconv.ParseBool, lower-cased


@dataclass(frozen=True)
class Factor:
    prop: str
    op: str
    value: str

    def __str__(self) -> str:
        return f"{self.prop}{self.op}{self.value}"


def parse(requirement: str) -> list[list[Factor]]:
    """Alternatives (space) of conjunctions (comma). Factors naming a property the toolkit does not know are
    dropped, as the toolkit drops them; a malformed factor raises ValueError (the toolkit refuses the container)."""
    terms: list[list[Factor]] = []
    for term in requirement.split(" "):
        factors = []
        for text in term.split(","):
            if not text.strip():
                continue
            m = _FACTOR.match(text)
            if m is None:
                raise ValueError(f"invalid constraint: {text}")
            if m.group(1) in ("cuda", "driver", "arch", "brand"):
                factors.append(Factor(*m.groups()))
        if factors:
            terms.append(factors)
    return terms


def _compare(have: str, op: str, want: str) -> bool | None:
    a, b = numeric_tuple(have), numeric_tuple(want)
    if not a or not b:
        return None
    width = max(len(a), len(b))  # semver: 12.4 == 12.4.0
    a, b = a + (0,) * (width - len(a)), b + (0,) * (width - len(b))
    return {"=": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def holds(factor: Factor, props: dict[str, str | None]) -> bool | None:
    """True/False, or None when the node property it reads is not known."""
    have = props.get(factor.prop)
    if have is None:
        return None
    if factor.prop in ("cuda", "driver", "arch"):
        return _compare(have, factor.op, factor.value)
    same = have.lower() == factor.value.lower()
    return same if factor.op == "=" else (not same if factor.op == "!=" else None)


def _all(values: list[bool | None]) -> bool | None:
    return False if False in values else (None if None in values else True)


def satisfied(terms: list[list[Factor]], props: dict[str, str | None]) -> bool | None:
    """OR over the terms of AND over their factors, with None for 'depends on an unknown property'."""
    if not terms:
        return True
    results = [_all([holds(f, props) for f in term]) for term in terms]
    return True if True in results else (None if None in results else False)


def _driver_cuda(ctx: Ctx) -> tuple[str | None, str]:
    """(the CUDA version the node's driver reports, where it came from)."""
    gpu = ctx.node.gpu
    if gpu.cuda_driver_version:
        return gpu.cuda_driver_version, "node.gpu.cuda_driver_version"
    row = ctx.matrix.row("nvidia_driver_cuda", driver_branch=ctx.driver_branch()) if gpu.driver_version else None
    if row and row.get("newest_cuda_native"):
        return str(row["newest_cuda_native"]), f"catalog nvidia_driver_cuda (driver branch {row['driver_branch']})"
    return None, (
        f"the CUDA version driver {gpu.driver_version or '(unknown)'} reports is not known (no row for its branch in "
        "catalog nvidia_driver_cuda; nvidia-smi's 'CUDA Version' gives it: node fact gpu.cuda_driver_version)"
    )


@rule(
    RULE,
    requires=(),
    reads=(facts.GPU_DRIVER, facts.setting(DISABLE, "NVIDIA_REQUIRE_CUDA", LEGACY)),
    needs={"nvidia_driver_cuda": set()},
)
def requirement(ctx: Ctx) -> Iterator[Outcome]:
    disable = ctx.setting(DISABLE)
    if disable is not None and disable.value.strip().lower() in _TRUE:
        yield decided(RULE, f"{disable.label}: the toolkit skips every NVIDIA_REQUIRE_* check")
        return
    required = [(n, v) for n, v in sorted(ctx.image.env.items()) if n.startswith(REQUIRE_PREFIX) and n != SKIPPED]
    cuda_req = ctx.setting("NVIDIA_REQUIRE_CUDA")  # the launch's -e wins over the image's Env
    required = [(n, v) for n, v in required if n != "NVIDIA_REQUIRE_CUDA"]
    evidence: list[Evidence] = []
    if cuda_req is not None:
        required.insert(0, ("NVIDIA_REQUIRE_CUDA", cuda_req.value))
        evidence.append(cuda_req.evidence)
    else:
        legacy = ctx.setting(LEGACY)
        mm = numeric_tuple(legacy.value)[:2] if legacy is not None else ()
        if legacy is not None and len(mm) == 2:
            required.insert(0, (f"{LEGACY} (legacy image)", f"cuda>={mm[0]}.{mm[1]}"))
            evidence.append(legacy.evidence)
    if not required:
        if ctx.image.unknown_reason("env") is None:
            yield decided(
                RULE, f"the image's Env sets no {REQUIRE_PREFIX}* and no {LEGACY}: the toolkit checks nothing"
            )
        return  # Env not read: the engine asks the settings this rule READS
    modes = {c.mode for c in ctx.node.container_toolkit.configs or ()}
    if modes and modes <= CDI_ONLY:
        yield decided(RULE, "the node's container toolkit runs in CDI mode, which checks no NVIDIA_REQUIRE_*")
        return
    cuda, cuda_from = _driver_cuda(ctx)
    props: dict[str, str | None] = {"cuda": cuda, "driver": ctx.node.gpu.driver_version}
    for name, value in required:
        try:
            terms = parse(value)
        except ValueError as exc:
            yield unknown(RULE, f"{name}={value}: {exc}; the toolkit refuses a requirement it cannot parse")
            return
        verdict = satisfied(terms, props)
        if verdict is True:
            continue
        if verdict is None:
            missing = "the node's driver version" if props["driver"] is None else cuda_from
            if any(f.prop in ("brand", "arch") for t in terms for f in t):
                missing += "; an alternative depends on the GPU brand/arch, which imgcheck does not read"
            yield unknown(RULE, f"whether {name}={value} holds on the node: {missing}", (facts.GPU_DRIVER.name,))
            return
        first = next(f for f in terms[0] if holds(f, props) is False)
        evidence.append(ctx.node_ev("gpu.driver_version", props["driver"]))
        if cuda:
            evidence.append(ctx.node_ev("gpu.cuda_driver_version", cuda))
        yield finding(
            ctx.matrix,
            RULE,
            evidence,
            variable=name,
            requirement=value,
            condition=str(first),
            driver=props["driver"] or "?",
            driver_cuda=cuda or "?",
            driver_cuda_from=cuda_from,
        )
        return


RULES, NEEDS, REQUIRES, READS, check = family(requirement)
