"""The node's NVIDIA driver: the user-space driver against the loaded kernel module, and the driver release's known
defects.

- NODE-DRIVER-USERSPACE-MISMATCH: the host's user-space driver and the loaded kernel module must be the same build.
- NODE-DRIVER-KNOWN-DEFECT: a defect of the node's driver release (catalogs/nvidia_driver_known_issues.json: P2P,
  peer memory, GSP, ...) whose conditions the node's and the job's facts show; a condition they cannot show is asked,
  and a release whose notes are not encoded (catalogs/nvidia_driver_notes_read.json) is asked about, never passed.
  Each row names the components that reach the defect (`components`: NCCL, GPUDirect RDMA consumers, GDRCopy, NVML bindings, MIG, ...): an
  image shown without them is not affected (decided), one whose components were not read is asked.

Node facts (the container toolkit mounts the host's libraries into every GPU container), so they run in
`imgcheck node check` and, for an image that uses the GPU, in `imgcheck check`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..knowledge import gpus as gpus_k
from ..knowledge import registrars
from ..model.report import Evidence
from ..versions.ecosystems import numeric_tuple
from . import facts
from .context import Ctx
from .contract import family, rule
from .emit import Outcome, decided, finding, unknown
from .intra_node_p2p import peer_path
from .node_only import node_only

USERSPACE = "NODE-DRIVER-USERSPACE-MISMATCH"
DEFECT = "NODE-DRIVER-KNOWN-DEFECT"
_LISTED = 4
P2P_SETTINGS = facts.setting("NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL", "CUDA_VISIBLE_DEVICES")


@rule(USERSPACE, requires=(facts.GPU_WORKLOAD,), reads=(facts.GPU_DRIVER,))
def userspace_mismatch(ctx: Ctx) -> Iterator[Outcome]:
    if not (node_only(ctx) or ctx.gpu_image):
        return  # a CPU-only container never opens the driver
    gpu = ctx.node.gpu
    module, userspace = gpu.driver_version, gpu.userspace_driver_version
    if not module or not userspace or module == userspace:
        return  # nothing to compare (an unknown side is in node.unknown already), or one build: fine
    yield finding(
        ctx.matrix,
        USERSPACE,
        [ctx.node_ev("gpu.driver_version", module), ctx.node_ev("gpu.userspace_driver_version", userspace)],
        module_version=module,
        userspace_version=userspace,
        userspace_path=gpu.userspace_driver_path,
    )


def branch_of(version: str) -> str:
    """A driver release's branch: its first number (535.104.05 -> 535)."""
    return version.strip().split(".", 1)[0]


def affected(driver: str, row: dict[str, Any]) -> bool:
    """Whether a driver release is in a row's affected releases, compared as NVIDIA numbers them (BRANCH.MINOR.PATCH,
    numerically per component)."""
    mine, branch = numeric_tuple(driver), branch_of(driver)
    branches = row.get("branches")
    if branches and branch not in branches:
        return False
    low = row.get("affected_min")
    if low and mine < numeric_tuple(low):
        return False
    for fixed in row.get("fixed_in") or []:
        if branch_of(fixed) == branch and mine >= numeric_tuple(fixed):
            return False
    later = row.get("fixed_branch")
    return not (later and mine[:1] >= numeric_tuple(later)[:1])


def _p2p(ctx: Ctx) -> tuple[bool | None, str]:
    """Whether the job moves data GPU<->GPU over CUDA peer access on one node."""
    if ctx.node.gpu.p2p is False:
        return False, ""
    if node_only(ctx):  # a node check: any job using several of the node's GPUs together
        count = len(ctx.node.gpu.gpus)
        return (count >= 2 if count else None), "how many GPUs the node has (node.gpu.gpus)"
    path = peer_path(ctx)
    return path.used, path.why


def _gpudirect_consumer(ctx: Ctx) -> tuple[bool | None, str]:
    """Whether the image registers GPU memory with a NIC: NCCL with libibverbs (its IB/RoCE transport with GPUDirect
    RDMA), or a GPU-memory registrar of catalog gpu_memory_registrars (NVSHMEM, Mooncake, ...)."""
    if registrars.registrars_in(ctx.matrix, ctx.image):
        return True, ""
    nccl, lib = ctx.nccl_present, ctx.lib
    if nccl and lib is not None:
        return True, ""
    packages_read = not ctx.image.unknown_reason("packages")
    no_nccl_path = nccl is False or (lib is None and not ctx.lib_unknown)
    if packages_read and no_nccl_path:
        return False, ""
    return None, (
        "whether the image registers GPU memory with a NIC (NCCL with libibverbs, or a GPU-memory registrar among "
        "its packages): " + (ctx.image.unknown_reason("packages") or ctx.lib_unknown or ctx.nccl_unknown_reason())
    )


def _mig(ctx: Ctx) -> tuple[bool | None, str]:
    instances = ctx.node.mig.gpu_instances
    if instances is None:
        return None, "whether MIG splits the node's GPUs (node.mig.gpu_instances)"
    return bool(instances), ""


# Python bindings and tools that call the host's NVML (libnvidia-ml.so.1, mounted by the container toolkit) in-process
NVML_CLIENTS = ("pynvml", "nvidia-ml-py", "nvidia-ml-py3", "py3nvml", "nvitop", "gpustat")


def _nvml_client(ctx: Ctx) -> tuple[bool | None, str]:
    if any(p.name.lower() in NVML_CLIENTS for p in ctx.image.packages):
        return True, ""
    why = ctx.image.unknown_reason("packages")
    if why:
        return None, f"whether the image ships an NVML binding ({', '.join(NVML_CLIENTS)}): packages not read ({why})"
    return False, ""


# GDRCopy's user library and tools (Debian libgdrapi / gdrcopy-tests, RPM gdrcopy / gdrcopy-devel): its gdrdrv kernel
# module on the node pins GPU memory through nvidia_p2p_get_pages itself, not through nvidia-peermem
GDRCOPY_PREFIXES = ("libgdrapi", "gdrcopy")


def _gdrcopy(ctx: Ctx) -> tuple[bool | None, str]:
    if any(p.name.lower().startswith(GDRCOPY_PREFIXES) for p in ctx.image.packages):
        return True, ""
    why = ctx.image.unknown_reason("packages")
    if why:
        return None, f"whether the image ships GDRCopy (libgdrapi, gdrcopy): packages not read ({why})"
    return False, ""


def _nccl(ctx: Ctx) -> tuple[bool | None, str]:
    present = ctx.nccl_present
    return present, "" if present is not None else "whether the image ships NCCL (" + ctx.nccl_unknown_reason() + ")"


# What reaches each kind of defect (a row's `components`, any of them), and how the facts decide whether the job has
# it. "cuda": any CUDA program (the rule runs only for GPU images); "node": the node's own GPU services (NVML clients
# such as DCGM or the device plugin, the driver itself), which every GPU job on the node depends on.
COMPONENTS = {
    "cuda": lambda ctx: (True, ""),
    "node": lambda ctx: (True, ""),
    "nccl": _nccl,
    "nvml": _nvml_client,
    "gdrcopy": _gdrcopy,
    "gpudirect_rdma": _gpudirect_consumer,
    "mig": _mig,
}
COMPONENT_WORDS = {
    "cuda": "a CUDA program",
    "node": "the node's GPU services",
    "nccl": "NCCL",
    "nvml": "an NVML binding in the image",
    "gdrcopy": "GDRCopy",
    "gpudirect_rdma": "a GPUDirect RDMA consumer",
    "mig": "MIG instances",
}


def component(ctx: Ctx, row: dict[str, Any]) -> tuple[bool | None, str]:
    """Whether the job has a component that reaches the row's defect (any of `components`), and the question when
    the facts cannot tell. A node check stands for every job the node runs: every component counts as there."""
    names = row.get("components") or ["cuda"]
    if node_only(ctx):
        return True, ""
    states = [COMPONENTS[n](ctx) if n in COMPONENTS else (None, f"component {n} (unknown)") for n in names]
    if any(v for v, _ in states):
        return True, ""
    if all(v is False for v, _ in states):
        return False, ""
    return None, "; ".join(q for v, q in states if v is None)


def _condition(ctx: Ctx, cond: str) -> tuple[bool | None, str]:
    """Whether the facts show one condition of a row, and the question when they cannot."""
    kind, _, value = cond.partition(":")
    gpu = ctx.node.gpu
    if kind == "multi_gpu":
        count = len(gpu.gpus)
        return (count >= 2 if count else None), "how many GPUs the node has (node.gpu.gpus)"
    if kind == "p2p":
        return _p2p(ctx)
    if kind == "flavour":
        module = gpu.kernel_module
        return (None if module is None else module == value), "whether the node's kernel module is open or proprietary"
    if kind == "gsp":
        on = gpus_k.gsp_on(gpu)
        return (None if on is None else on == (value == "on")), "whether the node's GPUs run on GSP firmware"
    if kind == "peer_client":
        pm = gpu.peermem
        if value == "nvidia-peermem":  # NVIDIA's own module (nv_peer_mem is Mellanox's, other code)
            return pm.loaded, "whether nvidia-peermem is loaded"
        if pm.loaded or pm.legacy_nv_peer_mem:
            return True, ""
        if pm.loaded is False and pm.legacy_nv_peer_mem is False:
            return False, ""
        return None, "whether a peer-memory client (nvidia-peermem, nv_peer_mem) is loaded"
    if kind == "error_path":  # a defect on an error path: whether the job reaches it is in no fact
        return None, f"whether the job reaches the error path ({value.replace('_', ' ')}) the defect is on"
    if kind == "arch":  # arch:ada|ampere|...: a GPU of one of these architectures (from its PCI id or model name)
        archs = [gpus_k.architecture(g, ctx.matrix)[0] for g in gpu.gpus]
        if not archs or None in archs:
            return None, "the architecture of the node's GPUs (node.gpu.gpus: PCI device id or model name)"
        return any(a in value.split("|") for a in archs), ""
    if kind == "mig_mixed":  # MIG splits some of the node's GPUs and leaves others whole
        instances, count = ctx.node.mig.gpu_instances, len(gpu.gpus)
        if instances is None or not count:
            return None, "which of the node's GPUs MIG splits (node.mig.gpu_instances, node.gpu.gpus)"
        split = sum(1 for n in instances.values() if n)
        return 0 < split < count, ""
    if kind == "runtime":  # runtime:kubernetes|...: the launch's runtime
        if node_only(ctx):
            return True, ""  # a node check speaks for every runtime the node serves
        if ctx.job is None or not ctx.job.runtime:
            return None, f"whether the job runs under {value.replace('|', ' or ')} (no launch spec given)"
        return ctx.job.runtime in value.split("|"), ""
    if kind == "unprobed":  # a platform state no fact shows (a VM guest's hidden PCIe topology): asked, never shown
        return None, value.replace("_", " ")
    if kind == "gpu":
        names = [g.name for g in gpu.gpus if g.name]
        if not names:
            return None, "the node's GPU models (node.gpu.gpus)"
        wanted = [w.lower() for w in value.split("|") if w]
        return any(w in n.lower() for n in names for w in wanted), ""
    return None, f"condition {cond} (not a condition this rule knows)"


def _entry(row: dict[str, Any]) -> str:
    ref = f" ({row['ref']})" if row.get("ref") else ""
    users = " or ".join(COMPONENT_WORDS.get(c, c) for c in row.get("components") or ["cuda"])
    if row.get("fixed_in"):
        fixed = f", fixed in {' / '.join(row['fixed_in'])}"
    elif row.get("fixed_branch"):
        fixed = f", gone from the {row['fixed_branch']} branch on"
    else:
        fixed = ", no fixed release named"
    return f"{row['symptom']} when {row['trigger']} (reached through {users}){ref}{fixed}"


@rule(
    DEFECT,
    requires=(facts.GPU_WORKLOAD,),
    reads=(
        facts.GPU_DRIVER,
        facts.GPU_MODULE,
        facts.GSP,
        facts.PEERMEM,
        facts.NCCL,
        facts.LIBIBVERBS,
        facts.PACKAGES,
        facts.MIG_INSTANCES,
        P2P_SETTINGS,
    ),
)
def known_defect(ctx: Ctx) -> Iterator[Outcome]:
    if not (node_only(ctx) or ctx.gpu_image):
        return  # a CPU-only container never reaches the driver
    driver = ctx.node.gpu.driver_version
    if not driver or not numeric_tuple(driver):
        return  # settled as unknown through GPU_DRIVER (READS)
    shown: list[dict[str, Any]] = []
    undecided: list[tuple[dict[str, Any], list[str]]] = []
    for row in ctx.matrix.rows("nvidia_driver_known_issues"):
        if not affected(driver, row):
            continue
        states = [component(ctx, row)] + [_condition(ctx, c) for c in row.get("conditions") or []]
        if any(v is False for v, _ in states):
            continue
        questions = [q for v, q in states if v is None]
        if questions:
            undecided.append((row, questions))
        else:
            shown.append(row)
    if shown:
        gpu = ctx.node.gpu
        evidence: list[Evidence] = [
            ctx.node_ev("gpu.driver_version", driver),
            ctx.node_ev("gpu.kernel_module", gpu.kernel_module),
            ctx.node_ev("gpu.gpus.name", ", ".join(sorted({g.name for g in gpu.gpus if g.name})) or None),
        ]
        firmware = sorted({g.gsp_firmware for g in gpu.gpus if g.gsp_firmware})
        if firmware:
            evidence.append(ctx.node_ev("gpu.gpus.gsp_firmware", ", ".join(firmware)))
        more = f"; and {len(shown) - _LISTED} more" if len(shown) > _LISTED else ""
        yield finding(
            ctx.matrix,
            DEFECT,
            evidence,
            driver=driver,
            branch=branch_of(driver),
            count=len(shown),
            areas=", ".join(sorted({r["area"] for r in shown})),
            entries="; ".join(_entry(r) for r in shown[:_LISTED]) + more,
            row_fixes="; ".join(r["fix"] for r in shown[:_LISTED]),
        )
        return
    listed = "; ".join(f"{r['issue']} ({r['area']}): {', '.join(q)}" for r, q in undecided)
    unread = notes_unread(ctx, driver)
    if unread:
        more = f"; and {len(undecided)} encoded defect(s) may apply, which the facts cannot show: {listed}"
        # the question is the node's (its driver release), the same for every image: recommend skips it
        yield unknown(DEFECT, unread + (more if undecided else ""), ("node.gpu.driver_version",))
    elif undecided:
        yield unknown(
            DEFECT,
            f"{len(undecided)} known defect(s) of driver {driver} (nvidia_driver_known_issues) may apply; "
            f"the facts cannot show: {listed}",
            ("node.gpu.driver_version", "node.gpu.gpus"),
        )
    else:
        yield decided(DEFECT, f"no known defect of driver {driver} whose conditions the facts show")


def notes_unread(ctx: Ctx, driver: str) -> str | None:
    """Why the driver release's own notes are not in the catalog (nvidia_driver_notes_read), or None when they are:
    without them, no row matching is no evidence that no defect applies (an old branch's GPUDirect RDMA or P2P
    data-corruption fix is simply not encoded)."""
    branch, mine = branch_of(driver), numeric_tuple(driver)
    row = ctx.matrix.row("nvidia_driver_notes_read", branch=branch)
    if row is None:
        read = ", ".join(r["branch"] for r in ctx.matrix.rows("nvidia_driver_notes_read"))
        return (
            f"the release notes of driver branch {branch} are not encoded (nvidia_driver_notes_read covers branches "
            f"{read}), so whether a known defect of driver {driver} (GPUDirect RDMA / peer memory, P2P, DMA-BUF, GSP, "
            "ECC, Fabric Manager) applies is unknown: read NVIDIA's release notes of that release, or move to a "
            "release whose notes list no such defect"
        )
    if numeric_tuple(row["first_read"]) <= mine <= numeric_tuple(row["last_read"]):
        return None
    return (
        f"the release notes of driver {driver} are not encoded (branch {branch} is read from {row['first_read']} to "
        f"{row['last_read']} only), so whether a known defect of it (GPUDirect RDMA / peer memory, P2P, DMA-BUF, GSP, "
        "ECC, Fabric Manager) applies is unknown"
    )


RULES, NEEDS, REQUIRES, READS, check = family(userspace_mismatch, known_defect)
