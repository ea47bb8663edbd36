"""Facts about one node, as `imgcheck node probe` records them (or a person writes them by hand).

Every field may be None: None means unknown, and `unknown` says why where the probe knows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .location import Location

# Still 1: `sources` and `origin` are additive (older readers ignore them, and a file without them loads
# with every fact located at the file itself).
NODE_SCHEMA_VERSION = 1

STACK_INBOX = "inbox"
STACK_MLNX_OFED = "mlnx_ofed"
STACK_DOCA = "doca"
STACK_NONE = "none"
GPU_CLASSES = ("datacenter", "workstation", "consumer", "embedded")  # compat_matrix gpu_classes
# Boot parameters (Documentation/admin-guide/kernel-parameters.txt) that change the DMA path of a NIC or GPU
# or the memory it pins: the only words of /proc/cmdline node facts keep (kept_cmdline).
CMDLINE_PARAMS = (
    "iommu",
    "intel_iommu",
    "amd_iommu",
    "iommu.passthrough",
    "iommu.strict",
    "pci",
    "pcie_acs_override",
    "transparent_hugepage",
    "movablecore",
    "kernelcore",
    "hugepages",
    "hugepagesz",
    "default_hugepagesz",
    "cma",
    "kho",
    "kho_scratch",
)


def kept_cmdline(text: str) -> tuple[str, int]:
    """The words of a kernel command line that imgcheck reads, in order, and how many others were left out.

    Node facts are committed to repositories and travel in reports: the rest of a command line (root=,
    console=, ip=, cloud-init seeds, LUKS and vendor options) can name hosts, addresses and keys, and no
    rule reads it."""
    kept = [word for word in text.split() if word.partition("=")[0] in CMDLINE_PARAMS]
    return " ".join(kept), len(text.split()) - len(kept)


@dataclass(frozen=True)
class Kernel:
    release: str | None = None
    # CONFIG_* options that RDMA / DMA-BUF / IOMMU rules read: "y", "m" or "n" ("# ... is not set");
    # None = the config could not be read; an option left out of a readable config is "n".
    config: dict[str, str] | None = None
    config_source: str | None = None  # /boot/config-<release> or /proc/config.gz
    cmdline: str | None = None  # the words of /proc/cmdline that imgcheck reads; the rest is never stored
    cmdline_params: dict[str, str] | None = None  # the IOMMU/memory parameters of cmdline (flag -> "")
    # CmaTotal of /proc/meminfo in KiB (0: booted without a CMA area); None: unreadable, or no CmaTotal line
    # (a kernel without CONFIG_CMA)
    cma_total_kib: int | None = None
    # module name -> the file modprobe would load for the running kernel (modules.dep, else a search of
    # /lib/modules/<release>), for the NVIDIA, peer-memory and RDMA modules and every module a DKMS build made; a name
    # left out has no file for this kernel; None: /lib/modules/<release> not readable (node/modules.py)
    module_files: dict[str, str] | None = None


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
    # From the .ko file modprobe would load (its .modinfo and __versions sections, read as ELF bytes)
    file_vermagic: str | None = None  # "5.15.0-25-generic SMP mod_unload modversions"
    file_srcversion: str | None = None
    file_depends: tuple[str, ...] | None = None
    symbol_crcs: dict[str, str] | None = None  # peer-memory symbols it imports -> modversions CRC ("0x..")


# GidEntry.kind values (node/gid_kind.py)
GID_IPV4_MAPPED = "ipv4-mapped"
GID_LINK_LOCAL = "link-local"
GID_GLOBAL = "global"
GID_UNCONFIGURED = "unconfigured"


@dataclass(frozen=True)
class GidEntry:
    """One non-zero entry of a port's GID table (/sys/class/infiniband/<dev>/ports/<p>/gids/<index>)."""

    index: int
    type: str | None = None  # gid_attrs/types/<index>: "IB/RoCE v1" | "RoCE v2"
    netdev: str | None = None  # gid_attrs/ndevs/<index> (RoCE)
    gid: str | None = None  # gids/<index> as sysfs prints it: "0000:0000:0000:0000:0000:ffff:ac13:003c"
    # The address the GID is (node/gid_kind.py): "ipv4-mapped" (::ffff:a.b.c.d, what RoCE v2 over IPv4
    # carries), "link-local" (fe80::/64, not routed beyond the netdev's segment), "global" (any other IPv6)
    kind: str | None = None

    def __post_init__(self) -> None:
        # a facts file (or a test) that gives the address but not its kind: the kind follows from the address
        if self.kind is None and self.gid:
            from .gid_address import gid_kind

            object.__setattr__(self, "kind", gid_kind(self.gid))


@dataclass(frozen=True)
class RdmaPort:
    port: int | None = None
    state: str | None = None
    phys_state: str | None = None
    link_layer: str | None = None
    rate: str | None = None
    netdev: str | None = None  # the port's net device (gid_attrs/ndevs/0, or the PCI function's net/)
    netdev_mtu: int | None = None  # /sys/class/net/<netdev>/mtu
    active_mtu: int | None = None  # RoCE: derived from netdev_mtu as ib_core's iboe_get_mtu does; IB: unknown
    # The GID table: its length (the entries sysfs lists under gids/), how many of the first entries were read,
    # and the read entries that are not all zero. None: not read (a hand-written file, an older probe).
    gid_table_len: int | None = None
    gids_read: int | None = None
    gids: tuple[GidEntry, ...] | None = None

    def gid_table_gap(self, need_type: bool = False) -> str | None:
        """Why the whole GID table is not known (None: every entry was read, with its address and, when asked, its
        RoCE type): what a simulation of a library's own GID choice needs."""
        if self.gids is None or self.gid_table_len is None or self.gids_read is None:
            return "the port's GID table was not read"
        if self.gids_read < self.gid_table_len:
            return f"only {self.gids_read} of {self.gid_table_len} GID entries were read"
        if any(g.kind is None or (need_type and g.type is None) for g in self.gids):
            return (
                "a GID entry's address or RoCE type was not recorded"
                if need_type
                else "a GID entry's address was not recorded"
            )
        return None

    def gid_entry(self, index: int) -> tuple[str, GidEntry | None]:
        """What the table holds at `index`: ("entry", e), ("zero", None), ("beyond", None) or ("unknown", None)."""
        listed = next((g for g in self.gids or () if g.index == index), None)
        if listed is not None:
            return "entry", listed  # an entry read is a fact whether or not the table's length is known
        if self.gid_table_len is None or self.gids_read is None or self.gids is None:
            return "unknown", None
        if index >= self.gid_table_len:
            return "beyond", None
        if index >= self.gids_read:
            return "unknown", None
        found = next((g for g in self.gids if g.index == index), None)
        return ("entry", found) if found else ("zero", None)


@dataclass(frozen=True)
class RdmaDevice:
    name: str | None = None
    hca_type: str | None = None
    fw_ver: str | None = None
    board_id: str | None = None
    link_layer: str | None = None
    ports: tuple[RdmaPort, ...] = ()
    uverbs_abi: int | None = None
    driver: str | None = None  # kernel driver of the PCI function: mlx5_core, mlx4_core, efa, irdma, bnxt_en, hfi1 ...
    pci_address: str | None = None


@dataclass(frozen=True)
class NodeRdma:
    stack: str | None = None  # inbox | mlnx_ofed | doca | none
    ofed_version: str | None = None
    modules: dict[str, KernelModule] = field(default_factory=dict)
    uverbs_abi: int | None = None
    peer_memory_api: bool | None = None  # /sys/kernel/mm/memory_peers exists
    devices: tuple[RdmaDevice, ...] = ()
    # CRCs the installed OFED's ib_core exports for the peer-memory API (its Module.symvers): what a
    # peer-memory module must have been built against to load
    ib_core_symvers: dict[str, str] | None = None
    ib_core_symvers_path: str | None = None
    # Build facts of the module files modprobe would load (loaded or not): nvidia_peermem, nv_peer_mem, ib_core
    module_files: dict[str, KernelModule] | None = None
    # The MLNX_OFED/DOCA release ofed_info or the packages say is installed, whether or not its modules
    # are the ones loaded (stack inbox with this set: installed for another kernel, or its DKMS build failed)
    installed_ofed_version: str | None = None


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
    pci_device_id: str | None = None  # "0x2330" from /sys/bus/pci/devices/<bus>/device
    bar1_bytes: int | None = None  # BAR1 size, /sys/bus/pci/devices/<bus>/resource line 1 (GPUDirect RDMA's aperture)
    gpu_class: str | None = None  # datacenter | workstation | consumer | embedded (compat_matrix gpu_classes)
    # The GSP firmware the driver runs this GPU on: the "GPU Firmware:" line of /proc/driver/nvidia/gpus/<bus>/information
    # (nv-procfs.c), a firmware version (GSP on) or "N/A" (GSP off: the proprietary module with
    # NVreg_EnableGpuFirmware=0, or a GPU without GSP). None: not read (no such line, or the file not visible).
    gsp_firmware: str | None = None


# The probe's reason when it looked for the NVIDIA kernel driver and found none loaded (known absent, not unknown).
# the kernel modules the probe reads in /sys/module (node/modules.py)
RDMA_MODULES = ("mlx5_core", "mlx5_ib", "ib_core", "ib_uverbs", "efa")
# efa_nv_peermem: AWS's helper that hands EFA the open NVIDIA module's P2P API on kernels whose symbol_get() resolves
# only GPL exports (amzn-drivers kernel/linux/efa_nv_peermem)
PEER_MODULES = ("nvidia_peermem", "nv_peer_mem", "gdrdrv", "efa_nv_peermem")
GPU_MODULES = ("nvidia",)
PROBED_MODULES = RDMA_MODULES + GPU_MODULES + PEER_MODULES

NO_DRIVER_REASON = "no NVIDIA kernel driver loaded"


@dataclass(frozen=True)
class NodeGpu:
    driver_version: str | None = None
    kernel_module: str | None = None  # open | proprietary
    peermem: Peermem = field(default_factory=Peermem)
    gpus: tuple[Gpu, ...] = ()
    cuda_driver_version: str | None = None  # the CUDA version the driver supports, when known
    l4t_release: str | None = None  # Jetson: the L4T release (/etc/nv_tegra_release), never a driver version
    gdrdrv_loaded: bool | None = None  # GDRCopy's gdrdrv module
    # gdrdrv as node/gdrdrv.py reads it: /sys/module/gdrdrv/version (major.minor only: "2.4" for 2.4-2.4.4), whether
    # /proc/devices lists its character major, whether /dev/gdrdrv exists (gdrdrv makes no device class: insmod.sh or
    # the packaged service mknods it) and its permission bits in octal ("666"; "not-char": not a character device).
    # None: not visible under the probe root (the reason is in unknown).
    gdrdrv_version: str | None = None
    gdrdrv_registered: bool | None = None
    gdrdrv_device: bool | None = None
    gdrdrv_device_mode: str | None = None
    # The host's user-space driver (libnvidia-ml.so.1's target), which the container toolkit mounts into every
    # GPU container; the kernel module accepts only clients of its own exact version.
    userspace_driver_version: str | None = None
    userspace_driver_path: str | None = None
    # Unified memory: the nvidia_uvm module (/sys/module/nvidia_uvm) and its device node /dev/nvidia-uvm, which the
    # container toolkit injects into GPU containers. None: /sys/module or /dev not visible under the probe root.
    uvm_loaded: bool | None = None
    uvm_device: bool | None = None
    # CUDA peer access between the node's GPUs (`nvidia-smi topo -p2p r`): False when no pair has it (GeForce
    # parts, P2P off in the BIOS or hypervisor), True when every pair has it. The probe reads files only and leaves
    # it None; a facts file states it. NCCL's SHM transport carries what P2P cannot (JOB-SHM-TOO-SMALL).
    p2p: bool | None = None
    # libnvidia-container's nvidia-container-cli on the node (the program enroot's NVIDIA hook runs, as the toolkit's
    # runtime hook does): None when the host's /usr is not visible under the probe root
    container_cli: bool | None = None
    # Where nvidia-peermem is configured to load or be used: "path: line" of modules-load.d / /etc/modules entries
    # and modprobe.d softdep/install/options lines naming it. (): none; None: /etc not visible.
    peermem_configured: tuple[str, ...] | None = None
    # WSL2 / Hyper-V GPU paravirtualization (dxgkrnl): /dev/dxg exists (None: /dev not visible), and the driver's
    # user-space files the guest has: /usr/lib/wsl/lib/<name> and /usr/lib/wsl/drivers/<driver store folder>/<name>
    # (None: /usr/lib/wsl not read because the node has no /dev/dxg, or not visible).
    dxg_device: bool | None = None
    wsl_driver_files: tuple[str, ...] | None = None


@dataclass(frozen=True)
class NodeFabric:
    """NVSwitch and the services that configure its fabric (node/fabric.py). None: not known from what was read."""

    # PCI addresses of NVIDIA functions of class bridge/other (0x0680): the NVSwitches, which the nvidia-nvswitch driver
    # binds by that class. (): looked, none; None: /sys/bus/pci not visible.
    nvswitch_pci: tuple[str, ...] | None = None
    # Fabric Manager: its package (nvidia-fabricmanager[-BRANCH], nvidia-fabric-manager) and the upstream version of
    # it, which must equal the driver's; installed: a package or /usr/bin/nv-fabricmanager (False: the package
    # databases were read and neither is there).
    fm_package: str | None = None
    fm_version: str | None = None
    fm_installed: bool | None = None
    fm_enabled: bool | None = (
        None  # the systemd unit is enabled (/etc/systemd/system/*.wants/nvidia-fabricmanager.service)
    )
    fm_running: bool | None = None  # an nv-fabricmanager process in /proc (None: the host's processes are not visible)
    # NVLink 5 baseboards: the NVLink Subnet Manager (nvlsm package or /opt/nvidia/nvlsm/sbin/nvlsm) and ib_umad
    nvlsm_installed: bool | None = None
    ib_umad_loaded: bool | None = None
    # nvidia-smi -q's "Fabric" section of the GPUs (State: Completed | In Progress | Not Started | Not Supported;
    # Status: Success or the failure): never probed (it needs NVML); a node facts file may state it.
    gpu_fabric_state: str | None = None
    gpu_fabric_status: str | None = None


@dataclass(frozen=True)
class ToolkitConfig:
    """One NVIDIA Container Toolkit config.toml on the node (node/container_toolkit.py)."""

    path: str
    mode: str | None = None  # nvidia-container-runtime.mode: legacy | cdi | csv | auto (unset: auto); None: unreadable
    driver_root: str | None = None  # nvidia-container-cli.root (unset: "/"): where the injected driver files come from
    driver_found: bool | None = None  # libnvidia-ml.so.1 is under driver_root; None: not readable


@dataclass(frozen=True)
class NodeContainerToolkit:
    """The NVIDIA Container Toolkit (node/container_toolkit.py). None: not known from what was read."""

    installed: bool | None = None  # a package, a config.toml or a toolkit binary (False: packages read, none)
    toolkit_version: str | None = None  # upstream release of nvidia-container-toolkit(-base): "1.17.8"
    libnvidia_container_version: str | None = None  # of libnvidia-container1 / -tools
    configs: tuple[ToolkitConfig, ...] | None = None  # host package's and GPU Operator's config.toml; (): none
    cdi_specs: tuple[str, ...] | None = None  # CDI spec files declaring kind nvidia.com/gpu; (): none
    # the GPU Operator's driver container root /run/nvidia/driver holds libnvidia-ml.so.1 (False: no such driver)
    operator_driver_root: bool | None = None


@dataclass(frozen=True)
class NodeMig:
    """Multi-Instance GPU (node/mig.py). None: not known from what was read."""

    # GPU (its /proc/driver/nvidia/capabilities name, "gpu0") -> how many GPU instances exist on it (its mig/gi<N>
    # directories). {}: the capabilities directory lists no GPU with instances, so MIG splits no GPU for CUDA.
    gpu_instances: dict[str, int] | None = None
    # MIG profiles in use when a facts file or the GPU Feature Discovery labels name them ("1g.10gb": 7)
    profiles: dict[str, int] | None = None


@dataclass(frozen=True)
class NodeState:
    """Node state a job's start depends on that no other reader covers (node/node_state.py). None: not known from what
    was read (the reason is in NodeFacts.unknown["state.<field>"])."""

    # Docker's default OCI runtime: /etc/docker/daemon.json "default-runtime", "runc" when the file or key is absent
    docker_default_runtime: str | None = None
    docker_runtimes: tuple[str, ...] | None = None  # the names under daemon.json "runtimes" (); none registered
    shm_mode: str | None = None  # /dev/shm's permission bits in octal ("1777"); "absent": /dev shows no /dev/shm
    yama_ptrace_scope: int | None = None  # kernel.yama.ptrace_scope 0-3 (Documentation/admin-guide/LSM/Yama.rst)
    nouveau_loaded: bool | None = None  # nouveau is in /proc/modules (or /sys/module)
    nouveau_blacklisted: bool | None = None  # modprobe.d or the kernel command line keeps nouveau from loading
    kernel_headers: bool | None = None  # the running kernel's build tree (/lib/modules/<release>/build) is installed
    imex_channels: tuple[str, ...] | None = None  # /dev/nvidia-caps-imex-channels/channel<N> names; (): none
    imex_registered: bool | None = None  # /proc/devices lists nvidia-caps-imex-channels (the driver's IMEX channels)
    nvidia_caps: tuple[str, ...] | None = None  # /dev/nvidia-caps/nvidia-cap<N> names; (): none
    # ib_core's netns_mode (node/rdma_netns.py): "shared" | "exclusive"; "absent": ib_core is not loaded
    rdma_netns_mode: str | None = None
    cgroup_version: str | None = None  # "v2" | "v1" | "hybrid" (v1 controllers, devices among them, plus unified)
    docker_cgroup_driver: str | None = None  # dockerd's native.cgroupdriver: "systemd" | "cgroupfs"
    containerd_systemd_cgroup: bool | None = None  # containerd's runc option SystemdCgroup
    nvidia_char_links: tuple[str, ...] | None = None  # /dev/char/<major>:<minor> links to /dev/nvidia*; (): none


@dataclass(frozen=True)
class DkmsModule:
    """One DKMS build: /var/lib/dkms/<name>/<version>/<kernel>/<arch>/ (installed when the
    /var/lib/dkms/<name>/kernel-<kernel>-<arch> link points at it)."""

    name: str | None = None
    version: str | None = None
    kernel: str | None = None
    arch: str | None = None
    installed: bool | None = None
    # the module files the build made (/var/lib/dkms/<name>/<version>/<kernel>/<arch>/module/*.ko*), as module names
    # ("nvidia", "nvidia_peermem"); None: not read
    modules: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Limits:
    memlock_kib: int | None = None  # None also when unlimited is not known; -1 means unlimited
    # The RDMA cgroup limits of a process launched like the probe (node/rdma_cgroup.py): device -> {"hca_handle": N,
    # "hca_object": N}, None for "max"; {}: no limit on any device; None: not readable.
    rdma: dict[str, dict[str, int | None]] | None = None


@dataclass(frozen=True)
class NetInterface:
    """A network interface of the node's network namespace (/sys/class/net/<name>)."""

    name: str
    operstate: str | None = None  # /sys/class/net/<name>/operstate: up | down | unknown | dormant | ...
    # From /proc/net (node/net_addresses.py); None: not readable. () : read, none.
    ipv4: tuple[str, ...] | None = None  # "172.19.0.60/24"
    ipv6: tuple[str, ...] | None = None  # "fe80::e42:a1ff:fe5d:4db8/64 link" (scope: global | link | host | site)
    routes: tuple[str, ...] | None = (
        None  # "172.19.0.0/24", "default via 172.19.0.1", "fd00::/64", "default via fe80::1"
    )


@dataclass(frozen=True)
class NumaNode:
    """One NUMA node (/sys/devices/system/node/node<id>)."""

    index: int  # N of node<N>
    cpulist: str | None = None  # its cpulist as the kernel prints it ("0-63", "" for a CPU-less node); None: not read
    cpus: int | None = None  # how many CPUs that is (0: CPU-less, memory-only)
    memory_kib: int | None = None  # MemTotal of its meminfo


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
    dkms: tuple[DkmsModule, ...] | None = None  # None: /var/lib/dkms unreadable or absent
    pci_acs_redirect: tuple[str, ...] | None = None  # bridges above GPUs/NICs with ACS P2P redirect on
    # GPU / NIC PCI address -> IOMMU domain type: identity | DMA | DMA-FQ | blocked | unmanaged | none (no IOMMU)
    iommu_domains: dict[str, str] | None = None
    net_interfaces: tuple[NetInterface, ...] | None = None  # None: /sys/class/net not read
    # the kind of address the node's /etc/hosts gives its host name (node/hostname.py): "loopback", "link-local",
    # "routable", or "none" (no line names it: DNS decides); None: not read
    hostname_in_hosts: str | None = None
    numa_nodes: tuple[NumaNode, ...] | None = None  # None: /sys/devices/system/node not read
    fabric: NodeFabric = field(default_factory=NodeFabric)  # NVSwitch, Fabric Manager, NVLSM
    container_toolkit: NodeContainerToolkit = field(default_factory=NodeContainerToolkit)  # versions, mode, CDI
    mig: NodeMig = field(default_factory=NodeMig)  # Multi-Instance GPU instances
    state: NodeState = field(default_factory=NodeState)  # Docker runtime, /dev/shm, Yama, nouveau, headers, IMEX, caps
    # the cluster's NVIDIA GPU components serving this node and their released versions ("k8s-device-plugin":
    # "v0.17.4", "gpu-operator": "v25.3.4"): from a facts file, or the node's status.images in Kubernetes; None: not
    # known (a probe of the host root cannot see them)
    cluster_components: dict[str, str] | None = None
    # Provenance, not facts: left out of equality and of the fleet grouping key.
    # fact ("limits.memlock_kib", "rdma.devices.mlx5_0", "labels.nvidia.com/gpu.product") -> where the reader
    # read it; a fact below a recorded one ("rdma.devices.mlx5_0.fw_ver") is located at its nearest ancestor.
    sources: dict[str, Location] = field(default_factory=dict, compare=False)
    # Where these facts as a whole were read (the probe root, the node facts file, the Kubernetes node):
    # the location of every fact `sources` does not cover. Set by whoever reads them, never taken from the file.
    origin: Location | None = field(default=None, compare=False)

    def location_of(self, fact: str) -> Location | None:
        """Where `fact` (a dotted fact name below node.) was read: its own record, its nearest recorded
        ancestor, else the origin of the whole."""
        key = fact
        while key:
            found = self.sources.get(key)
            if found is not None:
                return found
            key = key.rpartition(".")[0]
        return self.origin
