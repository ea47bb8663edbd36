"""Build /work/sealed4/cases.json (the fourth sealed incident set) from the case list below.

Each case is in the format of the repo's tests/incidents/cases.json (loaded by tests/incidents/corpus.py), plus
`mechanism`, `expect_kind`, `sealed_source`, `cause`, `established_by`, `fix`, `seen`, `must_not`, `working`,
`assumptions`. Facts are as the thread states them; every fact added is listed in `assumptions`.

Collected 2026-12-07. Every source (owner/repo + issue/PR number) was checked with exclusion-check.sh against
`git -C /work/main grep` (whole tree), /work/shared, /work/sealed, /work/sealed2, /work/sealed3, and bare '#N' in
/work/main/src/imgcheck/data and /work/main/compat_matrix (files/lines naming the upstream); see exclusion-check.txt.
No imgcheck rule was run to choose a case; docs/rules.md was read only to fill `expect` / `must_not` afterwards.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

DESCRIPTION = (
    "SEALED held-out incident set #4 for imgcheck: public threads nobody on the team had read (none of these URLs "
    "or issue numbers appears in the repo, in /work/shared or in /work/sealed, /work/sealed2, /work/sealed3 when "
    "collected). Same case format as tests/incidents/cases.json: image/node/job facts as each thread states them, "
    "`assumptions` lists every fact added, `expect` the rule ids of docs/rules.md that name the established "
    "mechanism today (empty when none does), `must_not` what the thread rules out, `working` the configuration the "
    "thread shows working. Extra fields: `mechanism` (one sentence; '(negative)' marks a configuration that works), "
    "`expect_kind`, `sealed_source`, `cause`, `established_by`, `fix`, `seen` (the line the user saw, or null). "
    "Scored once by score.py after the rules are done."
)

CASES = []


def case(**kw):
    kw.setdefault("sealed_source", "issues")
    kw.setdefault("must_not", [])
    kw.setdefault("working", None)
    kw.setdefault("job", None)
    CASES.append(kw)


def gpus(name, n, cls=None, bus=None):
    out = []
    for i in range(n):
        g = {"index": i, "name": name}
        if cls:
            g["gpu_class"] = cls
        if bus:
            g["pci_bus_id"] = bus[i]
        out.append(g)
    return out


def efa_devs(names):
    return [{"name": n, "driver": "efa"} for n in names]


# ================================================================ driver / CUDA / kernel-module flavour
case(
    id="aws-dlc-6114-cuda13-compat-580.159-on-driver-580.150",
    url="https://github.com/aws/deep-learning-containers/pull/6114",
    cause="The AWS DLC CUDA 13.0.2 PyTorch image carries cuda-compat libcuda.so.580.159.04 while the DLAMI used by "
    "the EFA test had the embargo driver 580.150 (A100-SXM4-40GB). The compat libcuda does not match the kernel "
    "driver, and the EFA NCCL test failed for about two weeks with 'system not yet initialized'.",
    established_by="merged PR by the DLC maintainers; its description states the root cause (host driver 580.150 vs "
    "cuda-compat libcuda.so.580.159.04 on A100) and that it was resolved when the DLAMI team published the "
    "post-embargo AMI.",
    fix="run on a host driver that is not older than the image's cuda-compat libcuda on the same branch (the "
    "post-embargo DLAMI), or keep the compat directory off the loader path when the host driver is new enough",
    seen="system not yet initialized",
    image={
        "profile": "efa-installer",
        "reference": "AWS DLC PyTorch training image, CUDA 13.0.2 (EFA test image)",
        "cuda": {
            "version": "13.0.2",
            "origin": "version.json",
            "path": "/usr/local/cuda/version.json",
            "compat_driver": "580.159.04",
            "compat_path": "/usr/local/cuda/compat/libcuda.so.580.159.04",
            "compat_on_path": True,
            "compat_path_how": "/etc/ld.so.conf.d (image)",
        },
    },
    node={
        "name": "p4d-dlami-embargo",
        "labels": {"node.kubernetes.io/instance-type": "p4d.24xlarge"},
        "gpu": {"driver_version": "580.150", "gpus": gpus("NVIDIA A100-SXM4-40GB", 8, "datacenter")},
    },
    assumptions=[
        "the driver string '580.150' is taken from the PR as written (no third component given)",
        "instance type p4d.24xlarge and 8 GPUs are illustrative (the PR names A100-SXM4-40GB and an EFA test)",
        "how the compat directory reaches the loader path (ld.so.conf in the image) is modelled; the PR only says "
        "the container has libcuda.so.580.159.04 from cuda-compat",
        "image NCCL / aws-ofi-nccl versions are not given and left out",
    ],
    expect=[],
    mechanism="A cuda-compat libcuda newer than the kernel driver of the same 580 branch is loaded; CUDA init "
    "fails with 'system not yet initialized' instead of using the host driver's libcuda.",
    expect_kind="image/node rule: compat libcuda newer than the node driver on the same branch (no rule names this "
    "today; CUDA-COMPAT-OLDER-THAN-DRIVER-ON-PATH covers the older-compat direction)",
    must_not=["CUDA-DRIVER-TOO-OLD", "CUDA-FORWARD-COMPAT-UNSUPPORTED-GPU"],
    sealed_source="issues (merged PR)",
)

case(
    id="parallelcluster-6014-open-kernel-modules-on-p3-v100",
    url="https://github.com/aws/aws-parallelcluster/issues/6014",
    cause="ParallelCluster 3.8.0 official AMIs install the open-source NVIDIA kernel modules (OpenRM) with EFA "
    "1.29.0; OpenRM only supports Turing and later GPUs, so P3/P2/G3/G2 instances (V100, K80, M60) cannot use "
    "the GPUs with those AMIs.",
    established_by="maintainer-published Known Issue in aws-parallelcluster (label 'Known Issue', by the "
    "ParallelCluster team)",
    fix="use an AMI/driver with the proprietary kernel modules on pre-Turing GPUs (or a ParallelCluster version / "
    "custom AMI that keeps the proprietary flavour)",
    seen=None,
    image={"profile": "no-rdma-userspace", "reference": "user workload image (not specified)"},
    node={
        "name": "p3-16xlarge",
        "labels": {"node.kubernetes.io/instance-type": "p3.16xlarge"},
        "gpu": {
            "driver_version": "535.104.12",
            "kernel_module": "open",
            "gpus": gpus("Tesla V100-SXM2-16GB", 8, "datacenter"),
        },
    },
    working={"node": {"gpu": {"kernel_module": "proprietary"}}, "absent": []},
    assumptions=[
        "driver version illustrative (the issue names the OSS driver shipped with ParallelCluster 3.8.0, not its "
        "version)",
        "p3.16xlarge with 8x V100-SXM2-16GB is illustrative of the P3 family named in the issue",
        "the workload image is not part of the issue",
    ],
    expect=[],
    mechanism="The open NVIDIA kernel modules do not drive pre-Turing GPUs (V100/K80/M60); a node image that "
    "loads the open flavour on P3/P2/G3 leaves the GPUs unusable.",
    expect_kind="node rule: kernel-module flavour vs GPU generation (no rule names it today)",
)

case(
    id="parallelcluster-6015-proprietary-driver-new-kernel-efa-gdr",
    url="https://github.com/aws/aws-parallelcluster/issues/6015",
    cause="A Linux kernel change (propagated to recent Amazon Linux kernels) is incompatible with EFA plus the "
    "proprietary NVIDIA driver: with GPUDirect RDMA (P4/P5) the EFA kernel module can no longer retrieve GPU "
    "memory information, and EFA communication between nodes stops working on ParallelCluster 3.0.0-3.7.2 AMIs "
    "after a kernel update. NVIDIA's open kernel modules (OpenRM) and EFA 1.29.0 are compatible with the change.",
    established_by="maintainer-published Known Issue in aws-parallelcluster (ParallelCluster team), with the fix "
    "shipped in 3.8.0 (OSS NVIDIA driver + EFA 1.29.0)",
    fix="do not update the kernel on ParallelCluster <= 3.7.2 AMIs, or move to the open kernel modules + EFA "
    "installer >= 1.29.0 (ParallelCluster 3.8.0)",
    seen=None,
    image={
        "profile": "efa-installer",
        "reference": "workload image using EFA (aws-ofi-nccl)",
        "efa_installer": {"version": "1.28.0", "path": "/opt/amazon/efa_installed_packages"},
    },
    node={
        "name": "p4d-alinux2",
        "labels": {"node.kubernetes.io/instance-type": "p4d.24xlarge"},
        "kernel": {"release": "5.10.205-195.804.amzn2.x86_64"},
        "rdma": {"stack": "inbox", "devices": efa_devs(["rdmap16s27", "rdmap32s27", "rdmap144s27", "rdmap160s27"])},
        "gpu": {
            "driver_version": "535.104.12",
            "kernel_module": "proprietary",
            "gpus": gpus("NVIDIA A100-SXM4-40GB", 8, "datacenter"),
        },
    },
    working={
        "node": {"gpu": {"kernel_module": "open"}},
        "image": {"efa_installer": {"version": "1.29.0"}},
        "absent": [],
    },
    assumptions=[
        "kernel release string illustrative (the issue links the upstream kernel commit and says recent Amazon "
        "Linux releases carry it)",
        "driver version, EFA installer 1.28.0 and the EFA device names are illustrative (the issue says EFA "
        "1.29.0 is the first compatible release)",
        "p4d.24xlarge chosen from the P4/P5 families the issue names",
    ],
    expect=[],
    mechanism="After a kernel change, the EFA driver's GPUDirect RDMA path cannot obtain GPU memory with the "
    "proprietary NVIDIA kernel modules; EFA needs the open kernel modules and EFA >= 1.29.0.",
    expect_kind="node rule: kernel x NVIDIA module flavour x EFA driver version for GDR (no rule names it today)",
)

case(
    id="illinois-scicomp-70-module-520-userspace-525",
    url="https://github.com/illinois-scicomp/machine-shop-maintenance/issues/70",
    cause="After an update the loaded NVIDIA kernel module was 520.56.06 while the installed userspace "
    "(nvidia-smi package) was 525.85.12; nvidia-smi failed with 'Driver/library version mismatch' (a reboot alone "
    "did not help because the apt state was broken).",
    established_by="reporter's diagnosis in the thread (/proc/driver/nvidia/version 520.56.06 vs dpkg nvidia-smi "
    "525.85.12) and verified fix (fixed apt sources, 'apt install --fix-broken'; nvidia-smi works)",
    fix="make the kernel module and the userspace driver packages the same version (repair the package state, "
    "reload the modules / reboot)",
    seen="Failed to initialize NVML: Driver/library version mismatch",
    image={"profile": "no-rdma-userspace", "reference": "bare-metal workstation jobs (no container)"},
    node={"name": "bock", "gpu": {"driver_version": "520.56.06", "userspace_driver_version": "525.85.12"}},
    working={
        "node": {"gpu": {"driver_version": "525.85.12", "userspace_driver_version": "525.85.12"}},
        "absent": ["NODE-DRIVER-USERSPACE-MISMATCH"],
    },
    assumptions=[
        "the working variant assumes module and userspace ended at 525.85.12 (the thread says nvidia-smi works "
        "after the apt repair, not which version)",
        "GPU models are not given",
    ],
    expect=[{"id": "NODE-DRIVER-USERSPACE-MISMATCH", "severity": "error"}],
    mechanism="The loaded NVIDIA kernel module and the installed userspace libraries (NVML) are different driver "
    "versions, so every NVML/CUDA caller fails with 'Driver/library version mismatch'.",
    expect_kind="node rule: loaded module vs userspace driver version",
    must_not=["CUDA-DRIVER-TOO-OLD"],
)

case(
    id="xgboost-11242-nccl-p2p-hang-driver-560",
    url="https://github.com/dmlc/xgboost/issues/11242",
    cause="NCCL collectives with P2P enabled could hang with the 560 GPU driver; the maintainer reproduced it with "
    "560 and found it fixed with 570. NCCL_P2P_DISABLE=1 is the workaround.",
    established_by="xgboost maintainer (trivialfis) in the issue: A/B on drivers ('I have run tests with 570, and "
    "the issue is fixed there. The hang might be reproduced with 560.'); workaround NCCL_P2P_DISABLE=1",
    fix="update the GPU driver (570 fixed it); workaround NCCL_P2P_DISABLE=1",
    seen=None,
    image={
        "profile": "no-rdma-userspace",
        "reference": "xgboost GPU (multi-GPU, NCCL) environment",
        "nccl": [
            {
                "version": None,
                "origin": "pip",
                "path": "/usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2",
            }
        ],
    },
    node={
        "name": "multi-gpu-560",
        "gpu": {"driver_version": "560.35.03", "gpus": gpus("NVIDIA RTX A6000", 2, "workstation")},
    },
    job={"runtime": "bare-metal", "kind": "python"},
    working={"node": {"gpu": {"driver_version": "570.86.15"}}, "absent": []},
    assumptions=[
        "driver 560.35.03 / 570.86.15 and the GPU model are illustrative (the issue names only the 560 and 570 "
        "branches and multi-GPU NCCL with P2P)",
        "the NCCL version is not given",
    ],
    expect=[],
    mechanism="A GPU driver defect (560 branch) makes NCCL P2P transfers hang; a newer driver (570) fixes it and "
    "disabling P2P avoids it.",
    expect_kind="node rule: driver branch with a known P2P hang (no catalog entry names it today)",
    must_not=["NODE-PCI-ACS-REDIRECT"],
)

# ================================================================ PCIe / IOMMU
case(
    id="nccl-tests-115-amd-iommu-multi-gpu-hang",
    url="https://github.com/NVIDIA/nccl-tests/issues/115",
    cause="On an AMD CPU server, multi-GPU nccl-tests hang: GPU Direct P2P does not work through the CPU with the "
    "IOMMU in translated mode. Setting amd_iommu=off on the kernel command line fixed the hang.",
    established_by="NCCL maintainer (sjeaugey) diagnosis in the thread (GPU Direct not functional through the CPU, "
    "disable iommu / iommu=pt) and the reporter's verified fix ('setting amd_iommu=off helps address the "
    "communication problem')",
    fix="boot with amd_iommu=off or iommu=pt (IOMMU passthrough)",
    seen=None,
    image={
        "profile": "no-rdma-userspace",
        "reference": "nccl-tests build on the host",
        "nccl": [{"version": None, "origin": "library", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2"}],
    },
    node={
        "name": "amd-8gpu",
        "kernel": {"cmdline": "", "cmdline_params": {}},
        "iommu_domains": {"0000:01:00.0": "DMA", "0000:41:00.0": "DMA", "0000:81:00.0": "DMA", "0000:c1:00.0": "DMA"},
        "gpu": {
            "gpus": gpus(
                "NVIDIA A100-PCIE-40GB",
                4,
                "datacenter",
                ["0000:01:00.0", "0000:41:00.0", "0000:81:00.0", "0000:c1:00.0"],
            )
        },
    },
    job={"runtime": "bare-metal", "kind": "nccl-tests"},
    working={
        "node": {"kernel": {"cmdline": "amd_iommu=off", "cmdline_params": {"amd_iommu": "off"}}, "iommu_domains": {}},
        "absent": ["NODE-IOMMU-TRANSLATED"],
    },
    assumptions=[
        "GPU model, count and bus ids are illustrative (the thread is about a multi-GPU AMD server)",
        "iommu domain type 'DMA' (translated) for the GPUs models 'IOMMU enabled by default on AMD'; the thread "
        "does not print /sys/kernel/iommu_groups",
    ],
    expect=[{"id": "NODE-IOMMU-TRANSLATED", "severity": "warning"}],
    mechanism="With the AMD IOMMU in translated (DMA) mode, GPU peer-to-peer traffic through the CPU root complex "
    "fails and NCCL hangs; IOMMU off or passthrough restores it.",
    expect_kind="node rule: IOMMU translated mode for GPU P2P",
)

# ================================================================ RDMA in containers / launch specs
case(
    id="mscclpp-335-docker-infiniband-without-ipc-lock",
    url="https://github.com/microsoft/mscclpp/issues/335",
    cause="A non-privileged docker container got the InfiniBand devices with --device (/dev/infiniband) but not "
    "the IPC_LOCK capability; UCX (ucx_info -d) failed with 'ibv_create_cq(cqe=4096) failed: Cannot allocate "
    "memory'. Adding --cap-add=IPC_LOCK fixed it.",
    established_by="commenter's verified fix in the thread (TZHelloWorld: 'To resolve this issue, it is necessary "
    "to add the --cap-add=IPC_LOCK option when creating the container')",
    fix="docker run --cap-add=IPC_LOCK (and --ulimit memlock=-1) with the /dev/infiniband devices",
    seen="UCX ERROR ibv_create_cq(cqe=4096) failed: Cannot allocate memory",
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "ghcr.io/microsoft/mscclpp/mscclpp:base-cuda12.2",
        "cuda": {"version": "12.2.2", "origin": "version.json", "path": "/usr/local/cuda/version.json"},
    },
    node={
        "name": "ib-host",
        "rdma": {
            "stack": "mlnx_ofed",
            "devices": [{"name": "mlx5_0", "driver": "mlx5_core", "link_layer": "InfiniBand"}],
        },
    },
    job={
        "runtime": "docker",
        "kind": "docker run",
        "privileged": False,
        "devices": ["/dev/infiniband"],
        "cap_add": [],
        "memlock_kib": None,
    },
    working={"job": {"cap_add": ["IPC_LOCK"]}, "absent": ["JOB-NO-IPC-LOCK"]},
    assumptions=[
        "the image tag is from the same thread (the maintainer's CI image); the commenter's own image is not named",
        "rdma-core 39 + mlx5 provider profile and CUDA 12.2.2 are modelled, not stated",
        "the container's memlock limit is not stated (left unknown)",
    ],
    expect=[{"id": "JOB-NO-IPC-LOCK", "severity": "warning"}],
    mechanism="Without CAP_IPC_LOCK (and without a raised memlock limit) the container cannot pin memory for the "
    "verbs completion queue; ibv_create_cq fails with ENOMEM although the devices are present.",
    expect_kind="job rule: RDMA devices passed without IPC_LOCK / memlock",
    must_not=["JOB-RDMA-DEVICES-NOT-EXPOSED", "RDMA-NO-LIBIBVERBS"],
)

case(
    id="aws-do-eks-56-efa-device-plugin-allowlist-p5en",
    url="https://github.com/aws-samples/aws-do-eks/pull/56",
    cause="The vendored aws-efa-k8s-device-plugin DaemonSet had a static instance-type nodeAffinity allowlist "
    "ending at p5.48xlarge; on p5en.48xlarge / p6-b200.48xlarge it never scheduled, so no "
    "/dev/infiniband/uverbs* (or /dev/gdrdrv) was injected into pods: ibv_open_device failed (ENOENT), "
    "fi_info -p efa returned -61, and NCCL fell back to NET/Socket until cross-node collectives died.",
    established_by="merged PR with live evidence from a p6-b200 cluster (DaemonSet DESIRED=0; adding the instance "
    "types to the allowlist fixes it)",
    fix="let the EFA device plugin run on the node type (fix the allowlist) and request vpc.amazonaws.com/efa in "
    "the pod",
    seen="fi_info -p efa = -61 (No data available)",
    image={
        "profile": "efa-installer",
        "reference": "EFA-enabled training image (aws-ofi-nccl)",
        "nccl_net_plugins": [{"name": "aws-ofi-nccl", "path": "/opt/amazon/ofi-nccl/lib/libnccl-net.so"}],
    },
    node={
        "name": "p5en-48xlarge",
        "labels": {"node.kubernetes.io/instance-type": "p5en.48xlarge"},
        "rdma": {"stack": "inbox", "devices": efa_devs([f"rdmap{n}s0" for n in (79, 80, 81, 82, 96, 97, 98, 99)])},
        "gpu": {"gpus": gpus("NVIDIA H200", 8, "datacenter")},
    },
    job={"runtime": "kubernetes", "kind": "Pod", "devices": [], "resources": {"nvidia.com/gpu": "8"}, "gpus": 8},
    working={
        "job": {"resources": {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "16"}, "devices": ["/dev/infiniband"]},
        "absent": ["JOB-RDMA-DEVICES-NOT-EXPOSED"],
    },
    assumptions=[
        "p5en.48xlarge chosen from the instance types the PR names; EFA device names and count (8 listed, 16 "
        "requested in the working variant) are illustrative",
        "the pod spec is modelled without EFA resources because the plugin never advertised them; the PR does "
        "not show the pod spec",
        "the working variant models the device plugin's injection of /dev/infiniband/uverbs* as devices",
    ],
    expect=[{"id": "JOB-RDMA-DEVICES-NOT-EXPOSED", "severity": "warning"}],
    mechanism="No EFA device plugin on the node type means the pod gets no uverbs device nodes; libfabric finds "
    "no EFA provider and NCCL silently falls back to TCP sockets.",
    expect_kind="job rule: RDMA/EFA devices not exposed to the pod",
    must_not=["EFA-NO-OFI-PLUGIN", "OFI-PLUGIN-LIBFABRIC-TOO-OLD"],
    sealed_source="issues (merged PR)",
)

case(
    id="trtllm-12370-pyxis-shared-container-ignores-export",
    url="https://github.com/NVIDIA/TensorRT-LLM/pull/12370",
    cause="In shared pyxis containers (srun --container-name reused across steps) srun --export cannot reliably "
    "pass comma-separated values such as CUDA_VISIBLE_DEVICES=0,1: the shared container keeps the environment of "
    "its first creation, so every disaggregated-serving worker saw all GPUs (0,1,2,3) and multiple servers on a "
    "node ran out of GPU memory at model load.",
    established_by="merged PR (TensorRT-LLM maintainers) with the diagnosis in the description and a test plan "
    "verifying each worker sees only its GPUs after passing CUDA_VISIBLE_DEVICES as a script argument",
    fix="pass CUDA_VISIBLE_DEVICES as an argument and export it inside the container script instead of srun --export",
    seen=None,
    image={"profile": "rdma-core-39-mlx5", "reference": "TensorRT-LLM release container (disagg benchmark)"},
    node={"name": "gb200-node", "gpu": {"gpus": gpus("NVIDIA GB200", 4, "datacenter")}},
    job={"runtime": "slurm", "kind": "srun", "env": {"CUDA_VISIBLE_DEVICES": "0,1"}},
    assumptions=[
        "GPU model and count are illustrative (the PR example lists devices 0,1,2,3)",
        "imgcheck's job facts have no field for 'shared pyxis container reused across srun steps'; the job is "
        "modelled as srun with the intended CUDA_VISIBLE_DEVICES",
    ],
    expect=[],
    mechanism="A reused (named) pyxis container keeps its creation-time environment, so per-step srun --export "
    "values (CUDA_VISIBLE_DEVICES) are ignored and co-located workers all see every GPU.",
    expect_kind="job rule: pyxis named-container reuse vs srun --export (no rule names it today)",
    sealed_source="issues (merged PR)",
)

case(
    id="nccl-324-one-gpu-per-container-no-nvlink",
    url="https://github.com/NVIDIA/nccl/issues/324",
    cause="Two containers on one node, each seeing only its own GPU (docker run --gpus device=N), cannot use CUDA "
    "IPC to each other's GPU, so NCCL cannot use NVLink/P2P between them and falls back to a slower path; "
    "injecting a full topology does not help because the CUDA IPC mapping itself fails.",
    established_by="NCCL maintainer (sjeaugey) in the thread: with one GPU visible per container 'we cannot use "
    "CUDA IPCs since we don't see the other GPU, and therefore we cannot use NVLink'; with all GPUs visible in each "
    "container it works at full performance (verified with NCCL 2.6)",
    fix="make all GPUs of the node visible in each container (and share the IPC namespace), or run the ranks in "
    "one container",
    seen=None,
    image={
        "profile": "no-rdma-userspace",
        "reference": "pytorch/pytorch:1.3-cuda10.1-cudnn7-runtime",
        "nccl": [{"version": "2.6.4", "origin": "library", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.6.4"}],
        "cuda": {"version": "10.1.243", "origin": "version.json", "path": "/usr/local/cuda/version.txt"},
    },
    node={"name": "nvlink-2gpu", "gpu": {"gpus": gpus("Tesla V100-SXM2-32GB", 2, "datacenter")}},
    job={
        "runtime": "docker",
        "kind": "docker run",
        "gpus": 1,
        "host_network": True,
        "env": {"NVIDIA_VISIBLE_DEVICES": "0"},
    },
    assumptions=[
        "NCCL 2.6.4 is the release discussed in the thread (the crash with 2.6.4 is a separate bug, #326)",
        "GPU model V100-SXM2 is illustrative of 'two GPUs connected with NVLink'",
        "one of the two containers is modelled (the other has NVIDIA_VISIBLE_DEVICES=1)",
    ],
    expect=[],
    mechanism="NVLink/P2P between ranks in different containers needs each container to see the peer GPU (CUDA "
    "IPC); with one GPU per container NCCL falls back to SHM/network.",
    expect_kind="job rule: per-container GPU isolation prevents intra-node P2P (no rule names it today)",
    must_not=["JOB-RANKS-EXCEED-GPUS"],
)

case(
    id="nccl-324-all-gpus-visible-shared-ipc-negative",
    url="https://github.com/NVIDIA/nccl/issues/324",
    cause="(negative) Two containers on the same node that both see all GPUs and share the host IPC/PID/network "
    "namespaces can use P2P over NVLink between their ranks; the maintainer verified full performance with NCCL "
    "2.6.",
    established_by="NCCL maintainer (sjeaugey) in the thread: 'All GPUs are visible in each container, i.e. docker "
    "run --gpus=all ... I could verify this works, at least with NCCL 2.6, with full performance.'",
    fix="(none needed)",
    seen=None,
    image={
        "profile": "no-rdma-userspace",
        "reference": "pytorch/pytorch:1.3-cuda10.1-cudnn7-runtime",
        "nccl": [{"version": "2.6.4", "origin": "library", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.6.4"}],
        "cuda": {"version": "10.1.243", "origin": "version.json", "path": "/usr/local/cuda/version.txt"},
    },
    node={
        "name": "nvlink-2gpu",
        "gpu": {"driver_version": "440.33.01", "gpus": gpus("Tesla V100-SXM2-32GB", 2, "datacenter")},
    },
    job={
        "runtime": "docker",
        "kind": "docker run",
        "gpus": -1,
        "host_network": True,
        "host_ipc": True,
        "env": {"NVIDIA_VISIBLE_DEVICES": "0,1"},
    },
    assumptions=[
        "driver 440.33.01 and the GPU model are illustrative (CUDA 10.1 era)",
        "NCCL 2.6.4 modelled for 'NCCL 2.6'",
    ],
    expect=[],
    mechanism="(negative) All GPUs visible in each container plus a shared IPC namespace: NCCL uses P2P/NVLink "
    "across the two containers.",
    expect_kind="negative: nothing should be reported at error severity",
    must_not=["JOB-RANKS-EXCEED-GPUS", "NODE-PCI-ACS-REDIRECT"],
)

# ================================================================ NCCL wheels / releases
case(
    id="codejudge-2-cu11-and-cu12-nvidia-wheels",
    url="https://github.com/VichyTong/CodeJudge/issues/2",
    cause="The conda environment built from the project's requirements had both cu11 and cu12 NVIDIA packages "
    "(including two NCCL wheels) next to a CUDA 12 torch; importing torch failed with 'undefined symbol "
    "ncclCommRegister'. Removing the cu11 packages and reinstalling fixed it.",
    established_by="reporter's verified fix in the thread ('i found cu11 and cu12 related packages ... remove the "
    "cu11 related package, then reinstall the conda environment. Finally, succeed.')",
    fix="keep one CUDA major's nvidia-* wheels (remove the cu11 ones)",
    seen="undefined symbol: ncclCommRegister",
    image={
        "profile": "no-rdma-userspace",
        "reference": "conda env from CodeJudge requirements.txt",
        "nccl": [
            {
                "version": "2.14.3",
                "origin": "pip",
                "path": "/opt/conda/lib/python3.10/site-packages/nvidia_nccl_cu11-2.14.3.dist-info/METADATA",
            },
            {
                "version": "2.20.5",
                "origin": "pip",
                "path": "/opt/conda/lib/python3.10/site-packages/nvidia_nccl_cu12-2.20.5.dist-info/METADATA",
            },
        ],
        "packages": [
            {"name": "nvidia-nccl-cu11", "version": "2.14.3", "db": "pip"},
            {"name": "nvidia-nccl-cu12", "version": "2.20.5", "db": "pip"},
            {"name": "torch", "version": "2.3.0", "db": "pip"},
        ],
    },
    node={"name": "cuda-12.2-host", "gpu": {"driver_version": "535.104.05"}},
    working={
        "image": {
            "nccl": [
                {
                    "version": "2.20.5",
                    "origin": "pip",
                    "path": "/opt/conda/lib/python3.10/site-packages/nvidia_nccl_cu12-2.20.5.dist-info/METADATA",
                }
            ],
            "packages": [
                {"name": "nvidia-nccl-cu12", "version": "2.20.5", "db": "pip"},
                {"name": "torch", "version": "2.3.0", "db": "pip"},
            ],
        },
        "absent": ["@nccl-wheels-two-cuda-majors"],
    },
    assumptions=[
        "NCCL wheel versions (cu11 2.14.3, cu12 2.20.5) and torch 2.3.0 are illustrative; the thread says only "
        "that cu11 and cu12 packages were installed and CUDA is 12.2",
        "driver 535.104.05 illustrative for 'CUDA version 12.2'",
    ],
    expect=[{"id": "@nccl-wheels-two-cuda-majors", "severity": "warning"}],
    mechanism="Two nvidia-nccl wheels of different CUDA majors share site-packages/nvidia/nccl; the older "
    "libnccl.so.2 wins and torch's newer NCCL symbols are undefined.",
    expect_kind="image rule: NCCL wheels for two CUDA majors",
)

case(
    id="pytorch-149153-nccl-2.25.1-commabort-hang",
    url="https://github.com/pytorch/pytorch/issues/149153",
    cause="ncclCommAbort hangs with NCCL 2.25.1-1 under PyTorch nightly (ProcessGroupNCCL::abort waits forever); "
    "fixed in NCCL 2.26.2-1, to which PyTorch then upgraded.",
    established_by="issue by a PyTorch maintainer (d4l3k) with repro and stacks, stating it is fixed with NCCL "
    "2.26.2-1; PyTorch PR #149351 'nccl: upgrade to 2.26.2 to avoid hang on ncclCommAbort' (and cherry-pick "
    "#149546, merged)",
    fix="use NCCL >= 2.26.2",
    seen="libtorch_cuda.so`c10d::ProcessGroupNCCL::abort() + 664",
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "PyTorch nightly (March 2025) pip install",
        "nccl": [
            {
                "version": "2.25.1",
                "origin": "pip",
                "path": "/usr/local/lib/python3.12/dist-packages/nvidia_nccl_cu12-2.25.1.dist-info/METADATA",
            }
        ],
        "packages": [{"name": "nvidia-nccl-cu12", "version": "2.25.1", "db": "pip"}],
    },
    node={
        "name": "h100-node",
        "gpu": {"driver_version": "570.86.15", "gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")},
    },
    assumptions=[
        "node driver and GPUs illustrative (the issue's repro is in a gist not stored here)",
        "the NCCL wheel path is modelled (pip nvidia-nccl-cu12 as torch nightly installs it)",
    ],
    expect=[{"id": "NCCL-RELEASE-LATER-FIX", "severity": "info"}],
    mechanism="An NCCL release defect (2.25.1): ncclCommAbort does not return while operations are in flight; a "
    "later release (2.26.2) fixes it.",
    expect_kind="image rule: NCCL release with a later fix",
)

# ================================================================ round-2 additions (NVLS, MIG, bootstrap)
case(
    id="nccl-2077-nvls-multicast-slots-2.29.7-h200",
    url="https://github.com/NVIDIA/nccl/issues/2077",
    cause="NCCL 2.29.7 creates NVLS multicast objects for many sub-communicators (e.g. FSDP 2-rank "
    "sub-communicators) until the NVSwitch's 128 multicast slots are exhausted, then fails with a fatal "
    "ncclUnhandledCudaError ('Failed to bind NVLink SHARP (NVLS) Multicast memory ... CUDA error 2 out of memory') "
    "instead of falling back to non-NVLS transport; NCCL 2.28.9 handled the same job gracefully.",
    established_by="reporter's root-cause analysis from the Fabric Manager logs (FM running, State Completed) and "
    "A/B between NCCL 2.28.9 (works) and 2.29.7 (fails) on the same 8x H200 node; NCCL_NVLS_ENABLE=0 avoids it",
    fix="NCCL_NVLS_ENABLE=0, or an NCCL release that falls back when multicast slots run out (2.28.9 did)",
    seen="Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 2 'out of memory'.",
    image={
        "profile": "no-rdma-userspace",
        "reference": "PyTorch upstream main (commit 5bfd4be) with NCCL 2.29.7",
        "cuda": {"version": "13.0", "origin": "version.json", "path": "/usr/local/cuda/version.json"},
        "nccl": [
            {
                "version": "2.29.7",
                "origin": "pip",
                "path": "/usr/local/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2",
            }
        ],
    },
    node={
        "name": "h200-nvswitch",
        "os": {"id": "rhel", "version_id": "10"},
        "kernel": {"release": "6.12.0"},
        "gpu": {"driver_version": "580.65.06", "gpus": gpus("NVIDIA H200", 8, "datacenter")},
    },
    job={"runtime": "bare-metal", "kind": "torchrun", "gpus": 8},
    working={
        "image": {
            "nccl": [
                {
                    "version": "2.28.9",
                    "origin": "pip",
                    "path": "/usr/local/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2",
                }
            ]
        },
        "absent": [],
    },
    assumptions=[
        "the NCCL library path and pip origin are modelled (the issue says NCCL 2.29.7+cuda12.8 with upstream "
        "PyTorch main)",
        "kernel release '6.12.0' and OS as the issue writes them; the GPU name string is modelled",
        "the job is modelled as torchrun on the bare node with 8 GPUs (FSDP)",
    ],
    expect=[],
    mechanism="NVLS multicast objects per sub-communicator exhaust the NVSwitch's 128 multicast slots; NCCL 2.29.7 "
    "then fails hard instead of falling back.",
    expect_kind="image/node rule: NCCL release x NVSwitch multicast capacity (no rule names it today)",
    must_not=["CUDA-DRIVER-TOO-OLD"],
)

case(
    id="pytorch-130181-two-mig-instances-one-process",
    url="https://github.com/pytorch/pytorch/issues/130181",
    cause="The user tried distributed training on two MIG instances (A100-SXM4-80GB MIG 3g.40gb) from one job; CUDA "
    "(11/R450 and 12/R525) enumerates only a single MIG instance per process, so the second device index does not "
    "exist ('device >= 0 && device < num_gpus INTERNAL ASSERT FAILED').",
    established_by="PyTorch CUDA maintainer (ptrblck) quoting the MIG user guide ('a single CUDA process can only "
    "enumerate a single MIG device'); the reporter confirmed it works once CUDA_VISIBLE_DEVICES names one MIG slice",
    fix="one MIG instance per process (CUDA_VISIBLE_DEVICES=MIG-<uuid>); multi-MIG data parallel in one process is "
    "not possible",
    seen="device >= 0 && device < num_gpus INTERNAL ASSERT FAILED",
    image={
        "profile": "no-rdma-userspace",
        "reference": "torch 2.5.0.dev20240705+cu121 (pip)",
        "cuda": {"version": "12.1", "origin": "pip"},
    },
    node={
        "name": "a100-mig",
        "gpu": {"driver_version": "550.54.15", "gpus": gpus("NVIDIA A100-SXM4-80GB", 2, "datacenter")},
    },
    job={
        "runtime": "bare-metal",
        "kind": "python",
        "env": {
            "CUDA_VISIBLE_DEVICES": "MIG-89c850dc-38e3-57df-85c7-690c186b68e9,MIG-f2b5fbbd-850e-51bb-8ffa-ac9fb48126da"
        },
    },
    working={"job": {"env": {"CUDA_VISIBLE_DEVICES": "MIG-89c850dc-38e3-57df-85c7-690c186b68e9"}}, "absent": []},
    assumptions=[
        "driver version is illustrative (not in the stored excerpt)",
        "imgcheck's node facts have no MIG field: the two GPUs stand for the two MIG 3g.40gb instances the title names",
        "the MIG UUIDs are taken from a PyTorch maintainer's example in pytorch/pytorch#92315, not from this issue",
        "the exact launch (torchrun vs. one process) is not in the excerpt; one process seeing both instances is "
        "modelled",
    ],
    expect=[],
    mechanism="CUDA enumerates one MIG instance per process, so code that expects two devices (data parallel over "
    "two MIG slices) fails on the second device index.",
    expect_kind="node/job rule: several MIG instances visible to one CUDA process (no rule names it today)",
    must_not=["CUDA-DRIVER-TOO-OLD"],
)

case(
    id="nccl-1612-bootstrap-foreign-connection-before-magic",
    url="https://github.com/NVIDIA/nccl/issues/1612",
    cause="NCCL's bootstrap listener ignores foreign connections that send a wrong magic, but a foreign connection "
    "(e.g. a security scan) that closes before sending the 8-byte magic made accept fail, aborting communicator "
    "init; fixed in NCCL 2.27.3.",
    established_by="reporter's code analysis with log; NCCL maintainer (stephenmsachs): resolved in v2.27.3-1",
    fix="NCCL >= 2.27.3",
    seen="NCCL WARN socketProgress: Connection closed by remote peer 10.10.1.3<36138>",
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "training image with NCCL 2.25.1",
        "nccl": [{"version": "2.25.1", "origin": "library", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2"}],
    },
    node={
        "name": "gpu-node",
        "gpu": {"driver_version": "550.127.05", "gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")},
    },
    job={"runtime": "bare-metal", "kind": "torchrun"},
    working={
        "image": {
            "nccl": [{"version": "2.27.3", "origin": "library", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2"}]
        },
        "absent": [],
    },
    assumptions=[
        "NCCL 2.25.1 is illustrative: the issue (2025-02-22) does not state the release; any release before 2.27.3 "
        "has the behaviour",
        "node, GPUs and driver are illustrative",
        "the security scanner is not a fact imgcheck can see",
    ],
    expect=[{"id": "NCCL-RELEASE-LATER-FIX", "severity": "info"}],
    mechanism="NCCL < 2.27.3: a foreign TCP connection to the bootstrap port that closes before the magic is read "
    "fails accept() and aborts init.",
    expect_kind="image rule: NCCL release with a later fix (2.27.3 release notes: accept() retries if reading the "
    "magic failed)",
)

case(
    id="gke-tcpxo-580-daemon-needs-hostnetwork",
    url="https://github.com/GoogleCloudPlatform/container-engine-accelerators/issues/580",
    cause="On GKE A3 Mega (8x H100), the GPUDirect-TCPXO daemon (fastrak_gpumem_manager v1.0.21) in a pod without "
    "hostNetwork sees only 7 of the 8 GPUs in the PCI tree while CUDA reports 8, and exits; with hostNetwork: true "
    "(NRI device injection + NET_ADMIN/NET_BIND_SERVICE) the workload succeeds.",
    established_by="reporter's A/B matrix on the same nodes (hostNetwork=false with or without privileged: daemon "
    "exits; hostNetwork=true: ~334 GB/s all-reduce), also documented in NVIDIA/aicr#381 as a GKE runtime requirement",
    fix="run the TCPXO daemon / workload pod with hostNetwork: true",
    seen="fastrak_gpumem_manager.cc:200] Number of GPUs detected in the",
    image={
        "profile": "no-rdma-userspace",
        "reference": "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.21 (daemon) + workload",
    },
    node={
        "name": "a3-megagpu-8g",
        "labels": {"node.kubernetes.io/instance-type": "a3-megagpu-8g"},
        "os": {"id": "cos"},
        "kernel": {"release": "6.12.55+"},
        "gpu": {"driver_version": "550.90.07", "gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")},
    },
    job={
        "runtime": "kubernetes",
        "kind": "Pod",
        "host_network": False,
        "privileged": False,
        "cap_add": ["NET_ADMIN", "NET_BIND_SERVICE"],
        "resources": {"nvidia.com/gpu": "8"},
        "gpus": 8,
    },
    working={"job": {"host_network": True}, "absent": []},
    assumptions=[
        "driver version is illustrative (not in the issue)",
        "the TCPXO daemon and the workload are modelled as one pod spec; the issue runs the daemon as a sidecar",
        "NRI device-injection annotations have no field in imgcheck's job facts",
    ],
    expect=[],
    mechanism="Without the host network namespace the TCPXO daemon's PCI sysfs view lacks a GPU, its GPU count "
    "disagrees with CUDA, and it exits; GPUDirect-TCPXO needs hostNetwork.",
    expect_kind="job rule: GKE TCPXO without hostNetwork (no rule names it today)",
)

case(
    id="ctk-797-legacy-image-imex-all-toolkit-1.17",
    url="https://github.com/NVIDIA/nvidia-container-toolkit/issues/797",
    cause="Since nvidia-container-toolkit 1.17.0, containers from 'legacy' images (CUDA_VERSION set, no "
    "NVIDIA_REQUIRE_CUDA) without NVIDIA_IMEX_CHANNELS get it defaulted to 'all', which libnvidia-container cannot "
    "parse ('unsupported IMEX channel value: all'), so the container fails to start.",
    established_by="toolkit maintainer's merged fix NVIDIA/nvidia-container-toolkit#801 ('Fix NVIDIA_IMEX_CHANNELS "
    "handling on legacy images', backport of #799); downstream fixes: opendatahub-io/distributed-workloads#271 "
    "(merged: add NVIDIA_REQUIRE_CUDA to the image) and aws/amazon-ecs-ami#365 (toolkit >= 1.17.3 resolves it)",
    fix="nvidia-container-toolkit >= 1.17.3 on the node, or set NVIDIA_REQUIRE_CUDA (or NVIDIA_IMEX_CHANNELS) in "
    "the image",
    seen="nvidia-container-cli.real: error parsing IMEX info: unsupported IMEX channel value: all",
    image={
        "profile": "no-rdma-userspace",
        "reference": "KFTO CUDA training image (legacy: CUDA_VERSION only)",
        "cuda": {"version": "12.1.1", "origin": "env CUDA_VERSION"},
        "env": {
            "CUDA_VERSION": "12.1.1",
            "NVIDIA_VISIBLE_DEVICES": "all",
            "NVIDIA_DRIVER_CAPABILITIES": "compute,utility",
        },
    },
    node={
        "name": "gpu-operator-node",
        "gpu": {"driver_version": "550.90.07", "gpus": gpus("NVIDIA A100-SXM4-80GB", 8, "datacenter")},
    },
    job={"runtime": "kubernetes", "kind": "Pod", "resources": {"nvidia.com/gpu": "1"}, "gpus": 1},
    working={
        "image": {
            "env": {
                "CUDA_VERSION": "12.1.1",
                "NVIDIA_VISIBLE_DEVICES": "all",
                "NVIDIA_DRIVER_CAPABILITIES": "compute,utility",
                "NVIDIA_REQUIRE_CUDA": "cuda>=12.1",
            }
        },
        "absent": [],
    },
    assumptions=[
        "the node's nvidia-container-toolkit version (1.17.0-1.17.2, via the GPU operator) has no field in imgcheck's "
        "node facts",
        "CUDA 12.1.1, the env values, driver and GPUs are illustrative; the issue names a KFTO CUDA image without "
        "NVIDIA_REQUIRE_CUDA",
        "the working variant follows opendatahub-io/distributed-workloads#271 (add NVIDIA_REQUIRE_CUDA)",
    ],
    expect=[],
    mechanism="Toolkit 1.17.0-1.17.2 treats a missing NVIDIA_IMEX_CHANNELS as 'all' for legacy images and "
    "libnvidia-container rejects 'all', so the prestart hook fails.",
    expect_kind="image x node rule: legacy CUDA image env x container-toolkit release (no rule names it today)",
    must_not=["CUDA-DRIVER-TOO-OLD"],
)

case(
    id="amazon-eks-ami-2768-g7-blackwell-proprietary-kmod",
    url="https://github.com/awslabs/amazon-eks-ami/issues/2768",
    cause="The AL2023 NVIDIA EKS AMI (driver 580.159.03) chooses the NVIDIA kernel-module flavour from a PCI-ID "
    "allowlist that lacked 0x2C3A (RTX PRO 4500 Blackwell Server Edition, EC2 g7), so it loaded the proprietary "
    "module; Blackwell is supported only by the open kernel modules, the driver fails to initialise, nvidia-smi "
    "reports 'No devices were found' and the node advertises no nvidia.com/gpu.",
    established_by="reporter's root-cause analysis (allowlist grep, NVRM 'requires use of the NVIDIA open kernel "
    "modules' in awslabs/amazon-eks-ami#2769); AMI maintainer closed it with release v20260917 (two driver versions, "
    "chosen per instance type)",
    fix="load the open kernel modules on Blackwell GPUs (fixed AMI release, or the 595 driver whose list has the ID)",
    seen="No devices were found",
    image={"profile": "no-rdma-userspace", "reference": "GPU workload pod image (not specified)"},
    node={
        "name": "g7-node",
        "labels": {"node.kubernetes.io/instance-type": "g7.2xlarge"},
        "os": {"id": "amzn", "version_id": "2023"},
        "gpu": {
            "driver_version": "580.159.03",
            "kernel_module": "proprietary",
            "gpus": [
                {
                    "index": 0,
                    "name": "NVIDIA RTX PRO 4500 Blackwell Server Edition",
                    "pci_bus_id": "00000000:57:00.0",
                    "pci_device_id": "0x2c3a",
                    "gpu_class": "datacenter",
                }
            ],
        },
    },
    job={"runtime": "kubernetes", "kind": "Pod", "resources": {"nvidia.com/gpu": "1"}, "gpus": 1},
    working={"node": {"gpu": {"kernel_module": "open"}}, "absent": []},
    assumptions=[
        "the instance size g7.2xlarge and a single GPU are illustrative (the issue says any g7 size)",
        "the GPU bus id is taken from the NVRM lines in the fix PR",
        "gpu_class 'datacenter' is modelled for a server-edition RTX PRO part",
    ],
    expect=[],
    mechanism="A Blackwell GPU with the proprietary NVIDIA kernel module: RM refuses to initialise it ('requires use "
    "of the NVIDIA open kernel modules').",
    expect_kind="node rule: kernel-module flavour vs GPU generation (no rule names it today)",
    must_not=["NODE-DRIVER-USERSPACE-MISMATCH"],
)

case(
    id="infra-controller-5251-rdma-core-without-ibverbs-providers",
    url="https://github.com/dsx-ai-factory/infra-controller/pull/5251",
    cause="The scout debugging environment had ibverbs-utils and rdma-core but not ibverbs-providers, so libibverbs "
    "had no vendor provider (mlx5) and no /etc/libibverbs.d entries; ibv_devinfo reported 'No IB devices found' although "
    "the InfiniBand hardware was present.",
    established_by="merged PR adding ibverbs-providers, whose description states the cause",
    fix="install ibverbs-providers (the mlx5 provider from the same rdma-core) in the image",
    seen="No IB devices found",
    image={"profile": "rdma-core-39-mlx5", "reference": "scout debugging environment image", "rdma": {"providers": []}},
    node={"name": "ib-node", "rdma": {"stack": "inbox", "devices": [{"name": "mlx5_0", "driver": "mlx5_core"}]}},
    working={"image": {"profile": "rdma-core-39-mlx5"}, "absent": ["RDMA-NO-MLX5-PROVIDER"]},
    assumptions=[
        "rdma-core 39 (Ubuntu 22.04) is modelled; the PR does not name the release",
        "the node's device list (one mlx5 device, inbox stack) is illustrative",
        "the PR's libibverbs warning says the config directory is missing; the model has no provider at all",
    ],
    expect=[{"id": "RDMA-NO-MLX5-PROVIDER", "severity": "error"}],
    mechanism="libibverbs without the mlx5 provider plugin (ibverbs-providers) exposes no device for ConnectX HCAs.",
    expect_kind="image x node rule: verbs provider missing for the node's NIC",
    must_not=["RDMA-NO-LIBIBVERBS"],
)

case(
    id="skyrl-108-nccl-2.26.2-l40s-no-peer-access",
    url="https://github.com/NovaSky-AI/SkyRL/pull/108",
    cause="After an upgrade to CUDA 12.8 / NCCL 2.26.2, NCCL init on L4 / L40S nodes (no P2P between the GPUs) fails "
    "with 'Cuda failure 217 peer access is not supported between these two devices'; setting NCCL_P2P_DISABLE=1 and "
    "NCCL_SHM_DISABLE=1 when peer access is unsupported makes it run.",
    established_by="merged PR by the project's maintainers (peer-access check + NCCL env), verified running on L40S",
    fix="NCCL_P2P_DISABLE=1 and NCCL_SHM_DISABLE=1 on nodes without GPU peer access",
    seen="Cuda failure 217 'peer access is not supported between these two devices'",
    image={
        "profile": "no-rdma-userspace",
        "reference": "SkyRL training image (torch with CUDA 12.8)",
        "cuda": {"version": "12.8", "origin": "pip"},
        "nccl": [
            {
                "version": "2.26.2",
                "origin": "pip",
                "path": "/usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2",
            }
        ],
    },
    node={"name": "l40s-node", "gpu": {"driver_version": "570.133.20", "gpus": gpus("NVIDIA L40S", 8, "datacenter")}},
    job={"runtime": "bare-metal", "kind": "ray", "gpus": 8},
    working={"job": {"env": {"NCCL_P2P_DISABLE": "1", "NCCL_SHM_DISABLE": "1"}}, "absent": []},
    assumptions=[
        "driver 570.133.20 and 8 GPUs are illustrative (the PR names L4/L40S and CUDA 12.8)",
        "the NCCL wheel path is modelled",
        "the job runs through Ray (SkyRL's launcher); modelled as kind 'ray'",
    ],
    expect=[],
    mechanism="NCCL 2.26.2 on GPUs without peer access: the intra-node transport setup hits "
    "cudaErrorPeerAccessUnsupported instead of falling back.",
    expect_kind="image x node rule: NCCL release x GPUs without P2P (no rule names it today)",
)

case(
    id="nccl-1231-no-external-net-plugin-negative",
    url="https://github.com/NVIDIA/nccl/issues/1231",
    cause="(negative for the network path) The image has no external NCCL net plugin (libnccl-net.so); NCCL uses its "
    "internal plugin, which supports IB verbs, RoCE and sockets. The plugin-search message is harmless (the thread's "
    "failure is a separate CUDA 802 error on that node).",
    established_by="NCCL maintainer (AddyLaddy): the 'No plugin found (libnccl-net.so), using internal "
    "implementation' message is harmless; NCCL defaults to its internal plugin",
    fix=None,
    seen="NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such file or directory No "
    "plugin found (libnccl-net.so), using internal implementation",
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "PyTorch image with NCCL 2.19.3 (no external net plugin)",
        "nccl": [
            {
                "version": "2.19.3",
                "origin": "pip",
                "path": "/usr/local/lib/python3.10/dist-packages/nvidia/nccl/lib/libnccl.so.2",
            }
        ],
    },
    node={
        "name": "ib-node",
        "rdma": {"stack": "inbox", "devices": [{"name": "mlx5_0", "driver": "mlx5_core"}]},
        "gpu": {"driver_version": "535.161.08", "gpus": gpus("NVIDIA A100-SXM4-80GB", 8, "datacenter")},
    },
    job={"runtime": "bare-metal", "kind": "torchrun", "gpus": 8},
    assumptions=[
        "the RDMA devices, driver and GPUs are illustrative (the thread's node is a TencentOS VM with eth0; its "
        "network devices are not shown)",
        "rdma-core 39 with the mlx5 provider is modelled so that the internal IB plugin has what it needs",
        "the thread's CUDA 802 failure (Fabric Manager side) is not part of this negative",
    ],
    expect=[],
    mechanism="(negative) No external NCCL net plugin is needed: NCCL's internal plugin covers IB verbs, RoCE and "
    "sockets.",
    expect_kind="negative: nothing about the missing libnccl-net.so should be reported as an error",
    must_not=["EFA-NO-OFI-PLUGIN", "NCCL-NET-PLUGIN-DEPENDENCY-MISSING", "RDMA-NO-LIBIBVERBS", "RDMA-NO-MLX5-PROVIDER"],
)

case(
    id="horovod-666-nccl-conf-excludes-docker0-only-nccl-2.3",
    url="https://github.com/horovod/horovod/issues/666",
    cause="The uber/horovod:0.15.2 image ships /etc/nccl.conf with NCCL_SOCKET_IFNAME=^docker0. With NCCL 2.3.5 and "
    "later, a set NCCL_SOCKET_IFNAME is honoured exactly, so lo is no longer excluded and NCCL may bootstrap on the "
    "loopback interface; multi-node runs freeze with 'Connection closed by remote peer' / 'connect timeout : "
    "Connection refused' (the older 0.13.10 image worked).",
    established_by="commenter's verified fix ('solved by' horovod/horovod#700, merged, which removes the line from "
    "nccl.conf after NCCL's maintainer explained that '^docker0' may pick lo since 2.3.5); Horovod maintainer: with "
    "latest NCCL set NCCL_SOCKET_IFNAME=^docker0,lo or the routable interface (also kubeflow/mpi-operator#57)",
    fix="NCCL_SOCKET_IFNAME=^docker0,lo (or the routable interface), or do not set it",
    seen="NCCL WARN Call to connect timeout : Connection refused",
    image={
        "profile": "no-rdma-userspace",
        "reference": "uber/horovod:0.15.2-tf1.12.0-torch1.0.0-py3.5",
        "nccl": [{"version": "2.3.5", "origin": "dpkg", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.3.5"}],
        "nccl_conf": {"NCCL_SOCKET_IFNAME": "^docker0"},
    },
    node={
        "name": "gpu-node",
        "gpu": {"driver_version": "410.79", "gpus": gpus("Tesla V100-SXM2-16GB", 8, "datacenter")},
    },
    job={"runtime": "kubernetes", "kind": "MPIJob", "gpus": 8, "resources": {"nvidia.com/gpu": "8"}},
    working={
        "image": {"nccl_conf": {"NCCL_SOCKET_IFNAME": "^docker0,lo"}},
        "absent": ["ENV-NCCL-SOCKET-IFNAME-ALLOWS-LO"],
    },
    assumptions=[
        "NCCL 2.3.5 (dpkg libnccl2) in the 0.15.2 image is inferred from horovod/horovod#700 ('With NCCL 2.3.5, "
        "setting NCCL_SOCKET_IFNAME causes the process to hang'), not read from the image",
        "driver, GPUs and the MPIJob launch are illustrative (the commenter ran the image both with MPIJob and docker)",
    ],
    expect=[{"id": "ENV-NCCL-SOCKET-IFNAME-ALLOWS-LO", "severity": "warning"}],
    mechanism="NCCL_SOCKET_IFNAME=^docker0 set in the image replaces NCCL's default exclusion of lo (NCCL >= 2.3.5), "
    "so bootstrap can pick the loopback interface that other nodes cannot reach.",
    expect_kind="image rule: NCCL_SOCKET_IFNAME exclusion list without lo",
    must_not=["CUDA-DRIVER-TOO-OLD"],
)

case(
    id="nccl-933-h800-unbalanced-rings-before-2.18.3",
    url="https://github.com/NVIDIA/nccl/issues/933",
    cause="On an 8-node H800 RoCE cluster, PyTorch's NCCL (a release before 2.18) searched a topology graph that left "
    "two of the NICs unused (pattern 1/4 instead of nccl-tests' 3/4), so RoCE traffic was unbalanced; loading a graph "
    "dumped by nccl-tests made PyTorch hang. NCCL 2.18.3 fixed it.",
    established_by="NCCL maintainer (sjeaugey): 'try with NCCL 2.18? There should be fixes for H800' and "
    "NCCL_GRAPH_FILE is not a production workaround; reporter: 'I have tried nccl2.18.3, the problems are gone ... "
    "NCCL 2.18.3 fixes issue' (same report: pytorch/pytorch#106190)",
    fix="NCCL >= 2.18.3; do not use NCCL_GRAPH_FILE as a workaround",
    seen=None,
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "PyTorch 2.0.1 pip image (bundled NCCL)",
        "nccl": [
            {
                "version": "2.14.3",
                "origin": "pip",
                "path": "/usr/local/lib/python3.10/dist-packages/nvidia/nccl/lib/libnccl.so.2",
            }
        ],
    },
    node={
        "name": "h800-node",
        "rdma": {
            "stack": "mlnx_ofed",
            "devices": [{"name": f"mlx5_{i}", "driver": "mlx5_core", "link_layer": "Ethernet"} for i in range(8)],
        },
        "gpu": {"driver_version": "525.105.17", "gpus": gpus("NVIDIA H800", 8, "datacenter")},
    },
    job={"runtime": "bare-metal", "kind": "torchrun", "gpus": 8},
    working={
        "image": {
            "nccl": [
                {
                    "version": "2.18.3",
                    "origin": "pip",
                    "path": "/usr/local/lib/python3.10/dist-packages/nvidia/nccl/lib/libnccl.so.2",
                }
            ]
        },
        "absent": [],
    },
    assumptions=[
        "NCCL 2.14.3 (PyTorch 2.0.x wheels) is illustrative: the thread says only that a release before 2.18 was used",
        "8 RoCE mlx5 devices, MLNX_OFED stack and driver 525 are illustrative (the issue describes 8 NICs per node "
        "with RoCE)",
    ],
    expect=[{"id": "NCCL-RELEASE-LATER-FIX", "severity": "info"}],
    mechanism="NCCL releases before 2.18.3 build poor rings/trees on DGX H800, leaving NICs unused; 2.18.3 'Fix "
    "performance for DGX H800'.",
    expect_kind="image x node rule: NCCL release with a later fix for this GPU (release notes 2.18.3)",
    must_not=["NCCL-GRAPH-FILE-SET"],
)

case(
    id="deepops-652-nccl-tests-image-without-mofed",
    url="https://github.com/NVIDIA/deepops/issues/652",
    cause="DeepOps' nccl-tests container (deepops/nccl-tests-cuda11.0-ubuntu18.04) was built without MOFED / verbs "
    "userspace, so inside the container NCCL did not detect InfiniBand or GPUDirect RDMA on the IB cluster; rebuilding "
    "the image with MOFED made nccl-tests run over IB with GDRDMA.",
    established_by="the reporter (a DeepOps contributor) attached the fixed Dockerfile (MOFED 5 added) that runs "
    "nccl-tests with GDRDMA; the maintainer (ajdecon) asked to add it as an alternative Dockerfile",
    fix="install the verbs userspace (MOFED or rdma-core with the mlx5 provider) in the image",
    seen=None,
    image={
        "profile": "no-rdma-userspace",
        "reference": "deepops/nccl-tests-cuda11.0-ubuntu18.04",
        "cuda": {"version": "11.0", "origin": "env CUDA_VERSION"},
        "nccl": [{"version": "2.7.8", "origin": "dpkg", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.7.8"}],
    },
    node={
        "name": "dgx-a100",
        "rdma": {
            "stack": "mlnx_ofed",
            "ofed_version": "5.1-2.3.7.1",
            "devices": [{"name": f"mlx5_{i}", "driver": "mlx5_core", "link_layer": "InfiniBand"} for i in range(8)],
        },
        "gpu": {"driver_version": "450.80.02", "gpus": gpus("NVIDIA A100-SXM4-40GB", 8, "datacenter")},
    },
    job={"runtime": "slurm", "kind": "srun", "devices": ["/dev/infiniband"], "gpus": 8},
    working={"image": {"profile": "rdma-core-39-mlx5"}, "absent": ["RDMA-NO-LIBIBVERBS"]},
    assumptions=[
        "the image's NCCL 2.7.8 (CUDA 11.0 era) and the node's MOFED 5.1, driver 450 and 8 IB HCAs are illustrative",
        "the working variant models 'image with MOFED userspace' as the rdma-core + mlx5 provider profile",
        "the image is assumed to have no libibverbs at all (the issue says MOFED is not installed; the CUDA base image "
        "has no verbs packages)",
    ],
    expect=[{"id": "RDMA-NO-LIBIBVERBS", "severity": "warning"}],
    mechanism="An image without libibverbs cannot use the node's IB devices: NCCL falls back to sockets and loses "
    "GPUDirect RDMA.",
    expect_kind="image x node rule: no verbs userspace in the image on an RDMA node",
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
