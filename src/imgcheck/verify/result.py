"""The verifier's JSON document (csrc/verifier.c) as frozen dataclasses, and its parser."""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import safejson
from ..errors import BadInputError
from ..model.serde import from_dict

VERIFIER_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Memlock:
    soft: int | None = None  # bytes; -1 = unlimited
    hard: int | None = None


@dataclass(frozen=True)
class Sysfs:
    uverbs_abi_version: str | None = None
    class_infiniband: tuple[str, ...] | None = None  # None: the directory does not exist
    class_infiniband_verbs: tuple[str, ...] | None = None
    dev_infiniband: tuple[str, ...] | None = None


@dataclass(frozen=True)
class OpenAttempt:
    name: str
    ok: bool
    error: str | None = None


@dataclass(frozen=True)
class LibibverbsLoad:
    tried: tuple[OpenAttempt, ...] = ()
    opened: str | None = None  # the name dlopen succeeded with
    path: str | None = None
    real_path: str | None = None  # e.g. /usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0
    private_abi: int | None = None  # N of verbs_register_driver_N@IBVERBS_PRIVATE_N

    @property
    def file_version(self) -> str | None:
        """'1.14.44.0' from libibverbs.so.1.14.44.0, as the static extractor names it."""
        if not self.real_path:
            return None
        base = self.real_path.rsplit("/", 1)[-1]
        prefix = "libibverbs.so."
        return base[len(prefix) :] if base.startswith(prefix) and base != prefix else None


@dataclass(frozen=True)
class SymbolLookup:
    name: str
    version: str
    required_by_nccl: bool
    found: bool


@dataclass(frozen=True)
class DeviceList:
    list_ok: bool = False
    errno: int = 0
    errno_name: str | None = None
    message: str | None = None
    count: int = 0


@dataclass(frozen=True)
class ProviderLoad:
    driver_file: str
    name: str | None = None
    library: str | None = None
    exists: bool | None = None
    loaded: bool | None = None
    error: str | None = None


@dataclass(frozen=True)
class Providers:
    config_dir: str | None = None
    provider_dir: str | None = None
    drivers: tuple[ProviderLoad, ...] = ()
    other_abi_files: tuple[str, ...] = ()


@dataclass(frozen=True)
class Step:
    ok: bool
    errno: int = 0
    errno_name: str | None = None
    message: str | None = None


@dataclass(frozen=True)
class Registration:
    memory: str  # host | gpu:cuMemAlloc | gpu:cuMemCreate
    label: str  # base | base+ro | base+atomic+ro
    call: str  # ibv_reg_mr | ibv_reg_mr_iova2 | ibv_reg_dmabuf_mr
    access: int
    access_names: str
    why: str
    symbol_available: bool
    ok: bool
    errno: int = 0
    errno_name: str | None = None
    message: str | None = None
    length: int | None = None  # bytes registered (None: a verifier that did not say)

    def nccl_message(self) -> str | None:
        """The line NCCL would log for this failure (misc/ibvwrap.cc)."""
        if self.ok or not self.symbol_available:
            return None
        return f"NCCL WARN Call to {self.call} failed with error {self.message or self.errno_name}"


@dataclass(frozen=True)
class DmabufProbe:
    symbol_available: bool
    supported: bool
    errno: int = 0
    errno_name: str | None = None
    message: str | None = None


@dataclass(frozen=True)
class Bar1Sweep:
    """GPU memory registered in NCCL-sized chunks, every MR kept, until the driver refused or all fit."""

    memory: str
    chunk_bytes: int
    target_bytes: int
    registered: int = 0
    registered_bytes: int = 0
    failure: Registration | None = None


@dataclass(frozen=True)
class MemlockProbe:
    """Host registrations below and above RLIMIT_MEMLOCK without CAP_IPC_LOCK, as the image's user."""

    status: str  # tested | not testable
    detail: str | None = None
    uid: int | None = None
    cap_ipc_lock: bool | None = None  # held when the verifier started
    dropped_cap_ipc_lock: bool | None = None
    registrations: tuple[Registration, ...] = ()


@dataclass(frozen=True)
class DataDirect:
    """mlx5dv_get_data_direct_sysfs_path on the device: 0 means a Data Direct device NCCL >= 2.27.3 would use."""

    rc: int
    rc_name: str | None = None
    sysfs_path: str | None = None


@dataclass(frozen=True)
class Mlx5dv:
    """The image's libmlx5 as NCCL >= 2.27.3 loads it: the Data Direct API at MLX5_1.25 (rdma-core >= 54.0)."""

    opened: str | None = None
    reg_dmabuf_mr: bool = False
    get_data_direct_sysfs_path: bool = False


@dataclass(frozen=True)
class DeviceResult:
    name: str | None
    open: Step
    alloc_pd: Step | None = None
    registrations: tuple[Registration, ...] = ()
    dmabuf_probe: DmabufProbe | None = None
    bar1_sweep: Bar1Sweep | None = None
    memlock_probe: MemlockProbe | None = None
    data_direct: DataDirect | None = None  # None: libmlx5 lacks the API, or the device could not be opened


@dataclass(frozen=True)
class CuResult:
    code: int
    name: str | None = None


@dataclass(frozen=True)
class GpuBuffer:
    memory: str
    alloc: CuResult | None = None
    dmabuf_export: CuResult | None = None
    dmabuf_export_pcie: CuResult | None = None  # with CU_MEM_RANGE_FLAG_DMA_BUF_MAPPING_TYPE_PCIE
    gpu_direct_rdma_capable_flag: bool | None = None
    error: str | None = None


@dataclass(frozen=True)
class GpuResult:
    status: str  # skipped | no-libcuda | no-gpu | error | tested
    detail: str | None = None
    driver_api_version: int | None = None
    init: CuResult | None = None
    device_count: int | None = None
    attributes: dict[str, int | None] = field(default_factory=dict)
    context: CuResult | None = None
    buffers: tuple[GpuBuffer, ...] = ()


@dataclass(frozen=True)
class ForkInit:
    """ibv_fork_init() called as NCCL calls it; status from ibv_is_fork_initialized (rdma-core >= 35)."""

    symbol_available: bool
    rc: int | None = None
    rc_name: str | None = None
    status: str | None = None  # disabled | enabled | unneeded; None: libibverbs too old to say


@dataclass(frozen=True)
class VerifierOutput:
    schema_version: int
    verifier_version: str | None = None
    machine: str | None = None
    kernel: str | None = None
    glibc: str | None = None
    uid: int | None = None
    cap_ipc_lock: bool | None = None  # CAP_IPC_LOCK in the effective set (it bypasses RLIMIT_MEMLOCK)
    memlock: Memlock = field(default_factory=Memlock)
    sysfs: Sysfs = field(default_factory=Sysfs)
    libibverbs: LibibverbsLoad = field(default_factory=LibibverbsLoad)
    fork_init: ForkInit | None = None
    mlx5dv: Mlx5dv | None = None
    symbols: tuple[SymbolLookup, ...] = ()
    devices: DeviceList = field(default_factory=DeviceList)
    providers: Providers | None = None  # None when libibverbs did not load
    gpu: GpuResult = field(default_factory=lambda: GpuResult(status="skipped"))
    device_results: tuple[DeviceResult, ...] = ()
    warnings: tuple[str, ...] = ()  # what libibverbs (and CUDA) printed on stderr

    def symbol(self, name: str) -> SymbolLookup | None:
        return next((s for s in self.symbols if s.name == name), None)


def parse_output(text: str) -> VerifierOutput:
    """The verifier's stdout -> VerifierOutput; BadInputError when it is not a verifier document."""
    try:
        doc = safejson.loads(text, "the verifier's output", ValueError)  # depth-bounded
    except ValueError as exc:
        raise BadInputError(f"the verifier's output is not JSON ({exc})") from None
    if not isinstance(doc, dict) or "schema_version" not in doc:
        raise BadInputError("the verifier's output is not a verifier document (no schema_version)")
    version = doc["schema_version"]
    if not isinstance(version, int) or version > VERIFIER_SCHEMA_VERSION:
        raise BadInputError(
            f"verifier schema_version {version!r} is newer than this imgcheck understands ({VERIFIER_SCHEMA_VERSION})"
        )
    return from_dict(VerifierOutput, doc, where="verifier output")
