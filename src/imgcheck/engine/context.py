"""What every rule needs to know about one (image, node) pair, computed once.

Pure: reads facts and the matrix, never files or the network.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from ..knowledge import cuda as cuda_k
from ..knowledge import gpu_frameworks, gpudirect, image_rdma, providers
from ..knowledge import image_env as image_env_k
from ..knowledge import nccl as nccl_k
from ..knowledge import settings as settings_k
from ..knowledge import stack as stack_k
from ..matrix import Matrix
from ..model.image import FLAVOR_DOCA, FLAVOR_MLNX_OFED, ImageFacts, Libibverbs, Nccl
from ..model.location import Location
from ..model.node import STACK_DOCA, STACK_INBOX, STACK_MLNX_OFED, STACK_NONE, NodeFacts, RdmaDevice
from ..model.report import Evidence, EvidenceValue, node_evidence
from ..versions.mlnx import parse_mlnx

if TYPE_CHECKING:
    from ..job import JobFacts

# The knowledge module holds the derived facts; these names stay for the rule families that import them.
NCCL_ORIGIN_ORDER = nccl_k.NCCL_ORIGIN_ORDER
_ORIGIN_WORDS = nccl_k.ORIGIN_WORDS
MLNX_STACKS = stack_k.MLNX_STACKS
ENV_CONFIG_PATH = settings_k.ENV_CONFIG_PATH
NCCL_CONF_PATH = settings_k.NCCL_CONF_PATH
Setting = settings_k.Setting
series_of = stack_k.release_series
# how an undecided rule starts when NCCL is present and only its version is missing (engine/hypothesis.py reads it
# as the NCCL question itself, not a further one)
NCCL_VERSION_UNKNOWN = "NCCL is in the image "


def _source_location(source: str | None) -> Location | None:
    """RdmaFacts.ofed_source: a file in the image ("/usr/bin/ofed_info") or words ("package libibverbs1 ...")."""
    if not source:
        return None
    return Location.file(source) if source.startswith("/") else Location.described(source)


class Ctx:
    """Derived facts for one (image, node) pair; the derivations live in imgcheck.knowledge."""

    def __init__(self, image: ImageFacts, node: NodeFacts, matrix: Matrix, job: JobFacts | None = None) -> None:
        self.image = image
        self.node = node
        self.matrix = matrix
        self.job = job  # the launch spec's container (imgcheck.job.JobFacts), None when no spec was given

    # ---------- NCCL in the image ----------
    @cached_property
    def nccl(self) -> Nccl | None:
        return nccl_k.nccl_in_use(self.image)

    @cached_property
    def nccl_present(self) -> bool | None:
        """NCCL is in the image (a copy whose version is unknown included), absent, or unknown: rules that need
        only its presence (not its version) decide on this, never on `nccl` being None."""
        if self.image.nccl:
            return True
        return None if self.image.unknown_reason("nccl") else False

    def nccl_evidence(self) -> list[Evidence]:
        chosen = self.nccl
        if chosen is None:  # present with its version unknown: say so
            return [Evidence("image.nccl.version", None, n.location) for n in self.image.nccl[:1]]
        return [
            Evidence("image.nccl.version", chosen.version, chosen.location),
            Evidence("image.nccl.selection", nccl_k.selection_words(self.image, chosen), chosen.location),
        ]

    @cached_property
    def gpu_image(self) -> bool:
        """The image looks like a GPU workload (CUDA, NCCL or torch), so NCCL-dependent rules apply to it."""
        return bool(
            self.image.nccl or self.image.cuda or any(gpu_frameworks.runs_gpu_code(p) for p in self.image.packages)
        )

    def nccl_at_least(self, feature: str) -> bool | None:
        """Whether the image's NCCL has `feature` (None: no NCCL, or a partial version straddling the bound)."""
        return nccl_k.has_feature(self.matrix, self.nccl.version if self.nccl else None, feature)

    def nccl_floor(self, feature: str) -> str:
        return nccl_k.feature_floor(self.matrix, feature)

    def nccl_unknown_reason(self, feature: str | None = None) -> str:
        version = self.nccl.version if self.nccl else None
        if version is None and self.image.nccl:  # present, version unknown: never "no NCCL"
            where = ", ".join(n.path or n.origin or "?" for n in self.image.nccl)
            return f"{NCCL_VERSION_UNKNOWN}({where}) but its version is unknown; give the version with a facts file to decide"
        if feature is None or version is None:
            return gpudirect.nccl_why(self.matrix, None, "dmabuf")
        return gpudirect.nccl_why(self.matrix, version, feature)

    # ---------- settings ----------
    @cached_property
    def family_env(self) -> dict[str, image_env_k.InferredVar]:
        """What the image's NVIDIA family (named by its reference) sets, when the image's own Env is not read."""
        return image_env_k.family_env(self.matrix, self.image)

    def image_env(self, name: str) -> tuple[str, Evidence] | None:
        """`name` in the image's Env with its evidence: as read, or (the Env not read) as the image's NVIDIA family
        sets it, the evidence saying it is inferred and from which catalog row. None: not set, or not known."""
        value = self.image.env.get(name)
        if value is not None:
            return value, Evidence(f"image.env.{name}", value, settings_k.IMAGE_ENV)
        inferred = self.family_env.get(name)
        if inferred is not None:
            return inferred.value, Evidence(f"image.env.{name}", inferred.value, Location.described(inferred.words))
        return None

    def setting(self, name: str) -> Setting | None:
        found = settings_k.resolve(name, self.image, job=self.job)
        inferred = self.family_env.get(name)
        if found is None and inferred is not None and name not in self.image.nccl_conf:
            return Setting(name, inferred.value, settings_k.ORIGIN_INFERRED, inferred.words)
        return found

    @cached_property
    def ib_disabled_by(self) -> Setting | None:
        """The setting that turns NCCL's IB transport off, if any: NCCL_IB_DISABLE other than 0, or NCCL_NET=Socket
        (NCCL picks the network whose name equals NCCL_NET, ignoring case: src/plugin/net.cc)."""
        ib = self.setting("NCCL_IB_DISABLE")
        if ib is not None and (ib.as_int() or 0) != 0:
            return ib
        net = self.setting("NCCL_NET")
        if net is not None and net.value.strip().lower() == "socket":
            return net
        return None

    def setting_int(self, name: str, default: int) -> int:
        s = self.setting(name)
        value = s.as_int() if s else None
        return default if value is None else value

    # ---------- libibverbs ----------
    @property
    def lib(self) -> Libibverbs | None:
        return self.image.rdma.libibverbs

    @cached_property
    def lib_unknown(self) -> str | None:
        """Why it is unknown whether the image has libibverbs (None: known either way)."""
        return image_rdma.libibverbs(self.image)[1]

    def lib_has(self, function: str) -> bool | None:
        return image_rdma.lib_has(self.matrix, self.image, function)

    def lib_first_release(self, function: str) -> str:
        return image_rdma.first_release(self.matrix, function)

    def image_unknown(self, fact: str) -> str | None:
        return self.image.unknown_reason(fact)

    def lib_evidence(self, fact: str, value: EvidenceValue) -> Evidence:
        lib = self.lib
        return Evidence(f"image.rdma.libibverbs.{fact}", value, lib.location if lib else None)

    @cached_property
    def relaxed_ordering(self) -> bool | None:
        """Whether NCCL sets IBV_ACCESS_RELAXED_ORDERING (and so registers through ibv_reg_mr_iova2)."""
        if self.lib is None:
            return None if self.lib_unknown else False
        newer = self.nccl_at_least("relaxed_ordering_iova2")
        if newer is None:
            return None
        if not newer or self.setting_int("NCCL_IB_PCI_RELAXED_ORDERING", 2) not in (1, 2):
            return False
        return self.lib_has("ibv_reg_mr_iova2")

    @property
    def reg_fn(self) -> str:
        """The registration call NCCL's warning will name for a non-DMA-BUF buffer."""
        if self.relaxed_ordering is None:
            return "ibv_reg_mr / ibv_reg_mr_iova2"
        return "ibv_reg_mr_iova2" if self.relaxed_ordering else "ibv_reg_mr"

    # ---------- node ----------
    def node_ev(self, fact: str, value: EvidenceValue) -> Evidence:
        """Evidence of a node fact, located where the node's reader read it; rules never name a node path."""
        return node_evidence(self.node, fact, value)

    def unknown_why(self, fact: str) -> str:
        return stack_k.unknown_why(self.node, fact)

    def stack_evidence(self) -> list[Evidence]:
        """The node's RDMA stack and the version that matters for it (kernel for inbox, OFED for MLNX/DOCA)."""
        evidence = [self.node_ev("rdma.stack", self.node.rdma.stack)]
        if self.node.rdma.stack in MLNX_STACKS:
            evidence.append(self.node_ev("rdma.ofed_version", self.node.rdma.ofed_version))
        else:
            evidence.append(self.node_ev("kernel.release", self.node.kernel.release))
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
            found = [providers.provider_of(d) for d in rdma.devices]
            if "mlx5" in found:
                return True
            return None if None in found else False
        if rdma.stack in MLNX_STACKS:
            return True  # MLNX_OFED / DOCA-OFED drive ConnectX (mlx5) adapters
        if rdma.stack == STACK_NONE:
            return False
        return None

    @staticmethod
    def _provider_of(device: RdmaDevice) -> str | None:
        return providers.provider_of(device)

    def node_providers(self) -> set[str] | None:
        if self.node.rdma.devices:
            return providers.providers_of(self.node.rdma.devices)
        return {"mlx5"} if self.node_uses_mlx5 else None

    @cached_property
    def image_lacks_node_providers(self) -> bool:
        """The image's providers (known) include none the node's devices need (known): libibverbs exposes no
        device, so nothing above the verbs layer is reached (RDMA-NO-MLX5-PROVIDER / RDMA-PABI-MISMATCH say so)."""
        used = self.node_providers()
        if not used or self.image_unknown("rdma.providers"):
            return False
        return not (used & {p.name for p in self.image.rdma.providers})

    @property
    def hca(self) -> str:
        devices = self.node.rdma.devices
        return devices[0].name if devices and devices[0].name else "mlx5_0"

    @cached_property
    def node_has_gpu(self) -> bool | None:
        gpu = self.node.gpu
        if gpu.driver_version or gpu.gpus:
            return True
        return None

    def driver_branch(self) -> str | None:
        return cuda_k.branch(self.node.gpu.driver_version)

    def stack_version_of_node(self) -> str | None:
        """The number compared with kernel_rdma_features.min_version for this node's stack."""
        return stack_k.stack_version(self.node)

    def node_has_feature(self, feature: str) -> tuple[bool | None, str]:
        """(supported?, words) for a kernel RDMA feature on this node's stack."""
        return stack_k.node_has_feature(self.matrix, self.node, feature)

    def stack_floor(self, feature: str, stack: str | None = None) -> str | None:
        return stack_k.feature_floor(self.matrix, feature, stack or self.node.rdma.stack)

    @cached_property
    def memory_peers_api(self) -> tuple[bool | None, str]:
        """/sys/kernel/mm/memory_peers on the node: seen, or inferred from the stack and release (words say which)."""
        return stack_k.memory_peers_api(self.matrix, self.node)

    # ---------- GPUDirect ----------
    @cached_property
    def nic_dmabuf(self) -> tuple[bool | None, str]:
        lib = self.lib
        present = True if lib is not None else (None if self.lib_unknown else False)
        return gpudirect.nic_dmabuf(
            self.matrix,
            self.node,
            present,
            self.lib_has("ibv_reg_dmabuf_mr"),
            lib.version if lib else None,
            self.lib_first_release("ibv_reg_dmabuf_mr"),
        )

    @cached_property
    def dmabuf_usable(self) -> tuple[bool | None, str]:
        """Whether NCCL will use DMA-BUF for GPU buffers on this node, and why (not)."""
        return gpudirect.dmabuf_usable(
            self.matrix,
            self.node,
            self.nccl.version if self.nccl else None,
            self.setting("NCCL_DMABUF_ENABLE"),
            self.nic_dmabuf,
        )

    @cached_property
    def peermem_visible(self) -> tuple[bool | None, str]:
        """Whether NCCL's own GDR check (version-dependent) finds a peer-memory module on this node."""
        return gpudirect.peermem_visible(self.matrix, self.node, self.nccl.version if self.nccl else None)

    def image_ofed(self) -> tuple[str | None, Evidence | None]:
        """(release series, evidence) of the MLNX/DOCA userspace in the image."""
        rdma = self.image.rdma
        if rdma.flavor not in (FLAVOR_MLNX_OFED, FLAVOR_DOCA):
            return None, None
        if rdma.ofed_version and series_of(rdma.ofed_version):
            return series_of(rdma.ofed_version), Evidence(
                "image.rdma.ofed_version", rdma.ofed_version, _source_location(rdma.ofed_source)
            )
        for pkg in rdma.packages:
            parsed = parse_mlnx(pkg.version) if "mlnx" in pkg.version else None
            if parsed and parsed.series:
                return parsed.series, Evidence(f"image.rdma.packages.{pkg.name}", pkg.version, pkg.location)
        return None, None
