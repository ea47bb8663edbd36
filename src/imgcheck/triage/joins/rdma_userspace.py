"""No usable RDMA device in user space vs the image's libibverbs and providers."""

from __future__ import annotations

from collections.abc import Iterator

from ...model.report import Evidence
from ..result import JoinNote
from .context import CONSISTENT, CONTRADICTS, EXPLAINS, UNKNOWN, JoinContext

PROVIDER_ABI = "IBVERBS-PROVIDER-ABI"
SIGNATURES: tuple[str, ...] = (PROVIDER_ABI, "NET-IB-NO-DEVICE", "LIBIBVERBS-MISSING", "IBVERBS-DRIVER-LOAD-MLX5")


def join(ctx: JoinContext) -> Iterator[JoinNote]:
    image = ctx.image
    if image is None:
        return
    lib = image.rdma.libibverbs
    ev = ctx.lib_evidence() + [
        Evidence.member("image.rdma.providers", p.name, "pabi", p.pabi, p.location) for p in image.rdma.providers
    ]
    topic = "rdma-userspace"
    if lib is None:
        yield ctx.note(topic, EXPLAINS, "rdma-userspace.no-libibverbs", ev)
        return
    bad = [
        p
        for p in image.rdma.providers
        if p.pabi is not None and lib.private_abi is not None and p.pabi != lib.private_abi
    ]
    abi_failed = PROVIDER_ABI in ctx.present
    if bad:
        providers = ", ".join(p.name + "-rdmav" + str(p.pabi) for p in bad)
        yield ctx.note(topic, EXPLAINS, "rdma-userspace.mixed", ev, providers=providers, abi=lib.private_abi)
    elif not image.rdma.providers:
        yield ctx.note(topic, EXPLAINS, "rdma-userspace.no-providers", ev)
    elif abi_failed and (lib.private_abi is None or any(p.pabi is None for p in image.rdma.providers)):
        # "contradicts" needs the deciding facts: both ABI numbers known
        yield ctx.note(topic, UNKNOWN, "rdma-userspace.abi-unknown", ev)
    elif abi_failed:
        yield ctx.note(topic, CONTRADICTS, "rdma-userspace.abi-agree", ev, abi=lib.private_abi)
    else:
        yield ctx.note(
            topic, CONSISTENT, "rdma-userspace.consistent", ev, version=lib.version, n=len(image.rdma.providers)
        )
