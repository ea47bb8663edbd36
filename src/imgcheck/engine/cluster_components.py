"""The cluster's NVIDIA GPU components against the node's GPUs: a device plugin release that cannot advertise a GPU.

The device plugin (alone, or deployed by the GPU Operator) asks NVML about every GPU before it registers
nvidia.com/gpu with the kubelet. A release that fails on a GPU's answer advertises nothing, so every GPU pod on the
node stays Pending. Which releases fail on which GPUs is catalogs/k8s_device_plugin_fixes.json (generated from the
plugin's tree: the first release of each line that has the fix); which plugin a GPU Operator release deploys is
catalogs/gpu_operator_components.json (its chart's values.yaml per tag).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ..job.model import RUNTIME_KUBERNETES
from ..versions.ecosystems import numeric_tuple
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding, unknown

RULE = "CLUSTER-DEVICE-PLUGIN-GPU-UNSUPPORTED"
PLUGIN, OPERATOR = "k8s-device-plugin", "gpu-operator"
ALLOCATION = "allocation"


def is_fixed(version: str, fixed_in: list[str]) -> bool | None:
    """Whether plugin `version` has a fix first released as `fixed_in` (the first release of each line that has it):
    same line, at or after that release; a later line than every listed one, yes; an earlier line, no."""
    v = numeric_tuple(version.lstrip("v"))
    firsts = sorted(numeric_tuple(f.lstrip("v")) for f in fixed_in)
    if len(v) < 2 or not firsts:
        return None
    for first in firsts:
        if v[:2] == first[:2]:
            return v >= first
    return v[:2] > firsts[-1][:2] if v[:2] > firsts[0][:2] else False


def plugin_version(ctx: Ctx) -> tuple[str | None, str, str]:
    """(the device plugin release, the node fact it came from, how): stated, or the default of the GPU Operator."""
    comps = ctx.node.cluster_components or {}
    if comps.get(PLUGIN):
        return comps[PLUGIN], f"cluster_components.{PLUGIN}", "stated"
    operator = comps.get(OPERATOR)
    if operator:
        wanted = operator if operator.startswith("v") else "v" + operator
        row = ctx.matrix.row("gpu_operator_components", operator=wanted)
        if row is not None and row.get("device_plugin"):
            return str(row["device_plugin"]), f"cluster_components.{OPERATOR}", f"the default of GPU Operator {wanted}"
        return None, f"cluster_components.{OPERATOR}", f"GPU Operator {operator} is not in the catalog"
    return None, "cluster_components", "no k8s-device-plugin or gpu-operator version is given"


def _affected(ctx: Ctx) -> list[tuple[dict[str, Any], str]]:
    names = {g.name for g in ctx.node.gpu.gpus if g.name}
    out = []
    for row in ctx.matrix.rows("k8s_device_plugin_fixes"):
        if row["effect"] != ALLOCATION:
            continue
        out += [(row, name) for name in sorted(names) if name in row["gpus"]]
    return out


@rule(
    RULE,
    requires=(facts.GPU_WORKLOAD,),
    reads=(facts.GPU_DRIVER, facts.CLUSTER_COMPONENTS),
    needs={"k8s_device_plugin_fixes": {"nvml_memory_not_supported"}},
)
def device_plugin_gpu_unsupported(ctx: Ctx) -> Iterator[Outcome]:
    if not ctx.node.gpu.gpus:
        return  # no GPU listed: whether one is there is the driver's question (the engine asks it)
    affected = _affected(ctx)
    if not affected:  # the node's facts decide first, whatever the image
        yield decided(RULE, "no device plugin release is known to fail on the node's GPUs")
        return
    if facts.GPU_WORKLOAD.state(ctx) is not facts.State.KNOWN:
        return  # a CPU image is not concerned; unknown: the engine asks, then assumes it uses CUDA
    version, fact, how = plugin_version(ctx)
    gpus = ", ".join(sorted({name for _, name in affected}))
    if version is None:
        yield unknown(
            RULE,
            f"the node has {gpus}, which device plugin releases before a fix cannot advertise; {how} "
            f"(node.{fact}: {ctx.node.unknown.get('cluster_components') or 'not stated'})",
        )
        return
    for row, name in affected:
        fixed = is_fixed(version, row["fixed_in"])
        if fixed is None:
            yield unknown(RULE, f"k8s-device-plugin {version} cannot be placed among the releases {row['fixed_in']}")
        elif not fixed:
            yield finding(
                ctx.matrix,
                RULE,
                [
                    ctx.node_ev("gpu.gpus.name", name),
                    ctx.node_ev(fact, version if how == "stated" else f"{version} ({how})"),
                ],
                gpu=name,
                plugin=version,
                how=how,
                fixed_in=", ".join(row["fixed_in"]),
                effect_words=row["mechanism"],
            )
            return


# ---------- the GPU Operator's own components' release defects ----------
COMPONENT_RULE = "CLUSTER-OPERATOR-COMPONENT-DEFECT"
DEFECTS = "gpu_operator_component_defects"
_IMAGE_TAG = re.compile(r"(?:^|/)(?P<name>[^/:@]+):(?P<tag>v\d+\.\d+\.\d+)(?:-[\w.]+)?$")


def component_version(ctx: Ctx, row: dict[str, Any]) -> tuple[str | None, str]:
    """(the component's release, how it is known): stated among the cluster components, the image being checked
    when it is the component's own image, or the default of the stated GPU Operator release."""
    name = row["component"]
    comps = ctx.node.cluster_components or {}
    if comps.get(name):
        return comps[name], f"node.cluster_components.{name}"
    m = _IMAGE_TAG.search(ctx.image.reference or "")
    if m and m["name"] == name:
        return m["tag"], f"the checked image {ctx.image.reference}"
    operator = comps.get(OPERATOR)
    if operator and row.get("operator_column"):
        wanted = operator if operator.startswith("v") else "v" + operator
        op_row = ctx.matrix.row("gpu_operator_components", operator=wanted)
        if op_row is not None and op_row.get(row["operator_column"]):
            return str(op_row[row["operator_column"]]), f"the default of GPU Operator {wanted}"
    return None, ""


def _component_condition(ctx: Ctx, cond: str) -> tuple[bool | None, str]:
    kind, _, value = cond.partition(":")
    if kind == "env":
        name, _, wanted = value.partition("=")
        got = ctx.setting(name)
        if got is None:
            return None, f"{name} in the component's environment (the operator sets it from its Helm values)"
        return got.value.strip().lower() == wanted.lower(), ""
    if kind == "mellanox_devices":
        devices = ctx.node.rdma.devices
        if any((d.driver or "").startswith(("mlx4", "mlx5")) or (d.name or "").startswith("mlx") for d in devices):
            return True, ""
        return (False, "") if facts.NODE_RDMA.state(ctx) is not facts.State.UNKNOWN else (None, "the node's NICs")
    return None, f"condition {cond} (not one this rule knows)"


@rule(
    COMPONENT_RULE,
    requires=(),
    reads=(
        facts.CLUSTER_COMPONENTS,
        facts.NODE_RDMA,
        facts.setting("GPU_DIRECT_RDMA_ENABLED", "USE_HOST_MOFED"),
    ),
)
def operator_component_defect(ctx: Ctx) -> Iterator[Outcome]:
    shown: list[tuple[dict[str, Any], str, str, list[str]]] = []
    asked: list[tuple[dict[str, Any], str, str, list[str]]] = []
    clear: list[str] = []
    for row in ctx.matrix.rows(DEFECTS):
        version, how = component_version(ctx, row)
        if version is None:
            continue
        if version not in row["affected"]:
            clear.append(f"{row['component']} {version}")
            continue
        states = [_component_condition(ctx, c) for c in row["conditions"]]
        if any(v is False for v, _ in states):
            clear.append(f"{row['component']} {version}")
            continue
        questions = [q for v, q in states if v is None]
        (asked if questions else shown).append((row, version, how, questions))
    for row, version, how, _ in shown:
        yield finding(
            ctx.matrix,
            COMPONENT_RULE,
            [ctx.node_ev("cluster_components", f"{row['component']} {version} ({how})")],
            component=row["component"],
            version=version,
            how=how,
            symptom=row["symptom"],
            defect=row["mechanism"],
            fixed_in=", ".join(row["fixed_in"]),
            row_fix=row["fix"],
        )
    for row, version, how, questions in asked:
        yield unknown(
            COMPONENT_RULE,
            f"{row['component']} {version} ({how}) has a known defect ({row['key']}: {row['symptom']}; fixed in "
            f"{', '.join(row['fixed_in'])}) when {', '.join(row['conditions'])}; the facts cannot show: "
            + "; ".join(questions),
        )
    if shown or asked:
        return
    if clear:
        yield decided(COMPONENT_RULE, f"no known release defect of {', '.join(clear)} applies")
    elif not _operator_node(ctx):
        yield decided(COMPONENT_RULE, "not a Kubernetes job, and no GPU Operator label or component on the node")
    else:
        yield unknown(
            COMPONENT_RULE,
            "the node is served by the GPU Operator, but which release of its components "
            f"({', '.join(sorted({r['component'] for r in ctx.matrix.rows(DEFECTS)}))}) runs is not known "
            f"(node.cluster_components: {ctx.node.unknown.get('cluster_components') or 'not stated'})",
            facts=("node.cluster_components",),
        )


def _operator_node(ctx: Ctx) -> bool:
    """Whether the GPU Operator may serve the node: a Kubernetes job, a stated component, or its node labels."""
    if ctx.node.cluster_components:
        return True
    if ctx.job is not None and ctx.job.runtime == RUNTIME_KUBERNETES:
        return True
    return any(k.startswith("nvidia.com/gpu.deploy.") for k in ctx.node.labels)


RULES, NEEDS, REQUIRES, READS, check = family(device_plugin_gpu_unsupported, operator_component_defect)
