"""Build /work/sealed5/cases.json (the fifth sealed incident set) from the case list below.

Each case is in the format of the repo's tests/incidents/cases.json (loaded by tests/incidents/corpus.py), plus
`mechanism`, `expect_kind`, `sealed_source`, `cause`, `established_by`, `fix`, `seen`, `must_not`, `working`,
`assumptions`. Facts are as the thread states them; every fact added is listed in `assumptions`.

Collected 2026-12-07. Every source (owner/repo + issue/PR number) was checked with exclusion-check.sh against
`git -C /work/main grep` (whole tree), /work/shared, /work/sealed, /work/sealed2, /work/sealed3, /work/sealed4 and
bare '#N' in /work/main/src/imgcheck/data and /work/main/compat_matrix (files/lines naming the upstream); see
exclusion-check.txt. No imgcheck rule was run to choose a case; docs/rules.md was read only to fill `expect` /
`must_not` afterwards.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

DESCRIPTION = (
    "SEALED held-out incident set #5 for imgcheck: public threads nobody on the team had read (none of these URLs "
    "or issue numbers appears in the repo, in /work/shared or in /work/sealed, /work/sealed2, /work/sealed3, "
    "/work/sealed4 when collected). Same case format as tests/incidents/cases.json: image/node/job facts as each "
    "thread states them, `assumptions` lists every fact added, `expect` the rule ids of docs/rules.md that name the "
    "established mechanism today (empty when none does), `must_not` what the thread rules out, `working` the "
    "configuration the thread shows working. Extra fields: `mechanism` (one sentence; '(negative)' marks a "
    "configuration that works), `expect_kind`, `sealed_source`, `cause`, `established_by`, `fix`, `seen` (the line "
    "the user saw, or null). Scored once by score.py after the rules are done."
)

CASES = []


def case(**kw):
    kw.setdefault("sealed_source", "issues")
    kw.setdefault("must_not", [])
    kw.setdefault("working", None)
    kw.setdefault("job", None)
    CASES.append(kw)


def gpus(name, n, cls=None):
    out = []
    for i in range(n):
        g = {"index": i, "name": name}
        if cls:
            g["gpu_class"] = cls
        out.append(g)
    return out


def mlx5(n, link_layer="InfiniBand", start=0):
    return [{"name": f"mlx5_{i}", "driver": "mlx5_core", "link_layer": link_layer} for i in range(start, start + n)]


# ================================================================ GPU driver / CUDA / Fabric Manager
case(
    id="homelab-4110-unattended-upgrades-driver-userspace-mismatch",
    url="https://github.com/pando85/homelab/pull/4110",
    cause="unattended-upgrades upgraded the host's NVIDIA packages (nvidia-headless-*, libnvidia-*, cuda-*) on a GPU "
    "node of a Kubernetes cluster managed by the GPU Operator while the old kernel module stayed loaded; the device "
    "plugin failed NVML init and restarted 269 times until a node reboot realigned module and libraries.",
    established_by="merged PR by the cluster owner: root cause written in the description (host library upgraded, "
    "kernel module still the old version) and verified by the reboot; fix blacklists NVIDIA packages from "
    "unattended-upgrades",
    fix="reboot (or reload the nvidia modules) so the module matches the installed userspace; keep NVIDIA packages "
    "out of unattended-upgrades and let one mechanism (the GPU Operator) manage the driver",
    seen="Driver/library version mismatch — failed to initialize NVML",
    image={"profile": "no-rdma-userspace", "reference": "nvidia-device-plugin / GPU workload pods (any image)"},
    node={
        "name": "prusik",
        "gpu": {
            "driver_version": "570.133.20",
            "userspace_driver_version": "570.172.08",
            "gpus": gpus("NVIDIA GeForce RTX 3090", 1, "consumer"),
        },
    },
    job={"runtime": "kubernetes", "kind": "Pod", "resources": {"nvidia.com/gpu": "1"}, "gpus": 1},
    working={"node": {"gpu": {"userspace_driver_version": "570.133.20"}}, "absent": ["NODE-DRIVER-USERSPACE-MISMATCH"]},
    assumptions=[
        "both driver versions are illustrative: the PR names no versions, only that the host libraries were upgraded "
        "while the old kernel module stayed loaded",
        "the GPU model is illustrative (a homelab node); the PR names the node 'prusik' only",
        "the GPU Operator the PR mentions is not modelled (its version is not given)",
    ],
    expect=[{"id": "NODE-DRIVER-USERSPACE-MISMATCH", "severity": "error"}],
    must_not=["CUDA-DRIVER-TOO-OLD", "IMAGE-DRIVER-USERSPACE"],
    mechanism="Host NVIDIA userspace upgraded under a loaded kernel module: every NVML client (device plugin, "
    "nvidia-container-cli) fails with a driver/library version mismatch until the module is reloaded.",
    expect_kind="node rule: loaded kernel module and installed userspace driver differ",
    sealed_source="issues (merged PR)",
)

case(
    id="gpu-burn-36-a100-hgx-without-fabricmanager",
    url="https://github.com/wilicc/gpu-burn/issues/36",
    cause="On NVSwitch-based A100 (HGX/DGX A100) nodes without nvidia-fabricmanager installed, CUDA cannot initialise "
    "the GPUs, so gpu_burn lists the GPUs (via NVML) and then reports 'No CUDA devices'.",
    established_by="commenter's answer in the thread ('this is not a bug. You need to install nvidia-fabricmanager "
    "for A100s to run with GPUBurn', with the HGX software guide), matching the other A100 reporters",
    fix="install the nvidia-fabricmanager package of the same driver branch and start the service",
    seen="No CUDA devices",
    image={"profile": "no-rdma-userspace", "reference": "gpu-burn built on the host (CUDA 11.0)"},
    node={
        "name": "hgx-a100",
        "gpu": {"driver_version": "450.80.02", "gpus": gpus("NVIDIA A100-SXM4-40GB", 8, "datacenter")},
        "fabric": {
            "nvswitch_pci": [
                "0000:c2:00.0",
                "0000:c3:00.0",
                "0000:c4:00.0",
                "0000:c5:00.0",
                "0000:c6:00.0",
                "0000:c7:00.0",
            ],
            "fm_installed": False,
            "fm_running": False,
        },
    },
    job={"runtime": "bare-metal", "kind": "gpu_burn"},
    working={
        "node": {
            "fabric": {
                "fm_installed": True,
                "fm_running": True,
                "fm_package": "nvidia-fabricmanager-450",
                "fm_version": "450.80.02",
            }
        },
        "absent": ["NODE-FABRIC-MANAGER-MISSING", "NODE-FABRIC-MANAGER-NOT-RUNNING"],
    },
    assumptions=[
        "the node is modelled as an 8x A100-SXM4 HGX baseboard with six NVSwitch PCI functions (the thread says 'A100 "
        "GPU' / 'DGX A100'; the reporter with the 'No CUDA devices' output quoted TITAN RTX, a second reporter A100)",
        "driver 450.80.02 is illustrative (CUDA 11.0 era, as the first reporter's CUDA 11.0)",
        "the NVSwitch PCI addresses are illustrative",
    ],
    expect=[{"id": "NODE-FABRIC-MANAGER-MISSING", "severity": "error"}],
    must_not=["CUDA-DRIVER-TOO-OLD"],
    mechanism="NVSwitch A100 system without Fabric Manager: NVML sees the GPUs but CUDA cannot initialise any device.",
    expect_kind="node rule: NVSwitch system without Fabric Manager",
)

case(
    id="gpud-1151-h100-fabric-manager-installed-not-active",
    url="https://github.com/leptonai/gpud/pull/1151",
    cause="On an H100 80GB HBM3 (NVSwitch) node the Fabric Manager was installed but not active; the health checker "
    "had skipped the activeness check when the fabric state was supported and reported the node healthy. After the "
    "fix it reported 'fabric manager found but not active', and after restarting the service the node was healthy.",
    established_by="merged PR by the gpud maintainer with before/after output (unhealthy: 'fabric manager found but "
    "not active'; healthy after restart)",
    fix="start (and enable) nvidia-fabricmanager on NVSwitch H100 nodes",
    seen="NVIDIA-H100-80GB-HBM3 checked fabric state; fabric manager found but not active",
    image={"profile": "no-rdma-userspace", "reference": "any CUDA workload image"},
    node={
        "name": "h100-hgx",
        "gpu": {"driver_version": "570.172.08", "gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")},
        "fabric": {
            "nvswitch_pci": ["0000:05:00.0", "0000:06:00.0", "0000:07:00.0", "0000:08:00.0"],
            "fm_installed": True,
            "fm_package": "nvidia-fabricmanager-570",
            "fm_version": "570.172.08",
            "fm_running": False,
        },
    },
    working={"node": {"fabric": {"fm_running": True}}, "absent": ["NODE-FABRIC-MANAGER-NOT-RUNNING"]},
    assumptions=[
        "driver and Fabric Manager version 570.172.08 are illustrative (same version, so only the running state "
        "differs)",
        "8 GPUs and four NVSwitch PCI functions are illustrative of an H100 HGX baseboard",
    ],
    expect=[{"id": "NODE-FABRIC-MANAGER-NOT-RUNNING", "severity": "error"}],
    must_not=["NODE-FABRIC-MANAGER-VERSION-MISMATCH", "NODE-FABRIC-MANAGER-MISSING"],
    mechanism="Fabric Manager installed but not running on an NVSwitch H100 node: the NVLink fabric is not configured.",
    expect_kind="node rule: Fabric Manager installed but not running",
    sealed_source="issues (merged PR)",
)

case(
    id="gcp-compute-gpu-installation-18-kernel-upgrade-no-dkms-module",
    url="https://github.com/GoogleCloudPlatform/compute-gpu-installation/pull/18",
    cause="After an automatic kernel upgrade the NVIDIA driver installed by the script stopped working: its kernel "
    "module was built for the previous kernel and, without DKMS installed before the upgrade, no module was built for "
    "the new one, so nvidia-smi cannot talk to the driver.",
    established_by="merged PR by the maintainers (description states the cause; reviewer confirms it relates to the "
    "DKMS fix, which only works if dkms is installed before the kernel updates)",
    fix="install dkms with the driver so the module is rebuilt for new kernels (or reinstall the driver for the "
    "running kernel); the PR makes the installer check nvidia-smi's exit code",
    seen="NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest "
    "NVIDIA driver is installed and running.",
    image={"profile": "no-rdma-userspace", "reference": "GCE VM workloads (no container)"},
    node={
        "name": "gce-gpu-vm",
        "kernel": {"release": "5.10.0-21-cloud-amd64"},
        "gpu": {"gpus": gpus("NVIDIA L4", 1, "datacenter")},
        "dkms": [
            {
                "name": "nvidia",
                "version": "525.105.17",
                "kernel": "5.10.0-20-cloud-amd64",
                "arch": "x86_64",
                "installed": True,
            }
        ],
    },
    assumptions=[
        "kernel releases, the GPU model and the driver version are illustrative; the PR states only 'after a kernel "
        "upgrade, the installed NVIDIA driver may stop working'",
        "the dkms entry models a module built for the previous kernel only (the thread's point: dkms was not in place "
        "when the kernel was upgraded)",
        "no driver_version is given for the node: the probe would find no NVIDIA kernel module loaded",
    ],
    expect=[],
    must_not=["CUDA-DRIVER-TOO-OLD", "NODE-DRIVER-USERSPACE-MISMATCH"],
    mechanism="Kernel upgraded without a rebuilt NVIDIA module: the driver is not loaded on the new kernel and no "
    "CUDA/NVML client can reach the GPU.",
    expect_kind="node rule: NVIDIA kernel module not built for the running kernel (no rule names this today; "
    "NODE-NO-MULTINODE-GPU-PATH only reports a node without any driver as possibly a CPU node)",
    sealed_source="issues (merged PR)",
)

case(
    id="nccl-133-cuda-driver-bug-gdr-allreduce-nan",
    url="https://github.com/NVIDIA/nccl/issues/133",
    cause="NCCL 2 allreduce over InfiniBand with GPUDirect RDMA returned NaNs; the bug was in a particular CUDA driver "
    "version and is fixed by a newer driver. NCCL_IB_CUDA_SUPPORT=0 (no GDR) hid it at a performance cost.",
    established_by="NCCL maintainer (AddyLaddy): 'The bug was in a particular version of the CUDA driver and is solved "
    "by upgrading to a new driver'; the reporter confirmed NCCL_IB_CUDA_SUPPORT=0 avoided it",
    fix="upgrade the GPU driver; NCCL_IB_CUDA_SUPPORT=0 (disables GDR) only as a stopgap",
    seen=None,
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "NCCL 2.1/2.2-era training image (Caffe2/PyTorch)",
        "nccl": [{"version": "2.1.15", "origin": "library", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.1.15"}],
    },
    node={
        "name": "ib-gdr-node",
        "rdma": {"stack": "mlnx_ofed", "devices": mlx5(2)},
        "gpu": {
            "driver_version": "384.81",
            "peermem": {"legacy_nv_peer_mem": True},
            "gpus": gpus("Tesla P100-SXM2-16GB", 8, "datacenter"),
        },
    },
    job={"runtime": "bare-metal", "kind": "mpirun"},
    assumptions=[
        "NCCL 2.1.15 is taken from the reporter's link to the 2.1.15 release notes",
        "the driver 384.81, P100 GPUs, two mlx5 HCAs and nv_peer_mem are illustrative (the thread does not name the "
        "buggy driver version; its log shows NET/IB/0/GDRDMA and NET/IB/1/GDRDMA)",
    ],
    expect=[],
    must_not=["GDR-PEERMEM-MISSING", "ENV-DISABLES-GDR"],
    mechanism="A GPU driver bug corrupts data written by GPUDirect RDMA: allreduce over IB with GDR returns NaN.",
    expect_kind="node rule: driver release with a known GDR data-corruption bug (no rule names this today)",
)

# ================================================================ GPUDirect RDMA / peer memory
case(
    id="deepep-223-nvidia-peermem-not-loaded-internode",
    url="https://github.com/deepseek-ai/DeepEP/issues/223",
    cause="DeepEP's two-node internode test (high-throughput mode, NVSHMEM over InfiniBand) failed because the "
    "nvidia-peermem kernel module was not loaded on the host; loading it fixed the test.",
    established_by="reporter's verified fix in the thread ('After checking the nvidia-peermem kernel in the host "
    "machine, seems it is not loaded successfully. Solve by loading: modprobe nvidia-peermem')",
    fix="modprobe nvidia-peermem on every node (and load it at boot); check with lsmod | grep peer",
    seen=None,
    image={"profile": "rdma-core-39-mlx5", "reference": "DeepEP build with NVSHMEM (CUDA 12)"},
    node={
        "name": "h800-ib-node",
        "kernel": {"release": "5.15.0-105-generic"},
        "rdma": {"stack": "mlnx_ofed", "ofed_version": "23.10-2.1.3.1", "devices": mlx5(8)},
        "gpu": {
            "driver_version": "535.161.08",
            "kernel_module": "proprietary",
            "peermem": {"loaded": False},
            "gpus": gpus("NVIDIA H800", 8, "datacenter"),
        },
    },
    job={"runtime": "bare-metal", "kind": "torchrun", "gpus": 8},
    working={"node": {"gpu": {"peermem": {"loaded": True}}}, "absent": ["GDR-PEERMEM-MISSING"]},
    assumptions=[
        "H800 GPUs, 8 IB HCAs, MLNX_OFED 23.10, kernel 5.15 and driver 535 (proprietary modules) are illustrative: "
        "the thread only says two nodes, internode test, nvidia-peermem not loaded on the host",
        "proprietary kernel modules are assumed so that DMA-BUF is not an alternative path (the thread's fix was "
        "loading nvidia-peermem)",
    ],
    expect=[{"id": "GDR-PEERMEM-MISSING", "severity": "warning"}],
    must_not=["RDMA-NO-LIBIBVERBS", "RDMA-NO-MLX5-PROVIDER"],
    mechanism="nvidia-peermem not loaded on the host: GPU memory cannot be registered with the HCA, so the "
    "GPUDirect-RDMA-only internode path fails.",
    expect_kind="node rule: no peer-memory module loaded and no DMA-BUF path",
)

# ================================================================ NCCL release defects (old and new)
case(
    id="pytorch-42645-nccl-2.7.3-bug-on-a100",
    url="https://github.com/pytorch/pytorch/pull/42645",
    cause="PyTorch bundled NCCL 2.7.3, which has a bug on GA100 (A100) GPUs that is fixed in NCCL 2.7.6; the PR bumps "
    "the submodule to 2.7.6.",
    established_by="PR by an NVIDIA engineer stating '2.7.3 has some bug on GA100 which is fixed in 2.7.6'; PyTorch "
    "maintainer (mrshenli) agreed to update the bundled NCCL",
    fix="use NCCL 2.7.6 or later on A100",
    seen=None,
    image={
        "profile": "no-rdma-userspace",
        "reference": "PyTorch built from source with the bundled NCCL 2.7.3 submodule (August 2020)",
        "nccl": [
            {
                "version": "2.7.3",
                "origin": "library",
                "path": "/opt/conda/lib/python3.8/site-packages/torch/lib/libnccl.so.2",
            }
        ],
        "cuda": {"version": "11.0", "origin": "version.json", "path": "/usr/local/cuda/version.txt"},
    },
    node={"name": "dgx-a100", "gpu": {"driver_version": "450.51.06", "gpus": gpus("A100-SXM4-40GB", 8, "datacenter")}},
    job={"runtime": "bare-metal", "kind": "torchrun", "gpus": 8},
    working={
        "image": {
            "nccl": [
                {
                    "version": "2.7.6",
                    "origin": "library",
                    "path": "/opt/conda/lib/python3.8/site-packages/torch/lib/libnccl.so.2",
                }
            ]
        },
        "absent": ["NCCL-RELEASE-LATER-FIX"],
    },
    assumptions=[
        "the PR does not say what the bug does; the failure mode is left unspecified",
        "DGX A100 with 8 GPUs, driver 450.51.06 and CUDA 11.0 are illustrative (August 2020)",
        "the NCCL library path models the bundled (statically built) NCCL as a file in torch/lib",
    ],
    expect=[{"id": "NCCL-RELEASE-LATER-FIX", "severity": "info"}],
    mechanism="NCCL 2.7.3 on A100 hits a release bug fixed in 2.7.6.",
    expect_kind="image x node rule: NCCL release older than a fix for the node's GPU generation (only if the release "
    "notes catalog carries the 2.7.6 A100 fix)",
    sealed_source="issues (PR)",
)

case(
    id="pytorch-23016-nccl-2.4-socket-performance-regression",
    url="https://github.com/pytorch/pytorch/issues/23016",
    cause="The NCCL 2.4.x bundled with PyTorch had a performance regression when communicating over sockets in "
    "multi-node runs; NCCL 2.4.8-1 fixes it and PyTorch updated its submodule (PR 23186, 'Fixes #23016').",
    established_by="PyTorch maintainer's PR 'Update nccl to 2.4.8-1' referencing the issue as fixed",
    fix="use NCCL 2.4.8 or later for socket-transport multi-node jobs",
    seen=None,
    image={
        "profile": "no-rdma-userspace",
        "reference": "PyTorch 1.1 with bundled NCCL 2.4.2",
        "nccl": [
            {
                "version": "2.4.2",
                "origin": "library",
                "path": "/opt/conda/lib/python3.7/site-packages/torch/lib/libnccl.so.2",
            }
        ],
    },
    node={
        "name": "ethernet-gpu-node",
        "gpu": {"driver_version": "418.67", "gpus": gpus("Tesla V100-PCIE-16GB", 4, "datacenter")},
        "net_interfaces": [{"name": "lo"}, {"name": "eth0", "operstate": "up", "ipv4": ["10.0.0.11/24"]}],
    },
    job={"runtime": "bare-metal", "kind": "torch.distributed.launch", "env": {"NCCL_SOCKET_IFNAME": "eth0"}},
    assumptions=[
        "NCCL 2.4.2 models 'the NCCL 2.4 before 2.4.8' PyTorch 1.1 bundled (the issue only says 2.4.8.1 fixes the "
        "regression)",
        "the node (V100 PCIe, driver 418, one Ethernet interface, no RDMA) and NCCL_SOCKET_IFNAME are illustrative of "
        "'communicating over sockets in multi-node setting'",
    ],
    expect=[{"id": "NCCL-RELEASE-LATER-FIX", "severity": "info"}],
    mechanism="NCCL 2.4 before 2.4.8 has a socket-transport performance regression in multi-node jobs.",
    expect_kind="image x node rule: NCCL release older than a fix that applies to the socket transport",
)

case(
    id="awsome-distributed-ai-217-nccl-2.19.4-performance-regression",
    url="https://github.com/awslabs/awsome-distributed-ai/pull/217",
    cause="NCCL 2.19.4 has a performance regression; AWS's distributed-training reference images moved to NCCL 2.20.3.",
    established_by="merged PR by AWS maintainers ('NCCL 2.19.4 has performance regression'), reviewed and approved",
    fix="use NCCL 2.20.3 or later",
    seen=None,
    image={
        "profile": "efa-installer",
        "reference": "awsome-distributed-training nccl-tests / training container (EFA, aws-ofi-nccl)",
        "nccl": [{"version": "2.19.4", "origin": "library", "path": "/opt/nccl/build/lib/libnccl.so.2.19.4"}],
        "nccl_net_plugins": [{"name": "aws-ofi-nccl", "path": "/opt/aws-ofi-nccl/lib/libnccl-net.so"}],
    },
    node={
        "name": "p5-48xlarge",
        "labels": {"node.kubernetes.io/instance-type": "p5.48xlarge"},
        "rdma": {"stack": "inbox", "devices": [{"name": f"rdmap{i}s0", "driver": "efa"} for i in range(79, 83)]},
        "gpu": {"driver_version": "535.129.03", "gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")},
    },
    job={"runtime": "slurm", "kind": "srun", "gpus": 8},
    assumptions=[
        "the PR names no instance type; p5.48xlarge (H100), four EFA devices shown (p5 has 32) and driver 535 are "
        "illustrative",
        "the nccl path and plugin path follow the repository's Dockerfile layout as commonly used (illustrative)",
    ],
    expect=[{"id": "NCCL-RELEASE-LATER-FIX", "severity": "info"}],
    mechanism="NCCL 2.19.4 has a performance regression fixed in a later release.",
    expect_kind="image rule: NCCL release with a later fix (performance)",
    sealed_source="issues (merged PR)",
)

case(
    id="club-3090-892-nccl-2.25.1-allreduce-oob-write-llamacpp",
    url="https://github.com/noonghunna/club-3090/pull/892",
    cause="llama.cpp's tensor-split (row/tensor split mode) hang on multi-RTX-3090 was root-caused to an NCCL "
    "all-reduce out-of-bounds write ~32 GiB past a 2 MiB allocation on the large-tensor bf16 branch, fixed in NCCL "
    "2.27.5; the pinned llama.cpp server-cuda image ships NCCL 2.25.1.",
    established_by="merged PR (documentation of the project's verified findings) citing the upstream llama.cpp "
    "root cause (ggml-org/llama.cpp#24489) and the NCCL fix release 2.27.5",
    fix="use an image with NCCL >= 2.27.5 (or build llama.cpp with -DGGML_CUDA_NO_VMM=ON); until then use the default "
    "layer split",
    seen=None,
    image={
        "profile": "no-rdma-userspace",
        "reference": "ghcr.io/ggml-org/llama.cpp:server-cuda-b10236",
        "nccl": [{"version": "2.25.1", "origin": "library", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2"}],
    },
    node={
        "name": "4x3090",
        "gpu": {"driver_version": "580.95.05", "p2p": False, "gpus": gpus("NVIDIA GeForce RTX 3090", 4, "consumer")},
    },
    job={"runtime": "docker", "kind": "docker run", "gpus": -1},
    assumptions=[
        "four RTX 3090 GPUs, driver 580 and P2P unavailable are illustrative of the project's multi-3090 rigs",
        "the libnccl path inside the image is illustrative",
    ],
    expect=[{"id": "NCCL-RELEASE-LATER-FIX", "severity": "info"}],
    must_not=["NODE-PCI-ACS-REDIRECT"],
    mechanism="NCCL 2.25.1 all-reduce out-of-bounds write (fixed in 2.27.5) hangs llama.cpp's tensor-split mode.",
    expect_kind="image rule: NCCL release older than a fix for a hang/corruption (if the release notes carry it)",
    sealed_source="issues (merged PR)",
)

# ================================================================ containers and launch specs
case(
    id="onnxruntime-5214-ci-docker-default-shm-nccl",
    url="https://github.com/microsoft/onnxruntime/pull/5214",
    cause="The nightly frontend end-to-end CI docker container ran multi-GPU NCCL training with Docker's default "
    "/dev/shm (64 MB), which NCCL's shared-memory transport outgrew; the pipeline failed until the container was "
    "started with --shm-size=1024m.",
    established_by="merged PR by the maintainers ('Increase shared memory limit of Frontend e2e Nightly Docker to "
    "avoid NCCL failure'), pipeline passing",
    fix="start the container with --shm-size=1024m (or --ipc=host)",
    seen=None,
    image={
        "profile": "no-rdma-userspace",
        "reference": "onnxruntime training CI image (CUDA, NCCL 2.7)",
        "nccl": [{"version": "2.7.8", "origin": "dpkg", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.7.8"}],
    },
    node={
        "name": "ci-multi-gpu",
        "gpu": {"driver_version": "450.80.02", "p2p": False, "gpus": gpus("Tesla V100-PCIE-16GB", 4, "datacenter")},
    },
    job={"runtime": "docker", "kind": "docker run", "gpus": -1, "shm_size_mib": 64, "ranks_per_node": 4},
    working={"job": {"shm_size_mib": 1024}, "absent": ["JOB-SHM-TOO-SMALL"]},
    assumptions=[
        "NCCL 2.7.8, driver 450, 4 V100 PCIe GPUs without P2P and 4 ranks are illustrative (September 2020 CI)",
        "shm_size_mib 64 is Docker's default, which the PR raised to 1024m",
    ],
    expect=[{"id": "JOB-SHM-TOO-SMALL", "severity": "error"}],
    must_not=["JOB-MEMLOCK-TOO-LOW"],
    mechanism="Docker's default 64 MB /dev/shm is too small for NCCL's shared-memory segments in a multi-GPU job.",
    expect_kind="job rule: container /dev/shm too small for NCCL",
    sealed_source="issues (merged PR)",
)

case(
    id="rocm-spur-449-job-steps-inherit-8mib-memlock",
    url="https://github.com/ROCm/spur/pull/449",
    cause="The spur scheduler daemon (spurd) never raised RLIMIT_MEMLOCK, so job steps inherited the systemd default "
    "(8 MiB) and NCCL/InfiniBand RDMA failed creating completion queues with ENOMEM.",
    established_by="merged PR by the maintainers: root cause in the description and a fix (setrlimit to unlimited "
    "before the privilege drop, as slurmstepd does), validated",
    fix="raise the job's locked-memory limit (unlimited) in the launcher / node daemon (slurmd: LimitMEMLOCK=infinity)",
    seen="ibv_create_cq: Cannot allocate memory",
    image={"profile": "rdma-core-39-mlx5", "reference": "NCCL workload image run by spur job steps"},
    node={
        "name": "spur-ib-node",
        "rdma": {"stack": "inbox", "devices": mlx5(1)},
        "limits": {"memlock_kib": 8192},
    },
    working={"node": {"limits": {"memlock_kib": -1}}, "absent": ["MEMLOCK-TOO-LOW"]},
    assumptions=[
        "the node's limit is modelled as what a job step gets (8192 KiB, the systemd default the PR names)",
        "one mlx5 HCA on the inbox stack is illustrative; the PR names InfiniBand only",
        "GPU facts are left out (the PR names no GPU)",
    ],
    expect=[{"id": "MEMLOCK-TOO-LOW", "severity": "error"}],
    must_not=["JOB-NO-IPC-LOCK", "RDMA-CGROUP-HCA-HANDLES"],
    mechanism="Jobs launched by a daemon that keeps the systemd default RLIMIT_MEMLOCK (8 MiB) cannot pin the "
    "memory verbs needs: ibv_create_cq fails with ENOMEM.",
    expect_kind="node rule: locked-memory limit of launched jobs too low",
    sealed_source="issues (merged PR)",
)

case(
    id="stable-diffusion-cpp-1352-docker-run-without-gpus",
    url="https://github.com/leejet/stable-diffusion.cpp/issues/1352",
    cause="The CUDA image was started with plain `docker run` (no --gpus), so the NVIDIA runtime hook did not mount "
    "the host driver's libcuda.so.1 into the container and the binary failed to load.",
    established_by="reporter's verified fix: 'Not a bug. I just needed to add --gpus all when running the image.'",
    fix="docker run --gpus all (or the NVIDIA runtime / CDI device request)",
    seen="/sd-cli: error while loading shared libraries: libcuda.so.1: cannot open shared object file: No such file "
    "or directory",
    image={
        "profile": "no-rdma-userspace",
        "reference": "ghcr.io/leejet/stable-diffusion.cpp:master-cuda",
        "cuda": {"version": "12.8", "origin": "env CUDA_VERSION"},
    },
    node={
        "name": "ubuntu-2404-gpu",
        "gpu": {"driver_version": "580.126.09", "gpus": gpus("NVIDIA GeForce RTX 4090", 1, "consumer")},
    },
    job={"runtime": "docker", "kind": "docker run", "gpus": 0},
    working={"job": {"gpus": -1}, "absent": []},
    assumptions=[
        "CUDA 12.8 in the image, the driver version and the GPU are illustrative; the issue gives Ubuntu 24.04 only",
        "gpus 0 models a docker run without --gpus",
    ],
    expect=[],
    must_not=["CUDA-DRIVER-TOO-OLD", "LD-LIB-NOT-FOUND"],
    mechanism="Container started without a GPU request: the host driver libraries (libcuda.so.1) are not injected.",
    expect_kind="job rule: docker run without --gpus / NVIDIA runtime for a CUDA image (no rule names this today "
    "outside enroot: JOB-ENROOT-NO-GPU-DRIVER)",
)

case(
    id="clima-slurm-buildkite-54-gpus-per-task-breaks-cuda-ipc",
    url="https://github.com/CliMA/slurm-buildkite/issues/54",
    cause="Open MPI jobs on a 4-GPU node launched with `--ntasks=4 --gpus-per-task=1` got one visible GPU per task "
    "(Slurm binds GPUs to tasks), so CUDA IPC between ranks failed ('Failed to register remote memory, rc=-1'); with "
    "`--ntasks=4 --gpus=4` every task sees all four GPUs.",
    established_by="maintainer analysis in the thread (CUDA_VISIBLE_DEVICES per task shown with srun printenv for both "
    "layouts) and the linked Open MPI issue on Slurm GPU binding; issue closed",
    fix="request --gpus=N (all GPUs visible to every task) and select the device per local rank, or --gpu-bind=none",
    seen="Failed to register remote memory, rc=-1",
    image={"profile": "no-rdma-userspace", "reference": "ClimaAtmos CI environment (Julia + CUDA-aware Open MPI)"},
    node={
        "name": "clima",
        "gpu": {"driver_version": "550.54.15", "gpus": gpus("NVIDIA A100-SXM4-80GB", 4, "datacenter")},
    },
    job={"runtime": "slurm", "kind": "srun", "ranks_per_node": 4, "env": {"CUDA_VISIBLE_DEVICES": "0"}},
    working={"job": {"env": {"CUDA_VISIBLE_DEVICES": "0,1,2,3"}}, "absent": []},
    assumptions=[
        "four A100-SXM4-80GB GPUs and driver 550 are illustrative of the 'clima' GPU server (the thread says 4 GPUs)",
        "the per-task CUDA_VISIBLE_DEVICES of one task is modelled as '0' (Slurm renumbers each task's single GPU)",
    ],
    expect=[],
    must_not=["JOB-RANKS-EXCEED-GPUS", "NODE-PCI-ACS-REDIRECT"],
    mechanism="Per-task GPU binding hides the peer GPUs from each rank: CUDA IPC between ranks on one node fails.",
    expect_kind="job rule: Slurm per-task GPU isolation blocks intra-node CUDA IPC / P2P (no rule names this today)",
)

case(
    id="nccl-913-docker-bridge-veth-hangs-comminitrank",
    url="https://github.com/NVIDIA/nccl/issues/913",
    cause="A docker container running in bridge networking mode left a veth* interface on the host; NCCL's default "
    "interface selection (which skips only lo and docker*) picked it, and ncclCommInitRank hung because other nodes "
    "cannot reach that address.",
    established_by="reporter's diagnosis of their configuration issue; NCCL maintainer (sjeaugey) confirmed NCCL "
    "requires selecting the right interface (as MPI does) rather than probing reachability",
    fix="set NCCL_SOCKET_IFNAME to the routable interface (or exclude veth: ^lo,docker,veth)",
    seen=None,
    image={
        "profile": "no-rdma-userspace",
        "reference": "training image (NCCL 2.18)",
        "nccl": [
            {
                "version": "2.18.3",
                "origin": "pip",
                "path": "/usr/local/lib/python3.10/dist-packages/nvidia/nccl/lib/libnccl.so.2",
            }
        ],
    },
    node={
        "name": "gpu-host",
        "gpu": {"driver_version": "535.54.03", "gpus": gpus("NVIDIA A100-SXM4-80GB", 8, "datacenter")},
        "net_interfaces": [
            {"name": "lo", "operstate": "unknown", "ipv4": ["127.0.0.1/8"]},
            {"name": "veth1a2b3c4", "operstate": "up", "ipv4": [], "ipv6": ["fe80::48a2:c3ff:fe11:2233/64 link"]},
            {"name": "docker0", "operstate": "up", "ipv4": ["172.17.0.1/16"]},
            {"name": "eth0", "operstate": "up", "ipv4": ["10.10.0.21/24"]},
        ],
    },
    job={"runtime": "bare-metal", "kind": "torchrun", "host_network": True},
    working={"job": {"env": {"NCCL_SOCKET_IFNAME": "eth0"}}, "absent": ["ENV-NCCL-SOCKET-NODE-LOCAL"]},
    assumptions=[
        "interface names and addresses are illustrative; the thread names only a veth* interface created by a bridge-"
        "mode container",
        "the veth is listed before eth0 to model NCCL picking it first; NCCL 2.18.3, driver and GPUs are illustrative "
        "(July 2023)",
    ],
    expect=[{"id": "ENV-NCCL-SOCKET-NODE-LOCAL", "severity": "warning"}],
    must_not=["ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE"],
    mechanism="NCCL's default socket-interface choice picks a host veth interface other nodes cannot reach: "
    "bootstrap hangs.",
    expect_kind="node x env rule: NCCL socket interface includes one that other nodes cannot reach",
)

# ================================================================ network settings (RoCE GID, Gloo, sockets)
case(
    id="pytorch-81628-roce-default-gid-across-switches",
    url="https://github.com/pytorch/pytorch/issues/81628",
    cause="Two RoCE nodes under different switches failed with 'Got completion from peer ... error 12 ... vendor err "
    "129' (QP timeout): with the default GID index the NICs could not reach each other; NCCL_IB_GID_INDEX=3 (the "
    "RoCE v2 IPv4 GID) made it work.",
    established_by="PyTorch/NCCL maintainer (kwen2501): 'vendor err 129 is usually a timeout ... the NICs can't talk "
    "to each other using IB or RoCE'; a commenter with the same error verified the fix: 'solved by adding -x "
    "NCCL_IB_GID_INDEX=3. The gpu machines are under different switches, the default gid can't create link'",
    fix="use the RoCE v2 GID of the routable IPv4 address (NCCL_IB_GID_INDEX=3 here), or an NCCL release that picks it",
    seen="NCCL WARN NET/IB : Got completion from peer 192.168.17.147<38560> with error 12, opcode 0, len 0, vendor "
    "err 129",
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "PyTorch 1.x image (NCCL 2.10.3)",
        "nccl": [
            {
                "version": "2.10.3",
                "origin": "library",
                "path": "/opt/conda/lib/python3.8/site-packages/torch/lib/libnccl.so.2",
            }
        ],
    },
    node={
        "name": "tf144",
        "rdma": {
            "stack": "mlnx_ofed",
            "devices": [
                {
                    "name": "mlx5_0",
                    "driver": "mlx5_core",
                    "link_layer": "Ethernet",
                    "ports": [
                        {
                            "port": 1,
                            "state": "ACTIVE",
                            "link_layer": "Ethernet",
                            "netdev": "enp88s0",
                            "gid_table_len": 4,
                            "gids_read": 4,
                            "gids": [
                                {
                                    "index": 0,
                                    "type": "IB/RoCE v1",
                                    "netdev": "enp88s0",
                                    "gid": "fe80:0000:0000:0000:0a0b:0cff:fe0d:0e0f",
                                },
                                {
                                    "index": 1,
                                    "type": "RoCE v2",
                                    "netdev": "enp88s0",
                                    "gid": "fe80:0000:0000:0000:0a0b:0cff:fe0d:0e0f",
                                },
                                {
                                    "index": 2,
                                    "type": "IB/RoCE v1",
                                    "netdev": "enp88s0",
                                    "gid": "0000:0000:0000:0000:0000:ffff:c0a8:1190",
                                },
                                {
                                    "index": 3,
                                    "type": "RoCE v2",
                                    "netdev": "enp88s0",
                                    "gid": "0000:0000:0000:0000:0000:ffff:c0a8:1190",
                                },
                            ],
                        }
                    ],
                },
            ],
        },
        "gpu": {"driver_version": "470.129.06", "gpus": gpus("NVIDIA A100-PCIE-40GB", 2, "datacenter")},
    },
    job={"runtime": "bare-metal", "kind": "python", "env": {"NCCL_IB_DISABLE": "0"}},
    working={"job": {"env": {"NCCL_IB_GID_INDEX": "3"}}, "absent": ["ENV-NCCL-IB-GID-INDEX-ROCE-V1"]},
    assumptions=[
        "the GID table is the usual mlx5 RoCE layout (0/1 link-local v1/v2, 2/3 IPv4 v1/v2) for the reporter's "
        "192.168.17.144 interface; the actual table is not in the thread",
        "NCCL 2.10.3, driver 470 and two A100 PCIe GPUs are illustrative (July 2022); the log shows mlx5_0/mlx5_1 "
        "RoCE and an i40iw device, only mlx5_0 is modelled",
        "the established fix (GID index 3, nodes under different switches) is a commenter's with the same error; "
        "the reporter's own thread went stale",
    ],
    expect=[{"id": "ENV-NCCL-IB-GID-INDEX-ROCE-V1", "severity": "warning"}],
    must_not=["ENV-NCCL-IB-RETRY-CNT", "ENV-DISABLES-IB"],
    mechanism="NCCL before automatic GID selection uses GID index 0 (RoCE v1, link-local), which is not routed "
    "between switches: the QPs time out (error 12, vendor err 129).",
    expect_kind="node x env rule: default GID index is a RoCE v1 / link-local GID on a routed RoCE fabric "
    "(ENV-NCCL-IB-GID-INDEX-LINK-LOCAL default variant names the link-local half)",
)

case(
    id="meta-pytorch-data-1142-gloo-binds-localhost-multinode",
    url="https://github.com/meta-pytorch/data/issues/1142",
    cause="Multi-node training failed with TCP connection refused because the nodes' host names resolved to a "
    "localhost address, which Gloo advertised to the other nodes; setting GLOO_SOCKET_IFNAME=eth0 fixed it.",
    established_by="maintainer (ejguan) diagnosis ('your nodes are set to localhost for connection ... set "
    "GLOO_SOCKET_IFNAME') and reporter's verified fix ('Adding export GLOO_SOCKET_IFNAME=eth0 fixes my issue')",
    fix="export GLOO_SOCKET_IFNAME=<routable interface> on every node (or map the host name to the node's real IP)",
    seen=None,
    image={
        "profile": "no-rdma-userspace",
        "reference": "PyTorch 2.0 + torchdata training image",
        "packages": [{"name": "torch", "version": "2.0.0", "db": "pip"}],
    },
    node={
        "name": "node-a",
        "hostname_in_hosts": "loopback",
        "net_interfaces": [
            {"name": "lo", "ipv4": ["127.0.0.1/8"]},
            {"name": "eth0", "operstate": "up", "ipv4": ["10.1.0.5/24"]},
        ],
        "gpu": {"driver_version": "525.85.12", "gpus": gpus("NVIDIA A100-SXM4-40GB", 8, "datacenter")},
    },
    job={"runtime": "bare-metal", "kind": "torchrun", "host_network": True},
    working={"job": {"env": {"GLOO_SOCKET_IFNAME": "eth0"}}, "absent": ["ENV-GLOO-HOSTNAME-LOOPBACK"]},
    assumptions=[
        "hostname_in_hosts 'loopback' models 'your nodes are set to localhost for connection'",
        "torch 2.0.0, the interface addresses, driver and GPUs are illustrative (April 2023)",
    ],
    expect=[{"id": "ENV-GLOO-HOSTNAME-LOOPBACK", "severity": "warning"}],
    mechanism="Gloo binds to the address the host name resolves to; /etc/hosts maps it to loopback, so peers on other "
    "nodes are refused.",
    expect_kind="node x job rule: Gloo without GLOO_SOCKET_IFNAME and a host name that resolves to loopback",
)

case(
    id="pytorch-15592-gloo-connect-127.0.1.1-refused",
    url="https://github.com/pytorch/pytorch/issues/15592",
    cause="Two-node PyTorch 1.0 distributed training: node 1 aborted with gloo::IoException 'connect [127.0.1.1]:3210: "
    "Connection refused' because Gloo used the address the host name resolves to (Debian/Ubuntu's 127.0.1.1 "
    "/etc/hosts entry); setting GLOO_SOCKET_IFNAME to the real interface fixed it.",
    established_by="PyTorch maintainer (teng-li) fix and reporter's confirmation ('It works and thank you')",
    fix="export GLOO_SOCKET_IFNAME=<interface> (or fix /etc/hosts so the host name maps to the routable IP)",
    seen="connect [127.0.1.1]:3210: Connection refused",
    image={
        "profile": "no-rdma-userspace",
        "reference": "pytorch 1.0 conda install",
        "packages": [{"name": "torch", "version": "1.0.0", "db": "conda"}],
    },
    node={
        "name": "node1",
        "hostname_in_hosts": "loopback",
        "net_interfaces": [
            {"name": "lo", "ipv4": ["127.0.0.1/8"]},
            {"name": "enp3s0", "operstate": "up", "ipv4": ["192.168.1.12/24"]},
        ],
        "gpu": {"driver_version": "410.79", "gpus": gpus("GeForce GTX 1080 Ti", 2, "consumer")},
    },
    job={"runtime": "bare-metal", "kind": "python", "host_network": True},
    working={"job": {"env": {"GLOO_SOCKET_IFNAME": "enp3s0"}}, "absent": ["ENV-GLOO-HOSTNAME-LOOPBACK"]},
    assumptions=[
        "hostname_in_hosts 'loopback' models the 127.0.1.1 host-name entry in the error",
        "the interface name/address, driver 410 and two GTX 1080 Ti per node are illustrative (two nodes, 4 GPUs in "
        "total per the issue)",
    ],
    expect=[{"id": "ENV-GLOO-HOSTNAME-LOOPBACK", "severity": "warning"}],
    mechanism="Gloo advertises the host name's 127.0.1.1 address; the other node connects to its own loopback and is "
    "refused.",
    expect_kind="node x job rule: Gloo without GLOO_SOCKET_IFNAME and a host name that resolves to loopback",
)

case(
    id="nccl-1480-p2p-use-cuda-memcpy-set-without-need",
    url="https://github.com/NVIDIA/nccl/issues/1480",
    cause="The user set NCCL_P2P_USE_CUDA_MEMCPY=1 (with NCCL 2.21.5 from NGC pytorch 24.06 on 8x H800) and the "
    "profiled all_reduce_perf run hung; the NCCL maintainer said the hang is expected with that setting, which does "
    "not do what the user thought and should not be set unless really needed.",
    established_by="NCCL maintainer (sjeaugey): 'Which is expected. It's not doing what you think. As most other "
    "environment variables (aside from node configuration), you should not set it unless you really need it.'",
    fix="unset NCCL_P2P_USE_CUDA_MEMCPY",
    seen=None,
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "nvcr.io/nvidia/pytorch:24.06-py3 with NCCL 2.21.5 preloaded",
        "nccl": [{"version": "2.21.5", "origin": "library", "path": "/workspace/nccl2.21.5/build/lib/libnccl.so.2"}],
    },
    node={
        "name": "h800-node",
        "rdma": {"stack": "mlnx_ofed", "devices": mlx5(8, "Ethernet")},
        "gpu": {"driver_version": "535.161.08", "gpus": gpus("NVIDIA H800", 8, "datacenter")},
    },
    job={
        "runtime": "docker",
        "kind": "mpirun",
        "env": {
            "NCCL_P2P_USE_CUDA_MEMCPY": "1",
            "NCCL_IB_GID_INDEX": "3",
            "NCCL_IB_TC": "136",
            "NCCL_IB_SL": "5",
            "NCCL_IB_HCA": "mlx5",
            "NCCL_IB_TIMEOUT": "22",
            "NCCL_IB_QPS_PER_CONNECTION": "8",
            "NCCL_NET_PLUGIN": "none",
            "NCCL_ALGO": "Ring",
            "NCCL_SOCKET_IFNAME": "bond",
        },
    },
    working={"job": {"env": {"NCCL_P2P_USE_CUDA_MEMCPY": "0"}}, "absent": []},
    assumptions=[
        "8 RoCE mlx5 HCAs and driver 535 are illustrative (the thread gives 8x H800, NGC 24.06, NCCL 2.21.5 and the "
        "mpirun environment)",
        "the nsys profiler wrapper of the reporter's command is not modelled",
    ],
    expect=[],
    mechanism="An internal NCCL tuning variable (NCCL_P2P_USE_CUDA_MEMCPY) set without need changes the P2P path and "
    "the run hangs.",
    expect_kind="env rule: NCCL setting that should not be set in production (no rule names this today)",
)

# ================================================================ EFA / libfabric / MPI / UCX
case(
    id="ompi-6795-efa-security-group-missing-egress-self-rule",
    url="https://github.com/open-mpi/ompi/issues/6795",
    cause="Open MPI over EFA (libfabric EFA provider, mtl ofi) could not communicate between instances: the security "
    "group had the ingress rule allowing traffic from itself but not the matching egress rule; EFA needs both.",
    established_by="libfabric/EFA maintainer (rajachan) diagnosis ('you need an explicit rule to allow traffic to "
    "itself ... both an ingress and an egress rule') and reporter's verified fix ('I had the ingress rule set but not "
    "the egress! Adding the SG explicitly definitely resolved connectivity')",
    fix="add a security-group egress rule allowing all traffic to the security group itself (and the ingress rule)",
    seen=None,
    image={
        "profile": "efa-installer",
        "reference": "Open MPI + libfabric (EFA installer) on the instance",
        "efa_installer": {"version": "1.5.0", "path": "/opt/amazon/efa_installed_packages"},
    },
    node={
        "name": "c5n-18xlarge",
        "labels": {"node.kubernetes.io/instance-type": "c5n.18xlarge"},
        "rdma": {"stack": "inbox", "devices": [{"name": "efa_0", "driver": "efa"}]},
    },
    job={"runtime": "bare-metal", "kind": "mpirun"},
    assumptions=[
        "c5n.18xlarge and EFA installer 1.5.0 are illustrative (July 2019, 36 ranks per node per the reporter's "
        "mpirun -N 36)",
        "no GPU facts: the thread is an MPI benchmark; the mechanism applies unchanged to NCCL over aws-ofi-nccl",
        "security groups are not node facts imgcheck reads; the case records the cause for the judge",
    ],
    expect=[],
    must_not=["JOB-RDMA-DEVICES-NOT-EXPOSED", "EFA-NO-OFI-PLUGIN", "JOB-EFA-DEVICE-LIST-ABORT"],
    mechanism="The EFA provider initialises but instances cannot exchange packets: the security group lacks the "
    "self-referencing egress rule EFA requires.",
    expect_kind="cloud network configuration outside image, node and launch spec (no rule can see it today)",
)

case(
    id="awsome-distributed-ai-284-aws-ofi-nccl-efa-1.2-not-found",
    url="https://github.com/awslabs/awsome-distributed-ai/issues/284",
    cause="In a conda environment the NCCL that PyTorch pulled in (nvidia-nccl-cu12 2.19.3) loaded an aws-ofi-nccl "
    "plugin that is not compiled against the system libfabric; loading failed with \"version `EFA_1.2' not found "
    '(required by /opt/amazon/efa/lib/libfabric.so.1)" and NCCL fell back to its internal implementation, slowing '
    "training. Installing aws-ofi-nccl from the AWS conda channel removed the error.",
    established_by="AWS maintainer troubleshooting tip (the issue is the maintainers' own write-up, labelled "
    "'Troubleshooting Tips'), with the verified fix",
    fix="install aws-ofi-nccl built for the system libfabric (AWS conda channel), or use the EFA installer's plugin",
    seen="version `EFA_1.2' not found (required by /opt/amazon/efa/lib/libfabric.so.1) No plugin found "
    "(libnccl-net.so), using internal implementation",
    image={
        "profile": "efa-installer",
        "reference": "conda environment on a DLAMI/ParallelCluster EFA instance",
        "nccl": [
            {
                "version": "2.19.3",
                "origin": "pip",
                "path": "/opt/conda/lib/python3.10/site-packages/nvidia/nccl/lib/libnccl.so.2",
            }
        ],
        "nccl_net_plugins": [{"name": "aws-ofi-nccl", "path": "/opt/conda/lib/libnccl-net.so"}],
    },
    node={
        "name": "p4d-24xlarge",
        "labels": {"node.kubernetes.io/instance-type": "p4d.24xlarge"},
        "rdma": {"stack": "inbox", "devices": [{"name": f"rdmap{i}s27", "driver": "efa"} for i in (16, 32, 144, 160)]},
        "gpu": {"driver_version": "535.104.12", "gpus": gpus("NVIDIA A100-SXM4-40GB", 8, "datacenter")},
    },
    job={"runtime": "slurm", "kind": "srun", "gpus": 8},
    assumptions=[
        "p4d.24xlarge, its EFA device names and driver 535 are illustrative (the tip names no instance)",
        "the plugin path inside the conda environment is illustrative; the tip says the conda-pulled plugin is not "
        "compiled against the system libfabric",
    ],
    expect=[],
    must_not=["EFA-NO-OFI-PLUGIN"],
    mechanism="A conda-installed aws-ofi-nccl/libfabric mix fails to load (symbol version EFA_1.2 missing): NCCL "
    "silently falls back from EFA to its internal transport.",
    expect_kind="image rule: NCCL net plugin (or its libfabric) fails to load on a symbol version of the node's EFA "
    "userspace (no rule names this exact mix today; OFI-PLUGIN-LIBFABRIC-TOO-OLD covers the plugin->libfabric "
    "direction)",
)

case(
    id="ompi-6171-ucx-built-without-thread-multiple",
    url="https://github.com/open-mpi/ompi/issues/6171",
    cause="Open MPI 3.1.2 built against a self-compiled UCX: every rank printed 'UCP worker does not support "
    "MPI_THREAD_MULTIPLE' because the UCX library loaded had been built without multi-thread support.",
    established_by="UCX maintainer (yosefe): 'looks like UCX was compiled without multi-thread support - need to add "
    "--enable-mt to UCX ./configure'; reporter then checked ucx_info -b",
    fix="build UCX with --enable-mt (contrib/configure-release-mt) and make sure Open MPI loads that UCX",
    seen="../../../../../openmpi-3.1.2/ompi/mca/pml/ucx/pml_ucx.c:226 Error: UCP worker does not support "
    "MPI_THREAD_MULTIPLE",
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "Open MPI 3.1.2 + UCX 1.4.0 built from source (ppc64le)",
        "platform": "linux/ppc64le",
        "ucx": {"version": "1.4.0", "origin": "ucx.pc", "path": "/opt/ucx/lib/pkgconfig/ucx.pc"},
    },
    node={"name": "pge328", "arch": "ppc64le", "rdma": {"stack": "mlnx_ofed", "devices": mlx5(2)}},
    job={"runtime": "bare-metal", "kind": "mpirun"},
    assumptions=[
        "UCX 1.4.0 is taken from the reporter's build directory name (build-ucx-1.4.0)",
        "two mlx5 IB HCAs on MLNX_OFED are illustrative (POWER systems with IB)",
    ],
    expect=[],
    must_not=["UCX-NO-IB-TRANSPORT", "UCX-BUILT-FOR-EXP-VERBS"],
    mechanism="UCX built without --enable-mt: Open MPI's UCX PML cannot provide MPI_THREAD_MULTIPLE.",
    expect_kind="image rule: UCX build without multi-thread support for a threaded MPI (no rule names this today)",
)

# ================================================================ library resolution inside the image
case(
    id="stable-diffusion-docker-22-cuda-stub-library-on-loader-path",
    url="https://github.com/fboulnois/stable-diffusion-docker/pull/23",
    cause="In the image (built FROM tensorflow:latest-gpu) the CUDA toolkit's stub libcuda.so under "
    "/usr/local/cuda/lib64/stubs was found before the real driver library the NVIDIA runtime mounts, so CUDA "
    "initialisation failed with 'Error 34: CUDA driver is a stub library'. Removing the stubs directory fixed it.",
    established_by="merged PR by the maintainer ('In certain configurations the CUDA stubs are prioritized over the "
    "real CUDA shared libraries ... Remove the stubs', resolves #22 and #13); #13's reporter verified the same fix",
    fix="do not put /usr/local/cuda/lib64/stubs on the runtime loader path (remove it from ld.so.conf / "
    "LD_LIBRARY_PATH or delete it after the build)",
    seen="Error 34: CUDA driver is a stub library",
    image={
        "profile": "no-rdma-userspace",
        "reference": "fboulnois/stable-diffusion-docker (FROM tensorflow/tensorflow:latest-gpu, Oct 2022)",
        "cuda": {"version": "11.2", "origin": "env CUDA_VERSION"},
        "env": {"LD_LIBRARY_PATH": "/usr/local/cuda/lib64/stubs:/usr/local/cuda/lib64:/usr/local/nvidia/lib64"},
    },
    node={
        "name": "nixos-desktop",
        "gpu": {"driver_version": "515.76", "gpus": gpus("NVIDIA GeForce RTX 3080", 1, "consumer")},
    },
    job={"runtime": "docker", "kind": "docker run", "gpus": -1},
    working={"image": {"env": {"LD_LIBRARY_PATH": "/usr/local/cuda/lib64:/usr/local/nvidia/lib64"}}, "absent": []},
    assumptions=[
        "how the stubs directory reached the loader path is modelled as LD_LIBRARY_PATH; the thread only says the "
        "stubs were prioritised over the real libraries and deleting the directory fixed it",
        "CUDA 11.2, the driver and the GPU are illustrative (NixOS hosts, Docker 20.10)",
    ],
    expect=[],
    must_not=["CUDA-DRIVER-TOO-OLD", "IMAGE-DRIVER-USERSPACE"],
    mechanism="The toolkit's stub libcuda.so is on the image's loader path ahead of the injected driver library: CUDA "
    "init fails with 'CUDA driver is a stub library'.",
    expect_kind="image rule: CUDA stub library reachable by the runtime loader (no rule names this today)",
    sealed_source="issues (merged PR)",
)

case(
    id="nccl-1784-nccl-tests-resolves-system-libnccl-2.23",
    url="https://github.com/NVIDIA/nccl/issues/1784",
    cause="nccl-tests built against a freshly built NCCL 2.27 failed with undefined symbol 'ncclCommWindowRegister' "
    "because at run time the system libnccl.so.2 (2.23.4, in /usr/lib/x86_64-linux-gnu) was resolved instead of the "
    "2.27 build; the NCCL_HOME/library path setting did not take effect.",
    established_by="reporter's verified diagnosis after a maintainer's clarifying question ('it linked to old version "
    "... /usr/lib/x86_64-linux-gnu/libnccl.so.2 -> libnccl.so.2.23.4')",
    fix="point the loader at the intended libnccl (LD_LIBRARY_PATH / rpath) or remove the older system copy",
    seen='undefined symbol: "ncclCommWindowRegister"',
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "DGX container with system NCCL 2.23.4 and a source build of NCCL 2.27 in /workspace",
        "nccl": [
            {"version": "2.23.4", "origin": "library", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.23.4"},
            {"version": "2.27.0", "origin": "library", "path": "/workspace/3rdparty/nccl/build/lib/libnccl.so.2.27.0"},
        ],
    },
    node={
        "name": "dgx-035",
        "gpu": {"driver_version": "570.124.06", "gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")},
    },
    job={"runtime": "docker", "kind": "nccl-tests"},
    assumptions=[
        "the driver and GPUs of 'dgx-035' are illustrative (CUDA 12.8 per the thread)",
        "2.27.0 is the version the thread's file name gives (libnccl.so.2.27.0)",
    ],
    expect=[],
    must_not=["NCCL-WHEELS-TWO-CUDA-MAJORS"],
    mechanism="Two libnccl.so.2 in the image and the older one first on the loader path: a binary built against "
    "the newer NCCL fails with an undefined nccl symbol.",
    expect_kind="image rule: older libnccl resolved before the one the binary needs (NCCL-WHEEL-NOT-TORCH-PIN covers "
    "the torch-wheel form; no rule covers a native binary)",
)

# ================================================================ Kubernetes operator / MOFED
case(
    id="k8s-driver-manager-123-host-mofed-wait-forever",
    url="https://github.com/NVIDIA/k8s-driver-manager/issues/123",
    cause="GPU Operator with driver.rdma.enabled=true and driver.rdma.useHostMofed=true: k8s-driver-manager v0.9.0 "
    "inverted the MOFED readiness check (looked for /run/mellanox/drivers/.driver-ready, which only the containerised "
    "MOFED creates), so its init container looped on 'Waiting for MOFED to be installed' although host MOFED was "
    "loaded.",
    established_by="reporter's code analysis in the issue, confirmed by NVIDIA's GPU Operator release notes ('Fixed a "
    "bug where the k8s-driver-manager would wait indefinitely when MOFED is enabled and USE_HOST_MOFED is set to true "
    "despite the MOFED being pre-installed on the host', NVIDIA/cloud-native-docs PR 355)",
    fix="upgrade the GPU Operator to the release with the fixed k8s-driver-manager (or pin the previous driver "
    "manager)",
    seen="msg=Waiting for MOFED to be installed..",
    image={"profile": "no-rdma-userspace", "reference": "nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.9.0"},
    node={
        "name": "gpu-ib-node",
        "rdma": {"stack": "mlnx_ofed", "ofed_version": "24.10-1.1.4.0", "devices": mlx5(4)},
        "gpu": {"gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")},
        "cluster_components": {"gpu-operator": "v25.10.0"},
    },
    job={"runtime": "kubernetes", "kind": "DaemonSet"},
    assumptions=[
        "the GPU Operator version (v25.10.0, which bumped k8s-driver-manager to v0.9.0) and MLNX_OFED 24.10 are "
        "illustrative; the issue names k8s-driver-manager v0.9.0 and host MOFED",
        "GPU and HCA counts are illustrative",
    ],
    expect=[],
    mechanism="GPU Operator component release bug: the driver manager never sees host MOFED as ready and the driver "
    "daemonset never starts.",
    expect_kind="cluster rule: GPU Operator component release with a known defect for this configuration (no rule "
    "names operator component releases today)",
)

# ================================================================ more launch specs and release defects
case(
    id="enroot-207-nvidia-visible-devices-host-indices-in-allocation",
    url="https://github.com/NVIDIA/enroot/issues/207",
    cause="With GPUs 0,1,4,5 of a node allocated to the job, NVIDIA_VISIBLE_DEVICES was passed to enroot as the host "
    "indices '0,1,4,5'; inside the job's device cgroup only four GPUs exist, so enroot's NVIDIA hook "
    "(nvidia-container-cli) failed with 'device error: 4: unknown device'.",
    established_by="enroot maintainer (3XX0): 'This is a problem with your setup if you're passing invalid/unavailable "
    "GPU ID to enroot. If you're using Enroot with Slurm+Pyxis, this variable should be set to all and handled with GPU "
    "gres'; reporter closed it as not an enroot bug",
    fix="set NVIDIA_VISIBLE_DEVICES=all for enroot under Slurm and let the GPU gres/cgroup restrict the devices",
    seen="nvidia-container-cli: device error: 4: unknown device",
    image={"profile": "no-rdma-userspace", "reference": "enroot container image (not specified)"},
    node={
        "name": "gpu-node",
        "gpu": {"driver_version": "550.90.07", "gpus": gpus("NVIDIA A100-SXM4-80GB", 8, "datacenter")},
    },
    job={"runtime": "slurm", "kind": "srun", "gpus": 4, "env": {"NVIDIA_VISIBLE_DEVICES": "0,1,4,5"}},
    working={"job": {"env": {"NVIDIA_VISIBLE_DEVICES": "all"}}, "absent": []},
    assumptions=[
        "8 A100 GPUs and driver 550 are illustrative; the issue gives only the allocated indices 0,1,4,5",
        "the launch is modelled as srun with the allocation's four GPUs and the host indices exported",
    ],
    expect=[],
    must_not=["JOB-ENROOT-NO-GPU-DRIVER"],
    mechanism="NVIDIA_VISIBLE_DEVICES names host GPU indices that do not exist inside the job's device cgroup: "
    "enroot's NVIDIA hook fails on the unknown device.",
    expect_kind="job rule: NVIDIA_VISIBLE_DEVICES (for enroot/nvidia-container-cli) with indices outside the "
    "allocation (no rule names this today; ENV-CUDA-VISIBLE-DEVICES-ORDINAL covers CUDA_VISIBLE_DEVICES)",
)

case(
    id="cuda-python-2724-ci-container-without-nvidia-visible-devices",
    url="https://github.com/NVIDIA/cuda-python/issues/2724",
    cause="The nightly GPU CI job ran its container on a GPU runner (an L4 attached) without NVIDIA_VISIBLE_DEVICES; "
    "the nvidia-container-runtime prestart hook keys off that variable, so it mounted no driver libraries or tools "
    "and `nvidia-smi` was not found (exit 127). The job had never passed.",
    established_by="maintainers' root-cause analysis in the issue (P1 bug, closed with the workflow fix)",
    fix="set NVIDIA_VISIBLE_DEVICES (e.g. all) for the job container, or request GPUs with --gpus",
    seen="nvidia-smi: command not found",
    image={
        "profile": "no-rdma-userspace",
        "reference": "ubuntu:24.04-based pixi CI container (no NVIDIA env)",
        "env": {},
    },
    node={
        "name": "nv-gpu-general-runner",
        "gpu": {"driver_version": "575.57.08", "gpus": gpus("NVIDIA L4", 1, "datacenter")},
    },
    job={"runtime": "docker", "kind": "GitHub Actions container job", "env": {}},
    working={"job": {"env": {"NVIDIA_VISIBLE_DEVICES": "all"}}, "absent": []},
    assumptions=[
        "the driver version is illustrative; the runner banner shows one GPU UUID (an L4 per the issue)",
        "the job container is modelled as a docker launch without --gpus and without NVIDIA_VISIBLE_DEVICES",
    ],
    expect=[],
    must_not=["NODE-DRIVER-USERSPACE-MISMATCH"],
    mechanism="A container started without NVIDIA_VISIBLE_DEVICES on a GPU runner: the runtime hook injects nothing, "
    "so the container has no driver libraries or nvidia-smi.",
    expect_kind="job rule: GPU container launch without a GPU request (no rule names this today outside enroot)",
)

case(
    id="pytorch-130414-torch-2.3-with-nccl-2.12-invalid-resource-handle",
    url="https://github.com/pytorch/pytorch/issues/130414",
    cause="PyTorch 2.3's change to lazy/single-device communicator setup (PR 119421) breaks with NCCL 2.12.10: a "
    "barrier without torch.cuda.set_device fails with 'Cuda failure invalid resource handle'; NCCL 2.13 works.",
    established_by="reporter's A/B (NCCL 2.12.10 fails, 2.13 works) with a minimal repro; triaged by PyTorch "
    "maintainers as a high-priority regression",
    fix="use NCCL >= 2.13 with PyTorch >= 2.3 (or call torch.cuda.set_device(local_rank) before the first collective)",
    seen="enqueue.cc:336 NCCL WARN Cuda failure 'invalid resource handle'",
    image={
        "profile": "no-rdma-userspace",
        "reference": "PyTorch 2.3 built from source against NCCL 2.12.10",
        "nccl": [{"version": "2.12.10", "origin": "library", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.12.10"}],
        "packages": [{"name": "torch", "version": "2.3.0", "db": "pip"}],
    },
    node={
        "name": "aliyun-2gpu",
        "gpu": {"driver_version": "535.161.08", "gpus": gpus("NVIDIA A100-SXM4-80GB", 2, "datacenter")},
    },
    job={"runtime": "bare-metal", "kind": "torchrun", "ranks_per_node": 2},
    working={
        "image": {
            "nccl": [{"version": "2.13.4", "origin": "library", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.13.4"}]
        },
        "absent": [],
    },
    assumptions=[
        "the GPU model and driver are illustrative; the issue needs at least two GPUs",
        "the torch package entry models the source build of 2.3 (the traceback shows /home/yyc/repo/pytorch)",
        "NCCL 2.13.4 models 'nccl 2.13 works' in the working variant",
    ],
    expect=[],
    mechanism="A framework release that assumes newer NCCL behaviour, run against an old NCCL (2.12): collectives "
    "fail with a CUDA 'invalid resource handle'.",
    expect_kind="image rule: framework needs a newer NCCL than the image provides (no rule names this framework x "
    "NCCL floor for a source build today; NCCL-WHEEL-NOT-TORCH-PIN covers pip wheels)",
)

case(
    id="jax-toolbox-331-nccl-2.17-nvls-intermittent-hangs",
    url="https://github.com/NVIDIA/JAX-Toolbox/pull/331",
    cause="NVLS (NVLink SHARP) had been disabled in the JAX-Toolbox nightly containers because of a known issue in "
    "NCCL 2.17 that caused intermittent hangs on NVSwitch (H100) systems; the issue is resolved in NCCL 2.18, so the "
    "PR re-enabled NVLS.",
    established_by="merged PR by NVIDIA JAX-Toolbox maintainers stating the known NCCL 2.17 issue and its fix in 2.18 "
    "(validated manually before merge)",
    fix="use NCCL >= 2.18 on NVSwitch systems, or set NCCL_NVLS_ENABLE=0 with NCCL 2.17",
    seen=None,
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "ghcr.io/nvidia/jax nightly (2023, NCCL 2.17)",
        "nccl": [{"version": "2.17.1", "origin": "dpkg", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.17.1"}],
    },
    node={
        "name": "h100-hgx",
        "gpu": {"driver_version": "535.54.03", "gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")},
        "fabric": {
            "nvswitch_pci": ["0000:05:00.0", "0000:06:00.0", "0000:07:00.0", "0000:08:00.0"],
            "fm_installed": True,
            "fm_running": True,
            "fm_package": "nvidia-fabricmanager-535",
            "fm_version": "535.54.03",
        },
    },
    job={"runtime": "slurm", "kind": "srun", "gpus": 8},
    working={"image": {"env": {"NCCL_NVLS_ENABLE": "0"}}, "absent": []},
    assumptions=[
        "NCCL 2.17.1 models 'NCCL 2.17'; the H100 HGX node, driver and Fabric Manager 535.54.03 are illustrative",
        "the working variant models the containers' earlier NCCL_NVLS_ENABLE=0 workaround",
    ],
    expect=[{"id": "NCCL-RELEASE-LATER-FIX", "severity": "info"}],
    must_not=["NODE-FABRIC-MANAGER-NOT-RUNNING", "NODE-FABRIC-MANAGER-MISSING"],
    mechanism="NCCL 2.17's NVLS path hangs intermittently on NVSwitch systems; fixed in 2.18.",
    expect_kind="image x node rule: NCCL release older than an NVLS fix that applies to an NVSwitch node",
    sealed_source="issues (merged PR)",
)

# ================================================================ negatives (configurations that work)
case(
    id="azhpc-images-332-ncv5-h100-nvl-no-topo-file-negative",
    url="https://github.com/Azure/azhpc-images/issues/332",
    cause="(negative) The Azure Ubuntu HPC image ships no NCCL topology file for Standard_NC80adis_H100_v5 (NCv5); the "
    "image maintainers say none is needed: NCCL detects the NVLink connectivity itself.",
    established_by="Azure HPC image maintainer (jithinjosepkl): 'we don't need topo file for NCv5. NCCL detects the "
    "NVlink connectivity'",
    fix="(none needed)",
    seen=None,
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "Azure ubuntu-hpc 22.04 image (no NCv5 topology file)",
        "nccl": [{"version": "2.21.5", "origin": "dpkg", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5"}],
    },
    node={
        "name": "nc80adis-h100-v5",
        "labels": {"node.kubernetes.io/instance-type": "Standard_NC80adis_H100_v5"},
        "gpu": {"driver_version": "550.90.07", "gpus": gpus("NVIDIA H100 NVL", 2, "datacenter")},
    },
    job={"runtime": "bare-metal", "kind": "torchrun", "gpus": 2},
    assumptions=[
        "NCCL 2.21.5 and driver 550 are illustrative (mid-2024 image)",
        "two H100 NVL GPUs per VM (NC80adis_H100_v5) as Azure documents the size",
    ],
    expect=[],
    must_not=["NCCL-TOPO-FILE-MISSING", "NCCL-GRAPH-FILE-MISSING"],
    mechanism="(negative) No NCCL topology file is needed on NCv5: NCCL detects the NVLink pair itself.",
    expect_kind="negative: nothing should be reported at error severity",
)

case(
    id="nccl-258-no-p2p-in-container-falls-back-to-shm-negative",
    url="https://github.com/NVIDIA/nccl/issues/258",
    cause="(negative) Under cuda-gdb, nccl-tests on 8 V100-SXM3 GPUs in a container printed cudaDeviceEnablePeerAccess "
    "errors; the run completed, because NCCL falls back to shared memory when P2P is not available.",
    established_by="NCCL maintainer (sjeaugey): 'The warning lines are just warning. NCCL tries to enable P2P access "
    "between GPUs but in your case it seems P2P is not available, hence NCCL will fall back to using shared memory'; "
    "reporter: 'No problem for the time being'",
    fix="(none needed)",
    seen="warning: Cuda API error detected: cudaDeviceEnablePeerAccess returned (0x2c0)",
    image={
        "profile": "no-rdma-userspace",
        "reference": "nccl-tests in a CUDA 10 container (NCCL 2.4)",
        "nccl": [{"version": "2.4.8", "origin": "dpkg", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.4.8"}],
    },
    node={
        "name": "51e6e7896958",
        "gpu": {"driver_version": "418.87.00", "p2p": False, "gpus": gpus("Tesla V100-SXM3-32GB", 8, "datacenter")},
    },
    job={"runtime": "docker", "kind": "docker run", "gpus": -1, "shm_size_mib": 8192, "host_ipc": True},
    assumptions=[
        "NCCL 2.4.8 and driver 418 are illustrative (October 2019)",
        "p2p False models 'P2P is not available' as the maintainer read the log",
        "a large /dev/shm and host IPC are assumed, since the run completed over shared memory",
    ],
    expect=[],
    must_not=["JOB-SHM-TOO-SMALL", "NODE-PCI-ACS-REDIRECT"],
    mechanism="(negative) Without P2P between GPUs NCCL uses shared memory; the CUDA peer-access errors are harmless.",
    expect_kind="negative: nothing should be reported at error severity",
)

case(
    id="aks-rdma-infiniband-30-mpijob-nccl-tests-working-negative",
    url="https://github.com/Azure/aks-rdma-infiniband/issues/30",
    cause="(negative) An MPIJob (kubeflow v2beta1) running nccl-tests all_reduce_perf across two AKS workers on "
    "InfiniBand worked with the posted configuration (mpirun -np 16, NCCL_NET_GDR_LEVEL=PHB).",
    established_by="repository maintainer (surajssd) posting 'here is the config that worked for me'",
    fix="(none needed)",
    seen=None,
    image={"profile": "rdma-core-39-mlx5", "reference": "quay.io/surajd/nccl-tests:2025-04-Apr-02-01-00-00"},
    node={
        "name": "aks-ndv5",
        "labels": {"node.kubernetes.io/instance-type": "Standard_ND96isr_H100_v5"},
        "rdma": {"stack": "mlnx_ofed", "devices": mlx5(8)},
        "gpu": {"driver_version": "550.127.05", "gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")},
    },
    job={
        "runtime": "kubernetes",
        "kind": "MPIJob",
        "gpus": 8,
        "resources": {"nvidia.com/gpu": "8"},
        "env": {"NCCL_NET_GDR_LEVEL": "PHB", "NCCL_DEBUG": "INFO"},
    },
    assumptions=[
        "ND96isr_H100_v5, 8 IB HCAs, MLNX_OFED and driver 550 are illustrative of the repo's AKS InfiniBand nodes",
        "the worker spec is truncated in the thread; its RDMA device resource and security context are not modelled",
        "the NCCL env is the launcher's mpirun -x values",
    ],
    expect=[],
    must_not=["ENV-DISABLES-GDR", "ENV-NCCL-PARAM-UNKNOWN"],
    mechanism="(negative) MPIJob nccl-tests across two AKS InfiniBand workers runs with the posted configuration.",
    expect_kind="negative: nothing should be reported at error severity",
)


# ================================================================ write
def main() -> None:
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids)), ids
    for c in CASES:
        for k in ("id", "url", "cause", "established_by", "mechanism", "image", "node", "assumptions", "expect"):
            assert k in c, (c.get("id"), k)
    doc = {"description": DESCRIPTION, "cases": CASES}
    with open(os.path.join(HERE, "cases.json"), "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")
    print(f"wrote {len(CASES)} cases")


if __name__ == "__main__":
    main()
