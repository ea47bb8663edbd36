"""Rules about the image's RDMA userspace itself and the node's uverbs ABI (F6, F7, and the RO question F1)."""

from __future__ import annotations

from collections.abc import Iterator

from ..model.report import Evidence
from . import facts
from .context import Ctx
from .emit import Outcome, finding, unknown

RULES = ("RDMA-NO-LIBIBVERBS", "RDMA-PABI-MISMATCH", "RDMA-NO-MLX5-PROVIDER", "UVERBS-ABI-RANGE", "RO-MASKED-SAFE")
# The facts each rule needs present (absent: the rule does not apply) and the further facts it reads;
# silence with one of them unknown is reported as unknown (engine/contract.py).
REQUIRES = {
    "RDMA-NO-LIBIBVERBS": (facts.NODE_RDMA,),
    "RDMA-PABI-MISMATCH": (facts.LIBIBVERBS, facts.NODE_RDMA),
    "RDMA-NO-MLX5-PROVIDER": (facts.LIBIBVERBS, facts.NODE_RDMA),
    "UVERBS-ABI-RANGE": (facts.LIBIBVERBS, facts.NODE_RDMA),
    "RO-MASKED-SAFE": (facts.NCCL, facts.LIBIBVERBS, facts.NODE_RDMA),
}
READS = {
    "RDMA-NO-LIBIBVERBS": (facts.NODE_RDMA, facts.LIBIBVERBS, facts.NCCL, facts.CUDA),
    "RDMA-PABI-MISMATCH": (facts.LIBIBVERBS, facts.NODE_RDMA, facts.PROVIDERS),
    "RDMA-NO-MLX5-PROVIDER": (facts.LIBIBVERBS, facts.NODE_RDMA, facts.PROVIDERS),
    "UVERBS-ABI-RANGE": (facts.LIBIBVERBS, facts.NODE_RDMA),
    "RO-MASKED-SAFE": (facts.NCCL, facts.LIBIBVERBS, facts.NODE_RDMA),
}
# Matrix rows this family looks up by key (evaluate.REQUIRED_ROWS merges them; matrix validate checks them).
NEEDS = {
    "thresholds": {"uverbs_abi_min", "uverbs_abi_max", "mlx5_uverbs_abi"},
    "nccl_features": {"relaxed_ordering_iova2"},
    "kernel_rdma_features": {("optional_mr_access", "inbox"), ("optional_mr_access", "mlnx_ofed")},
    "rdma_core_functions": {"ibv_reg_mr_iova2"},
}


def check(ctx: Ctx) -> Iterator[Outcome]:
    if ctx.lib is None:
        yield from _no_libibverbs(ctx)
        return  # without libibverbs no other RDMA rule applies: NCCL never reaches the verbs layer
    if ctx.node_has_rdma is False:
        return
    yield from _pabi(ctx)
    yield from _mlx5_provider(ctx)
    yield from _uverbs_abi(ctx)
    yield from _relaxed_ordering(ctx)


def _no_libibverbs(ctx: Ctx) -> Iterator[Outcome]:
    rule = "RDMA-NO-LIBIBVERBS"
    if ctx.lib_unknown:
        if ctx.node_has_rdma is not False:
            yield unknown(rule, ctx.lib_unknown)
        return
    if ctx.node_has_rdma is None:
        yield unknown(
            rule, "the image has no libibverbs; whether that matters depends on " + ctx.unknown_why("rdma.stack")
        )
        return
    if ctx.node_has_rdma:
        yield finding(
            ctx.matrix,
            rule,
            [
                Evidence("image.rdma.libibverbs", None),
                ctx.node_ev("rdma.stack", ctx.node.rdma.stack),
                ctx.node_ev("rdma.devices", ", ".join(d.name or "?" for d in ctx.node.rdma.devices) or None),
            ],
        )


def _pabi(ctx: Ctx) -> Iterator[Outcome]:
    rule = "RDMA-PABI-MISMATCH"
    lib = ctx.lib
    assert lib is not None  # check() returns before this without libibverbs
    if lib.private_abi is None:  # not derived from the release name: a mixed build is what this rule looks for
        yield unknown(rule, f"the private ABI (IBVERBS_PRIVATE_N) of {lib.path or 'the libibverbs'} could not be read")
        return
    used = ctx.node_providers()
    mismatched = [
        p
        for p in ctx.image.rdma.providers
        if (p.pabi is not None and p.pabi != lib.private_abi)
        or (p.private_abi_needed is not None and p.private_abi_needed != lib.private_abi)
    ]
    others = []
    for p in mismatched:
        relevant = p.name in used if used is not None else p.name == "mlx5"
        if not relevant:
            others.append(p)
            continue
        # libibverbs asks for lib<name>-rdmav<its PABI>.so: first in its provider directory, then on the loader's
        # search path; the warning reports the last attempt (rdma-core libibverbs/dynamic_driver.c load_driver).
        # A wrong-PABI file fails the first attempt (missing, or IBVERBS_PRIVATE_N not found), the bare name the second.
        expected = f"lib{p.name}-rdmav{lib.private_abi}.so"
        expected_path = expected
        dlerror = f"{expected}: cannot open shared object file: No such file or directory"
        yield finding(
            ctx.matrix,
            rule,
            [
                ctx.lib_evidence("private_abi", lib.private_abi),
                Evidence.member("image.rdma.providers", p.name, "pabi", p.pabi, p.location),
                Evidence.member("image.rdma.providers", p.name, "private_abi_needed", p.private_abi_needed, p.location),
            ],
            provider=p.name,
            expected_file=expected_path,
            dlerror=dlerror,
            libibverbs=lib.version or "(version unknown)",
            private_abi=lib.private_abi,
            provider_path=p.path,
            provider_pabi=p.pabi if p.pabi is not None and p.pabi != lib.private_abi else p.private_abi_needed,
        )
    if others:
        names = ", ".join(p.name for p in others)
        yield finding(
            ctx.matrix,
            rule,
            [ctx.lib_evidence("private_abi", lib.private_abi)]
            + [Evidence.member("image.rdma.providers", p.name, "pabi", p.pabi, p.location) for p in others],
            variant="other-provider",
            provider=names,
            libibverbs=lib.version or "(version unknown)",
            private_abi=lib.private_abi,
            provider_path=", ".join(p.path for p in others),
            provider_pabi=", ".join(
                sorted({str(p.pabi if p.pabi is not None else p.private_abi_needed) for p in others})
            ),
            expected_file=f"lib<name>-rdmav{lib.private_abi}.so",
            dlerror="cannot open shared object file",
        )


def _mlx5_provider(ctx: Ctx) -> Iterator[Outcome]:
    lib = ctx.lib
    assert lib is not None  # check() returns before this without libibverbs
    rule = "RDMA-NO-MLX5-PROVIDER"
    if any(p.name == "mlx5" for p in ctx.image.rdma.providers):
        return
    if reason := ctx.image_unknown("rdma.providers"):
        if ctx.node_uses_mlx5 is not False:
            yield unknown(rule, "whether the image has an mlx5 provider is unknown (" + reason + ")")
        return
    if ctx.node_uses_mlx5 is None:
        yield unknown(
            rule,
            "the image has no mlx5 provider; whether the node needs one depends on " + ctx.unknown_why("rdma.devices"),
        )
        return
    if ctx.node_uses_mlx5:
        yield finding(
            ctx.matrix,
            rule,
            [
                ctx.lib_evidence("version", lib.version),
                Evidence("image.rdma.providers", ", ".join(p.name for p in ctx.image.rdma.providers) or None),
                ctx.node_ev("rdma.devices", ", ".join(d.name or "?" for d in ctx.node.rdma.devices) or None),
                ctx.node_ev("rdma.stack", ctx.node.rdma.stack),
            ],
            private_abi=lib.private_abi if lib.private_abi is not None else "N",
        )


def _uverbs_abi(ctx: Ctx) -> Iterator[Outcome]:
    rule = "UVERBS-ABI-RANGE"
    lo, hi = ctx.matrix.threshold("uverbs_abi_min"), ctx.matrix.threshold("uverbs_abi_max")
    abi = ctx.node.rdma.uverbs_abi
    if abi is None:
        yield unknown(rule, ctx.unknown_why("rdma.uverbs_abi"))
    elif not lo <= abi <= hi:
        yield finding(ctx.matrix, rule, [ctx.node_ev("rdma.uverbs_abi", abi)], abi=abi, abi_min=lo, abi_max=hi)
    mlx5_abi = ctx.matrix.threshold("mlx5_uverbs_abi")
    for dev in ctx.node.rdma.devices:
        if ctx._provider_of(dev) == "mlx5" and dev.uverbs_abi is not None and dev.uverbs_abi != mlx5_abi:
            yield finding(
                ctx.matrix,
                rule,
                [ctx.node_ev(f"rdma.devices.{dev.name}.uverbs_abi", dev.uverbs_abi)],
                variant="mlx5-device",
                abi=dev.uverbs_abi,
                abi_min=mlx5_abi,
                abi_max=mlx5_abi,
                device=dev.name,
            )


def _relaxed_ordering(ctx: Ctx) -> Iterator[Outcome]:
    rule = "RO-MASKED-SAFE"
    nccl = ctx.nccl
    if nccl is None:
        return  # an info note about NCCL's RO request only makes sense when NCCL is known
    newer = ctx.nccl_at_least("relaxed_ordering_iova2")
    if not newer:
        return
    lib = ctx.lib
    assert lib is not None  # check() returns before this without libibverbs
    ro = ctx.setting("NCCL_IB_PCI_RELAXED_ORDERING")
    iova2 = ctx.lib_has("ibv_reg_mr_iova2")
    evidence = ctx.nccl_evidence() + [ctx.lib_evidence("has_reg_mr_iova2", iova2)]
    if ro is not None and ro.as_int() not in (None, 1, 2):
        yield finding(ctx.matrix, rule, evidence + [ro.evidence], variant="ro-disabled", setting=ro.label)
        return
    if iova2 is None:
        return  # an info note; nothing to say when the image's libibverbs exports are unknown
    if not iova2:
        yield finding(ctx.matrix, rule, evidence, variant="no-iova2", libibverbs=lib.version or "(version unknown)")
        return
    ok, why = ctx.node_has_feature("optional_mr_access")
    if ok is None:
        note = "the node's kernel stack is unknown; either way the flag is safe"
    elif ok:
        note = f"{why}: the kernel advertises the capability and accepts the flag"
    else:
        note = f"{why}: the kernel does not advertise the capability, so libibverbs clears the flag"
    yield finding(
        ctx.matrix,
        rule,
        evidence + ctx.stack_evidence(),
        nccl=nccl.version,
        libibverbs=lib.version or "(version unknown)",
        node_stack_note=note,
    )
