"""Preconditions shared by the NCCL-over-RDMA rules: when a rule applies, when it is unknown, when it is moot."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator

from ..model.report import Unknown
from .context import Ctx
from .emit import Outcome, unknown


def nccl_over_rdma(ctx: Ctx, rule: str, need_gpu: bool = True, need_version: bool = True) -> list[Unknown] | None:
    """None if the rule can be decided; else a list with zero (not applicable) or one Unknown.

    Not applicable (no finding, no unknown) when the facts say the path cannot be used at all: the image has
    no libibverbs (RDMA-NO-LIBIBVERBS covers it), the node has no RDMA, the image is not a GPU image
    (a plain rdma-core image has no NCCL, and nobody expects NCCL findings for it), the image turns NCCL's IB
    transport off, or none of its providers drives the node's devices (those rules name the real problem).
    """
    if ctx.node_has_rdma is False:
        return []
    if ctx.lib is None:  # absent: RDMA-NO-LIBIBVERBS covers it; unknown: this rule cannot be decided either
        return [unknown(rule, ctx.lib_unknown)] if ctx.lib_unknown and ctx.gpu_image else []
    if ctx.nccl is None and (need_version or ctx.nccl_present is not True):
        # need_version=False: a rule that asks for the version itself, after the node facts that may decide it
        return [unknown(rule, ctx.nccl_unknown_reason())] if ctx.gpu_image else []
    if ctx.ib_disabled_by is not None or ctx.image_lacks_node_providers:
        return []  # the transport is off (ENV-DISABLES-IB) or exposes no device (RDMA-NO-MLX5-PROVIDER): it says so
    if ctx.node_has_rdma is None:
        return [unknown(rule, ctx.unknown_why("rdma.stack"))]
    if need_gpu and ctx.node_has_gpu is None:
        return [unknown(rule, ctx.unknown_why("gpu.driver_version"))]
    return None


def over_rdma(
    rule: str, need_gpu: bool = True, need_version: bool = True
) -> Callable[[Callable[[Ctx, str], Iterator[Outcome]]], Callable[[Ctx], Iterator[Outcome]]]:
    """Decorate a rule `fn(ctx, rule)` so it runs only when nccl_over_rdma lets it be decided."""

    def wrap(fn: Callable[[Ctx, str], Iterator[Outcome]]) -> Callable[[Ctx], Iterator[Outcome]]:
        @functools.wraps(fn)
        def run(ctx: Ctx) -> Iterator[Outcome]:
            gate = nccl_over_rdma(ctx, rule, need_gpu, need_version)
            if gate is not None:
                yield from gate
                return
            yield from fn(ctx, rule)

        return run

    return wrap
