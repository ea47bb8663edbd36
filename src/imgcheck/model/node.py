"""Facts about one node, as `imgcheck node probe` records them (or a person writes them by hand).

Every field may be None: None means unknown, and `unknown` says why where the probe knows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

NODE_SCHEMA_VERSION = 1

STACK_INBOX = "inbox"
STACK_MLNX_OFED = "mlnx_ofed"
STACK_DOCA = "doca"
STACK_NONE = "none"


@dataclass(frozen=True)
class Kernel:
    release: str | None = None


@dataclass(frozen=True)
class NodeOs:
    id: str | None = None
    version_id: str | None = None


@dataclass(frozen=True)
class KernelModule:
    version: str | None = None
    srcversion: str | None = None
    out_of_tree: bool | None = None
    path: str | None = None


@dataclass(frozen=True)
class RdmaPort:
    port: int | None = None
    state: str | None = None
    phys_state: str | None = None
    link_layer: str | None = None
    rate: str | None = None


@dataclass(frozen=True)
class RdmaDevice:
    name: str | None = None
    hca_type: str | None = None
    fw_ver: str | None = None
    board_id: str | None = None
    link_layer: str | None = None
    ports: tuple[RdmaPort, ...] = ()
    uverbs_abi: int | None = None


@dataclass(frozen=True)
class NodeRdma:
    stack: str | None = None  # inbox | mlnx_ofed | doca | none
    ofed_version: str | None = None
    modules: dict[str, KernelModule] = field(default_factory=dict)
    uverbs_abi: int | None = None
    peer_memory_api: bool | None = None  # /sys/kernel/mm/memory_peers exists
    devices: tuple[RdmaDevice, ...] = ()


@dataclass(frozen=True)
class Peermem:
    loaded: bool | None = None  # nvidia_peermem module loaded
    version: str | None = None
    legacy_nv_peer_mem: bool | None = None  # nv_peer_mem / memory_peers/nv_mem present


@dataclass(frozen=True)
class Gpu:
    index: int | None = None
    name: str | None = None
    pci_bus_id: str | None = None
    uuid: str | None = None


@dataclass(frozen=True)
class NodeGpu:
    driver_version: str | None = None
    kernel_module: str | None = None  # open | proprietary
    peermem: Peermem = field(default_factory=Peermem)
    gpus: tuple[Gpu, ...] = ()
    cuda_driver_version: str | None = None  # the CUDA version the driver supports, when known


@dataclass(frozen=True)
class Limits:
    memlock_kib: int | None = None  # None also when unlimited is not known; -1 means unlimited


@dataclass(frozen=True)
class NodeFacts:
    name: str
    collected_at: str | None = None
    kernel: Kernel = field(default_factory=Kernel)
    os: NodeOs = field(default_factory=NodeOs)
    rdma: NodeRdma = field(default_factory=NodeRdma)
    gpu: NodeGpu = field(default_factory=NodeGpu)
    limits: Limits = field(default_factory=Limits)
    labels: dict[str, str] = field(default_factory=dict)
    arch: str | None = None  # e.g. amd64, arm64 (for --platform defaults)
    unknown: dict[str, str] = field(default_factory=dict)  # fact -> why it is unknown
    schema_version: int = NODE_SCHEMA_VERSION
    notes: dict[str, str] = field(default_factory=dict)  # fact -> how it was decided / what it means
