"""The facts rules read, each in one of its states, with the question that decides it when it is unknown.

A rule declares the facts it reads (engine/contract.py); the evaluator asks each fact's state here. Three
states of a component are different answers, never one: ABSENT (looked, found none), PARTIAL (present, but a
detail the rules use, such as its version, is unknown) and UNKNOWN (whether it is there at all is not known).
A setting adds UNSET_BY_LAUNCH: the launch spec (given, its env all shown) does not set it and the image's Env is
not read, so its value is the library's default unless the image sets it (engine/hypothesis.py decides on that).

Each fact also says how to make it unknown (`blank`) and, for components, present-with-unknown-details
(`vague`), so the property tests (tests/test_unknown_contract.py) can do it for every fact and every rule.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from ..knowledge import gpu_frameworks
from ..knowledge import gpus as gpus_k
from ..knowledge import nccl as nccl_k
from ..model.image import ImageFacts, Nccl
from ..model.node import NodeFacts

if TYPE_CHECKING:
    from ..job.model import JobFacts
    from .context import Ctx


class State(Enum):
    KNOWN = "known"  # present, with the details rules use
    PARTIAL = "present, details unknown"  # e.g. a log proves NCCL ran, its version is not known
    ABSENT = "absent"  # looked and found none
    UNKNOWN = "unknown"  # not known whether it is there
    # a setting the launch spec (given, with all its env shown) does not set while the image's Env is not read: its
    # value is the library's default unless the image sets it, so rules decide under "the image does not set it"
    # (a conditional finding, engine/hypothesis.py), never read as set and never as plainly unknown
    UNSET_BY_LAUNCH = "not set by the launch; whether the image sets it is unknown"


Facts = tuple[ImageFacts, NodeFacts, "JobFacts | None"]
Change = Callable[[ImageFacts, NodeFacts, "JobFacts | None"], Facts]


@dataclass(frozen=True)
class Fact:
    name: str  # "image.nccl", "node.limits.memlock_kib"
    question: str  # what a user answers to decide it
    state: Callable[[Ctx], State]
    why: Callable[[Ctx], str | None]  # why it is unknown (None: known)
    blank: Change  # the same facts with this one unknown (tests)
    vague: Change | None = None  # the same facts with this component present, details unknown (tests)
    # The hypothesis "present, details unknown" for a component whose presence is UNKNOWN (engine/hypothesis.py):
    # the same facts with the component there and every detail rules read left unknown, and the words that say
    # what is assumed ("the image ships NCCL"); `hints`: setting-name prefixes a launch that uses it sets.
    present: Change | None = None
    assume: str = ""
    hints: tuple[str, ...] = ()
    # For a setting fact: the names it covers, when the engine may decide it under "the image does not set them"
    # (State.UNSET_BY_LAUNCH; engine/hypothesis.py applies IMAGE_SETS_NONE). Empty: no such hypothesis (the
    # prefix facts of the Env lints: "the image sets no NCCL_* variable at all" is not a default anybody reasons on).
    unset_names: tuple[str, ...] = ()
    # A fact derived from other components (whether the image runs GPU code at all): the hypothesis assumes it only
    # for a rule that declares it, never for a rule that declares no component (those assume the components).
    declared_only: bool = False
    # A component most images do not ship (GDRCopy): "present" is hypothesised only when the launch sets one of its
    # `hints`, the job's own evidence of use; otherwise the rule asks (a CUDA program is not a GDRCopy user).
    rare: bool = False

    def unknown_words(self, ctx: Ctx) -> str:
        why = self.why(ctx)
        return f"{self.question} ({self.name}: {why})" if why else f"{self.question} ({self.name} is unknown)"


_BLANK = "blanked: not stated"
_SOME_NCCL = (Nccl(version=None, origin="library"),)  # a copy whose version is not known


def _image_unknown(image: ImageFacts, fact: str, **changes: Any) -> ImageFacts:
    return dataclasses.replace(image, unknown={**image.unknown, fact: _BLANK}, **changes)


def _node_unknown(node: NodeFacts, fact: str, node_: NodeFacts) -> NodeFacts:
    return dataclasses.replace(node_, unknown={**node.unknown, fact: _BLANK})


def _image_state(
    fact: str, present: Callable[[ImageFacts], object], detailed: Callable[[ImageFacts], bool]
) -> Callable[[Ctx], State]:
    def state(ctx: Ctx) -> State:
        if ctx.image.unknown_reason(fact):
            return State.UNKNOWN
        if not present(ctx.image):
            return State.ABSENT
        return State.KNOWN if detailed(ctx.image) else State.PARTIAL

    return state


def _image_why(fact: str) -> Callable[[Ctx], str | None]:
    return lambda ctx: ctx.image.unknown_reason(fact)


_ASSUMED = "only assumed present, so nothing about it was read"


def _assume_present(fact: str, details: tuple[str, ...] = (), **changes: Any) -> Change:
    """The image with component `fact` present and its details unknown: the component's own unknown entry goes,
    each detail in `details` (fact paths below it) becomes unknown, so no rule reads a default as a fact."""

    def change(i: ImageFacts, n: NodeFacts, j: JobFacts | None) -> Facts:
        unknown = {k: v for k, v in i.unknown.items() if k != fact}
        unknown.update({f"{fact}.{d}": _ASSUMED for d in details})
        return dataclasses.replace(i, unknown=unknown, **{k: v(i) for k, v in changes.items()}), n, j

    return change


# ---------- image components ----------


def _nccl_state(ctx: Ctx) -> State:
    image = ctx.image
    if image.unknown_reason("nccl"):
        return State.UNKNOWN
    if not image.nccl:
        return State.ABSENT
    return State.KNOWN if nccl_k.nccl_in_use(image) is not None else State.PARTIAL


NCCL = Fact(
    "image.nccl",
    "Does the image ship NCCL, and which version does the job load?",
    _nccl_state,
    _image_why("nccl"),
    blank=lambda i, n, j: (_image_unknown(i, "nccl", nccl=()), n, j),
    vague=lambda i, n, j: (
        dataclasses.replace(i, nccl=tuple(dataclasses.replace(c, version=None) for c in i.nccl) or _SOME_NCCL),
        n,
        j,
    ),
    present=_assume_present("nccl", nccl=lambda i: i.nccl or _SOME_NCCL),
    assume="the image ships NCCL",
    hints=("NCCL_",),
)


def _libibverbs_vague(i: ImageFacts, n: NodeFacts, j: JobFacts | None) -> Facts:
    from ..model.image import Libibverbs

    lib = i.rdma.libibverbs
    vague = (
        dataclasses.replace(lib, version=None, rdma_core=None, private_abi=None, symbol_versions=())
        if lib is not None
        else Libibverbs(version=None, rdma_core=None)
    )
    return dataclasses.replace(i, rdma=dataclasses.replace(i.rdma, libibverbs=vague)), n, j


LIBIBVERBS = Fact(
    "image.rdma.libibverbs",
    "Does the image ship libibverbs (rdma-core), and which release?",
    _image_state(
        "rdma.libibverbs",
        lambda i: i.rdma.libibverbs,
        lambda i: bool(i.rdma.libibverbs and (i.rdma.libibverbs.rdma_core or i.rdma.libibverbs.version)),
    ),
    _image_why("rdma.libibverbs"),
    blank=lambda i, n, j: (
        _image_unknown(i, "rdma.libibverbs", rdma=dataclasses.replace(i.rdma, libibverbs=None)),
        n,
        j,
    ),
    vague=_libibverbs_vague,
    present=_assume_present(
        "rdma.libibverbs",
        ("has_reg_mr_iova2", "has_reg_dmabuf_mr", "symbol_versions", "private_abi"),
        rdma=lambda i: dataclasses.replace(i.rdma, libibverbs=i.rdma.libibverbs or _some_libibverbs()),
    ),
    assume="the image ships libibverbs (rdma-core)",
    hints=("NCCL_IB_", "UCX_NET_DEVICES", "FI_PROVIDER"),
)


def _some_libibverbs() -> Any:
    from ..model.image import Libibverbs

    return Libibverbs(version=None, rdma_core=None)


PROVIDERS = Fact(
    "image.rdma.providers",
    "Which libibverbs providers (libmlx5-rdmavN.so, ...) does the image ship?",
    _image_state(
        "rdma.providers", lambda i: i.rdma.providers, lambda i: all(p.pabi is not None for p in i.rdma.providers)
    ),
    _image_why("rdma.providers"),
    blank=lambda i, n, j: (_image_unknown(i, "rdma.providers", rdma=dataclasses.replace(i.rdma, providers=())), n, j),
    vague=lambda i, n, j: (
        dataclasses.replace(
            i,
            rdma=dataclasses.replace(
                i.rdma, providers=tuple(dataclasses.replace(p, pabi=None, version=None) for p in i.rdma.providers)
            ),
        ),
        n,
        j,
    ),
)

UCX = Fact(
    "image.ucx",
    "Does the image ship UCX, and which version?",
    _image_state("ucx", lambda i: i.ucx, lambda i: bool(i.ucx and i.ucx.version)),
    _image_why("ucx"),
    blank=lambda i, n, j: (_image_unknown(i, "ucx", ucx=None), n, j),
    vague=lambda i, n, j: (dataclasses.replace(i, ucx=dataclasses.replace(i.ucx, version=None)) if i.ucx else i, n, j),
    present=_assume_present("ucx", ("modules",), ucx=lambda i: i.ucx or _some("Ucx")),
    assume="the image ships UCX",
    hints=("UCX_",),
)

GDRCOPY = Fact(
    "image.gdrcopy",
    "Does the image ship GDRCopy's libgdrapi (libgdrapi.so.<major>.<minor>), and which version?",
    _image_state("gdrcopy", lambda i: i.gdrcopy, lambda i: bool(i.gdrcopy and i.gdrcopy.version)),
    _image_why("gdrcopy"),
    blank=lambda i, n, j: (_image_unknown(i, "gdrcopy", gdrcopy=None), n, j),
    vague=lambda i, n, j: (
        dataclasses.replace(i, gdrcopy=dataclasses.replace(i.gdrcopy, version=None, soname_major=None))
        if i.gdrcopy
        else i,
        n,
        j,
    ),
    present=_assume_present("gdrcopy", ("version",), gdrcopy=lambda i: i.gdrcopy or _some("Gdrcopy")),
    assume="the image ships GDRCopy's libgdrapi (so its NCCL, UCX or NVSHMEM use GDRCopy)",
    hints=("GDRCOPY_", "NCCL_GDRCOPY_", "NVSHMEM_DISABLE_GDRCOPY"),
    rare=True,
)

CUDA = Fact(
    "image.cuda",
    "Which CUDA runtime does the image ship?",
    _image_state("cuda", lambda i: i.cuda, lambda i: bool(i.cuda and i.cuda.version)),
    _image_why("cuda"),
    blank=lambda i, n, j: (_image_unknown(i, "cuda", cuda=None), n, j),
    vague=lambda i, n, j: (
        dataclasses.replace(i, cuda=dataclasses.replace(i.cuda, version=None)) if i.cuda else i,
        n,
        j,
    ),
    present=_assume_present("cuda", ("compat_driver",), cuda=lambda i: i.cuda or _some("Cuda")),
    assume="the image ships a CUDA runtime",
    hints=("CUDA_",),
)


# The reference of the empty image `imgcheck node check` evaluates (node facts only): its workload is any GPU program.
NODE_CHECK_REFERENCE = "(no image: node check)"


# Python distributions that run CUDA code in the process; conda's builds too: knowledge/gpu_frameworks.py
GPU_FRAMEWORKS = gpu_frameworks.PYTHON_DISTS


def _gpu_use_unread(ctx: Ctx) -> str | None:
    """Why whether the image runs GPU code is not known: the first of its components that was not read."""
    for fact in ("cuda", "nccl", "packages"):
        why = ctx.image.unknown_reason(fact)
        if why:
            return f"image.{fact}: {why}"
    return None


def _gpu_use_state(ctx: Ctx) -> State:
    if ctx.image.reference == NODE_CHECK_REFERENCE or ctx.gpu_image:
        return State.KNOWN
    return State.UNKNOWN if _gpu_use_unread(ctx) else State.ABSENT


def _gpu_use_blank(i: ImageFacts, n: NodeFacts, j: JobFacts | None) -> Facts:
    packages = tuple(p for p in i.packages if not gpu_frameworks.runs_gpu_code(p))
    unknown = {**i.unknown, "cuda": _BLANK, "nccl": _BLANK}
    return dataclasses.replace(i, cuda=None, nccl=(), packages=packages, unknown=unknown), n, j


# Whether the image runs GPU code at all (a CUDA runtime, NCCL, or a framework that brings CUDA): what the rules whose
# mechanism lies on the node alone (nvidia_uvm, the driver's user-space libraries, peer memory) are gated on. Unknown
# when a component that would show it was not read; then the engine evaluates the rule under "the image uses CUDA"
# (a conditional finding), and with the image known not to use the GPU the rule does not apply.
GPU_WORKLOAD = Fact(
    "image.gpu_use",
    "Does the image run GPU code (a CUDA runtime, NCCL, or a framework such as torch)?",
    _gpu_use_state,
    _gpu_use_unread,
    blank=_gpu_use_blank,
    present=_assume_present("cuda", ("compat_driver",), cuda=lambda i: i.cuda or _some("Cuda")),
    assume="the image uses CUDA (the GPU)",
    hints=("CUDA_", "NCCL_", "NVIDIA_"),
    declared_only=True,
)


def _some(kind: str) -> Any:
    """A component of this model class with no detail known (version None)."""
    from ..model import image as model

    return getattr(model, kind)(version=None)


COMPAT = Fact(
    "image.cuda.compat_driver",
    "Does the image ship CUDA's forward-compat libcuda (cuda-compat), and which driver version?",
    _image_state(
        "cuda.compat_driver",
        lambda i: i.cuda and (i.cuda.compat_driver or i.cuda.compat_path),
        lambda i: bool(i.cuda and i.cuda.compat_driver),
    ),
    _image_why("cuda.compat_driver"),
    blank=lambda i, n, j: (
        _image_unknown(i, "cuda.compat_driver", cuda=dataclasses.replace(i.cuda, compat_driver=None))
        if i.cuda
        else _image_unknown(i, "cuda.compat_driver"),
        n,
        j,
    ),
    vague=lambda i, n, j: (
        dataclasses.replace(
            i, cuda=dataclasses.replace(i.cuda, compat_driver=None, compat_path=i.cuda.compat_path or _COMPAT_DIR)
        )
        if i.cuda
        else i,
        n,
        j,
    ),
)

PLUGINS = Fact(
    "image.nccl_net_plugins",
    "Which NCCL net plugins (libnccl-net*.so) does the image ship?",
    _image_state("nccl_net_plugins", lambda i: i.nccl_net_plugins, lambda i: True),
    _image_why("nccl_net_plugins"),
    blank=lambda i, n, j: (_image_unknown(i, "nccl_net_plugins", nccl_net_plugins=()), n, j),
    vague=lambda i, n, j: (
        dataclasses.replace(
            i, nccl_net_plugins=tuple(dataclasses.replace(p, version=None, project=None) for p in i.nccl_net_plugins)
        ),
        n,
        j,
    ),
)


PACKAGES = Fact(
    "image.packages",
    "Which packages (dpkg / rpm databases) does the image have?",
    _image_state("packages", lambda i: True, lambda i: True),  # a read list is known, even when empty
    _image_why("packages"),
    blank=lambda i, n, j: (_image_unknown(i, "packages", packages=()), n, j),
)


def _nccl_files_state(ctx: Ctx) -> State:
    if ctx.image.unknown_reason("nccl_xml_files") or ctx.image.unknown_reason("nccl_file_refs"):
        return State.UNKNOWN
    return State.KNOWN if ctx.image.nccl_xml_files or ctx.image.nccl_file_refs else State.ABSENT


NCCL_FILES = Fact(
    "image.nccl_xml_files",
    "Which NCCL topology/graph XML files (NCCL_TOPO_FILE, NCCL_GRAPH_FILE) does the image have, and what do they hold?",
    _nccl_files_state,
    lambda ctx: ctx.image.unknown_reason("nccl_xml_files") or ctx.image.unknown_reason("nccl_file_refs"),
    blank=lambda i, n, j: (
        dataclasses.replace(
            _image_unknown(i, "nccl_xml_files", nccl_xml_files=()),
            unknown={**i.unknown, "nccl_xml_files": _BLANK, "nccl_file_refs": _BLANK},
            nccl_file_refs=(),
        ),
        n,
        j,
    ),
)

# ---------- node ----------


def _node_fact(
    name: str,
    question: str,
    value: Callable[[NodeFacts], object],
    clear: Callable[[NodeFacts], NodeFacts],
) -> Fact:
    def state(ctx: Ctx) -> State:
        return State.UNKNOWN if value(ctx.node) is None else State.KNOWN

    return Fact(
        f"node.{name}",
        question,
        state,
        lambda ctx: ctx.node.unknown.get(name),
        blank=lambda i, n, j: (i, _node_unknown(n, name, clear(n)), j),
    )


def _rdma_state(ctx: Ctx) -> State:
    has = ctx.node_has_rdma
    return State.UNKNOWN if has is None else (State.KNOWN if has else State.ABSENT)


NODE_RDMA = Fact(
    "node.rdma",
    "Which RDMA stack and devices does the node have (a probe that sees none may be reading the wrong root)?",
    _rdma_state,
    lambda ctx: ctx.node.unknown.get("rdma.stack") or ctx.node.unknown.get("rdma.devices"),
    blank=lambda i, n, j: (
        i,
        _node_unknown(
            n, "rdma.stack", dataclasses.replace(n, rdma=dataclasses.replace(n.rdma, stack=None, devices=()))
        ),
        j,
    ),
)
GPU_DRIVER = _node_fact(
    "gpu.driver_version",
    "Which NVIDIA driver does the node run?",
    lambda n: n.gpu.driver_version,
    lambda n: dataclasses.replace(n, gpu=dataclasses.replace(n.gpu, driver_version=None, cuda_driver_version=None)),
)
MEMLOCK = _node_fact(
    "limits.memlock_kib",
    "What locked-memory limit (ulimit -l) do jobs get on the node?",
    lambda n: n.limits.memlock_kib,
    lambda n: dataclasses.replace(n, limits=dataclasses.replace(n.limits, memlock_kib=None)),
)
KERNEL = _node_fact(
    "kernel.release",
    "Which kernel does the node run?",
    lambda n: n.kernel.release,
    lambda n: dataclasses.replace(n, kernel=dataclasses.replace(n.kernel, release=None)),
)
KERNEL_CMDLINE = _node_fact(
    "kernel.cmdline_params",
    "Which memory and IOMMU parameters did the node's kernel boot with (/proc/cmdline)?",
    lambda n: n.kernel.cmdline_params,
    lambda n: dataclasses.replace(n, kernel=dataclasses.replace(n.kernel, cmdline_params=None)),
)
PEERMEM = _node_fact(
    "gpu.peermem.loaded",
    "Is nvidia-peermem loaded on the node?",
    lambda n: n.gpu.peermem.loaded,
    lambda n: dataclasses.replace(
        n, gpu=dataclasses.replace(n.gpu, peermem=dataclasses.replace(n.gpu.peermem, loaded=None))
    ),
)
GPU_MODULE = _node_fact(
    "gpu.kernel_module",
    "Is the node's GPU kernel module the open or the proprietary one?",
    lambda n: n.gpu.kernel_module,
    lambda n: dataclasses.replace(n, gpu=dataclasses.replace(n.gpu, kernel_module=None)),
)

GSP = _node_fact(
    "gpu.gsp",
    "Do the node's GPUs run on GSP firmware (the 'GPU Firmware:' line of /proc/driver/nvidia/gpus/<bus>/information, "
    "nvidia-smi -q 'GSP Firmware Version': a version, or N/A)?",
    lambda n: gpus_k.gsp_on(n.gpu),
    lambda n: dataclasses.replace(
        n,
        gpu=dataclasses.replace(
            n.gpu,
            kernel_module=None,
            gpus=tuple(dataclasses.replace(g, gsp_firmware=None) for g in n.gpu.gpus),
        ),
    ),
)


DKMS = _node_fact(
    "dkms",
    "Which DKMS builds does the node have (/var/lib/dkms/<module>/<version>/<kernel>/<arch>/module), and which "
    "module files exist for the running kernel (/lib/modules/$(uname -r)/modules.dep)?",
    lambda n: n.dkms,
    lambda n: dataclasses.replace(n, dkms=None, kernel=dataclasses.replace(n.kernel, module_files=None)),
)


def _gdrdrv_state(ctx: Ctx) -> State:
    loaded = ctx.node.gpu.gdrdrv_loaded
    return State.UNKNOWN if loaded is None else (State.KNOWN if loaded else State.ABSENT)


# GDRCopy's kernel module (node/gdrdrv.py): the rules about it apply where it is loaded
GDRDRV = Fact(
    "node.gpu.gdrdrv_loaded",
    "Is GDRCopy's gdrdrv module loaded on the node (/sys/module/gdrdrv), and is /dev/gdrdrv there?",
    _gdrdrv_state,
    lambda ctx: ctx.node.unknown.get("gpu.gdrdrv_loaded") or ctx.node.unknown.get("gpu.gdrdrv_version"),
    blank=lambda i, n, j: (
        i,
        _node_unknown(
            n, "gpu.gdrdrv_loaded", dataclasses.replace(n, gpu=dataclasses.replace(n.gpu, gdrdrv_loaded=None))
        ),
        j,
    ),
)
GDRDRV_DEVICE = _node_fact(
    "gpu.gdrdrv_device",
    "Does the node have /dev/gdrdrv (gdrdrv makes no device class: insmod.sh or the packaged service creates it)?",
    lambda n: n.gpu.gdrdrv_device,
    lambda n: dataclasses.replace(n, gpu=dataclasses.replace(n.gpu, gdrdrv_device=None, gdrdrv_device_mode=None)),
)
UVM = _node_fact(
    "gpu.uvm_loaded",
    "Is the nvidia_uvm module loaded on the node, with /dev/nvidia-uvm present?",
    lambda n: n.gpu.uvm_loaded,
    lambda n: dataclasses.replace(n, gpu=dataclasses.replace(n.gpu, uvm_loaded=None, uvm_device=None)),
)
CLUSTER_COMPONENTS = _node_fact(
    "cluster_components",
    "Which NVIDIA k8s-device-plugin (or GPU Operator) release serves the node (its DaemonSet image tag, or the node's "
    "status.images)?",
    lambda n: n.cluster_components,
    lambda n: dataclasses.replace(n, cluster_components=None),
)
PEERMEM_CONFIG = _node_fact(
    "gpu.peermem_configured",
    "Is nvidia-peermem configured to load on the node (modules-load.d, /etc/modules, modprobe.d)?",
    lambda n: n.gpu.peermem_configured,
    lambda n: dataclasses.replace(n, gpu=dataclasses.replace(n.gpu, peermem_configured=None)),
)
PCI_ACS = _node_fact(
    "pci_acs_redirect",
    "Which PCI bridges above the GPUs/NICs have ACS P2P redirect enabled (ACS control register, needs root to read)?",
    lambda n: n.pci_acs_redirect,
    lambda n: dataclasses.replace(n, pci_acs_redirect=None),
)
IOMMU_DOMAINS = _node_fact(
    "iommu_domains",
    "Which IOMMU domain type do the node's GPUs/NICs have (/sys/kernel/iommu_groups/<n>/type)?",
    lambda n: n.iommu_domains,
    lambda n: dataclasses.replace(n, iommu_domains=None),
)


def _dxg_state(ctx: Ctx) -> State:
    dxg = ctx.node.gpu.dxg_device
    if dxg is None and ctx.node.gpu.kernel_module:
        # the Linux NVIDIA kernel module is loaded (/proc/driver/nvidia/version): a GPU-PV guest has none, its GPU
        # is the Windows host's (Microsoft's WSL GPU docs: do not install a Linux driver in the guest)
        return State.ABSENT
    return State.UNKNOWN if dxg is None else (State.KNOWN if dxg else State.ABSENT)


DXG = Fact(
    "node.gpu.dxg_device",
    "Is the node a WSL2 / Hyper-V GPU-PV guest (/dev/dxg present)?",
    _dxg_state,
    lambda ctx: ctx.node.unknown.get("gpu.dxg_device"),
    blank=lambda i, n, j: (
        i,
        _node_unknown(n, "gpu.dxg_device", dataclasses.replace(n, gpu=dataclasses.replace(n.gpu, dxg_device=None))),
        j,
    ),
)
WSL_FILES = _node_fact(
    "gpu.wsl_driver_files",
    "Which of the host driver's user-space files does the GPU-PV guest have (/usr/lib/wsl/lib, /usr/lib/wsl/drivers)?",
    lambda n: n.gpu.wsl_driver_files,
    lambda n: dataclasses.replace(n, gpu=dataclasses.replace(n.gpu, wsl_driver_files=None)),
)
NET_INTERFACES = _node_fact(
    "net_interfaces",
    "Which network interfaces (names, states, addresses) does the node's network namespace have?",
    lambda n: n.net_interfaces,
    lambda n: dataclasses.replace(n, net_interfaces=None),
)


def _fabric(n: NodeFacts, **changes: Any) -> NodeFacts:
    return dataclasses.replace(n, fabric=dataclasses.replace(n.fabric, **changes))


NVSWITCH = _node_fact(
    "fabric.nvswitch_pci",
    "Does the node have NVSwitches (NVIDIA PCI bridge functions: lspci -d 10de: | grep -i bridge)?",
    lambda n: n.fabric.nvswitch_pci,
    lambda n: _fabric(n, nvswitch_pci=None),
)
FM_INSTALLED = _node_fact(
    "fabric.fm_installed",
    "Is NVIDIA Fabric Manager installed on the node (dpkg -l 'nvidia-fabricmanager*' / rpm -q nvidia-fabric-manager)?",
    lambda n: n.fabric.fm_installed,
    lambda n: _fabric(n, fm_installed=None, fm_package=None, fm_version=None),
)
FM_RUNNING = _node_fact(
    "fabric.fm_running",
    "Is Fabric Manager running on the node (systemctl is-active nvidia-fabricmanager; nvidia-smi -q shows Fabric "
    "State Completed)?",
    lambda n: n.fabric.fm_running,
    lambda n: _fabric(n, fm_running=None),
)
FM_VERSION = _node_fact(
    "fabric.fm_version",
    "Which Fabric Manager version does the node have (nv-fabricmanager --version)?",
    lambda n: n.fabric.fm_version,
    lambda n: _fabric(n, fm_version=None),
)
NVLSM = _node_fact(
    "fabric.nvlsm_installed",
    "Is the NVLink Subnet Manager installed on the node (the nvlsm package)?",
    lambda n: n.fabric.nvlsm_installed,
    lambda n: _fabric(n, nvlsm_installed=None),
)
IB_UMAD = _node_fact(
    "fabric.ib_umad_loaded",
    "Is the ib_umad module loaded on the node (/sys/class/infiniband_mad/abi_version)?",
    lambda n: n.fabric.ib_umad_loaded,
    lambda n: _fabric(n, ib_umad_loaded=None),
)


def _glibc_state(ctx: Ctx) -> State:
    if ctx.image.unknown_reason("glibc"):
        return State.UNKNOWN
    glibc = ctx.image.glibc
    if glibc is None:
        return State.ABSENT
    return State.KNOWN if glibc.version else State.PARTIAL


GLIBC = Fact(
    "image.glibc",
    "Which glibc release does the image have (libc.so.6 and its package)?",
    _glibc_state,
    _image_why("glibc"),
    blank=lambda i, n, j: (_image_unknown(i, "glibc", glibc=None), n, j),
)

# Every fact the property tests blank; a fact added here is blanked for every rule.
ALL: tuple[Fact, ...] = (
    NCCL,
    LIBIBVERBS,
    PROVIDERS,
    UCX,
    CUDA,
    COMPAT,
    PLUGINS,
    NCCL_FILES,
    NODE_RDMA,
    GPU_DRIVER,
    MEMLOCK,
    KERNEL,
    KERNEL_CMDLINE,
    PEERMEM,
    GPU_MODULE,
    NET_INTERFACES,
    NVSWITCH,
    FM_INSTALLED,
    FM_RUNNING,
    FM_VERSION,
    GDRCOPY,
    GDRDRV,
    GDRDRV_DEVICE,
)
COMPONENTS: tuple[Fact, ...] = tuple(f for f in ALL if f.vague is not None)
# The components whose unknown presence the engine evaluates under the hypothesis "present" (engine/hypothesis.py)
PRESENCE: tuple[Fact, ...] = (*(f for f in ALL if f.present is not None), GPU_WORKLOAD)


_COMPAT_DIR = "/usr/local/cuda/compat"


# Settings every nvidia/cuda base image sets (catalog nvidia_image_env: NVIDIA_VISIBLE_DEVICES=all and
# NVIDIA_DRIVER_CAPABILITIES=compute,utility on every row; NGC images inherit them). For a GPU image whose Env is not
# read, "the image does not set it" is not the default but the exception (a pip-wheel image on a plain base), so the
# hypothesis (engine/hypothesis.py) never assumes them unset: a rule deciding on them asks instead.
SET_BY_GPU_BASE_IMAGES = ("NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES")

SETTINGS_QUESTION = "Which settings does the job see (the image's Env, /etc/nccl.conf, the launch spec's env)?"


def setting(*names: str) -> Fact:
    """Whether the process sees any of these settings (job env, image Env, /etc/nccl.conf): KNOWN when one is
    set, ABSENT when none is, UNSET_BY_LAUNCH when none is, the launch spec (given, its env complete) sets none
    and the image's Env is unknown, UNKNOWN otherwise (no launch given, or a launch whose env is not all shown)."""
    return _setting_fact("setting." + "|".join(names), lambda name: name in names, names)


def each_setting(*names: str) -> tuple[Fact, ...]:
    """One setting fact per name: a rule that reasons on each one's default (unset) declares them so, and a launch
    setting one of them leaves the others' states their own."""
    return tuple(setting(n) for n in names)


def setting_prefix(prefix: str) -> Fact:
    """The same for any setting whose name starts with `prefix` (the Env lints read them all)."""
    return _setting_fact(f"setting.{prefix}*", lambda name: name.startswith(prefix), ())


def launch_leaves_unset(ctx: Ctx, names: tuple[str, ...]) -> bool:
    """The launch spec is given, shows all the env it sets (no envFrom / --env-file / shell array adding more) and
    sets none of `names`, not even with a value it does not show (from the host, a secret)."""
    job = ctx.job
    if job is None or job.env_incomplete:
        return False
    return not any(v.name in names for v in job.env)


def _setting_state(ctx: Ctx, selects: Callable[[str], bool], names: tuple[str, ...]) -> State:
    seen = set(ctx.image.env) | set(ctx.image.nccl_conf) | ({v.name for v in ctx.job.env} if ctx.job else set())
    seen |= set(ctx.family_env)  # the Env not read, its reference naming a family that sets these: inferred, set
    if any(selects(n) and ctx.setting(n) is not None for n in seen):
        # a prefix (the Env lints: every NCCL_* variable) is known whole only with the image's Env read: the launch
        # setting some of them leaves the others the image may set unknown
        return State.PARTIAL if not names and ctx.image.unknown_reason("env") else State.KNOWN
    if not ctx.image.unknown_reason("env"):
        return State.ABSENT
    return State.UNSET_BY_LAUNCH if names and launch_leaves_unset(ctx, names) else State.UNKNOWN


def _setting_why(ctx: Ctx, names: tuple[str, ...]) -> str | None:
    unread = ctx.image.unknown_reason("env")
    if unread and names and ctx.job is not None and launch_leaves_unset(ctx, names):
        return f"{ctx.job.where} does not set it; the image's Env is not read ({unread})"
    return unread


def _setting_fact(fact: str, selects: Callable[[str], bool], names: tuple[str, ...]) -> Fact:
    def blank(i: ImageFacts, n: NodeFacts, j: JobFacts | None) -> Facts:
        env = {k: v for k, v in i.env.items() if not selects(k)}
        conf = {k: v for k, v in i.nccl_conf.items() if not selects(k)}
        return _image_unknown(i, "env", env=env, nccl_conf=conf), n, j

    return Fact(
        fact,
        SETTINGS_QUESTION,
        lambda ctx: _setting_state(ctx, selects, names),
        lambda ctx: _setting_why(ctx, names),
        blank=blank,
        unset_names=tuple(names),
    )


def image_sets_none(i: ImageFacts, n: NodeFacts, j: JobFacts | None) -> Facts:
    """The hypothesis behind UNSET_BY_LAUNCH: the image's Env is read and sets nothing beyond what is known of it,
    so the settings the launch leaves unset have the libraries' defaults (engine/hypothesis.py)."""
    return dataclasses.replace(i, unknown={k: v for k, v in i.unknown.items() if k != "env"}), n, j


# Every variable the process gets (the image's Env, /etc/nccl.conf, the launch's env), whatever its name: what the
# rules comparing or linting names across libraries read.
ANY_SETTING = setting_prefix("")


def _toolkit(n: NodeFacts, **changes: Any) -> NodeFacts:
    return dataclasses.replace(n, container_toolkit=dataclasses.replace(n.container_toolkit, **changes))


CTK_INSTALLED = _node_fact(
    "container_toolkit.installed",
    "Is the NVIDIA Container Toolkit installed on the node (dpkg -l 'nvidia-container-toolkit*' / rpm -q "
    "nvidia-container-toolkit, or the GPU Operator's toolkit pod)?",
    lambda n: n.container_toolkit.installed,
    lambda n: _toolkit(n, installed=None, toolkit_version=None, libnvidia_container_version=None),
)
CTK_VERSION = _node_fact(
    "container_toolkit.toolkit_version",
    "Which NVIDIA Container Toolkit release does the node run (nvidia-ctk --version; nvidia-container-cli --version)?",
    lambda n: n.container_toolkit.toolkit_version,
    lambda n: _toolkit(n, toolkit_version=None, libnvidia_container_version=None),
)
CTK_CONFIGS = _node_fact(
    "container_toolkit.configs",
    "What do the node's toolkit config.toml files say (/etc/nvidia-container-runtime/config.toml and the GPU "
    "Operator's /usr/local/nvidia/toolkit/.config/nvidia-container-runtime/config.toml: mode, nvidia-container-cli "
    "root)?",
    lambda n: n.container_toolkit.configs,
    lambda n: _toolkit(n, configs=None),
)
CTK_CDI_SPECS = _node_fact(
    "container_toolkit.cdi_specs",
    "Which CDI specs for nvidia.com/gpu does the node have (nvidia-ctk cdi list; /etc/cdi, /var/run/cdi)?",
    lambda n: n.container_toolkit.cdi_specs,
    lambda n: _toolkit(n, cdi_specs=None),
)
MIG_INSTANCES = _node_fact(
    "mig.gpu_instances",
    "Is MIG enabled on the node's GPUs, with which instances (nvidia-smi -L lists 'MIG 1g.10gb Device 0: (UUID: "
    "MIG-...)' under each split GPU)?",
    lambda n: n.mig.gpu_instances,
    lambda n: dataclasses.replace(n, mig=dataclasses.replace(n.mig, gpu_instances=None)),
)
CONTAINER_CLI = _node_fact(
    "gpu.container_cli",
    "Is libnvidia-container's nvidia-container-cli installed on the node (command -v nvidia-container-cli)?",
    lambda n: n.gpu.container_cli,
    lambda n: dataclasses.replace(n, gpu=dataclasses.replace(n.gpu, container_cli=None)),
)


def _state(n: NodeFacts, **changes: Any) -> NodeFacts:
    return dataclasses.replace(n, state=dataclasses.replace(n.state, **changes))


YAMA_SCOPE = _node_fact(
    "state.yama_ptrace_scope",
    "What is the node's kernel.yama.ptrace_scope (sysctl kernel.yama.ptrace_scope)?",
    lambda n: n.state.yama_ptrace_scope,
    lambda n: _state(n, yama_ptrace_scope=None),
)
SHM_MODE = _node_fact(
    "state.shm_mode",
    "What mode does the node's /dev/shm have (stat -c %a /dev/shm; 1777 on a default tmpfs)?",
    lambda n: n.state.shm_mode,
    lambda n: _state(n, shm_mode=None),
)
NOUVEAU_LOADED = _node_fact(
    "state.nouveau_loaded",
    "Is the nouveau kernel module loaded on the node (lsmod | grep nouveau)?",
    lambda n: n.state.nouveau_loaded,
    lambda n: _state(n, nouveau_loaded=None),
)
IMEX_CHANNELS = _node_fact(
    "state.imex_channels",
    "Which IMEX channel devices does the node have (ls /dev/nvidia-caps-imex-channels)?",
    lambda n: n.state.imex_channels,
    lambda n: _state(n, imex_channels=None),
)
NVIDIA_CAPS = _node_fact(
    "state.nvidia_caps",
    "Which NVIDIA capability devices does the node have (ls /dev/nvidia-caps)?",
    lambda n: n.state.nvidia_caps,
    lambda n: _state(n, nvidia_caps=None),
)
RDMA_NETNS_MODE = _node_fact(
    "state.rdma_netns_mode",
    "Is the node's RDMA subsystem in shared or exclusive network-namespace mode (rdma system show; "
    "/sys/module/ib_core/parameters/netns_mode)?",
    lambda n: n.state.rdma_netns_mode,
    lambda n: _state(n, rdma_netns_mode=None),
)
DOCKER_CGROUP_DRIVER = _node_fact(
    "state.docker_cgroup_driver",
    "Which cgroup driver does Docker use on the node (docker info --format '{{.CgroupDriver}}')?",
    lambda n: n.state.docker_cgroup_driver,
    lambda n: _state(n, docker_cgroup_driver=None),
)
CONTAINERD_SYSTEMD_CGROUP = _node_fact(
    "state.containerd_systemd_cgroup",
    "Does containerd run runc with the systemd cgroup driver (SystemdCgroup in /etc/containerd/config.toml)?",
    lambda n: n.state.containerd_systemd_cgroup,
    lambda n: _state(n, containerd_systemd_cgroup=None),
)
NVIDIA_CHAR_LINKS = _node_fact(
    "state.nvidia_char_links",
    "Does the node have /dev/char links for the NVIDIA devices (ls -l /dev/char | grep nvidia; nvidia-ctk system "
    "create-dev-char-symlinks makes them)?",
    lambda n: n.state.nvidia_char_links,
    lambda n: _state(n, nvidia_char_links=None),
)
DOCKER_DEFAULT_RUNTIME = _node_fact(
    "state.docker_default_runtime",
    "What is Docker's default runtime on the node (docker info --format '{{.DefaultRuntime}}'; /etc/docker/daemon.json "
    "default-runtime)?",
    lambda n: n.state.docker_default_runtime,
    lambda n: _state(n, docker_default_runtime=None, docker_runtimes=None),
)
KERNEL_HEADERS = _node_fact(
    "state.kernel_headers",
    "Is the running kernel's build tree installed (ls /lib/modules/$(uname -r)/build; linux-headers-$(uname -r) / "
    "kernel-devel-$(uname -r))?",
    lambda n: n.state.kernel_headers,
    lambda n: _state(n, kernel_headers=None),
)
