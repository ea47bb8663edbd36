"""Build /work/sealed7/cases.json (the seventh sealed incident set) from the case list below.

Each case is in the format of the repo's tests/incidents/cases.json (loaded by tests/incidents/corpus.py), plus
`mechanism`, `expect_kind`, `sealed_source`, `cause`, `established_by`, `fix`, `seen`, `must_not`, `working`,
`assumptions`. Facts are as the thread states them; every fact added is listed in `assumptions`.

Collected 2026-12-07. Every source (owner/repo + issue/PR number) was checked with exclusion-check.sh against
`git -C /work/main grep` (whole tree, evaluation/ included), /work/shared, /work/sealed .. /work/sealed6,
/work/main/evaluation and bare '#N' in /work/main/src/imgcheck/data and /work/main/compat_matrix (files/lines naming
the upstream); see exclusion-check.txt (a candidate named in any earlier set's exclusion-check.txt counts as a hit).
No imgcheck rule was run to choose a case; docs/rules.md was read only to fill `expect` / `must_not` afterwards.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

DESCRIPTION = (
    "SEALED held-out incident set #7 for imgcheck: public threads nobody on the team had read (none of these URLs "
    "or issue numbers appears in the repo, in /work/shared or in /work/sealed .. /work/sealed6 when collected). Same "
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


# ================================================================================ launch spec: RDMA devices
case(
    id="pytorch-111424-pyxis-container-without-dev-infiniband",
    url="https://github.com/pytorch/pytorch/issues/111424",
    cause="A two-node Slurm job on InfiniBand nodes ran its training container without the host's /dev/infiniband "
    "inside it; NCCL found no IB device ('NET/IB : No device found') and ran over NET/Socket although "
    "NCCL_IB_DISABLE=0 was set.",
    established_by="reporter's verified fix in the thread (2024-02-29): mapping /dev/infiniband into the NeMo FW "
    "Training container with `srun --container-image ... --container-mounts /dev/infiniband/:/dev/infiniband` "
    "'worked for me'; a PyTorch maintainer (H-Huang) had pointed at the container's InfiniBand setup",
    fix="bind /dev/infiniband into the container (--container-mounts=/dev/infiniband:/dev/infiniband) or configure "
    "enroot's Mellanox hook so the devices are mounted",
    seen="NCCL INFO NET/IB : No device found.",
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "nvcr.io/ea-bignlp/ga-participants/nemofw-training:23.11",
    },
    node={
        "name": "node013",
        "rdma": {"stack": "mlnx_ofed", "devices": mlx5(8)},
        "gpu": {"gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")},
    },
    job={
        "runtime": "slurm",
        "kind": "srun --container-image",
        "devices": [],
        "env": {
            "NCCL_DEBUG": "INFO",
            "NCCL_IB_DISABLE": "0",
            "NCCL_IB_CUDA_SUPPORT": "1",
            "NCCL_SOCKET_IFNAME": "^lo,docker,virbr,vmnet,vboxnet,wl,ww,ppp,eth,bond",
        },
    },
    working={
        "job": {"devices": ["/dev/infiniband"]},
        "absent": ["JOB-RDMA-DEVICES-NOT-EXPOSED"],
    },
    assumptions=[
        "the image's rdma-core (profile rdma-core-39-mlx5) is illustrative: the thread names the NeMo FW Training "
        "23.11 container only in the fix; the first report does not say which image ran",
        "8 IB HCAs, MLNX_OFED and 8 H100 GPUs are illustrative (the thread says two nodes 'connected with "
        "Infini-Band')",
        "devices [] models 'no /dev/infiniband in the container' (the fix is the bind mount)",
        "the env is the export block of the reporter's sbatch file (HYDRA_FULL_ERROR/CUDA_DEVICE_MAX_CONNECTIONS left "
        "out)",
    ],
    expect=[{"id": "JOB-RDMA-DEVICES-NOT-EXPOSED", "severity": "warning"}],
    must_not=["ENV-DISABLES-IB", "RDMA-NO-LIBIBVERBS", "RDMA-NO-MLX5-PROVIDER"],
    mechanism="Container started by pyxis/enroot without /dev/infiniband: libibverbs sees no usable device, NCCL "
    "reports 'NET/IB : No device found' and silently uses TCP sockets.",
    expect_kind="job-spec rule (container launch without RDMA device nodes on an IB node)",
)

case(
    id="vllm-6610-roce-container-not-privileged-socket-fallback",
    url="https://github.com/vllm-project/vllm/issues/6610",
    cause="Multi-node vLLM (pipeline parallel) ran in Docker containers on RoCE nodes (BlueField-3 NICs); the "
    "containers had no access to the RDMA devices, so NCCL did not use IB and fell back to sockets.",
    established_by="vLLM maintainer (youkaichao) asked for NCCL_DEBUG=TRACE, saying RDMA was probably not used; the "
    "reporter confirmed 'IB wasn't being used and NCCL was using socket' and 'Setting --privileged for the container "
    "solved that'",
    fix="start the containers with the RDMA devices (--privileged, or --device=/dev/infiniband with IPC_LOCK / "
    "memlock) so NCCL can open the HCAs",
    seen=None,
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "vllm/vllm-openai (aarch64 build)",
    },
    node={
        "name": "roce-node",
        "rdma": {"stack": "mlnx_ofed", "devices": mlx5(2, "Ethernet")},
        "gpu": {"gpus": gpus("NVIDIA GH200 480GB", 1, "datacenter")},
    },
    job={
        "runtime": "docker",
        "kind": "docker run",
        "gpus": -1,
        "devices": [],
        "privileged": False,
    },
    working={"job": {"privileged": True}, "absent": ["JOB-RDMA-DEVICES-NOT-EXPOSED"]},
    assumptions=[
        "the node model is illustrative: the thread says aarch64 (Docker required for aarch64), RoCE and an added "
        "BlueField-3 card per server; GH200 and 2 RoCE ports are illustrative; the architecture is not modelled",
        "the image's rdma-core and MLNX_OFED on the host are illustrative",
        "devices [] / privileged false model 'container without RDMA access' (the fix is --privileged)",
        "later in the thread the reporter says the throughput question itself came from a misunderstanding of "
        "pipeline parallelism; the established part used here is only the socket fallback fixed by --privileged",
    ],
    expect=[{"id": "JOB-RDMA-DEVICES-NOT-EXPOSED", "severity": "warning"}],
    must_not=["RDMA-NO-LIBIBVERBS", "RDMA-NO-MLX5-PROVIDER", "ENV-DISABLES-IB"],
    mechanism="Docker container without the RDMA device nodes on a RoCE node: NCCL finds no IB device and uses TCP "
    "sockets between nodes.",
    expect_kind="job-spec rule (docker run without --device /dev/infiniband or --privileged on an RDMA node)",
)

# ================================================================================ GDRCopy (node kernel module)
case(
    id="gdrcopy-305-gdrdrv-2.4.1-pin-fails-with-driver-560",
    url="https://github.com/NVIDIA/gdrcopy/issues/305",
    cause="gdrdrv from GDRCopy 2.4.1 with NVIDIA driver 560.35.03 on A100: gdr_pin_buffer fails in gdrcopy_sanity "
    "(2 of 28 tests); a gdrdrv defect already fixed on the master branch and released in GDRCopy 2.4.2.",
    established_by="GDRCopy maintainer (pakmarkthub): 'an issue we have already fixed in the master branch' (rebuild "
    "the gdrdrv driver); the reporter verified 'Ok this worked'; maintainer (drossetti) later tagged release 2.4.2 "
    "with the fix",
    fix="install the gdrdrv kernel module from GDRCopy 2.4.2 or newer (rebuilding libgdrapi alone is not enough)",
    seen='Assertion "(gdr_pin_buffer(g, d_A[0], buffer_size, 0, 0, &A_mh[0])) == (0)" failed at sanity.cpp:435',
    image={
        "profile": "no-rdma-userspace",
        "reference": "gdrcopy 2.4.1 tests (host install)",
    },
    node={
        "name": "a100-node",
        "os": {"id": "ubuntu", "version_id": "20.04"},
        "kernel": {"release": "5.15.0-1071"},
        "gpu": {
            "driver_version": "560.35.03",
            "gpus": gpus("NVIDIA A100-SXM4-80GB", 8, "datacenter"),
        },
    },
    job={"runtime": "bare-metal", "kind": "gdrcopy_sanity"},
    assumptions=[
        "the A100 model and count are illustrative (the thread says A100)",
        "the kernel release is written as the thread gives it (5.15.0-1071, flavour suffix not stated)",
        "gdrdrv/libgdrapi 2.4.1 are not node facts imgcheck reads; CUDA 12.5 on the host is not modelled",
    ],
    expect=[],
    must_not=["NODE-GPU-NO-GDR", "CUDA-DRIVER-TOO-OLD"],
    mechanism="GDRCopy 2.4.1's gdrdrv kernel module fails to pin GPU memory under driver 560; GPU-initiated copies "
    "(gdr_pin_buffer) fail until gdrdrv 2.4.2 is installed.",
    expect_kind="node rule: gdrdrv release with a known defect on this driver branch (no rule reads gdrdrv today)",
)

case(
    id="gdrcopy-234-gdrdrv-loaded-without-dev-node",
    url="https://github.com/NVIDIA/gdrcopy/issues/234",
    cause="On a Clara AGX (dGPU RTX 6000, driver 460.73.01, kernel 4.9.201-tegra) gdrdrv was loaded with modprobe; "
    "the module was loaded (lsmod) but no /dev/gdrdrv device node existed, so every gdr_open failed.",
    established_by="reporter's root cause and verified fix in the thread: 'the driver gdrdrv doesn't create gdrdrv "
    "device. I used insmod.sh script and after that all works fine' (insmod.sh creates the /dev/gdrdrv inode)",
    fix="load gdrdrv with the project's insmod.sh (or the packaged service) so /dev/gdrdrv is created, or mknod it "
    "from the major number in /proc/devices",
    seen="gdr_open error: Is gdrdrv driver installed and loaded?",
    image={"profile": "no-rdma-userspace", "reference": "gdrcopy master (host build)"},
    node={
        "name": "nvidia-tegra",
        "kernel": {"release": "4.9.201-tegra"},
        "gpu": {
            "driver_version": "460.73.01",
            "gpus": gpus("Quadro RTX 6000", 1, "workstation"),
        },
    },
    job={"runtime": "bare-metal", "kind": "sanity / copybw"},
    assumptions=[
        "the GPU name 'Quadro RTX 6000' stands for the thread's 'dGPU RTX 6000' (class workstation)",
        "aarch64 (Tegra host) is not modelled",
        "the gdrdrv module state and /dev/gdrdrv are not node facts imgcheck reads",
    ],
    expect=[],
    must_not=["NODE-GPU-NO-GDR"],
    mechanism="gdrdrv loaded without its /dev/gdrdrv character device: libgdrapi cannot open the driver and every "
    "GDRCopy user fails as if the module were missing.",
    expect_kind="node rule: gdrdrv module loaded but device node missing (no rule reads gdrdrv today)",
)

case(
    id="gdrcopy-139-geforce-no-gpudirect-rdma",
    url="https://github.com/NVIDIA/gdrcopy/issues/139",
    cause="gdrcopy sanity failed at every gdr_pin_buffer (-EINVAL, CUDA_ERROR_INVALID_DEVICE) because the GPU does not "
    "support GPUDirect RDMA, on which GDRCopy relies.",
    established_by="GDRCopy maintainer (drossetti): 'GDRCopy relies on GPUDirect RDMA which is only supported on "
    "Quadro and Tesla GPUs'; closed as not a bug",
    fix="use a data-center or professional GPU for GDRCopy / GPUDirect RDMA",
    seen='Assertion "(gdr_pin_buffer(g, d_ptr, size, 0, 0, &mh)) == (0)" failed at sanity.cpp:188',
    image={"profile": "no-rdma-userspace", "reference": "gdrcopy sanity (host build)"},
    node={
        "name": "geforce-host",
        "gpu": {
            "driver_version": "450.66",
            "gpus": gpus("GeForce RTX 2080 Ti", 1, "consumer"),
        },
    },
    job={"runtime": "bare-metal", "kind": "sanity"},
    assumptions=[
        "the GPU model is illustrative: the maintainer's answer implies a GPU that is neither Quadro nor Tesla "
        "(GeForce class); the thread excerpt does not name it",
        "driver 450.66 is illustrative (2020-09, the time of the thread)",
    ],
    expect=[{"id": "NODE-GPU-NO-GDR", "severity": "warning"}],
    must_not=["CUDA-DRIVER-TOO-OLD"],
    mechanism="Consumer GPU without GPUDirect RDMA support: nvidia_p2p_get_pages refuses the pin, so gdr_pin_buffer "
    "fails with EINVAL.",
    expect_kind="node rule: GPU class without GPUDirect RDMA",
    working={
        "node": {"gpu": {"gpus": gpus("Tesla V100-PCIE-16GB", 1, "datacenter")}},
        "absent": ["NODE-GPU-NO-GDR"],
    },
)

case(
    id="gdrcopy-327-gdrdrv-and-libgdrapi-versions-mixed",
    url="https://github.com/NVIDIA/gdrcopy/issues/327",
    cause="(negative) Host gdrdrv 2.4.3 with libgdrapi 2.5 in the container image: the maintainers state the two are "
    "forward and backward compatible and can be mixed (only the newest sanity tests may fail).",
    established_by="GDRCopy maintainer (pakmarkthub): 'gdrdrv (the GDRCopy driver) and libgdrapi are forward and "
    "backward compat. You can mix them ... you should be able to run the other applications.'",
    fix=None,
    seen=None,
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "vLLM/NIXL image with GDRCopy 2.5 libgdrapi",
    },
    node={
        "name": "gpu-node",
        "rdma": {"stack": "mlnx_ofed", "devices": mlx5(8)},
        "gpu": {
            "driver_version": "570.133.20",
            "gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter"),
        },
    },
    job={
        "runtime": "kubernetes",
        "kind": "Pod",
        "resources": {"nvidia.com/gpu": "8"},
        "devices": ["/dev/infiniband", "/dev/gdrdrv"],
        "cap_add": ["IPC_LOCK"],
    },
    assumptions=[
        "the thread is a question (2025-07) from a user running vLLM on Kubernetes; node, GPUs, driver, RDMA stack "
        "and pod spec are illustrative of such a deployment",
        "GDRCopy versions (host 2.4.3, image 2.5) are not facts imgcheck reads",
    ],
    expect=[],
    must_not=["NODE-GPU-NO-GDR", "JOB-RDMA-DEVICES-NOT-EXPOSED"],
    mechanism="(negative) gdrdrv 2.4.x on the host with a newer libgdrapi in the image works; a version difference "
    "alone is not a failure.",
    expect_kind="negative: nothing should be reported at error severity",
)

case(
    id="gdrcopy-278-kmod-only-install-sanity-passes",
    url="https://github.com/NVIDIA/gdrcopy/issues/278",
    cause="(negative) On a Kubernetes node that had only the NVIDIA driver, installing the gdrcopy-kmod 2.4 DKMS "
    "package (plus the user-space packages) gave a working gdrdrv: /dev/gdrdrv exists and gdrcopy_sanity passes "
    "28/28.",
    established_by="reporter's output (Total: 28, Passed: 28) and GDRCopy maintainer (pakmarkthub): the kmod "
    "package alone is sufficient to install the driver",
    fix=None,
    seen="Total: 28, Passed: 28, Failed: 0, Waived: 0",
    image={
        "profile": "no-rdma-userspace",
        "reference": "host (RHEL 8) gdrcopy 2.4 packages",
    },
    node={
        "name": "k8s-gpu-node",
        "os": {"id": "rhel", "version_id": "8"},
        "gpu": {
            "driver_version": "535.104.12",
            "gpus": gpus("NVIDIA A100-SXM4-80GB", 8, "datacenter"),
        },
    },
    job={"runtime": "bare-metal", "kind": "gdrcopy_sanity"},
    assumptions=[
        "GPU model, count and driver 535.104.12 are illustrative (the packages are the CUDA 12.2 rhel8 builds)",
        "gdrdrv and /dev/gdrdrv are not node facts imgcheck reads",
    ],
    expect=[],
    must_not=["NODE-GPU-NO-GDR", "CUDA-DRIVER-TOO-OLD"],
    mechanism="(negative) gdrdrv installed from the kmod DKMS package on the host; GDRCopy sanity passes.",
    expect_kind="negative: nothing should be reported at error severity",
)

# ================================================================================ CUDA forward compat in the image
case(
    id="awsome-distributed-ai-314-nccl-tests-cuda-compat-803",
    url="https://github.com/awslabs/awsome-distributed-ai/pull/314",
    cause="The nccl-tests container (FROM nvidia/cuda:12.2.0-devel-ubuntu22.04, cuda-compat on its library path) "
    "failed on the cluster's GPU nodes with 'system has unsupported display driver / cuda driver combination' "
    "(CUDA 803): the image's cuda-compat user-mode driver did not match the host driver.",
    established_by="merged PR by the repository maintainers ('nccl-tests container: fix cuda driver mismatch': "
    "'update cuda compat to fix error' with the failing output; base image moved to 12.2.2); the follow-up note in "
    "the Dockerfile says to keep the cuda-compat package the latest when nccl-tests crashes with an incompatible "
    "version",
    fix="keep the image's cuda-compat not older than the host driver, or keep /usr/local/cuda/compat off the image's "
    "LD_LIBRARY_PATH so the host driver's libcuda is used",
    seen="Test CUDA failure common.cu:894 'system has unsupported display driver / cuda driver combination'",
    image={
        "profile": "no-rdma-userspace",
        "reference": "awsome-distributed-training nccl-tests.Dockerfile (FROM nvidia/cuda:12.2.0-devel-ubuntu22.04)",
        "cuda": {
            "version": "12.2.0",
            "origin": "version.json",
            "path": "/usr/local/cuda/version.json",
            "compat_driver": "535.54.03",
            "compat_path": "/usr/local/cuda/compat/libcuda.so.535.54.03",
            "compat_on_path": True,
            "compat_path_how": "LD_LIBRARY_PATH (image Env)",
        },
    },
    node={
        "name": "ip-10-1-113-84",
        "gpu": {
            "driver_version": "535.161.08",
            "gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter"),
        },
    },
    job={"runtime": "slurm", "kind": "srun --container-image"},
    assumptions=[
        "the compat driver 535.54.03 is the one CUDA 12.2.0 ships; that the Dockerfile puts /usr/local/cuda/compat on "
        "LD_LIBRARY_PATH is inferred from the fix and from the later thread on the same Dockerfile (issue 475: "
        "'remove /usr/local/cuda/compat from LD_LIBRARY_PATH')",
        "the host driver 535.161.08 and the H100 nodes are illustrative (the PR names only the node ip-10-1-113-84 "
        "and SageMaker HyperPod)",
        "the EFA installer 1.31.0, aws-ofi-nccl 1.8.1 and GDRCopy 2.4.1 in the image are not modelled",
    ],
    expect=[{"id": "CUDA-COMPAT-OLDER-THAN-DRIVER-ON-PATH", "severity": "error"}],
    must_not=["CUDA-DRIVER-TOO-OLD", "CUDA-FORWARD-COMPAT-UNSUPPORTED-GPU"],
    mechanism="Image forces its cuda-compat libcuda (from CUDA 12.2.0) onto the loader path; on a newer host driver "
    "the user-mode driver does not match the kernel module and CUDA fails with 803.",
    expect_kind="image rule: compat libcuda on the loader path older than the node driver",
    sealed_source="issues (merged PR)",
    working={
        "image": {"cuda": {"compat_on_path": False}},
        "absent": ["CUDA-COMPAT-OLDER-THAN-DRIVER-ON-PATH"],
    },
)

# ================================================================================ NCCL release behaviour
case(
    id="vllm-5091-nccl-2.19-cumem-default-cudagraph-memory",
    url="https://github.com/vllm-project/vllm/pull/5091",
    cause="NCCL 2.19 (pulled in by PyTorch 2.2) turns on cuMem (virtual memory) allocation by default; with it, "
    "vLLM's CUDA-graph capture of NCCL all-reduce costs extra GPU memory, which had forced vLLM to ship its own "
    "older NCCL (vllm-nccl).",
    established_by="merged PR by the vLLM maintainer (youkaichao): 'the root cause is that NCCL 2.19 will turn on "
    "virtual memory by default, which costs memory during cudagraph capture'; fix sets NCCL_CUMEM_ENABLE=0 and "
    "drops vllm-nccl",
    fix="set NCCL_CUMEM_ENABLE=0 for the workers (or keep NCCL < 2.19)",
    seen=None,
    image={
        "profile": "no-rdma-userspace",
        "reference": "vllm (PyTorch 2.2 wheels)",
        "cuda": {
            "version": "12.1.105",
            "origin": "pip",
            "path": "nvidia-cuda-runtime-cu12",
        },
        "nccl": [
            {
                "version": "2.19.3",
                "origin": "pip",
                "path": "/usr/local/lib/python3.10/dist-packages/nvidia_nccl_cu12-2.19.3.dist-info/METADATA",
            }
        ],
    },
    node={
        "name": "gpu-node",
        "gpu": {
            "driver_version": "535.161.08",
            "gpus": gpus("NVIDIA A100-SXM4-80GB", 4, "datacenter"),
        },
    },
    job={"runtime": "docker", "kind": "docker run", "gpus": -1, "env": {}},
    working={"job": {"env": {"NCCL_CUMEM_ENABLE": "0"}}, "absent": []},
    assumptions=[
        "NCCL 2.19.3 is the nvidia-nccl-cu12 wheel PyTorch 2.2 pins; CUDA 12.1 runtime wheel and path illustrative",
        "node, driver and GPUs are illustrative (the PR states no hardware)",
        "the launch is modelled as docker run; vLLM's own env setting is the fix",
    ],
    expect=[],
    must_not=["CUMEM-OLD-DRIVER", "CUDA-DRIVER-TOO-OLD"],
    mechanism="NCCL >= 2.19 allocates with cuMem by default; CUDA-graph capture of NCCL collectives then reserves "
    "much more GPU memory (an NCCL release behaviour change, avoided with NCCL_CUMEM_ENABLE=0).",
    expect_kind="NCCL release rule (cuMem default since 2.19 raising memory use under CUDA-graph capture; no rule "
    "names this today)",
    sealed_source="issues (merged PR)",
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
