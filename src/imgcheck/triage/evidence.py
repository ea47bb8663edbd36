"""Fact predicates read from the log's own evidence (INFO lines), for signature conditions.

Kept apart from predicates.py (image/node facts, whose thresholds come from the matrix) so the
two can change independently. Each returns (True | False | None, reason); None means the log
does not say.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

from ..knowledge import net_select
from .predicates import PREDICATES, Facts, Result, job_shm_default_small

# Settings that show a job meant to use NCCL's IB/RoCE transport (NCCL env docs).
IB_INTENT_ENV = (
    "NCCL_IB_HCA",
    "NCCL_IB_GID_INDEX",
    "NCCL_IB_TC",
    "NCCL_IB_SL",
    "NCCL_IB_TIMEOUT",
    "NCCL_IB_RETRY_CNT",
    "NCCL_NET_GDR_LEVEL",
    "NCCL_IB_PCI_RELAXED_ORDERING",
)


def log_roce(f: Facts) -> Result:
    devs = f.log.ib_devices
    if any(d.endswith("/RoCE") for d in devs):
        return True, "log: NET/IB uses RoCE devices (" + ", ".join(d for d in devs if d.endswith("/RoCE"))[:120] + ")"
    if f.log.roce_gids:
        return True, "log: IPv4-mapped GIDs (::ffff:a.b.c.d) are RoCEv2 addresses"
    if devs:
        return False, "log: NET/IB devices are InfiniBand (" + ", ".join(devs[:4]) + ")"
    return None, "the log names no NET/IB device (NCCL_DEBUG=INFO shows 'NET/IB : Using ...')"


def log_ib_requested(f: Facts) -> Result:
    """Did the job mean to use NCCL's IB transport? True on an explicit IB setting or an IB network;
    False only when the log shows the socket network chosen and no IB setting at all."""
    env = f.log.env
    set_ = [k for k in IB_INTENT_ENV if k in env]
    if set_:
        return True, f"log: {', '.join(set_)} set by environment"
    if env.get("NCCL_IB_DISABLE", "").strip() == "0" or env.get("NCCL_NET", "").upper().startswith("IB"):
        return True, "log: NCCL_IB_DISABLE=0 / NCCL_NET=IB set by environment"
    if env.get("NCCL_IB_DISABLE", "").strip() == "1":
        return False, "log: NCCL_IB_DISABLE=1 set by environment (IB turned off on purpose)"
    if any(n.upper().startswith("IB") for n in f.log.networks) or f.log.ib_devices:
        return True, "log: NCCL chose an IB network"
    if f.log.socket_net or "Socket" in f.log.networks:
        return False, "log: NCCL used the socket network and no NCCL_IB_* setting appears"
    return None, "the log does not say which network NCCL chose"


def log_ofi_not_efa(f: Facts) -> Result:
    prov = f.log.ofi_providers
    if not prov:
        return None, "the log names no libfabric provider ('NET/OFI Selected Provider is ...')"
    if any(p.lower().startswith("efa") for p in prov):
        return False, f"log: libfabric provider {', '.join(prov)}"
    return True, f"log: libfabric selected {', '.join(prov)}, not efa"


def log_gloo_loopback(f: Facts) -> Result:
    if f.log.gloo_loopback:
        return True, "log: Gloo fell back to / advertised the loopback address"
    return None, "the log does not show which address Gloo bound"


# Interfaces that exist privately on every host (loopback, container bridges and their veth ends, libvirt):
# the same address on each node, so a peer dialling it reaches nothing or itself.
VIRTUAL_IFACE_PREFIXES = ("docker", "br-", "veth", "virbr", "cni", "flannel", "cali", "vxlan", "lxc", "tun", "tap")


def log_socket_iface_virtual(f: Facts) -> Result:
    ifs = f.log.socket_ifaces
    if not ifs:
        return (
            None,
            "the log names no interface NCCL's socket/bootstrap code picked (NCCL_DEBUG=INFO 'NET/Socket : Using')",
        )
    # and the node-local links compat_matrix node_local_interfaces lists (EKS Pod Identity's pod-id-link0 at
    # 169.254.170.23, NodeLocal DNSCache, kube-ipvs0, Podman/LXD bridges): the same or a link-local address
    bad = [
        i
        for i in ifs
        if i.startswith(VIRTUAL_IFACE_PREFIXES) or i == "lo" or net_select.node_local_row(f.kb, i) is not None
    ]
    if bad:
        return True, f"log: NCCL picked container/virtual interface(s) {', '.join(bad[:4])}"
    # a bridge subnet alone is not evidence: cloud VPCs use the same private ranges (a Tencent VM's eth0 is
    # 172.17.0.14 in the 07d set's nccl-1231); only with a container shown around the job does it mean a bridge
    bridged = bridge_addresses(f) if f.log.in_container else []
    if bridged:
        return True, "log: NCCL picked " + ", ".join(bridged[:4]) + f" ({f.log.in_container_why})"
    return False, f"log: NCCL picked {', '.join(ifs[:4])}"


def bridge_addresses(f: Facts) -> list[str]:
    """Addresses NCCL picked inside the subnet of a container bridge (node_local_interfaces rows that give one:
    Docker's docker0, Podman's podman0): a container on that bridge network sees its end of the veth pair as eth0
    with such an address, private to its host, so the interface name alone does not show it."""
    nets = []
    for row in f.kb.rows("node_local_interfaces"):
        if row.get("kind") == "same-on-every-node" and row.get("address"):
            nets.append((ipaddress.ip_network(row["address"], strict=False), row["owner"]))
    out = []
    for item in f.log.socket_addrs:
        name, _, addr = item.partition(":")
        try:
            ip = ipaddress.ip_address(addr)
        except ValueError:
            continue
        for net, owner in nets:
            if ip.version == net.version and ip in net:
                out.append(f"{name} {addr}, inside {net} ({owner}): a container on a bridge network")
                break
    return out


def log_nccl_older_than_gpu(f: Facts) -> Result:
    """The log's NCCL version below the first release for the GPU generation the log (or node) names."""
    from ..knowledge import nccl as nccl_k
    from .predicates import nccl_version

    version, where = nccl_version(f)
    names = list(f.log.gpu_names)
    if not names and f.node is not None:
        names = sorted({g.name for g in f.node.gpu.gpus if g.name})
    if version is None:
        return None, where
    if not names:
        return None, "neither the log nor node facts name the GPU model"
    return nccl_k.older_than_gpu_generation(f.kb, version, names)


def log_nccl_warn_present(f: Facts) -> Result:
    if f.log.nccl_warn:
        return True, f"the log holds NCCL's WARN: {f.log.nccl_warn}"
    return False, "the log holds no 'NCCL WARN' line (rerun with NCCL_DEBUG=WARN to get it)"


def log_efa_seen(f: Facts) -> Result:
    """EFA in use somewhere in the job: the OFI plugin carried channels, or libfabric selected efa."""
    if any(p.lower().startswith("efa") for p in f.log.ofi_providers):
        return True, f"log: libfabric selected {', '.join(f.log.ofi_providers)}"
    if any(t.startswith("NET/AWS") for t in f.log.transports):
        return True, "log: channels run 'via NET/AWS Libfabric' (the OFI plugin opened EFA)"
    if f.log.ofi_providers:
        return False, f"log: libfabric selected {', '.join(f.log.ofi_providers)} and no channel runs via NET/AWS"
    return None, "the log shows no EFA channel or provider selection"


def log_single_node(f: Facts) -> Result:
    """The job ran on one node: decided in decide.py from every writer (ncclCommInitAll, nccl-tests' rank table,
    the hosts and ranks NCCL's comm lines name, channels via NET)."""
    return f.log.single_node, f.log.single_node_why or "the log does not say how many nodes the job used"


def log_in_container(f: Facts) -> Result:
    """A container around the job: the log shows a runtime, or the triage was given an image or a launch spec."""
    if f.log.in_container:
        return True, f.log.in_container_why
    if f.image is not None:
        return True, f"the job ran image {f.image.reference}"
    if f.job is not None and (f.job.image or f.job.runtime):
        return True, f"the launch spec runs a container ({f.job.kind})"
    return None, "the log shows no container runtime (docker/podman/enroot/pyxis/kubectl/apptainer line)"


def log_gpu_peer_path_only(f: Facts) -> Result:
    """Every channel the log shows runs between GPUs of one node, over PCIe/NVLink peer access or host shared memory
    ('via P2P/...', 'via SHM/...': NCCL connects those only between ranks on the same host), none over the network:
    the paths PCIe ACS redirection and an IOMMU in translating mode sit on are the only ones in use."""
    peer = sorted(t for t in f.log.transports if t.startswith(("P2P", "SHM")))
    net = sorted(t for t in f.log.transports if t.startswith(("NET", "CollNet")))
    if peer and not net:
        return True, "log: channels via " + ", ".join(peer[:4]) + " only (GPUs of one node)"
    if net:
        return False, "log: channels also via " + ", ".join(net[:4]) + " (the network is in use)"
    if f.log.transports:
        return False, "log: channels via " + ", ".join(sorted(f.log.transports)[:4])
    return None, "the log shows no channel transport (NCCL_DEBUG=INFO prints 'Channel NN : a -> b via ...')"


def log_kill_seen(f: Facts) -> Result:
    """A process of the job was killed (the OOM killer, SIGKILL, Kubernetes' OOMKilled). Its absence decides nothing:
    the killed rank's log or the node's dmesg may not be among the inputs."""
    if f.log.kill_line:
        return True, f"log: {f.log.kill_line}"
    return None, "the log shows no process killed (the peer's log, its node's dmesg or kubectl describe pod would)"


def log_process_exit_seen(f: Facts) -> Result:
    """A process of the job ended first: a signal, an exit code, a crash, or the peer's end of a connection closed or
    reset (ECONNRESET / EPIPE / an orderly close: the peer's process ended or closed the socket)."""
    line = f.log.exit_line or f.log.kill_line or f.log.peer_gone_line
    if line:
        return True, f"log: {line}"
    return None, "the log shows no other process ending (read the other ranks' logs: sacct, kubectl logs)"


def log_net_error_seen(f: Facts) -> Result:
    """A fabric error line: an IB completion error or async event, a socket recv/send or connect that failed."""
    if f.log.net_error_line:
        return True, f"log: {f.log.net_error_line}"
    return None, "the log shows no network error line (completion error, recv/send or connect failure)"


def log_remote_error_in_bootstrap(f: Facts) -> Result:
    """NCCL's error return trace ('NCCL INFO bootstrap.cc:N -> 6') passes through the bootstrap: the failure
    happened while the ranks exchanged addresses during communicator init, before any collective."""
    trace = f.log.result_trace
    if not trace:
        return None, "the log holds no NCCL error return trace ('NCCL INFO file.cc:N -> code', NCCL_DEBUG=INFO)"
    if "bootstrap.cc" in trace:
        return True, "log: NCCL's error return trace passes through bootstrap.cc (" + ", ".join(trace[:6]) + ")"
    return False, "log: NCCL's error return trace does not pass through bootstrap.cc (" + ", ".join(trace[:6]) + ")"


def log_sigbus_in_shared_memory(f: Facts) -> Result:
    """A process died by SIGBUS inside NCCL or in a shared-memory frame (NCCL's ncclShm*, UCX's mm/posix): a page
    of a /dev/shm file was touched that tmpfs could not back, i.e. /dev/shm is smaller than the segments mapped in
    it (Linux mmap(2): SIGBUS on access to a part of the mapping with no backing page)."""
    if f.log.sigbus_line is None:
        return None, "the log shows no SIGBUS"
    frame = f.log.shm_frame_line or f.log.nccl_frame_line
    if frame is None:
        return None, f"log: {f.log.sigbus_line}; no stack frame in NCCL or shared-memory code is shown"
    return True, f"log: {f.log.sigbus_line}; frame {frame}"


def log_shm_small(f: Facts) -> Result:
    """Is the job's /dev/shm the runtime's small default? The launch spec decides first; else what the log prints:
    a host IPC namespace (no), df's size of /dev/shm or docker's --shm-size (no larger than Docker's default: yes)."""
    v, why = job_shm_default_small(f)
    if v is not None:
        return v, why
    if f.log.host_ipc:
        return False, "log: the container shares the host's IPC namespace (--ipc=host / hostIPC), the host's /dev/shm"
    size = f.log.shm_size_mib
    if size is not None:
        default = float(f.kb.threshold("docker_default_shm_mib"))
        if size <= default:
            return True, f"log: /dev/shm is {size:g} MiB ({f.log.shm_size_line}), no more than Docker's default"
        return None, f"log: /dev/shm is {size:g} MiB ({f.log.shm_size_line}); enough or not depends on the ranks"
    if f.log.in_container:
        return None, (
            f"{f.log.in_container_why}; a container's /dev/shm is the runtime's 64 MiB default unless --shm-size or "
            "--ipc=host was given, which the log does not show"
        )
    return None, "the log shows neither the size of /dev/shm nor a container"


def log_single_process(f: Facts) -> Result:
    """The job is one process: every communicator NCCL logged has one rank, or nccl-tests' rank table (printed by
    the first process for every rank of the job) lists one rank."""
    if f.log.nranks is not None:
        return f.log.nranks == 1, f"log: the largest communicator has {f.log.nranks} rank(s)"
    if f.log.listed_ranks is not None:
        return f.log.listed_ranks == 1, f"log: nccl-tests' rank table lists {f.log.listed_ranks} rank(s)"
    return None, "the log does not say how many processes the job ran"


def log_libcuda_loaded(f: Facts) -> Result:
    """NCCL printed cudaDriverVersion: it asked a loaded driver library (libcuda) for its version."""
    if f.log.cuda_driver:
        return True, f"log: cudaDriverVersion {', '.join(f.log.cuda_driver)} (a driver library was loaded)"
    return None, "the log does not show a driver library answering (NCCL_DEBUG=INFO prints cudaDriverVersion)"


def log_non_pci_nic(f: Facts) -> Result:
    """NCCL's topology detection found a network device that is not on PCI (usb, virtual) and attached it to the
    first CPU (src/graph/xml.cc, 2.6 on): the XML NCCL builds has a nic node without a PCI bus id."""
    if f.log.non_pci_nic_line:
        return True, f"log: {f.log.non_pci_nic_line}"
    return None, "the log does not show NCCL's topology detection (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=GRAPH does)"


def log_driver_below_runtime(f: Facts) -> Result:
    """The CUDA version the driver supports (cudaDriverVersion) against the runtime NCCL was built with
    ("NCCL version x+cudaY"), as NCCL prints them."""
    if not f.log.cuda_driver or not f.log.cuda_runtime:
        return None, "the log does not print both cudaDriverVersion and the CUDA runtime (NCCL_DEBUG=INFO does)"
    drv = min(int(v) for v in f.log.cuda_driver)
    parts = [int(p) for p in max(f.log.cuda_runtime, key=lambda v: [int(p) for p in v.split(".")]).split(".")]
    rt = parts[0] * 1000 + (parts[1] if len(parts) > 1 else 0) * 10
    return drv < rt, f"log: cudaDriverVersion {drv}, NCCL built for CUDA {'.'.join(map(str, parts))} ({rt})"


def log_xid_seen(f: Facts) -> Result:
    """The kernel reported a GPU fault (NVRM: Xid) among the inputs; its absence decides nothing (dmesg may not be
    among them)."""
    if f.log.xid_line:
        return True, f"log: {f.log.xid_line}"
    return None, "no 'NVRM: Xid' line among the inputs (dmesg -T of the node would show one)"


EVIDENCE: dict[str, Callable[[Facts], Result]] = {
    "log.xid_seen": log_xid_seen,
    "log.sigbus_in_shared_memory": log_sigbus_in_shared_memory,
    "log.shm_small": log_shm_small,
    "log.single_process": log_single_process,
    "log.libcuda_loaded": log_libcuda_loaded,
    "log.non_pci_nic": log_non_pci_nic,
    "log.driver_below_runtime": log_driver_below_runtime,
    "log.kill_seen": log_kill_seen,
    "log.process_exit_seen": log_process_exit_seen,
    "log.net_error_seen": log_net_error_seen,
    "log.remote_error_in_bootstrap": log_remote_error_in_bootstrap,
    "log.gpu_peer_path_only": log_gpu_peer_path_only,
    "log.single_node": log_single_node,
    "log.in_container": log_in_container,
    "log.efa_seen": log_efa_seen,
    "log.nccl_warn_present": log_nccl_warn_present,
    "log.gloo_loopback": log_gloo_loopback,
    "log.socket_iface_virtual": log_socket_iface_virtual,
    "log.nccl_older_than_gpu": log_nccl_older_than_gpu,
    "log.roce": log_roce,
    "log.ib_requested": log_ib_requested,
    "log.ofi_not_efa": log_ofi_not_efa,
}

# Every predicate a condition may name: image/node facts and the log's own evidence.
ALL_PREDICATES: dict[str, Callable[[Facts], Result]] = {**PREDICATES, **EVIDENCE}
