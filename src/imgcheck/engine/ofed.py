"""MLNX_OFED / DOCA userspace in the image against the node's RDMA kernel stack (vendor guidance, §3c)."""

from __future__ import annotations

from collections.abc import Iterator

from ..model.image import FLAVOR_DOCA, FLAVOR_MLNX_OFED
from ..model.node import STACK_INBOX, STACK_NONE
from ..versions.ecosystems import compare_numeric
from . import facts
from .context import MLNX_STACKS, Ctx, series_of
from .emit import Outcome, finding, unknown

RULES = ("OFED-USERSPACE-NEWER-THAN-KERNEL", "MLNX-USERSPACE-ON-INBOX")
# The facts each rule needs present (absent: the rule does not apply) and the further facts it reads;
# silence with one of them unknown is reported as unknown (engine/contract.py).
REQUIRES = {
    "OFED-USERSPACE-NEWER-THAN-KERNEL": (facts.NODE_RDMA,),
    "MLNX-USERSPACE-ON-INBOX": (facts.NODE_RDMA,),
}
READS = {
    "OFED-USERSPACE-NEWER-THAN-KERNEL": (facts.NODE_RDMA,),
    "MLNX-USERSPACE-ON-INBOX": (facts.NODE_RDMA,),
}


def check(ctx: Ctx) -> Iterator[Outcome]:
    rdma = ctx.image.rdma
    reason = ctx.image_unknown("rdma.flavor")
    if reason and ctx.lib is not None and ctx.node.rdma.stack not in (None, STACK_NONE):
        rule = "MLNX-USERSPACE-ON-INBOX" if ctx.node.rdma.stack == STACK_INBOX else "OFED-USERSPACE-NEWER-THAN-KERNEL"
        yield unknown(
            rule,
            "whether the image's RDMA userspace is MLNX_OFED/DOCA or upstream rdma-core is unknown (" + reason + ")",
        )
        return
    if rdma.flavor not in (FLAVOR_MLNX_OFED, FLAVOR_DOCA):
        return
    stack = ctx.node.rdma.stack
    image_series, image_ev = ctx.image_ofed()
    flavor_words = "MLNX_OFED" if rdma.flavor == FLAVOR_MLNX_OFED else "DOCA-OFED"
    image_label = rdma.ofed_version or image_series or "unknown release"
    if stack is None:
        for rule in RULES:
            yield unknown(rule, f"the image carries {flavor_words} userspace; " + ctx.unknown_why("rdma.stack"))
        return
    if stack == STACK_NONE:
        return
    evidence = ([image_ev] if image_ev else []) + [
        ctx.node_ev("rdma.stack", stack),
        ctx.node_ev("rdma.ofed_version", ctx.node.rdma.ofed_version),
    ]
    if stack == STACK_INBOX:
        yield finding(
            ctx.matrix, "MLNX-USERSPACE-ON-INBOX", evidence, image_flavor=flavor_words, image_ofed=image_label
        )
        return
    if stack not in MLNX_STACKS:
        return
    rule = "OFED-USERSPACE-NEWER-THAN-KERNEL"
    node_series = series_of(ctx.node.rdma.ofed_version)
    if image_series is None:
        yield unknown(
            rule,
            f"the image's {flavor_words} release could not be read (no ofed_info and no "
            "MLNX package version with a release suffix)",
        )
        return
    if node_series is None:
        yield unknown(rule, ctx.unknown_why("rdma.ofed_version"))
        return
    if compare_numeric(image_series, node_series) > 0:
        yield finding(
            ctx.matrix,
            rule,
            evidence,
            image_flavor=flavor_words,
            image_ofed=image_label,
            node_stack=stack,
            node_ofed=ctx.node.rdma.ofed_version,
        )
