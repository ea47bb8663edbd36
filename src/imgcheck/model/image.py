"""Facts read from a container image. Every fact that comes from a file names its path and layer
(`.location`: the same Location type node facts and evidence use)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .location import Located

IMAGE_SCHEMA_VERSION = 1

# Userspace RDMA stack flavours, in the words of DESIGN.md.
FLAVOR_INBOX = "inbox"
FLAVOR_MLNX_OFED = "mlnx_ofed"
FLAVOR_DOCA = "doca"
FLAVOR_NONE = "none"


@dataclass(frozen=True)
class OsRelease(Located):
    id: str | None = None
    version_id: str | None = None
    pretty_name: str | None = None
    path: str | None = None
    layer: str | None = None


@dataclass(frozen=True)
class Package(Located):
    name: str
    version: str
    db: str  # dpkg | rpm | apk | python (a dist-info/egg-info on a site directory) | conda (a conda-meta record)
    path: str | None = None
    layer: str | None = None
    build: str | None = None  # conda: the build string (py3.10_cuda11.8_cudnn8.7.0_0); None for other databases
    channel: str | None = None  # conda: the channel it came from (https://conda.anaconda.org/conda-forge/linux-64)


@dataclass(frozen=True)
class LibraryCopy(Located):
    """One file of a shared library, and whether the dynamic loader would pick it."""

    path: str
    version: str | None = None
    layer: str | None = None
    loaded: bool = False  # the copy a process linking the soname gets
    how: str | None = None  # why: "LD_LIBRARY_PATH", "ld.so.cache", "default directory", "provider dir", ...


@dataclass(frozen=True)
class Libibverbs(Located):
    version: str | None  # the file's version suffix, e.g. "1.14.44.0"
    rdma_core: str | None  # e.g. "44.0" (from the file name) or the package's base for MLNX forks
    symbol_versions: tuple[str, ...] = ()
    private_abi: int | None = None  # N of IBVERBS_PRIVATE_N
    has_reg_mr_iova2: bool = False  # IBVERBS_1.8
    has_reg_dmabuf_mr: bool = False  # IBVERBS_1.12
    soname: str | None = None
    path: str | None = None
    layer: str | None = None
    copies: tuple[LibraryCopy, ...] = ()  # every libibverbs.so.1 in the image, the loaded one marked
    provider_dir: str | None = None  # the provider directory compiled into this libibverbs
    config_dir: str | None = None  # its IBV_CONFIG_DIR (driver files), e.g. /etc/libibverbs.d
    rpath: tuple[str, ...] = ()  # its DT_RPATH / DT_RUNPATH: searched when it dlopens a provider by bare name
    runpath: tuple[str, ...] = ()
    needs_glibc: str | None = None  # the newest GLIBC_x.y its ELF needs ("2.34"); None: not read or none


@dataclass(frozen=True)
class Provider(Located):
    name: str  # mlx5, efa, ...
    pabi: int | None  # N of lib<name>-rdmavN.so
    path: str
    layer: str | None = None
    driver_file: str | None = None  # /etc/libibverbs.d/<name>.driver naming it
    private_abi_needed: int | None = None  # IBVERBS_PRIVATE_N the provider's ELF binds to
    version: str | None = None  # e.g. libmlx5.so.1.24.44.0 -> "1.24.44.0"
    symbol_versions: tuple[str, ...] = ()  # MLX5_1.x for mlx5
    library: str | None = None  # the real file read (lib<name>.so.1.x when the provider links a shared library)
    loaded: bool | None = None  # would the loaded libibverbs load this file (None: no libibverbs to decide)
    how: str | None = None  # why (provider dir, driver file path, RDMAV_DRIVERS) or why not
    needs_glibc: str | None = None  # the newest GLIBC_x.y the file read needs ("2.34"); None: not read or none


@dataclass(frozen=True)
class RdmaFacts:
    libibverbs: Libibverbs | None = None
    providers: tuple[Provider, ...] = ()
    flavor: str = FLAVOR_NONE
    ofed_version: str | None = None  # MLNX_OFED/DOCA release, e.g. "23.10-1.1.9.0"
    ofed_source: str | None = None  # where the release came from (ofed_info, package version, ...)
    packages: tuple[Package, ...] = ()  # the RDMA-related packages
    other_providers: tuple[Provider, ...] = ()  # provider files the loaded libibverbs never looks at (stale copies)


@dataclass(frozen=True)
class UcxModule(Located):
    """A UCX transport module (libuct_ib*.so in UCX's module dir) and the ELF symbol versions it needs."""

    name: str  # uct_ib, uct_ib_mlx5, ...
    path: str
    layer: str | None = None
    needs_ibverbs: tuple[str, ...] = ()  # .gnu.version_r entries against libibverbs.so.1
    needs_mlx5: tuple[str, ...] = ()  # ... against libmlx5.so.1
    needs_glibc: str | None = None  # the newest GLIBC_x.y it needs ("2.34"); None: not read or none
    # The MLNX_OFED legacy experimental verbs (ibv_exp_*) it was built for, named by the log strings only such a build
    # compiles in (UCX <= 1.13 with verbs_exp.h found at configure time): () none found; None: not read
    exp_verbs: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Ucx(Located):
    version: str | None
    path: str | None = None
    layer: str | None = None
    origin: str | None = None  # dpkg | rpm | ucx.pc | hpcx
    package_version: str | None = None  # the package's own version string when it differs (1.10.1~rc1+really.1.10.0-1)
    copies: tuple[LibraryCopy, ...] = ()  # every libucp.so.0 in the image, the loaded one marked
    module_dir: str | None = None  # where this copy's libucs loads modules from: <its dir>/ucx, or UCX_MODULE_DIR
    modules: tuple[UcxModule, ...] = ()  # its InfiniBand transport modules, with their ELF version needs
    # Its build's thread support (--enable-mt), as its own files show it (extractors/ucx_build.py); what each means
    # for a release is the engine's (thresholds ucx_mt_diag_first, ucx_mt_define_when_enabled). None: not read.
    no_mt_message: bool | None = None  # libucp holds "multi-threaded worker is requested, but library is built without"
    info_enable_mt: bool | None = None  # its ucx_info's build configuration names ENABLE_MT
    build_read_from: tuple[str, ...] = ()  # the files those were read from


@dataclass(frozen=True)
class Nccl(Located):
    version: str | None
    path: str | None = None
    layer: str | None = None
    origin: str | None = None  # library | dpkg | rpm | pip | torch-requirement
    loaded: bool | None = None  # library copies: the dynamic loader's choice for libnccl.so.2
    how: str | None = None
    # The SM architectures libnccl carries device code for, from the fat binaries of its .nv_fatbin section (every
    # fat binary when the section headers cannot be read; view/fatbin.py): cubins (SASS) and PTX, e.g. (80, 90)
    # and (). None: not read (no library file, or no fat binary found in it).
    sass_archs: tuple[int, ...] | None = None
    ptx_archs: tuple[int, ...] | None = None
    archs_from: str | None = None  # the libnccl file the architectures were read from
    # The CUDA release NCCL was built against ("12.1"): NCCL links the CUDA runtime statically, so this sets its
    # own driver floor. Read from the library's "NCCL version 2.18.1+cuda12.1" line, NVIDIA's package version
    # (2.18.3-1+cuda12.1) or only the major from a wheel's name (nvidia-nccl-cu12 -> "12"); None: not read.
    cuda: str | None = None
    cuda_from: str | None = None  # how `cuda` was read: "library build string" | "package version" | "wheel name"
    needs_glibc: str | None = None  # the newest GLIBC_x.y its libnccl's .gnu.version_r needs; None: not read or none


@dataclass(frozen=True)
class CudaRuntime(Located):
    """A CUDA runtime (libcudart) and where its version was read.

    The runtime is what asks the driver for its CUDA level, so its major (the soname's) is the
    driver API level the code needs under minor-version compatibility.
    """

    version: str | None  # "12.4.127" (wheel METADATA, package, file name) or only the major ("12", soname)
    origin: str  # pip nvidia-cuda-runtime-cu12 | dpkg libcudart12 | library file name | soname
    path: str | None = None
    layer: str | None = None
    soname: str | None = None  # libcudart.so.12, read from the ELF
    library: str | None = None  # the libcudart file this version belongs to
    loaded: bool | None = None  # the dynamic loader's choice for a process linking libcudart (not a wheel's)
    how: str | None = None


@dataclass(frozen=True)
class Cuda(Located):
    version: str | None = None  # toolkit version, e.g. "12.4.1"; without a toolkit, the most demanding runtime's
    path: str | None = None
    layer: str | None = None
    origin: str | None = None  # version.json | version.txt | env CUDA_VERSION | that runtime's origin (pip ..., soname)
    compat_driver: str | None = None  # forward-compat libcuda.so.<ver>
    compat_path: str | None = None
    require_cuda: str | None = None  # NVIDIA_REQUIRE_CUDA
    # Whether the image itself puts the compat directory on its loader path (LD_LIBRARY_PATH in Env,
    # /etc/ld.so.conf(.d), /etc/ld.so.cache): then the compat libcuda is loaded whatever the node's driver,
    # not only when the container runtime adds it for an older driver. None: no compat library, or unknown.
    compat_on_path: bool | None = None
    compat_path_how: str | None = None  # which of those names it, or why it is unknown / not on the path
    runtime: tuple[CudaRuntime, ...] = ()  # every CUDA runtime (libcudart) found: wheel, package, file
    # The toolkit's link-time stub libcuda (stubs/libcuda.so) and whether a process's dlopen("libcuda.so.1") gets it
    # before the driver library the container runtime injects (then cudaErrorStubLibrary, 34). stub_on_path None:
    # not read (facts from elsewhere) or not decided (stub_path_how says why); False with no stub_path: none shipped.
    stub_path: str | None = None
    stub_on_path: bool | None = None
    stub_path_how: str | None = None


@dataclass(frozen=True)
class Hpcx(Located):
    version: str | None
    path: str | None = None
    layer: str | None = None


@dataclass(frozen=True)
class BundledStack(Located):
    """A second RDMA/UCX/DOCA stack shipped inside a Python wheel (nixl, pyverbs, libucx...).

    A wheel's libraries are found through its extension modules' RPATH ($ORIGIN), so only a Python
    process importing that distribution loads them; other processes get the system copy.
    """

    kind: str  # rdma-core | ucx | doca
    path: str  # the directory holding the libraries
    distribution: str | None = None  # the Python distribution that ships them
    version: str | None = None
    libraries: tuple[str, ...] = ()
    private_abi: int | None = None  # rdma-core: IBVERBS_PRIVATE_N of its libibverbs
    loaded_by: str | None = None  # which process would load it
    layer: str | None = None
    provider_dir: str | None = None  # rdma-core: the provider dir compiled into its libibverbs (a system path)
    config_dir: str | None = None  # rdma-core: its IBV_CONFIG_DIR
    system_providers: tuple[str, ...] = ()  # rdma-core: lib<name>-rdmavN.so files the image has in that provider dir


@dataclass(frozen=True)
class Libfabric(Located):
    """libfabric (OFI), which aws-ofi-nccl and Open MPI's ofi components use for EFA and verbs."""

    version: str | None  # release version, from its package; never the file's libtool suffix
    path: str
    layer: str | None = None
    origin: str | None = None  # the package database the version came from
    provider_dir: str | None = None  # FI_PROVIDER_PATH default compiled into it, or the Env's FI_PROVIDER_PATH
    builtin_providers: tuple[str, ...] = ()  # providers linked in, known by the libraries it links (efa: libefa.so.1)
    dl_providers: tuple[str, ...] = ()  # lib<name>-fi.so in its provider dir
    needs_ibverbs: tuple[str, ...] = ()  # ELF version needs against libibverbs.so.1
    needs_efa: tuple[str, ...] = ()  # ... against libefa.so.1
    copies: tuple[LibraryCopy, ...] = ()
    symbol_versions: tuple[str, ...] = ()  # the FABRIC_x.y versions it defines (.gnu.version_d)


@dataclass(frozen=True)
class NeededLibrary:
    """One DT_NEEDED entry of a shared object, resolved against the image as glibc's loader would."""

    name: str  # as the ELF names it: libhwloc.so.15
    found: bool | None  # None: the facts cannot tell (`how` says why); True, no path: a driver library (run time)
    path: str | None = None  # the file the loader opens (search directory + name, before symlinks)
    how: str | None = None  # the search step that found it, or the places searched


@dataclass(frozen=True)
class NcclNetPlugin(Located):
    """An NCCL network plugin (libnccl-net*.so: aws-ofi-nccl, nccl-rdma-sharp-plugins, ...)."""

    path: str
    name: str  # the file name NCCL opens
    layer: str | None = None
    loaded: bool | None = None  # what NCCL's dlopen of libnccl-net.so (or NCCL_NET_PLUGIN) resolves to
    how: str | None = None
    project: str | None = None  # aws-ofi-nccl, ... (the PACKAGE_STRING its init log prints)
    version: str | None = None  # that project's release, e.g. 1.9.1-aws
    needs_libfabric: tuple[str, ...] = ()  # ELF version needs against libfabric.so.1 (FABRIC_1.7, ...)
    rpath: tuple[str, ...] = ()  # the plugin's DT_RPATH (searched for its DT_NEEDED only without a DT_RUNPATH)
    runpath: tuple[str, ...] = ()  # the plugin's DT_RUNPATH ($ORIGIN: the directory NCCL's dlopen found it in)
    needs_glibc: str | None = None  # the newest GLIBC_x.y it needs ("2.34"); None: not read or none
    needed: tuple[NeededLibrary, ...] | None = None  # its DT_NEEDED libraries resolved; None: ELF not read
    # aws-ofi-nccl: whether its AWS platform code (platform-aws, compiled only when configure ran on EC2 or was given
    # --enable-platform-aws) is in the file, by the log string only that code has; None: not read or not that project
    aws_platform: bool | None = None


@dataclass(frozen=True)
class EfaInstaller:
    """What AWS's EFA installer left in the image: /opt/amazon/efa_installed_packages (efa_installer.sh
    write_package_file: '# EFA installer version: X' and the packages it installed)."""

    version: str | None
    path: str
    layer: str | None = None
    packages: tuple[str, ...] = ()  # as the file lists them: libfabric1-aws_1.16.0~amzn3.0_amd64, ...


@dataclass(frozen=True)
class LayerInfo:
    digest: str  # the blob as stored/transported
    media_type: str | None = None
    size: int | None = None
    diff_id: str | None = None  # uncompressed digest: what facts' `layer` fields name


@dataclass(frozen=True)
class Glibc(Located):
    """The image's glibc: its release, and the GLIBC_x.y versions the loader's libc.so.6 defines.

    A library needing a GLIBC_x.y its glibc does not define is refused by the dynamic loader ("version
    `GLIBC_2.38' not found"): the release bounds what any library on the load path may need."""

    version: str | None  # "2.36": from the package (libc6 2.36-9+deb12u4, glibc 2.34-100.el9), the file name
    # (libc-2.31.so) or, as a lower bound, the newest GLIBC_x.y libc.so.6 defines (origin "symbol versions")
    path: str | None = None  # where the version was read (package database or the library)
    layer: str | None = None
    origin: str | None = None  # "dpkg libc6" | "rpm glibc" | "file name" | "symbol versions"
    library: str | None = None  # the libc.so.6 file read (the loader's choice)
    defines: tuple[str, ...] = ()  # the GLIBC_x.y versions that libc.so.6 defines, as "x.y", oldest first


@dataclass(frozen=True)
class NcclXmlFile(Located):
    """An XML file NCCL can load as a topology (NCCL_TOPO_FILE) or a graph (NCCL_GRAPH_FILE), read the way NCCL's
    own reader reads it (extractors/nccl_xml.py)."""

    path: str
    layer: str | None = None
    kind: str | None = None  # "topology" | "graph"; None: not read
    error: str | None = None  # the message NCCL's loader prints for it (init then fails); None: it loads
    version: int | None = None
    gpu_busids: tuple[str, ...] = ()  # topology: the PCI bus ids of its <gpu> elements
    net_names: tuple[str, ...] = ()  # topology: <net name=...> (mlx5_0, ...)
    cpu_unfilled: tuple[str, ...] = ()  # topology: cpu attributes NCCL fills in only for CPUs its detection reaches
    gpu_devs: tuple[int, ...] = ()  # graph: the GPU dev numbers its channels name
    net_devs: tuple[int, ...] = ()  # graph: the NET dev numbers its channels pin
    note: str | None = None


@dataclass(frozen=True)
class NcclFileRef:
    """A file an NCCL setting of the image names (NCCL_TOPO_FILE, NCCL_GRAPH_FILE) and whether the image has it."""

    name: str
    value: str
    origin: str  # "env" | "/root/.nccl.conf" | "/etc/nccl.conf"
    exists: bool | None  # None: a relative path (depends on the working directory)


@dataclass(frozen=True)
class Gdrcopy(Located):
    """GDRCopy's libgdrapi in the image (extractors/gdrcopy.py): what UCX's gdr_copy, NCCL and NVSHMEM dlopen."""

    version: str | None  # libgdrapi's major.minor, from libgdrapi.so.<major>.<minor> or the package
    path: str | None = None
    layer: str | None = None
    soname_major: int | None = None  # libgdrapi.so.<major>
    package_version: str | None = None  # the libgdrapi / gdrcopy package's version, when a package ships it
    files: tuple[str, ...] = ()  # every libgdrapi.so* the image has


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
    python_sites: tuple[
        str, ...
    ] = ()  # the directories Python imports distributions from (site dirs, PYTHONPATH, .pth)
    bundled_stacks: tuple[BundledStack, ...] = ()  # second RDMA/UCX/DOCA stacks inside wheels
    libfabric: Libfabric | None = None
    nccl_net_plugins: tuple[NcclNetPlugin, ...] = ()
    efa_installer: EfaInstaller | None = None
    glibc: Glibc | None = None  # None with no unknown entry: no glibc found (musl, static, scratch)
    nccl_xml_files: tuple[NcclXmlFile, ...] = ()  # topology/graph XMLs the image ships or its settings name
    nccl_file_refs: tuple[NcclFileRef, ...] = ()  # NCCL_TOPO_FILE / NCCL_GRAPH_FILE of the Env and nccl.conf files
    gdrcopy: Gdrcopy | None = (
        None  # GDRCopy's libgdrapi; None: none in the image (or, with unknown["gdrcopy"], not read)
    )
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
