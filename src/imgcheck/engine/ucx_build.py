"""How the image's UCX was built, against the verbs library it will run on.

UCX up to 1.13 could be configured against MLNX_OFED's legacy libibverbs with its experimental verbs
(verbs_exp.h: ibv_exp_query_device, ibv_exp_create_qp, ibv_exp_reg_mr, ...; src/uct/ib/configure.m4
AC_CHECK_DECLS). Those calls are inline functions that go through the legacy library's extended context; on an
rdma-core libibverbs (upstream, or MLNX_OFED 5.x and later, which ship rdma-core) the context has no experimental
ops and every call returns ENOSYS (38): "ibv_exp_query_device(mlx5_0) returned 38" and the accelerated IB
transports are gone. UCX 1.14.0 removed that support (openucx/ucx NEWS: "Removed support for accelerated IB
transports over legacy experimental verbs").
"""

from __future__ import annotations

from collections.abc import Iterator

from ..model.report import Evidence
from ..versions import ranges
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding, unknown

RULE = "UCX-BUILT-FOR-EXP-VERBS"


@rule(RULE, requires=(facts.UCX, facts.LIBIBVERBS), needs={"thresholds": {"ucx_exp_verbs_removed"}})
def ucx_built_for_exp_verbs(ctx: Ctx) -> Iterator[Outcome]:
    ucx = ctx.image.ucx
    if ucx is None:
        return  # no UCX: the rule does not apply; UCX unknown is asked by the contract (requires facts.UCX)
    removed = str(ctx.matrix.threshold("ucx_exp_verbs_removed"))
    if ranges.at_least(ucx.version, removed):
        yield decided(RULE, f"UCX {ucx.version}: releases from {removed} have no experimental-verbs build")
        return
    if not ucx.modules:
        yield unknown(
            RULE,
            f"UCX {ucx.version or '(version unknown)'}'s InfiniBand transport modules (libuct_ib*.so) were not found "
            f"or not read: were they built for MLNX_OFED's experimental verbs (possible before {removed})?",
            ("image.ucx.modules",),
        )
        return
    unread = [m for m in ucx.modules if m.exp_verbs is None]
    built = [m for m in ucx.modules if m.exp_verbs]
    if not built:
        if unread:
            yield unknown(RULE, f"UCX module {unread[0].name} was read without its strings (facts from an older read)")
        else:
            yield decided(RULE, "no UCX IB module names an experimental verb: it was built against rdma-core")
        return
    lib = ctx.lib
    if lib is None:
        return  # no libibverbs in the image: RDMA-NO-LIBIBVERBS
    if lib.private_abi is None and not lib.symbol_versions:
        yield unknown(RULE, "the image's libibverbs symbol versions were not read: rdma-core or legacy MLNX is unknown")
        return
    if lib.private_abi is None:
        yield decided(RULE, "the image's libibverbs defines no IBVERBS_PRIVATE_N: a legacy (pre-rdma-core) library")
        return
    module = built[0]
    verbs = sorted({v for m in built for v in m.exp_verbs or ()})
    evidence = [
        Evidence.member("image.ucx.modules", m.name, "exp_verbs", ", ".join(m.exp_verbs or ()), m.location)
        for m in built
    ] + [
        Evidence("image.ucx.version", ucx.version, ucx.location),
        ctx.lib_evidence("private_abi", f"IBVERBS_PRIVATE_{lib.private_abi}"),
        ctx.lib_evidence("path", lib.path),
    ]
    yield finding(
        ctx.matrix,
        RULE,
        evidence,
        module=module.name,
        verbs=", ".join(verbs),
        ucx=ucx.version or "of unknown version",
        rdma_core=lib.rdma_core or lib.version or "rdma-core",
    )


RULES, NEEDS, REQUIRES, READS, check = family(ucx_built_for_exp_verbs)
