"""One (image, node) evaluation: every rule family in turn, findings and unknowns collected."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import cast

from .. import knowledge
from ..job.model import JobFacts
from ..knowledge import cluster_workloads
from ..matrix import Matrix
from ..matrix.schema import RowKey
from ..model.image import ImageFacts
from ..model.node import NodeFacts
from ..model.report import Finding, Unknown, severity_rank
from . import (
    cluster_components,
    container_toolkit,
    cuda,
    cuda_compat,
    cuda_require,
    dmabuf,
    efa,
    efa_gdr,
    elf_needs,
    env_buffers,
    env_devices,
    env_nccl_params,
    env_node_names,
    env_preload,
    env_traps,
    env_upstream_params,
    env_values,
    env_visible_devices,
    fabric_manager,
    fleet_compare,
    gdr,
    gdrcopy,
    glibc,
    gpu_injection,
    gpu_registrars,
    hypothesis,
    job_launch,
    launch_gpu_request,
    launcher_gpu,
    limits,
    mig,
    mig_launch,
    nccl_arch,
    nccl_copies,
    nccl_files,
    nccl_releases,
    net_plugin,
    node_capability,
    node_cgroup,
    node_driver,
    node_gpu_pv,
    node_kmod,
    node_netns,
    node_only,
    node_state,
    nvshmem,
    ofed,
    ofi_build,
    platform,
    rdma_userspace,
    registration,
    release_behaviour,
    runtime_injection,
    ucx,
    ucx_build,
    ucx_gid,
    upstream_releases,
    vendor_issues,
)
from .context import Ctx
from .contract import settle
from .facts import State

# The registry. A rule family is a module with RULES (its rule ids), check(ctx) and, optionally, NEEDS
# (matrix rows it looks up by key, {table: {key, ...}}). Registering a module here is all it takes:
# RULE_IDS and REQUIRED_ROWS (which `imgcheck matrix validate` checks exist) follow from it.
FAMILIES = (
    platform,
    glibc,
    elf_needs,
    rdma_userspace,
    gdr,
    gpu_registrars,
    nvshmem,
    dmabuf,
    ofed,
    cuda,
    cuda_require,
    cuda_compat,
    limits,
    env_traps,
    env_buffers,
    env_devices,
    env_visible_devices,
    env_node_names,
    env_nccl_params,
    env_values,
    env_preload,
    nccl_copies,
    nccl_releases,
    release_behaviour,
    nccl_files,
    nccl_arch,
    registration,
    ucx,
    ucx_build,
    ucx_gid,
    node_only,
    node_driver,
    node_kmod,
    node_gpu_pv,
    runtime_injection,
    node_capability,
    gdrcopy,
    fabric_manager,
    cluster_components,
    container_toolkit,
    mig,
    mig_launch,
    node_state,
    node_netns,
    node_cgroup,
    job_launch,
    gpu_injection,
    launcher_gpu,
    launch_gpu_request,
    efa,
    efa_gdr,
    net_plugin,
    ofi_build,
    env_upstream_params,
    upstream_releases,
    vendor_issues,
)
NODE_FAMILIES = (
    node_only,
    node_driver,
    node_kmod,
    node_gpu_pv,
    node_capability,
    gdrcopy,
    fabric_manager,
    cluster_components,
    container_toolkit,
    vendor_issues,
    efa_gdr,
    node_state,
)  # what `imgcheck node check` runs: rules that need node facts only
# Every module that owns rule ids: FAMILIES plus rule modules run another way (fleet_compare runs over all nodes at
# once, in report.evaluate_fleet, not per (image, node)).
REGISTERED = FAMILIES + (fleet_compare,)


def rule_ids(families: Iterable[ModuleType]) -> tuple[str, ...]:
    ids = tuple(rule for family in families for rule in family.RULES)
    if len(set(ids)) != len(ids):
        raise ValueError(f"a rule id is registered twice: {sorted(r for r in ids if ids.count(r) > 1)}")
    return ids


def required_rows(families: Iterable[ModuleType], ids: tuple[str, ...]) -> dict[str, set[RowKey]]:
    needs: dict[str, set[RowKey]] = {"rules": set(ids)}
    for part in (knowledge.NEEDS, *(getattr(family, "NEEDS", {}) for family in families)):
        for table, keys in part.items():
            needs.setdefault(table, set()).update(cast("Iterable[RowKey]", keys))  # NEEDS: {table: {key, ...}}
    return needs


RULE_IDS: tuple[str, ...] = rule_ids(REGISTERED)
# Matrix rows the engine looks up by key; `imgcheck matrix validate` checks they exist.
REQUIRED_ROWS: dict[str, set[RowKey]] = required_rows(REGISTERED, RULE_IDS)


@dataclass(frozen=True)
class Evaluation:
    findings: tuple[Finding, ...]
    unknowns: tuple[Unknown, ...]


def evaluate(
    image: ImageFacts,
    node: NodeFacts,
    matrix: Matrix,
    families: Iterable[ModuleType] = FAMILIES,
    job: JobFacts | None = None,
) -> Evaluation:
    """Findings and unknowns for one node (and one launch-spec container, job). Pure: same facts and matrix, same result."""
    families = tuple(families)
    if cluster_workloads.infrastructure(matrix, image.reference, job):
        # an operator's own DaemonSet/Deployment runs no job's NCCL or RDMA: only the node's component rules apply
        families = tuple(f for f in families if f in NODE_FAMILIES or f is launch_gpu_request)

    def run(image: ImageFacts, node: NodeFacts, job: JobFacts | None) -> tuple[list[Finding], list[Unknown]]:
        return _rules(image, node, matrix, families, job)

    findings, unknowns = run(image, node, job)
    # a rule undecided only because a component's presence is unknown: decide it under "present" (conditionally)
    findings, unknowns = hypothesis.conditional(image, node, job, matrix, families, findings, unknowns, run)
    return Evaluation(tuple(findings), tuple(unknowns))


def _rules(
    image: ImageFacts, node: NodeFacts, matrix: Matrix, families: tuple[ModuleType, ...], job: JobFacts | None
) -> tuple[list[Finding], list[Unknown]]:
    ctx = Ctx(image, node, matrix, job)
    findings: list[Finding] = []
    unknowns: list[Unknown] = []
    states: dict[str, State] = {}  # each fact's state, asked once per evaluation
    for family in families:
        applies = getattr(family, "applies", None)
        if applies is not None and not applies(ctx):
            continue  # e.g. the launch-spec rules without a spec
        for item in settle(family, ctx, states):
            if isinstance(item, Finding):
                findings.append(item)
            else:
                unknowns.append(dataclasses.replace(item, severity=worst_severity(matrix, item.rule)))
    return findings, unknowns


def worst_severity(matrix: Matrix, rule_id: str) -> str | None:
    """The worst severity a rule can give: its row's, or a variant's (None: a rule without a row)."""
    row = matrix.row("rules", id=rule_id)
    if row is None:
        return None
    found: list[str] = [row["severity"], *(v["severity"] for v in row.get("variants", {}).values() if "severity" in v)]
    return min(found, key=severity_rank)


def evaluate_node(image: ImageFacts, node: NodeFacts, matrix: Matrix) -> Evaluation:
    """The node-only rules for one node (`imgcheck node check`); `image` is node_only.NODE_ONLY_IMAGE."""
    return evaluate(image, node, matrix, families=NODE_FAMILIES)
