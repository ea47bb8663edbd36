"""What every rule needs to know about one (image, node) pair, computed once.

Pure: reads facts and the matrix, never files or the network.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from ..matrix import Matrix
from ..model.image import FLAVOR_DOCA, FLAVOR_MLNX_OFED, ImageFacts, Nccl
from ..model.node import STACK_DOCA, STACK_INBOX, STACK_MLNX_OFED, STACK_NONE, NodeFacts
from ..model.report import Evidence
from ..versions.ecosystems import at_least, compare_numeric, numeric_tuple
from ..versions.mlnx import parse_mlnx

# Which copy of NCCL a process in the image loads, most likely first. A pip wheel (nvidia-nccl-cuXX)
# is what PyPI torch loads through its rpath; torch's pin names the wheel pip would install; a system
# libnccl is what source-built frameworks (NGC images) and nccl-tests link; a package record alone is last.
NCCL_ORIGIN_ORDER = ("pip", "torch-requirement", "library", "dpkg", "rpm")
_ORIGIN_WORDS = {
    "pip": "pip wheel (PyPI torch loads it through its rpath)",
    "torch-requirement": "torch's Requires-Dist pin (the wheel pip installs with torch)",
    "library": "system library (what the dynamic loader finds)",
    "dpkg": "libnccl2 package record",
    "rpm": "libnccl package record",
}
MLNX_STACKS = (STACK_MLNX_OFED, STACK_DOCA)
ENV_CONFIG_PATH = "image config Env"
NCCL_CONF_PATH = "/etc/nccl.conf"


@dataclass(frozen=True)
class Setting:
    """An NCCL setting as NCCL will see it: process Env wins over /etc/nccl.conf (NCCL's setenv does not overwrite)."""

    name: str
    value: str
    origin: str  # "env" | "nccl.conf"

    @property
    def evidence(self) -> Evidence:
        path = ENV_CONFIG_PATH if self.origin == "env" else NCCL_CONF_PATH
        return Evidence(fact=f"image.{'env' if self.origin == 'env' else 'nccl_conf'}.{self.name}", value=self.value,
                        path=path)

    @property
    def label(self) -> str:
        where = "image Env" if self.origin == "env" else "/etc/nccl.conf"
        return f"{self.name}={self.value} ({where})"

    def as_int(self) -> int | None:
        """The value the way NCCL's strtoll(str, NULL, 0) reads it, or None if NCCL would fall back to its default."""
        text = self.value.strip()
        try:
            return int(text, 0)
        except ValueError:
            return None


def series_of(version: str | None) -> str | None:
    """'23.10-1.1.9.0' -> '23.10', '5.8-3.0.7.0' -> '5.8' (MLNX_OFED / DOCA-OFED release series)."""
    nums = numeric_tuple(version or "")
    return f"{nums[0]}.{nums[1]}" if len(nums) >= 2 else None


class Ctx:
    def __init__(self, image: ImageFacts, node: NodeFacts, matrix: Matrix):
        self.image = image
        self.node = node
        self.matrix = matrix

    # ---------- NCCL in the image ----------
    @cached_property
    def nccl(self) -> Nccl | None:
        candidates = [n for n in self.image.nccl if n.version and numeric_tuple(n.version)]
        if not candidates:
            return None
        rank = {origin: i for i, origin in enumerate(NCCL_ORIGIN_ORDER)}
        return sorted(candidates, key=lambda n: rank.get(n.origin or "", len(rank)))[0]

    def nccl_evidence(self) -> list[Evidence]:
        chosen = self.nccl
        if chosen is None:
            return []
        why = _ORIGIN_WORDS.get(chosen.origin or "", chosen.origin or "unknown origin")
        others = [f"{n.origin} {n.version} at {n.path}" for n in self.image.nccl if n is not chosen]
        selection = f"used: {why}" + (f"; also present: {', '.join(others)}" if others else "")
        return [Evidence("image.nccl.version", chosen.version, chosen.path, chosen.layer),
                Evidence("image.nccl.selection", selection, chosen.path, chosen.layer)]

    @cached_property
    def gpu_image(self) -> bool:
        """The image looks like a GPU workload (CUDA, NCCL or torch), so NCCL-dependent rules apply to it."""
        return bool(self.image.nccl or self.image.cuda or any(p.name == "torch" for p in self.image.packages))

    def nccl_at_least(self, feature: str) -> bool | None:
        row = self.matrix.need("nccl_features", feature=feature)
        if self.nccl is None:
            return None
        if not at_least(self.nccl.version, row["nccl_min"]):
            return False
        below = row.get("nccl_below")
        return True if below is None else compare_numeric(self.nccl.version, below) < 0

    def nccl_unknown_reason(self) -> str:
        return ("no NCCL found in the image (it may be linked statically into the framework); "
                "give the NCCL version with a facts file to decide")

    # ---------- settings ----------
    def setting(self, name: str) -> Setting | None:
        if name in self.image.env:
            return Setting(name, self.image.env[name], "env")
        if name in self.image.nccl_conf:
            return Setting(name, self.image.nccl_conf[name], "nccl.conf")
        return None

    def setting_int(self, name: str, default: int) -> int:
        s = self.setting(name)
        value = s.as_int() if s else None
        return default if value is None else value

    # ---------- libibverbs ----------
    @property
    def lib(self):
        return self.image.rdma.libibverbs

    def lib_evidence(self, fact: str, value) -> Evidence:
        lib = self.lib
        return Evidence(f"image.rdma.libibverbs.{fact}", value, lib.path if lib else None, lib.layer if lib else None)

    @cached_property
    def relaxed_ordering(self) -> bool | None:
        """Whether NCCL sets IBV_ACCESS_RELAXED_ORDERING (and so registers through ibv_reg_mr_iova2)."""
        if self.lib is None:
            return False
        newer = self.nccl_at_least("relaxed_ordering_iova2")
        if newer is None:
            return None
        return newer and self.setting_int("NCCL_IB_PCI_RELAXED_ORDERING", 2) in (1, 2) and self.lib.has_reg_mr_iova2

    @property
    def reg_fn(self) -> str:
        """The registration call NCCL's warning will name for a non-DMA-BUF buffer."""
        return "ibv_reg_mr_iova2" if self.relaxed_ordering else "ibv_reg_mr"

    # ---------- node ----------
    def node_ev(self, fact: str, value, path: str | None = None) -> Evidence:
        return Evidence(f"node.{fact}", value, path)

    def unknown_why(self, fact: str) -> str:
        reason = self.node.unknown.get(fact)
        return f"node fact {fact} is unknown" + (f" ({reason})" if reason else "")

    def stack_evidence(self) -> list[Evidence]:
        """The node's RDMA stack and the version that matters for it (kernel for inbox, OFED for MLNX/DOCA)."""
        evidence = [self.node_ev("rdma.stack", self.node.rdma.stack)]
        if self.node.rdma.stack in MLNX_STACKS:
            evidence.append(self.node_ev("rdma.ofed_version", self.node.rdma.ofed_version))
        else:
            evidence.append(self.node_ev("kernel.release", self.node.kernel.release, "/proc/sys/kernel/osrelease"))
        return evidence

    @cached_property
    def node_has_rdma(self) -> bool | None:
        rdma = self.node.rdma
        if rdma.devices or rdma.stack in (STACK_INBOX, STACK_MLNX_OFED, STACK_DOCA):
            return True
        if rdma.stack == STACK_NONE:
            return False
        return None

    @property
    def node_mlnx(self) -> bool | None:
        stack = self.node.rdma.stack
        return None if stack is None else stack in MLNX_STACKS

    @cached_property
    def node_uses_mlx5(self) -> bool | None:
        rdma = self.node.rdma
        if rdma.devices:
            return any(self._provider_of(d) == "mlx5" for d in rdma.devices)
        if rdma.stack in MLNX_STACKS:
            return True  # MLNX_OFED / DOCA-OFED drive ConnectX (mlx5) adapters
        if rdma.stack == STACK_NONE:
            return False
        return None

    @staticmethod
    def _provider_of(device) -> str | None:
        name = device.name or ""
        if name.startswith("mlx5") or (device.hca_type or "").upper().startswith("MT"):
            return "mlx5"
        return name.split("_", 1)[0] or None

    def node_providers(self) -> set[str] | None:
        if self.node.rdma.devices:
            return {p for p in (self._provider_of(d) for d in self.node.rdma.devices) if p}
        return {"mlx5"} if self.node_uses_mlx5 else None

    @property
    def hca(self) -> str:
        devices = self.node.rdma.devices
        return (devices[0].name if devices and devices[0].name else "mlx5_0")

    @cached_property
    def node_has_gpu(self) -> bool | None:
        gpu = self.node.gpu
        if gpu.driver_version or gpu.gpus:
            return True
        return None

    def driver_branch(self) -> str | None:
        nums = numeric_tuple(self.node.gpu.driver_version or "")
        return str(nums[0]) if nums else None

    def stack_version_of_node(self) -> str | None:
        """The number compared with kernel_rdma_features.min_version for this node's stack."""
        if self.node.rdma.stack == STACK_INBOX:
            return self.node.kernel.release
        if self.node.rdma.stack in MLNX_STACKS:
            return self.node.rdma.ofed_version
        return None

    def node_has_feature(self, feature: str) -> tuple[bool | None, str]:
        """(supported?, words) for a kernel RDMA feature on this node's stack."""
        stack = self.node.rdma.stack
        if stack not in (STACK_INBOX, *MLNX_STACKS):
            return None, self.unknown_why("rdma.stack")
        row = self.matrix.need("kernel_rdma_features", feature=feature,
                               stack=STACK_INBOX if stack == STACK_INBOX else STACK_MLNX_OFED)
        version = self.stack_version_of_node()
        what = "kernel" if stack == STACK_INBOX else f"{stack} release"
        if row.get("min_version") is None:
            return False, f"the {stack} stack has no {feature.replace('_', ' ')}"
        if version is None:
            fact = "kernel.release" if stack == STACK_INBOX else "rdma.ofed_version"
            return None, self.unknown_why(fact)
        ok = at_least(version, row["min_version"])
        if ok is None:
            return None, f"cannot compare {what} {version!r} with {row['min_version']}"
        return ok, f"{what} {version} {'>=' if ok else '<'} {row['min_version']}"

    # ---------- GPUDirect ----------
    @cached_property
    def nic_dmabuf(self) -> tuple[bool | None, str]:
        lib = self.lib
        if lib is None:
            return False, "the image has no libibverbs"
        if not lib.has_reg_dmabuf_mr:
            return False, f"the image's libibverbs {lib.version or ''} lacks ibv_reg_dmabuf_mr@IBVERBS_1.12 (rdma-core < 34)"
        ok, why = self.node_has_feature("dmabuf_mr")
        if ok is False:
            return False, f"the node cannot register DMA-BUF memory ({why})"
        return ok, why

    @cached_property
    def dmabuf_usable(self) -> tuple[bool | None, str]:
        """Whether NCCL will use DMA-BUF for GPU buffers on this node, and why (not)."""
        newer = self.nccl_at_least("dmabuf")
        if newer is None:
            return None, self.nccl_unknown_reason()
        if not newer:
            return False, f"NCCL {self.nccl.version} predates DMA-BUF support (2.13)"
        s = self.setting("NCCL_DMABUF_ENABLE")
        if s is not None and s.as_int() == 0:
            return False, f"{s.label} disables it"
        module = self.node.gpu.kernel_module
        if module is None:
            return None, self.unknown_why("gpu.kernel_module")
        if module != "open":
            return False, "the GPU driver uses the proprietary kernel modules (DMA-BUF export needs the open ones)"
        return self.nic_dmabuf

    @cached_property
    def peermem_visible(self) -> tuple[bool | None, str]:
        """Whether NCCL's own GDR check (version-dependent) finds a peer-memory module on this node."""
        pm = self.node.gpu.peermem
        peers_dir = self.node.rdma.peer_memory_api
        if pm.legacy_nv_peer_mem:
            return True, "the legacy nv_peer_mem / memory_peers/nv_mem entry exists"
        if pm.loaded is None:
            return None, self.unknown_why("gpu.peermem.loaded")
        if not pm.loaded:
            return False, "nvidia-peermem is not loaded"
        modern = self.nccl_at_least("gdr_module_sysfs_check")
        if modern is None:
            return None, self.nccl_unknown_reason()
        if modern:
            return True, "nvidia-peermem is loaded (/sys/module/nvidia_peermem/version)"
        if peers_dir is None:
            return None, self.unknown_why("rdma.peer_memory_api")
        if peers_dir:
            return True, "nvidia-peermem is registered under /sys/kernel/mm/memory_peers"
        return False, (f"NCCL {self.nccl.version} only checks /sys/kernel/mm/memory_peers, "
                       "which this node's stack does not create")

    def image_ofed(self) -> tuple[str | None, Evidence | None]:
        """(release series, evidence) of the MLNX/DOCA userspace in the image."""
        rdma = self.image.rdma
        if rdma.flavor not in (FLAVOR_MLNX_OFED, FLAVOR_DOCA):
            return None, None
        if rdma.ofed_version and series_of(rdma.ofed_version):
            return series_of(rdma.ofed_version), Evidence("image.rdma.ofed_version", rdma.ofed_version,
                                                          rdma.ofed_source, None)
        for pkg in rdma.packages:
            parsed = parse_mlnx(pkg.version) if "mlnx" in pkg.version else None
            if parsed and parsed.series:
                return parsed.series, Evidence(f"image.rdma.packages.{pkg.name}", pkg.version, pkg.path, pkg.layer)
        return None, None
