"""Facts read from a container image. Every fact that comes from a file names its path and layer."""

from __future__ import annotations

from dataclasses import dataclass, field

IMAGE_SCHEMA_VERSION = 1

# Userspace RDMA stack flavours, in the words of DESIGN.md.
FLAVOR_INBOX = "inbox"
FLAVOR_MLNX_OFED = "mlnx_ofed"
FLAVOR_DOCA = "doca"
FLAVOR_NONE = "none"


@dataclass(frozen=True)
class OsRelease:
    id: str | None = None
    version_id: str | None = None
    pretty_name: str | None = None
    path: str | None = None
    layer: str | None = None


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    db: str  # dpkg | rpm | apk | pip
    path: str | None = None
    layer: str | None = None


@dataclass(frozen=True)
class Libibverbs:
    version: str | None  # the file's version suffix, e.g. "1.14.44.0"
    rdma_core: str | None  # e.g. "44.0" (from the file name) or the package's base for MLNX forks
    symbol_versions: tuple[str, ...] = ()
    private_abi: int | None = None  # N of IBVERBS_PRIVATE_N
    has_reg_mr_iova2: bool = False  # IBVERBS_1.8
    has_reg_dmabuf_mr: bool = False  # IBVERBS_1.12
    soname: str | None = None
    path: str | None = None
    layer: str | None = None


@dataclass(frozen=True)
class Provider:
    name: str  # mlx5, efa, ...
    pabi: int | None  # N of lib<name>-rdmavN.so
    path: str
    layer: str | None = None
    driver_file: str | None = None  # /etc/libibverbs.d/<name>.driver naming it
    private_abi_needed: int | None = None  # IBVERBS_PRIVATE_N the provider's ELF binds to
    version: str | None = None  # e.g. libmlx5.so.1.24.44.0 -> "1.24.44.0"
    symbol_versions: tuple[str, ...] = ()  # MLX5_1.x for mlx5


@dataclass(frozen=True)
class RdmaFacts:
    libibverbs: Libibverbs | None = None
    providers: tuple[Provider, ...] = ()
    flavor: str = FLAVOR_NONE
    ofed_version: str | None = None  # MLNX_OFED/DOCA release, e.g. "23.10-1.1.9.0"
    ofed_source: str | None = None  # where the release came from (ofed_info, package version, ...)
    packages: tuple[Package, ...] = ()  # the RDMA-related packages


@dataclass(frozen=True)
class Ucx:
    version: str | None
    path: str | None = None
    layer: str | None = None
    origin: str | None = None  # dpkg | rpm | ucx.pc | hpcx


@dataclass(frozen=True)
class Nccl:
    version: str | None
    path: str | None = None
    layer: str | None = None
    origin: str | None = None  # library | dpkg | rpm | pip | torch-requirement


@dataclass(frozen=True)
class Cuda:
    version: str | None = None  # toolkit version, e.g. "12.4.1"
    path: str | None = None
    layer: str | None = None
    origin: str | None = None  # version.json | version.txt | env
    compat_driver: str | None = None  # forward-compat libcuda.so.<ver>
    compat_path: str | None = None
    require_cuda: str | None = None  # NVIDIA_REQUIRE_CUDA


@dataclass(frozen=True)
class Hpcx:
    version: str | None
    path: str | None = None
    layer: str | None = None


@dataclass(frozen=True)
class LayerInfo:
    digest: str  # the blob as stored/transported
    media_type: str | None = None
    size: int | None = None
    diff_id: str | None = None  # uncompressed digest: what facts' `layer` fields name


@dataclass(frozen=True)
class ImageFacts:
    reference: str
    digest: str | None = None
    platform: str | None = None
    os: OsRelease = field(default_factory=OsRelease)
    rdma: RdmaFacts = field(default_factory=RdmaFacts)
    ucx: Ucx | None = None
    nccl: tuple[Nccl, ...] = ()
    cuda: Cuda | None = None
    hpcx: Hpcx | None = None
    env: dict[str, str] = field(default_factory=dict)
    nccl_conf: dict[str, str] = field(default_factory=dict)  # /etc/nccl.conf, read by NCCL like Env
    packages: tuple[Package, ...] = ()
    layers: tuple[LayerInfo, ...] = ()
    notes: tuple[str, ...] = ()  # what could not be read, and why
    schema_version: int = IMAGE_SCHEMA_VERSION
    # fact path ("rdma.libibverbs", "cuda.compat_driver") -> why it is unknown. inspect writes every fact
    # explicitly (null = looked, found none); a hand-written facts file or a catalog row that leaves a key
    # out leaves that fact unknown, never absent (DESIGN.md "Known and unknown").
    unknown: dict[str, str] = field(default_factory=dict)

    def unknown_reason(self, fact: str) -> str | None:
        """Why `fact` (or the object holding it) is unknown, or None when it is known."""
        parts = fact.split(".")
        for i in range(len(parts), 0, -1):
            reason = self.unknown.get(".".join(parts[:i]))
            if reason is not None:
                return reason
        return None
