"""Rules that need only node facts: the node's own GPUDirect and OFED state, whatever the image.

`imgcheck node check` runs them with no image (the workload is then "any CUDA + verbs program");
`imgcheck check` runs them too, and then the GPUDirect ones apply only when the image does CUDA over
verbs at all (NCCL, UCX, perftest, NIXL, custom verbs code), and the report names that path.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from ..knowledge import gpus as gpus_k
from ..knowledge import registrars
from ..model.image import ImageFacts
from ..model.node import STACK_INBOX
from ..model.report import Evidence
from ..versions.ecosystems import numeric_tuple
from . import facts
from .context import MLNX_STACKS, Ctx
from .emit import Outcome, decided, finding, unknown
from .facts import State
from .intra_node_p2p import PeerPath, peer_path

RULES = (
    "NODE-PEERMEM-NO-PEER-API",
    "NODE-OFED-NOT-RUNNING",
    "NODE-PEERMEM-STALE-BUILD",
    "NODE-LEGACY-NV-PEER-MEM",
    "NODE-GPU-NO-GDR",
    "NODE-DMABUF-UNAVAILABLE",
    "NODE-PCI-ACS-REDIRECT",
    "NODE-PINNING-MOVABLE-MEMORY",
    "NODE-IOMMU-TRANSLATED",
    "NODE-NVIDIA-UVM-MISSING",
    "NODE-PEERMEM-CONFIGURED-NOT-LOADED",
    "NODE-KERNEL-PINNING-REGRESSION",
)
NEEDS = {
    "thresholds": {"nvidia_peermem_first_driver_branch"},
    "pinning_kernel_features": {"longterm_pin_migrates_out_of_movable"},
}

NODE_ONLY_REFERENCE = facts.NODE_CHECK_REFERENCE
NODE_ONLY_IMAGE = ImageFacts(reference=NODE_ONLY_REFERENCE, notes=("node check: node facts only, no image",))
ANY_WORKLOAD = "any CUDA program that uses verbs (NCCL, UCX, perftest --use_cuda, NIXL, custom verbs code)"
PEER_MODULES = ("nvidia_peermem", "nv_peer_mem")
PEER_SYMBOLS = ("ib_register_peer_memory_client", "ib_unregister_peer_memory_client")
OFED_DKMS_NAMES = ("mlnx-ofed-kernel", "mlnx-ofa_kernel")


def node_only(ctx: Ctx) -> bool:
    return ctx.image.reference == NODE_ONLY_REFERENCE


def gdr_workload(ctx: Ctx) -> str | None:
    """Which CUDA-over-verbs path of the image these rules evaluate; None when the image has none."""
    if node_only(ctx):
        return ANY_WORKLOAD
    image = ctx.image
    if image.rdma.libibverbs is None:
        return None
    # libraries of the image that register GPU memory with the NIC besides NCCL (catalog gpu_memory_registrars)
    others = [r for r in registrars.registrars_in(ctx.matrix, image) if r.registrar != registrars.NCCL]
    also = f"; {registrars.names(others)}" if others else ""
    if ctx.nccl is not None:
        return f"NCCL {ctx.nccl.version} over the IB/RoCE transport{also}"
    if others:
        return f"{registrars.names(others)} (GPU memory registered with the NIC)"
    if not ctx.gpu_image:
        return None
    if image.ucx is not None:
        return f"UCX {image.ucx.version or ''} with CUDA (cuda_copy/rc/dc transports)".replace("  ", " ")
    return "CUDA with libibverbs (perftest --use_cuda, NIXL, MSCCL++ or custom verbs code)"


def _workload_ev(workload: str) -> Evidence:
    return Evidence("workload.path", workload)


def _uses_rdma(ctx: Ctx) -> bool:
    return node_only(ctx) or ctx.image.rdma.libibverbs is not None


def _has_gpu(ctx: Ctx) -> bool:
    gpu = ctx.node.gpu
    return bool(gpu.driver_version or gpu.gpus or gpu.kernel_module)


def check(ctx: Ctx) -> Iterator[Outcome]:
    workload = gdr_workload(ctx)
    if _uses_rdma(ctx):
        yield from _kernel_regression(ctx)
        yield from _ofed_not_running(ctx)
        yield from _stale_build(ctx)
        if ctx.node_has_rdma is not False:
            yield from _movable(ctx)
    if (node_only(ctx) or ctx.gpu_image) and ctx.node.gpu.driver_version:
        yield from _uvm(ctx)
    if workload is not None and _has_gpu(ctx):
        yield from _peermem_not_loaded(ctx, workload)
    if workload is None or ctx.node_has_rdma is False or not _has_gpu(ctx):
        yield from _gpu_class_decided(ctx)
        path = _node_check_peers(ctx) if node_only(ctx) else peer_path(ctx)
        gdr_open = _gdr_path_open(ctx, workload)
        yield from _acs_p2p(ctx, path, gdr_open)
        yield from _iommu_p2p(ctx, path, gdr_open)
        return
    yield from _no_peer_api(ctx, workload)
    yield from _legacy(ctx, workload)
    # the node's GPUs decide it before the image does (no GPU of a class without GPUDirect RDMA: nothing to ask)
    by_node = list(_gpu_class_decided(ctx))
    yield from by_node or _gpu_class(ctx, workload)
    yield from _acs(ctx, workload)
    yield from _iommu(ctx, workload)
    if node_only(ctx) or ctx.nccl is None:  # with NCCL, GDR-PEERMEM-MISSING / DMABUF-UNSUPPORTED say it
        yield from _dmabuf(ctx, workload)


# ---------- kernel releases known to break memory registration ----------
def _kernel_regression(ctx: Ctx) -> Iterator[Outcome]:
    rule = "NODE-KERNEL-PINNING-REGRESSION"
    release = ctx.node.kernel.release
    if not release:
        if ctx.matrix.rows("kernel_pinning_regressions"):
            yield unknown(rule, ctx.unknown_why("kernel.release"))
        return
    row = ctx.matrix.row("kernel_pinning_regressions", kernel_release=release)
    if row is None:
        return  # not a release known to be bad (the catalog lists each one with its source)
    evidence = [ctx.node_ev("kernel.release", release)]
    if ctx.node.kernel.cma_total_kib is not None:
        evidence.append(ctx.node_ev("kernel.cma_total_kib", ctx.node.kernel.cma_total_kib))
    yield finding(
        ctx.matrix,
        rule,
        evidence,
        release=release,
        platform=row.get("platform") or "the nodes the source names",
        effect=row["effect"],
        fixed_by=row.get("fixed_by") or "no release named by the source",
        source=row["source"] if isinstance(row["source"], str) else ", ".join(row["source"]),
    )


# ---------- unified memory: nvidia_uvm and /dev/nvidia-uvm ----------
def _uvm(ctx: Ctx) -> Iterator[Outcome]:
    rule = "NODE-NVIDIA-UVM-MISSING"
    gpu = ctx.node.gpu
    # like the other node-only rules, a node facts file that predates these facts (no reason recorded) says
    # nothing; a probe that could not read them recorded why, and that is said
    said = [f for f in ("gpu.uvm_loaded", "gpu.uvm_device") if ctx.node.unknown.get(f)]
    if gpu.uvm_loaded is None and gpu.uvm_device is None:
        if said:
            yield unknown(rule, "; ".join(ctx.unknown_why(f) for f in said))
        return
    if gpu.uvm_loaded is not False and gpu.uvm_device is not False:
        if said:
            yield unknown(rule, "; ".join(ctx.unknown_why(f) for f in said))
        return
    missing = []
    if gpu.uvm_loaded is False:
        missing.append("the nvidia_uvm module is not loaded (/sys/module/nvidia_uvm absent)")
    if gpu.uvm_device is False:
        missing.append("/dev/nvidia-uvm does not exist")
    yield finding(
        ctx.matrix,
        rule,
        [
            ctx.node_ev("gpu.driver_version", gpu.driver_version),
            ctx.node_ev("gpu.uvm_loaded", gpu.uvm_loaded),
            ctx.node_ev("gpu.uvm_device", gpu.uvm_device),
        ],
        missing="; ".join(missing),
        driver_version=gpu.driver_version,
    )


# ---------- nvidia-peermem configured to load, not loaded ----------
def _peermem_not_loaded(ctx: Ctx, workload: str) -> Iterator[Outcome]:
    rule = "NODE-PEERMEM-CONFIGURED-NOT-LOADED"
    gpu = ctx.node.gpu
    configured = gpu.peermem_configured
    if configured is None:
        if gpu.peermem.loaded is False and ctx.node.unknown.get("gpu.peermem_configured"):
            yield unknown(rule, "nvidia-peermem is not loaded; " + ctx.unknown_why("gpu.peermem_configured"))
        return
    if not configured or gpu.peermem.loaded is not False:
        if configured and gpu.peermem.loaded is None:
            yield unknown(rule, f"nvidia-peermem is configured ({configured[0]}); " + ctx.unknown_why("gpu.peermem"))
        return
    yield finding(
        ctx.matrix,
        rule,
        [
            ctx.node_ev("gpu.peermem_configured", "; ".join(configured)),
            ctx.node_ev("gpu.peermem.loaded", False),
            _workload_ev(workload),
        ],
        configured="; ".join(configured),
        workload=workload,
    )


# ---------- peer memory on an inbox stack ----------
def _peermem_present(ctx: Ctx) -> str | None:
    pm = ctx.node.gpu.peermem
    if pm.loaded:
        return "nvidia-peermem is loaded"
    files = ctx.node.rdma.module_files or {}
    for name in PEER_MODULES:
        if name in files:
            return f"{files[name].path} is installed"
    module = ctx.node.rdma.modules.get("nvidia_peermem")
    if module is not None and module.path:
        return f"{module.path} is installed"
    return None


def _no_peer_api(ctx: Ctx, workload: str) -> Iterator[Outcome]:
    rule = "NODE-PEERMEM-NO-PEER-API"
    if ctx.node.rdma.stack != STACK_INBOX:
        return
    present = _peermem_present(ctx)
    if present is None:
        return  # nothing relies on peer memory here; NODE-DMABUF-UNAVAILABLE covers "no path at all"
    ok, why = ctx.node_has_feature("peer_memory_api")
    if ok is not False:
        return
    dmabuf_ok, missing = _dmabuf_prereqs(ctx)
    dmabuf_words = (
        "its prerequisites are met here"
        if dmabuf_ok and not missing
        else "missing here: " + "; ".join(missing)
        if missing
        else "whether it works is unknown"
    )
    yield finding(
        ctx.matrix,
        rule,
        [
            ctx.node_ev("rdma.stack", ctx.node.rdma.stack),
            ctx.node_ev("kernel.release", ctx.node.kernel.release),
            ctx.node_ev("gpu.peermem.loaded", ctx.node.gpu.peermem.loaded),
            _workload_ev(workload),
        ],
        stack_words=f"inbox, kernel {ctx.node.kernel.release or 'unknown'}",
        peermem_words=f"Here {present}.",
        workload=workload,
        dmabuf_words=dmabuf_words,
    )


# ---------- OFED installed, not running ----------
def _ofed_not_running(ctx: Ctx) -> Iterator[Outcome]:
    rule = "NODE-OFED-NOT-RUNNING"
    rdma = ctx.node.rdma
    if rdma.stack != STACK_INBOX or not rdma.installed_ofed_version:
        return
    release = ctx.node.kernel.release or "<release>"
    builds = [d for d in (ctx.node.dkms or ()) if d.name in OFED_DKMS_NAMES]
    if builds:
        kernels = sorted({d.kernel for d in builds if d.kernel})
        here = [d for d in builds if d.kernel == release]
        if here:
            dkms_words = (
                f"DKMS has a build for {release} ({here[0].version}), yet the in-tree modules are loaded: "
                "the node was not rebooted (or the RDMA modules not reloaded) since it was built."
            )
        else:
            dkms_words = f"DKMS built {builds[0].name} for {', '.join(kernels)} only, not for the running {release}."
    elif ctx.node.dkms is None:
        dkms_words = "Whether a DKMS build exists for this kernel is unknown (/var/lib/dkms not readable)."
    else:
        dkms_words = "No DKMS build of the OFED kernel modules exists (a kmod/ISO install, or the build failed)."
    modules = rdma.modules
    evidence = [
        ctx.node_ev("rdma.installed_ofed_version", rdma.installed_ofed_version),
        ctx.node_ev("rdma.stack", rdma.stack),
        ctx.node_ev("kernel.release", ctx.node.kernel.release),
    ]
    if "mlx5_core" in modules:
        evidence.append(ctx.node_ev("rdma.modules.mlx5_core.out_of_tree", modules["mlx5_core"].out_of_tree))
    evidence += [ctx.node_ev(f"dkms.{d.name}", f"{d.version} for {d.kernel}") for d in builds]
    yield finding(
        ctx.matrix,
        rule,
        evidence,
        ofed=f"MLNX_OFED/DOCA-OFED {rdma.installed_ofed_version}",
        release=release,
        dkms_words=dkms_words,
    )


# ---------- peer-memory module built against another ib_core ----------
def _exporter_crc(ctx: Ctx, symbol: str) -> tuple[str | None, str | None, str | None]:
    """(CRC ib_core exports for `symbol`, the file that says so, the node fact it is)."""
    files = ctx.node.rdma.module_files or {}
    core = files.get("ib_core")
    if core is not None and core.symbol_crcs and symbol in core.symbol_crcs:
        return core.symbol_crcs[symbol], core.path, f"rdma.module_files.ib_core.symbol_crcs.{symbol}"
    symvers = ctx.node.rdma.ib_core_symvers or {}
    if symbol in symvers:
        return symvers[symbol], ctx.node.rdma.ib_core_symvers_path, f"rdma.ib_core_symvers.{symbol}"
    return None, None, None


def _stale_build(ctx: Ctx) -> Iterator[Outcome]:
    rule = "NODE-PEERMEM-STALE-BUILD"
    rdma = ctx.node.rdma
    if rdma.stack not in MLNX_STACKS:
        return  # on inbox the API is missing altogether: NODE-PEERMEM-NO-PEER-API
    if ctx.node.gpu.peermem.loaded:
        return  # the running module loaded fine
    files = rdma.module_files or {}
    release = ctx.node.kernel.release
    for name in PEER_MODULES:
        mod = files.get(name)
        if mod is None:
            continue
        built_for = (mod.file_vermagic or "").split(" ", 1)[0] or None
        base = [ctx.node_ev(f"rdma.module_files.{name}.path", mod.path)]
        if built_for and release and built_for != release:
            yield finding(
                ctx.matrix,
                rule,
                base
                + [
                    ctx.node_ev(f"rdma.module_files.{name}.file_vermagic", mod.file_vermagic),
                    ctx.node_ev("kernel.release", release),
                ],
                variant="vermagic",
                module=name,
                path=mod.path,
                built_for=built_for,
                release=release,
                vermagic=(mod.file_vermagic or "").strip(),
            )
            continue
        for symbol in PEER_SYMBOLS:
            theirs = (mod.symbol_crcs or {}).get(symbol)
            ours, where, exported = _exporter_crc(ctx, symbol)
            if theirs is None or ours is None or exported is None or theirs == ours:  # exported is None iff ours is
                continue
            yield finding(
                ctx.matrix,
                rule,
                base
                + [
                    ctx.node_ev(f"rdma.module_files.{name}.symbol_crcs.{symbol}", theirs),
                    ctx.node_ev(exported, ours),
                    ctx.node_ev("rdma.ofed_version", rdma.ofed_version),
                ],
                module=name,
                symbol=symbol,
                path=mod.path,
                module_crc=theirs,
                ib_core_crc=ours,
                ib_core_where=where,
            )
            break  # one symbol says it; the module fails as a whole


# ---------- legacy nv_peer_mem ----------
def _legacy(ctx: Ctx, workload: str) -> Iterator[Outcome]:
    rule = "NODE-LEGACY-NV-PEER-MEM"
    if not ctx.node.gpu.peermem.legacy_nv_peer_mem:
        return
    driver = ctx.node.gpu.driver_version
    branch = numeric_tuple(driver or "")
    first = ctx.matrix.threshold("nvidia_peermem_first_driver_branch")
    if branch and branch[0] < first:
        return  # drivers before that branch do not ship nvidia-peermem: nv_peer_mem is the only option
    why = (
        f"The node's driver {driver} ships nvidia-peermem, so nv_peer_mem is a separately built leftover "
        "that must be rebuilt by hand after every driver or OFED change."
        if driver
        else f"Drivers from R{first} on ship nvidia-peermem."
    )
    yield finding(
        ctx.matrix,
        rule,
        [
            ctx.node_ev("rdma.modules.nv_peer_mem", True),
            ctx.node_ev("gpu.driver_version", driver),
            _workload_ev(workload),
        ],
        why=why,
    )


# ---------- GPU class ----------
classify_gpu = gpus_k.classify  # the knowledge module decides; the name stays for callers


def _gpu_class_decided(ctx: Ctx) -> Iterator[Outcome]:
    """The node's GPUs decide NODE-GPU-NO-GDR before the image does: none of a class without GPUDirect RDMA, no
    problem whatever the image runs (so whether it uses CUDA is not asked)."""
    listed = ctx.node.gpu.gpus
    if ctx.node.gpu.driver_version and listed and not any(_unsupported(ctx, g.name, g.gpu_class) for g in listed):
        yield decided("NODE-GPU-NO-GDR", "no GPU of the node is of a class without GPUDirect RDMA")


def _unsupported(ctx: Ctx, name: str | None, stated: str | None) -> bool:
    if stated:
        return stated == "consumer"
    return (classify_gpu(name, ctx.matrix) or {}).get("gpudirect_rdma") == "unsupported"


def _gpu_class(ctx: Ctx, workload: str) -> Iterator[Outcome]:
    rule = "NODE-GPU-NO-GDR"
    seen = set()
    for gpu in ctx.node.gpu.gpus:
        row = classify_gpu(gpu.name, ctx.matrix) or {}
        klass: str | None
        if gpu.gpu_class:  # stated in the facts: it wins over the name
            klass, supported = gpu.gpu_class, ("unsupported" if gpu.gpu_class == "consumer" else None)
        else:
            klass, supported = row.get("gpu_class"), row.get("gpudirect_rdma")
        if supported != "unsupported" or (gpu.name, klass) in seen:
            continue
        seen.add((gpu.name, klass))
        yield finding(
            ctx.matrix,
            rule,
            [ctx.node_ev("gpu.gpus.name", gpu.name), ctx.node_ev("gpu.gpus.gpu_class", klass), _workload_ev(workload)],
            gpu=gpu.name,
            gpu_class=klass,
            hca=ctx.hca,
            workload=workload,
            source_note=row.get("note", "gpu_class given in the node facts")
            if not gpu.gpu_class
            else "gpu_class given in the node facts",
        )


# ---------- long-term pinning and ZONE_MOVABLE ----------
def _movable(ctx: Ctx) -> Iterator[Outcome]:
    rule = "NODE-PINNING-MOVABLE-MEMORY"
    params = ctx.node.kernel.cmdline_params
    if params is None:
        return  # not read: the contract asks the kernel.cmdline_params question (READS)
    used = {k: v for k, v in params.items() if k in ("movablecore", "kernelcore") and v}
    if not used:
        return  # decided: nothing is put in ZONE_MOVABLE
    row = ctx.matrix.need("pinning_kernel_features", feature="longterm_pin_migrates_out_of_movable")
    words = " ".join(f"{k}={v}" for k, v in used.items())
    yield finding(ctx.matrix, rule, [ctx.node_ev("kernel.cmdline_params", words)], params=words, effect=row["effect"])


# ---------- PCIe ACS ----------
def _iommu_cmdline_words(ctx: Ctx) -> str:
    params = ctx.node.kernel.cmdline_params or {}
    iommu = {k: v for k, v in params.items() if "iommu" in k}
    return f"Boot IOMMU parameters: {' '.join(f'{k}={v}' if v else k for k, v in iommu.items())}." if iommu else ""


def _acs(ctx: Ctx, workload: str) -> Iterator[Outcome]:
    rule = "NODE-PCI-ACS-REDIRECT"
    bridges = ctx.node.pci_acs_redirect
    if bridges == ():
        yield decided(rule, "no bridge redirects peer-to-peer traffic")
    if not bridges:
        return  # None is unknown (needs root to read): the contract asks
    cmdline_words = _iommu_cmdline_words(ctx)
    yield finding(
        ctx.matrix,
        rule,
        [ctx.node_ev("pci_acs_redirect", ", ".join(bridges)), _workload_ev(workload)],
        count=len(bridges),
        bridges=", ".join(bridges),
        cmdline_words=cmdline_words,
        workload=workload,
    )


def _gdr_path_open(ctx: Ctx, workload: str | None) -> bool:
    """Whether a GPU<->NIC GPUDirect path may still apply, its facts being unknown: then "no GPU<->GPU P2P" does
    not decide the ACS and IOMMU rules (they stay silent and the contract asks the open fact)."""
    if workload is None:
        verbs = VERBS_WORKLOAD.state(ctx)
        return verbs is State.UNKNOWN or (verbs is not State.ABSENT and ctx.nccl_present is None)
    return ctx.node_has_rdma is None or (ctx.node_has_rdma and not _has_gpu(ctx))


def _node_check_peers(ctx: Ctx) -> PeerPath:
    """In a node check (no image, no launch spec) the workload is any job using the node's GPUs together."""
    count = len(ctx.node.gpu.gpus)
    if count == 0:
        return PeerPath(False, "the node facts list no GPUs, so no GPU<->GPU path is judged")
    if count == 1:
        return PeerPath(False, "the node has one GPU: no GPU<->GPU peer traffic")
    return PeerPath(True, "any job using several of the node's GPUs", count)


def _p2p_gate(ctx: Ctx, rule: str, path: PeerPath, gdr_open: bool) -> Iterator[Outcome]:
    """Decided or asked when the job's GPU<->GPU P2P on one node is not known to be used; nothing when it is, or
    when whether the image ships NCCL is what is open (the contract asks that, and the presence hypothesis
    evaluates the rule with NCCL assumed)."""
    if path.used is False:
        if not gdr_open:
            yield decided(rule, path.why)
    elif path.used is None and ctx.nccl_present is not None:
        yield unknown(rule, f"whether the job moves data GPU<->GPU on one node: {path.why}")


def _p2p_words(path: PeerPath) -> str:
    return f"NCCL's P2P transport between the job's {path.gpus} GPUs on one node ({path.why})"


def _acs_p2p(ctx: Ctx, path: PeerPath, gdr_open: bool) -> Iterator[Outcome]:
    """ACS redirect on a single-node GPU<->GPU job: no NIC involved, NCCL's P2P transport crosses the bridges."""
    rule = "NODE-PCI-ACS-REDIRECT"
    bridges = ctx.node.pci_acs_redirect
    if bridges == ():
        yield decided(rule, "no bridge redirects peer-to-peer traffic")
        return
    if path.used is not True:
        yield from _p2p_gate(ctx, rule, path, gdr_open)
        return
    if bridges is None:
        return  # not read: the contract asks the node.pci_acs_redirect question
    yield finding(
        ctx.matrix,
        rule,
        [ctx.node_ev("pci_acs_redirect", ", ".join(bridges)), _workload_ev(_p2p_words(path))],
        variant="p2p",
        count=len(bridges),
        bridges=", ".join(bridges),
        cmdline_words=_iommu_cmdline_words(ctx),
        workload=_p2p_words(path),
    )


def _bdf_key(bdf: str) -> tuple[int, str] | None:
    """(domain, bus:device.function) of a PCI address as sysfs ("0000:41:00.0") or nvidia-smi ("00000000:41:00.0")
    write it, so the two spellings compare equal."""
    domain, sep, rest = bdf.strip().lower().partition(":")
    if not sep or ":" not in rest:
        return None
    try:
        return int(domain, 16), rest
    except ValueError:
        return None


def _iommu_p2p(ctx: Ctx, path: PeerPath, gdr_open: bool) -> Iterator[Outcome]:
    """Translated IOMMU domains on the GPUs of a single-node GPU<->GPU job: the peer BAR accesses are translated."""
    rule = "NODE-IOMMU-TRANSLATED"
    domains = ctx.node.iommu_domains
    gpu_keys = {k for g in ctx.node.gpu.gpus if g.pci_bus_id and (k := _bdf_key(g.pci_bus_id)) is not None}
    translated = {
        bdf: kind
        for bdf, kind in (domains or {}).items()
        if kind in TRANSLATED and (not gpu_keys or _bdf_key(bdf) in gpu_keys)
    }
    off = _boot_untranslated(ctx)
    if off is not None or (domains is not None and not translated):
        if off is not None or not gdr_open:  # a NIC's domain matters to GPUDirect, not only the GPUs'
            yield decided(rule, off or "no GPU of the node is in a translated IOMMU domain")
        return
    if path.used is not True:
        yield from _p2p_gate(ctx, rule, path, gdr_open)
        return
    if domains is None:
        return  # not read: the contract asks the node.iommu_domains question
    words = ", ".join(f"{bdf} {kind}" for bdf, kind in translated.items())
    yield finding(
        ctx.matrix,
        rule,
        [ctx.node_ev("iommu_domains", words), _workload_ev(_p2p_words(path))],
        variant="p2p",
        domains=words,
        devices=", ".join(translated),
        types="/".join(sorted(set(translated.values()))),
        workload=_p2p_words(path),
    )


# ---------- IOMMU ----------
TRANSLATED = ("DMA", "DMA-FQ")
# boot parameters that turn the IOMMU off (kernel-parameters.txt: intel_iommu=off, amd_iommu=off, iommu=off): then no
# IOMMU group exists, so a translated type in the facts cannot be what the node runs now. iommu=pt only sets the
# default domain type; a group can still be switched to DMA through sysfs, so the group's type decides there.
IOMMU_OFF_BOOT = {"intel_iommu": "off", "amd_iommu": "off", "iommu": "off"}


def _boot_untranslated(ctx: Ctx) -> str | None:
    params = ctx.node.kernel.cmdline_params or {}
    for key, off in IOMMU_OFF_BOOT.items():
        if (params.get(key) or "").strip().lower() == off:
            return f"the kernel booted with {key}={off}: the IOMMU is off, nothing is translated"
    return None


def _iommu(ctx: Ctx, workload: str) -> Iterator[Outcome]:
    rule = "NODE-IOMMU-TRANSLATED"
    domains = ctx.node.iommu_domains
    if domains is None:
        return  # not read: the contract asks
    translated = {bdf: kind for bdf, kind in domains.items() if kind in TRANSLATED}
    if not translated:
        yield decided(rule, "no device of the node is in a translated IOMMU domain")
        return
    words = ", ".join(f"{bdf} {kind}" for bdf, kind in translated.items())
    yield finding(
        ctx.matrix,
        rule,
        [ctx.node_ev("iommu_domains", words), _workload_ev(workload)],
        domains=words,
        devices=", ".join(translated),
        types="/".join(sorted(set(translated.values()))),
        workload=workload,
    )


# ---------- no GPUDirect path at all ----------
def _dmabuf_prereqs(ctx: Ctx) -> tuple[bool | None, list[str]]:
    """(all known?, missing prerequisites) for registering GPU memory through DMA-BUF on this node."""
    missing: list[str] = []
    known = True
    module = ctx.node.gpu.kernel_module
    if module is None:
        known = False
    elif module != "open":
        missing.append("the GPU driver uses the proprietary kernel modules (DMA-BUF export needs the open ones)")
    ok, why = ctx.node_has_feature("dmabuf_mr")
    if ok is None:
        known = False
    elif not ok:
        missing.append(f"the RDMA stack cannot register dma-buf memory ({why})")
    config = ctx.node.kernel.config
    if config is not None and config.get("CONFIG_DMA_SHARED_BUFFER", "n") == "n":
        missing.append(f"the kernel is built without CONFIG_DMA_SHARED_BUFFER ({ctx.node.kernel.config_source})")
    return known, missing


def _dmabuf(ctx: Ctx, workload: str) -> Iterator[Outcome]:
    rule = "NODE-DMABUF-UNAVAILABLE"
    pm = ctx.node.gpu.peermem
    stack = ctx.node.rdma.stack
    if stack is None:
        yield unknown(rule, ctx.unknown_why("rdma.stack"))
        return
    if stack in MLNX_STACKS and (pm.loaded or pm.legacy_nv_peer_mem):
        return  # a peer-memory module gives GPUDirect RDMA
    if stack in MLNX_STACKS and pm.loaded is None:
        yield unknown(rule, ctx.unknown_why("gpu.peermem.loaded"))
        return
    known, missing = _dmabuf_prereqs(ctx)
    if not missing:
        if not known:
            yield unknown(
                rule,
                "no peer-memory module is usable and whether DMA-BUF works is unknown: "
                + (
                    ctx.unknown_why("gpu.kernel_module")
                    if ctx.node.gpu.kernel_module is None
                    else ctx.unknown_why("rdma.stack")
                ),
            )
        return
    peer_words = (
        "none: the inbox ib_core has no peer-memory API"
        if stack == STACK_INBOX
        else "none: nvidia-peermem is not loaded"
    )
    yield finding(
        ctx.matrix,
        rule,
        [
            ctx.node_ev("rdma.stack", stack),
            ctx.node_ev("gpu.kernel_module", ctx.node.gpu.kernel_module),
            ctx.node_ev("gpu.peermem.loaded", pm.loaded),
            *ctx.stack_evidence()[1:],
            _workload_ev(workload),
        ],
        hca=ctx.hca,
        peer_words=peer_words,
        missing="; ".join(missing),
        workload=workload,
    )


# The image side of these rules: the image's libibverbs, except in a node check (`imgcheck node check`), where "any
# CUDA program that uses verbs" is the workload and is always there, so an unknown node fact is asked, not skipped.
VERBS_WORKLOAD = dataclasses.replace(
    facts.LIBIBVERBS,
    state=lambda ctx: State.KNOWN if node_only(ctx) else facts.LIBIBVERBS.state(ctx),
)


P2P_SETTINGS = facts.setting("NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL", "CUDA_VISIBLE_DEVICES")

# The facts each rule needs present (absent: the rule does not apply) and the further facts it reads;
# silence with one of them unknown is reported as unknown (engine/contract.py).
REQUIRES = {
    "NODE-PEERMEM-NO-PEER-API": (VERBS_WORKLOAD, facts.NODE_RDMA, facts.GPU_WORKLOAD),
    "NODE-OFED-NOT-RUNNING": (VERBS_WORKLOAD, facts.NODE_RDMA),
    "NODE-PEERMEM-STALE-BUILD": (VERBS_WORKLOAD, facts.NODE_RDMA),
    "NODE-LEGACY-NV-PEER-MEM": (VERBS_WORKLOAD, facts.NODE_RDMA, facts.GPU_WORKLOAD),
    "NODE-GPU-NO-GDR": (VERBS_WORKLOAD, facts.GPU_WORKLOAD),
    "NODE-DMABUF-UNAVAILABLE": (VERBS_WORKLOAD, facts.GPU_WORKLOAD),
    "NODE-PCI-ACS-REDIRECT": (),
    "NODE-PINNING-MOVABLE-MEMORY": (VERBS_WORKLOAD, facts.NODE_RDMA),
    "NODE-IOMMU-TRANSLATED": (),
    # the mechanism is the node's alone; whether it matters is whether the image runs CUDA at all (GPU_WORKLOAD:
    # unknown -> a finding conditional on "the image uses CUDA"; known not to -> the rule does not apply)
    "NODE-NVIDIA-UVM-MISSING": (facts.GPU_WORKLOAD, facts.GPU_DRIVER),
    "NODE-PEERMEM-CONFIGURED-NOT-LOADED": (facts.GPU_WORKLOAD,),
    "NODE-KERNEL-PINNING-REGRESSION": (),
}
READS = {
    "NODE-PEERMEM-NO-PEER-API": (VERBS_WORKLOAD, facts.NODE_RDMA, facts.PEERMEM, facts.GPU_WORKLOAD),
    "NODE-OFED-NOT-RUNNING": (VERBS_WORKLOAD, facts.NODE_RDMA, facts.KERNEL),
    "NODE-PEERMEM-STALE-BUILD": (VERBS_WORKLOAD, facts.NODE_RDMA, facts.KERNEL),
    "NODE-LEGACY-NV-PEER-MEM": (VERBS_WORKLOAD, facts.NODE_RDMA, facts.GPU_WORKLOAD),
    "NODE-GPU-NO-GDR": (VERBS_WORKLOAD, facts.GPU_DRIVER, facts.GPU_WORKLOAD),
    "NODE-DMABUF-UNAVAILABLE": (VERBS_WORKLOAD, facts.CUDA, facts.GPU_DRIVER, facts.GPU_MODULE, facts.GPU_WORKLOAD),
    # GPU<->NIC GPUDirect (the image's verbs) or GPU<->GPU P2P on one node (NCCL, the job's GPUs, P2P settings)
    "NODE-PCI-ACS-REDIRECT": (VERBS_WORKLOAD, facts.GPU_DRIVER, facts.PCI_ACS, facts.NCCL, P2P_SETTINGS),
    "NODE-PINNING-MOVABLE-MEMORY": (VERBS_WORKLOAD, facts.NODE_RDMA, facts.KERNEL_CMDLINE),
    "NODE-IOMMU-TRANSLATED": (VERBS_WORKLOAD, facts.NODE_RDMA, facts.IOMMU_DOMAINS, facts.NCCL, P2P_SETTINGS),
    "NODE-NVIDIA-UVM-MISSING": (facts.GPU_WORKLOAD, facts.GPU_DRIVER, facts.UVM),
    "NODE-PEERMEM-CONFIGURED-NOT-LOADED": (facts.GPU_WORKLOAD, facts.PEERMEM_CONFIG, facts.PEERMEM),
    "NODE-KERNEL-PINNING-REGRESSION": (facts.KERNEL, VERBS_WORKLOAD),
}
