"""Build /work/sealed3/cases.json (the third sealed incident set) from the case list below.

Each case is in the format of the repo's tests/incidents/cases.json (loaded by tests/incidents/corpus.py), plus
`mechanism`, `expect_kind`, `sealed_source`, `cause`, `established_by`, `fix`, `seen`, `must_not`, `working`,
`assumptions`. Facts are as the thread states them; every fact added is listed in `assumptions`.

Collected 2026-12-07. Every source (owner/repo + issue/PR number) was checked against `git -C /work/main grep`,
/work/shared, /work/sealed and /work/sealed2 in the forms repo/issues/N, repo/pull/N, repo#N, "repo PR N",
"repo issue N" (script /tmp/h3/check.sh during collection); none appears. See NOTES.md.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

DESCRIPTION = (
    "SEALED held-out incident set #3 for imgcheck: public threads nobody on the team had read (none of these URLs "
    "or issue numbers appears in the repo, in /work/shared or in /work/sealed or /work/sealed2 when collected). "
    "Same case format as tests/incidents/cases.json: image/node/job facts as each thread states them, `assumptions` "
    "lists every fact added, `expect` the rule ids of docs/rules.md that name the established mechanism today "
    "(empty when none does), `must_not` what the thread rules out, `working` the configuration the thread shows "
    "working. Extra fields: `mechanism` (one sentence; '(negative)' marks a configuration that works), "
    "`expect_kind`, `sealed_source`, `cause`, `established_by`, `fix`, `seen` (the line the user saw, or null). "
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


def ib_dev(name, netdev=None, link="InfiniBand", driver="mlx5_core", state="ACTIVE"):
    port = {"port": 1, "state": state, "link_layer": link}
    if netdev:
        port["netdev"] = netdev
    return {"name": name, "driver": driver, "link_layer": link, "ports": [port]}


# ================================================================ driver / CUDA / fabric manager / driver flavour
case(
    id="dstack-2348-fabricmanager-pinned-older-than-driver",
    url="https://github.com/dstackai/dstack/issues/2348",
    cause="dstack's default OS images pinned nvidia-fabricmanager-535 to 535.183.01 while the cuda-drivers-535 "
    "metapackage let a newer 535.x driver in; Fabric Manager refused to start ('fabric manager NVIDIA GPU driver "
    "interface version 535.183.01 don't match ...'), so the NVSwitch GPUs (8x A100/H100 on AWS, GCP, Azure, OCI) "
    "never finished fabric registration and every CUDA init returned 802.",
    established_by="dstack maintainer (jvstme) diagnosis in the issue (journalctl -u nvidia-fabricmanager shows the "
    "interface-version mismatch) and the merged fix dstackai/dstack#2355 'Fix Fabric Manager in AWS/GCP/Azure/OCI "
    "OS images' (removes the pin so driver and Fabric Manager get the same 535.* version; 'Fixes #2348').",
    fix="install nvidia-fabricmanager of exactly the running driver version (do not pin one without the other)",
    seen="UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). ... Error 802: system not "
    "yet initialized",
    image={
        "profile": "no-rdma-userspace",
        "reference": "dstack default image (conda; the task pip-installs torch)",
        "packages": [{"name": "torch", "version": "2.6.0", "db": "pip"}],
    },
    node={
        "name": "p5-host",
        "labels": {"node.kubernetes.io/instance-type": "p5.48xlarge"},
        "gpu": {"driver_version": "535.230.02", "gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")},
    },
    assumptions=[
        "the running driver version is illustrative: the thread gives Fabric Manager 535.183.01 and says the driver "
        "is a newer 535.x",
        "instance type and GPU model illustrative (the thread names 8:A100/8:H100 on AWS, GCP, Azure, OCI)",
        "torch version illustrative (the task runs `pip install numpy torch`)",
        "imgcheck has no node fact for the Fabric Manager version or service state",
    ],
    expect=[],
    mechanism="NVSwitch systems need Fabric Manager of exactly the driver's version; a pinned older Fabric Manager "
    "does not start, GPUs stay unregistered with the NVLink fabric and CUDA init fails with 802 "
    "cudaErrorSystemNotReady.",
    expect_kind="node fact: Fabric Manager version/state vs driver (no such fact or rule today)",
    must_not=["CUDA-DRIVER-TOO-OLD", "NODE-DRIVER-USERSPACE-MISMATCH"],
)

case(
    id="emmy-558-v100-nvswitch-no-fabricmanager",
    url="https://github.com/cloudrift-ai/emmy/pull/558",
    cause="A fresh 16x V100 SXM3 host behind 12 NVSwitches never had NVIDIA Fabric Manager installed; nvidia-smi "
    "listed all 16 GPUs, but every vLLM worker died at cudaGetDeviceCount() with error 802 'system not yet "
    "initialized'.",
    established_by="merged PR (author's diagnosis in the description: FM never installed; adding FM pinned to the "
    "running driver's exact version as the last provisioning step, gated on /proc/driver/nvidia-nvswitch/devices, "
    "made the host deploy).",
    fix="install and start nvidia-fabricmanager of exactly the running driver version on NVSwitch hosts",
    seen="cudaGetDeviceCount() with error 802: system not yet initialized",
    image={"profile": "no-rdma-userspace", "reference": "vLLM serving image (DeepSeek V4 Flash)"},
    node={
        "name": "v100-16x",
        "gpu": {"driver_version": "580.95.05", "gpus": gpus("Tesla V100-SXM3-32GB", 16, "datacenter")},
    },
    assumptions=[
        "driver version illustrative (the PR says FM is pinned to the running driver's version, not which)",
        "GPU model string illustrative (the PR says 16x V100 SXM3 behind 12 NVSwitches)",
        "the image is a vLLM image; its CUDA/NCCL versions are not given",
    ],
    expect=[],
    mechanism="On NVSwitch systems CUDA cannot initialise until Fabric Manager has configured the fabric; with no "
    "Fabric Manager installed cudaGetDeviceCount returns 802 even though nvidia-smi sees the GPUs.",
    expect_kind="node fact: Fabric Manager presence on NVSwitch hosts (no such fact or rule today)",
    must_not=["CUDA-DRIVER-TOO-OLD"],
    sealed_source="issues",
)

case(
    id="gpustack-4678-vllm-image-compat-libcuda-on-580",
    url="https://github.com/gpustack/gpustack/issues/4678",
    cause="From vLLM v0.15.0 the official image registers its CUDA forward-compat libraries in ld.so.conf; under "
    "the NVIDIA container runtime (--runtime nvidia with NVIDIA_VISIBLE_DEVICES / CDI devices) the ldcache update "
    "makes the image's compat libcuda win over the host's newer 580 driver library, and CUDA fails with 803.",
    established_by="reporter's A/B in the issue: the same image works with --gpus all (runc) and fails with "
    "--runtime nvidia + NVIDIA_VISIBLE_DEVICES or --device nvidia.com/gpu=...; workaround "
    "LD_LIBRARY_PATH=/usr/local/nvidia/lib64:... (host driver libraries first) confirmed; issue closed.",
    fix="put the host driver's libcuda first (LD_LIBRARY_PATH=/usr/local/nvidia/lib64:...) or remove the compat "
    "directory from the image's ld.so.conf when the host driver is newer",
    seen="RuntimeError: Unexpected error from cudaGetDeviceCount(). ... Error 803: system has unsupported display "
    "driver / cuda driver combination",
    image={
        "profile": "no-rdma-userspace",
        "reference": "vllm/vllm-openai:v0.15.0",
        "cuda": {
            "version": "12.9.1",
            "origin": "version.json",
            "path": "/usr/local/cuda/version.json",
            "compat_driver": "575.57.08",
            "compat_path": "/usr/local/cuda/compat/libcuda.so.575.57.08",
            "compat_on_path": True,
            "compat_path_how": "/etc/ld.so.conf.d (image)",
        },
    },
    node={
        "name": "gpu-580",
        "gpu": {"driver_version": "580.82.07", "gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")},
    },
    assumptions=[
        "CUDA toolkit and compat driver versions of the v0.15.0 image are illustrative (the thread says only that "
        "the image configures ld.so.conf and that the host driver is 580 or newer)",
        "host driver 580.82.07 and the GPU model are illustrative",
        "how the compat directory reaches the loader path is modelled as compat_on_path (ld.so.conf)",
    ],
    expect=[{"id": "CUDA-COMPAT-OLDER-THAN-DRIVER-ON-PATH", "severity": "error"}],
    mechanism="The image's forward-compat libcuda (older than the host driver) is on the loader path, so the "
    "process loads a libcuda older than the kernel driver: CUDA returns 803 system has unsupported display driver "
    "/ cuda driver combination.",
    expect_kind="image rule: compat libcuda on the loader path vs node driver",
    must_not=["CUDA-DRIVER-TOO-OLD", "CUDA-FORWARD-COMPAT-UNSUPPORTED-GPU"],
    working={"image": {"cuda": {"compat_on_path": False}}, "absent": ["CUDA-COMPAT-OLDER-THAN-DRIVER-ON-PATH"]},
)

case(
    id="paddle-8195-nccl-2.1.4-cuda9.1-on-cuda8-driver",
    url="https://github.com/PaddlePaddle/Paddle/issues/8195",
    cause="Paddle's CUDA 8 base image dlopened NCCL 2.1.4 built against CUDA 9.1; the node driver (enough for "
    "CUDA 8) is older than CUDA 9.1 needs, so NCCL's first CUDA call failed with 'CUDA driver version is "
    "insufficient for CUDA runtime version' (NCCL 1.3 worked).",
    established_by="Paddle developer (dzhwinter) debug log in the issue ('NCCL version 2.1.4+cuda9.1 ... WARN Cuda "
    "failure CUDA driver version is insufficient') and diagnosis 'we need to upgrade our CUDA Driver to 9.1 if we "
    "want to use NCCL2.1.4'.",
    fix="upgrade the node driver to one that supports CUDA 9.1, or use the NCCL build for CUDA 8",
    seen="init.cu:674 WARN Cuda failure 'CUDA driver version is insufficient for CUDA runtime version'",
    image={
        "profile": "no-rdma-userspace",
        "reference": "paddle CUDA 8 CI image",
        "cuda": {"version": "8.0.61", "origin": "env", "path": "image config Env"},
        "nccl": [
            {
                "version": "2.1.4",
                "origin": "library",
                "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.1.4",
                "cuda": "9.1",
                "cuda_from": "library build string",
            }
        ],
    },
    node={"name": "idgsim-gpu-001", "gpu": {"driver_version": "384.111"}},
    assumptions=[
        "node driver 384.111 is illustrative: the thread says the driver serves CUDA 8 and must be upgraded for "
        "CUDA 9.1 (which needs >= 387.26)",
        "CUDA 8.0.61 and the libnccl path are illustrative (the thread: 'our base docker image is CUDA8', "
        "'NCCL version 2.1.4+cuda9.1')",
    ],
    expect=[{"id": "CUDA-DRIVER-TOO-OLD", "severity": "error"}],
    mechanism="libnccl links its CUDA runtime statically; an NCCL built against CUDA 9.1 needs a driver that "
    "supports 9.1 whatever CUDA the rest of the image uses.",
    expect_kind="image+node rule: NCCL build CUDA vs node driver (CUDA-DRIVER-TOO-OLD variant nccl-build)",
    working={"node": {"gpu": {"driver_version": "390.30"}}, "absent": ["CUDA-DRIVER-TOO-OLD"]},
)

case(
    id="nccl-554-libnccl-cuda11.3-picked-on-cuda10.1-host",
    url="https://github.com/NVIDIA/nccl/issues/554",
    cause="On a CentOS 7 host with CUDA 10.1 and 4x RTX 2080 Ti the reporter installed NCCL 2.8.3 for CUDA 10.1, "
    "but someone else had installed libnccl 2.9.9-1+cuda11.3 into /usr/lib64; nccl-tests loaded libnccl.so.2.9.9 "
    "and failed with an initialization error.",
    established_by="NCCL maintainer (sjeaugey) pointed at the loaded libnccl.so.2.9.9 in the log; the reporter "
    "confirmed ('that is the reason the nccl tests failed') and fixed it by removing the cuda11.3 packages and "
    "installing libnccl-2.8.3-1+cuda10.1.",
    fix="install the NCCL build for the host's CUDA (libnccl-2.8.3-1+cuda10.1) and remove the cuda11.3 build",
    seen="NCCL test failed of initialization error",
    image={
        "profile": "no-rdma-userspace",
        "reference": "host userspace (CentOS 7, CUDA 10.1.243)",
        "cuda": {"version": "10.1.243", "origin": "version.txt", "path": "/usr/local/cuda/version.txt"},
        "nccl": [
            {
                "version": "2.9.9",
                "origin": "rpm",
                "path": "/usr/lib64/libnccl.so.2.9.9",
                "cuda": "11.3",
                "cuda_from": "package version",
                "loaded": True,
            }
        ],
    },
    node={
        "name": "centos7-4x2080ti",
        "gpu": {"driver_version": "418.87.00", "gpus": gpus("GeForce RTX 2080 Ti", 4, "consumer")},
    },
    assumptions=[
        "the driver version is not in the thread; 418.87.00 (a CUDA 10.1 driver) is assumed, consistent with the "
        "failure (a driver >= 465 would have run the cuda11.3 build)",
        "bare-metal run of nccl-tests modelled as an image with the host's userspace",
    ],
    expect=[{"id": "CUDA-DRIVER-TOO-OLD", "severity": "error"}],
    mechanism="The NCCL library actually loaded was built for CUDA 11.3; on a CUDA 10.1-era driver its statically "
    "linked runtime cannot initialise.",
    expect_kind="image+node rule: loaded NCCL build CUDA vs node driver",
    working={
        "image": {
            "nccl": [
                {
                    "version": "2.8.3",
                    "origin": "rpm",
                    "path": "/usr/lib64/libnccl.so.2.8.3",
                    "cuda": "10.1",
                    "cuda_from": "package version",
                    "loaded": True,
                }
            ]
        },
        "absent": ["CUDA-DRIVER-TOO-OLD"],
    },
)

case(
    id="start9-3465-blackwell-on-proprietary-kernel-module",
    url="https://github.com/Start9Labs/start-technologies/issues/3465",
    cause="The -nvidia OS images shipped the proprietary flavour of the NVIDIA kernel modules; Blackwell GPUs "
    "(GB10/DGX Spark, RTX 50) are supported only by the open modules, so the GPU is found but never initialises "
    "(RmInitAdapter failed, nvidia-smi reports no devices).",
    established_by="the issue (NVIDIA's README: 'Blackwell and later are only supported by the open kernel "
    "modules'; modinfo of the shipped ISO shows the proprietary module) and the merged fix "
    "Start9Labs/start-technologies#3693: same driver 580.173.02, open flavour -> GPU works on the DGX Spark; "
    "proprietary -> 'RmInitAdapter failed! (0x62:0x1a:2631)'.",
    fix="ship/install the open kernel module flavour (nvidia-driver-580-open) for Blackwell",
    seen="NVRM: GPU 000f:01:00.0: RmInitAdapter failed! (0x62:0x1a:2631)",
    image={"profile": "no-rdma-userspace", "reference": "ollama service container"},
    node={
        "name": "dgx-spark",
        "arch": "arm64",
        "gpu": {"driver_version": "580.173.02", "kernel_module": "proprietary", "gpus": gpus("NVIDIA GB10", 1)},
    },
    assumptions=["the workload image (an ollama service) is not described further"],
    expect=[],
    mechanism="Blackwell GPUs need the open GPU kernel modules; the proprietary flavour of the same driver fails "
    "RmInitAdapter, so no CUDA device exists.",
    expect_kind="node rule: GPU generation vs kernel-module flavour (no such rule today)",
    must_not=["CUDA-DRIVER-TOO-OLD"],
    working={"node": {"gpu": {"kernel_module": "open"}}, "absent": ["CUDA-DRIVER-TOO-OLD"]},
)

case(
    id="k8s-device-plugin-1431-nvml-mismatch-until-reboot",
    url="https://github.com/NVIDIA/k8s-device-plugin/issues/1431",
    cause="On first boot of the GPU nodes the loaded NVIDIA kernel module did not match the installed user-space "
    "driver (NVML library version 570.195): nvidia-container-cli's prestart hook failed with 'nvml error: "
    "driver/library version mismatch' and the device plugin could not register GPUs; after a reboot the module "
    "matches and GPUs register.",
    established_by="reporter's A/B in the issue (error on initial boot, gone after reboot) and the tools' own "
    "messages naming the mismatch ('Failed to initialize NVML: Driver/library version mismatch', 'NVML library "
    "version: 570.195').",
    fix="reboot (or reload the nvidia modules) after installing/upgrading the driver so module and libraries match",
    seen="nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: unknown",
    image={"profile": "no-rdma-userspace", "reference": "nvidia/k8s-device-plugin:v0.16.2"},
    node={
        "name": "gpu-node",
        "gpu": {
            "driver_version": "570.172.08",
            "userspace_driver_version": "570.195",
            "gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter"),
        },
    },
    assumptions=[
        "the loaded kernel module version 570.172.08 is illustrative (the thread gives only the NVML library "
        "version 570.195 and that a reboot clears the mismatch)",
        "GPU model illustrative",
    ],
    expect=[{"id": "NODE-DRIVER-USERSPACE-MISMATCH", "severity": "error"}],
    mechanism="The kernel module loaded at boot is a different version from the user-space driver libraries; NVML "
    "refuses to initialise until the module is reloaded.",
    expect_kind="node rule: kernel module vs user-space driver version",
    working={"node": {"gpu": {"driver_version": "570.195"}}, "absent": ["NODE-DRIVER-USERSPACE-MISMATCH"]},
)

case(
    id="llm-d-1402-cuda13-image-extensions-need-cudart12",
    url="https://github.com/llm-d/llm-d/issues/1402",
    cause="ghcr.io/llm-d/llm-d-cuda-gb200:v0.7.0-rc.2 ships only CUDA 13 runtime libraries, but its vLLM native "
    "extensions (precompiled, VLLM_USE_PRECOMPILED=1) are linked against libcudart.so.12: importing vllm._C fails.",
    established_by="reporter's ldd evidence in the issue (vllm/_C.abi3.so: libcudart.so.12 => not found; only "
    "nvidia/cu13/lib/libcudart.so.13 present) and maintainer (robertgshaw2-redhat): 'this is fixed in main'.",
    fix="rebuild the image with vLLM extensions compiled for CUDA 13 (or ship the CUDA 12 runtime they need)",
    seen="ImportError: libcudart.so.12: cannot open shared object file: No such file or directory",
    image={
        "profile": "no-rdma-userspace",
        "reference": "ghcr.io/llm-d/llm-d-cuda-gb200:v0.7.0-rc.2",
        "platform": "linux/arm64",
        "cuda": {
            "version": "13.0.2",
            "origin": "pip nvidia-cuda-runtime",
            "path": "/opt/vllm/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13",
        },
    },
    node={
        "name": "gb200",
        "arch": "arm64",
        "gpu": {"driver_version": "580.95.05", "gpus": gpus("NVIDIA GB200", 4, "datacenter")},
    },
    assumptions=[
        "CUDA 13 runtime version 13.0.2 and the node's driver/GPU count are illustrative (the thread: GB200, CUDA "
        "13 image)",
        "imgcheck facts have no field for a Python extension's NEEDED libcudart soname",
    ],
    expect=[],
    mechanism="A Python extension in the image needs libcudart.so.12 while the image carries only the CUDA 13 "
    "runtime, so the import fails regardless of the node.",
    expect_kind="image rule: ELF NEEDED sonames of bundled extensions vs libraries in the image (no such rule today)",
    must_not=["CUDA-DRIVER-TOO-OLD"],
)

# ================================================================ NCCL releases / settings / topology files
case(
    id="horovod-2601-nccl-2.8.3-alltoall-hang",
    url="https://github.com/horovod/horovod/issues/2601",
    cause="Horovod NCCL alltoall (implemented with ncclSend/ncclRecv) hung in FinalizeGPUQueue with NCCL 2.8.3; "
    "NCCL 2.8.4 fixed it.",
    established_by="NVIDIA engineer (romerojosh) in the thread: 'I have seen similar hangs occur using NCCL "
    "2.8.3-1 with alltoall. These issues should be fixed in the next NCCL release'; the reporter confirmed 'This "
    "issue seems to be fixed with NCCL 2.8.4 indeed'.",
    fix="upgrade NCCL to 2.8.4 or later",
    seen=None,
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "horovod training image",
        "nccl": [{"version": "2.8.3", "origin": "library", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.8.3"}],
    },
    node={"name": "a40-node", "gpu": {"driver_version": "460.32.03", "gpus": gpus("NVIDIA A40", 8, "datacenter")}},
    assumptions=[
        "image RDMA userspace, driver version and GPU model are illustrative (not in the thread)",
        "NCCL 2.8.4 release notes: 'Fix hang in corner cases of alltoallv using point to point send/recv'",
    ],
    expect=[{"id": "NCCL-RELEASE-LATER-FIX", "severity": "info"}],
    mechanism="An NCCL 2.8.3 bug: all-to-all built from point-to-point send/recv can hang; fixed in 2.8.4.",
    expect_kind="image rule: NCCL version vs release notes (later fix)",
)

case(
    id="nccl-326-topology-crash-containers-subset-gpus",
    url="https://github.com/NVIDIA/nccl/issues/326",
    cause="all_reduce_perf (and PyTorch) across two docker containers on the same node, each seeing only some of "
    "the node's GPUs, crashed in NCCL topology detection: ncclTopoFillGpu returned no node for a peer GPU that "
    "was not visible in the local container.",
    established_by="NCCL maintainer (sjeaugey): 'indeed that was a bug in NCCL' with a patch (skip GPUs not found "
    "in ncclTopoGetSystem); the reporter confirmed 'it works for nccl-tests case'. NCCL 2.7.3 release notes: 'Fix "
    "crash when only a subset of GPUs are visible within a container'.",
    fix="upgrade NCCL to 2.7.3 or later",
    seen=None,
    image={
        "profile": "no-rdma-userspace",
        "reference": "nccl-tests / pytorch container",
        "nccl": [{"version": "2.6.4", "origin": "library", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.6.4"}],
    },
    node={
        "name": "v100-8x",
        "gpu": {"driver_version": "440.64.00", "gpus": gpus("Tesla V100-SXM2-32GB", 8, "datacenter")},
    },
    job={"runtime": "docker", "kind": "docker run", "gpus": 4, "env": {"NVIDIA_VISIBLE_DEVICES": "0,1,2,3"}},
    assumptions=[
        "NCCL 2.6.4 is assumed (the thread is from April 2020 and the fix shipped in 2.7.3); driver and GPUs "
        "illustrative",
        "one of the two containers is modelled (4 of the node's GPUs visible)",
    ],
    expect=[{"id": "NCCL-RELEASE-LATER-FIX", "severity": "info"}],
    mechanism="NCCL < 2.7.3 crashes in topology detection when ranks on the same node run in containers that "
    "each see a subset of the GPUs.",
    expect_kind="image rule: NCCL version vs release notes (later fix), with containers seeing GPU subsets",
)

case(
    id="nccl-2418-nccl-2.26.2-rtx-pro-6000-illegal-access",
    url="https://github.com/NVIDIA/nccl/issues/2418",
    cause="On one workstation with 2x RTX PRO 6000 Blackwell (PCIe, no NVLink, driver 580.173.02 open modules) the "
    "NCCL 2.26.2+cuda12.2 runtime that came with PyTorch 2.7.0+cu128 hit 'illegal memory access' for collectives "
    ">= 512 KiB; NCCL 2.31.2+cuda12.9 on the same machine works.",
    established_by="reporter's minimal reproduction and A/B in the issue (nccl-tests all_reduce_perf fails from "
    "524288 bytes with 2.26.2, passes 8 B..512 MiB with 2.31.2; logs attached); issue closed.",
    fix="use NCCL 2.31.2 (a newer nvidia-nccl-cu12 wheel) instead of 2.26.2",
    seen="all_reduce_perf fails at 524288 bytes: illegal memory access",
    image={
        "profile": "no-rdma-userspace",
        "reference": "PyTorch 2.7.0+cu128 environment",
        "packages": [
            {"name": "torch", "version": "2.7.0", "db": "pip"},
            {"name": "nvidia-nccl-cu12", "version": "2.26.2", "db": "pip"},
        ],
        "nccl": [
            {
                "version": "2.26.2",
                "origin": "pip",
                "path": "/usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2",
                "cuda": "12.2",
                "cuda_from": "library build string",
            }
        ],
    },
    node={
        "name": "ws-2x-pro6000",
        "kernel": {"release": "6.8.0-139-generic"},
        "gpu": {
            "driver_version": "580.173.02",
            "kernel_module": "open",
            "gpus": gpus("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 2, "workstation"),
        },
    },
    assumptions=["the wheel path is illustrative; versions, driver, kernel and GPUs are from the issue"],
    expect=[],
    mechanism="An NCCL release-level defect: NCCL 2.26.2 (CUDA 12.2 build) corrupts memory for >= 512 KiB "
    "collectives on RTX PRO 6000 Blackwell PCIe pairs; 2.31.2 does not (no catalog row names it today).",
    expect_kind="image+node rule: NCCL version vs GPU generation (no catalog row today)",
    must_not=["CUDA-DRIVER-TOO-OLD"],
)

case(
    id="azurehpc-730-graph-file-on-fewer-than-4-gpus",
    url="https://github.com/Azure/azurehpc/pull/730",
    cause="The NC A100 v4 scripts exported NCCL_GRAPH_FILE=/opt/microsoft/ncv4/graph.xml (a graph for all 4 GPUs "
    "of NC96ads_A100_v4); runs on fewer than 4 GPUs fail because the injected graph names GPUs the job does not "
    "have (and on NC48ads it costs bandwidth: ~58 vs ~220 GB/s).",
    established_by="merged PR by the Azure HPC maintainers: 'Setting NCCL_GRAPH_FILE causes NCCL to fail on "
    "NC96ads_A100_v4 when run on < 4 GPU's' - removes NCCL_GRAPH_FILE from the scripts.",
    fix="unset NCCL_GRAPH_FILE (keep NCCL_TOPO_FILE)",
    seen=None,
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "Azure HPC image (ncv4 topology and graph files)",
        "env": {"NCCL_TOPO_FILE": "/opt/microsoft/ncv4/topo.xml", "NCCL_GRAPH_FILE": "/opt/microsoft/ncv4/graph.xml"},
        "nccl_file_refs": [
            {"name": "NCCL_GRAPH_FILE", "value": "/opt/microsoft/ncv4/graph.xml", "origin": "env", "exists": True},
            {"name": "NCCL_TOPO_FILE", "value": "/opt/microsoft/ncv4/topo.xml", "origin": "env", "exists": True},
        ],
        "nccl_xml_files": [
            {
                "path": "/opt/microsoft/ncv4/graph.xml",
                "layer": None,
                "kind": "graph",
                "error": None,
                "version": 1,
                "gpu_busids": [],
                "net_names": [],
                "cpu_unfilled": [],
                "gpu_devs": [0, 1, 2, 3],
                "net_devs": [0],
                "note": None,
            },
        ],
    },
    node={
        "name": "nc96ads-a100-v4",
        "gpu": {"driver_version": "535.154.05", "gpus": gpus("NVIDIA A100 80GB PCIe", 4, "datacenter")},
    },
    job={
        "runtime": "bare-metal",
        "kind": "mpirun",
        "gpus": 2,
        "ranks_per_node": 2,
        "env": {"CUDA_VISIBLE_DEVICES": "0,1"},
    },
    assumptions=[
        "the graph file's contents (channels over GPU devs 0-3, NET dev 0) are modelled from the PR's statement "
        "that it is made for the 4 GPUs; driver version illustrative",
        "the run on fewer GPUs is modelled as 2 ranks with CUDA_VISIBLE_DEVICES=0,1",
    ],
    expect=[{"id": "NCCL-GRAPH-FILE-SET", "severity": "warning"}],
    mechanism="NCCL_GRAPH_FILE injects fixed rings/trees; a graph written for 4 GPUs names devices that a job on "
    "fewer GPUs does not have, so graph import fails.",
    expect_kind="image env + job: graph file set, names GPUs the job lacks",
    working={
        "image": {
            "env": {"NCCL_GRAPH_FILE": ""},
            "nccl_file_refs": [
                {"name": "NCCL_TOPO_FILE", "value": "/opt/microsoft/ncv4/topo.xml", "origin": "env", "exists": True}
            ],
            "nccl_xml_files": [],
        },
        "absent": ["NCCL-GRAPH-FILE-SET"],
    },
)

case(
    id="nccl-1422-pf-and-vf-both-visible-port-merge",
    url="https://github.com/NVIDIA/nccl/issues/1422",
    cause="The containers had the whole /sys mounted, so both the PF and an SR-IOV VF of the same ConnectX NIC "
    "were visible; NCCL's port-merging took them for two ports of a dual-port NIC and merged them, and the "
    "configuration did not match on the peer side, so connection setup failed.",
    established_by="NCCL maintainer (sjeaugey): 'The port merging feature thinks this is a dual port NIC and tries "
    "to merge the two ports ... Set NCCL_IB_MERGE_NICS=0' or present only the PF or the VF in the container.",
    fix="expose only the PF or the VF in the container, or set NCCL_IB_MERGE_NICS=0",
    seen=None,
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "nccl-tests container",
        "nccl": [{"version": "2.21.5", "origin": "library", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.21.5"}],
    },
    node={
        "name": "sriov-host",
        "rdma": {
            "stack": "mlnx_ofed",
            "devices": [ib_dev("mlx5_0", "ens1f0", "Ethernet"), ib_dev("mlx5_2", "ens1f0v0", "Ethernet")],
        },
        "gpu": {"driver_version": "550.90.07", "gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")},
    },
    job={"runtime": "docker", "kind": "docker run", "devices": ["/dev/infiniband"], "gpus": -1},
    assumptions=[
        "NCCL 2.21.5, the device/netdev names, link layer and GPUs are illustrative (the thread: PF and VF both "
        "projected into containers with /sys mounted, 8 MPI ranks)",
    ],
    expect=[],
    mechanism="NCCL's NIC port merging treats a PF and its VF (same physical port) as two ports of one NIC and "
    "builds a merged device whose layout differs between peers.",
    expect_kind="node+image rule: PF and VF of one NIC visible together with NIC merging on (no such rule today)",
    working={"job": {"env": {"NCCL_IB_MERGE_NICS": "0"}}, "absent": []},
)

# ================================================================ GPUDirect RDMA / registration
case(
    id="tencent-hpn-36-a40-peermem-not-loaded",
    url="https://github.com/Tencent/hpn/pull/36",
    cause="Mooncake v0.3.12 is built WITH_NVIDIA_PEERMEM=true by default and registers GPU memory with "
    "ibv_reg_mr through peer memory; on the requester node (3x A40) the nvidia-peermem module file matched the "
    "driver but was not loaded, so registration failed with 'Bad address [14]'; forcing DMA-BUF instead failed "
    "because the A40s report DMA-BUF unsupported (CUDA attr 124 = 0).",
    established_by="the PR author's measured root-cause diagnosis in the thread (CUDA attributes 116=1/124=0, module "
    "present but not loaded; WITH_NVIDIA_PEERMEM=0 turns the error into Mooncake's 'GPU does not support DMA-BUF'), "
    "with a fail-closed preflight added.",
    fix="load nvidia-peermem on the node (or use a GPU/driver that supports DMA-BUF)",
    seen="Bad address [14] / AddressNotRegistered",
    image={"profile": "rdma-core-39-mlx5", "reference": "vLLM + Mooncake v0.3.12 transfer engine"},
    node={
        "name": "requester-node1",
        "rdma": {"stack": "mlnx_ofed", "devices": [ib_dev("mlx5_0", "ibs0")]},
        "gpu": {
            "driver_version": "550.127.05",
            "kernel_module": "proprietary",
            "peermem": {"loaded": False},
            "gpus": gpus("NVIDIA A40", 3, "datacenter"),
        },
    },
    assumptions=[
        "driver version, RDMA stack and device names illustrative; kernel_module proprietary is inferred from "
        "CUDA attribute 124 (DMA-BUF supported) = 0",
        "the workload is Mooncake (not NCCL); the image is modelled with an rdma-core userspace",
    ],
    expect=[{"id": "GDR-PEERMEM-MISSING", "severity": "warning"}],
    mechanism="Without nvidia-peermem loaded (and without DMA-BUF) the NIC cannot pin GPU memory: ibv_reg_mr on a "
    "cudaMalloc address returns EFAULT.",
    expect_kind="node rule: peer-memory module not loaded, no DMA-BUF",
    working={"node": {"gpu": {"peermem": {"loaded": True}}}, "absent": ["GDR-PEERMEM-MISSING"]},
)

case(
    id="nv-peer-memory-36-connectx3-nv-peer-mem-not-loaded",
    url="https://github.com/Mellanox/nv_peer_memory/issues/36",
    cause="ibv_reg_mr on a cudaMalloc buffer failed with ConnectX-3 HCAs and MLNX_OFED because the nv_peer_mem "
    "module was not loaded (host-memory registration worked).",
    established_by="Mellanox maintainer (ferasd): 'Is nv_peer_mem module loaded? if so, ibv_reg_mr should work "
    "fine'; the reporter: 'Problem solved!'.",
    fix="load nv_peer_mem (nvidia-peermem on current drivers)",
    seen="ibv_reg_mr fails for a buffer on GPU",
    image={"profile": "rdma-core-33-mlx5", "reference": "host userspace (MLNX_OFED verbs test program)"},
    node={
        "name": "luigi",
        "rdma": {
            "stack": "mlnx_ofed",
            "ofed_version": "4.3-1.0.1.0",
            "devices": [ib_dev("mlx4_0", "ib0", driver="mlx4_core"), ib_dev("mlx4_1", "ib1", driver="mlx4_core")],
        },
        "gpu": {
            "driver_version": "390.48",
            "peermem": {"loaded": False, "legacy_nv_peer_mem": False},
            "gpus": gpus("Tesla P100-PCIE-16GB", 2, "datacenter"),
        },
    },
    assumptions=[
        "MLNX_OFED version, driver version and GPU model are illustrative (2018 thread: ConnectX-3, MLNX_OFED)",
        "the userspace profile is modelled with an rdma-core based image; the thread is a host program",
    ],
    expect=[{"id": "GDR-PEERMEM-MISSING", "severity": "warning"}],
    mechanism="GPU memory registration needs a peer-memory client (nv_peer_mem) in the kernel; without it "
    "ibv_reg_mr on device memory fails.",
    expect_kind="node rule: peer-memory module not loaded",
    working={"node": {"gpu": {"peermem": {"legacy_nv_peer_mem": True}}}, "absent": ["GDR-PEERMEM-MISSING"]},
)

case(
    id="mooncake-351-expandable-segments-registration",
    url="https://github.com/kvcache-ai/Mooncake/issues/351",
    cause="SGLang PD disaggregation with the Mooncake transfer engine failed with 'Mooncake memory registration "
    "failed' because the environment set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: PyTorch then allocates "
    "the KV cache with CUDA virtual memory (cuMem) mappings, which the RDMA registration path could not register.",
    established_by="reporter (CSEEduanyu) root cause in the thread ('the root cause is that our environment is "
    "configured with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True'), fixed by removing the variable; sglang "
    "maintainer closed sgl-project/sglang#6193 'as resolved in' this issue.",
    fix="do not set expandable_segments for processes whose tensors are registered for RDMA (or register through "
    "DMA-BUF with VMM-capable allocations)",
    seen="RuntimeError: Mooncake memory registration failed.",
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "sglang 0.4.6.post3 + mooncake-transfer-engine",
        "packages": [
            {"name": "torch", "version": "2.6.0", "db": "pip"},
            {"name": "sglang", "version": "0.4.6.post3", "db": "pip"},
        ],
    },
    node={
        "name": "h20-node",
        "rdma": {"stack": "mlnx_ofed", "devices": [ib_dev("mlx5_0", "eth1", "Ethernet")]},
        "gpu": {
            "driver_version": "550.144.03",
            "peermem": {"loaded": True},
            "gpus": gpus("NVIDIA H20", 8, "datacenter"),
        },
    },
    job={
        "runtime": "docker",
        "kind": "docker run",
        "devices": ["/dev/infiniband"],
        "gpus": -1,
        "env": {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"},
    },
    assumptions=[
        "GPU model, driver and package versions come from a check_env posted in the thread (possibly another "
        "participant's machine); RDMA device names and peermem state are illustrative",
        "the launch is modelled as a docker run with the variable in its env",
    ],
    expect=[],
    mechanism="expandable_segments makes PyTorch back tensors with cuMem virtual-memory mappings; registering them "
    "with ibv_reg_mr through peer memory fails, so the KV-cache buffer cannot be registered.",
    expect_kind="job env rule: PyTorch allocator setting vs RDMA registration path (no such rule today; "
    "REG-CUMEM-VMM-GDR covers NCCL's own cuMem buffers)",
    must_not=["MEMLOCK-TOO-LOW", "JOB-MEMLOCK-TOO-LOW"],
    working={"job": {"env": {"PYTORCH_CUDA_ALLOC_CONF": ""}}, "absent": []},
)

# ================================================================ PCIe P2P
case(
    id="vllm-9920-ada-tp2-stall-acs-iommu",
    url="https://github.com/vllm-project/vllm/issues/9920",
    cause="On an HP Z8 Fury G5 workstation with 2x RTX 6000 Ada 48GB, vLLM with tensor_parallel_size=2 ran once "
    "and then stalled at the first prompts; ACS and the IOMMU redirected GPU peer-to-peer traffic.",
    established_by="reporter: 'disable ACS and IOMMU solved the issue', citing NCCL's troubleshooting guide on "
    "IO virtualization and PCI ACS.",
    fix="disable ACS (BIOS or setpci) and the IOMMU (or iommu=pt), or run with NCCL_P2P_DISABLE=1",
    seen="Processed prompts:   0%| ... (no progress after NCCL init)",
    image={
        "profile": "no-rdma-userspace",
        "reference": "vllm environment",
        "nccl": [
            {
                "version": "2.20.5",
                "origin": "pip",
                "path": "/usr/local/lib/python3.10/dist-packages/nvidia/nccl/lib/libnccl.so.2",
            }
        ],
    },
    node={
        "name": "hp-z8-fury-g5",
        "pci_acs_redirect": ["0000:16:01.0", "0000:30:01.0"],
        "gpu": {"driver_version": "550.120", "gpus": gpus("NVIDIA RTX 6000 Ada Generation", 2, "workstation")},
    },
    assumptions=[
        "the bridge addresses with ACS redirect and the driver version are illustrative (the thread: ACS and "
        "IOMMU were on and disabling them fixed it)",
        "NCCL 2.20.5 (the vLLM wheel pin of late 2024) is illustrative",
    ],
    expect=[{"id": "NODE-PCI-ACS-REDIRECT", "severity": "warning"}],
    mechanism="PCIe ACS redirect (with the IOMMU) sends GPU-to-GPU peer traffic up to the root complex, where it "
    "stalls; single-node tensor parallel hangs after init.",
    expect_kind="node rule: ACS redirect on the bridges above the GPUs",
    working={"node": {"pci_acs_redirect": []}, "absent": ["NODE-PCI-ACS-REDIRECT"]},
)

# ================================================================ RDMA userspace in the image
case(
    id="dstack-2712-default-image-without-libibverbs",
    url="https://github.com/dstackai/dstack/issues/2712",
    cause="dstack's default Docker image had no rdma-core userspace (libibverbs1, ibverbs-providers), so NCCL "
    "could not use the InfiniBand fabric of the 2x 8xH100 Nebius cluster and distributed training failed/fell back.",
    established_by="dstack maintainer (r4victor): 'Just confirmed. Running apt-get install -y libibverbs1 "
    "ibverbs-providers enables IB network in dstack default image' (log shows 'Using network IB'); merged fix "
    "dstackai/dstack#2764 'Preinstall rdma-core packages into dstack Docker image'.",
    fix="install libibverbs1 and ibverbs-providers (rdma-core) in the image",
    seen=None,
    image={
        "profile": "no-rdma-userspace",
        "reference": "dstack default image (before #2764)",
        "packages": [
            {"name": "torch", "version": "2.7.0", "db": "pip"},
            {"name": "nvidia-nccl-cu12", "version": "2.26.2", "db": "pip"},
        ],
        "nccl": [
            {
                "version": "2.26.2",
                "origin": "pip",
                "path": "/usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2",
                "cuda": "12.2",
                "cuda_from": "library build string",
            }
        ],
    },
    node={
        "name": "computeinstance-e00vcar76672ttnkq6",
        "rdma": {"stack": "mlnx_ofed", "devices": [ib_dev(f"mlx5_{i}") for i in range(8)]},
        "gpu": {
            "driver_version": "550.144.03",
            "peermem": {"loaded": True},
            "gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter"),
        },
    },
    job={
        "runtime": "docker",
        "kind": "docker run",
        "devices": ["/dev/infiniband"],
        "gpus": -1,
        "host_network": True,
        "memlock_kib": -1,
    },
    assumptions=[
        "NCCL 2.26.2+cuda12.2 and cudaDriverVersion 12040 are from the post-fix log; driver 550.144.03, torch "
        "version and the 8 IB HCA names are illustrative",
        "dstack's container launch (devices, host network, memlock) is modelled as a docker run exposing "
        "/dev/infiniband; the fix changed only the image",
    ],
    expect=[{"id": "RDMA-NO-LIBIBVERBS", "severity": "warning"}],
    mechanism="The image has no libibverbs/providers, so NCCL's IB transport cannot load and NCCL falls back to "
    "sockets even though the node's HCAs are exposed.",
    expect_kind="image rule: no libibverbs in an image meant for an IB cluster",
    must_not=["JOB-RDMA-DEVICES-NOT-EXPOSED"],
    working={"image": {"profile": "rdma-core-39-mlx5"}, "absent": ["RDMA-NO-LIBIBVERBS"]},
)

case(
    id="ucx-4770-hpcx-ucx-on-mofed-upstream-libs",
    url="https://github.com/openucx/ucx/issues/4770",
    cause="MLNX_OFED 4.7-1.0.0.1 installed with the 'upstream userspace RDMA-core libs' option on RHEL 7.7 (AMD "
    "Zen2): the HPC-X 2.5 / OMPI 4.0.2 UCX expected the legacy MLNX experimental verbs; ibv_exp_query_device "
    "returned 38 for every mlx5 device, explicit rc_x transports could not connect and OSU bandwidth dropped ~6x. "
    "The same stack with MOFED's legacy libs performs well.",
    established_by="reporter's A/B in the issue (MOFED with legacy libs: normal performance; with upstream rdma-core "
    "libs: 'ibv_exp_query_device(...) returned 38' and ~6x lower bandwidth); issue closed.",
    fix="install MLNX_OFED with its legacy libs for this HPC-X build, or use an HPC-X/UCX built for rdma-core "
    "(upstream) libs",
    seen="ib_verbs.h:84   UCX  ERROR ibv_exp_query_device(mlx5_0) returned 38: No space left on device",
    image={
        "reference": "host userspace: HPC-X 2.5 (Open MPI 4.0.2, UCX)",
        "ucx": {"version": "1.7.0", "origin": "hpcx", "path": "/opt/hpcx/ucx/lib/libucp.so.0"},
    },
    node={
        "name": "upstreamhost1",
        "rdma": {
            "stack": "mlnx_ofed",
            "ofed_version": "4.7-1.0.0.1",
            "devices": [ib_dev("mlx5_0", "ib0"), ib_dev("mlx5_1", "ib1"), ib_dev("mlx5_2", "ib2")],
        },
    },
    job={"runtime": "bare-metal", "kind": "mpirun", "env": {"OMPI_MCA_pml": "ucx"}},
    assumptions=[
        "UCX 1.7.0 as the HPC-X 2.5 UCX is assumed; the image is the host userspace (bare metal)",
        "device names mlx5_0..2 are from the log; netdev names illustrative; no GPU is involved (OSU benchmarks)",
        "imgcheck facts do not say whether a UCX build uses MLNX experimental verbs",
    ],
    expect=[],
    mechanism="A UCX built for MLNX_OFED's legacy experimental verbs (ibv_exp_*) runs over MOFED's upstream "
    "rdma-core libraries, where those calls fail (ENOSYS, 38), so UCX loses its accelerated IB transports.",
    expect_kind="image+node rule: UCX build flavour (exp verbs) vs the node/image verbs flavour (no such rule today)",
)

case(
    id="nccl-520-ofi-plugin-plain-1.1.1-on-p4d",
    url="https://github.com/NVIDIA/nccl/issues/520",
    cause="The container's aws-ofi-nccl was built from the plain v1.1.1 tag instead of the '-aws' branch that "
    "carries the EFA/p4d support; NCCL reported 'Internal check failed' during broadcast on p4d.24xlarge.",
    established_by="reporter in the thread, after switching the Dockerfile to the 1.1.2-aws branch: 'Thanks, that "
    "was it.' (NVIDIA's AddyLaddy had pointed to the aws-ofi-nccl project).",
    fix="build aws-ofi-nccl from the -aws release branch (e.g. v1.1.2-aws) for EFA",
    seen="Internal check failed during broadcast",
    image={
        "profile": "efa-installer",
        "reference": "custom p4d training image",
        "nccl_net_plugins": [
            {"name": "aws-ofi-nccl", "path": "/opt/aws-ofi-nccl/lib/libnccl-net.so", "version": "1.1.1"}
        ],
        "nccl": [{"version": "2.9.9", "origin": "library", "path": "/usr/local/lib/libnccl.so.2.9.9"}],
    },
    node={
        "name": "p4d-node",
        "labels": {"node.kubernetes.io/instance-type": "p4d.24xlarge"},
        "rdma": {"stack": "inbox", "devices": [ib_dev(f"rdmap{i}s0", link="Ethernet", driver="efa") for i in range(4)]},
        "gpu": {"driver_version": "460.73.01", "gpus": gpus("NVIDIA A100-SXM4-40GB", 8, "datacenter")},
    },
    assumptions=[
        "NCCL 2.9.9, driver, EFA device names and the plugin path are illustrative (2021 thread on p4d)",
        "imgcheck facts record the plugin version, not which branch it was built from",
    ],
    expect=[],
    mechanism="An aws-ofi-nccl built from the non-AWS branch lacks the EFA/p4d support NCCL needs there, and "
    "collectives fail with an internal check.",
    expect_kind="image rule: net plugin build flavour (no such rule today)",
    must_not=["EFA-NO-OFI-PLUGIN"],
)

case(
    id="aws-ofi-nccl-785-p5-static-topo-xml-subset-gpus",
    url="https://github.com/aws/aws-ofi-nccl/issues/785",
    cause="CI runners on one p5.48xlarge each got a disjoint GPU subset (0,1 / 2,3 / 4,5,6,7); the old aws-ofi-nccl "
    "loaded its static /opt/amazon/efa/share/aws-ofi-nccl/xml/p5.48xl-topo.xml, whose <cpu> elements lack arch/"
    "vendor, and NCCL 2.21.5 failed in ncclTopoAddCpu ('Attribute arch of node cpu not found') for CPUs its own "
    "detection did not reach.",
    established_by="AWS maintainer (mozarhua): 'The error looks from ncclTopoAddCpu() tried to load a static "
    "profile ... After plugin version 1.11, aws-ofi-nccl moved from a static config file into a dynamically "
    "generated topology file ... update the aws-ofi-nccl plug-in ... to solve this problem'; closed by bwbarrett.",
    fix="upgrade aws-ofi-nccl to >= 1.11 (e.g. v1.13.2-aws), which generates the topology dynamically",
    seen="graph/xml.h:101 NCCL WARN Attribute arch of node cpu not found",
    image={
        "profile": "efa-installer",
        "reference": "CI image with NCCL 2.21.5+cuda12.4 and aws-ofi-nccl < 1.11",
        "nccl": [
            {
                "version": "2.21.5",
                "origin": "pip",
                "path": "/opt/venv/lib/python3.10/site-packages/nvidia/nccl/lib/libnccl.so.2",
            }
        ],
        "nccl_net_plugins": [{"name": "aws-ofi-nccl", "path": "/opt/amazon/efa/lib/libnccl-net.so"}],
        "env": {"NCCL_TOPO_FILE": "/opt/amazon/efa/share/aws-ofi-nccl/xml/p5.48xl-topo.xml"},
        "nccl_file_refs": [
            {
                "name": "NCCL_TOPO_FILE",
                "value": "/opt/amazon/efa/share/aws-ofi-nccl/xml/p5.48xl-topo.xml",
                "origin": "env",
                "exists": True,
            }
        ],
        "nccl_xml_files": [
            {
                "path": "/opt/amazon/efa/share/aws-ofi-nccl/xml/p5.48xl-topo.xml",
                "layer": None,
                "kind": "topology",
                "error": None,
                "version": 1,
                "gpu_busids": [],
                "net_names": [],
                "cpu_unfilled": ["arch", "vendor"],
                "gpu_devs": [],
                "net_devs": [],
                "note": None,
            }
        ],
    },
    node={
        "name": "p5-ci",
        "labels": {"node.kubernetes.io/instance-type": "p5.48xlarge"},
        "gpu": {"driver_version": "550.127.05", "gpus": gpus("NVIDIA H100 80GB HBM3", 8, "datacenter")},
    },
    job={
        "runtime": "docker",
        "kind": "docker run",
        "gpus": 2,
        "env": {"CUDA_VISIBLE_DEVICES": "0,1", "NCCL_SOCKET_IFNAME": "^docker,lo,veth_def_agent"},
    },
    assumptions=[
        "the plugin sets NCCL_TOPO_FILE itself at init on p5; modelled as the image env naming the static file",
        "the static file's <cpu> elements without arch/vendor are modelled from the maintainer's explanation and the rule text",
        "driver version illustrative (cudaDriverVersion 12040 in the log: R550)",
    ],
    expect=[{"id": "NCCL-XML-FILE-REJECTED", "severity": "warning"}],
    mechanism="A static topology XML with <cpu> elements lacking arch/vendor works only when NCCL's own detection "
    "reaches every CPU; with a GPU subset some CPUs stay unfilled and ncclTopoAddCpu fails.",
    expect_kind="image rule: topology XML the image/plugin loads, cpu attributes unfilled",
    working={
        "image": {"env": {"NCCL_TOPO_FILE": ""}, "nccl_file_refs": [], "nccl_xml_files": []},
        "absent": ["NCCL-XML-FILE-REJECTED"],
    },
)

# ================================================================ launch specs: Slurm/pyxis/enroot, Kubernetes
case(
    id="enroot-205-image-without-nvidia-visible-devices",
    url="https://github.com/NVIDIA/enroot/issues/205",
    cause="A small Ubuntu + Python image (torch installed at run time with its own CUDA runtime) started with "
    "pyxis/enroot on a GPU allocation saw no GPU: enroot's 98-nvidia.sh hook only injects the driver when "
    "NVIDIA_VISIBLE_DEVICES is set, and this non-NVIDIA image does not set it (docker --gpus sets it implicitly).",
    established_by="enroot maintainer (3XX0): 'You have to set NVIDIA_VISIBLE_DEVICES (in your srun env, enroot env "
    "file, container, etc)', pointing at the 98-nvidia.sh hook documentation.",
    fix="set NVIDIA_VISIBLE_DEVICES (e.g. ENV NVIDIA_VISIBLE_DEVICES=all in the image, or in the srun env)",
    seen="RuntimeError: Found no NVIDIA driver on your system.",
    image={
        "profile": "no-rdma-userspace",
        "reference": "myimage (ubuntu + python toolchain)",
        "packages": [{"name": "torch", "version": "2.4.0", "db": "pip"}],
        "env": {"PATH": "/usr/local/bin:/usr/bin:/bin"},
    },
    node={
        "name": "slurm-gpu",
        "gpu": {"driver_version": "550.90.07", "gpus": gpus("NVIDIA A100-SXM4-80GB", 8, "datacenter")},
    },
    job={"runtime": "slurm", "kind": "srun --container-image", "gpus": 2, "gpus_setting": "--gpus=2"},
    assumptions=[
        "torch version, driver and GPUs illustrative; the image env is modelled without NVIDIA_VISIBLE_DEVICES"
    ],
    expect=[],
    mechanism="Under enroot the NVIDIA hook runs only when the container env has NVIDIA_VISIBLE_DEVICES; an image "
    "that does not set it gets no driver libraries or device nodes.",
    expect_kind="image env + launch rule: enroot/pyxis GPU injection needs NVIDIA_VISIBLE_DEVICES (no such rule today)",
    must_not=["CUDA-DRIVER-TOO-OLD"],
    working={"image": {"env": {"NVIDIA_VISIBLE_DEVICES": "all"}}, "absent": []},
)

case(
    id="pyxis-81-nvidia-uvm-not-loaded-p4d",
    url="https://github.com/NVIDIA/pyxis/issues/81",
    cause="On ParallelCluster p4d.24xlarge Slurm nodes, nccl-tests inside a pyxis container failed with CUDA "
    "'unknown error' (also in Singularity): the nvidia_uvm module/device was not set up on the fresh node.",
    established_by="reporter's verified workaround in the thread: 'sudo modprobe nvidia_uvm' (and a one-off docker "
    "run that creates the device nodes) on the host, after which the containerised all_reduce_perf runs.",
    fix="load nvidia_uvm (nvidia-modprobe -u -c=0 / modprobe nvidia_uvm) at node boot",
    seen="Test CUDA failure common.cu:1045 'unknown error'",
    image={"profile": "efa-installer", "reference": "shivanshupurohit/gpt-neox:76 (nccl-tests in /opt)"},
    node={
        "name": "compute-od-gpu-dy-p4d-24xlarge-1",
        "labels": {"node.kubernetes.io/instance-type": "p4d.24xlarge"},
        "gpu": {
            "driver_version": "470.57.02",
            "uvm_loaded": False,
            "uvm_device": False,
            "gpus": gpus("NVIDIA A100-SXM4-40GB", 8, "datacenter"),
        },
    },
    job={"runtime": "slurm", "kind": "srun --container-image", "gpus": 8, "gpus_setting": "--gpus=8"},
    assumptions=["driver version illustrative (2022 ParallelCluster AMI); the uvm state is inferred from the fix"],
    expect=[{"id": "NODE-NVIDIA-UVM-MISSING", "severity": "warning"}],
    mechanism="Without the nvidia_uvm module and /dev/nvidia-uvm, CUDA runtime initialisation fails with "
    "'unknown error' in containers.",
    expect_kind="node rule: nvidia_uvm not loaded",
    working={"node": {"gpu": {"uvm_loaded": True, "uvm_device": True}}, "absent": ["NODE-NVIDIA-UVM-MISSING"]},
)

case(
    id="hami-2641-libvgpu-preload-hangs-ctypes-nccl",
    url="https://github.com/Project-HAMi/HAMi/issues/2641",
    cause="vLLM (TP=4) on 4x RTX PRO 6000 Blackwell under HAMi v2.9.0 hung at NCCL communicator init: HAMi's "
    "LD_PRELOADed libvgpu.so intercepts cuMemCreate inside NCCL's cuMem host allocation path and deadlocks for "
    "the ctypes-loaded NCCL vLLM uses (torch's linked NCCL works).",
    established_by="reporter's root cause and A/B in the issue: CUDA_DISABLE_CONTROL=true (libvgpu passthrough) "
    "makes NCCL init complete in 0.22s; torchrun AllReduce/AllGather tests under the same HAMi work; closed as "
    "kind/bug.",
    fix="set CUDA_DISABLE_CONTROL=true for whole-GPU allocations (or fix libvgpu's cuMemCreate interception)",
    seen="(Worker pid=960) INFO 08-12 20:26:09 [pynccl.py:113] vLLM is using nccl==2.28.9",
    image={
        "profile": "no-rdma-userspace",
        "reference": "vLLM image (nccl 2.28.9)",
        "nccl": [
            {
                "version": "2.28.9",
                "origin": "pip",
                "path": "/usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2",
            }
        ],
    },
    node={
        "name": "hami-node",
        "gpu": {
            "driver_version": "580.95.05",
            "kernel_module": "open",
            "gpus": gpus("NVIDIA RTX PRO 6000 Blackwell Server Edition", 4, "workstation"),
        },
    },
    job={
        "runtime": "kubernetes",
        "kind": "Pod",
        "resources": {"nvidia.com/gpu": "4"},
        "env": {"LD_PRELOAD": "/usr/local/vgpu/libvgpu.so"},
    },
    assumptions=[
        "driver version and the GPU model string are illustrative; LD_PRELOAD path illustrative (HAMi injects "
        "libvgpu.so by LD_PRELOAD)",
    ],
    expect=[],
    mechanism="A GPU-sharing shim preloaded into the container intercepts CUDA VMM calls and deadlocks NCCL's "
    "cuMem-based initialisation.",
    expect_kind="job rule: CUDA-intercepting LD_PRELOAD shim vs NCCL cuMem (no such rule today)",
    must_not=["NCCL-RELEASE-KNOWN-ISSUE"],
    working={"job": {"env": {"CUDA_DISABLE_CONTROL": "true"}}, "absent": []},
)

case(
    id="xorbitsai-1622-helm-worker-pod-64mb-shm",
    url="https://github.com/xorbitsai/inference/issues/1622",
    cause="Xinference deployed with its Helm chart on Kubernetes: the worker pods got the container runtime's "
    "default 64 MB /dev/shm, too small for NCCL's shared-memory transport between the GPUs of a multi-GPU (vLLM/Ray) "
    "model worker, so NCCL initialisation failed.",
    established_by="participant's verified workaround in the thread (nakroy): the pods only get 64MB shared memory "
    "by default; mounting a Memory emptyDir on /dev/shm of the worker pod (the equivalent of docker --shm-size) "
    "makes it work.",
    fix="mount an emptyDir with medium: Memory (sizeLimit large enough) on /dev/shm of the worker pods",
    seen="BUG: NCCL error",
    image={
        "profile": "no-rdma-userspace",
        "reference": "xprobe/xinference (vLLM, Ray)",
        "nccl": [
            {
                "version": "2.20.5",
                "origin": "pip",
                "path": "/usr/local/lib/python3.10/dist-packages/nvidia/nccl/lib/libnccl.so.2",
            }
        ],
    },
    node={
        "name": "k8s-gpu",
        "gpu": {"driver_version": "550.54.15", "gpus": gpus("NVIDIA GeForce RTX 4090", 2, "consumer")},
    },
    job={
        "runtime": "kubernetes",
        "kind": "Deployment",
        "resources": {"nvidia.com/gpu": "2"},
        "gpus": 2,
        "ranks_per_node": 2,
        "ranks_setting": "tensor parallel 2 (vLLM on Ray)",
    },
    assumptions=[
        "GPU model/count, driver and NCCL version are illustrative; the thread gives the Helm chart deployment, "
        "the 64MB default and the emptyDir fix",
        "the multi-GPU worker is modelled as 2 ranks in one pod",
    ],
    expect=[{"id": "JOB-SHM-TOO-SMALL", "severity": "error"}],
    mechanism="NCCL's SHM transport needs /dev/shm segments larger than the 64 MiB the runtime gives a pod without "
    "a Memory emptyDir; segment creation fails and init returns a system error.",
    expect_kind="job rule: pod /dev/shm default vs ranks per pod",
    working={"job": {"shm_size_mib": 16384, "shm_setting": "emptyDir medium Memory"}, "absent": ["JOB-SHM-TOO-SMALL"]},
)

case(
    id="gpu-operator-1794-device-plugin-on-gb10",
    url="https://github.com/NVIDIA/gpu-operator/issues/1794",
    cause="Joining a DGX Spark (GB10, unified memory) to a k3s cluster with GPU Operator v25.3.x: the device "
    "plugin crashed with 'error getting device memory: Not Supported' (NVML cannot report GB10 memory), so no GPU "
    "was advertised.",
    established_by="reporter: 'Upgraded to v25.10.0 and the Spark now shows up properly'; another user: device "
    "plugin v0.17.4 'gracefully ignores the unsupported memory query' (log 'Ignoring error getting device memory: "
    "Not Supported', 'Registered device plugin ... with Kubelet').",
    fix="GPU Operator >= v25.10.0 / k8s-device-plugin >= v0.17.4",
    seen="error getting device memory: Not Supported",
    image={"profile": "no-rdma-userspace", "reference": "nvcr.io/nvidia/k8s-device-plugin (GPU Operator v25.3.4)"},
    node={
        "name": "dgx-spark",
        "arch": "arm64",
        "gpu": {"driver_version": "580.95.05", "kernel_module": "open", "gpus": gpus("NVIDIA GB10", 1)},
    },
    assumptions=["driver version illustrative; the node OS is DGX OS 7 per the thread"],
    expect=[],
    mechanism="An older device plugin treats NVML's 'Not Supported' for device memory (unified-memory GB10) as "
    "fatal, so Kubernetes never sees the GPU.",
    expect_kind="cluster component version vs GPU (no such rule today)",
)

# ================================================================ Gloo
case(
    id="paddle-37951-gloo-hostname-resolves-127",
    url="https://github.com/PaddlePaddle/Paddle/issues/37951",
    cause="PaddlePaddle 2.2.0 launched with fleetrun across machines: gloo connected with 'connection refused' "
    "because socket.gethostbyname(socket.gethostname()) on the multi-NIC node resolved to 127.0.0.1, so the "
    "process advertised loopback.",
    established_by="reporter's diagnosis (hostname resolves to 127.0.0.1) and verified fix ('I modified the hosts "
    "file and now get the right IP'); Paddle developer (wuhuachaocoding) confirmed the process address 127.0.0.1 "
    "is wrong and is why connect fails.",
    fix="map the host name to the node's routable address in /etc/hosts (or give the address explicitly)",
    seen="gloo connection refused",
    image={
        "profile": "no-rdma-userspace",
        "reference": "paddlepaddle 2.2.0",
        "packages": [{"name": "paddlepaddle-gpu", "version": "2.2.0", "db": "pip"}],
    },
    node={
        "name": "multi-nic-node",
        "hostname_in_hosts": "127.0.0.1",
        "net_interfaces": [
            {"name": "eth0", "operstate": "up", "ipv4": ["10.10.1.21/24"]},
            {"name": "eth1", "operstate": "up", "ipv4": ["192.168.5.21/24"]},
        ],
        "gpu": {"driver_version": "470.82.01", "gpus": gpus("Tesla V100-SXM2-32GB", 8, "datacenter")},
    },
    job={"runtime": "bare-metal", "kind": "fleetrun", "host_network": True},
    assumptions=[
        "interface names/addresses, driver and GPUs illustrative; hostname_in_hosts = 127.0.0.1 is what the "
        "thread's gethostbyname shows",
        "the rule text describes PyTorch's Gloo; Paddle uses the same Gloo library's hostname-based bind",
    ],
    expect=[{"id": "ENV-GLOO-HOSTNAME-LOOPBACK", "severity": "warning"}],
    mechanism="Gloo binds to and advertises the address the host name resolves to; /etc/hosts maps it to loopback, "
    "so peers on other nodes are refused.",
    expect_kind="node /etc/hosts + launch rule",
    working={"node": {"hostname_in_hosts": "10.10.1.21"}, "absent": ["ENV-GLOO-HOSTNAME-LOOPBACK"]},
)

# ================================================================ negatives (configuration works; the cause is elsewhere)
case(
    id="nccl-788-alltoallv-hang-mismatched-sizes",
    url="https://github.com/NVIDIA/nccl/issues/788",
    cause="(negative) A Horovod alltoallv hang on 4 nodes x 8 A40 over InfiniBand with NCCL 2.12.7 (also 2.15.5, "
    "2.16.5; 2.11.4 worked) was not an NCCL/stack problem: the per-peer send and receive sizes the application "
    "posted did not match (e.g. rank 04 sent nothing to 17 while 17 expected 1597440 bytes).",
    established_by="NCCL maintainer (sjeaugey) analysis of the reporter's opCount traces in the thread: 'I found "
    "that for example, 04 was not sending anything to 17 but 17 is receiving 1597440 bytes from 04 ... only cases "
    "where one side was not sending or receiving'; issue closed.",
    fix="make send/recv sizes consistent between peers in the application's alltoallv",
    seen=None,
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "horovod training image (CUDA 11.2)",
        "nccl": [
            {
                "version": "2.12.7",
                "origin": "library",
                "path": "/usr/local/lib/libnccl.so.2.12.7",
                "cuda": "11.2",
                "cuda_from": "library build string",
            }
        ],
    },
    node={
        "name": "a40-ib-node",
        "rdma": {"stack": "mlnx_ofed", "devices": [ib_dev("mlx5_0", "ib0")]},
        "limits": {"memlock_kib": -1},
        "gpu": {
            "driver_version": "470.161.03",
            "peermem": {"loaded": True},
            "gpus": gpus("NVIDIA A40", 8, "datacenter"),
        },
    },
    assumptions=[
        "RDMA stack, HCA name, memlock and peermem state are illustrative; NCCL version, CUDA 11.2 build, driver "
        "470.161.03, 8x A40 per host and IB are from the thread",
    ],
    expect=[],
    mechanism="(negative) the image/node/launch configuration is fine; the hang is an application-level "
    "send/receive size mismatch, so nothing in the stack should be blamed.",
    expect_kind="negative: no error finding expected",
    must_not=["NCCL-RELEASE-KNOWN-ISSUE", "CUDA-DRIVER-TOO-OLD"],
)


def main() -> None:
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids)), "duplicate case id"
    for c in CASES:
        for k in (
            "id",
            "url",
            "cause",
            "established_by",
            "fix",
            "image",
            "node",
            "expect",
            "mechanism",
            "expect_kind",
            "assumptions",
            "must_not",
            "sealed_source",
        ):
            assert k in c, (c.get("id"), k)
    with open(os.path.join(HERE, "cases.json"), "w", encoding="utf-8") as fh:
        json.dump({"description": DESCRIPTION, "cases": CASES}, fh, indent=1)
        fh.write("\n")
    print(f"wrote {len(CASES)} cases")


if __name__ == "__main__":
    main()
