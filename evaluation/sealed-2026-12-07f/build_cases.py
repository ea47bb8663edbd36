"""Build /work/sealed6/cases.json (the sixth sealed incident set) from the case list below.

Each case is in the format of the repo's tests/incidents/cases.json (loaded by tests/incidents/corpus.py), plus
`mechanism`, `expect_kind`, `sealed_source`, `cause`, `established_by`, `fix`, `seen`, `must_not`, `working`,
`assumptions`. Facts are as the thread states them; every fact added is listed in `assumptions`.

Collected 2026-12-07. Every source (owner/repo + issue/PR number) was checked with exclusion-check.sh against
`git -C /work/main grep` (whole tree, evaluation/ included), /work/shared, /work/sealed, /work/sealed2, /work/sealed3,
/work/sealed4, /work/sealed5 and bare '#N' in /work/main/src/imgcheck/data and /work/main/compat_matrix (files/lines
naming the upstream); see exclusion-check.txt. No imgcheck rule was run to choose a case; docs/rules.md was read only
to fill `expect` / `must_not` afterwards.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

DESCRIPTION = (
    "SEALED held-out incident set #6 for imgcheck: public threads nobody on the team had read (none of these URLs "
    "or issue numbers appears in the repo, in /work/shared or in /work/sealed .. /work/sealed5 when collected). Same "
    "case format as tests/incidents/cases.json: image/node/job facts as each thread states them, `assumptions` lists "
    "every fact added, `expect` the rule ids of docs/rules.md that name the established mechanism today (empty when "
    "none does), `must_not` what the thread rules out, `working` the configuration the thread shows working. Extra "
    "fields: `mechanism` (one sentence; '(negative)' marks a configuration that works), `expect_kind`, "
    "`sealed_source`, `cause`, `established_by`, `fix`, `seen` (the line the user saw, or null). Scored once by "
    "score.py after the rules are done."
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


# ================================================================ EFA / libfabric userspace in the image
case(
    id="prime-rl-3454-efa-libfabric-paired-with-distro-rdma-core",
    url="https://github.com/PrimeIntellect-ai/prime-rl/pull/3454",
    cause="The image ran the AWS EFA installer in a separate build stage and copied only /opt/amazon into the runtime "
    "stage, so the installer's libfabric was paired with the runtime stage's own apt rdma-core (50.0-2ubuntu0.2), "
    "whose libefa.so.1 lacks the symbol version EFA_1.4 that libfabric needs; NCCL could not load the OFI plugin "
    "(version 'EFA_1.4' not found).",
    established_by="merged PR by the maintainer with a verified before/after: after running the installer in the "
    "runtime stage rdma-core is 61.0-1 system-wide, libfabric.so.1 resolves libefa.so.1 cleanly and "
    "libnccl-net-ofi.so dlopens with zero missing dependencies",
    fix="run the EFA installer in the stage that runs NCCL (so its rdma-core upgrade lands in place), or copy the "
    "installer's rdma-core libraries (libefa, libibverbs) together with /opt/amazon",
    seen="version `EFA_1.4' not found",
    image={
        "profile": "efa-installer",
        "reference": "prime-rl CUDA image (multi-stage build, August 2026)",
        "rdma": {
            "libibverbs": {
                "version": "1.14.50.0",
                "rdma_core": "50.0",
                "path": "/usr/lib/x86_64-linux-gnu/libibverbs.so.1",
            },
            "flavor": "inbox",
        },
        "nccl_net_plugins": [{"name": "aws-ofi-nccl", "path": "/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so"}],
    },
    node={"name": "efa-node", "gpu": {"gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")}},
    job={"runtime": "kubernetes", "kind": "Pod", "resources": {"vpc.amazonaws.com/efa": "32", "nvidia.com/gpu": "8"}},
    working={"image": {"rdma": {"libibverbs": {"version": "1.14.61.0", "rdma_core": "61.0"}}}, "absent": []},
    assumptions=[
        "the libibverbs version string 1.14.50.0 is derived from rdma-core 50.0 (the PR names the package 50.0-2ubuntu0.2)",
        "the node (8x H100 with 32 EFA devices) and the Kubernetes pod are illustrative; the PR names neither",
        "the plugin path /opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so is the EFA installer's usual path; the PR names "
        "only libnccl-net-ofi.so",
        "libfabric's required libefa symbol version (EFA_1.4) cannot be written in the image facts",
    ],
    expect=[],
    must_not=["EFA-NO-OFI-PLUGIN", "OFI-PLUGIN-LIBFABRIC-TOO-OLD"],
    mechanism="EFA installer's libfabric copied into an image whose distro rdma-core/libefa is older than it needs: "
    "libfabric fails to load (EFA_1.4 not found), so NCCL cannot load the OFI plugin.",
    expect_kind="gap: no rule compares libfabric's libefa symbol-version needs with the image's rdma-core",
    sealed_source="issues (merged PR)",
)

# ================================================================ launch specs: Slurm, MIG, devices, docker
case(
    id="mace-435-slurm-gpus-per-task-local-rank-ordinal",
    url="https://github.com/ACEsuit/mace/issues/435",
    cause="The sbatch script requested --gpus-per-task=1 with 8 tasks per node, so Slurm bound one GPU to each task; "
    "the training code calls torch.cuda.set_device(local_rank) with local ranks 0..7, and every rank but local rank 0 "
    "asked for a device its task cannot see.",
    established_by="reporter's verified fix in the thread: 'The mistake was on my side, specifying --gpus-per-task "
    "instead of --gpus-per-node'",
    fix="request the GPUs per node (--gpus-per-node=8) so every task sees all of them, or select device 0 in each "
    "task when GPUs are bound per task",
    seen="RuntimeError: CUDA error: invalid device ordinal",
    image={"profile": "no-rdma-userspace", "reference": "mace (pip, PyTorch)"},
    node={"name": "slurm-gpu-node", "gpu": {"gpus": gpus("NVIDIA A100-SXM4-80GB", 8, "datacenter")}},
    job={
        "runtime": "slurm",
        "kind": "sbatch",
        "ranks_per_node": 8,
        "ranks_setting": "--ntasks-per-node=8",
        "gpus": 1,
        "gpus_setting": "--gpus-per-task=1",
    },
    working={"job": {"gpus": 8, "gpus_setting": "--gpus-per-node=8"}, "absent": []},
    assumptions=[
        "the GPU model and count (8 per node) are illustrative; the script asks for 8 tasks per node, one GPU each",
        "gpus=1 models what each task sees under --gpus-per-task=1",
    ],
    expect=[],
    must_not=["CUDA-DRIVER-TOO-OLD"],
    mechanism="Slurm binds one GPU per task (--gpus-per-task), but the code selects cuda:local_rank: every task but "
    "the first asks for an ordinal it cannot see.",
    expect_kind="gap or launch rule: per-task GPU binding vs device selection by local rank",
)

case(
    id="mlcommons-training-442-mig-instances-one-per-process",
    url="https://github.com/mlcommons/training/issues/442",
    cause="On an A100 with MIG GPU instances exposed to the container, bind_launch.py spawns one process per instance "
    "and calls torch.cuda.set_device(local_rank); a CUDA process enumerates only one MIG device, so set_device(1) and "
    "above fail with 'invalid device ordinal' in every subprocess but the first.",
    established_by="reporter's reproduction in the thread (set_device(0) works, set_device(1) fails) and the working "
    "alternative they verified: CUDA_VISIBLE_DEVICES=<MIG UUID> per process with set_device(0)",
    fix="give each process one MIG instance through CUDA_VISIBLE_DEVICES=MIG-<uuid> and select device 0",
    seen="RuntimeError: cuda runtime error (101) : invalid device ordinal at /opt/pytorch/pytorch/torch/csrc/cuda/Module.cpp:33",
    image={"profile": "no-rdma-userspace", "reference": "mlcommons ssd benchmark image (PyTorch)"},
    node={
        "name": "a100-mig",
        "gpu": {"gpus": gpus("NVIDIA A100-SXM4-40GB", 1, "datacenter")},
        "mig": {"gpu_instances": {"gpu0": 7}},
    },
    job={
        "runtime": "kubernetes",
        "kind": "Pod",
        "env": {
            "CUDA_VISIBLE_DEVICES": "MIG-GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f/7/0,"
            "MIG-GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f/8/0,MIG-GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f/9/0"
        },
    },
    working={
        "job": {"env": {"CUDA_VISIBLE_DEVICES": "MIG-GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f/7/0"}},
        "absent": ["JOB-MIG-SEVERAL-PER-PROCESS"],
    },
    assumptions=[
        "the MIG device list (three instances, the CUDA 11.0-era MIG-GPU-<uuid>/<gi>/<ci> form) and the UUID are "
        "illustrative; the thread says only that the MIG instances were made accessible to the container",
        "the A100 model (40GB), seven instances and the OpenShift/Kubernetes pod are illustrative",
        "CUDA_VISIBLE_DEVICES models how the instances reached the process (the thread's working form uses it)",
    ],
    expect=[{"id": "JOB-MIG-SEVERAL-PER-PROCESS", "severity": "warning"}],
    must_not=["CUDA-DRIVER-TOO-OLD"],
    mechanism="Several MIG instances listed for one process: CUDA enumerates only the first, so set_device(local_rank) "
    "fails for local rank >= 1.",
    expect_kind="launch rule: several MIG devices visible to one process",
)

case(
    id="rdma-core-1060-librdmacm-fails-with-partial-uverbs",
    url="https://github.com/linux-rdma/rdma-core/pull/1060",
    cause="A Docker container on a node with 2 dual-port HDR adapters (mlx5_0..mlx5_3) was given only uverbs0 and "
    "uverbs2 (plus rdma_cm, ucm0, ucm2); sysfs lists all four devices, ibv_open_device fails for the two without a "
    "device node, and librdmacm's ucma_init_all() then failed as a whole, so rdma_get_devices() returned ENODEV for "
    "every RDMA-CM application in the container.",
    established_by="merged rdma-core PR (librdmacm: do not fail init completely if one device is failing) with the "
    "reporter's analysis of cma.c",
    fix="expose every uverbs device of the node to the container (or all of /dev/infiniband), or use an rdma-core "
    "with the fix",
    seen=None,
    image={
        "profile": "rdma-core-33-mlx5",
        "reference": "Ubuntu 20.04 based RDMA-CM application image",
        "rdma": {"libibverbs": {"version": "1.8.28.0", "rdma_core": "28.0"}},
    },
    node={
        "name": "hdr-node",
        "os": {"id": "ubuntu", "version_id": "20.04"},
        "rdma": {"devices": mlx5(4)},
    },
    job={
        "runtime": "docker",
        "kind": "docker run",
        "devices": [
            "/dev/infiniband/rdma_cm",
            "/dev/infiniband/ucm0",
            "/dev/infiniband/ucm2",
            "/dev/infiniband/uverbs0",
            "/dev/infiniband/uverbs2",
        ],
    },
    working={"job": {"devices": ["/dev/infiniband"]}, "absent": ["JOB-RDMA-DEVICES-PARTIAL"]},
    assumptions=[
        "the image's rdma-core 28.0 is Ubuntu 20.04's (the PR says the node runs Ubuntu 20.04; the container's "
        "distribution is not stated); the rest of the profile's userspace is the stock rdma-core 33 profile",
        "the four devices are modelled as InfiniBand mlx5 (the PR says 2x dual-port Mellanox HDR adapters)",
    ],
    expect=[{"id": "JOB-RDMA-DEVICES-PARTIAL", "severity": "warning"}],
    must_not=["RDMA-NO-LIBIBVERBS"],
    mechanism="Container given a subset of the node's uverbs devices: librdmacm (before the fix) failed its whole "
    "device init because one listed device could not be opened.",
    expect_kind="launch rule: the container gets some of the node's RDMA devices",
    sealed_source="issues (merged PR)",
)

case(
    id="k8s-device-plugin-23-docker-default-runtime-not-nvidia",
    url="https://github.com/NVIDIA/k8s-device-plugin/issues/23",
    cause="nvidia-docker2 was installed on the Kubernetes 1.8 GPU node but Docker's default runtime was still runc, "
    "so the device-plugin pod was started without the NVIDIA runtime hook, got no driver libraries and could not "
    "load NVML.",
    established_by="maintainer's answer (set the nvidia runtime as the default runtime) and the reporter's "
    "confirmation that this solved it",
    fix='set "default-runtime": "nvidia" in /etc/docker/daemon.json (or a RuntimeClass / CDI on newer stacks) and '
    "restart Docker",
    seen="Failed to start nvml with error:  could not load NVML library",
    image={"profile": "no-rdma-userspace", "reference": "nvidia/k8s-device-plugin:1.8"},
    node={
        "name": "k8s-gpu-node",
        "gpu": {"gpus": gpus("GeForce GTX 1080 Ti", 2, "consumer")},
        "container_toolkit": {"installed": True},
    },
    job={"runtime": "kubernetes", "kind": "DaemonSet", "workload": "nvidia-device-plugin-daemonset"},
    assumptions=[
        "the GPU model and count are illustrative; the thread names none",
        "the toolkit version (nvidia-docker2 in January 2018) is not modelled; Docker's default runtime is not a "
        "fact imgcheck reads",
    ],
    expect=[],
    must_not=["CUDA-DRIVER-TOO-OLD", "NODE-DRIVER-USERSPACE-MISMATCH"],
    mechanism="NVIDIA container runtime installed but not Docker's default runtime: pods started by the kubelet get no "
    "driver libraries, so the device plugin cannot load NVML.",
    expect_kind="gap: the container engine's default runtime is not a node fact",
)

case(
    id="nvidia-docker-825-image-ships-nvidia-smi",
    url="https://github.com/NVIDIA/nvidia-docker/issues/825",
    cause="The image contained the NVIDIA driver's user space (/usr/bin/nvidia-smi and driver libraries installed in "
    "the image); the NVIDIA container runtime mounts the host's copies at the same paths and nvidia-container-cli "
    "refused to start the container ('file creation failed: ... /usr/bin/nvidia-smi: file exists').",
    established_by="maintainer (3XX0): 'This is expected, nvidia-smi shouldn't be in the container image'; a second "
    "user confirms removing the driver from the image",
    fix="remove the driver packages from the image and let the runtime inject the host's driver",
    seen="nvidia-container-cli: mount error: file creation failed: "
    "/var/lib/docker/overlay2/bd4f3570d4eb99d9df1117bd3751a00c8c0eb63429e65eba2a196c6c543cc52f/merged/usr/bin/nvidia-smi: "
    "file exists",
    image={
        "profile": "no-rdma-userspace",
        "reference": "user image with the NVIDIA driver installed (September 2018)",
        "packages": [
            {"name": "nvidia-390", "version": "390.87-0ubuntu0~gpu18.04.1"},
            {"name": "nvidia-utils-390", "version": "390.87-0ubuntu0~gpu18.04.1"},
            {"name": "libcuda1-390", "version": "390.87-0ubuntu0~gpu18.04.1"},
        ],
    },
    node={
        "name": "docker-host",
        "gpu": {"driver_version": "396.54", "gpus": gpus("GeForce GTX 1080 Ti", 1, "consumer")},
    },
    job={"runtime": "docker", "kind": "docker run", "gpus": -1},
    working={"image": {"profile": "no-rdma-userspace"}, "absent": ["IMAGE-DRIVER-USERSPACE"]},
    assumptions=[
        "the driver packages and their version (390.87) in the image and the host driver 396.54 are illustrative: the "
        "thread shows only that nvidia-smi and driver libraries were in the image",
        "the GPU model is illustrative",
    ],
    expect=[{"id": "IMAGE-DRIVER-USERSPACE", "severity": "info"}],
    must_not=["CUDA-DRIVER-TOO-OLD"],
    mechanism="Driver user space baked into the image collides with the runtime's injected host driver: the container "
    "does not start.",
    expect_kind="image rule: the image installs the driver's user space",
)

case(
    id="petric2-27-cuda-12.8-image-on-driver-551",
    url="https://github.com/SyneRBI/PETRIC2/issues/27",
    cause="The image ghcr.io/synerbi/sirf:petric2 requires CUDA >= 12.8 (NVIDIA_REQUIRE_CUDA) and the host driver "
    "551.78 supports CUDA 12.4, so nvidia-container-cli refused to start it.",
    established_by="the reporter's own nvidia-smi (Driver 551.78, CUDA Version 12.4) against the requirement error "
    "'cuda>=12.8, please update your driver'; the maintainers closed it as wontfix (host driver too old)",
    fix="update the host driver to a 570-series driver (CUDA 12.8) or use an image built for CUDA <= 12.4",
    seen="nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your driver to a "
    "newer version, or use an earlier cuda container",
    image={
        "profile": "no-rdma-userspace",
        "reference": "ghcr.io/synerbi/sirf:petric2",
        "cuda": {"version": "12.8.0", "origin": "env", "path": "image config Env", "compat_driver": None},
        "env": {"CUDA_VERSION": "12.8.0", "NVIDIA_REQUIRE_CUDA": "cuda>=12.8"},
    },
    node={"name": "docker-desktop", "gpu": {"driver_version": "551.78"}},
    job={"runtime": "docker", "kind": "docker run", "gpus": -1},
    working={"node": {"gpu": {"driver_version": "570.86.16"}}, "absent": ["CUDA-DRIVER-TOO-OLD"]},
    assumptions=[
        "the image's CUDA 12.8.0 and its NVIDIA_REQUIRE_CUDA=cuda>=12.8 are inferred from the requirement error (the "
        "exact value, with any brand clauses, is not shown)",
        "the host is Windows with Docker Desktop (the reporter's nvidia-smi.exe prompt); the Windows/WSL driver "
        "layer is not modelled",
        "the working driver 570.86.16 is illustrative",
    ],
    expect=[{"id": "CUDA-DRIVER-TOO-OLD", "severity": "warning"}],
    must_not=["IMAGE-DRIVER-USERSPACE"],
    mechanism="CUDA 12.8 image on a host driver that supports CUDA 12.4: the runtime's requirement check refuses the "
    "container.",
    expect_kind="cuda rule: image CUDA needs a newer driver than the node has",
)

# ================================================================ NCCL settings / RoCE
case(
    id="nccl-1657-gid-index-0-roce-v1-link-local",
    url="https://github.com/NVIDIA/nccl/issues/1657",
    cause="A two-node vLLM deployment on Kubernetes set NCCL_IB_GID_INDEX=0 on RoCE mlx5 ports, so NCCL used GID 0, "
    "the RoCE v1 link-local entry (fe80::..., shown in the log as GID 0 (80FE/...)); connecting the queue pairs "
    "failed (ibv_modify_qp: No such device) and NCCL init ended in 'unhandled system error'.",
    established_by="reporter's verified fix as summarised from the thread (blog.gitcode.com write-up of this issue): "
    "removing the NCCL_IB_GID_INDEX setting and moving to NCCL 2.26.2 (automatic GID selection) made multi-node "
    "communication work",
    fix="do not force NCCL_IB_GID_INDEX=0 on RoCE; let NCCL pick the RoCE v2 IPv4 GID (2.21.5+), or set the index of "
    "that entry",
    seen="NCCL error: unhandled system error",
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "vllm/vllm-openai (NCCL 2.21.5)",
        "nccl": [
            {
                "version": "2.21.5",
                "origin": "pip",
                "path": "/usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2",
            }
        ],
    },
    node={
        "name": "aigc-maas-node",
        "rdma": {
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
                            "netdev": "eth1",
                            "gids": [
                                {
                                    "index": 0,
                                    "type": "IB/RoCE v1",
                                    "netdev": "eth1",
                                    "gid": "fe80:0000:0000:0000:1a8a:41fe:ff21:a75e",
                                },
                                {
                                    "index": 1,
                                    "type": "RoCE v2",
                                    "netdev": "eth1",
                                    "gid": "fe80:0000:0000:0000:1a8a:41fe:ff21:a75e",
                                },
                                {
                                    "index": 2,
                                    "type": "IB/RoCE v1",
                                    "netdev": "eth1",
                                    "gid": "0000:0000:0000:0000:0000:ffff:0a00:0015",
                                },
                                {
                                    "index": 3,
                                    "type": "RoCE v2",
                                    "netdev": "eth1",
                                    "gid": "0000:0000:0000:0000:0000:ffff:0a00:0015",
                                },
                            ],
                        }
                    ],
                }
            ]
        },
        "gpu": {"gpus": gpus("Tesla V100-SXM2-32GB", 1, "datacenter")},
    },
    job={"runtime": "kubernetes", "kind": "LeaderWorkerSet", "env": {"NCCL_IB_GID_INDEX": "0"}},
    assumptions=[
        "the GID table (v1/v2 pairs of a link-local and an IPv4-mapped entry) and the IPv4 address are illustrative; "
        "the log shows only GID 0 = fe80::...:1a8a:41fe:ff21:a75e (printed as 80FE/1A8A41FEFF21A75E)",
        "the netdev name eth1, one V100 per node and the LeaderWorkerSet kind (pod name '...-leader-0') are illustrative",
        "the resolution is taken from a public write-up of this issue; the thread text past the first log was not "
        "readable here",
    ],
    expect=[{"id": "ENV-NCCL-IB-GID-INDEX-ROCE-V1", "severity": "warning"}],
    must_not=["ENV-DISABLES-IB", "MEMLOCK-TOO-LOW"],
    mechanism="NCCL_IB_GID_INDEX=0 forces the RoCE v1 link-local GID on RoCE ports: QP connection fails "
    "(ibv_modify_qp ENODEV).",
    expect_kind="env rule: NCCL_IB_GID_INDEX names a RoCE v1 / link-local GID",
    sealed_source="issues + pages (write-up)",
)


# ================================================================ NVLink SHARP / fabric memory in containers
case(
    id="pie-500-nvls-in-container-without-nvidia-caps",
    url="https://github.com/pie-project/pie/issues/500",
    cause="On a 4x H200 NVSwitch pod (full NV18 mesh) whose container does not expose /dev/nvidia-caps, NCCL detected "
    "NVLink SHARP, tried to allocate a multicast object, was refused by CUDA (Cuda failure 1 'invalid argument' in "
    "transport/nvls.cc) and failed communicator init instead of falling back.",
    established_by="reporter's A/B in the thread: NCCL_NVLS_ENABLE=0 resolves it completely on the same pod; the "
    "hardware is healthy (nvidia-smi topo -m shows the NV18 mesh)",
    fix="expose the NVIDIA capability devices (/dev/nvidia-caps) to the container, or set NCCL_NVLS_ENABLE=0",
    seen="transport/nvls.cc:251 NCCL WARN Cuda failure 1 'invalid argument'",
    image={"profile": "no-rdma-userspace", "reference": "pie cuda_native (July 2026)"},
    node={
        "name": "h200-pod-host",
        "gpu": {"gpus": gpus("NVIDIA H200", 4, "datacenter")},
        "fabric": {
            "nvswitch_pci": ["0000:05:00.0", "0000:06:00.0", "0000:07:00.0", "0000:08:00.0"],
            "fm_installed": True,
            "fm_running": True,
        },
    },
    job={"runtime": "docker", "kind": "docker run", "gpus": 4},
    working={"job": {"env": {"NCCL_NVLS_ENABLE": "0"}}, "absent": []},
    assumptions=[
        "the NVSwitch PCI addresses are illustrative; the thread says the pod is NVSwitch-backed with a full NV18 mesh",
        "Fabric Manager installed and running is inferred from the healthy NVLink mesh; the thread does not name it",
        "the container runtime of the cloud provider is modelled as docker run with 4 GPUs; whether /dev/nvidia-caps "
        "is absent is not a job fact imgcheck reads",
        "the NCCL version is not stated",
    ],
    expect=[],
    must_not=["NODE-FABRIC-MANAGER-NOT-RUNNING", "NODE-FABRIC-MANAGER-MISSING"],
    mechanism="Container without /dev/nvidia-caps on an NVSwitch node: NCCL's NVLS multicast allocation is refused "
    "and communicator init fails instead of falling back.",
    expect_kind="gap: no rule about NVLS multicast needing the capability devices in the container",
)

case(
    id="mscclpp-467-fabric-handle-without-imex-channel",
    url="https://github.com/microsoft/mscclpp/issues/467",
    cause="mscclpp allocates GPU buffers with cuMemCreate and CU_MEM_HANDLE_TYPE_FABRIC; the node had no IMEX channel "
    "device the user could access (/dev/nvidia-caps-imex-channels/channel0), so cuMemCreate failed with 'operation "
    "not permitted'.",
    established_by="maintainer quoted the CUDA driver API requirement (nvidia-caps-imex-channels device and at least "
    "one accessible IMEX channel file); the reporter created channel0 with mknod and confirmed 'That works!'",
    fix="create /dev/nvidia-caps-imex-channels/channel0 (mknod with the major number from /proc/devices) and make it "
    "accessible in the container, or do not request fabric handles",
    seen="GpuBuffer cuMemCreate failed: operation not permitted",
    image={"profile": "no-rdma-userspace", "reference": "mscclpp (February 2025, CUDA 12)"},
    node={
        "name": "gpu-node",
        "gpu": {"driver_version": "560.35.03", "gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")},
    },
    assumptions=[
        "the node's GPUs (8x H100) and driver 560.35.03 are illustrative; the thread names neither",
        "the missing IMEX channel device is not a node fact imgcheck reads",
    ],
    expect=[],
    must_not=["NODE-CTK-LEGACY-IMEX"],
    mechanism="Fabric-handle GPU allocation (cuMemCreate with CU_MEM_HANDLE_TYPE_FABRIC) without an accessible IMEX "
    "channel: the driver refuses it (EPERM).",
    expect_kind="gap: no rule about IMEX channel devices for fabric handles",
)

# ================================================================ NCCL releases
case(
    id="coreweave-ml-containers-10-nccl-2.7.8-a100-80gb-nvlink",
    url="https://github.com/coreweave/ml-containers/pull/10",
    cause="The gpt-neox MPI image (older CUDA base, older torch and apex, NCCL 2.7.8) failed with 'unhandled system "
    "error, NCCL version 2.7.8' whenever a worker ran on the cluster's A100 80GB NVLink nodes; rebuilding on torch "
    "1.13.1+cu117 (a newer NCCL) removed the error on those nodes.",
    established_by="merged PR by the image maintainer: before/after on the same named nodes (g9963e2, g99645a)",
    fix="rebuild the image on a current CUDA/torch (newer NCCL)",
    seen="NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:825, unhandled system error, NCCL version 2.7.8",
    image={
        "profile": "rdma-core-33-mlx5",
        "reference": "coreweave gpt-neox-mpi (before January 2023)",
        "nccl": [
            {
                "version": "2.7.8",
                "origin": "library",
                "path": "/usr/local/lib/python3.8/dist-packages/torch/lib/libnccl.so.2",
            }
        ],
        "cuda": {"version": "11.1.1", "origin": "env", "path": "image config Env"},
    },
    node={
        "name": "g9963e2",
        "gpu": {"driver_version": "515.65.01", "gpus": gpus("NVIDIA A100-SXM4-80GB", 8, "datacenter")},
        "rdma": {"devices": mlx5(8)},
    },
    working={
        "image": {
            "nccl": [
                {
                    "version": "2.14.3",
                    "origin": "library",
                    "path": "/usr/local/lib/python3.8/dist-packages/torch/lib/libnccl.so.2",
                }
            ],
            "cuda": {"version": "11.7.1", "origin": "env", "path": "image config Env"},
        },
        "absent": [],
    },
    assumptions=[
        "CUDA 11.1.1 for the old image and 11.7.1 / NCCL 2.14.3 for the rebuilt one (torch 1.13.1+cu117) are "
        "illustrative; the PR names only 'an older CUDA base image' and NCCL 2.7.8",
        "the node's driver 515.65.01 and its 8 InfiniBand HCAs are illustrative; the PR says A100 80GB NVLink nodes",
        "the image's RDMA userspace is the stock rdma-core 33 profile",
    ],
    expect=[],
    must_not=["CUDA-DRIVER-TOO-OLD"],
    mechanism="Old NCCL release (2.7.8) fails init on A100-80GB NVLink nodes; a newer NCCL works on the same nodes.",
    expect_kind="release: an old NCCL fails on this platform (no specific defect named)",
    sealed_source="issues (merged PR)",
)

# ================================================================ node configuration
case(
    id="nccl-328-dev-shm-permission-denied",
    url="https://github.com/NVIDIA/nccl/issues/328",
    cause="/dev/shm on the node did not allow the user to create files, so NCCL's shm_open failed with 'Permission "
    "denied' while setting up the SHM transport between the 4 GPUs, and init ended in 'unhandled system error'.",
    established_by="reporter's verified fix: 'sudo chmod 777 /dev/shm and the problem is gone'; maintainer explains "
    "shm_open's failure reason is what NCCL prints",
    fix="restore /dev/shm to mode 1777 (tmpfs default), or NCCL_SHM_DISABLE=1 at a bandwidth cost",
    seen="include/shm.h:27 NCCL WARN Call to shm_open failed : Permission denied",
    image={
        "profile": "no-rdma-userspace",
        "reference": "PyTorch 1.2 environment",
        "nccl": [
            {"version": "2.4.8", "origin": "library", "path": "/usr/lib/python3.6/site-packages/torch/lib/libnccl.so.2"}
        ],
    },
    node={"name": "node08", "gpu": {"gpus": gpus("Tesla V100-SXM2-16GB", 4, "datacenter")}},
    job={"runtime": "bare-metal", "kind": "python", "ranks_per_node": 4},
    assumptions=[
        "NCCL 2.4.8 is the version PyTorch 1.2 wheels bundled; the thread names PyTorch 1.2 only",
        "the GPU model is illustrative (4 GPUs in one node per the thread)",
        "/dev/shm's mode is not a node fact imgcheck reads",
    ],
    expect=[],
    must_not=["JOB-SHM-TOO-SMALL"],
    mechanism="/dev/shm not writable for the user: NCCL's SHM segment creation fails (EACCES) and init aborts.",
    expect_kind="gap: /dev/shm permissions are not a node fact",
)

case(
    id="ucx-3545-cma-ptrace-scope",
    url="https://github.com/openucx/ucx/issues/3545",
    cause="On Ubuntu 18.04 the Yama LSM default kernel.yama.ptrace_scope=1 forbids process_vm_readv between sibling "
    "MPI ranks; Open MPI 4.0.1 over UCX 1.5.1 used UCX's CMA transport for intra-node messages and failed with "
    "'process_vm_readv delivered 0 ... Operation not permitted' (LAMMPS, ESKM).",
    established_by="reporter's verified fix (sysctl -w kernel.yama.ptrace_scope=0, persistent in "
    "/etc/sysctl.d/10-ptrace.conf) and the UCX maintainer's answer that UCX 1.6 handles it (#3205)",
    fix="set kernel.yama.ptrace_scope=0, or use UCX >= 1.6, or exclude the cma transport (UCX_TLS=^cma)",
    seen="process_vm_readv delivered 0 instead of 480960, error message Operation not permitted",
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "Open MPI 4.0.1 + UCX 1.5.1 built from source (Ubuntu 18.04 host userland)",
        "ucx": {"version": "1.5.1", "path": "/usr/local/lib/libucp.so.0"},
    },
    node={"name": "ubuntu1804-node", "os": {"id": "ubuntu", "version_id": "18.04"}, "rdma": {"devices": mlx5(1)}},
    job={"runtime": "bare-metal", "kind": "mpirun"},
    working={"image": {"ucx": {"version": "1.6.0", "path": "/usr/local/lib/libucp.so.0"}}, "absent": []},
    assumptions=[
        "the RDMA userspace is the stock rdma-core 39 profile and the node's one mlx5 HCA is illustrative (the thread "
        "says 'single node or multiple node runs' work for many codes)",
        "the UCX library path is illustrative; kernel.yama.ptrace_scope is not a node fact imgcheck reads",
    ],
    expect=[],
    must_not=["MEMLOCK-TOO-LOW"],
    mechanism="Yama ptrace_scope=1 forbids cross-process memory access: UCX's CMA transport fails between ranks on "
    "one node (UCX < 1.6 does not check).",
    expect_kind="gap: ptrace_scope / CMA permission is not a node fact",
)

case(
    id="gpu-operator-155-driver-container-custom-kernel",
    url="https://github.com/NVIDIA/gpu-operator/issues/155",
    cause="The GPU Operator's CentOS 7 driver container builds the NVIDIA module against kernel-headers/kernel-devel "
    "packages from the distribution's repositories; on nodes running a kernel that is not in those repositories "
    "(kernel-ml 4.19.12-1.el7, or a kernel older than the repositories' current one) it cannot find them and loops "
    "on 'Could not resolve Linux kernel version'.",
    established_by="two users' verified workarounds in the thread: a driver image rebuilt to install "
    "kernel-ml-headers/devel works on the kernel-ml node, and updating the node (dnf upgrade, so its kernel matches "
    "the repositories) fixes it on another",
    fix="run a kernel whose headers the driver container can install (the distribution's current kernel), or build a "
    "driver image that installs the matching headers, or preinstall the driver on the host",
    seen="Could not resolve Linux kernel version",
    image={"profile": "no-rdma-userspace", "reference": "nvcr.io/nvidia/driver:460.32.03-centos7"},
    node={
        "name": "centos7-gpu",
        "os": {"id": "centos", "version_id": "7"},
        "kernel": {"release": "4.19.12-1.el7.elrepo.x86_64"},
        "gpu": {"gpus": gpus("Tesla T4", 1, "datacenter")},
        "cluster_components": {"gpu-operator": "v1.7.0"},
    },
    job={"runtime": "kubernetes", "kind": "DaemonSet", "workload": "nvidia-driver-daemonset"},
    assumptions=[
        "the kernel release string's elrepo suffix and the T4 GPU are illustrative (the thread says kernel-ml "
        "4.19.12-1.el7 on CentOS 7.6)",
        "gpu-operator v1.7.0 is from a commenter ('happens also on gpu-operator v1.7.0')",
    ],
    expect=[],
    must_not=["NODE-DRIVER-USERSPACE-MISMATCH"],
    mechanism="Driver container cannot get kernel headers for the node's kernel (not in the distro repositories): the "
    "operator-managed driver never builds.",
    expect_kind="gap: no rule about the driver container's kernel-header availability",
)

# ================================================================ negatives
case(
    id="ompi-14086-ucx-osc-priority-message-tcp-only-negative",
    url="https://github.com/open-mpi/ompi/issues/14086",
    cause="(negative) In a container where UCX is installed but only TCP is available, Open MPI's osc/ucx component "
    "prints 'OSC UCX component priority set inside component query failed' for mpi4py tests; the maintainer's "
    "analysis: a normal outcome when UCX has no transport with the needed RMA/AMO features, the one-sided component "
    "just disqualifies itself; MPI runs over TCP.",
    established_by="Open MPI maintainer (bosilca) analysis in the thread; a simple MPI ring program runs without the "
    "message",
    fix="none needed (the message is noise); the thread proposes quieting it",
    seen="osc_ucx_component.c:379  Error: OSC UCX component priority set inside component query failed",
    image={
        "profile": "no-rdma-userspace",
        "reference": "Open MPI main (June 2026) with external UCX, Ubuntu container",
        "ucx": {"version": "1.19.0", "path": "/usr/lib/x86_64-linux-gnu/libucp.so.0"},
    },
    node={"name": "ubuntu-ci", "os": {"id": "ubuntu", "version_id": "24.04"}},
    job={"runtime": "docker", "kind": "docker run"},
    assumptions=[
        "the UCX version and library path are illustrative; the thread says 'UCX libraries are installed, but only "
        "TCP is available'",
        "the node has no RDMA devices (network type: TCP per the thread)",
    ],
    expect=[],
    must_not=["UCX-NO-IB-TRANSPORT", "UCX-TLS-NO-INTERNODE"],
    mechanism="(negative) UCX without RDMA transports in a TCP-only container: Open MPI's one-sided UCX component "
    "declines with a noisy message, MPI works over TCP.",
    expect_kind="negative: nothing should be reported at error severity",
)


# ================================================================ Slurm + Pyxis/enroot, container runtime on the node
case(
    id="pyxis-96-docker-export-drops-nvidia-env",
    url="https://github.com/NVIDIA/pyxis/issues/96",
    cause="The squashfs was made from a 'docker export' of the mlperf image, which drops the image's Env "
    "(NVIDIA_VISIBLE_DEVICES, NVIDIA_DRIVER_CAPABILITIES); under srun --container-image enroot's NVIDIA hook then "
    "injected no driver, so nvidia-smi found no libnvidia-ml.so inside the container (bind-mounting nvidia-smi did "
    "not help).",
    established_by="Pyxis maintainer's diagnosis (flx42): docker export removed NVIDIA_VISIBLE_DEVICES and "
    "NVIDIA_DRIVER_CAPABILITIES; set them on srun and drop the nvidia-smi bind mount, the enroot hook handles it",
    fix="NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute,utility srun ... (or import the image with "
    "enroot import so its Env is kept)",
    seen="NVIDIA-SMI couldn't find libnvidia-ml.so library in your system.",
    image={
        "profile": "no-rdma-userspace",
        "reference": "mlperf-nvidia:language_model via docker export -> out.squashfs",
        "env": {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
    },
    node={"name": "slurm-gpu", "gpu": {"gpus": gpus("NVIDIA A100-SXM4-80GB", 8, "datacenter")}},
    job={"runtime": "slurm", "kind": "srun --container-image", "gpus": 1, "gpus_setting": "--gres=gpu:1"},
    working={
        "job": {"env": {"NVIDIA_VISIBLE_DEVICES": "all", "NVIDIA_DRIVER_CAPABILITIES": "compute,utility"}},
        "absent": ["JOB-ENROOT-NO-GPU-DRIVER"],
    },
    assumptions=[
        "the image Env after docker export is modelled with PATH only (docker export keeps no Env at all)",
        "the node's GPUs (8x A100) and the GPU request are illustrative; the thread's srun line has --ntasks=1 only",
    ],
    expect=[{"id": "JOB-ENROOT-NO-GPU-DRIVER", "severity": "error"}],
    must_not=["CUDA-DRIVER-TOO-OLD", "NODE-DRIVER-USERSPACE-MISMATCH"],
    mechanism="Image without NVIDIA_VISIBLE_DEVICES (lost in docker export) started by Pyxis/enroot: the NVIDIA hook "
    "injects no driver.",
    expect_kind="launch rule: enroot's hook sees no NVIDIA_VISIBLE_DEVICES",
)

case(
    id="pyxis-47-slurm-without-constraindevices-cuda-visible-devices",
    url="https://github.com/NVIDIA/pyxis/issues/47",
    cause="Slurm on the node used the CUDA_VISIBLE_DEVICES approach (no ConstrainDevices in cgroup.conf): a job "
    "given a GPU other than the first kept the host index in CUDA_VISIBLE_DEVICES, while the Pyxis/enroot container "
    "exposed only the allocated GPU's device node, so CUDA inside found no device ('no CUDA-capable device is "
    "detected').",
    established_by="reporter's verified fix: adding ConstrainDevices=yes to cgroup.conf, tested for several GPU "
    "counts and concurrent jobs; the Pyxis maintainer closed it as fixed",
    fix="ConstrainDevices=yes in Slurm's cgroup.conf (GPUs isolated by cgroup, CUDA_VISIBLE_DEVICES renumbered from 0)",
    seen="no CUDA-capable device is detected",
    image={"profile": "no-rdma-userspace", "reference": "NGC container via srun --container-image"},
    node={"name": "slurm-8gpu", "gpu": {"gpus": gpus("NVIDIA A100-SXM4-40GB", 8, "datacenter")}},
    job={
        "runtime": "slurm",
        "kind": "srun --container-image",
        "gpus": 1,
        "gpus_setting": "--gres=gpu:1",
        "env": {"CUDA_VISIBLE_DEVICES": "3"},
    },
    working={"job": {"env": {"CUDA_VISIBLE_DEVICES": "0"}}, "absent": ["ENV-CUDA-VISIBLE-DEVICES-ORDINAL"]},
    assumptions=[
        "CUDA_VISIBLE_DEVICES=3 is illustrative of 'a GPU other than the first'; the thread reports the failure for "
        "several GPU combinations and concurrent jobs",
        "the GPU model and count (8 per node, per the maintainer's /dev/nvidia{0..7}) are illustrative",
        "the mechanism (host index kept while the container sees only the allocated GPU) is read from the "
        "maintainer's remark; the thread establishes the fix, ConstrainDevices=yes",
    ],
    expect=[{"id": "ENV-CUDA-VISIBLE-DEVICES-ORDINAL", "severity": "error"}],
    must_not=["CUDA-DRIVER-TOO-OLD", "JOB-ENROOT-NO-GPU-DRIVER"],
    mechanism="Slurm without ConstrainDevices passes the host GPU index in CUDA_VISIBLE_DEVICES while the container "
    "holds only that GPU (renumbered 0): CUDA sees no device.",
    expect_kind="env rule: CUDA_VISIBLE_DEVICES names an ordinal past the GPUs the process sees",
)

case(
    id="nvidia-docker-1650-nvml-unknown-error-after-daemon-reload",
    url="https://github.com/NVIDIA/nvidia-docker/issues/1650",
    cause="On nodes with kernel 5.10.23 and systemd 239 managing the containers' cgroups (containerd), a "
    "'systemctl daemon-reload' made systemd rewrite the container's device cgroup to 'c 195:* m', dropping the "
    "rw access runc had granted to /dev/nvidia*; nvidia-smi in the running container then failed with 'Failed to "
    "initialize NVML: Unknown Error' (kernel 4.19.91 with systemd 219 did not).",
    established_by="reporter's bpftrace trace in the thread showing systemd rewriting the device rules, and the "
    "device cgroup's devices.list before/after daemon-reload",
    fix="recreate the container; avoid systemd re-applying device rules (cgroupfs driver, or the /dev/char symlinks "
    "NVIDIA later documented)",
    seen="Failed to initialize NVML: Unknown Error",
    image={"profile": "no-rdma-userspace", "reference": "any CUDA container"},
    node={
        "name": "k8s-gpu-node",
        "kernel": {"release": "5.10.23"},
        "gpu": {"gpus": gpus("Tesla V100-SXM2-16GB", 1, "datacenter")},
    },
    job={"runtime": "kubernetes", "kind": "Pod", "resources": {"nvidia.com/gpu": "1"}, "gpus": 1},
    assumptions=[
        "the GPU model is illustrative; the thread names the kernel (5.10.23), systemd 239 and containerd",
        "systemd's cgroup management of the container is not a node fact imgcheck reads",
    ],
    expect=[],
    must_not=["NODE-DRIVER-USERSPACE-MISMATCH", "CUDA-DRIVER-TOO-OLD"],
    mechanism="systemd daemon-reload re-applies the container's device cgroup without the NVIDIA devices: the running "
    "container loses its GPUs (NVML Unknown Error).",
    expect_kind="gap: systemd device-cgroup handling is not a node fact",
)


case(
    id="calico-8482-roce-shared-rdma-pod-without-roce-netdev",
    url="https://github.com/projectcalico/calico/issues/8482",
    cause="Pods got the node's RoCE HCAs through the k8s-rdma-shared-dev-plugin but their only network was Calico's "
    "(a veth, not a device of the RoCE NIC); RoCE GIDs follow the network devices of the pod's namespace, so every "
    "GID was zero inside the pod and no RoCE v2 connection could be set up (ib_write_bw: Failed to modify QP to RTR). "
    "With the same plugin and a macvlan secondary network on the RoCE NIC, the test works; on InfiniBand both work.",
    established_by="reporter's A/B in the thread (Ethernet link + Calico fails, Ethernet + macvlan works, IB works "
    "with either), following the plugin maintainer's diagnosis on k8s-rdma-shared-dev-plugin#72 ('your GIDs are "
    "zero; are you using macvlan as secondary network?')",
    fix="give the pod a network device of the RoCE NIC (Multus + macvlan/ipvlan on it, or SR-IOV VFs), or hostNetwork",
    seen="Failed to modify QP 59 to RTR",
    image={"profile": "rdma-core-39-mlx5", "reference": "mofed/perftest test image"},
    node={
        "name": "roce-node",
        "rdma": {
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
                            "netdev": "ens3f0",
                            "gids": [
                                {
                                    "index": 0,
                                    "type": "IB/RoCE v1",
                                    "netdev": "ens3f0",
                                    "gid": "fe80:0000:0000:0000:0e42:a1ff:fe00:0001",
                                },
                                {
                                    "index": 1,
                                    "type": "RoCE v2",
                                    "netdev": "ens3f0",
                                    "gid": "fe80:0000:0000:0000:0e42:a1ff:fe00:0001",
                                },
                                {
                                    "index": 2,
                                    "type": "IB/RoCE v1",
                                    "netdev": "ens3f0",
                                    "gid": "0000:0000:0000:0000:0000:ffff:0a38:d949",
                                },
                                {
                                    "index": 3,
                                    "type": "RoCE v2",
                                    "netdev": "ens3f0",
                                    "gid": "0000:0000:0000:0000:0000:ffff:0a38:d949",
                                },
                            ],
                        }
                    ],
                }
            ]
        },
    },
    job={
        "runtime": "kubernetes",
        "kind": "Pod",
        "cap_add": ["IPC_LOCK"],
        "host_network": False,
        "resources": {"rdma/hca_shared_devices_a": "1"},
    },
    assumptions=[
        "the node's GID table (host namespace) and addresses are illustrative; the thread shows only that all GIDs "
        "are zero inside the pod",
        "calico version 3.24.5 (from the thread) is not modelled; the pod has no pod_networks",
        "the resource name rdma/hca_shared_devices_a is the plugin's example name",
    ],
    expect=[],
    must_not=["JOB-NO-IPC-LOCK", "MEMLOCK-TOO-LOW"],
    mechanism="RoCE HCA shared into a pod whose only network is the CNI's veth: the pod namespace has no RoCE GIDs, "
    "so QPs cannot be connected.",
    expect_kind="gap: no rule that a RoCE pod needs a netdev of the NIC in its namespace",
)


case(
    id="gpu-operator-8-driver-container-blocked-by-nouveau",
    url="https://github.com/NVIDIA/gpu-operator/issues/8",
    cause="The GPU Operator's driver container (418.87.01, Ubuntu 18.04 kernel 4.15.0-66-generic) could not install "
    "the NVIDIA kernel modules while the host had the nouveau driver loaded; the daemonset kept failing with "
    "\"ERROR: Unable to open 'kernel/dkms.conf' for copying\".",
    established_by="reporter's verified fix in the thread: installation completed after blacklisting nouveau "
    "(modeset=0) and updating the initramfs",
    fix="blacklist nouveau on GPU nodes (modprobe.d + update-initramfs, reboot) before deploying the operator's "
    "driver container",
    seen="ERROR: Unable to open 'kernel/dkms.conf' for copying (No such file or directory)",
    image={"profile": "no-rdma-userspace", "reference": "nvidia/driver:418.87.01-ubuntu18.04"},
    node={
        "name": "k8s-gpu-worker",
        "os": {"id": "ubuntu", "version_id": "18.04"},
        "kernel": {"release": "4.15.0-66-generic"},
        "gpu": {"gpus": gpus("Tesla V100-PCIE-16GB", 1, "datacenter")},
        "cluster_components": {"gpu-operator": "v1.0.0"},
    },
    job={"runtime": "kubernetes", "kind": "DaemonSet", "workload": "nvidia-driver-daemonset"},
    assumptions=[
        "the GPU model and the operator version (1.0.0, November 2019) are illustrative",
        "whether nouveau is loaded is not a node fact imgcheck reads",
    ],
    expect=[],
    must_not=["NODE-DRIVER-USERSPACE-MISMATCH"],
    mechanism="nouveau holds the GPU on the host: the operator's driver container cannot install/load the NVIDIA "
    "module.",
    expect_kind="gap: no rule about nouveau blocking the NVIDIA kernel module",
)


# ================================================================ added late: MPI stack vs OFED, framework defaults, launch specs
case(
    id="nccl-tests-200-hpcx-2.17-on-mlnx-ofed-5.8-hang",
    url="https://github.com/NVIDIA/nccl-tests/issues/200",
    cause="Two bare-metal 8-GPU InfiniBand NDR nodes with MLNX_OFED 5.8-1.1.2.1 ran nccl-tests (NCCL 2.19.3) under "
    "mpirun from HPC-X 2.17.1 (the CUDA 12 'mlnx_ofed' build); the multi-node test hung. HPC-X 2.17.1 is newer "
    "than the node's MLNX_OFED; with HPC-X 2.14, chosen to match the MLNX_OFED version, the same test ran.",
    established_by="reporter's verified fix in the thread: 'After downgrading HPC-X to HPC-X version 2.14 according "
    "to the version of MLNX OFED, I tried NCCL-test and it worked well'",
    fix="use the HPC-X release built for the node's MLNX_OFED (here 2.14 for 5.8), or upgrade MLNX_OFED to what the "
    "HPC-X release was built for",
    seen=None,
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "bare-metal software stack: HPC-X 2.17.1-CUDA12.x-LTS (mlnx_ofed, Ubuntu 22.04), NCCL "
        "2.19.3-cuda12.2, CUDA 12.2",
        "rdma": {
            "flavor": "mlnx_ofed",
            "ofed_version": "5.8-1.1.2.1",
            "libibverbs": {"version": "1.14.58mlnx43", "rdma_core": "58mlnx43"},
        },
        "hpcx": {"version": "2.17.1", "path": "/opt/hpcx"},
        "ucx": {"version": "1.16.0", "origin": "hpcx", "path": "/opt/hpcx/ucx/lib/pkgconfig/ucx.pc"},
        "nccl": [{"version": "2.19.3", "origin": "library", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.19.3"}],
    },
    node={
        "name": "ndr-node",
        "os": {"id": "ubuntu", "version_id": "22.04"},
        "kernel": {"release": "5.15.0-25-generic"},
        "rdma": {"stack": "mlnx_ofed", "ofed_version": "5.8-1.1.2.1", "devices": mlx5(8)},
        "gpu": {"driver_version": "535.86.10", "gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")},
    },
    job={
        "runtime": "mpirun",
        "kind": "mpirun",
        "ranks_per_node": 1,
        "ranks_setting": "mpirun -np 2 -H host1,host2",
        "env": {"NCCL_CUMEM_ENABLE": "1", "NCCL_IB_HCA": "mlx5", "NCCL_DEBUG": "INFO"},
    },
    working={"image": {"hpcx": {"version": "2.14"}, "ucx": {"version": "1.14.0"}}, "absent": []},
    assumptions=[
        "this is a bare-metal stack, not a container: the 'image' models the software the job ran with",
        "the libibverbs version string (MLNX_OFED 5.8's rdma-core 58mlnx43) and the UCX versions (1.16.0 in HPC-X "
        "2.17.1, 1.14.0 in HPC-X 2.14) are derived from the release contents, not stated in the thread",
        "the GPU model (H100) and the number of HCAs (8) are illustrative; the thread says 8 GPUs per node, "
        "InfiniBand NDR",
        "the NCCL library path is illustrative (the Ubuntu package location); the thread names NCCL 2.19.3-cuda12.2_1.0-1",
        "HPC-X's build target (MLNX_OFED release) is not a fact imgcheck reads",
    ],
    expect=[],
    must_not=["CUDA-DRIVER-TOO-OLD", "MEMLOCK-TOO-LOW"],
    mechanism="HPC-X (MPI/UCX) release newer than the node's MLNX_OFED: the multi-node NCCL test launched with its "
    "mpirun hangs; the HPC-X release matched to the OFED works.",
    expect_kind="gap: no rule compares the HPC-X release with the MLNX_OFED release it was built for",
)

case(
    id="vllm-26525-v0.11.0-symm-mem-allreduce-default-tp2",
    url="https://github.com/vllm-project/vllm/issues/26525",
    cause="The vllm/vllm-openai:v0.11.0 image turned VLLM_ALLREDUCE_USE_SYMM_MEM on by default (PyTorch "
    "symmetric-memory all-reduce); serving gpt-oss-120b with --tensor_parallel_size=2 then failed at start with "
    "'RuntimeError: CUDA driver error: invalid device ordinal'. TP=1 started; setting VLLM_ALLREDUCE_USE_SYMM_MEM=0 "
    "made TP=2 work as on v0.10.2. vLLM later disabled the default again (PR #26925, for another symmetric-memory "
    "rendezvous failure).",
    established_by="reporter's verified fix (VLLM_ALLREDUCE_USE_SYMM_MEM=0) with the v0.10.2 vs v0.11.0 comparison; "
    "the maintainers' merged PR #26925 'Temporally Disable VLLM_ALLREDUCE_USE_SYMM_MEM by Default'",
    fix="VLLM_ALLREDUCE_USE_SYMM_MEM=0 in the container's environment, or a vLLM release where it is off by default",
    seen="RuntimeError: CUDA driver error: invalid device ordinal",
    image={
        "profile": "no-rdma-userspace",
        "reference": "vllm/vllm-openai:v0.11.0",
        "env": {
            "PATH": "/usr/local/nvidia/bin:/usr/local/cuda/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        },
    },
    node={"name": "gpu-server", "gpu": {"gpus": gpus("NVIDIA H100 80GB HBM3", 2, "datacenter")}},
    job={"runtime": "docker", "kind": "docker run", "gpus": -1},
    working={"job": {"env": {"VLLM_ALLREDUCE_USE_SYMM_MEM": "0"}}, "absent": []},
    assumptions=[
        "the GPU model and count are illustrative; the thread gives the image, the model and TP=2 only",
        "the launch (docker run with all GPUs) is illustrative; the thread lists serve args only",
        "vLLM's default for VLLM_ALLREDUCE_USE_SYMM_MEM is in its Python code, not in the image's environment",
    ],
    expect=[],
    must_not=["CUDA-DRIVER-TOO-OLD", "ENV-CUDA-VISIBLE-DEVICES-ORDINAL"],
    mechanism="A serving framework release turns on symmetric-memory all-reduce by default; with tensor parallelism "
    "its setup fails ('invalid device ordinal') until the setting is turned off.",
    expect_kind="gap: framework default (vLLM symmetric memory) not modelled",
)

case(
    id="skyrl-143-weight-sync-nccl-cumem-mismatch-with-vllm",
    url="https://github.com/NovaSky-AI/SkyRL/pull/143",
    cause="SkyRL's trainer ranks and the vLLM engine's workers joined one NCCL communicator for weight sync; vLLM's "
    "workers ran with NCCL_CUMEM_ENABLE=0 (vLLM set it), the trainer processes with NCCL's default, and the "
    "weight sync failed (non-colocated, local vLLM engine, NCCL weight_sync_backend, any TP size). Setting "
    "NCCL_CUMEM_ENABLE=0 for every process fixed it.",
    established_by="merged PR by the maintainer: 'This is because vLLM sets NCCL_CUMEM_ENABLE=0, and we need to match "
    "that' (vLLM's troubleshooting doc, known issues); later SkyRL PRs #1600/#1629 trace the underlying NCCL issue "
    "and keep the setting",
    fix="set NCCL_CUMEM_ENABLE to the same value in every process of the weight-sync communicator (here 0, as vLLM "
    "did)",
    seen=None,
    image={"profile": "no-rdma-userspace", "reference": "SkyRL training image with vLLM (August 2025)"},
    node={"name": "gpu-node", "gpu": {"gpus": gpus("NVIDIA H100 80GB HBM3", 4, "datacenter")}},
    job={"runtime": "ray", "kind": "ray job", "gpus": 4},
    working={"job": {"env": {"NCCL_CUMEM_ENABLE": "0"}}, "absent": []},
    assumptions=[
        "the node (4x H100, as in the PR's test run) and the Ray job shape are illustrative",
        "the error text is in a gist the PR links, not in the thread; seen is null",
        "that vLLM set NCCL_CUMEM_ENABLE=0 in its own workers (not in the image's environment) is as the PR states",
    ],
    expect=[],
    must_not=["REG-CUMEM-VMM-GDR"],
    mechanism="Ranks of one NCCL communicator run with different NCCL_CUMEM_ENABLE (a framework sets it in its own "
    "workers only): the cross-process weight sync fails until every process uses the same setting.",
    expect_kind="gap: per-process NCCL settings inside one communicator are not modelled",
)

case(
    id="aws-do-eks-49-hostnetwork-hostname-i-empty-ray-worker-wrong-ip",
    url="https://github.com/aws-samples/aws-do-eks/pull/49",
    cause="In a LeaderWorkerSet with hostNetwork: true on EKS, the Ray worker computed its IP with 'hostname -i', "
    "which returned nothing; 'ray start --node-ip-address=\"\"' then auto-detected and bound the raylet to a "
    "secondary interface (172.16.89.194) while the head/GCS was on the primary VPC CIDR (10.1.x); the head could "
    "not route back, registration timed out and the cluster never reached 2 nodes.",
    established_by="merged PR with the root cause traced in the combined pod log; the fix resolves MY_IP with "
    "'ip route get $LEADER_IP' (the source address toward the leader)",
    fix="derive the node IP from the route to the leader (ip route get), or pass the primary-interface address "
    "explicitly; do not rely on hostname resolution under hostNetwork",
    seen="Exception: The current node timed out during startup ... raylet failed to startup",
    image={"profile": "efa-installer", "reference": "vLLM + Ray serving image (nemotron agg LWS, August 2026)"},
    node={
        "name": "eks-gpu-node",
        "gpu": {"gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")},
        "hostname_in_hosts": "none",
    },
    job={
        "runtime": "kubernetes",
        "kind": "LeaderWorkerSet",
        "role": "worker",
        "host_network": True,
        "gpus": 8,
        "resources": {"nvidia.com/gpu": "8"},
    },
    assumptions=[
        "the GPU model is illustrative; the PR names TP16/PP2 over 2 nodes (8 GPUs each)",
        "hostname_in_hosts 'none' models 'hostname -i returned empty' under hostNetwork",
        "the EFA-installer image profile is illustrative (an EKS GPU serving image); the failure does not involve EFA",
        "the node's second interface (172.16.x) and the primary VPC interface (10.1.x) are not modelled as interfaces",
    ],
    expect=[],
    must_not=["EFA-NO-OFI-PLUGIN", "JOB-RDMA-DEVICES-NOT-EXPOSED"],
    mechanism="Under hostNetwork the pod's host name does not resolve, so the Ray worker advertises an address on "
    "a secondary interface the head cannot reach: the worker never registers.",
    expect_kind="gap or launch rule: hostNetwork + host-name-based address selection (Ray, not NCCL/Gloo)",
)

case(
    id="club-3090-633-cuda-13.2-image-on-580-geforce-forward-compat",
    url="https://github.com/noonghunna/club-3090/issues/633",
    cause="The digest-pinned ik-llama image is a CUDA 13.2 runtime build; on an RTX 3090 host with driver 580.159.03 "
    "(supported CUDA 13.0) CUDA took the forward-compatibility path, which GeForce GPUs do not support, so CUDA "
    "failed to initialise with error 804, the server fell back to CPU and crash-looped. The same build compiled "
    "against CUDA 12.6 (cu12-server-4574) ran on that driver.",
    established_by="reporter's A/B with the CUDA 12.6 sibling build of the same commit, and the maintainer's merged "
    "fix PR #640 (driver-aware cu13/cu12 image selection, documented requirement CUDA >= 13.2)",
    fix="use the CUDA 12.x build of the image on drivers whose CUDA is below 13.2, or upgrade the driver to one that "
    "supports CUDA 13.2",
    seen="ggml_cuda_init: failed to initialize CUDA: forward compatibility was attempted on non supported HW",
    image={
        "profile": "no-rdma-userspace",
        "reference": "ghcr.io/ikawrakow/ik-llama-cpp@sha256:5f914f1c... (build 4574, CUDA 13.2 runtime)",
        "cuda": {
            "version": "13.2.0",
            "origin": "env CUDA_VERSION",
            "path": "image config Env",
            "compat_driver": "595.45.04",
            "compat_path": "/usr/local/cuda/compat/libcuda.so.595.45.04",
        },
        "env": {"CUDA_VERSION": "13.2.0"},
    },
    node={
        "name": "club-3090-rig",
        "gpu": {"driver_version": "580.159.03", "gpus": gpus("NVIDIA GeForce RTX 3090", 1, "consumer")},
    },
    job={"runtime": "docker", "kind": "compose", "gpus": 1},
    working={
        "image": {
            "profile": "no-rdma-userspace",
            "cuda": {
                "version": "12.6.3",
                "origin": "env CUDA_VERSION",
                "path": "image config Env",
                "compat_driver": None,
            },
            "env": {"CUDA_VERSION": "12.6.3"},
        },
        "absent": ["CUDA-FORWARD-COMPAT-UNSUPPORTED-GPU", "CUDA-DRIVER-TOO-OLD"],
    },
    assumptions=[
        "the image's forward-compat libcuda (CUDA 13.2's cuda-compat, version 595.45.04 and its path) is inferred: "
        "error 804 is raised only by a forward-compat libcuda; the thread states the CUDA 13.2 runtime, not the "
        "compat package",
        "CUDA_VERSION 13.2.0 / 12.6.3 are illustrative patch levels of the CUDA 13.2 and 12.6 builds the thread names",
        "one RTX 3090 (the reporter's '1x 3090') under docker compose; the GPU request is illustrative",
    ],
    expect=[{"id": "CUDA-FORWARD-COMPAT-UNSUPPORTED-GPU", "severity": "error"}],
    must_not=["NODE-DRIVER-USERSPACE-MISMATCH", "IMAGE-DRIVER-USERSPACE"],
    mechanism="CUDA 13.2 image on a driver that supports CUDA 13.0: the forward-compat libcuda is used, and GeForce "
    "GPUs do not support forward compatibility (error 804).",
    expect_kind="cuda_compat rule: forward-compat libcuda newer than the driver on a consumer GPU",
)

case(
    id="deepep-151-nvshmem-peermem-check-without-memory-peers",
    url="https://github.com/deepseek-ai/DeepEP/pull/151",
    cause="On H800 nodes with driver 550.54.15 and the nvidia_peermem module loaded, NVSHMEM (used by DeepEP for "
    "inter-node traffic) looked for peer memory only under /sys/kernel/mm/memory_peers/nv_mem{,_nc}/version, which "
    "these nodes do not have; it reported 'neither nv_peer_mem, or nvidia_peermem detected. Skipping transport.' "
    "and the IB transport was not used. Checking /sys/module/nvidia_peermem/version (as NCCL does) made internode, "
    "intranode and low-latency tests pass across nodes.",
    established_by="merged PR with the author's verified before/after on the same machines; the DeepEP maintainer "
    "merged it and forwarded it to the NVSHMEM team",
    fix="an NVSHMEM/DeepEP build whose peer-memory detection also accepts /sys/module/nvidia_peermem (the patch), or "
    "a node stack that creates /sys/kernel/mm/memory_peers (MLNX_OFED peer-memory API)",
    seen="neither nv_peer_mem, or nvidia_peermem detected. Skipping transport.",
    image={"profile": "rdma-core-39-mlx5", "reference": "DeepEP with its bundled/patched NVSHMEM (May 2025)"},
    node={
        "name": "h800-node",
        "rdma": {"devices": mlx5(8), "peer_memory_api": False},
        "gpu": {
            "driver_version": "550.54.15",
            "kernel_module": "proprietary",
            "peermem": {"loaded": True},
            "gpus": gpus("NVIDIA H800", 8, "datacenter"),
        },
    },
    job={"runtime": "docker", "kind": "docker run", "gpus": -1},
    assumptions=[
        "the RDMA devices (8x mlx5), the image profile and the launch are illustrative; the PR names the GPU (H800), "
        "the driver (550.54.15) and the loaded nvidia_peermem",
        "peer_memory_api False models the PR's 'there is not neither .../nv_mem/version nor .../nv_mem_nc/version'",
        "NVSHMEM's version and its peer-memory check are not image facts imgcheck reads",
    ],
    expect=[],
    must_not=["GDR-PEERMEM-MISSING", "NODE-PEERMEM-CONFIGURED-NOT-LOADED"],
    mechanism="NVSHMEM detects nvidia-peermem only through /sys/kernel/mm/memory_peers, which the node's stack does "
    "not create although the module is loaded: it skips its IB transport.",
    expect_kind="gap: the NVSHMEM analogue of NCCL's legacy memory_peers check is not modelled",
)

case(
    id="ompi-12717-hcoll-from-mlnx-ofed-cuda-mismatch-osu-collectives",
    url="https://github.com/open-mpi/ompi/issues/12717",
    cause="Open MPI 5.0.5 picked up the hcoll library installed with MLNX_OFED on the machines; OSU micro-benchmark "
    "collectives on CUDA buffers (osu_allreduce -d cuda) crashed inside mca_coll_hcoll_allreduce because hcoll "
    "failed to detect GPU memory: the CUDA on the system did not match the CUDA the (closed-source) hcoll was built "
    "for. With hcoll disabled the same runs worked.",
    established_by="Open MPI/UCX maintainer (yosefe): the error comes from hcoll failing to detect GPU memory, a CUDA "
    "version mismatch with the hcoll build; the reporter verified '-mca coll ^hcoll' works",
    fix="disable hcoll for CUDA-buffer collectives (-mca coll ^hcoll, or build Open MPI --without-hcoll), or use an "
    "HPC-X/MLNX_OFED whose hcoll matches the installed CUDA",
    seen=None,
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "bare-metal stack: Open MPI 5.0.5 (with hcoll from MLNX_OFED), OSU micro-benchmarks 7.4 built "
        "with CUDA",
        "rdma": {
            "flavor": "mlnx_ofed",
            "ofed_version": "5.8-3.0.7.0",
            "libibverbs": {"version": "1.14.58mlnx43", "rdma_core": "58mlnx43"},
        },
    },
    node={
        "name": "gpu02",
        "rdma": {"stack": "mlnx_ofed", "ofed_version": "5.8-3.0.7.0", "devices": mlx5(1)},
        "gpu": {"gpus": gpus("NVIDIA A100-PCIE-40GB", 2, "datacenter")},
    },
    job={"runtime": "mpirun", "kind": "mpirun", "ranks_per_node": 1, "ranks_setting": "mpirun -np 2 --map-by node"},
    working={"job": {"env": {"OMPI_MCA_coll": "^hcoll"}}, "absent": []},
    assumptions=[
        "this is a bare-metal stack, not a container: the 'image' models the software the job ran with",
        "the MLNX_OFED release (5.8-3.0.7.0), its libibverbs version, the GPU model and count are illustrative; the "
        "thread names Open MPI 5.0.5, OMB 7.4, hcoll (from MLNX_OFED per the maintainer) and a CUDA mismatch",
        "the working variant writes '-mca coll ^hcoll' as the equivalent environment variable OMPI_MCA_coll",
        "hcoll's CUDA build is not a fact imgcheck reads",
    ],
    expect=[],
    must_not=["CUDA-DRIVER-TOO-OLD", "UCX-NO-IB-TRANSPORT"],
    mechanism="The MPI's hcoll collectives library (closed source, from MLNX_OFED/HPC-X) was built for another CUDA: "
    "collectives on GPU buffers crash until hcoll is disabled.",
    expect_kind="gap: hcoll's CUDA build vs the installed CUDA is not modelled",
)

case(
    id="nixl-1110-image-ucx-tls-excludes-cuda-ipc-gb200",
    url="https://github.com/ai-dynamo/nixl/issues/1110",
    cause="The NIXL container built by contrib/build-container.sh --build-nixl-ep exported UCX_TLS=^cuda_ipc in its "
    "build script/environment; on a GB200 node the nixl_ep elastic benchmark (--nvlink-backend ipc) then failed "
    "with 'UCX ERROR failed to select lane for local device GPU0'. Unsetting UCX_TLS (or setting it to all) made "
    "the benchmark complete; the maintainers removed the UCX_TLS=^cuda_ipc export (PR #1099, #1169).",
    established_by="reporter's verified fix (unset UCX_TLS / UCX_TLS=all -> benchmark completes) and the merged PRs "
    "removing 'export UCX_TLS=^cuda_ipc' from the build script",
    fix="do not exclude cuda_ipc from UCX_TLS in the image (unset it, or list the transports needed including "
    "cuda_ipc) when NVLink transfers are wanted",
    seen="UCX  ERROR failed to select lane for local device GPU0",
    image={
        "profile": "rdma-core-39-mlx5",
        "platform": "linux/arm64",
        "reference": "NIXL container (contrib/build-container.sh --build-nixl-ep --arch aarch64, December 2025)",
        "env": {"UCX_TLS": "^cuda_ipc"},
        "ucx": {"version": "1.20.0", "origin": "ucx.pc", "path": "/usr/local/ucx/lib/pkgconfig/ucx.pc"},
    },
    node={"name": "gb200-node", "arch": "arm64", "gpu": {"gpus": gpus("NVIDIA GB200", 4, "datacenter")}},
    job={"runtime": "docker", "kind": "docker run", "gpus": -1},
    working={
        "image": {
            "profile": "rdma-core-39-mlx5",
            "platform": "linux/arm64",
            "ucx": {"version": "1.20.0", "origin": "ucx.pc", "path": "/usr/local/ucx/lib/pkgconfig/ucx.pc"},
        },
        "absent": [],
    },
    assumptions=[
        "the image env UCX_TLS=^cuda_ipc is as the reporter states ('out of the box, the project's docker image is "
        "created with UCX_TLS set to ^cuda_ipc'); that the build script's export lands in the image Env is assumed",
        "the UCX version (1.20.0) and its path are illustrative; the thread names no UCX version",
        "the rdma-core profile (linux/amd64 libraries) is reused with platform linux/arm64; the libraries' paths are "
        "not the aarch64 ones",
        "4 GB200 GPUs per node (the benchmark's --num-processes 4) and the docker launch are illustrative",
    ],
    expect=[],
    must_not=["UCX-NO-IB-TRANSPORT", "PLATFORM-ARCH-MISMATCH"],
    mechanism="The image's environment excludes UCX's cuda_ipc transport: an NVLink (GPU-to-GPU) UCX/NIXL transfer "
    "finds no lane for the GPU.",
    expect_kind="gap or env rule: UCX_TLS in the image removes the transport the job needs",
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
