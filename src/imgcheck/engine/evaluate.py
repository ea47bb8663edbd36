"""One (image, node) evaluation: every rule family in turn, findings and unknowns collected."""

from __future__ import annotations

from dataclasses import dataclass

from ..matrix import Matrix
from ..model.image import ImageFacts
from ..model.node import NodeFacts
from ..model.report import Finding, Unknown
from . import cuda, dmabuf, env_traps, gdr, limits, ofed, rdma_userspace, ucx
from .context import Ctx

FAMILIES = (rdma_userspace, gdr, dmabuf, ofed, cuda, limits, env_traps, ucx)
RULE_IDS: tuple[str, ...] = tuple(rule for family in FAMILIES for rule in family.RULES)
# Matrix rows the engine looks up by key; `imgcheck matrix validate` checks they exist.
REQUIRED_ROWS: dict[str, set] = {
    "rules": set(RULE_IDS),
    "thresholds": {"uverbs_abi_min", "uverbs_abi_max", "mlx5_uverbs_abi", "nccl_ib_retry_cnt_max",
                   "nccl_ib_timeout_min", "nccl_ib_timeout_max", "memlock_reported_failing_kib",
                   "cumem_old_driver_below"},
    "nccl_features": {"relaxed_ordering_iova2", "dmabuf", "dmabuf_no_backoff", "cumem_default",
                      "gdr_module_sysfs_check"},
    "kernel_rdma_features": {("dmabuf_mr", "inbox"), ("dmabuf_mr", "mlnx_ofed"), ("optional_mr_access", "inbox"),
                             ("optional_mr_access", "mlnx_ofed")},
}


@dataclass(frozen=True)
class Evaluation:
    findings: tuple[Finding, ...]
    unknowns: tuple[Unknown, ...]


def evaluate(image: ImageFacts, node: NodeFacts, matrix: Matrix) -> Evaluation:
    """Findings and unknowns for one node. Pure: same facts and matrix, same result."""
    ctx = Ctx(image, node, matrix)
    findings: list[Finding] = []
    unknowns: list[Unknown] = []
    for family in FAMILIES:
        for item in family.check(ctx):
            (findings if isinstance(item, Finding) else unknowns).append(item)
    return Evaluation(tuple(findings), tuple(unknowns))
