"""Build /work/sealed2/cases.json (the second sealed incident set) from the case list below.

Each case is in the format of the repo's tests/incidents/cases.json (loaded by tests/incidents/corpus.py), plus
`mechanism`, `expect_kind`, `sealed_source`, `cause`, `established_by`, `fix`, `seen`, `must_not`, `working`,
`assumptions`. Facts are as the thread states them; every fact added is listed in `assumptions`.

Collected 2026-12-07. Every URL was checked against `git -C /work/main grep`, /work/shared and /work/sealed
(owner/repo + issue/PR number in any of the forms repo/issues/N, repo/pull/N, repo#N, "repo PR N"); none appears.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

DESCRIPTION = (
    "SEALED held-out incident set #2 for imgcheck: public threads nobody on the team had read (none of these URLs "
    "or issue numbers appears in the repo, in /work/shared or in last round's /work/sealed when collected). Same "
    "case format as tests/incidents/cases.json: image/node/job facts as each thread states them, `assumptions` "
    "lists every fact added, `expect` the rule ids of docs/rules.md that name the established mechanism today "
    "(empty when none does), `must_not` what the thread rules out, `working` the configuration the thread shows "
    "working. Extra fields: `mechanism` (one sentence), `expect_kind` (which kind of answer would be right), "
    "`sealed_source` (issues|pages), `cause`, `established_by`, `fix`, `seen` (the line the user saw, or null). "
    "Scored once by score.py after the rules are done."
)

CASES = []


def case(**kw):
    kw.setdefault("sealed_source", "issues")
    kw.setdefault("must_not", [])
    CASES.append(kw)


def gpus(name, n, cls=None):
    out = []
    for i in range(n):
        g = {"index": i, "name": name}
        if cls:
            g["gpu_class"] = cls
        out.append(g)
    return out


def roce_dev(name, netdev, gids, driver="mlx5_core"):
    """A RoCE device with one port and the GID table the thread shows: gids = [(index, type, gid)]."""
    return {
        "name": name,
        "driver": driver,
        "link_layer": "Ethernet",
        "ports": [
            {
                "port": 1,
                "state": "ACTIVE",
                "link_layer": "Ethernet",
                "netdev": netdev,
                "gids": [{"index": i, "type": t, "netdev": netdev, "gid": g} for (i, t, g) in gids],
            }
        ],
    }


# =============================================================================================== RoCE GID selection
case(
    id="nccl-769-gid-index-1-link-local-roce-v2",
    url="https://github.com/NVIDIA/nccl/issues/769",
    cause="NCCL_IB_GID_INDEX=1 selected the RoCE v2 GID whose address is the interface's IPv6 link-local "
    "fe80:: address; it is not routed between the nodes, so moving the queue pair to RTR/RTS timed out. GID 3 "
    "(RoCE v2 on the IPv4-mapped address ::ffff:200.0.209.6) works.",
    established_by="NCCL maintainer (sjeaugey): 'The fe80::ac0:ebff:feda:1cfb IPv6 address is probably the "
    "link-local address so it isn't properly routed and fails ... check which GID corresponds to the IP address "
    "you want to use or just use GID 3'; the reporter's A/B (index 1 fails, index 3 works) and confirmation.",
    fix="NCCL_IB_GID_INDEX=3 (the RoCE v2 GID of the routed IPv4 address), or leave it unset on NCCL versions "
    "that pick a valid GID themselves",
    seen="ibvwrap.cc: NCCL WARN Call to ibv_modify_qp failed with error Connection timed out",
    image={"profile": "rdma-core-39-mlx5"},
    node={
        "name": "a100-roce",
        "rdma": {
            "stack": "mlnx_ofed",
            "devices": [
                roce_dev(
                    "mlx5_bond_0",
                    "bond0",
                    [
                        (0, "IB/RoCE v1", "fe80:0000:0000:0000:0ac0:ebff:feda:1cfb"),
                        (1, "RoCE v2", "fe80:0000:0000:0000:0ac0:ebff:feda:1cfb"),
                        (2, "IB/RoCE v1", "0000:0000:0000:0000:0000:ffff:c800:d106"),
                        (3, "RoCE v2", "0000:0000:0000:0000:0000:ffff:c800:d106"),
                    ],
                )
            ],
        },
        "gpu": {"gpus": gpus("NVIDIA A100-SXM4-80GB", 8, "datacenter")},
    },
    job={"runtime": "bare-metal", "kind": "mpirun", "env": {"NCCL_IB_GID_INDEX": "1"}},
    assumptions=[
        "the thread prints the GID table of mlx5_bond_0 (types from ibv_devinfo: 'RoCE v1'/'RoCE v2'); the netdev "
        "name bond0 is illustrative",
        "GPU model/count illustrative (the thread says 'our A100 platform')",
        "the RDMA stack (MLNX_OFED) and the image (an rdma-core userspace with mlx5) are not stated",
        "the launch is all_reduce_perf from nccl-tests; modelled as mpirun with NCCL_IB_GID_INDEX in its env",
    ],
    expect=[{"id": "ENV-NCCL-IB-GID-INDEX-LINK-LOCAL", "severity": "warning"}],
    mechanism="NCCL_IB_GID_INDEX pins a RoCE v2 GID whose address is IPv6 link-local (fe80::/64); RoCE v2 packets "
    "from it are not routed across subnets, so queue-pair connection (ibv_modify_qp to RTR/RTS) times out.",
    expect_kind="env rule on job env + node GID table (pinned GID is link-local)",
    must_not=["ENV-NCCL-IB-GID-INDEX-NO-GID"],
    working={"job": {"env": {"NCCL_IB_GID_INDEX": "3"}}, "absent": ["ENV-NCCL-IB-GID-INDEX-LINK-LOCAL"]},
)

case(
    id="nccl-718-gid-index-differs-per-pod",
    url="https://github.com/NVIDIA/nccl/issues/718",
    cause="In Kubernetes with the RDMA device plugin, different pods see different GID indexes for their RoCE "
    "address (4/5 on two machines, 6/7 on the others). The job set NCCL_IB_GID_INDEX=5 for every pod, so on the "
    "pods whose GIDs are 6 and 7 index 5 named no usable GID and ibv_modify_qp failed.",
    established_by="the reporter's diagnosis ('because of the wrong IB_GID_INDEX'); NCCL maintainer (sjeaugey) "
    "confirmed NCCL (then) did not auto-detect the GID and recommended writing the per-node index from show_gids "
    "into /etc/nccl.conf at start-up.",
    fix="set NCCL_IB_GID_INDEX per pod from show_gids (e.g. a start-up script writing /etc/nccl.conf), or use an "
    "NCCL that selects the GID itself",
    seen="[0] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with error No such device",
    image={"profile": "rdma-core-39-mlx5"},
    node={
        "name": "k8s-worker-b",
        "rdma": {
            "stack": "mlnx_ofed",
            "devices": [
                roce_dev(
                    "mlx5_2",
                    "net1",
                    [
                        (6, "IB/RoCE v1", "0000:0000:0000:0000:0000:ffff:0a00:0121"),
                        (7, "RoCE v2", "0000:0000:0000:0000:0000:ffff:0a00:0121"),
                    ],
                )
            ],
        },
        "gpu": {"gpus": gpus("NVIDIA A100-SXM4-80GB", 8, "datacenter")},
    },
    job={
        "runtime": "kubernetes",
        "kind": "PyTorchJob",
        "resources": {"rdma/hca": "1", "nvidia.com/gpu": "8"},
        "env": {"NCCL_IB_GID_INDEX": "5"},
    },
    assumptions=[
        "this node is one of the machines whose pods see GID indexes 6 and 7; which index is v1/v2 and the address "
        "are illustrative (the thread gives only the index numbers)",
        "device name mlx5_2, netdev net1, GPU model/count and the workload kind are illustrative",
        "the RDMA device plugin resource name rdma/hca is illustrative (the thread says 'k8s + rdma_device_plugin')",
    ],
    expect=[{"id": "ENV-NCCL-IB-GID-INDEX-NO-GID", "severity": "error"}],
    mechanism="A cluster-wide NCCL_IB_GID_INDEX names a GID entry that is unused in this pod's GID table (GID "
    "indexes differ per pod/netns under the RDMA device plugin), so the queue pair cannot be moved to RTR with it.",
    expect_kind="env rule on job env + node GID table (pinned index absent on this node)",
    working={"job": {"env": {"NCCL_IB_GID_INDEX": "7"}}, "absent": ["ENV-NCCL-IB-GID-INDEX-NO-GID"]},
)

case(
    id="ucx-2501-ud-timeout-gid-index-1-routed-roce",
    url="https://github.com/openucx/ucx/issues/2501",
    cause="Open MPI + UCX over RoCE with UCX_IB_GID_INDEX=1 (the RoCE v2 GID of the link-local address) on a "
    "cluster whose leaf switches route RoCE (routed RoCE between leafs): UD endpoints timed out.",
    established_by="UCX maintainer (yosefe): 'need to use UCX_IB_GID_INDEX=3, orion cluster has r-RoCE between "
    "leaf switches'; the same MTT reports (openucx/ucx 2761/2789) pass with gid_index=3.",
    fix="UCX_IB_GID_INDEX=3 (RoCE v2 on the routed IPv4 address)",
    seen="transport error: Endpoint timeout on ud on a roce fabric",
    image={
        "profile": "rdma-core-39-mlx5",
        "ucx": {"version": "1.4.0", "origin": "hpcx", "path": "/hpc/local/benchmarks/hpcx/ucx/lib/libucp.so.0"},
    },
    node={
        "name": "clx-orion-001",
        "rdma": {
            "stack": "mlnx_ofed",
            "devices": [
                roce_dev(
                    "mlx5_2",
                    "ens1f0",
                    [
                        (0, "IB/RoCE v1", "fe80:0000:0000:0000:0268:8aff:fe01:0001"),
                        (1, "RoCE v2", "fe80:0000:0000:0000:0268:8aff:fe01:0001"),
                        (2, "IB/RoCE v1", "0000:0000:0000:0000:0000:ffff:0b00:0001"),
                        (3, "RoCE v2", "0000:0000:0000:0000:0000:ffff:0b00:0001"),
                    ],
                )
            ],
        },
    },
    job={
        "runtime": "bare-metal",
        "kind": "mpirun",
        "env": {"UCX_IB_GID_INDEX": "1", "UCX_NET_DEVICES": "mlx5_2:1", "UCX_TLS": "all"},
    },
    assumptions=[
        "the GID table (standard 0/1 link-local v1/v2, 2/3 IPv4 v1/v2) and addresses are illustrative; the thread "
        "gives the index in use and that index 3 is the routable one",
        "UCX version and path illustrative (HPC-X of April 2018); no container (MTT on bare metal)",
        "netdev name illustrative",
    ],
    expect=[],
    mechanism="UCX_IB_GID_INDEX pins a link-local RoCE v2 GID; across a routed RoCE fabric its packets are not "
    "forwarded, so UCX UD/RC endpoints time out.",
    expect_kind="env rule for UCX (UCX_IB_GID_INDEX) on the node GID table: the same family as NCCL's GID rules",
)

case(
    id="ucx-7785-gid-tables-differ-between-nodes",
    url="https://github.com/openucx/ucx/issues/7785",
    cause="The two nodes' RoCE GID tables differ (mu01 has 4 entries: two link-local, two IPv4-mapped; cu01 has 2: "
    "one link-local, one IPv4-mapped), so the automatically chosen/forced GID index named different kinds of "
    "address on each side and ucx_perftest's UD endpoint timed out. With UCX_IB_GID_INDEX=0 (same link-local "
    "prefix on both) it worked.",
    established_by="the reporter's verified fix after the UCX maintainer (yosefe) pointed at UCX_IB_GID_INDEX: "
    "'It finally worked after I set UCX_IB_GID_INDEX=0, I found that the gid array is different between two nodes'.",
    fix="make the GID tables consistent (same IP configuration/RoCE mode on both nodes) or choose an index valid "
    "and of the same kind on both",
    seen="ucx_perftest tag-lat : ud endpoint timeout",
    image={"profile": "rdma-core-39-mlx5"},
    node={
        "name": "cu01",
        "rdma": {
            "stack": "mlnx_ofed",
            "devices": [
                roce_dev(
                    "mlx5_0",
                    "enp1s0f0",
                    [
                        (0, "IB/RoCE v1", "fe80:0000:0000:0000:ee0d:9aff:fe01:3431"),
                        (1, "IB/RoCE v1", "0000:0000:0000:0000:0000:ffff:0c0c:0c01"),
                    ],
                )
            ],
        },
    },
    job={"runtime": "bare-metal", "kind": "ucx_perftest", "env": {"UCX_IB_GID_INDEX": "3"}},
    assumptions=[
        "node modelled is cu01 (the 2-entry table as the reporter printed it); GID types not printed (modelled v1)",
        "the failing run used the maintainer's first suggestion UCX_IB_GID_INDEX=3 or the default; the thread shows "
        "index 3 exists only on mu01",
        "device/netdev names and RDMA stack illustrative",
    ],
    expect=[],
    mechanism="Mismatched RoCE GID tables across nodes (different number/kind of entries) make one GID index mean "
    "different addresses (or none) on each node; UD/RC connections time out.",
    expect_kind="fleet rule across nodes' GID tables (same index, different address family/RoCE version) plus the "
    "UCX_IB_GID_INDEX env",
)

# ================================================================================ PCIe ACS / IOMMU (peer-to-peer)
case(
    id="nccl-2079-acs-on-amd-root-ports-p2p-deadlock",
    url="https://github.com/NVIDIA/nccl/issues/2079",
    cause="The two RTX 5880 Ada GPUs sat behind AMD Starship/Matisse GPP bridges with ACS enabled (ACSCtl 0x001d: "
    "SrcValid+, ReqRedir+, CmpltRedir+, UpstreamFwd+), which forced P2P traffic through the IOMMU instead of "
    "direct GPU-to-GPU; ncclAllReduce deadlocked.",
    established_by="the reporter's verified fix after the NCCL maintainer (sjeaugey) isolated P2P "
    "(NCCL_P2P_DISABLE=1 resolved it): disabling ACS on the root-complex bridges with setpci fixed it at run time, "
    "pci=noacs / BIOS permanently.",
    fix="disable ACS on the bridges above the GPUs (setpci ECAP_ACS+6.w=0000, pci=noacs, or BIOS); NCCL_P2P_DISABLE=1 "
    "as a workaround",
    seen=None,
    image={"profile": "no-rdma-userspace"},
    node={
        "name": "ws-2x5880",
        "gpu": {
            "gpus": [
                {
                    "index": 0,
                    "name": "NVIDIA RTX 5880 Ada Generation",
                    "pci_bus_id": "0000:41:00.0",
                    "gpu_class": "workstation",
                },
                {
                    "index": 1,
                    "name": "NVIDIA RTX 5880 Ada Generation",
                    "pci_bus_id": "0000:61:00.0",
                    "gpu_class": "workstation",
                },
            ]
        },
        "pci_acs_redirect": [
            "0000:00:03.1",
            "0000:00:03.2",
            "0000:00:03.3",
            "0000:00:03.4",
            "0000:20:01.1",
            "0000:20:01.2",
            "0000:20:01.3",
            "0000:22:01.0",
            "0000:22:02.0",
            "0000:22:03.0",
        ],
    },
    job={"runtime": "docker", "kind": "docker run", "gpus": 2},
    assumptions=[
        "the bridges listed are the BDFs the reporter ran setpci on (domain 0000 added)",
        "the vLLM context (docker) is from the thread; the minimal repro was a single-node ncclAllReduce",
        "no RDMA userspace in the image (single node)",
    ],
    expect=[{"id": "NODE-PCI-ACS-REDIRECT", "severity": "warning"}],
    mechanism="PCIe ACS request/completion redirect enabled on the root-port bridges above the GPUs sends GPU "
    "peer-to-peer transactions to the root complex/IOMMU; NCCL's P2P transport then hangs.",
    expect_kind="node rule on PCI ACS facts (bridges above GPUs redirecting P2P)",
    working={"node": {"pci_acs_redirect": []}, "absent": ["NODE-PCI-ACS-REDIRECT"]},
)

case(
    id="nccl-928-ib-error-4-vendor-81-acs",
    url="https://github.com/NVIDIA/nccl/issues/928",
    cause="IB completion error 4 (local protection error), vendor err 0x81, on GPU Direct RDMA transfers: ACS "
    "enabled on the PCIe path breaks the GPU<->NIC peer-to-peer writes.",
    established_by="NCCL maintainer (sjeaugey): 'IB error 4 is usually due to ACS being enabled and breaking GPU "
    "Direct RDMA protocol. You can confirm that by setting NCCL_NET_GDR_LEVEL=0'; a user with the same error "
    "confirmed (NCCL_NET_GDR_LEVEL=0 works but slow; disabling ACS per Dell's guide made it work and fast).",
    fix="disable ACS on the PCIe switches/root ports between GPUs and NICs (BIOS / setpci); NCCL_NET_GDR_LEVEL=0 "
    "only as a diagnostic",
    seen="NCCL WARN NET/IB : Got completion from peer fe80::966d:ae03:8b:df54%ib0<33397> with error 4, opcode 32611, "
    "len 32611, vendor err 81 (Send)",
    image={"profile": "rdma-core-39-mlx5"},
    node={
        "name": "ib-gpu-node",
        "rdma": {
            "stack": "mlnx_ofed",
            "devices": [{"name": "mlx5_0", "driver": "mlx5_core", "link_layer": "InfiniBand"}],
        },
        "gpu": {"gpus": gpus("NVIDIA A100-SXM4-40GB", 8, "datacenter"), "peermem": {"loaded": True}},
        "pci_acs_redirect": ["0000:16:02.0", "0000:17:00.0"],
    },
    job={"runtime": "bare-metal", "kind": "mpirun"},
    assumptions=[
        "the ACS-enabled bridges are illustrative: the thread establishes ACS as the cause (maintainer + a second "
        "user's A/B) but prints no lspci",
        "GPU model, peer memory loaded (GDR was in use: the error is on GDR transfers) and stack are illustrative",
        "the confirming A/B is from another user with the same error in the thread, not the original reporter",
    ],
    expect=[{"id": "NODE-PCI-ACS-REDIRECT", "severity": "warning"}],
    mechanism="With PCIe ACS redirect on between NIC and GPU, the NIC's GPUDirect RDMA writes to GPU BAR memory are "
    "rerouted/blocked and complete with IBV_WC_LOC_PROT_ERR (4), vendor syndrome 0x81.",
    expect_kind="node rule on PCI ACS facts, tied to GPUDirect RDMA in use",
    must_not=["ENV-NCCL-IB-GID-INDEX-NO-GID", "MEMLOCK-TOO-LOW"],
    working={"node": {"pci_acs_redirect": []}, "absent": ["NODE-PCI-ACS-REDIRECT"]},
)

case(
    id="nccl-257-allreduce-hang-intel-iommu",
    url="https://github.com/NVIDIA/nccl/issues/257",
    cause="With the Intel IOMMU (VT-d) translating DMA, peer-to-peer between the GTX 1080 Ti pairs hung NCCL "
    "AllReduce; booting with intel_iommu=off resolved it (no NCCL_P2P_DISABLE needed).",
    established_by="the reporter's verified fix in the thread with NCCL maintainers (sjeaugey, cliffwoolley): "
    "'Booting the kernel with intel_iommu=off resolved all our problems. No need for NCCL_P2P_DISABLE now', with "
    "p2pBandwidthLatencyTest output after the change.",
    fix="boot with intel_iommu=off (or iommu=pt) on bare-metal GPU nodes",
    seen=None,
    image={"profile": "no-rdma-userspace"},
    node={
        "name": "4x1080ti",
        "kernel": {"cmdline": "intel_iommu=on", "cmdline_params": {"intel_iommu": "on"}},
        "iommu_domains": {"0000:02:00.0": "DMA", "0000:03:00.0": "DMA", "0000:82:00.0": "DMA", "0000:83:00.0": "DMA"},
        "gpu": {
            "gpus": [
                {"index": i, "name": "GeForce GTX 1080 Ti", "pci_bus_id": b, "gpu_class": "consumer"}
                for i, b in enumerate(["0000:02:00.0", "0000:03:00.0", "0000:82:00.0", "0000:83:00.0"])
            ]
        },
    },
    job={"runtime": "bare-metal", "kind": "python"},
    assumptions=[
        "the IOMMU state before the fix is inferred from the fix (intel_iommu=off resolved it): modelled as "
        "intel_iommu=on with the GPUs in translated (DMA) domains",
        "PCI bus ids from the thread's p2pBandwidthLatencyTest (2, 3, 82, 83), domain 0000 added",
    ],
    expect=[{"id": "NODE-IOMMU-TRANSLATED", "severity": "warning"}],
    mechanism="An IOMMU in translation mode puts GPU peer-to-peer DMA through address translation; consumer "
    "GPUs' P2P then hangs NCCL collectives.",
    expect_kind="node rule on IOMMU facts (kernel cmdline / iommu group type) for GPU P2P",
    working={
        "node": {
            "kernel": {"cmdline": "intel_iommu=off", "cmdline_params": {"intel_iommu": "off"}},
            "iommu_domains": {},
        },
        "absent": ["NODE-IOMMU-TRANSLATED"],
    },
)

# ================================================================================== driver / CUDA / NVML
case(
    id="nvidia-docker-414-driver-367-too-old-for-cuda8-ga2",
    url="https://github.com/NVIDIA/nvidia-docker/issues/414",
    cause="The host driver 367.57 is older than the CUDA 8.0 release in the nvidia/cuda-based Torch image requires "
    "(the 375 series); cutorch's first CUDA call returned error 35.",
    established_by="NVIDIA (cliffwoolley): 'Please upgrade to a 375-series driver (or later) and try again for "
    "compatibility with the latest release of CUDA 8'.",
    fix="upgrade the host driver to the 375 series or later (or use an image built for CUDA 8.0 GA1)",
    seen="THCudaCheck FAIL file=/root/torch/extra/cutorch/lib/THC/THCGeneral.c line=66 error=35 : CUDA driver "
    "version is insufficient for CUDA runtime version",
    image={
        "profile": "no-rdma-userspace",
        "cuda": {"version": "8.0.61", "origin": "cuda-version", "path": "/usr/local/cuda/version.txt"},
    },
    node={"name": "xyfpc", "gpu": {"driver_version": "367.57", "gpus": gpus("GeForce GTX 1080", 1, "consumer")}},
    job={"runtime": "docker", "kind": "nvidia-docker run"},
    assumptions=[
        "the image's CUDA is 8.0 GA2 (8.0.61), 'the latest release of CUDA 8' at the time of the thread (July 2017)",
        "GPU model illustrative (not stated)",
    ],
    expect=[{"id": "CUDA-DRIVER-TOO-OLD", "severity": "error"}],
    mechanism="The CUDA runtime in the image needs a newer driver than the node's; cudaGetDeviceCount returns "
    "cudaErrorInsufficientDriver (35).",
    expect_kind="cuda rule on image CUDA version vs node driver version",
    working={"node": {"gpu": {"driver_version": "375.66"}}, "absent": ["CUDA-DRIVER-TOO-OLD"]},
)

case(
    id="nvidia-docker-584-nvml-stale-userspace-symlinks",
    url="https://github.com/NVIDIA/nvidia-docker/issues/584",
    cause="After 'yum update' upgraded the driver, /usr/lib64/nvidia still held symlinks to the old revision's "
    "libnvidia-ml, so the user-space NVML did not match the loaded kernel module: nvidia-smi and nvidia-docker "
    "failed with Driver/library version mismatch (a reboot did not help).",
    established_by="the reporter's fix: 'There were symbolic links to old revs of the driver that needed to be "
    "updated in /usr/lib64/nvidia to the libnvidia-ml* files associated with the latest driver'; maintainer "
    "(3XX0) had pointed at reloading the modules.",
    fix="repoint /usr/lib64/nvidia/libnvidia-ml* to the installed driver's files (reinstall the driver cleanly)",
    seen="nvidia-docker | 2017/12/21 05:04:46 Error: nvml: Driver/library version mismatch",
    image={
        "profile": "no-rdma-userspace",
        "platform": "linux/ppc64le",
        "cuda": {"version": "8.0.61", "origin": "cuda-version", "path": "/usr/local/cuda/version.txt"},
    },
    node={
        "name": "rhel-ppc64le-vm",
        "arch": "ppc64le",
        "gpu": {
            "driver_version": "387.26",
            "userspace_driver_version": "384.81",
            "userspace_driver_path": "/usr/lib64/nvidia/libnvidia-ml.so.1",
            "gpus": gpus("Tesla P100-SXM2-16GB", 1, "datacenter"),
        },
    },
    job={"runtime": "docker", "kind": "nvidia-docker run"},
    assumptions=[
        "module and user-space versions are illustrative: the thread says the new driver came with CUDA 9.1 (387.26) "
        "and the symlinks pointed at an older revision (not named)",
        "GPU model illustrative; the image is nvidia/cuda-ppc64le:8.0-cudnn6-devel-ubuntu16.04 (CUDA 8.0 assumed 8.0.61)",
    ],
    expect=[{"id": "NODE-DRIVER-USERSPACE-MISMATCH", "severity": "error"}],
    mechanism="The user-space NVML/driver libraries resolved on the host (and injected into containers) are from a "
    "different driver version than the loaded kernel module; NVML initialisation fails with version mismatch.",
    expect_kind="node driver rule (loaded module version vs user-space library version found on the host)",
    working={"node": {"gpu": {"userspace_driver_version": "387.26"}}, "absent": ["NODE-DRIVER-USERSPACE-MISMATCH"]},
)

case(
    id="dockermonitor-42-driver-installed-inside-container",
    url="https://github.com/hpc-admin-sist/DockerMonitor/issues/42",
    cause="A user of a Docker-based GPU cluster installed CUDA (and with it an NVIDIA driver user space) inside "
    "their container; nvidia-smi then failed with Driver/library version mismatch. A container cannot change the "
    "host's kernel driver, so rebooting does not help; removing the self-installed driver did.",
    established_by="the cluster admin (ShenhanQian): the user environment is a Docker container, the system driver "
    "cannot be modified, a reboot will not solve it; uninstall the self-installed driver. After uninstalling and a "
    "node restart nvidia-smi worked and the user confirmed GPU use recovered.",
    fix="do not install the NVIDIA driver (cuda-drivers / nvidia-utils) in the image; let the container runtime "
    "inject the host's user-space driver",
    seen="Failed to initialize NVML: Driver/library version mismatch",
    image={
        "profile": "no-rdma-userspace",
        "cuda": {"version": "11.1.1", "origin": "cuda-version", "path": "/usr/local/cuda/version.json"},
        "packages": [
            {"name": "cuda-drivers", "version": "455.32.00-1"},
            {"name": "libnvidia-compute-455", "version": "455.32.00-0ubuntu1"},
        ],
    },
    node={"name": "sist-gpu-node", "gpu": {"driver_version": "440.64", "gpus": gpus("TITAN RTX", 4, "consumer")}},
    job={"runtime": "docker", "kind": "docker run"},
    assumptions=[
        "package names/versions and the host driver version are illustrative: the thread says CUDA was updated inside "
        "the container and that this also updated the NVIDIA driver",
        "GPU model/count illustrative; the container's sshd-style docker run is modelled as plain docker run",
    ],
    expect=[],
    mechanism="An image that carries its own NVIDIA driver user space (libnvidia-ml/libcuda from a driver package) "
    "shadows the host driver the runtime injects; NVML/CUDA in the container then mismatch the host kernel module.",
    expect_kind="image rule (NVIDIA driver user-space packages/libraries inside the image) vs node driver version",
    must_not=["NODE-DRIVER-USERSPACE-MISMATCH"],
)

case(
    id="ray-64109-cumem-host-t4-peer-access-217",
    url="https://github.com/ray-project/ray/pull/64109",
    cause="Multi-GPU tests on T4 nodes failed at the first NCCL collective with CUDA error 217 "
    "(cudaErrorPeerAccessUnsupported): NCCL's cuMem host-buffer path (default in recent NCCL) attempts GPU peer "
    "access during transport setup, which T4s without P2P do not support.",
    established_by="merged PR setting NCCL_CUMEM_HOST_ENABLE=0 in the GPU base image, restoring multi-GPU "
    "collectives; the upstream report NVIDIA/nccl#1838 shows the same error on 4xL4 with NCCL 2.27.3 and that "
    "NCCL_CUMEM_HOST_ENABLE=0 makes it pass.",
    fix="NCCL_CUMEM_HOST_ENABLE=0 (legacy /dev/shm host buffers) on GPUs without peer access",
    seen="transport/shm.cc:590 NCCL WARN Cuda failure 217 'peer access is not supported between these two devices'",
    image={
        "profile": "no-rdma-userspace",
        "nccl": [
            {
                "version": "2.27.3",
                "origin": "pip:nvidia-nccl-cu12",
                "path": "/usr/local/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2",
            }
        ],
    },
    node={"name": "t4-ci", "gpu": {"driver_version": "570.133.20", "gpus": gpus("Tesla T4", 4, "datacenter")}},
    job={"runtime": "docker", "kind": "docker run", "gpus": 4},
    assumptions=[
        "NCCL version from the upstream report (NVIDIA/nccl#1838: 2.27.3); the Ray image's exact NCCL is not stated",
        "driver version illustrative ('the current driver')",
        "the seen line is the upstream report's (same error 217 path)",
    ],
    expect=[],
    mechanism="NCCL's cuMem-backed host memory for the SHM transport (NCCL_CUMEM_HOST_ENABLE default on) needs "
    "peer access between the GPUs; on GPUs without P2P (T4, L4) setup fails with cudaErrorPeerAccessUnsupported.",
    expect_kind="NCCL release/known-issue rule (cuMem host path on GPUs without peer access) on image NCCL + node "
    "GPUs, fix NCCL_CUMEM_HOST_ENABLE=0",
    working={"image": {"env": {"NCCL_CUMEM_HOST_ENABLE": "0"}}, "absent": []},
)

# =============================================================================== registration errors
case(
    id="vllm-19613-buffsize-too-large-dmabuf-enomem",
    url="https://github.com/vllm-project/vllm/issues/19613",
    cause="NCCL_BUFFSIZE was set too large; NCCL's buffer registration then failed (ibv_reg_dmabuf_mr ENOMEM) and "
    "vLLM's NCCL init raised NCCL_ERROR_SYSTEM_ERROR. With the default NCCL_BUFFSIZE it worked.",
    established_by="the reporter's verified fix: 'The issue was related to the fact that the NCCL_BUFFSIZE "
    "variable was to set too large. Using the default value made the issue go away', with the NCCL WARN line.",
    fix="unset NCCL_BUFFSIZE (use the default) or lower it",
    seen="[2025-06-16 17:17:39] kilo:318:3584 [5] misc/ibvwrap.cc:183 NCCL WARN Call to ibv_reg_dmabuf_mr failed with "
    "error Cannot allocate memory",
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "vllm/vllm-openai:v0.9.1",
        "nccl": [
            {
                "version": "2.21.5",
                "origin": "pip:nvidia-nccl-cu12",
                "path": "/usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2",
            }
        ],
    },
    node={
        "name": "kilo",
        "rdma": {
            "stack": "mlnx_ofed",
            "devices": [{"name": "mlx5_0", "driver": "mlx5_core", "link_layer": "InfiniBand"}],
        },
        "gpu": {"kernel_module": "open", "gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")},
    },
    job={
        "runtime": "docker",
        "kind": "docker run",
        "devices": ["/dev/infiniband"],
        "memlock_kib": -1,
        "env": {"NCCL_BUFFSIZE": "1073741824"},
    },
    assumptions=[
        "the NCCL_BUFFSIZE value is not stated ('too large'); 1 GiB is illustrative",
        "the image's NCCL version (vLLM 0.9.1's torch pin) and the libibverbs profile are assumed",
        "node facts (8x H100, IB, open kernel module for dma-buf) are illustrative: the log shows dma-buf "
        "registration on rank 5",
        "memlock unlimited in the launch is assumed (the fix changed only NCCL_BUFFSIZE)",
    ],
    expect=[],
    mechanism="A very large NCCL_BUFFSIZE makes NCCL allocate and register per-channel/peer buffers far beyond what "
    "the registration path can pin, so ibv_reg_dmabuf_mr fails with ENOMEM at communicator setup.",
    expect_kind="env rule on NCCL_BUFFSIZE (value far above default, registration footprint) on job env",
    must_not=["MEMLOCK-TOO-LOW", "JOB-MEMLOCK-TOO-LOW", "DMABUF-UNSUPPORTED"],
    working={"job": {"env": {}}, "absent": []},
)

case(
    id="trixie-81-slurm-batch-soft-memlock-64k",
    url="https://github.com/ai4d-iasc/trixie/issues/81",
    cause="After a system upgrade slurm started batch job shells with a soft memlock of 64 KiB (systemd ignores "
    "/etc/security/limits.conf, and slurmd's unit did not raise LimitMEMLOCK); UCX over InfiniBand then failed "
    "to allocate its completion queues during MPI_Init.",
    established_by="the admin's investigation in the issue: `ulimit -S -a` in the job file shows 64K; jobs run "
    "fine with `ulimit -l unlimited` at the top of the job file; limits.conf is ignored by systemd for services.",
    fix="raise the memlock limit for slurmd (LimitMEMLOCK=infinity in its systemd unit) so job steps inherit "
    "unlimited, or `ulimit -l unlimited` in the job script",
    seen=None,
    image={
        "profile": "rdma-core-39-mlx5",
        "ucx": {"version": "1.12.1", "origin": "ucx.pc", "path": "/usr/lib64/pkgconfig/ucx.pc"},
    },
    node={
        "name": "trixie-cn",
        "rdma": {
            "stack": "mlnx_ofed",
            "devices": [{"name": "mlx5_0", "driver": "mlx5_core", "link_layer": "InfiniBand"}],
        },
        "limits": {"memlock_kib": 64},
        "gpu": {"gpus": gpus("Tesla V100-SXM2-32GB", 4, "datacenter")},
    },
    job={"runtime": "slurm", "kind": "sbatch", "ranks_per_node": 4},
    assumptions=[
        "no container: the job runs on the host; its OpenMPI/UCX user space is modelled as an image with rdma-core + "
        "UCX (version illustrative)",
        "node memlock 64 KiB is the soft limit the job shell gets (as measured in the issue)",
        "GPU model and ranks per node illustrative",
    ],
    expect=[{"id": "MEMLOCK-TOO-LOW", "severity": "error"}],
    mechanism="Job processes get RLIMIT_MEMLOCK 64 KiB from slurmd's systemd limits; ibv_create_cq/ibv_reg_mr in "
    "UCX fail with ENOMEM and MPI_Init aborts.",
    expect_kind="node limits rule (memlock the scheduler gives job steps)",
    working={"node": {"limits": {"memlock_kib": -1}}, "absent": ["MEMLOCK-TOO-LOW", "JOB-MEMLOCK-TOO-LOW"]},
)

# ============================================================================================= shared memory / IPC
case(
    id="nccl-473-docker-default-shm-unhandled-system-error",
    url="https://github.com/NVIDIA/nccl/issues/473",
    cause="nccl-tests with 4 GPUs in a docker container started without --ipc=host (or a larger --shm-size): "
    "NCCL's SHM transport could not create its segments in the default 64 MB /dev/shm and init failed with "
    "'unhandled system error'.",
    established_by="the reporter's verified fix: 'This is a problem of shared memory in docker containers. After "
    "run the docker with --ipc=host, the error disappeared.'",
    fix="docker run --ipc=host (or --shm-size=1g or more)",
    seen="fastmoe: Test NCCL failure common.cu:777 'unhandled system error'",
    image={
        "profile": "no-rdma-userspace",
        "nccl": [{"version": "2.8.4", "origin": "dpkg:libnccl2", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.8.4"}],
    },
    node={"name": "fastmoe-host", "gpu": {"gpus": gpus("GeForce RTX 2080 Ti", 4, "consumer")}},
    job={"runtime": "docker", "kind": "docker run", "gpus": 4, "ranks_per_node": 4},
    assumptions=[
        "the docker run line is not quoted; no --ipc/--shm-size flags as the fix implies (docker default 64 MiB)",
        "NCCL 2.8.4 from apt (libnccl2 2.8.4-1+cuda11.2) as the thread lists",
        "nccl-tests single process with 4 GPUs; ranks_per_node 4 models the 4 NCCL ranks",
    ],
    expect=[{"id": "JOB-SHM-TOO-SMALL", "severity": "error"}],
    mechanism="Docker's default 64 MiB /dev/shm is too small for NCCL's SHM transport segments between 4 local "
    "ranks; creating/extending the segment fails and NCCL returns ncclSystemError.",
    expect_kind="job-spec rule (docker run without --ipc=host/--shm-size for multi-GPU NCCL)",
    working={"job": {"host_ipc": True}, "absent": ["JOB-SHM-TOO-SMALL"]},
)

case(
    id="video-diffusion-speedrun-2-docker-shm-segment",
    url="https://github.com/fal-ai-community/video-diffusion-speedrun/issues/2",
    cause="The repo's documented `docker run --gpus all --rm -it video-diffusion /bin/bash` left /dev/shm at "
    "docker's default; NCCL failed to create its shared memory segment.",
    established_by="the reporter's verified fix: 'What fixed it for me was adding --shm-size=1g flag to Docker'.",
    fix="docker run --shm-size=1g (or --ipc=host)",
    seen="Error while creating shared memory segment /dev/shm/nccl-pZafXL (size 7340384)",
    image={"profile": "no-rdma-userspace", "reference": "video-diffusion"},
    node={"name": "multi-gpu-box", "gpu": {"gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")}},
    job={"runtime": "docker", "kind": "docker run", "gpus": -1, "ranks_per_node": 8},
    assumptions=[
        "GPU model/count and ranks per node illustrative (the repo trains on a multi-GPU node)",
        "Docker 24.0.7 default /dev/shm (64 MiB) applies: no --shm-size/--ipc in the documented command",
    ],
    expect=[{"id": "JOB-SHM-TOO-SMALL", "severity": "error"}],
    mechanism="NCCL's SHM transport segments for several local ranks exceed docker's default 64 MiB /dev/shm.",
    expect_kind="job-spec rule (docker run without --shm-size/--ipc=host for multi-GPU NCCL)",
    working={"job": {"shm_size_mib": 1024}, "absent": ["JOB-SHM-TOO-SMALL"]},
)

# ============================================================================== bootstrap / socket interfaces
case(
    id="uccl-1034-nccl-bootstrap-picks-169-254-link-local",
    url="https://github.com/uccl-project/uccl/pull/1034",
    cause="On the GH200 CI nodes NCCL_SOCKET_IFNAME was unset and NCCL's default interface choice picked a NIC whose "
    "address is the IPv4 link-local 169.254.3.1; the 2-node test's bootstrap connections were refused.",
    established_by="merged PR setting NCCL_SOCKET_IFNAME for the GH200 EP latency test: 'Without this, NCCL "
    "bootstrap picks the 169.254.3.1 link-local NIC and the 2-node test fails with Connection refused.'",
    fix="set NCCL_SOCKET_IFNAME to the routable interface",
    seen=None,
    image={"profile": "rdma-core-39-mlx5", "platform": "linux/arm64"},
    node={
        "name": "gh200-ci",
        "arch": "arm64",
        "net_interfaces": [
            {"name": "lo", "operstate": "unknown", "ipv4": ["127.0.0.1/8"]},
            {"name": "enx0a1b2c3d4e5f", "operstate": "up", "ipv4": ["169.254.3.1/24"]},
            {"name": "enP5p9s0f0np0", "operstate": "up", "ipv4": ["10.1.2.11/24"]},
        ],
        "gpu": {"gpus": gpus("NVIDIA GH200 480GB", 1, "datacenter")},
    },
    job={"runtime": "bare-metal", "kind": "torchrun"},
    assumptions=[
        "interface names and the routable address are illustrative; the PR gives only 169.254.3.1 (typical of the "
        "BMC/host USB-Ethernet link on Grace Hopper systems)",
        "the link-local interface sorts before the routable one in NCCL's scan (as the PR's failure implies)",
    ],
    expect=[],
    mechanism="With NCCL_SOCKET_IFNAME unset, NCCL's default ordering can select an interface whose only address "
    "is IPv4 link-local (169.254/16, e.g. a BMC USB NIC); peers on other nodes cannot reach it and bootstrap "
    "connects are refused.",
    expect_kind="node+env rule (unset NCCL_SOCKET_IFNAME and a node interface with only 169.254/16 that NCCL's "
    "default would pick)",
    must_not=["ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE"],
    working={"job": {"env": {"NCCL_SOCKET_IFNAME": "enP5p9s0f0np0"}}, "absent": []},
)

case(
    id="primus-1063-gloo-socket-ifname-set-to-ip",
    url="https://github.com/AMD-AGI/Primus/pull/1063",
    cause="Where iproute2 was missing, the launcher's fallback put an IP address (from `hostname -I`) into "
    "NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME, which take an interface name; every rank died in Gloo with 'Unable to "
    "find address for: <ip>'.",
    established_by="merged PR removing the IP fallback (leaving the variables empty so NCCL and Gloo choose).",
    fix="set *_SOCKET_IFNAME to an interface name, or leave them unset",
    seen=None,
    image={"profile": "no-rdma-userspace", "reference": "primus (ROCm/PyTorch) image without iproute2"},
    node={
        "name": "mi300-node",
        "net_interfaces": [
            {"name": "lo", "operstate": "unknown", "ipv4": ["127.0.0.1/8"]},
            {"name": "ens51f0", "operstate": "up", "ipv4": ["10.11.8.21/24"]},
        ],
    },
    job={
        "runtime": "slurm",
        "kind": "srun",
        "env": {"GLOO_SOCKET_IFNAME": "10.11.8.21", "NCCL_SOCKET_IFNAME": "10.11.8.21"},
    },
    assumptions=[
        "the IP and interface name are illustrative (the PR writes <ip>)",
        "the project is AMD's (RCCL reads NCCL_SOCKET_IFNAME too); the Gloo failure is the one reported",
    ],
    expect=[{"id": "ENV-GLOO-SOCKET-IFNAME-NO-ADDRESS", "severity": "error"}],
    mechanism="GLOO_SOCKET_IFNAME must name an interface; given an IP address, Gloo finds no interface of that "
    "name and process-group creation fails with 'Unable to find address for: <ip>'.",
    expect_kind="env rule on job env vs node interface names (GLOO_SOCKET_IFNAME value is an address, not a name)",
    working={"job": {"env": {}}, "absent": ["ENV-GLOO-SOCKET-IFNAME-NO-ADDRESS"]},
)

case(
    id="gloo-223-hostname-resolves-to-127-0-1-1",
    url="https://github.com/pytorch/gloo/issues/223",
    cause="Gloo picks its address by resolving the machine's hostname; on these Debian/Ubuntu-style hosts the "
    "hostname resolves to 127.0.1.1 (/etc/hosts), so the other node was told to connect to loopback and got "
    "Connection refused.",
    established_by="Gloo maintainer (pietern): 'By default, Gloo will resolve the machine's hostname to find its "
    "external IP address. In your case, this must resolve to 127.0.1.1 ... override this default behavior by "
    "specifying --tcp-device [INTERFACE NAME]'.",
    fix="name the interface (--tcp-device for the benchmark; GLOO_SOCKET_IFNAME for torch.distributed) or fix "
    "/etc/hosts",
    seen="[<some path>/gloo/gloo/transport/tcp/pair.cc:761] connect [127.0.1.1]:60817: Connection refused",
    image={"profile": "no-rdma-userspace"},
    node={
        "name": "gloo-node-0",
        "net_interfaces": [
            {"name": "lo", "operstate": "unknown", "ipv4": ["127.0.0.1/8"]},
            {"name": "eth0", "operstate": "up", "ipv4": ["10.251.209.33/24"]},
        ],
    },
    job={"runtime": "bare-metal", "kind": "benchmark_cuda (gloo)"},
    assumptions=[
        "eth0 and its prefix length are illustrative (the redis host address from the thread is used as node 0's)",
        "/etc/hosts mapping the hostname to 127.0.1.1 is inferred from the error (not a node fact imgcheck reads)",
    ],
    expect=[],
    mechanism="Without an explicit device/GLOO_SOCKET_IFNAME, Gloo resolves gethostname(); an /etc/hosts entry "
    "127.0.1.1 <hostname> makes it advertise loopback to remote ranks, which get ECONNREFUSED.",
    expect_kind="node/env rule (hostname resolves to loopback and GLOO_SOCKET_IFNAME unset, multi-node)",
    working={"job": {"env": {"GLOO_SOCKET_IFNAME": "eth0"}}, "absent": []},
)

# ================================================================================ launch spec: enroot / pyxis
case(
    id="az-hop-902-enroot-mellanox-visible-devices",
    url="https://github.com/Azure/az-hop/pull/902",
    cause="enroot's Mellanox hook only exposes InfiniBand devices to a container when MELLANOX_VISIBLE_DEVICES is "
    "set; az-hop's enroot.conf did not set it, so IB devices were not visible inside pyxis containers.",
    established_by="merged PR 'fix for ib device visibility inside container' adding MELLANOX_VISIBLE_DEVICES to "
    "enroot.conf.",
    fix="set MELLANOX_VISIBLE_DEVICES (e.g. all) in enroot.conf or the job environment",
    seen=None,
    image={"profile": "rdma-core-39-mlx5", "reference": "nvcr.io#nvidia/pytorch"},
    node={
        "name": "hpc-ndv4",
        "rdma": {
            "stack": "mlnx_ofed",
            "devices": [{"name": f"mlx5_ib{i}", "driver": "mlx5_core", "link_layer": "InfiniBand"} for i in range(8)],
        },
        "gpu": {"gpus": gpus("NVIDIA A100-SXM4-40GB", 8, "datacenter")},
    },
    job={"runtime": "slurm", "kind": "srun --container-image", "devices": []},
    assumptions=[
        "the VM type (Azure ND A100 v4: 8 IB HCAs, 8 A100) and device names are illustrative",
        "the pyxis image is illustrative; the PR changes the cluster's enroot configuration, not the image",
        "devices [] models 'no IB device nodes in the container' (the enroot hook did not run)",
    ],
    expect=[{"id": "JOB-RDMA-DEVICES-NOT-EXPOSED", "severity": "warning"}],
    mechanism="Under pyxis/enroot, /dev/infiniband is mounted by the 99-mellanox hook only when "
    "MELLANOX_VISIBLE_DEVICES is set; without it the container has no uverbs devices and NCCL uses sockets.",
    expect_kind="job-spec rule (pyxis/enroot launch without MELLANOX_VISIBLE_DEVICES on an IB node)",
    working={"job": {"devices": ["/dev/infiniband"]}, "absent": ["JOB-RDMA-DEVICES-NOT-EXPOSED"]},
)


# ======================================================================================= EFA / aws-ofi-nccl
case(
    id="hyperpod-cli-306-pytorch-job-requests-no-efa",
    url="https://github.com/aws/sagemaker-hyperpod-cli/issues/306",
    cause="`hyp create hyp-pytorch-job` on 2x ml.g5.12xlarge generated a HyperPodPyTorchJob without "
    "`vpc.amazonaws.com/efa` in resources, so the EFA device plugin attached no EFA device to the pods and the "
    "job fell back to TCP although the environment asked for the efa provider.",
    established_by="the reporter's generated YAML (no vpc.amazonaws.com/efa); fixed by merged PR "
    "aws/sagemaker-hyperpod-cli#318 ('When node_count > 1, vpc.amazonaws.com/efa: 1 will be added to resource "
    "requests and limits').",
    fix="request vpc.amazonaws.com/efa (requests and limits) for multi-node jobs",
    seen=None,
    image={
        "profile": "efa-installer",
        "reference": "<account_id>.dkr.ecr.us-west-2.amazonaws.com/qwen3-finetuning:pytorch2.8-cu129",
        "nccl_net_plugins": [{"name": "aws-ofi-nccl", "path": "/opt/amazon/ofi-nccl/lib/libnccl-net.so"}],
    },
    node={
        "name": "hyperpod-g5-12xlarge",
        "rdma": {"stack": "inbox", "devices": [{"name": "rdmap0s26", "driver": "efa"}]},
        "gpu": {"gpus": gpus("NVIDIA A10G", 4, "datacenter")},
        "labels": {"node.kubernetes.io/instance-type": "ml.g5.12xlarge"},
    },
    job={
        "runtime": "kubernetes",
        "kind": "HyperPodPyTorchJob",
        "resources": {"nvidia.com/gpu": "4"},
        "ranks_per_node": 4,
        "env": {
            "FI_PROVIDER": "efa",
            "FI_EFA_FORK_SAFE": "1",
            "NCCL_PROTO": "simple",
            "NCCL_SOCKET_IFNAME": "^lo",
            "NCCL_DEBUG": "INFO",
        },
    },
    assumptions=[
        "the EFA device name is illustrative (g5.12xlarge has one EFA)",
        "the image (PyTorch 2.8, cu129) carries the EFA installer's libfabric and aws-ofi-nccl (path illustrative)",
        "GPU resources as the CLI's --accelerators default for the instance type (4)",
    ],
    expect=[{"id": "JOB-RDMA-DEVICES-NOT-EXPOSED", "severity": "warning"}],
    mechanism="On EKS the EFA uverbs devices reach a pod only through the device plugin resource "
    "vpc.amazonaws.com/efa; a spec that does not request it gets no EFA device, libfabric finds no efa provider "
    "and NCCL uses TCP sockets.",
    expect_kind="job-spec rule (pod on an EFA node with an EFA-using image that requests no vpc.amazonaws.com/efa)",
    must_not=["EFA-NO-OFI-PLUGIN"],
    working={
        "job": {"resources": {"nvidia.com/gpu": "4", "vpc.amazonaws.com/efa": "1"}},
        "absent": ["JOB-RDMA-DEVICES-NOT-EXPOSED"],
    },
)

case(
    id="aws-ofi-nccl-244-no-unversioned-libcuda-so",
    url="https://github.com/aws/aws-ofi-nccl/issues/244",
    cause="aws-ofi-nccl 1.7.1 loads the CUDA library by its unversioned name; in the runtime container only "
    "libcuda.so.1 (injected by the NVIDIA runtime) exists, libcuda.so only as a stub and in the compat directory, "
    "so the plugin did not get the real driver library and nccl-tests on P4 reached only ~20 GB/s. Adding the "
    "symlink libcuda.so -> libcuda.so.1 restored >40 GB/s.",
    established_by="the reporter's verified A/B: after `ln -s /usr/lib/x86_64-linux-gnu/libcuda.so.1 "
    "/usr/lib/x86_64-linux-gnu/libcuda.so` bandwidth went from max 20 GB/s to the expected >40 GB/s, with the "
    "find(1) listing of the libcuda files present.",
    fix="add the libcuda.so -> libcuda.so.1 symlink in the image (or use a plugin build that loads libcuda.so.1)",
    seen=None,
    image={
        "profile": "efa-installer",
        "cuda": {"version": "12.0.1", "origin": "cuda-version", "path": "/usr/local/cuda-12.0/version.json"},
        "nccl_net_plugins": [{"name": "aws-ofi-nccl", "path": "/opt/aws-ofi-nccl/lib/libnccl-net.so"}],
    },
    node={
        "name": "p4d-24xlarge",
        "rdma": {"stack": "inbox", "devices": [{"name": f"rdmap{n}s27", "driver": "efa"} for n in (16, 32, 144, 160)]},
        "gpu": {"driver_version": "535.54.03", "gpus": gpus("NVIDIA A100-SXM4-40GB", 8, "datacenter")},
    },
    job={"runtime": "docker", "kind": "docker run", "devices": ["/dev/infiniband"], "gpus": -1},
    assumptions=[
        "driver 535.54.03 and CUDA 12.0 from the thread's find(1) listing; the compat libcuda 525.105.17 is present",
        "EFA device names illustrative; P4 instance (p4d.24xlarge) as the thread says",
        "plugin path illustrative (built from source, v1.7.1)",
    ],
    expect=[],
    mechanism="A NCCL net plugin that dlopens the unversioned libcuda.so gets nothing usable in a runtime image "
    "where only libcuda.so.1 is injected by the container toolkit (libcuda.so exists only as a link-time stub or in "
    "cuda/compat), so its GPU-memory path is degraded.",
    expect_kind="image rule (net plugin's dlopen names vs the CUDA driver sonames the runtime injects)",
)

# ================================================================================== NCCL releases
case(
    id="nccl-1611-gb200-nccl-2-21-too-old",
    url="https://github.com/NVIDIA/nccl/issues/1611",
    cause="nccl-tests on GB200 with NCCL 2.21.5 worked on 8 nodes but crashed with 'free(): corrupted unsorted "
    "chunks' on 10 or 12 nodes; GB200/Blackwell support arrived in NCCL 2.25.1.",
    established_by="NCCL maintainer (AddyLaddy): 'GB200 and Blackwell were officially supported in the NCCL 2.25.1 "
    "and later releases ... I'd update your libraries first'; the reporter: 'NCCL 2.25.1 is ok!'.",
    fix="use NCCL 2.25.1 or later on GB200",
    seen="free(): corrupted unsorted chunks",
    image={
        "profile": "rdma-core-39-mlx5",
        "platform": "linux/arm64",
        "nccl": [
            {"version": "2.21.5", "origin": "nccl-tests build", "path": "/usr/lib/aarch64-linux-gnu/libnccl.so.2"}
        ],
        "cuda": {"version": "12.8.0", "origin": "cuda-version", "path": "/usr/local/cuda/version.json"},
    },
    node={
        "name": "rack1-93-slot7",
        "arch": "arm64",
        "rdma": {"stack": "doca", "devices": [{"name": "mlx5_0", "driver": "mlx5_core", "link_layer": "InfiniBand"}]},
        "gpu": {"gpus": gpus("NVIDIA GB200", 4, "datacenter")},
    },
    job={"runtime": "bare-metal", "kind": "mpirun"},
    assumptions=[
        "NCCL 2.21.5+cuda12.8 as printed in the reporter's log; library path and RDMA stack illustrative",
        "4 GPUs per GB200 compute tray",
    ],
    expect=[{"id": "NCCL-TOO-OLD-FOR-GPU", "severity": "error"}],
    mechanism="An NCCL release older than the GPU generation's first supported release (Blackwell/GB200: 2.25.1) "
    "mis-handles the topology at scale and crashes during init.",
    expect_kind="NCCL release rule on image NCCL version vs node GPU generation",
    working={
        "image": {
            "nccl": [
                {"version": "2.25.1", "origin": "nccl-tests build", "path": "/usr/lib/aarch64-linux-gnu/libnccl.so.2"}
            ]
        },
        "absent": ["NCCL-TOO-OLD-FOR-GPU"],
    },
)

case(
    id="nccl-1043-nvls-dual-port-nic-2-18-2-19",
    url="https://github.com/NVIDIA/nccl/issues/1043",
    cause="On H100 nodes with dual-port NICs, nccl-tests got stuck or aborted with 'free(): invalid next size "
    "(fast)' with NCCL 2.18.5 and 2.19.3 (2.16.5 fine): NCCL's NVLS path did not support dual-port NIC "
    "transmission.",
    established_by="NCCL maintainer (KaimingOuyang) supplied the patch 'Support NVLS dual-port NIC transmission'; "
    "the reporter tested it: 'it appears the patch can resolve the issue observed'; not backported (fixed in a "
    "later release).",
    fix="use an NCCL release with the NVLS dual-port fix (later than 2.19.3), or NCCL_NVLS_ENABLE=0 / 2.16.5",
    seen="free(): invalid next size (fast)",
    image={
        "profile": "rdma-core-39-mlx5",
        "nccl": [
            {"version": "2.19.3", "origin": "dpkg:libnccl2", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.19.3"}
        ],
    },
    node={
        "name": "h100-dualport",
        "rdma": {
            "stack": "mlnx_ofed",
            "devices": [
                {
                    "name": "mlx5_0",
                    "driver": "mlx5_core",
                    "link_layer": "InfiniBand",
                    "ports": [{"port": 1, "state": "ACTIVE"}, {"port": 2, "state": "ACTIVE"}],
                }
            ],
        },
        "gpu": {"gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")},
    },
    job={"runtime": "bare-metal", "kind": "mpirun"},
    assumptions=[
        "dual-port NIC modelled as one device with two active ports; device name illustrative",
        "NVLS in use (NVSwitch H100 system) is implied by the patch; not a node fact imgcheck reads",
        "the library origin is illustrative",
    ],
    expect=[{"id": "NCCL-RELEASE-KNOWN-ISSUE", "severity": "warning"}],
    mechanism="NCCL 2.18/2.19 NVLS transport mishandles dual-port NICs (NVLS with collnet/net on a 2-port HCA): "
    "heap corruption or hang at run time; fixed by the NVLS dual-port patch in a later release.",
    expect_kind="NCCL release known-issue rule (version range x dual-port NIC x NVLS), with NCCL_NVLS_ENABLE=0 as "
    "workaround",
    working={"image": {"env": {"NCCL_NVLS_ENABLE": "0"}}, "absent": []},
)

case(
    id="nccl-750-cuda-launch-blocking-hang-2-14",
    url="https://github.com/NVIDIA/nccl/issues/750",
    cause="With CUDA_LAUNCH_BLOCKING=1 multi-node DDP jobs hung with the NCCL bundled since PyTorch 1.13 "
    "(2.14.3): NCCL launched the kernel before enqueueing work to its network proxy thread, and a blocking launch "
    "waits for a kernel that waits for the proxy.",
    established_by="NCCL developer (jbachan) diagnosis in the issue and the fix PR NVIDIA/nccl#774 ('make sure "
    "proxy work is enqueued first when CUDA_LAUNCH_BLOCKING=1', merged); PyTorch bumped to NCCL 2.17.1 for it "
    "(pytorch/pytorch#97843: 'hangs with CUDA_LAUNCH_BLOCKING=1 ... fixed in nccl-2.17').",
    fix="NCCL >= 2.17.1, or do not set CUDA_LAUNCH_BLOCKING=1 in multi-node jobs",
    seen=None,
    image={
        "profile": "rdma-core-39-mlx5",
        "nccl": [
            {
                "version": "2.14.3",
                "origin": "pip:torch (bundled)",
                "path": "/usr/local/lib/python3.10/dist-packages/torch/lib/libnccl.so.2",
            }
        ],
    },
    node={
        "name": "ib-node",
        "rdma": {
            "stack": "mlnx_ofed",
            "devices": [{"name": "mlx5_0", "driver": "mlx5_core", "link_layer": "InfiniBand"}],
        },
        "gpu": {"gpus": gpus("NVIDIA A100-SXM4-80GB", 8, "datacenter")},
    },
    job={"runtime": "kubernetes", "kind": "PyTorchJob", "env": {"CUDA_LAUNCH_BLOCKING": "1"}},
    assumptions=[
        "NCCL 2.14.3 is the version bundled with PyTorch 1.13 (the PyTorch PR's statement); the reporter's exact "
        "NCCL is not in our excerpt",
        "one GPU per process, multi-node DDP (the reporter's description); node facts illustrative",
        "the launcher kind is illustrative",
    ],
    expect=[{"id": "NCCL-RELEASE-KNOWN-ISSUE", "severity": "warning"}],
    mechanism="NCCL before 2.17 launches the collective kernel before handing work to the proxy thread; with "
    "CUDA_LAUNCH_BLOCKING=1 the launch blocks on a kernel that needs the proxy (network peers), so the job "
    "deadlocks.",
    expect_kind="NCCL release known-issue rule triggered by an env setting (CUDA_LAUNCH_BLOCKING=1) with NCCL < 2.17",
    working={"job": {"env": {}}, "absent": ["NCCL-RELEASE-KNOWN-ISSUE"]},
)

# ================================================================================ working configurations
case(
    id="nccl-465-ib-without-peermem-works-through-host",
    url="https://github.com/NVIDIA/nccl/issues/465",
    cause="(working configuration) 4 nodes with 100 Gb/s IB, MLNX_OFED 4.4, libibverbs installed but no "
    "nv_peer_mem: NCCL uses IB RDMA with GPU->CPU->NIC staging. GPU Direct RDMA is not required for it to work; "
    "it matters for bandwidth only where NIC and GPU share a PCI switch.",
    established_by="NCCL maintainer (sjeaugey): 'GPU Direct RDMA is not required in many cases; if we have to go "
    "through the CPU for NIC-GPU communication, we will use simple GPU->CPU and CPU->NIC communication ... The one "
    "case where GPU Direct RDMA is needed is when the NIC and GPU are on the same PCI switch'.",
    fix="none needed to run; load a peer-memory module (or use dma-buf) where NIC and GPU share a PCI switch",
    seen=None,
    image={
        "profile": "rdma-core-33-mlx5",
        "nccl": [{"version": "2.5.7", "origin": "built", "path": "/usr/local/nccl/lib/libnccl.so.2"}],
        "cuda": {"version": "10.2.89", "origin": "cuda-version", "path": "/usr/local/cuda/version.txt"},
    },
    node={
        "name": "ib-4node",
        "rdma": {
            "stack": "mlnx_ofed",
            "devices": [{"name": "mlx5_0", "driver": "mlx5_core", "link_layer": "InfiniBand"}],
        },
        "gpu": {
            "driver_version": "440.33.01",
            "peermem": {"loaded": False, "legacy_nv_peer_mem": False},
            "gpus": gpus("Tesla V100-PCIE-32GB", 4, "datacenter"),
        },
        "limits": {"memlock_kib": -1},
    },
    job={"runtime": "bare-metal", "kind": "mpirun"},
    assumptions=[
        "GPU model/driver, libibverbs version (rdma-core 33 profile) and memlock are illustrative; the thread gives "
        "CUDA 10.2, MLNX_OFED 4.4 and NCCL 2.4.8/2.5.7/master",
        "memlock unlimited assumed (IB transport worked: 6 GB/s vs 4 GB/s over IPoIB)",
    ],
    expect=[],
    mechanism="(negative) IB transport without any GPU peer-memory path is a working configuration: NCCL stages "
    "through host memory; only GDR (and its bandwidth where NIC and GPU share a switch) is missing.",
    expect_kind="no error-severity finding; at most an informational/warning GDR note",
    must_not=["RDMA-NO-MLX5-PROVIDER", "MEMLOCK-TOO-LOW", "JOB-RDMA-DEVICES-NOT-EXPOSED", "RDMA-NO-LIBIBVERBS"],
)

case(
    id="aws-ofi-nccl-547-g6e-efa-without-gdr",
    url="https://github.com/aws/aws-ofi-nccl/issues/547",
    cause="(working configuration) NCCL over EFA on g6e nodes (L40S) with the aws-ofi-nccl plugin works but tops out "
    "around 3 GB/s: the g6e hardware does not support GPUDirect RDMA, so transfers stage through host memory. Not "
    "a misconfiguration.",
    established_by="aws-ofi-nccl maintainer (bwbarrett): 'Although the L40S GPUs support GPUDirect RDMA, the G6e "
    "hardware does not support GPUDirect RDMA ... the only instance types in EC2 that support GPUDirect RDMA are "
    "the P-series starting with p4d'.",
    fix="none (by design); use P-series instances for GPUDirect RDMA",
    seen=None,
    image={
        "profile": "efa-installer",
        "nccl_net_plugins": [{"name": "aws-ofi-nccl", "path": "/opt/amazon/ofi-nccl/lib/libnccl-net.so"}],
    },
    node={
        "name": "g6e-node",
        "rdma": {"stack": "inbox", "devices": [{"name": f"rdmap{n}s0", "driver": "efa"} for n in (1, 2, 3, 4)]},
        "gpu": {"gpus": gpus("NVIDIA L40S", 8, "datacenter")},
        "labels": {"node.kubernetes.io/instance-type": "g6e.48xlarge"},
    },
    job={"runtime": "kubernetes", "kind": "MPIJob", "resources": {"vpc.amazonaws.com/efa": "4", "nvidia.com/gpu": "8"}},
    assumptions=[
        "instance size (g6e.48xlarge, 8 GPUs) and EFA device names illustrative; the thread says 4 EFA interfaces",
        "the job spec is illustrative (nccl-tests with the AWS plugin)",
    ],
    expect=[],
    mechanism="(negative) EFA without GPUDirect RDMA (instance hardware without GDR) is a supported, working "
    "configuration at lower bandwidth.",
    expect_kind="no error-severity finding; a note that GDR is unavailable on this hardware is acceptable",
    must_not=["EFA-NO-OFI-PLUGIN", "JOB-RDMA-DEVICES-NOT-EXPOSED", "OFI-PLUGIN-LIBFABRIC-TOO-OLD"],
)


# ============================================================================== added: launch specs, negative
case(
    id="ai-cloud-validation-643-k8s-job-no-dev-shm-8-ranks",
    url="https://github.com/NVIDIA/ai-cloud-validation/issues/643",
    cause="The single-node NCCL test Job manifest (nccl_allreduce_job.yaml) mounts no /dev/shm volume, so the "
    "container gets Kubernetes' default 64Mi tmpfs; with 8 local MPI ranks (one per GPU) OpenMPI/UCX's POSIX "
    "shared-memory transport runs out of space and the ranks segfault.",
    established_by="the reporter's A/B: adding the /dev/shm volume of the sibling MPIJob manifest (emptyDir medium "
    "Memory, sizeLimit 8Gi) makes the same Job pass reliably (~67 GB/s bus bandwidth); unmodified it fails on most "
    "backoffLimit attempts.",
    fix="mount an emptyDir (medium: Memory, sizeLimit 8Gi) at /dev/shm in the Job, as the MPIJob manifest does",
    seen="[ucp_address_unpack] Caught signal 11 (Segmentation fault)",
    image={
        "profile": "rdma-core-39-mlx5",
        "nccl": [
            {"version": "2.27.7", "origin": "dpkg:libnccl2", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.27.7"}
        ],
        "ucx": {"version": "1.19.0", "origin": "ucx.pc", "path": "/opt/hpcx/ucx/lib/pkgconfig/ucx.pc"},
    },
    node={"name": "k8s-gpu-node", "gpu": {"gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")}},
    job={
        "runtime": "kubernetes",
        "kind": "Job",
        "workload": "nccl-allreduce",
        "resources": {"nvidia.com/gpu": "8"},
        "gpus": 8,
        "gpus_setting": "nvidia.com/gpu: 8",
        "ranks_per_node": 8,
        "ranks_setting": "mpirun -np 8",
    },
    assumptions=[
        "the image's NCCL/UCX versions and paths are illustrative (an nccl-tests image with OpenMPI/UCX)",
        "GPU model illustrative; the issue states an 8-GPU node, nvidia.com/gpu: 8 and -np 8",
        "no shm volume in the Job: Kubernetes' default 64Mi /dev/shm applies (as the issue states)",
    ],
    expect=[{"id": "JOB-SHM-TOO-SMALL", "severity": "error"}],
    mechanism="8 local ranks share a 64Mi container /dev/shm; UCX's posix mm transport cannot allocate its receive "
    "FIFOs and the failure surfaces as a segfault in address unpacking.",
    expect_kind="job-spec rule (Kubernetes Job without a memory-backed /dev/shm for 8 local ranks)",
    working={
        "job": {"shm_size_mib": 8192, "shm_setting": "emptyDir medium: Memory sizeLimit: 8Gi"},
        "absent": ["JOB-SHM-TOO-SMALL"],
    },
)

case(
    id="pick-pytorch-14-nproc-4-on-2-visible-gpus",
    url="https://github.com/wenwenyu/PICK-pytorch/issues/14",
    cause="The README's launch line was run as CUDA_VISIBLE_DEVICES=1,2 python -m torch.distributed.launch "
    "--nproc_per_node=4: four local ranks for two visible GPUs, so ranks 2 and 3 asked for device ordinals that do "
    "not exist.",
    established_by="the maintainer (wenwenyu): change --nproc_per_node=4 to --nproc_per_node=2 (match "
    "CUDA_VISIBLE_DEVICES and --local_world_size); the reporter: with that it runs.",
    fix="--nproc_per_node equal to the number of GPUs in CUDA_VISIBLE_DEVICES (2)",
    seen="RuntimeError: cuda runtime error (101) : invalid device ordinal at /pytorch/torch/csrc/cuda/Module.cpp:59",
    image={
        "profile": "no-rdma-userspace",
        "nccl": [
            {
                "version": "2.4.8",
                "origin": "torch",
                "path": "/usr/local/lib/python3.7/site-packages/torch/lib/libtorch_cuda.so",
            }
        ],
    },
    node={"name": "pick-host", "gpu": {"gpus": gpus("GeForce RTX 2080 Ti", 4, "consumer")}},
    job={
        "runtime": "bare-metal",
        "kind": "torch.distributed.launch",
        "gpus": 2,
        "gpus_setting": "CUDA_VISIBLE_DEVICES=1,2",
        "ranks_per_node": 4,
        "ranks_setting": "--nproc_per_node=4",
        "env": {"CUDA_VISIBLE_DEVICES": "1,2"},
    },
    assumptions=[
        "no container: the launch is a host command line; modelled as a bare-metal job with 2 visible GPUs",
        "the node's GPU count/model is illustrative (at least 3: ids 1 and 2 are used)",
        "NCCL 2.4.8 (PyTorch 1.5/1.6 wheels of August 2020, statically linked) is illustrative",
    ],
    expect=[{"id": "JOB-RANKS-EXCEED-GPUS", "severity": "error"}],
    mechanism="More local ranks than visible GPUs: each rank calls cuda.set_device(local_rank); the ranks beyond "
    "the visible count get 'invalid device ordinal' before NCCL is reached.",
    expect_kind="job-spec rule (ranks per node exceed the GPUs the launch makes visible); the observed error is "
    "invalid device ordinal rather than NCCL's Duplicate GPU",
    working={"job": {"ranks_per_node": 2, "ranks_setting": "--nproc_per_node=2"}, "absent": ["JOB-RANKS-EXCEED-GPUS"]},
)

case(
    id="nccl-259-single-node-without-ib-works",
    url="https://github.com/NVIDIA/nccl/issues/259",
    cause="(working configuration) nccl-tests all_reduce_perf with 8 GPUs in one process on a single node without "
    "InfiniBand: 'No plugin found (libnccl-net.so)' and 'Failed to open libibverbs.so[.1]' are informational; NCCL "
    "uses its internal transports and the results are correct.",
    established_by="NCCL developers: kwen2501 ('That log is just for information purpose rather than reporting an "
    "error or warning ... since you only run NCCL on a single node, this may not be even relevant'); sjeaugey: the "
    "error-column values are normal ('Out of bounds values : 0 OK').",
    fix="none needed",
    seen="misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",
    image={
        "profile": "no-rdma-userspace",
        "nccl": [{"version": "2.4.8", "origin": "dpkg:libnccl2", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.4.8"}],
        "cuda": {"version": "10.1.243", "origin": "cuda-version", "path": "/usr/local/cuda/version.txt"},
    },
    node={
        "name": "h0913n-ubuntu",
        "gpu": {
            "gpus": [
                {"index": i, "name": n, "gpu_class": "consumer"}
                for i, n in enumerate(["GeForce GTX 1080 Ti"] * 2 + ["GeForce GTX 1070"] * 6)
            ]
        },
    },
    job={
        "runtime": "bare-metal",
        "kind": "nccl-tests",
        "gpus": 8,
        "gpus_setting": "all_reduce_perf -g 8",
        "ranks_per_node": 1,
        "ranks_setting": "one process driving 8 GPUs (-g 8)",
    },
    assumptions=[
        "no container: nccl-tests run on the host; modelled as an image without RDMA user space",
        "NCCL 2.4.8+cuda10.1 as the log prints; the package origin/path are illustrative",
        "GPU indices follow the log's device list (2x GTX 1080 Ti, 6x GTX 1070)",
    ],
    expect=[],
    mechanism="(negative) a single-node NCCL job on a host without RDMA needs neither a net plugin nor libibverbs; "
    "the probe messages are informational.",
    expect_kind="no error-severity finding; an informational note that multi-node traffic would use sockets is "
    "acceptable",
    must_not=["RDMA-NO-LIBIBVERBS", "JOB-RANKS-EXCEED-GPUS", "JOB-SHM-TOO-SMALL", "JOB-RDMA-DEVICES-NOT-EXPOSED"],
)


case(
    id="fds-6023-torque-pbs-mom-memlock-64k",
    url="https://github.com/firemodels/fds/issues/6023",
    cause="Jobs started by Torque's pbs_mom inherited max locked memory 64 KiB although /etc/security/limits.conf "
    "said unlimited (limits.conf applies to PAM logins, not to the daemon's children); Intel MPI's DAPL (RDMA) "
    "startup then refused: 'RLIMIT_MEMLOCK too small'.",
    established_by="the reporter's measurement (ulimit -l is unlimited in a shell, 64 inside the job script) and "
    "the FDS maintainer's answer: set 'ulimit -l unlimited' (soft and hard) in the pbs_mom startup script and "
    "restart pbs_mom.",
    fix="raise the memlock limit of pbs_mom (its init script or systemd unit) so jobs inherit unlimited",
    seen="[0] DAPL startup: RLIMIT_MEMLOCK too small",
    image={"profile": "rdma-core-33-mlx5"},
    node={
        "name": "torque-node",
        "rdma": {
            "stack": "mlnx_ofed",
            "devices": [{"name": "mlx4_0", "driver": "mlx4_core", "link_layer": "InfiniBand"}],
        },
        "limits": {"memlock_kib": 64},
    },
    job={"runtime": "bare-metal", "kind": "torque (qsub)", "ranks_per_node": 2},
    assumptions=[
        "no container: FDS with Intel MPI runs on the host; its verbs user space is modelled as an rdma-core image",
        "the HCA (mlx4, InfiniBand) and ranks per node are illustrative; the node has no GPU (FDS is a CPU code)",
        "node memlock 64 KiB is the soft limit the job gets (as measured in the issue)",
    ],
    expect=[{"id": "MEMLOCK-TOO-LOW", "severity": "error"}],
    mechanism="RDMA MPI needs to pin (lock) its buffers; the resource manager's daemon passes its own 64 KiB "
    "RLIMIT_MEMLOCK to every job, so the RDMA fabric refuses to start.",
    expect_kind="node limits rule (memlock the resource manager gives jobs)",
    working={"node": {"limits": {"memlock_kib": -1}}, "absent": ["MEMLOCK-TOO-LOW", "JOB-MEMLOCK-TOO-LOW"]},
)

case(
    id="cor-gs-23-cuda-visible-devices-empty",
    url="https://github.com/jiaw-z/CoR-GS/issues/23",
    cause="scripts/run_360.sh begins with `export CUDA_VISIBLE_DEVICES=$1` and was run without arguments, so the "
    "training process got CUDA_VISIBLE_DEVICES set to the empty string, which hides every GPU.",
    established_by="the repository's script (export CUDA_VISIBLE_DEVICES=$1) and the command in the reporter's log "
    "(no arguments); the reporter's workaround (CUDA_VISIBLE_DEVICES='0') made it work.",
    fix="pass the GPU index as the script's first argument (bash scripts/run_360.sh 0 <dataset> <workspace>)",
    seen="RuntimeError: No CUDA GPUs are available",
    image={"profile": "no-rdma-userspace"},
    node={"name": "ds3h", "gpu": {"gpus": gpus("NVIDIA GeForce RTX 3090", 1, "consumer")}},
    job={
        "runtime": "bare-metal",
        "kind": "shell script",
        "gpus": 1,
        "ranks_per_node": 1,
        "env": {"CUDA_VISIBLE_DEVICES": ""},
    },
    assumptions=[
        "no container: the training runs on the host; GPU model and count are illustrative (single GPU)",
        "the job env models what the script exports when $1 is empty",
    ],
    expect=[],
    mechanism="An empty CUDA_VISIBLE_DEVICES makes the CUDA driver enumerate no device for the process; torch then "
    "reports no CUDA GPUs although the host has one.",
    expect_kind="launch/env rule that flags CUDA_VISIBLE_DEVICES set but empty (none exists today: a gap)",
    working={"job": {"env": {"CUDA_VISIBLE_DEVICES": "0"}}, "absent": []},
)


def main() -> None:
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for c in CASES:
        for key in (
            "id",
            "url",
            "cause",
            "established_by",
            "fix",
            "seen",
            "image",
            "node",
            "assumptions",
            "expect",
            "mechanism",
            "expect_kind",
            "sealed_source",
            "must_not",
        ):
            assert key in c, (c["id"], key)
    with open(os.path.join(HERE, "cases.json"), "w", encoding="utf-8") as fh:
        json.dump({"description": DESCRIPTION, "cases": CASES}, fh, indent=1)
    print(len(CASES), "cases written")


if __name__ == "__main__":
    main()
