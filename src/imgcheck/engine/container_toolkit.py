"""The NVIDIA Container Toolkit on the node: where it takes the driver from, CDI specs, and its fixed defects.

Every GPU container the toolkit sets up gets the host driver's user space (libcuda.so.1, libnvidia-ml.so.1, ...)
from the toolkit's driver root: `nvidia-container-cli.root` in config.toml ("/" unless set; the GPU Operator's
toolkit writes /run/nvidia/driver, where its driver container installs the driver). A root without the driver
fails every GPU container with libnvidia-container's "load library failed: libnvidia-ml.so.1". In CDI mode the
runtime injects what the CDI spec lists (nvidia-ctk cdi generate); with no spec the device request is unresolvable.
The toolkit's own defects are the rows of catalog container_toolkit_changes (its CHANGELOG, every release).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..knowledge.settings import IMAGE_ENV
from ..model.node import NodeFacts
from ..model.report import Evidence
from ..versions.ecosystems import numeric_tuple
from . import facts
from .cluster_components import OPERATOR, is_fixed
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding, unknown
from .node_only import node_only

DRIVER_ROOT = "NODE-CTK-DRIVER-ROOT"
CDI_NO_SPEC = "NODE-CTK-CDI-NO-SPEC"
FIXED = "NODE-CTK-FIXED-DEFECTS"
LEGACY_IMEX = "NODE-CTK-LEGACY-IMEX"
LEGACY = "legacy-imex"  # container_toolkit_changes rows of the legacy-image IMEX defect
_IMAGE = (facts.NCCL, facts.CUDA)
CDI_MODES = ("cdi",)
# conditions of container_toolkit_changes rows the node facts decide (the others are listed as "if ...")
_ASKED = {
    "cgroup2": "the host uses cgroup v2",
    "imex": "the job asks for IMEX channels (NVIDIA_IMEX_CHANNELS)",
    "nested": "the toolkit runs inside a container",
    LEGACY: f"the image is a legacy CUDA image without NVIDIA_IMEX_CHANNELS ({LEGACY_IMEX} decides)",
}
SHOWN = 6  # entries named in the finding; the rest are counted


def _gpu_job(ctx: Ctx, rule_id: str) -> Iterator[Outcome]:
    """Nothing when the image uses the GPU (or the check is of the node alone); else why the rule does not apply."""
    if node_only(ctx) or ctx.gpu_image:
        return
    if not (ctx.image.unknown_reason("nccl") or ctx.image.unknown_reason("cuda")):
        yield decided(rule_id, "the image does not use the GPU")


INSTALL_DIR = "hostPaths.driverInstallDir"


@rule(
    DRIVER_ROOT,
    reads=(*_IMAGE, facts.CTK_CONFIGS, facts.GPU_DRIVER),
    needs={"gpu_operator_driver_paths": {INSTALL_DIR}},
)
def driver_root(ctx: Ctx) -> Iterator[Outcome]:
    said = list(_gpu_job(ctx, DRIVER_ROOT))
    if said:
        yield from said
        return
    toolkit = ctx.node.container_toolkit
    if toolkit.configs is None:
        return  # the engine asks for the configs
    if not toolkit.configs:
        yield decided(DRIVER_ROOT, "no toolkit config.toml on the node: the toolkit's default root / is used")
        return
    driver_on_node = ctx.node.gpu.driver_version is not None or toolkit.operator_driver_root
    for config in toolkit.configs:
        if config.driver_found is not False:
            continue
        if not driver_on_node:
            yield decided(DRIVER_ROOT, "no NVIDIA driver is loaded on the node: the driver rules say so")
            return
        operator = config.driver_root in ("/", None) and toolkit.operator_driver_root
        ev = [
            ctx.node_ev("container_toolkit.configs", f"{config.path}: root = {config.driver_root}"),
            ctx.node_ev("container_toolkit.operator_driver_root", toolkit.operator_driver_root),
        ]
        install = ctx.matrix.need("gpu_operator_driver_paths", setting=INSTALL_DIR)
        yield finding(
            ctx.matrix,
            DRIVER_ROOT,
            ev,
            variant="operator" if operator else None,
            node=ctx.node.name,
            config=config.path,
            root=config.driver_root or "/",
            operator_root=str(install["default"]),
            since=str(install["first"]),
        )
        return
    if any(c.driver_found is None for c in toolkit.configs):
        yield unknown(
            DRIVER_ROOT,
            "whether libnvidia-ml.so.1 is under the toolkit's driver root (nvidia-container-cli.root) could not be read",
            (facts.CTK_CONFIGS.name,),
        )
        return
    roots = ", ".join(f"{c.path}: {c.driver_root}" for c in toolkit.configs)
    yield decided(DRIVER_ROOT, f"the driver is under every toolkit driver root ({roots})")


@rule(CDI_NO_SPEC, reads=(*_IMAGE, facts.CTK_CONFIGS, facts.CTK_CDI_SPECS))
def cdi_no_spec(ctx: Ctx) -> Iterator[Outcome]:
    said = list(_gpu_job(ctx, CDI_NO_SPEC))
    if said:
        yield from said
        return
    toolkit = ctx.node.container_toolkit
    if toolkit.configs is None:
        yield unknown(
            CDI_NO_SPEC,
            "which mode does the node's NVIDIA Container Toolkit run in (config.toml nvidia-container-runtime.mode; "
            "node.container_toolkit.configs)?",
            (facts.CTK_CONFIGS.name,),
        )
        return
    cdi = [c for c in toolkit.configs if c.mode in CDI_MODES]
    if not cdi:
        modes = ", ".join(f"{c.path}: {c.mode}" for c in toolkit.configs) or "no config.toml"
        yield decided(CDI_NO_SPEC, f"no toolkit config selects CDI mode ({modes})")
        return
    if toolkit.cdi_specs is None:
        yield unknown(
            CDI_NO_SPEC,
            f"{cdi[0].path} selects CDI mode: does the node have a CDI spec for nvidia.com/gpu (/etc/cdi, /var/run/cdi; "
            "node.container_toolkit.cdi_specs)?",
            (facts.CTK_CDI_SPECS.name,),
        )
        return
    if toolkit.cdi_specs:
        yield decided(CDI_NO_SPEC, f"CDI specs for nvidia.com/gpu: {', '.join(toolkit.cdi_specs)}")
        return
    ev = [
        ctx.node_ev("container_toolkit.configs", f"{cdi[0].path}: mode = {cdi[0].mode}"),
        ctx.node_ev("container_toolkit.cdi_specs", "none in /etc/cdi, /var/run/cdi"),
    ]
    yield finding(ctx.matrix, CDI_NO_SPEC, ev, node=ctx.node.name, config=cdi[0].path)


def _condition(node: NodeFacts, applies: str) -> bool | None:
    """Whether the node meets a row's condition (None: not decided by the node facts)."""
    toolkit = node.container_toolkit
    modes = {c.mode for c in toolkit.configs or ()}
    if applies == "injection":
        return True
    if applies == "mode:cdi":
        if toolkit.configs is None or "auto" in modes:
            return None  # auto picks CDI for CDI device requests (and on some releases by default)
        return bool(modes & set(CDI_MODES))
    if applies == "mode:csv":
        if node.gpu.l4t_release is not None or "csv" in modes:
            return True
        return False if node.gpu.gpus else None
    if applies == "mig":
        instances = node.mig.gpu_instances
        return None if instances is None else bool(instances)
    if applies == "wsl":
        return node.gpu.dxg_device
    if applies == "driver_root":
        if toolkit.configs is None:
            return None
        return toolkit.operator_driver_root is True or any(c.driver_root not in ("/", None) for c in toolkit.configs)
    return None


def _releases(value: object) -> list[object]:
    """A row's fixed_in list (null in the catalog: none)."""
    return list(value) if isinstance(value, list) else []


def _below(version: str, bound: str) -> bool:
    return numeric_tuple(version) < numeric_tuple(bound)


def _affected(version: str, row: dict[str, object]) -> bool:
    fixed = [str(f) for f in _releases(row["fixed_in"])]
    since = row["affected_from"]
    return bool(fixed) and is_fixed(version, fixed) is False and not (since and _below(version, str(since)))


@rule(
    FIXED,
    reads=(
        *_IMAGE,
        facts.CTK_INSTALLED,
        facts.CTK_VERSION,
        facts.CLUSTER_COMPONENTS,
        facts.CTK_CONFIGS,
        facts.MIG_INSTANCES,
    ),
    needs={"gpu_operator_components": set()},
)
def fixed_defects(ctx: Ctx) -> Iterator[Outcome]:
    said = list(_gpu_job(ctx, FIXED))
    if said:
        yield from said
        return
    toolkit = ctx.node.container_toolkit
    if toolkit.installed is False:
        yield decided(FIXED, "the NVIDIA Container Toolkit is not installed on the node")
        return
    version, version_ev, how = toolkit_release(ctx)
    if version is None:
        return  # the engine asks for the toolkit's release
    applies: list[dict[str, object]] = []
    maybe: list[str] = []
    for row in ctx.matrix.rows("container_toolkit_changes"):
        mine = toolkit.libnvidia_container_version if row["component"] == "libnvidia-container" else None
        if not _affected(mine or version, row):
            continue
        met = _condition(ctx.node, str(row["applies"]))
        if met:
            applies.append(row)
        elif met is None:
            maybe.append(_ASKED.get(str(row["applies"]), str(row["area"])))
    if not applies:
        extra = f" (more if {', '.join(sorted(set(maybe)))})" if maybe else ""
        yield decided(FIXED, f"no toolkit fix after {version} concerns what this node uses{extra}")
        return
    target = max((_first_for(version, r) for r in applies), key=numeric_tuple)
    shown = "; ".join(f"{_first_for(version, r)}: {r['entry']}" for r in applies[:SHOWN])
    more = len(applies) - SHOWN
    ev = [e for e in (version_ev,) if e is not None]
    if toolkit.libnvidia_container_version:
        ev.append(ctx.node_ev("container_toolkit.libnvidia_container_version", toolkit.libnvidia_container_version))
    yield finding(
        ctx.matrix,
        FIXED,
        ev,
        node=ctx.node.name,
        version=f"{version} ({how})" if how else version,
        count=len(applies),
        areas=", ".join(sorted({str(r["area"]) for r in applies})),
        entries=shown + (f"; and {more} more" if more > 0 else ""),
        target=target,
        conditional=(", and others if " + ", ".join(sorted(set(maybe)))) if maybe else "",
    )


TOOLKIT_IMAGE = "container-toolkit"  # the toolkit pod's image (nvcr.io/nvidia/k8s/container-toolkit) in status.images
_UPSTREAM_TAG = re.compile(r"^v?(\d+\.\d+\.\d+)")


def toolkit_release(ctx: Ctx) -> tuple[str | None, Evidence | None, str]:
    """(the node's toolkit release, its evidence, how it is known): the host's packages; else the toolkit pod's image
    among the node's status.images; else the default of the node's GPU Operator release (its chart's toolkit.version,
    catalog gpu_operator_components), which a site may override."""
    toolkit = ctx.node.container_toolkit
    if toolkit.toolkit_version:
        return toolkit.toolkit_version, ctx.node_ev("container_toolkit.toolkit_version", toolkit.toolkit_version), ""
    comps = ctx.node.cluster_components or {}
    for name, how in ((TOOLKIT_IMAGE, "the toolkit pod's image"), (OPERATOR, "")):
        tag = comps.get(name)
        if not tag:
            continue
        if name == OPERATOR:
            wanted = tag if tag.startswith("v") else "v" + tag
            row = ctx.matrix.row("gpu_operator_components", operator=wanted)
            tag = str(row["container_toolkit"]) if row and row.get("container_toolkit") else ""
            how = f"the default of GPU Operator {wanted}, unless its toolkit.version is overridden"
        m = _UPSTREAM_TAG.match(tag)
        if m:
            return m.group(1), ctx.node_ev(f"cluster_components.{name}", comps[name]), how
    return None, None, ""


def _first_for(version: str, row: dict[str, object]) -> str:
    """The release to upgrade to for this fix: the first of the node's line that has it, else the oldest newer one."""
    fixed = sorted((str(f) for f in _releases(row["fixed_in"])), key=numeric_tuple)
    line = numeric_tuple(version)[:2]
    same = [f for f in fixed if numeric_tuple(f)[:2] == line]
    newer = [f for f in fixed if numeric_tuple(f) > numeric_tuple(version)]
    return (same or newer or fixed)[0]


IMAGE_LEGACY = "CUDA_VERSION"  # the variable nvidia/cuda images set; "legacy" without NVIDIA_REQUIRE_CUDA
REQUIRE = "NVIDIA_REQUIRE_CUDA"
IMEX = "NVIDIA_IMEX_CHANNELS"


@rule(
    LEGACY_IMEX,
    reads=(
        facts.CTK_INSTALLED,
        facts.CTK_VERSION,
        facts.CLUSTER_COMPONENTS,
        *facts.each_setting(IMAGE_LEGACY, REQUIRE, IMEX),
    ),
    needs={"container_toolkit_changes": set(), "gpu_operator_components": set()},
)
def legacy_imex(ctx: Ctx) -> Iterator[Outcome]:
    """Toolkit 1.17.0 up to its fix defaults NVIDIA_IMEX_CHANNELS to "all" for a legacy image (CUDA_VERSION set, no
    NVIDIA_REQUIRE_CUDA) that sets none, and libnvidia-container refuses that value: the container does not start."""
    job = ctx.job
    if job is not None and job.gpu_injection is not None:
        yield decided(LEGACY_IMEX, f"{job.where} does not start the container through the toolkit's hook")
        return
    # the Env as read, or what the NVIDIA image its reference names sets (nvidia/cuda sets NVIDIA_REQUIRE_CUDA: not
    # a legacy image) when it is not read
    env = {**{name: var.value for name, var in ctx.family_env.items()}, **ctx.image.env}
    if ctx.image.unknown_reason("env") and not env:
        return  # the engine asks for the image's Env
    imex = job.env_value(IMEX) if job is not None else None
    for name in (IMAGE_LEGACY, REQUIRE, IMEX):
        if name not in env and facts.setting(name).state(ctx) not in (facts.State.KNOWN, facts.State.ABSENT):
            return  # whether the image sets it is not known: the engine asks
    if IMAGE_LEGACY not in env or REQUIRE in env or IMEX in env or imex is not None:
        yield decided(LEGACY_IMEX, f"the image is not a legacy CUDA image without {IMEX}")
        return
    toolkit = ctx.node.container_toolkit
    if toolkit.installed is False:
        yield decided(LEGACY_IMEX, "the NVIDIA Container Toolkit is not installed on the node")
        return
    version, version_ev, how = toolkit_release(ctx)
    if version is None:
        return  # the engine asks for the toolkit's release
    rows = [r for r in ctx.matrix.rows("container_toolkit_changes") if r["applies"] == LEGACY]
    hit = [r for r in rows if _affected(version, r)]
    if not hit:
        yield decided(LEGACY_IMEX, f"toolkit {version} does not default {IMEX} for legacy images")
        return
    ev = [e for e in (version_ev,) if e is not None]
    legacy = ctx.image_env(IMAGE_LEGACY)
    ev.append(legacy[1] if legacy is not None else Evidence(f"image.env.{IMAGE_LEGACY}", env[IMAGE_LEGACY], IMAGE_ENV))
    yield finding(
        ctx.matrix,
        LEGACY_IMEX,
        ev,
        node=ctx.node.name,
        version=f"{version} ({how})" if how else version,
        since=str(hit[0]["affected_from"]),
        fixed=_first_for(version, hit[0]),
        cuda=env[IMAGE_LEGACY],
    )


RULES, NEEDS, REQUIRES, READS, check = family(driver_root, cdi_no_spec, fixed_defects, legacy_imex)
