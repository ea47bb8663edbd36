"""Memory registration (issue 27): which call NCCL makes for which memory on this node, and what each errno
would mean there. Rows are in docs/registration-errors.md; each finding names the row it implements."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..model.report import Evidence
from ..versions.ecosystems import at_least, numeric_tuple
from . import facts
from .context import Ctx
from .emit import Outcome, finding, unknown
from .gates import over_rdma
from .gdr import host_staging_chosen

RULES = (
    "REG-PATH",
    "REG-MEMLOCK-ZERO",
    "REG-CUMEM-VMM-GDR",
    "REG-REMOTE-ATOMIC",
    "REG-BAR1-SMALL",
    "REG-DMABUF-FORCE-PCIE",
    "REG-VGPU-GPUDIRECT",
)
NEEDS = {
    "nccl_features": {"cumem_without_vmm_gdr_check", "remote_atomic_data_mr", "dmabuf_force_pcie_mapping"},
    "thresholds": {"cumem_min_cuda", "gpu_bar1_small_mib", "gpu_c2c_attached_name_pattern", "vgpu_model_name_pattern"},
}

PATH_DMABUF = "dmabuf"
PATH_PEER = "peer-memory"
PATH_HOST = "host-staging"
PATH_FACT = "nccl.gpu_buffer_path"


def check(ctx: Ctx) -> Iterator[Outcome]:
    yield from _memlock_zero(ctx)
    yield from _path(ctx)
    yield from _cumem_vmm_gdr(ctx)
    yield from _remote_atomic(ctx)
    yield from _bar1_small(ctx)
    yield from _dmabuf_force_pcie(ctx)
    yield from _vgpu_gpudirect(ctx)


def gpu_buffer_path(ctx: Ctx) -> tuple[str | None, str]:
    """How NCCL registers its GPU data buffers here: dmabuf | peer-memory | host-staging, or None and why not known.

    NCCL's order (src/transport/net.cc:989-1006): DMA-BUF when usable, else the peer-memory fallthrough when
    its GDR check found a module, else the buffers live in host memory. NCCL_NET_GDR_LEVEL=LOC forbids GDR.
    """
    if host_staging_chosen(ctx):
        gdr = ctx.setting("NCCL_NET_GDR_LEVEL")
        assert gdr is not None  # host_staging_chosen read it
        return PATH_HOST, f"{gdr.label} forbids GPUDirect RDMA"
    dmabuf, dmabuf_why = ctx.dmabuf_usable
    if dmabuf:
        return PATH_DMABUF, f"DMA-BUF is usable ({dmabuf_why})"
    visible, peer_why = ctx.peermem_visible
    if dmabuf is None:
        if visible is False:
            return None, f"whether DMA-BUF is usable is unknown ({dmabuf_why}) and {peer_why}"
        return None, f"whether DMA-BUF is usable is unknown: {dmabuf_why}"
    if visible is None:
        return None, peer_why
    if visible:
        return PATH_PEER, f"DMA-BUF is out ({dmabuf_why}); {peer_why}"
    return PATH_HOST, f"DMA-BUF is out ({dmabuf_why}) and {peer_why}"


def _driver_api_12(ctx: Ctx) -> bool | None:
    """Whether the CUDA driver API the job sees is >= 12.0 (NCCL's cuMem condition), via the node driver or
    the image's forward-compat libcuda."""
    row = ctx.matrix.row("cuda_minor_compat", cuda_major=12)
    driver = ctx.node.gpu.driver_version
    if row is None or not driver or not numeric_tuple(driver):
        return None
    compat = ctx.image.cuda.compat_driver if ctx.image.cuda else None
    return bool(at_least(driver, row["minimum_driver"]) or (compat and at_least(compat, row["minimum_driver"])))


def gpu_buffer_alloc(ctx: Ctx) -> str:
    """How NCCL allocates its GPU buffers here, in words (src/misc/cudawrap.cc ncclIsCuMemSupported / ncclCuMemEnable)."""
    if not ctx.nccl_at_least("cumem_default"):
        return "cudaMalloc"
    cumem = ctx.setting("NCCL_CUMEM_ENABLE")
    forced = cumem.as_int() if cumem is not None else None
    if cumem is not None and forced == 0:  # forced is None without the setting
        return f"cudaMalloc ({cumem.label})"
    if cumem is not None and forced is not None and forced > 0:
        return f"cuMem ({cumem.label})"
    api12 = _driver_api_12(ctx)
    if api12 is None:
        return "cudaMalloc or cuMem (the driver version decides)"
    if not api12:
        return f"cudaMalloc (driver API < {ctx.matrix.threshold('cumem_min_cuda')})"
    if ctx.nccl_at_least("cumem_without_vmm_gdr_check"):
        return "cuMem (VMM)"
    return "cuMem (VMM) if the GPU reports VMM GPUDirect RDMA support, else cudaMalloc"


def _memlock_zero(ctx: Ctx) -> Iterator[Outcome]:
    rule = "REG-MEMLOCK-ZERO"
    if ctx.lib is None or ctx.node_has_rdma is False:
        return
    if ctx.node.limits.memlock_kib != 0:
        return  # unknown or non-zero: MEMLOCK-TOO-LOW decides
    yield finding(ctx.matrix, rule, [ctx.node_ev("limits.memlock_kib", 0)], reg_fn=ctx.reg_fn)


@over_rdma("REG-PATH")
def _path(ctx: Ctx, rule: str) -> Iterator[Outcome]:
    lib = ctx.lib
    assert lib is not None  # over_rdma runs the rule only with libibverbs
    nccl = ctx.nccl
    assert nccl is not None  # over_rdma runs the rule only with NCCL
    kind, why = gpu_buffer_path(ctx)
    if kind is None:
        yield unknown(rule, f"which registration path NCCL takes for GPU buffers is unknown: {why}")
        return
    evidence = (
        ctx.nccl_evidence()
        + [
            Evidence(PATH_FACT, kind),  # derived from the facts above; verify reads it to know which path to test
            ctx.lib_evidence("has_reg_mr_iova2", lib.has_reg_mr_iova2),
            ctx.node_ev("gpu.kernel_module", ctx.node.gpu.kernel_module),
            ctx.node_ev("gpu.peermem.loaded", ctx.node.gpu.peermem.loaded),
        ]
        + ctx.stack_evidence()
    )
    for name in ("NCCL_NET_GDR_LEVEL", "NCCL_DMABUF_ENABLE", "NCCL_IB_PCI_RELAXED_ORDERING", "NCCL_CUMEM_ENABLE"):
        s = ctx.setting(name)
        if s is not None:
            evidence.append(s.evidence)
    stack = ctx.node.rdma.stack
    node_stack = f"{stack} {ctx.stack_version_of_node() or ''}".strip() if stack else "RDMA stack unknown"
    yield finding(
        ctx.matrix,
        rule,
        evidence,
        variant=kind,
        nccl=nccl.version,
        reg_fn=ctx.reg_fn,
        why=why,
        node_stack=node_stack,
        alloc=gpu_buffer_alloc(ctx),
    )


@over_rdma("REG-CUMEM-VMM-GDR")
def _cumem_vmm_gdr(ctx: Ctx, rule: str) -> Iterator[Outcome]:
    nccl = ctx.nccl
    assert nccl is not None  # over_rdma runs the rule only with NCCL
    if not ctx.nccl_at_least("cumem_without_vmm_gdr_check"):
        return  # NCCL 2.19 - 2.23 turns cuMem on only when the GPU reports VMM GPUDirect RDMA support
    cumem = ctx.setting("NCCL_CUMEM_ENABLE")
    if cumem is not None and cumem.as_int() == 0:
        return
    kind, _ = gpu_buffer_path(ctx)
    if kind != PATH_PEER:
        return  # DMA-BUF exports cuMem memory without the flag; host staging registers no GPU memory
    api12 = _driver_api_12(ctx)
    if api12 is None:
        yield unknown(rule, ctx.unknown_why("gpu.driver_version"))
        return
    if not api12:
        return  # driver API < 12.0: NCCL does not use cuMem at all
    yield unknown(
        rule,
        f"NCCL {nccl.version} allocates its GPU buffers with cuMem and registers them through "
        "nvidia-peermem; they are registrable only if the GPU reports "
        "GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED (else 'Bad address', docs/registration-errors.md "
        "RE-EFAULT-CUMEM-FLAG). Only a live node shows the attribute: run `imgcheck verify IMAGE` "
        "there (it registers a cuMemCreate buffer exactly as NCCL allocates it), or set "
        "NCCL_CUMEM_ENABLE=0 to avoid the question",
    )


@over_rdma("REG-REMOTE-ATOMIC", need_gpu=False)
def _remote_atomic(ctx: Ctx, rule: str) -> Iterator[Outcome]:
    nccl = ctx.nccl
    assert nccl is not None  # over_rdma runs the rule only with NCCL
    if not ctx.nccl_at_least("remote_atomic_data_mr"):
        return
    providers = ctx.node_providers()
    if providers is None:
        yield unknown(
            rule,
            f"NCCL >= {ctx.nccl_floor('remote_atomic_data_mr')} asks for REMOTE_ATOMIC on every data buffer; whether the node's RDMA "
            "driver accepts it depends on " + ctx.unknown_why("rdma.devices"),
        )
        return
    others = sorted(p for p in providers if p != "mlx5")
    if not others:
        return  # mlx5 writes the atomic bit into the mkey without a capability check (verified)
    yield finding(
        ctx.matrix,
        rule,
        ctx.nccl_evidence()
        + [Evidence("node.rdma.devices", ", ".join(d.name or "?" for d in ctx.node.rdma.devices) or None)],
        nccl=nccl.version,
        providers=", ".join(others),
        reg_fn=ctx.reg_fn,
    )


@over_rdma("REG-BAR1-SMALL", need_version=False)  # the GPU buffer path asks the version where it matters
def _bar1_small(ctx: Ctx, rule: str) -> Iterator[Outcome]:
    """nvidia-peermem maps every registered GPU range into BAR1; a small BAR1 fills (RE-EFAULT-DECLINED, BAR1)."""
    kind, why = gpu_buffer_path(ctx)
    if kind is None:
        yield unknown(rule, f"whether NCCL registers GPU memory through nvidia-peermem is unknown: {why}")
        return
    if kind == PATH_HOST:
        return  # no GPU memory is registered
    gpus = [g for g in ctx.node.gpu.gpus if g.gpu_class != "consumer"]  # consumer GPUs: NCCL disables GDR itself
    if not gpus:
        if not ctx.node.gpu.gpus:
            yield unknown(rule, "the node's GPUs are unknown (" + ctx.unknown_why("gpu.gpus") + "), so is their BAR1")
        return
    limit = int(ctx.matrix.threshold("gpu_bar1_small_mib")) << 20
    small = [g for g in gpus if g.bar1_bytes is not None and g.bar1_bytes <= limit]
    if not small:
        if all(g.bar1_bytes is None for g in gpus):
            yield unknown(
                rule,
                "the GPUs' BAR1 size is unknown (node facts without gpu.gpus[].bar1_bytes: probe the node again); "
                f"BAR1 of {limit >> 20} MiB or less fills with NCCL's GPUDirect buffers",
            )
        return
    if kind == PATH_DMABUF:
        yield unknown(
            rule,
            f"{small[0].name or 'a GPU'} has a {(small[0].bar1_bytes or 0) >> 20} MiB BAR1; NCCL uses DMA-BUF "
            "here, and whether the GPU driver's dma-buf export runs out of BAR1 as nvidia-peermem does was not "
            "read in its source: run `imgcheck verify IMAGE` on the node (its BAR1 sweep registers 1 GiB in "
            "NCCL-sized chunks)",
        )
        return
    names = sorted({g.name or g.pci_bus_id or "?" for g in small})
    evidence = [
        Evidence.member(
            "node.gpu.gpus", g.pci_bus_id or g.name or "?", "bar1_bytes", g.bar1_bytes, ctx.node.location_of("gpu.gpus")
        )
        for g in small
    ] + [Evidence(PATH_FACT, kind)]
    yield finding(
        ctx.matrix,
        rule,
        evidence,
        gpus=", ".join(names),
        bar1_mib=min((g.bar1_bytes or 0) for g in small) >> 20,
        reg_fn=ctx.reg_fn,
        why=why,
    )


@over_rdma("REG-DMABUF-FORCE-PCIE")
def _dmabuf_force_pcie(ctx: Ctx, rule: str) -> Iterator[Outcome]:
    """NCCL >= 2.26.2 asks for a PCIe DMA-BUF mapping on C2C GPUs; the driver may refuse the attach (524)."""
    nccl = ctx.nccl
    assert nccl is not None  # over_rdma runs the rule only with NCCL
    asks = ctx.nccl_at_least("dmabuf_force_pcie_mapping")
    if asks is None:
        yield unknown(rule, ctx.nccl_unknown_reason("dmabuf_force_pcie_mapping"))
        return
    if not asks:
        return  # older NCCL exports every dma-buf with the default mapping
    kind, why = gpu_buffer_path(ctx)
    if kind is None:
        yield unknown(rule, f"whether NCCL uses DMA-BUF is unknown: {why}")
        return
    if kind != PATH_DMABUF:
        return
    gpus = ctx.node.gpu.gpus
    if not gpus:
        yield unknown(rule, "the node's GPUs are unknown (" + ctx.unknown_why("gpu.gpus") + "): C2C or not decides")
        return
    pattern = re.compile(str(ctx.matrix.threshold("gpu_c2c_attached_name_pattern")))
    c2c = sorted({g.name for g in gpus if g.name and pattern.search(g.name)})
    if not c2c:
        if any(g.name is None for g in gpus):
            yield unknown(rule, "a GPU's model name is unknown: whether it is C2C-attached decides")
        return  # PCIe-attached GPUs: NCCL's GDR mode stays the default mapping
    yield unknown(
        rule,
        f"NCCL {nccl.version} exports its DMA-BUF buffers with a forced PCIe mapping on {', '.join(c2c)} "
        "(C2C-attached) whenever it reaches the NIC over PCIe, and the GPU driver refuses the attach for PCIe "
        "topologies it does not support ('Unknown error 524', docs/registration-errors.md "
        "RE-ENOTSUPP-DMABUF-ATTACH). Which PCIe path joins this node's NICs and GPUs is not a node fact: "
        "`nvidia-smi topo -m` shows it; `dmesg | grep 'dma-buf attach failed'` after a failure names the refusal",
    )


@over_rdma("REG-VGPU-GPUDIRECT", need_version=False)  # the GPU buffer path asks the version where it matters
def _vgpu_gpudirect(ctx: Ctx, rule: str) -> Iterator[Outcome]:
    """A vGPU refuses third-party P2P unless its configuration enables GPUDirect RDMA (RE-EFAULT-DECLINED, vGPU)."""
    kind, why = gpu_buffer_path(ctx)
    if kind is None:
        yield unknown(rule, f"whether NCCL registers GPU memory is unknown: {why}")
        return
    if kind == PATH_HOST:
        return  # no GPU memory is registered
    gpus = ctx.node.gpu.gpus
    if not gpus:
        yield unknown(rule, "the node's GPUs are unknown (" + ctx.unknown_why("gpu.gpus") + "): a vGPU or not decides")
        return
    pattern = re.compile(str(ctx.matrix.threshold("vgpu_model_name_pattern")))
    vgpus = sorted({g.name for g in gpus if g.name and pattern.search(g.name)})
    if not vgpus:
        if any(g.name is None for g in gpus):
            yield unknown(rule, "a GPU's model name is unknown: whether it is a vGPU decides")
        return  # bare-metal or passthrough GPUs report their board name
    yield unknown(
        rule,
        f"{', '.join(vgpus)} is a vGPU type: the GPU driver refuses GPUDirect RDMA on a vGPU whose configuration "
        "does not enable it (p2p.c), and the registration then fails with 'Bad address' (docs/registration-errors.md "
        "RE-EFAULT-DECLINED). Whether this vGPU's does is not a node fact: NVIDIA lists the vGPU types and guest "
        "releases that support GPUDirect RDMA; `imgcheck verify IMAGE` in the guest registers GPU memory and shows it",
    )


# The facts each rule needs present (absent: the rule does not apply) and the further facts it reads;
# silence with one of them unknown is reported as unknown (engine/contract.py).
_GPU_PATH = (facts.NCCL, facts.LIBIBVERBS, facts.NODE_RDMA, facts.CUDA, facts.PEERMEM, facts.GPU_DRIVER)
REQUIRES = {
    "REG-PATH": (facts.NCCL, facts.LIBIBVERBS, facts.NODE_RDMA),
    "REG-MEMLOCK-ZERO": (facts.LIBIBVERBS, facts.NODE_RDMA),
    "REG-CUMEM-VMM-GDR": (facts.NCCL, facts.LIBIBVERBS, facts.NODE_RDMA),
    "REG-REMOTE-ATOMIC": (facts.NCCL, facts.LIBIBVERBS, facts.NODE_RDMA),
    "REG-BAR1-SMALL": (facts.NCCL, facts.LIBIBVERBS, facts.NODE_RDMA),
    "REG-DMABUF-FORCE-PCIE": (facts.NCCL, facts.LIBIBVERBS, facts.NODE_RDMA),
    "REG-VGPU-GPUDIRECT": (facts.NCCL, facts.LIBIBVERBS, facts.NODE_RDMA),
}
READS = {
    "REG-PATH": (facts.NCCL, facts.LIBIBVERBS, facts.NODE_RDMA, facts.CUDA),
    "REG-MEMLOCK-ZERO": (facts.LIBIBVERBS, facts.NODE_RDMA, facts.MEMLOCK),
    "REG-CUMEM-VMM-GDR": (facts.NCCL, facts.LIBIBVERBS, facts.NODE_RDMA, facts.CUDA),
    "REG-REMOTE-ATOMIC": (facts.NCCL, facts.LIBIBVERBS, facts.NODE_RDMA, facts.CUDA),
    "REG-BAR1-SMALL": _GPU_PATH,
    "REG-DMABUF-FORCE-PCIE": _GPU_PATH,
    "REG-VGPU-GPUDIRECT": _GPU_PATH,
}
