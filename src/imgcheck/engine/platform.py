"""The image's CPU architecture against the node's: a foreign-architecture image does not start at all."""

from __future__ import annotations

from collections.abc import Iterator

from ..errors import ImgcheckError
from ..model.location import Location
from ..model.report import Evidence
from ..sources.platform import parse_platform
from .context import Ctx
from .emit import Outcome, finding, unknown

RULES = ("PLATFORM-ARCH-MISMATCH",)
# The facts each rule needs present (absent: the rule does not apply) and the further facts it reads;
# silence with one of them unknown is reported as unknown (engine/contract.py).
REQUIRES = {
    "PLATFORM-ARCH-MISMATCH": (),
}
READS = {
    "PLATFORM-ARCH-MISMATCH": (),
}
_RELEASE_SUFFIX = {".x86_64": "amd64", ".aarch64": "arm64", ".ppc64le": "ppc64le", ".s390x": "s390x"}


def _arch(text: str | None) -> str | None:
    """GOARCH spelling (what image configs use) of an arch name; the kernel's names are aliases."""
    if not text:
        return None
    try:
        return parse_platform(f"linux/{text}").architecture
    except ImgcheckError:
        return None


def _node_arch(ctx: Ctx) -> tuple[str | None, Evidence | None]:
    if ctx.node.arch:
        return _arch(ctx.node.arch), ctx.node_ev("arch", ctx.node.arch)
    label = ctx.node.labels.get("kubernetes.io/arch")  # the kubelet's own label (GOARCH spelling)
    if label and _arch(label):
        return _arch(label), ctx.node_ev("labels.kubernetes.io/arch", label)
    release = ctx.node.kernel.release or ""
    for suffix, arch in _RELEASE_SUFFIX.items():  # RHEL-style releases end in the machine name
        if release.endswith(suffix):
            return arch, ctx.node_ev("kernel.release", release)
    return None, None


def check(ctx: Ctx) -> Iterator[Outcome]:
    rule = "PLATFORM-ARCH-MISMATCH"
    have = ctx.image.platform
    if not have:
        return  # the image names no platform (Enroot squashfs): nothing to compare, and nothing claimed
    try:
        image_arch = parse_platform(have).architecture
    except ImgcheckError:
        return
    node_arch, node_ev = _node_arch(ctx)
    if node_arch is None or node_ev is None:  # _node_arch gives both or neither
        yield unknown(rule, f"the image is {have}; " + ctx.unknown_why("arch"))
        return
    if node_arch == image_arch:
        return
    evidence = [Evidence("image.platform", have, Location.described("image config (os/architecture)")), node_ev]
    yield finding(ctx.matrix, rule, evidence, image_platform=have, image_arch=image_arch, node_arch=node_arch)
