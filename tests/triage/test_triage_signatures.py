"""The signature data: it loads, every signature is sourced and matched by a sample line, and
malformed data is refused with one clear error."""

from __future__ import annotations

import copy
import json
from importlib import resources

import pytest

from imgcheck.errors import BadInputError
from imgcheck.triage.logparse import parse_line
from imgcheck.triage.signatures import load_signatures, parse_signatures

# One line per signature (most from the public threads cited in logs/README.md).
SAMPLES = {
    "NCCL-SOCKET-CONNECT-RETRY": "socketPollConnect: connect to 169.254.170.23<45821> returned Connection refused, retrying (13/34) after sleep for 1300 msec",
    "CUDA-INVALID-DEVICE-ORDINAL": "transport/p2p.cc:275 NCCL WARN Cuda failure 101 'invalid device ordinal'",
    "CUDA-DRIVER-INSUFFICIENT": "Cuda failure common.cu:891 'CUDA driver version is insufficient for CUDA runtime version'",
    "NVIDIA-DRIVER-LIBRARY-MISMATCH": "Failed to initialize NVML: Driver/library version mismatch",
    "NCCL-CUDA-FAILURE": "pais:508:508 [0] init.cc:426 NCCL WARN Cuda failure 'operation not supported'",
    "NCCL-ERR-1": "NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1331, unhandled cuda error",
    "IBV-REG-MR-EINVAL": "misc/ibvwrap.cc:182 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Invalid argument",
    "IBV-REG-MR-EFAULT": "mscclpp._mscclpp.IbError: (14, 'ibv_reg_mr failed (errno 14) (Ib failure: Bad address)')",
    "IBV-REG-MR-ENOMEM": "misc/ibvwrap.cc:278 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory",
    "IBV-REG-DMABUF-EOPNOTSUPP": "misc/ibvwrap.cc:288 NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Operation not supported",
    "NCCL-ERR-2": "NCCL error in: /torch/lib/c10d/ProcessGroupNCCL.cpp:260, unhandled system error",
    "NCCL-ERR-3": "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:3763, internal error",
    "GPU-XID-31": "[Mon Aug  5 03:54:13 2024] NVRM: Xid (PCI:0000:00:07): 31, pid=2512125, name=python3.10, Ch 00000008",
    "GPU-XID-79": "NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.",
    "GPU-XID-ECC": "NVRM: Xid (PCI:0000:9b:00): 94, pid=1234, name=python3, Contained ECC error",
    "GPU-XID": "kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001",
    "CKPT-CRC32-SEGFAULT": ' 93:   File "<unknown>", line 0, in crc32_16bytes(void const*, unsigned long, unsigned int)',
    "COMPILE-CACHE-SHARED": "KeyError: 'getpwuid(): uid not found: 1000'",
    "NCCL-ERR-6": "a100:183006:183181 [1] misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer a100-22<47861>",
    "TORCH-WATCHDOG-TIMEOUT": "[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out.",
    "ALLTOALL-NOT-CERTIFIED": "[Rank 5] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12, OpType=ALLTOALL_BASE)",
    "IB-VENDOR-ERR-129": "NCCL WARN NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129",
    "IB-VENDOR-ERR-249": "NET/IB : Got completion from peer 172.21.17.89<38536> with error 5, opcode 48, len 32710, vendor err 249",
    "IB-COMPLETION-ERROR": "vm2:15364:15376 [0] transport/net_ib.cc:1192 NCCL WARN NET/IB : Got completion from peer 192.168.0.12<60054> with error 4, opcode 32704, len 0, vendor err 81",
    "IBVERBS-PROVIDER-ABI": "libibverbs: Warning: couldn't load driver 'mlx4': /x/libibverbs.so.1: version `IBVERBS_PRIVATE_22' not found (required by /usr/lib64/libibverbs/libmlx4-rdmav2.so)",
    "IBVERBS-DRIVER-LOAD-MLX5": "libibverbs: Warning: couldn't load driver 'libmlx5-rdmav34.so': libmlx5-rdmav34.so: cannot open shared object file: No such file or directory",
    "IBVERBS-DRIVER-LOAD": "libibverbs: Warning: couldn't load driver 'libvmw_pvrdma-rdmav34.so': libvmw_pvrdma-rdmav34.so: cannot open shared object file",
    "LIBIBVERBS-MISSING": "axon:5020:5091 [1] NCCL INFO Failed to open libibverbs.so[.1]",
    "NET-IB-NO-DEVICE": "ip-172-31-12-21:45361:45361 [0] NCCL INFO NET/IB : No device found.",
    "GDR-DISABLED": "hostname1:25668:27396 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'",
    "RANK-CRASH": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    # issue 20 (lines verbatim from tests/triage/logs, see logs/README.md)
    "IBVERBS-SYMBOL-VERSION": "EAL: /lib/x86_64-linux-gnu/libmlx5.so.1: version `MLX5_OFED' not found (required by so/x86_64/libmlx5-64.so)",
    "IBVERBS-NO-PROVIDER": "libibverbs: Warning: no userspace device-specific driver found for /sys/class/infiniband_verbs/uverbs0",
    "PEERMEM-SYMBOL-CRC": "[Tue Sep  8 17:16:02 2026] nvidia_peermem: disagrees about version of symbol ib_register_peer_memory_client",
    "PEERMEM-SYMBOL-MISSING": "[Fri Feb 12 11:47:20 2021] nv_peer_mem: Unknown symbol ib_register_peer_memory_client (err 0)",
    "PEERMEM-LOAD-FAILED": "modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument",
    "NET-IB-ASYNC-EVENT": "ubuntu20-server-2:94639:94647 [0] transport/net_ib.cc:100 NCCL WARN NET/IB : mlx5_0:1 Got async event : local access violation work queue error",
    "IB-WC-LOC-PROT-ERR": "[2025-11-09 07:39:30] h100-28:238:1313 [0] transport/net_ib.cc:2451 NCCL WARN NET/IB: Got completion from peer 172.16.12.34<38081> with status=4 opcode=0 len=0 vendor err 83 (Send) hca mlx5_ib0",
    "NET-IB-OPEN-DEVICE": "65826-86bd789679-2dxbs:80746:80746 [3] transport/net_ib.cc:149 NCCL WARN NET/IB : Unable to open device mlx5_59",
    "IBV-MODIFY-QP": "72bf7b08-26f3-4ebc-8b9d-85df3e4414c0:76786:77145 [3] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with error No such device",
    "NCCL-SHM-SEGMENT": "gpu2-ru7:2143:2561 [1] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device",
    "NCCL-SHM-ATTACH": "g148:14937:69361 [0] misc/shmutils.cc:129 NCCL WARN Error while attaching to shared memory segment /dev/shm/nccl-glnlGK (size 14156128), error: No such file or directory (2)",
    "NCCL-BOOTSTRAP-SOCKET": "include/socket.h:344 WARN Socket creation failed : Address family not supported by protocol",
    "NCCL-SOCKET-TYPE-MISMATCH": "user:16899:16961 [0] misc/socket.cc:441 NCCL WARN socketFinalizeAccept: wrong type 4 != 3",
    "NCCL-NVLS-CUDA": "gpu47:4962:5097 [1] transport/nvls.cc:223 NCCL WARN Cuda failure 999 'unknown error",
    "NCCL-CUDA-OOM": "ng30903:3063028:3066152 [3] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'",
    # the WARN of NVIDIA/nccl@v2.26.2-1:src/misc/strongstream.cc, in NCCL's WARN line layout
    "NCCL-LAUNCH-RACE-FATAL": "node1:2181:2181 [0] misc/strongstream.cc:272 NCCL WARN Fatal: host threads racing to launch NCCL on same device.",
    "EFA-NO-DEVICE": "[2025-10-16 22:16:08] ip-172-31-3-90:1929:1937 [0] nccl_net_ofi_rdma_init:7978 NCCL WARN NET/OFI OFI fi_getinfo() call failed: No data available",
    "AWS-OFI-ERROR": "[1,23]<stdout>:ip-172-32-45-165:72593:73427 [7] create_nccl_ofi_component:459 NCCL WARN NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid argument",
    "UCX-ERROR": "[1750835683.514020] [TENCENT64:1392 :0]         libperf.c:1183 UCX  ERROR ucp_ep_create() failed: Destination is unreachable",
    "HOST-OOM-KILL": "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 3 (pid: 812917) of binary: /data/chenhao/anaconda3/envs/ColossalAI-Chat/bin/python",
    "CUDA-OOM": "  what():  CUDA error: out of memory",
    "DATALOADER-SHM": "RuntimeError: DataLoader worker (pid 52) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.",
    "NCCL-SOCKET-CONNECT": "ubuntu:39964:40075 [0] misc/socket.cc:483 NCCL WARN socketStartConnect: Connect to 10.0.0.2<45763> failed : Software caused connection abort",
    "IBV-CALL-FAILED": "misc/ibvwrap.cc:280 NCCL WARN Call to ibv_create_qp failed",
    "PERFTEST-MR-ALLOC": "Couldn't allocate MR with error=14",
    "CUDA-RUNTIME-ERROR": "RuntimeError: cuda runtime error (802) : system not yet initialized at /opt/conda/conda-bld/pytorch_1579022034529/work/aten/src/THC/THCGeneral.cpp:50",
    "NCCL-DUPLICATE-GPU": "[1,2]<stdout>:smc-gpu-03:29880:30398 [0] init.cc:497 NCCL WARN Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000",
    "NCCL-ERR-5": "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.",
    "TORCH-ELASTIC-EXIT": "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 1622990) of binary: /home/changquan/anaconda3/envs/lang/bin/python",
}


def _matching(sigset, text):
    t = parse_line(text, "s", 1).text
    return {s.id for s in sigset.signatures if any(p.search(t) for p in s.patterns)}


def test_packaged_signatures_are_sourced_and_sampled():
    sigset = load_signatures()
    ids = {s.id for s in sigset.signatures}
    for s in sigset.signatures:
        assert s.source and s.confidence in ("verified", "reported", "vendor-guidance", "hypothesis"), s.id
        assert all(c.next.strip() and c.confidence for c in s.causes), s.id
        if s.derived is None:
            assert s.id in SAMPLES, f"{s.id} has no sample line"
            assert s.id in _matching(sigset, SAMPLES[s.id]), s.id
    assert set(SAMPLES) <= ids


@pytest.mark.parametrize(
    "text,absent",
    [
        ("axa:3048391:3048566 [0] NCCL INFO NET/Socket : GPU Direct RDMA Disabled for HCA 0 'lo'", "GDR-DISABLED"),
        (
            "libibverbs: Warning: couldn't load driver 'libvmw_pvrdma-rdmav34.so': cannot open",
            "IBVERBS-DRIVER-LOAD-MLX5",
        ),
        ("NVRM: Xid (PCI:0000:00:07): 31, pid=1", "GPU-XID"),  # the specific XID signature only
        ("Epoch 3: internal error rate 0.1%", "NCCL-ERR-3"),  # not an NCCL error
        # UCX and EFA/libfabric lines are their own paths, never read as NCCL's IB transport
        ("UCX ERROR ibv_reg_mr failed: Cannot allocate memory", "IBV-REG-MR-ENOMEM"),
        (
            "[1,23]<stdout>:ip-172-32-45-165:72593:73427 [7] create_nccl_ofi_component:459 NCCL WARN NET/OFI Couldn't open AV. "
            "RC: -22, ERROR: Invalid argument",
            "IB-COMPLETION-ERROR",
        ),
        (
            "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 1)",
            "CUDA-OOM",
        ),
        ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.70 GiB.", "HOST-OOM-KILL"),
        (
            "[  366.264611] nv_peer_mem: Unknown symbol ib_register_peer_memory_client (err -22)",
            "PEERMEM-SYMBOL-MISSING",
        ),
        (
            "tj1:941227:943077 [0] NCCL INFO Call to connect returned Connection refused, retrying",
            "NCCL-SOCKET-CONNECT",
        ),  # INFO retry
        (
            "misc/ibvwrap.cu:220 NCCL WARN Call to ibv_get_async_event failed",
            "IBV-CALL-FAILED",
        ),  # follows an async event
    ],
)
def test_no_false_matches(text, absent):
    assert absent not in _matching(load_signatures(), text)


def _doc():
    ref = resources.files("imgcheck.data.triage").joinpath("signatures.json")
    return json.loads(ref.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    "mutate,message",
    [
        (lambda d: d["signatures"][0]["patterns"].append("(unclosed"), "bad regex"),
        (lambda d: d["signatures"][0].update(confidence="certain"), "confidence"),
        (lambda d: d["signatures"][0].update(source=[]), "source"),
        (lambda d: d["signatures"].append(copy.deepcopy(d["signatures"][0])), "duplicate id"),
        (lambda d: d["signatures"][0]["causes"][0].update(when=["node.no_such_fact"]), "unknown fact predicate"),
        (lambda d: d["signatures"][0]["causes"][0].update(when=["sig:NOPE.hosts>=2"]), "unknown signature"),
        (lambda d: d["signatures"][0]["causes"][0].update(when=["env:X>seven"]), "non-integer"),
        (lambda d: d["signatures"][0].update(suppresses=["NOPE"]), "suppresses"),
        (lambda d: d["signatures"][0].update(role="cause"), "role"),
        (lambda d: d["signatures"][0]["causes"][0].update(promote="yes"), "promote"),
        (lambda d: d.update(schema_version=99), "newer"),
        (lambda d: d["signatures"][0].pop("causes"), "cause"),
    ],
)
def test_bad_signature_data_is_refused(mutate, message):
    doc = _doc()
    mutate(doc)
    with pytest.raises(BadInputError, match=message):
        parse_signatures(doc, "sigs.json")


def test_a_new_signature_needs_no_code(tmp_path):
    """Adding a signature is a data change: a user-supplied file with one more entry just works."""
    from imgcheck.triage import triage

    doc = _doc()
    doc["signatures"].append(
        {
            "id": "IBV-MODIFY-QP-ENETUNREACH",
            "title": "ibv_modify_qp failed: Network is unreachable",
            "patterns": [r"Call to ibv_modify_qp failed with error Network is unreachable"],
            "role": "primary",
            "severity": "error",
            "priority": 95,  # above the packaged IBV-MODIFY-QP
            "meaning": "The QP could not reach the peer's GID (RoCE routing / GID index).",
            "causes": [
                {
                    "id": "gid-index",
                    "text": "Wrong NCCL_IB_GID_INDEX for RoCE v2.",
                    "next": "show_gids",
                    "confidence": "reported",
                    "when": ["env:NCCL_IB_GID_INDEX"],
                }
            ],
            "source": ["https://github.com/NVIDIA/nccl-tests/issues/185"],
            "confidence": "reported",
        }
    )
    path = tmp_path / "sigs.json"
    path.write_text(json.dumps(doc))
    import os

    log = os.path.join(os.path.dirname(__file__), "logs", "nccl-tests-185-no-signature.log")
    r = triage([log], signatures=str(path))
    assert r.verdict == "signature_found" and r.diagnoses[0].signature == "IBV-MODIFY-QP-ENETUNREACH"


# Registration signatures (issue 27, docs/registration-errors.md); kept apart so additions elsewhere merge cleanly.
SAMPLES.update(
    {
        # no public NCCL log yet: NCCL's "Call to %s failed with error %s" (misc/ibvwrap.cc) with strerror(EPERM)
        "IBV-REG-MR-EPERM": "misc/ibvwrap.cc:182 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Operation not permitted",
        "IBV-REG-DMABUF-EINVAL": "ibv_reg_dmabuf_mr (retain) failed: Invalid argument",  # uccl-project/mKernel#26
        # no public log yet: nvidia-peermem's peer_err format with nv_dma_map's message (nvidia-peermem.c:71, 313)
        "PEERMEM-DMA-MAP-REFUSED": "nvidia-peermem nv_dma_map:313 ERROR nv_dma_map -- assumption of 64KB pages failed size_id=0",
        "PEERMEM-LOAD-EINVAL": "nvidia_peer_memory-1.0-8 modprobe: ERROR: could not insert 'nv_peer_mem': Invalid argument",
        "PEERMEM-INVALID-CONTEXT": "[25033.266922] nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, "
        "skipping further processing",
    }
)


# Registration paths added by issue 34 (docs/registration-errors.md); each line is the printing site's format.
SAMPLES.update(
    {
        # NCCL's wrapper (misc/ibvwrap.cc:38-44) with strerror(524); the exporter's refusal (nv-dmabuf.c:1020-1023)
        "IBV-REG-DMABUF-ENOTSUPP-524": "transport/net_ib/reg.cc:36 NCCL WARN Call to ibv_reg_dmabuf_mr failed with error "
        "Unknown error 524",
        "IBV-REG-MR-ENOTSUPP-524": "misc/ibvwrap.cc:182 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Unknown error 524",
        "IBV-REG-MR-GPU-ERRNO": "misc/ibvwrap.cc:182 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Device or resource busy",
        "IBV-REG-DMABUF-ERRNO": "misc/ibvwrap.cc:182 NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Bad file descriptor",
        # NCCL misc/mlx5dvwrap.cc:40
        "MLX5DV-REG-DMABUF": "misc/mlx5dvwrap.cc:77 NCCL WARN NET/MLX5: Call to mlx5dv_reg_dmabuf_mr failed with error "
        "Invalid argument",
        # MLNX umem.c:269 pr_err("%s: failed to map scatterlist, npages=%lu\n", __func__, npages)
        "UMEM-DMA-MAP-FAILED": "[ 8123.774120] __ib_umem_get: failed to map scatterlist, npages=512",
        # Mellanox/nv_peer_memory nv_peer_mem.c: peer_err prefix "nv_mem %s:%d "
        "NV-PEER-MEM-LEGACY-ERROR": "[  912.004411] nv_mem nv_dma_map:295 nv_dma_map -- unexpected number of page table "
        "entries got=32, expected=16",
        # aws-ofi-nccl register_rail_mr_buffer; the values are the ones AWS's EFA guidance quotes for SYNC_MEMOPS
        "OFI-REG-MR-FAILED": "register_rail_mr_buffer:617 NCCL WARN NET/OFI Unable to register memory (type = 2) for "
        "device 4. RC: -22, Error: Invalid argument",
    }
)
# Issue 35: the rest of the stack (Gloo, c10d, Open MPI, libfabric/EFA, the loader, CUDA by text, NCCL topology).
SAMPLES.update(
    {
        "GLOO-CONNECT-FULL-MESH": "[rank8]:[E ProcessGroupGloo.cpp:144] Gloo connectFullMesh failed with "
        "[../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error",  # vllm#7074
        "GLOO-LOOPBACK-FALLBACK": "[rank9]:[W ProcessGroupGloo.cpp:721] Warning: Unable to resolve hostname to a "
        "(local) address. Using the loopback address as fallback.",
        "GLOO-PEER-LOST": "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer "
        "[18.25.6.30]:30872",  # pytorch#78514
        "GLOO-SOCKET-IFNAME-BAD": "  ifa != nullptr. Unable to find address for: ^lo",  # aws-do-eks#51
        "C10D-CLIENT-CONNECT": "[W socket.cpp:663] [c10d] The client socket has failed to connect to "
        "[::ffff:255.255.0.0]:29500 (errno: 110 - Connection timed out).",  # LlamaFactory#3715
        "C10D-STORE-LISTEN": "RuntimeError: The server socket has failed to listen on any local network address. "
        "port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use.",  # VLM-R1#289
        "C10D-STORE-WAIT-CLIENTS": "Timed out after 901 seconds waiting for clients. 1/2 clients joined.",
        "C10D-NCCL-UNIQUEID": "RuntimeError: [2] is setting up NCCL communicator and retreiving ncclUniqueId from [0] "
        "via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout",  # pytorch#82091
        # enroot's hook as Pyxis prints it (enroot conf/hooks/98-nvidia.sh:74 through common::err)
        "ENROOT-NVIDIA-HOOK-FAILED": "slurmstepd: error: pyxis:     [ERROR] Command not found: nvidia-container-cli, "
        "see https://github.com/NVIDIA/libnvidia-container",
        "LD-LIB-NOT-FOUND": "ImportError: libcuda.so.1: cannot open shared object file: No such file or directory",
        "TORCH-WATCHDOG-STUCK": "[rank7]:[E626 05:14:36.393067540 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID "
        "0(default_pg) Rank 7] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress",
        "TORCH-NCCL-ABORTED": "RuntimeError: NCCL communicator was aborted on rank 3.",  # ProcessGroupNCCL's words
        "NVML-UNKNOWN-ERROR": "Failed to initialize NVML: Unknown Error",  # nvidia-docker#1671
        "CUDA-UNKNOWN-ERROR": "E tensorflow/stream_executor/cuda/cuda_driver.cc:271] failed call to cuInit: "
        "CUDA_ERROR_UNKNOWN: unknown error",  # the format of tensorflow's cuda_driver.cc GpuDriver::Init
        "CUDA-NO-DEVICE": "RuntimeError: cuda runtime error (100) : no CUDA-capable device is detected at "
        "/pytorch/aten/src/THC/THCGeneral.cpp:50",  # REDN#5
        "C10D-STORE-PEER-GONE": "[rank12]:[W318 10:00:41.915284135 TCPStore.cpp:125] [c10d] recvValue failed on "
        "SocketImpl(fd=135, addr=[a]:48750, remote=[b]:20000): Connection reset by peer",  # sglang#20859
        "OMPI-CQ-CREATE": "Failed to create a completion queue (CQ):",  # ompi#4499
        "OMPI-BTL-TCP-CONNECT": "[node1][[1234,1],0][btl_tcp_endpoint.c:796:mca_btl_tcp_endpoint_complete_connect] "
        "connect() to 172.17.0.1 failed: Connection refused (111)",  # format of btl_tcp_endpoint.c
        "OMPI-BTL-TCP-PEER-LOST": "[compute-0-60.local][[20066,1],24][btl_tcp_frag.c:215:mca_btl_tcp_frag_recv] "
        "mca_btl_tcp_frag_recv: readv failed: Connection reset by peer (104)",  # peridigm#98
        "MPI-RANK-SIGNALED": "mpirun noticed that process rank 3 with PID 0 on node node7 exited on signal 9 (Killed).",
        "SSH-LAUNCH-FAILED": "ssh_exchange_identification: Connection closed by remote host",  # prrte#1493
        "MPI-DAEMON-START": "ORTE was unable to reliably start one or more daemons.",
        "OMPI-HELP-BANNER": "WARNING: There was an error initializing an OpenFabrics device.",  # ompi#6300
        "EFA-CREATE-AH": "libfabric:679175:1776112406::efa:av:efa_ah_alloc():147<warn> ibv_create_ah failed with "
        "EINVAL.",  # libfabric#12136
        "EFA-PROVIDER-ERROR": "EFA internal error: (13) Unresponsive remote (was previously responsive)",
        "LIBFABRIC-WARN": "libfabric:72089:ofi_mrail:fabric:mrail_get_core_info():277<warn> OFI_MRAIL_ADDR_STRC env "
        "variable not set!",  # aws/libfabric#3
        "LD-UNDEFINED-NCCL-SYMBOL": "torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister",
        "CUDA-DEVICE-BUSY": "RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable",
        "CUDA-PEER-ACCESS-UNSUPPORTED": "RuntimeError: CUDA error: peer access is not supported between these two "
        "devices",  # cudaGetErrorString of cudaErrorPeerAccessUnsupported
        "CUDA-DRIVER-MISMATCH-803": "Error 803: system has unsupported display driver / cuda driver combination",
        "NCCL-TOPO-ERROR": "node:1:2 [0] graph/search.cc:1111 NCCL WARN Could not find NIC for rank 3 in NVLS graph",
        # the NCCL_GRAPH_FILE / NCCL_TOPO_FILE XML loader (NVIDIA/nccl src/graph/search.cc, xml.cc, xml.h formats)
        "NCCL-GRAPH-FILE": "::16674:17023 [0] graph/search.cc:703 NCCL WARN XML Import Channel : dev 1 not found.",
        "NCCL-TOPO-FILE-XML": "node:1:2 [0] graph/xml.cc:606 NCCL WARN Attribute busid of node nic not found",
        "NCCL-NET-ID-0-FALLBACK": "graph/topo.h:230 NCCL WARN Could not find NET with id 0",  # NeMo-Run#266
        # NVIDIA/nccl src/proxy.cc INFO "%s:%d -> %d [Progress Thread]" (2.19.1 on)
        "NCCL-PROXY-PROGRESS-ERROR": "node1:123:789 [0] NCCL INFO transport/net.cc:1271 -> 6 [Progress Thread]",
        "NCCL-GRAPH-FALLBACK": "node0021:21858:22794 [5] graph/search.cc:765 NCCL WARN Could not find a path for "
        "pattern 4, falling back to simple order",  # nccl#487
        "NCCL-MAXSHAREDMEM": "GENOA-06:4766:4780 [0] NCCL INFO ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem "
        "79856",  # nccl-tests#287
        "UCX-SHM-NOSPACE": "[1:2:0] mm_posix.c:206  UCX  ERROR Not enough memory to write total of 1048576 bytes. "
        "Please check that /dev/shm or the directory you specified has more available memory.",
    }
)


def test_every_packaged_pattern_has_a_literal_gate():
    """A pattern without a literal of 3+ characters runs on every line of every log (scan.Scanner.ungated):
    write alternatives as separate patterns instead."""
    from imgcheck.triage.scan import Scanner

    assert [(s.id, p.pattern) for s, p, _lit in Scanner(load_signatures()).ungated] == []


# Issue 32 round 5: hangs and ends with no NCCL line (stacks from a hung process, the scheduler, Kubernetes)
SAMPLES.update(
    {
        # pytorch#149153 (lldb 'bt' of a process stuck in abort)
        "TORCH-NCCL-ABORT-HANG": "    frame #3: 0x00007fb090db1068 libtorch_cuda.so`c10d::ProcessGroupNCCL::abort() + 664",
        # slurmstepd's req.c format, as a training log ends with it
        "SLURM-JOB-CANCELLED": "slurmstepd: error: *** JOB 42196 ON clr0710 CANCELLED AT 2022-04-14T16:17:16 DUE TO TIME LIMIT ***",
        "K8S-POD-OOMKILLED": "      Reason:       OOMKilled",  # kubectl describe pod, Last State
        "K8S-POD-EVICTED": "Message:          The node was low on resource: memory. Threshold quantity: 100Mi, available: 56Mi.",
    }
)
