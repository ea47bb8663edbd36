"""Build /work/sealed8/cases.json (the eighth sealed incident set) from the case list below.

Each case is in the format of the repo's tests/incidents/cases.json (loaded by tests/incidents/corpus.py), plus
`mechanism`, `expect_kind`, `sealed_source`, `cause`, `established_by`, `fix`, `seen`, `must_not`, `working`,
`assumptions`. Facts are as the thread states them; every fact added is listed in `assumptions`.

Collected 2026-12-07. Every source (owner/repo + issue/PR number) was checked with exclusion-check.sh against
`git -C /work/main grep` (whole tree, evaluation/ included), /work/shared, /work/sealed .. /work/sealed7,
/work/main/evaluation and bare '#N' in /work/main/src/imgcheck/data and /work/main/compat_matrix (files/lines naming
the upstream); see exclusion-check.txt (a candidate named in any earlier set's exclusion-check.txt counts as a hit).
No imgcheck rule was run to choose a case; docs/rules.md was read only to fill `expect` / `must_not` afterwards.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

DESCRIPTION = (
    "SEALED held-out incident set #8 for imgcheck: public threads nobody on the team had read (none of these URLs "
    "or issue numbers appears in the repo, in /work/shared or in /work/sealed .. /work/sealed7 when collected). Same "
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


def efa(names):
    return [{"name": n, "driver": "efa"} for n in names]


def pip_nccl(version, pyver="3.12", pkg="nvidia-nccl-cu12"):
    return [
        {
            "version": version,
            "origin": f"pip:{pkg}",
            "path": f"/usr/local/lib/python{pyver}/dist-packages/nvidia/nccl/lib/libnccl.so.2",
        }
    ]


P6_EFA = ["rdmap79s0", "rdmap80s0", "rdmap81s0", "rdmap82s0", "rdmap96s0", "rdmap97s0", "rdmap98s0", "rdmap99s0"]
P5EN_EFA = [f"rdmap{n}s0" for n in (79, 80, 81, 82, 96, 97, 98, 99, 112, 113, 114, 115, 128, 129, 130, 131)]


# ================================================================================ launch spec / cluster components
case(
    id="pyxis-123-pyxis-0.16-job-scoped-containers-epilog-drains-nodes",
    url="https://github.com/NVIDIA/pyxis/issues/123",
    cause="After upgrading pyxis from 0.15 to 0.16, the Slurm epilog (spank-epilog) ran enroot to list and clean "
    "up the job's pyxis containers; the enroot call failed ('mkdir: cannot create directory '/run/enroot': "
    "Permission denied'), spank_pyxis.so job_epilog() failed, the epilog returned non-zero and the nodes went to "
    "DRAIN. Rolling pyxis back to 0.15 avoided it.",
    established_by="pyxis maintainer (flx42) in the thread: 'It's due to this change: "
    "https://github.com/NVIDIA/pyxis/commit/aa901d9...' and 'With pyxis 0.16 you can undo this change by setting "
    "container_scope=global in the plugstack'",
    fix="set container_scope=global in pyxis's plugstack configuration (restores the 0.15 behaviour), or make the "
    "enroot runtime/data paths creatable by the job user on every node",
    seen="error: pyxis:     mkdir: cannot create directory '/run/enroot': Permission denied",
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "any image started with srun --container-image (pyxis 0.16)",
    },
    node={
        "name": "nda100v4-2",
        "rdma": {"stack": "mlnx_ofed", "devices": mlx5(8)},
        "gpu": {"gpus": gpus("NVIDIA A100-SXM4-40GB", 8, "datacenter")},
    },
    job={"runtime": "slurm", "kind": "srun --container-image"},
    assumptions=[
        "the image is illustrative: the failure is in the epilog after the job, whatever image the job ran",
        "the node model (Azure NDv4-style host 'nda100v4-2': 8 A100 40GB, 8 IB HCAs, MLNX_OFED) is inferred from the "
        "hostname in the log and is illustrative",
        "the job spec is reduced to 'srun --container-image'; the thread gives the enroot.conf paths in a later "
        "comment (ENROOT_RUNTIME_PATH etc. under /scratch), not the job command",
    ],
    expect=[],
    must_not=["JOB-PYXIS-CONTAINER-REUSED", "JOB-ENROOT-NO-GPU-DRIVER"],
    mechanism="A pyxis release change (job-scoped containers, cleaned up by the Slurm epilog running enroot as "
    "the user) makes the epilog fail on a node whose enroot runtime path the user cannot create, draining nodes.",
    expect_kind="launcher/cluster-component release rule (pyxis 0.16 container_scope=job epilog cleanup); no rule "
    "names pyxis release behaviour today",
)

case(
    id="nvidia-container-toolkit-1093-1.17.7-breaks-enroot-pyxis-device-rules",
    url="https://github.com/NVIDIA/nvidia-container-toolkit/issues/1093",
    cause="After an apt upgrade to nvidia-container-toolkit / libnvidia-container 1.17.7-1 on DGX-OS 6.3.2 (Ubuntu "
    "22.04) Slurm nodes, every GPU container started by pyxis/enroot failed in enroot's NVIDIA hook: "
    "nvidia-container-cli 'mount error: failed to add device rules: unable to find any existing device filters "
    "attached to the cgroup: bpf_prog_query(BPF_CGROUP_DEVICE) failed: operation not permitted', whatever the image.",
    established_by="reporter's A/B in the issue: downgrading the toolkit packages to 1.17.6-1 resolves it (same "
    "nodes, same containers); Google Cloud cluster-toolkit maintainers (cluster-toolkit #4144, merged PR #4145): "
    "'The 1.17.7 release of nvidia-container-toolkit contains a regression which breaks running GPU-enabled jobs "
    "under enroot in Slurm', pinning the packages away from 1.17.7-1",
    fix="keep nvidia-container-toolkit, nvidia-container-toolkit-base, libnvidia-container-tools and "
    "libnvidia-container1 at 1.17.6-1 (apt pin of 1.17.7-1 below priority) or move to a later release",
    seen="nvidia-container-cli: mount error: failed to add device rules: unable to find any existing device filters "
    "attached to the cgroup: bpf_prog_query(BPF_CGROUP_DEVICE) failed: operation not permitted",
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "any image started with srun --container-image (the error occurred for every container)",
    },
    node={
        "name": "dgx-h100",
        "os": {"id": "ubuntu", "version": "22.04"},
        "rdma": {"stack": "mlnx_ofed", "devices": mlx5(8)},
        "gpu": {"gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")},
        "container_toolkit": {"installed": True, "toolkit_version": "1.17.7"},
    },
    job={"runtime": "slurm", "kind": "srun --container-image"},
    working={"node": {"container_toolkit": {"installed": True, "toolkit_version": "1.17.6"}}},
    assumptions=[
        "the node is a DGX H100 (8 H100 SXM, 8 IB HCAs) as in the linked enroot issue #232 and the reporter's "
        "DGX-OS 6.3.2; HCA count and MLNX_OFED are illustrative",
        "the image is illustrative: the reporter states the error occurred independent of the container",
        "node.os is added from 'DGX-OS 6.3.2 (Ubuntu 22.04)'",
    ],
    expect=[],
    must_not=["JOB-ENROOT-NO-GPU-DRIVER", "NODE-CTK-DRIVER-ROOT"],
    mechanism="A container-toolkit release (libnvidia-container 1.17.7) makes enroot's NVIDIA hook fail to set up "
    "the device cgroup rules on Slurm nodes, so every GPU container start fails until the packages are downgraded.",
    expect_kind="node container-toolkit release rule (a release known to break enroot/pyxis); the toolkit catalog "
    "holds fixes only and no row names this regression today",
)

case(
    id="miles-840-nvls-forced-on-docker-multinode-without-nvswitch-hang",
    url="https://github.com/radixark/miles/pull/840",
    cause="miles' check_has_nvlink() saw intra-node NVLink and hard-coded NCCL_NVLS_ENABLE=1 into the Ray "
    "runtime_env of every worker; on Docker multi-node setups without NVSwitch, dist.init_process_group hung.",
    established_by="merged PR 'fix: respect NCCL_NVLS_ENABLE from environment' (fzyzcjy): 'NVLS requires NVSwitch "
    "for cross-node communication; Docker multi-node setups without NVSwitch hang on dist.init_process_group'; test "
    "plan: Docker multi-node miles training with NCCL_NVLS_ENABLE=0 exported",
    fix="do not force NCCL_NVLS_ENABLE=1; leave NVLS to NCCL's detection or export NCCL_NVLS_ENABLE=0 on nodes "
    "without NVSwitch",
    seen=None,
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "miles (radixark) training image",
        "nccl": pip_nccl("2.27.3"),
    },
    node={
        "name": "nvlink-no-nvswitch",
        "rdma": {"stack": "mlnx_ofed", "devices": mlx5(2, "Ethernet")},
        "gpu": {"driver_version": "570.133.20", "gpus": gpus("NVIDIA H100 NVL", 8, "datacenter")},
        "fabric": {"nvswitch_pci": [], "fm_installed": False},
    },
    job={
        "runtime": "docker",
        "kind": "docker run (Ray runtime_env)",
        "gpus": -1,
        "env": {"NCCL_NVLS_ENABLE": "1"},
    },
    working={"job": {"env": {"NCCL_NVLS_ENABLE": "0"}}, "absent": []},
    assumptions=[
        "the PR names no hardware: 'intra-node NVLink' without NVSwitch is modelled as 8 H100 NVL (NVLink bridge "
        "pairs, no NVSwitch); driver version, RoCE NICs and MLNX_OFED are illustrative",
        "NCCL 2.27.3 (pip wheel) is illustrative; the PR does not give the NCCL version",
        "the launch is modelled as docker run with NCCL_NVLS_ENABLE=1 in the job env (miles puts it in Ray's "
        "runtime_env_json, which reaches every worker process)",
    ],
    expect=[],
    must_not=["NODE-FABRIC-MANAGER-MISSING", "NODE-FABRIC-MANAGER-NOT-RUNNING"],
    mechanism="NCCL_NVLS_ENABLE=1 forced by the launcher on nodes with NVLink but no NVSwitch: NCCL tries NVLink "
    "SHARP and the multi-node communicator init hangs.",
    expect_kind="NCCL setting rule (NVLS forced on without NVSwitch/multicast support); no rule names it today",
    sealed_source="issues (merged PR)",
)

case(
    id="mlperf-automations-664-docker-daemon-memlock-8mb-ucx-devx-umem",
    url="https://github.com/mlcommons/mlperf-automations/issues/664",
    cause="The Llama2-70b (TensorRT-LLM) run_harness step ran in a Docker container that inherited the Docker "
    "daemon's 8 MB locked-memory limit (the host shell showed ulimit -l unlimited); UCX could not register device "
    "memory (mlx5dv_devx_umem_reg ... Cannot allocate memory) and Open MPI's pml_ucx failed to create the UCP "
    "worker.",
    established_by="the issue's 'Root Cause' and 'Resolution' sections: containers inherit the daemon's limits "
    "(Max locked memory 8388608 bytes); raising LimitMEMLOCK=infinity for docker.service and restarting Docker makes "
    "the error go away",
    fix="LimitMEMLOCK=infinity in docker.service (systemctl edit docker.service), or docker run --ulimit memlock=-1",
    seen="allocate memory : Please set max locked memory (ulimit -l) to 'unlimited' (current: 8192 kbytes)",
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "MLPerf inference v5.0 NVIDIA harness container (TensorRT-LLM, Open MPI + UCX)",
        "ucx": {"version": "1.18.0", "origin": "hpcx", "path": "/opt/hpcx/ucx/lib/libucp.so.0"},
    },
    node={
        "name": "mlperf-node",
        "rdma": {"stack": "mlnx_ofed", "devices": mlx5(1)},
        "gpu": {"gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")},
        "limits": {"memlock_kib": 8192},
    },
    job={"runtime": "docker", "kind": "docker run", "gpus": -1},
    working={"node": {"limits": {"memlock_kib": -1}}, "absent": ["MEMLOCK-TOO-LOW"]},
    assumptions=[
        "node.limits.memlock_kib 8192 models what every container on the node gets from the Docker daemon "
        "(LimitMEMLOCK 8388608 bytes); the job itself passes no --ulimit",
        "GPU model, HCA count and MLNX_OFED are illustrative (the issue names Llama2-70b on an NVIDIA system only)",
        "the UCX 1.18.0 from HPC-X in the image is illustrative",
    ],
    expect=[{"id": "MEMLOCK-TOO-LOW", "severity": "error"}],
    must_not=["UCX-NO-IB-TRANSPORT", "RDMA-NO-MLX5-PROVIDER"],
    mechanism="Containers inherit the container runtime daemon's 8 MB RLIMIT_MEMLOCK; UCX's device-memory and "
    "memory-region registrations fail with ENOMEM and MPI cannot create its UCX worker.",
    expect_kind="node/container-runtime limits rule (locked-memory limit too low for RDMA registration)",
)

case(
    id="quip-miner-24-forward-compat-libcuda-on-rtx3060-driver-570",
    url="https://github.com/QuipNetwork/quip-miner/issues/24",
    cause="The quip-miner-cuda image bundles CUDA's forward-compatibility libcuda (/usr/local/cuda/compat/libcuda.so.*) "
    "on its loader path; on a GeForce RTX 3060 with host driver 570.211.01 the loader took it instead of the host "
    "driver and CUDA initialisation failed at once with cudaErrorCompatNotSupportedOnDevice (804): forward "
    "compatibility is not supported on consumer GPUs, and the image's CUDA needs a 575 driver.",
    established_by="reporter's workaround (LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu, so the compat copy is not "
    "loaded); maintainer (rcarback): fixed by an entrypoint that skips the forward-compat library, 'the root issue "
    "was a CUDA version minimum requirement (575 v. your 570)'",
    fix="a host driver >= 575 (the compat library is then not needed), or keep /usr/local/cuda/compat off the "
    "loader path on non-datacenter GPUs",
    seen="cudaErrorCompatNotSupportedOnDevice: forward compatibility was attempted on non supported HW",
    image={
        "profile": "no-rdma-userspace",
        "reference": "quip-miner-cuda image",
        "cuda": {
            "version": "12.9.1",
            "origin": "version.json",
            "path": "/usr/local/cuda/version.json",
            "compat_driver": "575.57.08",
            "compat_path": "/usr/local/cuda/compat/libcuda.so.575.57.08",
            "compat_on_path": True,
            "compat_path_how": "LD_LIBRARY_PATH in Env",
        },
    },
    node={
        "name": "rtx3060-host",
        "gpu": {
            "driver_version": "570.211.01",
            "gpus": gpus("NVIDIA GeForce RTX 3060", 1, "consumer"),
        },
    },
    job={"runtime": "docker", "kind": "docker compose", "gpus": -1},
    working={
        "node": {"gpu": {"driver_version": "580.95.05"}},
        "absent": ["CUDA-FORWARD-COMPAT-UNSUPPORTED-GPU"],
    },
    assumptions=[
        "CUDA 12.9.1 with cuda-compat libcuda 575.57.08 is inferred from the maintainer's '575 v. your 570'; the "
        "issue names only '/usr/local/cuda/compat/libcuda.so...'",
        "the compat directory is on the image's LD_LIBRARY_PATH (the reporter's workaround replaces "
        "LD_LIBRARY_PATH) - modelled as compat_on_path via Env",
        "the working variant's driver 580.95.05 is illustrative (any driver >= the compat library)",
    ],
    expect=[{"id": "CUDA-FORWARD-COMPAT-UNSUPPORTED-GPU", "severity": "error"}],
    must_not=[],
    mechanism="An image's forward-compatibility libcuda, newer than the host driver and on the loader path, is "
    "loaded on a consumer GPU that does not support forward compatibility: CUDA init fails with 804.",
    expect_kind="image CUDA forward-compat vs node driver/GPU class rule",
)

case(
    id="gpu-operator-2781-hgx-b200-eks-no-ib-umad-fabric-manager-wrong-path-802",
    url="https://github.com/NVIDIA/gpu-operator/issues/2781",
    cause="On AWS p6-b200.48xlarge (HGX B200) EKS nodes with the Canonical Ubuntu 24.04 AMI (no linux-modules-extra), "
    "mlx5_ib and ib_umad were not loaded, so no InfiniBand devices existed; the GPU Operator driver container's "
    "NVLink5 detection (scanning /sys/class/infiniband/*/device/vpd for SW_MNG) failed, it started Fabric Manager on "
    "the legacy NVSwitch path, FM exited, the driver pod still reported Ready, the GPU fabric stayed 'In Progress' "
    "and every CUDA initialisation failed with error 802.",
    established_by="reporter's analysis in the issue of the driver container's start path (_assert_nvlink5_system "
    "-> fall-through to _assert_nvswitch_system) with the node state (no IB devices, fabric 'In Progress', CUDA 802); "
    "the Fabric Manager user guide makes NVLSM (which needs ib_umad) a dependency on HGX B200",
    fix="load mlx5_ib and ib_umad on the node (install linux-modules-extra for the kernel, modules-load.d) before the "
    "driver container starts Fabric Manager",
    seen="Error 802: system not yet initialized",
    image={
        "profile": "no-rdma-userspace",
        "reference": "any CUDA workload (CUDA 13.0) scheduled on the node",
        "cuda": {"version": "13.0.1", "origin": "version.json", "path": "/usr/local/cuda/version.json"},
    },
    node={
        "name": "p6-b200-48xlarge",
        "labels": {"node.kubernetes.io/instance-type": "p6-b200.48xlarge"},
        "os": {"id": "ubuntu", "version": "24.04"},
        "gpu": {"driver_version": "580.126.20", "gpus": gpus("NVIDIA B200", 8, "datacenter")},
        "fabric": {
            "fm_installed": True,
            "fm_version": "580.126.20",
            "fm_running": False,
            "nvlsm_installed": True,
            "ib_umad_loaded": False,
            "gpu_fabric_state": "In Progress",
        },
    },
    job={
        "runtime": "kubernetes",
        "kind": "Pod",
        "resources": {"nvidia.com/gpu": "8"},
        "gpus": 8,
    },
    working={
        "node": {
            "fabric": {
                "fm_installed": True,
                "fm_version": "580.126.20",
                "fm_running": True,
                "nvlsm_installed": True,
                "ib_umad_loaded": True,
                "gpu_fabric_state": "Completed",
            }
        },
        "absent": ["NODE-NVLSM-MISSING", "NODE-FABRIC-MANAGER-NOT-RUNNING"],
    },
    assumptions=[
        "Fabric Manager and NVLSM come with the GPU Operator driver container 580.126.20 (driver container images "
        "install nvlsm for NVLink 5) - modelled as installed on the node",
        "fm_running false: the issue says FM errors and exits",
        "the workload image (CUDA 13.0.1) is illustrative: every CUDA initialisation on the node failed",
        "the node's EFA NICs are not modelled (not part of the failure)",
    ],
    expect=[{"id": "NODE-NVLSM-MISSING", "severity": "error"}],
    must_not=["CUDA-DRIVER-TOO-OLD", "NODE-FABRIC-MANAGER-VERSION-MISMATCH"],
    mechanism="On an NVLink 5 (HGX B200) node without ib_umad/mlx5_ib loaded, Fabric Manager cannot configure the "
    "NVSwitch fabric; the GPUs never finish fabric registration and CUDA fails with 802.",
    expect_kind="node fabric rule (NVLink 5 node without ib_umad: NVLSM / Fabric Manager cannot start)",
)

# ================================================================================ NCCL releases
case(
    id="marin-7344-nccl-2.28.9-aarch64-proxy-op-leak-gb200-wedge",
    url="https://github.com/marin-community/marin/issues/7344",
    cause="A 512-GPU (8-rack GB200) training run hung silently mid-training: NCCL 2.28.9 (nvidia-nccl-cu13 wheel) "
    "on aarch64 (Grace) leaks proxy-op slots because ncclProxyGetPostedOps returns freed slots with a weak "
    "compare-exchange whose spurious failure ends the loop without storing; when a rank's pool runs dry it spins "
    "in ncclLocalOpAppend forever and every rank blocks in the collective, with no error or timeout.",
    established_by="root cause traced in the issue (live GDB of the wedged rank) and the follow-up PR #8038: on the "
    "2-rack reproducer NCCL 2.28.9 wedged 7/7 trials, NCCL 2.30.7 ran 20000/20000 and 5000/5000 steps clean; the "
    "NCCL 2.29.3 release notes: 'Fixed CAS usage in case of weak failure which was causing a hang on ARM'",
    fix="use NCCL 2.29.3 or later (the project bumped nvidia-nccl-cu13 to 2.30.7)",
    seen=None,
    image={
        "profile": "rdma-core-39-mlx5",
        "platform": "linux/arm64",
        "reference": "marin grug training image (nvidia-nccl-cu13 2.28.9 lock)",
        "nccl": pip_nccl("2.28.9", pkg="nvidia-nccl-cu13"),
    },
    node={
        "name": "gb200-tray",
        "arch": "aarch64",
        "rdma": {"stack": "mlnx_ofed", "devices": mlx5(4)},
        "gpu": {"gpus": gpus("NVIDIA GB200", 4, "datacenter")},
    },
    job={"runtime": "kubernetes", "kind": "Pod", "resources": {"nvidia.com/gpu": "4"}, "gpus": 4},
    working={
        "image": {"nccl": pip_nccl("2.30.7", pkg="nvidia-nccl-cu13")},
        "absent": ["NCCL-RELEASE-KNOWN-ISSUE"],
    },
    assumptions=[
        "4 GB200 GPUs and 4 InfiniBand HCAs per node (one GB200 NVL72 compute tray) and MLNX_OFED are illustrative; "
        "the thread names GB200 racks on a CoreWeave cluster",
        "the rdma-core profile's provider libraries are used with platform linux/arm64 only as a stand-in; the "
        "image's RDMA userspace is not described",
        "the wheel path (python3.12 dist-packages) is illustrative",
    ],
    expect=[{"id": "NCCL-RELEASE-KNOWN-ISSUE", "severity": "warning"}],
    must_not=["PLATFORM-ARCH-MISMATCH", "ENV-NCCL-IB-TIMEOUT"],
    mechanism="NCCL release defect on aarch64 (weak compare-exchange in the proxy-op free list, 2.28.9 - 2.29.2): "
    "proxy-op slots leak until a rank deadlocks; fixed in 2.29.3.",
    expect_kind="NCCL release rule (known hang on ARM fixed in 2.29.3)",
)

# ================================================================================ GPU-sharing shim vs NCCL
case(
    id="hami-core-169-libvgpu-cumemcreate-hook-illegal-device-nccl-cumem-host",
    url="https://github.com/Project-HAMi/HAMi-core/issues/169",
    cause="vLLM 0.18.0 under HAMi 2.8.0 crashed before loading the model: NCCL's ncclCuMemHostEnable() "
    "allocates host memory with cuMemCreate, HAMi-core's libvgpu.so hook for cuMemCreate took a device id that was "
    "never set (the allocation's location is not a GPU) and segfaulted in get_current_device_memory_limit ('Illegal "
    "device id: 850725928').",
    established_by="the stack in the issue (cuMemCreate hook <- ncclCuMemHostEnable <- ncclCommInitRank) and the "
    "code analysis in HAMi-core #187 (the cuMemCreate hook reads an uninitialized dev when prop->location.type is "
    "not CU_MEM_LOCATION_TYPE_DEVICE -> 'Illegal device id: <random>'); merged fix PR HAMi-core #192 'Fix "
    "cuMemCreate memory tracking' for the vLLM core dumps",
    fix="a HAMi-core with the cuMemCreate fix; meanwhile keep NCCL off cuMem host memory (NCCL_CUMEM_HOST_ENABLE=0) "
    "or run whole-GPU pods without the libvgpu shim",
    seen="[HAMI-core ERROR (pid:565 thread=140267266266944 multiprocess_memory_limit.c:831)]: Illegal device id: "
    "850725928",
    image={
        "profile": "no-rdma-userspace",
        "reference": "vllm/vllm-openai:v0.18.0",
        "nccl": pip_nccl("2.27.5"),
    },
    node={
        "name": "hami-node",
        "gpu": {"driver_version": "570.133.20", "gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")},
    },
    job={
        "runtime": "kubernetes",
        "kind": "Pod",
        "resources": {"nvidia.com/gpu": "2"},
        "env": {"LD_PRELOAD": "/usr/local/vgpu/libvgpu.so"},
    },
    assumptions=[
        "NCCL 2.27.5 (the nvidia-nccl-cu12 wheel vLLM 0.18 runs with) is assumed; the issue's stack shows a "
        "release NCCL build (misc/cudawrap.cc ncclCuMemHostEnable) without its version",
        "GPU model, driver version and the 2-GPU request are illustrative; HAMi injects libvgpu.so by LD_PRELOAD "
        "(path illustrative)",
        "the #169 thread itself has no maintainer reply in the stored excerpt; the cause is the one analysed in "
        "HAMi-core #187 for the same message from the same hook",
    ],
    expect=[{"id": "ENV-CUDA-SHIM-PRELOADED", "severity": "warning"}],
    must_not=["NCCL-RELEASE-KNOWN-ISSUE", "CUDA-DRIVER-TOO-OLD"],
    mechanism="A GPU-sharing LD_PRELOAD shim mishandles cuMemCreate for host-located allocations, which NCCL makes "
    "for its cuMem host buffers at communicator init: the shim crashes the rank.",
    expect_kind="job rule: CUDA-intercepting LD_PRELOAD shim between NCCL's cuMem calls and the driver",
)

# ================================================================================ NVSHMEM / DeepEP
case(
    id="deepep-759-nvshmem-ibgda-needs-mlx5dv-erdma",
    url="https://github.com/deepseek-ai/DeepEP/issues/759",
    cause="DeepEP's low-latency (internode_ll) kernels need NVSHMEM's IBGDA transport, which works only on "
    "Mellanox mlx5 devices (mlx5dv); on Alibaba Cloud eRDMA (erdma_0/erdma_1, driver erdma) NVSHMEM cannot use "
    "libmlx5dv ('Unable to dlopen libmlx5dv. Disabling directNIC features.'), mlx5dv_open_device fails and "
    "every IBGDA-dependent path fails, while NCCL over the same RoCE devices works.",
    established_by="reporter's diagnosis in the issue: mlx5dv_open_device(erdma_0) fails (not an mlx5 device), "
    "/sys/class/infiniband/erdma_0/device/driver is erdma, and none of NVSHMEM's ibrc/libfabric/ucx transports "
    "exports IBGDA symbols; ibv_open_device and NCCL NET/IB/GDRDMA on the same devices work",
    fix="run DeepEP's low-latency mode on mlx5 (ConnectX/BlueField) NICs, or use the normal (non-IBGDA) kernels / "
    "NCCL collectives on eRDMA",
    seen="NVSHMEM: Unable to dlopen libmlx5dv. Disabling directNIC features.",
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "DeepEP 2.0.0 + NVSHMEM 3.4.5 (cu13) image",
        "packages": [
            {"db": "pip", "name": "nvidia-nvshmem-cu13", "version": "3.4.5"},
            {"db": "pip", "name": "deep_ep", "version": "2.0.0"},
        ],
    },
    node={
        "name": "h20-erdma",
        "rdma": {
            "stack": "inbox",
            "devices": [
                {"name": "erdma_0", "driver": "erdma", "link_layer": "Ethernet"},
                {"name": "erdma_1", "driver": "erdma", "link_layer": "Ethernet"},
            ],
        },
        "gpu": {"driver_version": "595.58.03", "gpus": gpus("NVIDIA H20", 8, "datacenter")},
    },
    job={
        "runtime": "kubernetes",
        "kind": "Pod",
        "devices": ["/dev/infiniband"],
        "resources": {"nvidia.com/gpu": "8"},
        "gpus": 8,
    },
    assumptions=[
        "the image's RDMA userspace is modelled by the rdma-core-39 profile; the real image must carry an erdma "
        "provider (ibv_open_device(erdma_0) works in the container) - the profile's provider list is not changed",
        "the eRDMA device plugin's resource name is not in the excerpt; the pod is modelled with /dev/infiniband "
        "and 8 GPUs",
        "'inbox' stack for Alibaba Cloud eRDMA is an assumption",
    ],
    expect=[],
    must_not=["JOB-RDMA-DEVICES-NOT-EXPOSED", "NVSHMEM-PEERMEM-UNDETECTED", "ENV-DISABLES-IB"],
    mechanism="NVSHMEM's GPU-initiated (IBGDA) transport depends on mlx5 direct-verbs; on a non-mlx5 RDMA NIC "
    "(eRDMA) it is unavailable and DeepEP's low-latency kernels cannot run.",
    expect_kind="NIC-capability rule (NVSHMEM IBGDA / DeepEP low-latency requires mlx5 devices); no rule names it "
    "today",
)

case(
    id="deepep-553-nvshmem-3.5.19-qp-layout-internode-dispatch-timeout",
    url="https://github.com/deepseek-ai/DeepEP/issues/553",
    cause="After upgrading NVSHMEM to 3.5.19 (for a RoCE fix), DeepEP 1.2.1's internode kernels timed out on two "
    "separate H100 RoCE clusters ('RuntimeError: DeepEP error: timeout (dispatch CPU)'): NVSHMEM 3.5 moved the "
    "default RC queue pairs inside its device-state struct (QP-specific APIs), and DeepEP built against it still "
    "indexed the queue pairs with the old layout, so the dispatch never completed.",
    established_by="merged DeepEP PR #564 (cherry-picked as #623) 'Update RC selection for NVSHMEM 3.5. The "
    "locations of QPs within the device state struct changed with the addition of QP-specific APIs', tested with "
    "internode and low-latency kernels on 4 H100 nodes; DeepEP #691 and #707 restate it (#553 discussed, #564 "
    "merged to make DeepEP work with the newer NVSHMEM)",
    fix="a DeepEP build with PR #564 (ibgda_get_rc templated on the NVSHMEM device-state type), or stay on an "
    "NVSHMEM before 3.5.19 with the older DeepEP",
    seen="RuntimeError: DeepEP error: timeout (dispatch CPU)",
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "DeepEP 1.2.1+309785a built against NVSHMEM 3.5.19 (Python 3.12)",
        "packages": [
            {"db": "pip", "name": "nvidia-nvshmem-cu12", "version": "3.5.19"},
            {"db": "pip", "name": "deep_ep", "version": "1.2.1"},
        ],
    },
    node={
        "name": "h100-roce",
        "rdma": {"stack": "mlnx_ofed", "devices": mlx5(8, link_layer="Ethernet")},
        "gpu": {"peermem": {"loaded": True}, "gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")},
    },
    job={"runtime": "bare", "kind": "torchrun test_internode.py", "gpus": 8},
    assumptions=[
        "NVSHMEM 3.5.19 is modelled as the pip wheel nvidia-nvshmem-cu12; the issue does not say whether it was a "
        "wheel or a source build",
        "8 H100 and 8 RoCE mlx5 HCAs per node, MLNX_OFED and nvidia_peermem are illustrative (the issue names H100 "
        "RoCE clusters)",
        "the job is DeepEP's tests/test_internode.py across nodes; the launcher is not in the excerpt",
    ],
    expect=[],
    must_not=["NVSHMEM-PEERMEM-UNDETECTED", "GDR-PEERMEM-MISSING"],
    mechanism="A DeepEP build that predates NVSHMEM 3.5's queue-pair layout change indexes the wrong RC queue pairs "
    "when built/run with NVSHMEM >= 3.5.19, so internode dispatch hangs until DeepEP's CPU timeout.",
    expect_kind="image library-pair compatibility rule (DeepEP before PR #564 with NVSHMEM >= 3.5.19); no rule "
    "names it today",
)

case(
    id="nvshmem-34-ibgda-without-regkey-or-gdrcopy-negative",
    url="https://github.com/NVIDIA/nvshmem/issues/34",
    cause="(negative) With NVSHMEM 3.4.5 and CUDA 13.0, DeepEP's low-latency kernels ran with "
    "NVSHMEM_IB_ENABLE_IBGDA=1 although the node had neither the NVreg_EnableStreamMemOPs=1 / "
    "PeerMappingOverride=1 driver options nor gdrcopy installed.",
    established_by="NVSHMEM maintainer (benhg) quoting the 3.4.5 release notes: 'Added support for CPU-Assisted "
    "IBGDA without the use of GDRCopy or the x86 regkey setting. Systems not supporting the other methods will "
    "automatically fall back to this new method.'",
    fix=None,
    seen=None,
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "DeepEP image with nvidia-nvshmem 3.4.5 (CUDA 13.0)",
        "packages": [{"db": "pip", "name": "nvidia-nvshmem-cu13", "version": "3.4.5"}],
    },
    node={
        "name": "ibgda-node",
        "rdma": {"stack": "mlnx_ofed", "devices": mlx5(8)},
        "gpu": {
            "driver_version": "580.95.05",
            "peermem": {"loaded": True},
            "gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter"),
        },
    },
    job={
        "runtime": "kubernetes",
        "kind": "Pod",
        "devices": ["/dev/infiniband"],
        "cap_add": ["IPC_LOCK"],
        "resources": {"nvidia.com/gpu": "8"},
        "gpus": 8,
        "env": {"NVSHMEM_IB_ENABLE_IBGDA": "1", "NVSHMEM_IBGDA_NIC_HANDLER": "gpu"},
    },
    assumptions=[
        "GPU model, HCAs, driver 580 and a loaded nvidia-peermem are illustrative (the thread states NVSHMEM "
        "3.4.5 + CUDA 13.0, no regkey options, no gdrcopy)",
        "the launch is modelled as a pod with the RDMA devices; the thread does not describe the launcher",
    ],
    expect=[],
    must_not=["NVSHMEM-PEERMEM-UNDETECTED", "GDR-PEERMEM-MISSING", "CUDA-DRIVER-TOO-OLD"],
    mechanism="(negative) NVSHMEM >= 3.4.5 falls back to CPU-assisted IBGDA, so IBGDA works without the "
    "PeerMappingOverride regkey and without gdrcopy.",
    expect_kind="negative: nothing should be reported as the cause of a failure",
)

# ================================================================================ NCCL known issue, fixed release
case(
    id="coreweave-nccl-tests-23-nccl-2.18.3-no-relaxed-ordering-workaround-negative",
    url="https://github.com/coreweave/nccl-tests/pull/23",
    cause="(negative) CoreWeave's nccl-tests images moved to NCCL 2.18.3 (CUDA 12 builds, plus a CUDA 12.2.0 "
    "build) and dropped the NCCL_IB_PCI_RELAXED_ORDERING=0 workaround from their Slurm and MPI Operator examples, "
    "because the NCCL bug that needed it is fixed in 2.18.3.",
    established_by="merged PR (Eta0): 'removed the NCCL_IB_PCI_RELAXED_ORDERING=0 workaround, as the bug "
    "necessitating it has been fixed in NCCL v2.18.3' (linking the 2.18.3 release notes)",
    fix=None,
    seen=None,
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "ghcr.io/coreweave/nccl-tests:12.2.0-devel-ubuntu20.04-nccl2.18.3-1",
        "cuda": {"version": "12.2.0", "origin": "cuda-version", "path": "/usr/local/cuda/version.txt"},
        "nccl": [
            {
                "version": "2.18.3",
                "origin": "deb:libnccl2",
                "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2",
            }
        ],
    },
    node={
        "name": "coreweave-hgx",
        "rdma": {"stack": "mlnx_ofed", "devices": mlx5(8)},
        "gpu": {
            "driver_version": "535.54.03",
            "peermem": {"loaded": True},
            "gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter"),
        },
    },
    job={
        "runtime": "kubernetes",
        "kind": "MPIJob",
        "devices": ["/dev/infiniband"],
        "cap_add": ["IPC_LOCK"],
        "resources": {"nvidia.com/gpu": "8", "rdma/ib": "1"},
        "gpus": 8,
        "env": {"NCCL_DEBUG": "INFO"},
    },
    assumptions=[
        "an HGX H100 node with 8 IB HCAs (one NIC per GPU), driver 535.54.03, MLNX_OFED and loaded "
        "nvidia-peermem is illustrative of the CoreWeave nodes the examples target",
        "the image tag is composed from the PR's description (CUDA 12.2.0 devel ubuntu20.04 base, NCCL 2.18.3); "
        "the NCCL install path (Debian libnccl2) is illustrative",
        "the MPIJob resources (rdma/ib) are illustrative",
    ],
    expect=[],
    must_not=["NCCL-RELEASE-KNOWN-ISSUE", "CUDA-DRIVER-TOO-OLD"],
    mechanism="(negative) NCCL 2.18.3 fixes the 2.18.1 Tree/LL128 data corruption on 1 GPU:1 NIC systems, so the "
    "image runs without NCCL_IB_PCI_RELAXED_ORDERING=0.",
    expect_kind="negative: nothing should be reported as the cause of a failure",
    sealed_source="issues (merged PR)",
)

# ================================================================================ RDMA registration outside NCCL
case(
    id="mooncake-2511-expandable-segments-dmabuf-export-range-einval",
    url="https://github.com/kvcache-ai/Mooncake/issues/2511",
    cause="With PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, PyTorch backs the KV cache with CUDA VMM "
    "(cuMemCreate + cuMemMap) mappings; Mooncake's transfer engine exported the dma-buf for only the single "
    "mapping cuMemGetAddressRange reports (one 20 MiB growth chunk) while registering the whole buffer, so every "
    "ibv_reg_dmabuf_mr for a buffer larger than one chunk failed with EINVAL (mooncake-transfer-engine-cuda13 "
    "0.3.11.post1 and 0.3.12.post1).",
    established_by="the analysis in the issue and merged fix PR #3538 ('Export the requested range for dma-buf "
    "registration under CUDA VMM (fixes #2511)'), with the captured values: dmabuf_size=20971520, "
    "offset+length=1925067648 -> FAIL errno=22",
    fix="a Mooncake release with PR #3538; or run without expandable_segments for the processes whose KV cache "
    "is registered",
    seen="E0819 11:21:45.193161 147554 rdma_context.cpp:588] Failed to register memory 0x12397fd5800: Invalid "
    "argument [22]",
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "SGLang PD-disaggregation image with mooncake-transfer-engine-cuda13 0.3.12.post1",
        "packages": [{"db": "pip", "name": "mooncake-transfer-engine-cuda13", "version": "0.3.12.post1"}],
    },
    node={
        "name": "pd-node",
        "rdma": {"stack": "mlnx_ofed", "devices": mlx5(8, "Ethernet")},
        "gpu": {
            "driver_version": "580.95.05",
            "kernel_module": "open",
            "gpus": gpus("NVIDIA H200", 8, "datacenter"),
        },
    },
    job={
        "runtime": "kubernetes",
        "kind": "Pod",
        "devices": ["/dev/infiniband"],
        "cap_add": ["IPC_LOCK"],
        "resources": {"nvidia.com/gpu": "8"},
        "gpus": 8,
        "env": {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"},
    },
    working={"job": {"env": {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:False"}}, "absent": []},
    assumptions=[
        "GPU model, driver 580 (open kernel modules, dma-buf capable), RoCE mlx5 NICs and MLNX_OFED are "
        "illustrative; the excerpt gives the Mooncake versions, the VMM chunk size and the errno only",
        "the launch is modelled as a Kubernetes pod with the RDMA devices",
        "the working variant (expandable_segments off) is the documented way to avoid the VMM path; the thread's "
        "established fix is the Mooncake change",
    ],
    expect=[],
    must_not=["MEMLOCK-TOO-LOW", "JOB-MEMLOCK-TOO-LOW", "JOB-RDMA-DEVICES-NOT-EXPOSED"],
    mechanism="A KV-transfer engine exports a dma-buf covering only one CUDA VMM mapping but registers the whole "
    "expandable-segment buffer: ibv_reg_dmabuf_mr rejects offset+length beyond the dma-buf (EINVAL).",
    expect_kind="application/library rule (dma-buf registration of CUDA VMM memory under expandable_segments); no "
    "rule names it today",
)

case(
    id="nixl-1628-nixl-cu13-wheel-ucx-cuda-modules-not-found-vram-as-host",
    url="https://github.com/ai-dynamo/nixl/issues/1628",
    cause="The nixl-cu13 1.0.0 wheel (preinstalled in lmsysorg/sglang:v0.5.10.post1-cu130-runtime) bundles "
    "CUDA-enabled UCX modules in nixl_cu13.libs/ucx/, but UCX initialised without finding them, so UCX classified "
    "GPU memory as host and NIXL's VRAM registerMem failed (NIXL_ERR_BACKEND) in the disaggregated KV-transfer "
    "test.",
    established_by="reporter's confirmed workaround in the issue: with UCX_TLS=cuda_copy,cuda_ipc,sm,tcp,self and "
    "UCX_MODULE_DIR=<site-packages>/nixl_cu13.libs/ucx the same disagg test passes in 62s, without them it fails in "
    "~40s with the trace; issue closed",
    fix="point UCX_MODULE_DIR at the wheel's nixl_cu13.libs/ucx directory (a NIXL release that wires the module "
    "path itself)",
    seen="E ucx_utils.cpp:592  VRAM memory is detected as host by UCX.",
    image={
        "profile": "no-rdma-userspace",
        "reference": "lmsysorg/sglang:v0.5.10.post1-cu130-runtime",
        "packages": [{"db": "pip", "name": "nixl-cu13", "version": "1.0.0"}],
    },
    node={
        "name": "ada-single",
        "gpu": {"gpus": gpus("NVIDIA RTX 6000 Ada Generation", 1, "workstation")},
    },
    job={"runtime": "docker", "kind": "docker run", "gpus": 1},
    working={
        "job": {
            "env": {
                "UCX_TLS": "cuda_copy,cuda_ipc,sm,tcp,self",
                "UCX_MODULE_DIR": "/opt/dynamo/venv/lib/python3.12/site-packages/nixl_cu13.libs/ucx",
            }
        },
        "absent": [],
    },
    assumptions=[
        "the image's UCX (bundled in the nixl-cu13 wheel) is not modelled as an image.ucx fact: its version is "
        "not in the thread",
        "the GPU class 'workstation' for the RTX 6000 Ada and the docker launch with one GPU are illustrative "
        "(the thread: single-GPU repro, --gpus)",
    ],
    expect=[],
    must_not=["UCX-TLS-NO-GPU-TRANSPORT", "UCX-NO-IB-TRANSPORT"],
    mechanism="UCX bundled in a Python wheel cannot find its own CUDA transport modules (module search path), so "
    "GPU memory is treated as host memory and GPU buffers cannot be registered.",
    expect_kind="image rule (UCX CUDA modules not on UCX's module path in a wheel-bundled UCX); no rule names it today",
)

# ================================================================================ EFA
case(
    id="megatron-bridge-5033-ngc-pytorch-base-without-aws-ofi-nccl-eks-efa",
    url="https://github.com/NVIDIA-NeMo/Megatron-Bridge/pull/5033",
    cause="The NVIDIA PyTorch base image the project builds on no longer ships the aws-ofi-nccl plugin and "
    "defaults NCCL_NET_PLUGIN=spcx (HPC-X Spectrum-X); the EFA/libfabric userspace is still in /opt/amazon/efa "
    "and a dangling /etc/ld.so.conf.d/aws-ofi-nccl.conf points at /opt/amazon/ofi-nccl/lib, so NCCL cannot run "
    "over EFA on EKS.",
    established_by="merged PR 'fix(perf): reinstate aws-ofi-nccl EFA plugin for EKS' (ko3n1g): the image build "
    "rebuilds aws-ofi-nccl v1.17.3 into /opt/amazon/ofi-nccl and the launcher pins NCCL_NET_PLUGIN to it for AWS "
    "jobs, overriding the base image's spcx default",
    fix="install aws-ofi-nccl (EFA installer >= 1.38 ships it, or build it) into /opt/amazon/ofi-nccl and set "
    "NCCL_NET_PLUGIN to it (ofi) for EFA jobs",
    seen=None,
    image={
        "profile": "efa-installer",
        "reference": "Megatron-Bridge image FROM the NVIDIA PyTorch base (2026, before the fix)",
        "env": {"NCCL_NET_PLUGIN": "spcx"},
        "nccl_net_plugins": [],
    },
    node={
        "name": "eks-p5en",
        "labels": {"node.kubernetes.io/instance-type": "p5en.48xlarge"},
        "rdma": {"stack": "inbox", "devices": efa(P5EN_EFA)},
        "gpu": {"gpus": gpus("NVIDIA H200", 8, "datacenter")},
    },
    job={
        "runtime": "kubernetes",
        "kind": "PyTorchJob",
        "devices": ["/dev/infiniband"],
        "resources": {"nvidia.com/gpu": "8", "vpc.amazonaws.com/efa": "16"},
        "gpus": 8,
    },
    working={
        "image": {
            "nccl_net_plugins": [
                {
                    "name": "aws-ofi-nccl",
                    "project": "aws-ofi-nccl",
                    "version": "1.17.3",
                    "path": "/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so",
                }
            ]
        },
        "job": {"env": {"NCCL_NET_PLUGIN": "ofi"}},
        "absent": ["EFA-NO-OFI-PLUGIN"],
    },
    assumptions=[
        "the EKS node is modelled as p5en.48xlarge (8 H200, 16 EFA devices); the PR names EKS/AWS jobs, not the "
        "instance type",
        "nccl_net_plugins [] models 'the base image no longer ships aws-ofi-nccl'; the spcx plugin the base "
        "selects is not modelled as a plugin file",
        "the job spec (PyTorchJob with EFA resources and /dev/infiniband) is illustrative",
    ],
    expect=[{"id": "EFA-NO-OFI-PLUGIN", "severity": "warning"}],
    must_not=["JOB-RDMA-DEVICES-NOT-EXPOSED", "OFI-PLUGIN-LIBFABRIC-TOO-OLD"],
    mechanism="An NGC base image without the aws-ofi-nccl plugin (and defaulting NCCL_NET_PLUGIN to another "
    "vendor's plugin) on EFA nodes: NCCL has no way to drive EFA and falls back to sockets.",
    expect_kind="image rule (EFA node, image lacks the OFI network plugin)",
    sealed_source="issues (merged PR)",
)

case(
    id="megatron-bridge-2824-nemo-26.02-hpcx-libibverbs-shadows-system-libefa",
    url="https://github.com/NVIDIA-NeMo/Megatron-Bridge/issues/2824",
    cause="In the NeMo 26.02.00 container on AWS H100 (EFA), NCCL could not load the aws-ofi-nccl plugin and fell "
    "back to sockets: the image holds two rdma-core builds - the system one (/usr/lib/x86_64-linux-gnu, libibverbs "
    "1.14.56.0, IBVERBS_PRIVATE_34, with the providers libefa/libmlx5 built against it) and HPC-X's "
    "(/opt/rdma-core/build/lib, libibverbs 1.15.60.0, IBVERBS_PRIVATE_59) - and the HPC-X libibverbs is the one "
    "loaded, so libefa.so.1 fails with version 'IBVERBS_PRIVATE_34' not found.",
    established_by="reporter's analysis with a minimal reproduction in the issue: loading "
    "/opt/rdma-core/build/lib/libibverbs.so.1 first and then libnccl-net-ofi.so (ctypes, RTLD_GLOBAL) reproduces "
    "the failure; the two libibverbs builds and their private ABIs are listed",
    fix="make the image load one rdma-core build: keep /opt/rdma-core/build/lib off the loader path for NCCL "
    "jobs (or remove it), so the system libibverbs that matches libefa/libmlx5 is used",
    seen="NCCL INFO NET/Plugin: libnccl-net-ofi.so: /opt/rdma-core/build/lib/libibverbs.so.1: version "
    "`IBVERBS_PRIVATE_34' not found (required by",
    image={
        "profile": "efa-installer",
        "reference": "NeMo 26.02.00 container (DGXC benchmark recipe)",
        "rdma": {
            "libibverbs": {
                "version": "1.15.60.0",
                "rdma_core": "60.0",
                "symbol_versions": [
                    "IBVERBS_1.0",
                    "IBVERBS_1.1",
                    "IBVERBS_1.5",
                    "IBVERBS_1.6",
                    "IBVERBS_1.7",
                    "IBVERBS_1.8",
                    "IBVERBS_1.9",
                    "IBVERBS_1.10",
                    "IBVERBS_1.11",
                    "IBVERBS_1.12",
                    "IBVERBS_1.13",
                    "IBVERBS_1.14",
                    "IBVERBS_1.15",
                    "IBVERBS_PRIVATE_59",
                ],
                "private_abi": 59,
                "has_reg_mr_iova2": True,
                "has_reg_dmabuf_mr": True,
                "soname": "libibverbs.so.1",
                "path": "/opt/rdma-core/build/lib/libibverbs.so.1.15.60.0",
                "copies": [
                    {
                        "path": "/opt/rdma-core/build/lib/libibverbs.so.1.15.60.0",
                        "version": "1.15.60.0",
                        "loaded": True,
                        "how": "LD_LIBRARY_PATH",
                    },
                    {
                        "path": "/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.56.0",
                        "version": "1.14.56.0",
                        "loaded": False,
                        "how": "ld.so.cache",
                    },
                ],
            },
            "providers": [
                {
                    "name": "efa",
                    "pabi": 34,
                    "private_abi_needed": 34,
                    "path": "/usr/lib/x86_64-linux-gnu/libibverbs/libefa-rdmav34.so",
                    "driver_file": "/etc/libibverbs.d/efa.driver",
                },
                {
                    "name": "mlx5",
                    "pabi": 34,
                    "private_abi_needed": 34,
                    "path": "/usr/lib/x86_64-linux-gnu/libibverbs/libmlx5-rdmav34.so",
                    "driver_file": "/etc/libibverbs.d/mlx5.driver",
                },
            ],
            "flavor": "inbox",
        },
    },
    node={
        "name": "p5-48xlarge",
        "labels": {"node.kubernetes.io/instance-type": "p5.48xlarge"},
        "rdma": {"stack": "inbox", "devices": efa(P5EN_EFA)},
        "gpu": {"gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")},
    },
    job={"runtime": "slurm", "kind": "srun --container-image"},
    working={
        "image": {
            "rdma": {
                "libibverbs": {
                    "version": "1.14.56.0",
                    "rdma_core": "56.0",
                    "symbol_versions": [
                        "IBVERBS_1.0",
                        "IBVERBS_1.1",
                        "IBVERBS_1.5",
                        "IBVERBS_1.6",
                        "IBVERBS_1.7",
                        "IBVERBS_1.8",
                        "IBVERBS_1.9",
                        "IBVERBS_1.10",
                        "IBVERBS_1.11",
                        "IBVERBS_1.12",
                        "IBVERBS_1.13",
                        "IBVERBS_1.14",
                        "IBVERBS_PRIVATE_34",
                    ],
                    "private_abi": 34,
                    "has_reg_mr_iova2": True,
                    "has_reg_dmabuf_mr": True,
                    "soname": "libibverbs.so.1",
                    "path": "/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.56.0",
                }
            }
        },
        "absent": ["RDMA-PABI-MISMATCH"],
    },
    assumptions=[
        "the HPC-X libibverbs is modelled as the loaded copy via LD_LIBRARY_PATH; the issue says only that 'the "
        "version with IBVERBS_PRIVATE_59 gets loaded during job init'",
        "the symbol-version lists are filled from the two rdma-core releases; the issue names only the private ABIs",
        "the provider file names (rdmav34) and the mlx5 provider are assumed from the system rdma-core 56 packages "
        "('ibverbs-providers (libefa, libmlx5, etc.)')",
        "the node is modelled as p5.48xlarge with 16 EFA devices (the real instance has 32); the Slurm/pyxis launch "
        "is assumed for the DGXC benchmark recipe",
    ],
    expect=[{"id": "RDMA-PABI-MISMATCH", "severity": "error"}],
    must_not=["EFA-NO-OFI-PLUGIN", "RDMA-NO-LIBIBVERBS"],
    mechanism="Two rdma-core builds in one image: HPC-X's libibverbs (private ABI 59) is loaded ahead of the "
    "system one that the EFA/mlx5 providers were built for (private ABI 34), so libefa cannot load and the "
    "OFI plugin, and with it EFA, is lost.",
    expect_kind="image RDMA userspace consistency rule (provider private ABI vs the loaded libibverbs)",
)

case(
    id="awsome-distributed-ai-1239-efa-installer-bundled-ofi-plugin-deepep-v2-negative",
    url="https://github.com/awslabs/awsome-distributed-ai/pull/1239",
    cause="(negative) The deepep-v2 test image uses the aws-ofi-nccl plugin bundled with the EFA installer "
    "(/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so, aws-ofi-nccl 1.21.1); on 2x p6-b200.48xlarge (8 B200 + 8 EFA "
    "each, gdrdrv loaded) the internode test ran to completion on all 16 ranks.",
    established_by="reviewer's end-to-end validation in the merged PR: RUN_EXIT=0 on both nodes, no "
    "Traceback/AssertionError/CUDA error, and NCCL_DEBUG=INFO showing the bundled plugin loaded on every rank",
    fix=None,
    seen="NCCL INFO NET/OFI Initializing aws-ofi-nccl 1.21.1",
    image={
        "profile": "efa-installer",
        "reference": "awsome-distributed-ai deepep-v2 image (EFA installer with bundled aws-ofi-nccl)",
        "nccl_net_plugins": [
            {
                "name": "aws-ofi-nccl",
                "project": "aws-ofi-nccl",
                "version": "1.21.1",
                "path": "/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so",
            }
        ],
    },
    node={
        "name": "p6-b200",
        "labels": {"node.kubernetes.io/instance-type": "p6-b200.48xlarge"},
        "rdma": {"stack": "inbox", "devices": efa(P6_EFA)},
        "gpu": {"gpus": gpus("NVIDIA B200", 8, "datacenter")},
    },
    job={
        "runtime": "slurm",
        "kind": "sbatch (slurm/test-internode.sbatch)",
        "ranks_per_node": 8,
        "env": {
            "NCCL_GIN_TYPE": "5",
            "NCCL_SYM_GIN_KERNELS_ENABLE": "0",
            "NCCL_DEBUG": "INFO",
        },
    },
    assumptions=[
        "the job is reduced to the sbatch launch and the NCCL variables the review names; EP_NCCL_ROOT_DIR and "
        "LD_PRELOAD of the image's libnccl.so.2 are left out",
        "the image's NCCL build (under $NCCL_HOME) is not modelled: its version is not in the excerpt",
        "the EFA kernel driver 3.3.0g and gdrdrv are not modelled as node facts",
    ],
    expect=[],
    must_not=["EFA-NO-OFI-PLUGIN", "NCCL-NET-PLUGIN-DEPENDENCY-MISSING", "OFI-PLUGIN-LIBFABRIC-TOO-OLD"],
    mechanism="(negative) An EFA installer that ships aws-ofi-nccl under /opt/amazon/ofi-nccl: NCCL loads it "
    "(libnccl-net-ofi.so) and the job runs over EFA.",
    expect_kind="negative: nothing should be reported as the cause of a failure",
    sealed_source="issues (merged PR)",
)


# ================================================================================ launch spec: ranks, devices
case(
    id="aicr-1413-gb300-connectx8-roce-nccl-builtin-ib-working-negative",
    url="https://github.com/NVIDIA/aicr/issues/1413",
    cause="(negative) A standalone RoCE NCCL all_reduce_perf on AWS p6e-gb300r (GB300, ConnectX-8 RoCE, 4 GPUs per "
    "node x 2 nodes) with nvcr.io/nvidia/pytorch:26.01-py3 (CUDA 13.1.1, NCCL 2.29): NCCL_IB_HCA=rocep, "
    "NCCL_NET_PLUGIN=none to bypass the bundled aws-ofi/EFA plugin, RoCE NICs claimed through DRA; NCCL used its "
    "built-in IB transport over all 8 rocep* devices with GPUDirect RDMA (Data Direct), peak busbw about 387 GB/s.",
    established_by="maintainer's end-to-end validation comment in the issue (banner 'Using network IB', 'PXN 1 GDR "
    "1', measured busbw) and the merged RoCE NET variant PR #1428",
    fix=None,
    seen="NCCL INFO Using network IB",
    image={
        "profile": "rdma-core-39-mlx5",
        "platform": "linux/arm64",
        "reference": "nvcr.io/nvidia/pytorch:26.01-py3",
        "cuda": {"version": "13.1.1", "origin": "version.json", "path": "/usr/local/cuda/version.json"},
        "nccl": [
            {
                "version": "2.29.2",
                "origin": "library",
                "path": "/usr/lib/aarch64-linux-gnu/libnccl.so.2.29.2",
            }
        ],
    },
    node={
        "name": "p6e-gb300r",
        "labels": {"node.kubernetes.io/instance-type": "p6e-gb300r"},
        "rdma": {
            "stack": "doca",
            "devices": [
                {"name": n, "driver": "mlx5_core", "link_layer": "Ethernet"}
                for n in (
                    "rocep161s0_dma",
                    "rocep162s0_dma",
                    "rocep163s0_dma",
                    "rocep164s0_dma",
                    "rocep199s0_dma",
                    "rocep200s0_dma",
                    "rocep201s0_dma",
                    "rocep202s0_dma",
                )
            ],
        },
        "gpu": {"gpus": gpus("NVIDIA GB300", 4, "datacenter")},
    },
    job={
        "runtime": "kubernetes",
        "kind": "MPIJob",
        "gpus": 4,
        "resources": {"nvidia.com/gpu": "4"},
        "devices": ["/dev/infiniband"],
        "env": {"NCCL_IB_HCA": "rocep", "NCCL_NET_PLUGIN": "none"},
    },
    assumptions=[
        "only the first and last RoCE device names are in the comment ('rocep161s0_dma ... rocep202s0_dma'); the six "
        "between are illustrative, as are the DOCA stack and the NCCL patch release 2.29.2",
        "the DRA RoCE claim is modelled as /dev/infiniband in the pod; the launcher (MPIJob) follows the validator's "
        "template in the related PR",
    ],
    expect=[],
    must_not=["ENV-NCCL-IB-HCA-NO-DEVICE", "RDMA-NO-MLX5-PROVIDER", "ENV-DISABLES-IB", "EFA-NO-OFI-PLUGIN"],
    mechanism="(negative) NCCL's built-in IB transport over ConnectX-8 RoCE with NCCL_IB_HCA=rocep and the bundled "
    "OFI plugin bypassed works at full bandwidth on GB300.",
    expect_kind="negative: nothing should be diagnosed as an error",
)

case(
    id="megatron-bridge-5522-slurm-cyclic-procid-barrier-guesses-same-gpu",
    url="https://github.com/NVIDIA-NeMo/Megatron-Bridge/pull/5522",
    cause="Multi-node checkpoint conversion under Slurm crashed with NCCL's 'Multiple ranks detected using the "
    "same GPU on this node': the script's torch.distributed.barrier() had no device_ids, so torch picked the device "
    "as rank % local_gpu_count, which collides for ranks on the same node when Slurm assigns SLURM_PROCID "
    "cyclically across nodes.",
    established_by="merged PR 'fix(ckpt): pass device_ids to barrier in GPU conversion backend' (the barrier now "
    "passes device_ids=[torch.cuda.current_device()]); the author verified it manually on a multi-node Slurm run",
    fix="pass device_ids to barrier() (use the device the rank already set), or launch with block distribution so "
    "global rank % GPUs per node equals the local rank",
    seen="Multiple ranks detected using the same GPU on this node",
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "Megatron-Bridge container (GPU conversion backend)",
        "nccl": pip_nccl("2.30.3"),
    },
    node={
        "name": "slurm-gpu-node",
        "rdma": {"stack": "mlnx_ofed", "devices": mlx5(8)},
        "gpu": {"gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")},
    },
    job={
        "runtime": "slurm",
        "kind": "srun (cyclic task distribution across 2 nodes)",
        "ranks_per_node": 8,
        "gpus": 8,
    },
    assumptions=[
        "NCCL 2.30.3 is assumed (the quoted message is the wording NCCL 2.30.3+ uses for ranks sharing a GPU); "
        "the PR does not give the NCCL version",
        "node model (8 H100, 8 IB HCAs) and 2 nodes are illustrative; the PR says 'more than one node'",
        "the cyclic SLURM_PROCID assignment is named in the job kind only; job facts have no field for the task "
        "distribution",
    ],
    expect=[],
    must_not=["JOB-RANKS-EXCEED-GPUS", "JOB-NO-GPU-REQUEST"],
    mechanism="Application picks a rank's GPU from global rank modulo GPUs per node; with Slurm's cyclic rank "
    "placement two ranks of one node land on the same GPU and NCCL rejects the communicator.",
    expect_kind="launch-spec rule (rank-to-GPU mapping under cyclic Slurm distribution); no rule names it today "
    "(ranks per node equal GPUs per node, so the rank-count rule does not apply)",
    sealed_source="issues (merged PR)",
)

case(
    id="vllm-55906-nixl-same-host-containers-separate-pid-namespace-cuda-ipc-falls-back-to-tcp",
    url="https://github.com/vllm-project/vllm/pull/55906",
    cause="vLLM prefill and decode (NixlConnector over UCX) ran in two Docker containers on one host with 2 H100 "
    "SXM5; with separate PID namespaces UCX's CUDA IPC failed ('invalid device context') and the KV transfers fell "
    "back to TCP ('TCP software emulation') while every request still returned HTTP 200; sharing the PID namespace "
    "(--pid=container:pd-namespace) made UCX select CUDA IPC zero-copy.",
    established_by="PR author's PID-only A/B with the unmodified NixlConnector (vLLM v0.28.0, Qwen3-0.6B, "
    "UCX_LOG_LEVEL=debug, one identical request per configuration): shared PID namespace -> CUDA IPC zero-copy, "
    "isolated -> invalid device context -> TCP; UCX issue #11978 names the check (uct_cuda_ipc_open_memhandle_posix_fd "
    "rejects peers in another PID namespace)",
    fix="run the prefill and decode containers in one PID namespace (docker run --pid=container:<first> or "
    "--pid=host; Kubernetes: one pod with shareProcessNamespace, or hostPID) with both GPUs visible to both",
    seen=None,
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "vllm/vllm-openai:v0.28.0 (NIXL with its bundled UCX)",
    },
    node={
        "name": "h100-pd-host",
        "gpu": {"gpus": gpus("NVIDIA H100 80GB HBM3", 2, "datacenter")},
    },
    job={
        "runtime": "docker",
        "kind": "docker run",
        "gpus": -1,
        "host_network": True,
        "host_ipc": True,
        "containers_per_node": 2,
    },
    assumptions=[
        "both containers see both GPUs ('mutual GPU visibility' in the PR) and are modelled with --gpus all",
        "--network host and --ipc host are assumed for both containers (the PR's A/B changes only the PID "
        "namespace); the job facts have no PID-namespace field, so the failing and the working configuration "
        "have the same job facts and no working variant is given",
        "the image profile is illustrative; the node's RDMA NICs are not involved (same-host transfer)",
    ],
    expect=[],
    must_not=["JOB-GPU-SUBSET-CUDA-IPC", "UCX-TLS-NO-GPU-TRANSPORT"],
    mechanism="UCX's CUDA-IPC transport cannot import a peer's GPU memory handle across containers in different "
    "PID namespaces, so same-host NIXL KV transfers silently fall back to TCP.",
    expect_kind="job launch rule (containers exchanging GPU memory by UCX CUDA IPC need a shared PID namespace); "
    "the job facts carry no PID namespace and no rule names it today",
    sealed_source="issues (open PR)",
)

case(
    id="dynamo-12463-ucx-net-devices-unset-ib-vm-nixl-garbage-tokens",
    url="https://github.com/ai-dynamo/dynamo/issues/12463",
    cause="vLLM prefill/decode disaggregation (NixlConnector over UCX) on 2 H200 nodes with 8 InfiniBand HCAs in "
    "passthrough VMs returned garbage tokens with HTTP 200 when UCX_NET_DEVICES was left unset; with "
    "UCX_NET_DEVICES=mlx5_0:1 on both worker containers, and no other change, the output was correct.",
    established_by="reporter's A/B in the issue: the same DynamoGraphDeployment spec with and without the "
    "UCX_NET_DEVICES=mlx5_0:1 entry (all 8 HCAs PORT_ACTIVE with LIDs; UCX_TLS=rc_x,rc,dc_x,dc,tcp,cuda_copy,"
    "cuda_ipc)",
    fix="pin UCX_NET_DEVICES to the HCA(s) the worker's rdma/ib allocation gives it (e.g. mlx5_0:1)",
    seen=None,
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.3.0",
        "ucx": {"version": "1.20.0", "origin": "image", "path": "/usr/local/ucx/lib/libucp.so.0"},
    },
    node={
        "name": "h200-passthrough-vm",
        "rdma": {"stack": "mlnx_ofed", "devices": mlx5(8)},
        "gpu": {"gpus": gpus("NVIDIA H200", 8, "datacenter")},
    },
    job={
        "runtime": "kubernetes",
        "kind": "DynamoGraphDeployment (vLLM prefill/decode workers)",
        "resources": {"nvidia.com/gpu": "1", "rdma/ib": "1"},
        "gpus": 1,
        "env": {
            "UCX_TLS": "rc_x,rc,dc_x,dc,tcp,cuda_copy,cuda_ipc",
            "UCX_RNDV_SCHEME": "auto",
            "UCX_RNDV_THRESH": "0",
            "UCX_RCACHE_MAX_UNRELEASED": "1024",
        },
    },
    working={"job": {"env": {"UCX_NET_DEVICES": "mlx5_0:1"}}, "absent": []},
    assumptions=[
        "the UCX version and path in the vllm-runtime:1.3.0 image are illustrative",
        "MLNX_OFED on the VMs is an assumption; the issue shows ibv_devinfo for 8 IB HCAs (fw 28.45.1200)",
        "the thread establishes the A/B only, not which HCA UCX picked without the setting",
    ],
    expect=[],
    must_not=["ENV-UCX-NET-DEVICES-NOT-ON-NODE", "UCX-TLS-NO-GPU-TRANSPORT", "UCX-NO-IB-TRANSPORT"],
    mechanism="UCX left to choose among all HCAs of a passthrough VM (only one allocated to the worker) for NIXL "
    "KV-cache transfers: transfers silently corrupt; pinning UCX_NET_DEVICES to the worker's HCA fixes it.",
    expect_kind="launch-spec rule (UCX device selection unset while the pod is allocated a subset of HCAs); no rule "
    "names it today",
)


# ================================================================ write
def main() -> None:
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids)), ids
    for c in CASES:
        for k in (
            "id",
            "url",
            "cause",
            "established_by",
            "mechanism",
            "image",
            "node",
            "assumptions",
            "expect",
        ):
            assert k in c, (c.get("id"), k)
    doc = {"description": DESCRIPTION, "cases": CASES}
    with open(os.path.join(HERE, "cases.json"), "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")
    print(f"wrote {len(CASES)} cases")


if __name__ == "__main__":
    main()
