"""UCX_TLS (image Env or the job's env) that leaves UCX no transport to another node.

UCX_TLS is an allow-list unless it starts with '^' (then it excludes); the names are transports or aliases
(openucx/ucx docs/source/faq.md "List of main transports and aliases"). An allow-list made only of
shared-memory, loopback and GPU-copy transports reaches no other node: ucp_ep_create to a remote rank fails
with "Destination is unreachable" (the UCX maintainers in open-mpi/ompi#9836).
"""

from __future__ import annotations

from ..model.report import Evidence
from .context import Ctx
from .emit import finding

RULES = ("UCX-TLS-NO-INTERNODE",)

# Transports and aliases that only move data within one node (or one process, or to/from a GPU).
INTRA_NODE = frozenset({
    "self", "sm", "shm", "posix", "sysv", "mm", "cma", "knem", "xpmem",
    "cuda", "cuda_copy", "cuda_ipc", "gdr_copy", "rocm", "rocm_copy", "rocm_ipc", "rocm_gdr", "ze_copy", "ze_ipc",
})


def _names(value: str) -> list[str]:
    # a transport may carry a suffix such as ":aux" (rc_x:aux in newer UCX); the name before it is what counts
    return [n.strip().split(":", 1)[0].lower() for n in value.split(",") if n.strip()]


def check(ctx: Ctx):
    s = ctx.setting("UCX_TLS")
    if s is None or ctx.image.ucx is None:
        return
    value = s.value.strip()
    if not value or value.startswith("^"):
        return  # unset or an exclusion list: UCX still picks from the rest
    names = _names(value)
    if not names or any(n not in INTRA_NODE for n in names):
        return  # some transport (rc, ud, dc, tcp, all, or one this list does not know) may reach other nodes
    evidence = [s.evidence, Evidence("image.ucx.version", ctx.image.ucx.version, ctx.image.ucx.path, ctx.image.ucx.layer)]
    yield finding(ctx.matrix, "UCX-TLS-NO-INTERNODE", evidence, setting=s.label, where=s.source_words)
