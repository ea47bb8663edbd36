"""The NCCL_DEBUG=INFO lines around a failure: versions, IB devices, relaxed ordering, DMA-BUF,
GPUDirect RDMA, transports, environment overrides, communicator init and rank numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TypeVar

from . import frames
from .logparse import LogLine

T = TypeVar("T")

_VERSION = re.compile(r"NCCL version (?P<v>\d+\.\d+\.\d+)(?:[-+]cuda(?P<cuda>\d+(?:\.\d+)*))?")
_DRIVER = re.compile(r"cudaDriverVersion (?P<v>\d+)")
_IB_USING = re.compile(r"NET/IB ?: Using (?P<rest>.*)")
_IB_DEV = re.compile(r"\[\d+\](?P<dev>[\w.\-]+:\d+/\w+(?:/\w+)?)")
_DMABUF = re.compile(r"DMA-BUF is available on GPU device (?P<gpu>\d+)")
_GDR = re.compile(
    r"NET/IB ?: GPU Direct RDMA (?:\([\w-]+\) )?(?P<state>Disabled|Enabled|enabled|disabled) for HCA (?P<n>\d+) '(?P<hca>[^']+)"
)
_VIA = re.compile(r"\bvia (?P<t>NET/[\w]+(?:/\d+)?(?:/GDRDMA)?|P2P/[\w/]+|SHM(?:/[\w/]+)?|CollNet\S*|NVLS\S*)")
_NETWORK = re.compile(r"Using network (?P<n>\w+)")
_ENV = re.compile(r"(?P<name>NCCL_[A-Z0-9_]+) set by environment to (?P<value>.*?)\.?\s*$")
# NCCL 2.3.5..2.4.8 ncclCommInitAll: INFO(NCCL_INIT,"nranks %d", ndev): one process drives every GPU of the job
_INIT_ALL = re.compile(r"NCCL INFO nranks (?P<n>\d+)\s*$")
_NO_VERBS = re.compile(r"Failed to open libibverbs\.so")
_COMM = re.compile(
    r"comm (?P<comm>0x[0-9a-fA-F]+) rank (?P<rank>\d+) nranks (?P<nranks>\d+) cudaDev (?P<dev>\d+)"
    r"(?:.*- (?P<phase>Init START|Init COMPLETE))?"
)
# Gloo advertising loopback: the fallback warning, or a Gloo error naming 127.0.0.1 as local/remote
# WSL2 / Hyper-V GPU paravirtualization: the guest reaches the GPU through /dev/dxg (dxgkrnl) with the Windows
# driver's user space mounted at /usr/lib/wsl/lib and /usr/lib/wsl/drivers (Microsoft's WSL GPU docs);
# libnvidia-container's dxcore layer names libdxcore and the WDDM adapter (src/dxcore.c)
_GPU_PV = re.compile(r"/usr/lib/wsl/|/dev/dxg\b|libdxcore|\bdxcore\b|WDDM [Aa]dapter")
_GPU_PV_HINTS = ("wsl", "dxg", "dxcore", "WDDM")
_EXIT_HINTS = (
    "Kill",
    "exit",
    "SIG",
    "signal",
    "Segmentation",
    "OOM",
    "memory",
    "ChildFailed",
    "torch",
    "PyTorch",
    "route",
    "reset",
    "Broken pipe",
    "closed by",
    "timed out",
    "unreachable",
    "exceeded",
)
_GLOO_LOOPBACK = re.compile(r"Using the loopback address as fallback|(?:local|remote)=\[127(?:\.\d+){3}\]")
# nccl-tests "Rank N ... device D [0x21] NVIDIA GeForce RTX 5090" and NCCL_DEBUG "... NVIDIA H100 80GB HBM3" names
_TESTS_GPU = re.compile(r"\bdevice\s+\d+\s+\[[^\]]+\]\s+(?P<gpu>\S.*?)\s*$")
# socket interfaces NCCL picked: "NET/Socket : Using [0]eth0:10.0.0.1<0> [1]docker0:..." and "Bootstrap : Using br-1:..."
_SOCK_IFACE = re.compile(r"\[\d+\](?P<if>[\w.\-@]+):")
_BOOT_IFACE = re.compile(r"(?:Bootstrap ?: Using|NET : Using interface) (?:\[\d+\])?(?P<if>[\w.\-@]+):")
_OFI_PROVIDER = re.compile(r"NET/OFI Selected [Pp]rovider is (?P<p>[\w;]+)")
# NCCL's error return trace: "NCCL INFO bootstrap.cc:701 -> 6" (each frame a function returning the result code)
_TRACE = re.compile(r"NCCL INFO (?P<file>[\w./-]+\.(?:cc|cu|h|c)):\d+ -> (?P<code>\d+)")
# a process of the job ended: the kernel OOM killer, a signal, torchrun's / mpirun's exit report, Kubernetes' OOMKilled
_KILLED = re.compile(
    r"Killed process \d+|[Oo]ut of memory: Kill|OOMKilled|exitcode\s*:\s*-9\b|signal 9 \(Killed\)|"
    r"Signals\.SIGKILL|\bSIGKILL\b"
)
_EXITED = re.compile(
    r"exitcode\s*:\s*-?\d+|exited on signal \d+|Segmentation fault|\bSIGSEGV\b|\bSIGABRT\b|\bSIGBUS\b|"
    r"Caught signal \d+|ChildFailedError|exited with (?:exit )?code [1-9]"
)
# a fabric error another line names: an IB completion error or async event, a socket recv/send or connect failure
_NET_ERROR = re.compile(
    r"Got completion from peer|Got CQE with error|vendor err \d+|Got async (?:error )?event|"
    r"exceeded (?:retries|timeouts)|No route to host|Connection timed out|Network is unreachable|"
    r"Connect to \S+ failed : (?:No route|Connection timed|Network is)"
)
# the peer's end of a connection went away: its socket closed or reset (the peer process ended, or closed it)
_PEER_GONE = re.compile(r"Connection closed by (?:remote )?peer|Connection reset by peer|Broken pipe|ECONNRESET|EPIPE")
# torch's version as its own tools print it: collect_env "PyTorch version: 2.5.1+cu124", pip "torch==2.1.0",
# and "torch 2.1.0" in pip list / conda list output
_TORCH = re.compile(r"(?:PyTorch version:\s*|\btorch(?:==|\s+))(?P<v>\d+\.\d+(?:\.\d+)?(?:[+.\w-]*)?)")
# the NCCL net plugin NCCL loaded: "NET/Plugin: Loaded net plugin NAME (vN)" (2.19+), "NET/Plugin : Loaded ... "
_PLUGIN = re.compile(
    r"NET/Plugin ?: ?(?:Loaded (?:net|collnet|coll) plugin|Using) (?P<p>[^(\n]+?)\s*(?:\((?P<api>v\d+)\))?\s*$"
)
# --- where the job ran, as the log shows it (environment evidence for cause ranking) ---
# Docker names a container's host after the container: its ID's first 12 hex digits unless --hostname is given
# (docs.docker.com/reference/cli/docker/container/run/ "--hostname"); NCCL's "host:pid:tid" and UCX's
# "[host:pid:tid:n]" prefixes then carry that name.
_DOCKER_HOST = re.compile(r"^(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{12}$")
_UCX_HOST = re.compile(r"^\[(?P<host>[\w.\-]+):\d+ ?:\d+:\d+\]")
# the size of /dev/shm as df prints it ("shm  64M  0  64M  0% /dev/shm"), docker run's --shm-size, --ipc=host
_DF_SHM = re.compile(
    r"^\s*(?:shm|tmpfs|none)\s+(?P<size>\d+(?:\.\d+)?)(?P<unit>[KMGT])?\s+\S+\s+\S+\s+\S+\s+/dev/shm\s*$"
)
_SHM_FLAG = re.compile(r"--shm-size[= ](?P<size>\d+(?:\.\d+)?)(?P<unit>[bkmgBKMG])?")
_HOST_IPC = re.compile(r"--ipc[= ]host\b|\bhostIPC:\s*true")
# a shell echo of a setting ("export NCCL_SOCKET_IFNAME=lo"): NCCL_DEBUG=INFO prints only some of them
_EXPORT = re.compile(r"\bexport (?P<name>NCCL_[A-Z0-9_]+)=(?P<value>\S+)")
# the addresses NCCL's socket code picked: "[0]eth0:172.17.0.2<0>", "Bootstrap : Using eth0:10.1.2.3<0>"
_SOCK_ADDR = re.compile(r"(?:\[\d+\]|Using )(?P<if>[\w.\-@]+):(?P<addr>[0-9a-fA-F.:]+?)<\d+>")
# a process died by SIGBUS (touching a mapped page the file system could not back: tmpfs past its size)
_SIGBUS = re.compile(r"\bSIGBUS\b|Bus error|[Cc]aught signal 7\b|signal 7 \(Bus")
# a stack frame in NCCL (a function or libnccl), and one in the shared-memory code of NCCL or UCX
_NCCL_FRAME = re.compile(r"\bnccl[A-Z]\w*\s*\(|libnccl[\w.]*\.so|/libnccl|\bshmutils\.cc")
_SHM_FRAME = re.compile(r"\bncclShm\w*|shmutils\.cc|\bshm\.h:\d+|\buct_mm_\w+|\buct_posix_\w+|\bmm_posix\.c")
# a line of a stack trace (gdb "#0 0x... in f", "0x... in f () from lib", UCX/glibc " 2 0x... f()  ???:0",
# Python faulthandler / backtrace "[bt]"): a library path elsewhere (an ls listing) is not a frame
_FRAME_LINE = re.compile(r"^\s*(?:#\d+\s|\d+\s+0x[0-9a-fA-F]+\s|0x[0-9a-fA-F]+ in |\[bt\]|from /)")
# UCX's own report that its shared-memory (mm/posix) segment could not be allocated, before the SIGBUS
_SHM_FAIL = re.compile(r"posix/memory\) failed|mm_iface failed to allocate|Not enough memory to write total of")
# NCCL's topology detection met a NIC that is not a PCI device (usb, virtual): src/graph/xml.cc, 2.6 on
_NON_PCI_NIC = re.compile(r"Topology detection: network path .* is not a PCI device")
# the kernel's report of a GPU fault ("NVRM: Xid (PCI:0000:3b:00): 79, ...")
_XID = re.compile(r"NVRM: Xid\b")
_ENV_HINTS = (
    "shm",
    "uct_",
    "Bus error",
    "SIGBUS",
    "signal 7",
    "nccl",
    "not a PCI device",
    "export ",
    "--ipc",
    "hostIPC",
    "Xid",
)
# Per-writer bounds: whatever a log repeats, one writer's context stays small (memory is
# bounded per distinct writer). Real jobs have a handful of versions/devices and few communicators.
MAX_VALUES = 64  # distinct values kept per set
MAX_ENV = 256  # environment variables kept per writer
MAX_COMMS = 256  # communicators tracked per writer
_TESTS_RANK = re.compile(
    r"Rank\s+(?P<rank>\d+)\s+(?:Group\s+\d+\s+)?Pid\s+(?P<pid>\d+)\s+on\s+(?P<host>\S+)\s+device\s+(?P<dev>\d+)"
)


@dataclass
class InitState:
    rank: int
    nranks: int
    started: LogLine | None = None
    completed: bool = False


@dataclass
class ContextAccumulator:
    """Mutable while scanning one identity's lines; summarised into LogContext."""

    nccl_versions: set[str] = field(default_factory=set)
    cuda_runtime: set[str] = field(default_factory=set)
    cuda_driver: set[str] = field(default_factory=set)
    ib_devices: set[str] = field(default_factory=set)
    relaxed_ordering: bool | None = None
    dmabuf_gpus: set[int] = field(default_factory=set)
    gdr_disabled: set[str] = field(default_factory=set)
    gdr_enabled: set[str] = field(default_factory=set)
    transports: set[str] = field(default_factory=set)
    networks: set[str] = field(default_factory=set)
    env: dict[str, str] = field(default_factory=dict)
    libibverbs_missing: bool = False
    inits: dict[str, InitState] = field(default_factory=dict)
    test_ranks: dict[tuple[str, int], set[int]] = field(default_factory=dict)  # nccl-tests (host, pid) -> ranks
    version_lines: dict[str, LogLine] = field(default_factory=dict)  # first "NCCL version" line per version
    roce_gids: bool = False  # an IPv4-mapped GID (::ffff:) in a NET/IB line: RoCEv2
    socket_net: bool = False  # "NET/Socket : Using ..."
    ofi_providers: set[str] = field(default_factory=set)  # "NET/OFI Selected Provider is X"
    gloo_loopback: bool = False  # Gloo bound/advertised 127.0.0.1
    gpu_pv: bool = False  # a WSL2 / Hyper-V GPU-PV path: /usr/lib/wsl, /dev/dxg, libdxcore, a WDDM adapter
    gpu_names: set[str] = field(default_factory=set)  # GPU model names the log prints
    socket_ifaces: set[str] = field(default_factory=set)  # interfaces NCCL's socket/bootstrap code picked
    first_warn: LogLine | None = None  # the writer's first "NCCL WARN" line
    # "NVLS multicast support is [not ]available on dev N" (src/transport/nvls.cc, 2.17.1 on): None, not printed
    nvls_available: bool | None = None
    init_all_nranks: int | None = None  # ncclCommInitAll's bare "nranks N" (one process, one node)
    result_trace: set[str] = field(default_factory=set)  # source files of NCCL's "file:line -> N" return trace
    kill_line: LogLine | None = None  # the first line showing a process of the job killed (OOM killer, SIGKILL)
    exit_line: LogLine | None = None  # the first line showing a process of the job ended (signal, exit code)
    net_error_line: LogLine | None = None  # the first fabric error line (completion error, timeout, no route)
    peer_gone_line: LogLine | None = None  # the first line showing a peer's socket closed or reset
    torch_versions: set[str] = field(default_factory=set)
    net_plugins: set[str] = field(default_factory=set)  # NCCL net plugins loaded
    docker_hostname: str | None = None  # a writer's host name is a Docker container ID (the default hostname)
    shm_size_mib: float | None = None  # /dev/shm's size as the log prints it (df, --shm-size)
    shm_size_line: LogLine | None = None
    host_ipc: bool = False  # a command line or spec in the log shares the host's IPC namespace (its /dev/shm)
    socket_addrs: set[str] = field(default_factory=set)  # "iface:address" NCCL's socket/bootstrap code picked
    sigbus_line: LogLine | None = None  # a process died by SIGBUS
    nccl_frame_line: LogLine | None = None  # a stack frame in NCCL
    shm_frame_line: LogLine | None = None  # a stack frame in NCCL's or UCX's shared-memory code
    non_pci_nic_line: LogLine | None = None  # NCCL's topology detection found a NIC that is not on PCI
    xid_line: LogLine | None = None  # the kernel reported a GPU fault (Xid)
    crash_frames: list[str] = field(default_factory=list)  # the first stack's frame lines (frames.py)
    stack_lines: list[str] = field(default_factory=list)  # MPI-stack release/build lines (frames.STACK_LINE_HINTS)

    @staticmethod
    def _add(target: set[T], value: T) -> None:
        if len(target) < MAX_VALUES:
            target.add(value)

    @staticmethod
    def relevant(text: str) -> bool:
        """Cheap substring tests: most lines of a big log carry none of these facts."""
        return (
            "NCCL" in text
            or "Rank" in text
            or "via " in text
            or "NET/" in text
            or "loopback" in text
            or "127." in text
            or any(h in text for h in _GPU_PV_HINTS)
            or any(h in text for h in _EXIT_HINTS)
            or any(h in text for h in _ENV_HINTS)
        )

    def feed(self, line: LogLine) -> None:
        text = line.text
        if self.docker_hostname is None:
            host = line.host
            if host is None and text.startswith("["):
                m = _UCX_HOST.match(text)
                host = m.group("host") if m else None
            if host is not None and _DOCKER_HOST.match(host):
                self.docker_hostname = host
        if len(self.crash_frames) < frames.MAX_FRAMES and frames.parse(text) is not None:
            self.crash_frames.append(text)
        if len(self.stack_lines) < frames.MAX_STACK_LINES and any(h in text for h in frames.STACK_LINE_HINTS):
            self.stack_lines.append(text)
        if not self.relevant(text):
            return
        self._environment(line, text)
        if not self.gpu_pv and any(h in text for h in _GPU_PV_HINTS) and _GPU_PV.search(text):
            self.gpu_pv = True
        if self.first_warn is None and "NCCL WARN" in text:
            self.first_warn = line
        if "NCCL version" in text:
            m = _VERSION.search(text)
            if m:
                self._add(self.nccl_versions, m.group("v"))
                if m.group("v") in self.nccl_versions:
                    self.version_lines.setdefault(m.group("v"), line)
                if m.group("cuda"):
                    self._add(self.cuda_runtime, m.group("cuda"))
        if "cudaDriverVersion" in text:
            m = _DRIVER.search(text)
            if m:
                self._add(self.cuda_driver, m.group("v"))
        if "NET/IB" in text:
            m = _IB_USING.search(text)
            if m:
                rest = m.group("rest")
                for d in _IB_DEV.finditer(rest):
                    self._add(self.ib_devices, d.group("dev"))
                head = rest.split("; OOB")[0]
                self.relaxed_ordering = bool(self.relaxed_ordering) or "[RO]" in head
            m = _GDR.search(text)
            if m:
                self._add(
                    self.gdr_disabled if m.group("state").lower() == "disabled" else self.gdr_enabled, m.group("hca")
                )
            if not self.roce_gids and "::ffff:" in text:
                self.roce_gids = True
        if "DMA-BUF" in text:
            m = _DMABUF.search(text)
            if m:
                self._add(self.dmabuf_gpus, int(m.group("gpu")))
        if "via " in text:
            for v in _VIA.finditer(text):
                self._add(self.transports, "/".join(p for p in v.group("t").split("/") if not p.isdigit()))
        if "Using network" in text:
            m = _NETWORK.search(text)
            if m:
                self._add(self.networks, m.group("n"))
        if "set by environment" in text:
            m = _ENV.search(text)
            if m and (m.group("name") in self.env or len(self.env) < MAX_ENV):
                self.env[m.group("name")] = m.group("value").strip()
        if "libibverbs" in text and _NO_VERBS.search(text):
            self.libibverbs_missing = True
        if "nranks" in text and self.init_all_nranks is None:
            m = _INIT_ALL.search(text)
            if m:
                self.init_all_nranks = int(m.group("n"))
        if "comm 0x" in text:
            m = _COMM.search(text)
            if m and (m.group("comm") in self.inits or len(self.inits) < MAX_COMMS):
                st = self.inits.setdefault(m.group("comm"), InitState(int(m.group("rank")), int(m.group("nranks"))))
                if m.group("phase") == "Init START" and st.started is None:
                    st.started = line
                elif m.group("phase") == "Init COMPLETE":
                    st.completed = True
        if "Pid" in text:
            m = _TESTS_RANK.search(text)
            if m and len(self.test_ranks) < MAX_COMMS:
                self._add(
                    self.test_ranks.setdefault((m.group("host"), int(m.group("pid"))), set()), int(m.group("rank"))
                )
        if "NVLS multicast support is" in text:
            self.nvls_available = bool(self.nvls_available) or "is not available" not in text
        if "NET/Socket" in text and not self.socket_net and "Using" in text:
            self.socket_net = True
        if not self.gloo_loopback and ("loopback" in text or "127." in text) and _GLOO_LOOPBACK.search(text):
            self.gloo_loopback = True
        if "Pid" in text and "device" in text:
            m = _TESTS_GPU.search(text)
            if m:
                self._add(self.gpu_names, m.group("gpu"))
        if "Using" in text and ("NET/Socket" in text or "Bootstrap" in text or "Using interface" in text):
            for rx in (_SOCK_IFACE, _BOOT_IFACE) if "NET/Socket" in text else (_BOOT_IFACE,):
                for m in rx.finditer(text.split("Using", 1)[1] if rx is _SOCK_IFACE else text):
                    self._add(self.socket_ifaces, m.group("if"))
        if " -> " in text and "NCCL INFO" in text:
            m = _TRACE.search(text)
            if m:
                self._add(self.result_trace, m.group("file").rsplit("/", 1)[-1])
        if self.kill_line is None and _KILLED.search(text):
            self.kill_line = line
        if self.exit_line is None and _EXITED.search(text):
            self.exit_line = line
        if self.net_error_line is None and _NET_ERROR.search(text):
            self.net_error_line = line
        if self.peer_gone_line is None and _PEER_GONE.search(text):
            self.peer_gone_line = line
        if "torch" in text or "PyTorch" in text:
            m = _TORCH.search(text)
            if m:
                self._add(self.torch_versions, m.group("v"))
        if "NET/Plugin" in text:
            m = _PLUGIN.search(text)
            if m:
                self._add(self.net_plugins, m.group("p").strip() + (f" ({m.group('api')})" if m.group("api") else ""))
        if "NET/OFI" in text and "Selected" in text:
            m = _OFI_PROVIDER.search(text)
            if m:
                self._add(self.ofi_providers, m.group("p"))

    def _environment(self, line: LogLine, text: str) -> None:
        """Where the job ran: /dev/shm's size, the host IPC namespace, the addresses NCCL picked, a SIGBUS and the
        frames around it, a NIC NCCL's topology code could not place on PCI, settings echoed by the shell."""
        if "/dev/shm" in text and self.shm_size_mib is None:
            m = _DF_SHM.match(text)
            if m:
                self.shm_size_mib, self.shm_size_line = _mib(m.group("size"), m.group("unit") or "K"), line
        if "--shm-size" in text and self.shm_size_mib is None:
            m = _SHM_FLAG.search(text)
            if m:
                self.shm_size_mib, self.shm_size_line = _mib(m.group("size"), m.group("unit") or "b"), line
        if ("--ipc" in text or "hostIPC" in text) and _HOST_IPC.search(text):
            self.host_ipc = True
        if "export " in text:
            m = _EXPORT.search(text)
            if m and m.group("name") not in self.env and len(self.env) < MAX_ENV:
                self.env[m.group("name")] = m.group("value").strip("'\"")
        if "<" in text and "Using" in text:
            for m in _SOCK_ADDR.finditer(text):
                self._add(self.socket_addrs, f"{m.group('if')}:{m.group('addr')}")
        if self.sigbus_line is None and _SIGBUS.search(text):
            self.sigbus_line = line
        if self.nccl_frame_line is None or self.shm_frame_line is None:
            frame = _FRAME_LINE.match(text) is not None
            if frame and self.nccl_frame_line is None and _NCCL_FRAME.search(text):
                self.nccl_frame_line = line
            if self.shm_frame_line is None and ((frame and _SHM_FRAME.search(text)) or _SHM_FAIL.search(text)):
                self.shm_frame_line = line
        if self.non_pci_nic_line is None and "not a PCI device" in text and _NON_PCI_NIC.search(text):
            self.non_pci_nic_line = line
        if self.xid_line is None and "Xid" in text and _XID.search(text):
            self.xid_line = line

    def merge(self, other: ContextAccumulator) -> None:
        for name in (
            "nccl_versions",
            "cuda_runtime",
            "cuda_driver",
            "ib_devices",
            "dmabuf_gpus",
            "gdr_disabled",
            "gdr_enabled",
            "transports",
            "networks",
            "ofi_providers",
            "gpu_names",
            "socket_ifaces",
            "result_trace",
            "torch_versions",
            "net_plugins",
            "socket_addrs",
        ):
            mine = getattr(self, name)
            for v in getattr(other, name):
                self._add(mine, v)
        for k, v in other.version_lines.items():
            if k in self.nccl_versions:
                self.version_lines.setdefault(k, v)
        self.roce_gids = self.roce_gids or other.roce_gids
        self.socket_net = self.socket_net or other.socket_net
        self.gloo_loopback = self.gloo_loopback or other.gloo_loopback
        if other.nvls_available is not None:
            self.nvls_available = bool(self.nvls_available) or other.nvls_available
        self.gpu_pv = self.gpu_pv or other.gpu_pv
        if other.first_warn is not None and (
            self.first_warn is None
            or (other.first_warn.source, other.first_warn.lineno) < (self.first_warn.source, self.first_warn.lineno)
        ):
            self.first_warn = other.first_warn
        if other.relaxed_ordering is not None:
            self.relaxed_ordering = bool(self.relaxed_ordering) or other.relaxed_ordering
        for k, v in other.env.items():
            if k in self.env or len(self.env) < MAX_ENV:
                self.env.setdefault(k, v)
        self.libibverbs_missing = self.libibverbs_missing or other.libibverbs_missing
        for key, ranks in other.test_ranks.items():
            if key in self.test_ranks or len(self.test_ranks) < MAX_COMMS:
                for r in ranks:
                    self._add(self.test_ranks.setdefault(key, set()), r)
        self.docker_hostname = self.docker_hostname or other.docker_hostname
        self.host_ipc = self.host_ipc or other.host_ipc
        if self.shm_size_mib is None and other.shm_size_mib is not None:
            self.shm_size_mib, self.shm_size_line = other.shm_size_mib, other.shm_size_line
        for name in (
            "kill_line",
            "exit_line",
            "net_error_line",
            "peer_gone_line",
            "sigbus_line",
            "nccl_frame_line",
            "shm_frame_line",
            "non_pci_nic_line",
            "xid_line",
        ):
            mine, theirs = getattr(self, name), getattr(other, name)
            if theirs is not None and (mine is None or (theirs.source, theirs.lineno) < (mine.source, mine.lineno)):
                setattr(self, name, theirs)
        if not self.crash_frames:
            self.crash_frames = list(other.crash_frames)
        for text in other.stack_lines:
            if len(self.stack_lines) < frames.MAX_STACK_LINES and text not in self.stack_lines:
                self.stack_lines.append(text)
        if self.init_all_nranks is None:
            self.init_all_nranks = other.init_all_nranks
        for k, v in other.inits.items():
            if k in self.inits or len(self.inits) < MAX_COMMS:
                self.inits.setdefault(k, v)

    def world_rank(self) -> tuple[int, int] | None:
        """(rank, nranks) in the largest communicator this process joined: the world rank."""
        best = None
        for st in self.inits.values():
            if best is None or st.nranks > best[1]:
                best = (st.rank, st.nranks)
        return best

    def summary(self) -> LogContext:
        return LogContext(
            nccl_versions=tuple(sorted(self.nccl_versions)),
            cuda_runtime=tuple(sorted(self.cuda_runtime)),
            cuda_driver=tuple(sorted(self.cuda_driver)),
            ib_devices=tuple(sorted(self.ib_devices)),
            relaxed_ordering=self.relaxed_ordering,
            dmabuf_gpus=tuple(sorted(self.dmabuf_gpus)),
            gdr_disabled=tuple(sorted(self.gdr_disabled)),
            gdr_enabled=tuple(sorted(self.gdr_enabled)),
            gdrdma_transport=any(t.endswith("GDRDMA") for t in self.transports),
            transports=tuple(sorted(self.transports)),
            networks=tuple(sorted(self.networks)),
            env=dict(sorted(self.env.items())),
            libibverbs_missing=self.libibverbs_missing,
            nranks=max((s.nranks for s in self.inits.values()), default=None),
            roce_gids=self.roce_gids,
            socket_net=self.socket_net,
            ofi_providers=tuple(sorted(self.ofi_providers)),
            gloo_loopback=self.gloo_loopback,
            gpu_pv=self.gpu_pv,
            nccl_warn=(
                f"{self.first_warn.text.strip()[:300]} ({self.first_warn.source}:{self.first_warn.lineno})"
                if self.first_warn is not None
                else None
            ),
            gpu_names=tuple(sorted(self.gpu_names)),
            socket_ifaces=tuple(sorted(self.socket_ifaces)),
            nvls_available=self.nvls_available,
            init_all_nranks=self.init_all_nranks,
            result_trace=tuple(sorted(self.result_trace)),
            kill_line=_cite(self.kill_line),
            exit_line=_cite(self.exit_line),
            net_error_line=_cite(self.net_error_line),
            peer_gone_line=_cite(self.peer_gone_line),
            torch_versions=tuple(sorted(self.torch_versions)),
            net_plugins=tuple(sorted(self.net_plugins)),
            docker_hostname=self.docker_hostname,
            shm_size_mib=self.shm_size_mib,
            shm_size_line=_cite(self.shm_size_line),
            host_ipc=self.host_ipc,
            socket_addrs=tuple(sorted(self.socket_addrs)),
            sigbus_line=_cite(self.sigbus_line),
            nccl_frame_line=_cite(self.nccl_frame_line),
            shm_frame_line=_cite(self.shm_frame_line),
            non_pci_nic_line=_cite(self.non_pci_nic_line),
            xid_line=_cite(self.xid_line),
            crash_frames=tuple(self.crash_frames),
            stack_lines=tuple(self.stack_lines),
            listed_ranks=len(set().union(*self.test_ranks.values())) if self.test_ranks else None,
        )


_UNIT_MIB = {"b": 1 / (1024 * 1024), "k": 1 / 1024, "m": 1.0, "g": 1024.0, "t": 1024.0 * 1024}


def _mib(size: str, unit: str) -> float:
    return float(size) * _UNIT_MIB[unit.lower()]


def _cite(line: LogLine | None) -> str | None:
    return f"{line.text.strip()[:200]} ({line.source}:{line.lineno})" if line is not None else None


@dataclass(frozen=True)
class LogContext:
    """What the INFO lines say; None/empty means the log did not say (e.g. NCCL_DEBUG was not INFO)."""

    nccl_versions: tuple[str, ...] = ()
    cuda_runtime: tuple[str, ...] = ()  # from "NCCL version x+cudaY"
    cuda_driver: tuple[str, ...] = ()  # cudaDriverVersion, e.g. "12080"
    ib_devices: tuple[str, ...] = ()  # "mlx5_0:1/IB"
    relaxed_ordering: bool | None = None  # "[RO]" in "NET/IB : Using ..."
    dmabuf_gpus: tuple[int, ...] = ()
    gdr_disabled: tuple[str, ...] = ()
    gdr_enabled: tuple[str, ...] = ()
    gdrdma_transport: bool = False  # a channel "via NET/IB/GDRDMA"
    transports: tuple[str, ...] = ()
    networks: tuple[str, ...] = ()  # "Using network IB|Socket|IBext"
    env: dict[str, str] = field(default_factory=dict)  # "NCCL_X set by environment to V"
    libibverbs_missing: bool = False
    nranks: int | None = None
    roce_gids: bool = False  # an IPv4-mapped GID (::ffff:) in a NET/IB line (RoCEv2)
    socket_net: bool = False  # "NET/Socket : Using ..." seen
    ofi_providers: tuple[str, ...] = ()  # libfabric providers the AWS OFI plugin selected
    gloo_loopback: bool = False  # Gloo fell back to / advertised 127.0.0.1
    gpu_pv: bool = False  # the log shows a WSL2 / Hyper-V GPU-PV path (/usr/lib/wsl, /dev/dxg, dxcore, WDDM)
    nccl_warn: str | None = None  # the first "NCCL WARN" line and where it is
    gpu_names: tuple[str, ...] = ()  # GPU model names the log prints (nccl-tests device lines)
    socket_ifaces: tuple[str, ...] = ()  # interfaces NCCL's socket transport / bootstrap picked
    nvls_available: bool | None = None  # NCCL said NVLS multicast is (not) available on a GPU
    init_all_nranks: int | None = None  # ncclCommInitAll's "nranks N" (NCCL 2.3.5..2.4.8)
    result_trace: tuple[str, ...] = ()  # files of NCCL's "file.cc:N -> code" error return trace (bootstrap.cc, ...)
    kill_line: str | None = None  # a process of the job was killed (OOM killer, SIGKILL): the line and where
    exit_line: str | None = None  # a process of the job ended (signal, exit code): the line and where
    net_error_line: str | None = None  # a fabric error line (IB completion error, timeout, unreachable)
    peer_gone_line: str | None = None  # a peer's socket closed or reset (Connection reset by peer, Broken pipe)
    torch_versions: tuple[str, ...] = ()  # "PyTorch version: X", "torch==X"
    net_plugins: tuple[str, ...] = ()  # NCCL net plugins loaded ("NET/Plugin: Loaded net plugin X (vN)")
    # where the job ran (environment evidence): a Docker container's default host name, /dev/shm as printed, the
    # host IPC namespace, the addresses NCCL picked, a SIGBUS and the NCCL / shared-memory frames of a crash
    docker_hostname: str | None = None
    shm_size_mib: float | None = None
    shm_size_line: str | None = None
    host_ipc: bool = False
    socket_addrs: tuple[str, ...] = ()  # "iface:address"
    sigbus_line: str | None = None
    nccl_frame_line: str | None = None
    shm_frame_line: str | None = None
    non_pci_nic_line: str | None = None  # "Topology detection: network path ... is not a PCI device"
    xid_line: str | None = None  # "NVRM: Xid ..." (a GPU fault the kernel reported)
    crash_frames: tuple[str, ...] = ()  # the frame lines of the first stack a writer printed (crash_components.py)
    stack_lines: tuple[str, ...] = ()  # lines showing an MPI-stack component's release or build (ucx_info, ompi_info)
    listed_ranks: int | None = None  # ranks nccl-tests' "Rank N Group G Pid P on HOST" table lists
    # filled in by decide.py from every writer: did the job run on one node (None: the log does not say), and why
    single_node: bool | None = None
    single_node_why: str = ""
    in_container: bool | None = None  # a container runtime's command/message in the log
    in_container_why: str = ""
