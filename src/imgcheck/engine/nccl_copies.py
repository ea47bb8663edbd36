"""NCCL wheels that do not match what torch was built against (the copy torch loads is the one in nvidia/nccl/lib).

torch's Requires-Dist pins one nvidia-nccl-cuXX release; torch's libraries bind NCCL symbols of that release through
their RPATH ($ORIGIN/../../nvidia/nccl/lib). Every nvidia-nccl-cuXX wheel installs the same file there
(nvidia/nccl/lib/libnccl.so.2), so a second wheel, or a wheel pip was told to keep at another version, decides which
libnccl torch gets.
"""

from __future__ import annotations

from collections.abc import Iterator

from packaging.version import InvalidVersion, Version

from ..knowledge import nccl as nccl_k
from ..model.image import Nccl
from ..model.report import Evidence
from . import facts
from .context import Ctx
from .emit import Outcome, finding

RULES = ("NCCL-WHEEL-NOT-TORCH-PIN", "NCCL-WHEELS-TWO-CUDA-MAJORS")
# The facts each rule needs present (absent: the rule does not apply) and the further facts it reads;
# silence with one of them unknown is reported as unknown (engine/contract.py).
REQUIRES = {
    "NCCL-WHEEL-NOT-TORCH-PIN": (facts.NCCL,),
    "NCCL-WHEELS-TWO-CUDA-MAJORS": (facts.NCCL,),
}
READS = {
    "NCCL-WHEEL-NOT-TORCH-PIN": (facts.NCCL,),
    "NCCL-WHEELS-TWO-CUDA-MAJORS": (facts.NCCL,),
}


def _ev(n: Nccl, fact: str) -> Evidence:
    return Evidence(fact, f"{n.origin} {n.version}", n.location)


def check(ctx: Ctx) -> Iterator[Outcome]:
    wheels = [n for n in ctx.image.nccl if n.origin == "pip" and n.version]
    if not wheels:
        return
    yield from _two_majors(ctx, wheels)
    yield from _pin(ctx, wheels)


def _two_majors(ctx: Ctx, wheels: list[Nccl]) -> Iterator[Outcome]:
    majors: dict[int, Nccl] = {}
    for n in wheels:
        major = nccl_k.wheel_cuda_major(n)
        if major is not None:
            majors.setdefault(major, n)
    if len(majors) < 2:
        return
    names = ", ".join(f"nvidia-nccl-cu{m} {n.version}" for m, n in sorted(majors.items()))
    yield finding(
        ctx.matrix,
        "NCCL-WHEELS-TWO-CUDA-MAJORS",
        [_ev(n, "image.nccl.wheel") for n in majors.values()],
        wheels=names,
        keep=f"nvidia-nccl-cu{max(majors)}",
    )


def _pep440(text: str | None) -> Version | None:
    if text is None:  # the callers keep only set versions; None would not parse either
        return None
    try:
        return Version(text)
    except InvalidVersion:
        return None


def _pin(ctx: Ctx, wheels: list[Nccl]) -> Iterator[Outcome]:
    pins = [n for n in ctx.image.nccl if n.origin == "torch-requirement" and n.version]
    for pin in pins:
        pin_major = nccl_k.wheel_cuda_major(pin)
        same = [w for w in wheels if pin_major is None or nccl_k.wheel_cuda_major(w) in (None, pin_major)]
        wanted = _pep440(pin.version)
        # wheel and pin are Python distributions: PEP 440 decides what is equal and what is newer
        versions = [(w, _pep440(w.version)) for w in same]
        if (
            wanted is None
            or not versions
            or any(v == wanted for _, v in versions)
            or any(v is None for _, v in versions)
        ):
            continue  # the pinned release is installed, nothing comparable is, or a version does not parse
        wheel, have = versions[0]
        assert have is not None  # unparsed versions were skipped above
        newer = have > wanted
        major = pin_major if pin_major is not None else nccl_k.wheel_cuda_major(wheel)
        yield finding(
            ctx.matrix,
            "NCCL-WHEEL-NOT-TORCH-PIN",
            [_ev(pin, "image.nccl.torch_pin"), _ev(wheel, "image.nccl.wheel")],
            variant="newer" if newer else None,
            pinned=pin.version,
            installed=wheel.version,
            wheel=f"nvidia-nccl-cu{major}" if major is not None else "the nvidia-nccl wheel",
        )
