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

from ..knowledge.package_names import first_package
from ..model.image import Ucx
from ..model.report import Evidence
from ..versions import ranges
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, assuming, decided, finding, unknown

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


MT = "UCX-NO-THREAD-MULTIPLE"
_MT_THRESHOLDS = {"ucx_mt_diag_first", "ucx_mt_define_when_enabled", "ompi_pml_ucx_mt_deselect_first"}
_APP_WORDS = "the application initialises MPI with MPI_Init_thread(MPI_THREAD_MULTIPLE)"
_DEFAULT_WORDS = (
    "this UCX, built from source, was configured without --enable-mt (configure's default in every release; "
    "`ucx_info -b | grep ENABLE_MT` shows it)"
)
_MPI_LAUNCHERS = ("mpirun", "mpiexec", "orterun", "prterun")


def _open_mpi(ctx: Ctx) -> tuple[str, str | None] | None:
    """(what shows Open MPI, its release) from the image's packages, HPC-X (which bundles it) or an MPI launch."""
    row = ctx.matrix.need("rdma_consumers", consumer="openmpi")
    package = first_package(row, ctx.image)
    if package is not None:
        return f"package {package.name} {package.version}", package.version.split(":")[-1].split("-")[0]
    if ctx.image.hpcx is not None:
        return f"HPC-X {ctx.image.hpcx.version or ''}".strip(), None
    if ctx.job is not None and ctx.job.kind.lower() in _MPI_LAUNCHERS:
        return f"{ctx.job.kind} launch ({ctx.job.where})", None
    return None


def _multi_thread(ctx: Ctx, ucx: Ucx) -> tuple[bool | None, str]:
    """Whether this UCX build supports UCS_THREAD_MODE_MULTI, and what in its files says so."""
    where = ", ".join(ucx.build_read_from) or "its files"
    if ucx.no_mt_message:
        return (
            False,
            f"{where} holds 'multi-threaded worker is requested, but library is built without multi-thread support'",
        )
    diag = str(ctx.matrix.threshold("ucx_mt_diag_first"))
    if ucx.no_mt_message is False and ranges.at_least(ucx.version, diag):
        return True, f"UCX {ucx.version}'s libucp lacks the message a build without --enable-mt has from {diag}"
    define = str(ctx.matrix.threshold("ucx_mt_define_when_enabled"))
    if ucx.info_enable_mt is not None and ranges.at_least(ucx.version, define):
        return (
            ucx.info_enable_mt,
            f"ucx_info's build configuration {'names' if ucx.info_enable_mt else 'lacks'} ENABLE_MT",
        )
    if not ucx.build_read_from:
        return None, "its libucp and ucx_info were not read"
    return None, f"UCX {ucx.version or '(version unknown)'} has no ucx_info read and no libucp string that tells"


@rule(MT, requires=(facts.UCX,), reads=(facts.PACKAGES,), needs={"thresholds": _MT_THRESHOLDS})
def ucx_no_thread_multiple(ctx: Ctx) -> Iterator[Outcome]:
    """Open MPI's UCX PML with MPI_THREAD_MULTIPLE needs a UCP worker in UCS_THREAD_MODE_MULTI, which only a UCX
    configured with --enable-mt gives (openucx/ucx ucp_worker.c; ompi pml_ucx.c mca_pml_ucx_init)."""
    ucx = ctx.image.ucx
    if ucx is None:
        return  # no UCX: the rule does not apply; unknown is asked by the contract
    ompi = _open_mpi(ctx)
    if ompi is None:
        if ctx.image.unknown_reason("packages"):
            return  # whether Open MPI is there is not known: the engine asks image.packages (READS)
        yield decided(MT, "no Open MPI in the image or its launch: no UCX PML asks for MPI_THREAD_MULTIPLE")
        return
    shows, ompi_version = ompi
    mt, how = _multi_thread(ctx, ucx)
    if mt:
        yield decided(MT, f"UCX was built with thread support ({how})")
        return
    self_built = ucx.origin in ("ucx.pc", "library")
    if mt is None and not self_built:
        yield unknown(
            MT,
            f"whether the image's UCX {ucx.version or ''} ({ucx.origin}) was configured with --enable-mt, which Open "
            f"MPI's UCX PML needs for MPI_THREAD_MULTIPLE, is not known ({how}); `ucx_info -b | grep ENABLE_MT` shows it",
            # the finding it would become assumes the application's thread level, which no input shows
            ("image.ucx.build", "job.mpi_thread_level"),
        )
        return
    deselect = str(ctx.matrix.threshold("ompi_pml_ucx_mt_deselect_first"))
    newer = ranges.at_least(ompi_version, deselect) if ompi_version else None
    found = finding(
        ctx.matrix,
        MT,
        [Evidence("image.ucx.build", how, ucx.location), Evidence("image.openmpi", shows, None)],
        variant={True: "deselected", False: "init_fails"}.get(newer) if newer is not None else None,
        ucx=ucx.version or "(version unknown)",
        how=how,
        ompi=shows,
    )
    if mt is None:
        found = assuming(found, _DEFAULT_WORDS, "image.ucx.build")
    yield assuming(found, _APP_WORDS, "job.mpi_thread_level")


RULES, NEEDS, REQUIRES, READS, check = family(ucx_built_for_exp_verbs, ucx_no_thread_multiple)
