"""Build /work/sealed3/logs/: one file per verbatim log excerpt plus logs/index.json.

Each excerpt holds lines copied from the public thread named in `url` (trimmed to the lines that matter, lines
never edited; a thread's own '...' elisions and redactions are kept; quote markers of a quoting comment are
dropped and `notes` says so). The text of every excerpt is embedded below and written out by main(), so the set
can be rebuilt from this file alone.
`expect_signatures`: ids from src/imgcheck/data/triage/signatures.json whose causes describe the established
cause today ([] if none does, or the log is noise from a job that worked -> `negative`); `expect_causes` names
the cause ids of those signatures that fit.
Every source was checked against `git -C /work/main grep`, /work/shared, /work/sealed and /work/sealed2 (no hits)
on 2026-12-07.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
LOGS = []
TEXT = {}


def log(text: str, **kw):
    kw.setdefault("sealed_source", "issues")
    kw.setdefault("negative", False)
    kw.setdefault("expect_causes", [])
    kw.setdefault("fabric_at_fault", False)
    kw["file"] = kw["id"] + ".log"
    assert kw["file"] not in TEXT, kw["file"]
    TEXT[kw["file"]] = text
    LOGS.append(kw)


# ---------------------------------------------------------------- driver / CUDA / Fabric Manager
log(
    "/opt/conda/envs/workflow/lib/python3.9/site-packages/torch/cuda/__init__.py:129: UserWarning: CUDA initialization: "
    "Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that "
    "might have already set an error? Error 802: system not yet initialized (Triggered internally at "
    "/pytorch/c10/cuda/CUDAFunctions.cpp:109.)\n"
    "  return torch._C._cuda_getDeviceCount() > 0\n"
    "CUDA available: False\n",
    id="dstack-2348-802-fabricmanager-mismatch",
    url="https://github.com/dstackai/dstack/issues/2348",
    cause="nvidia-fabricmanager was pinned to 535.183.01 while a newer 535.x driver was installed; Fabric Manager "
    "refused to start, the NVSwitch GPUs never registered with the fabric, CUDA init returned 802.",
    established_by="dstack maintainer diagnosis (journalctl shows FM's interface-version mismatch) and merged fix "
    "dstackai/dstack#2355 (unpin so driver and FM versions match)",
    mechanism="Fabric Manager not running (version mismatch) -> cudaErrorSystemNotReady (802)",
    expect_signatures=["CUDA-RUNTIME-ERROR"],
    expect_causes=["fabric-manager-not-running"],
    notes="the 'Actual behaviour' block of the issue description",
)
log(
    "fabric manager NVIDIA GPU driver interface version 590.48.01 don't match with driver version 580.126.09.\n"
    "Please update with matching NVIDIA driver package.\n",
    id="gpu-driver-container-735-fm-590-on-driver-580",
    url="https://github.com/NVIDIA/gpu-driver-container/issues/735",
    cause="The gpu-driver-container image for 580.126.09 (Ubuntu 22.04) bundled nv-fabricmanager 590.48.01: its "
    "install script installed nvidia-fabricmanager=${DRIVER_VERSION}* without apt-mark hold, and the version glob "
    "resolved to 590.x at build time; FM aborts its version check and the HGX/H200 NVSwitch fabric stays "
    "uninitialised (cuda-validator fails).",
    established_by="the issue's root-cause analysis of the image's install.sh (580.105.08 image built before 590.x "
    "was published is unaffected); closed as bug",
    mechanism="Fabric Manager version differs from the driver -> FM exits -> NVSwitch GPUs unusable for CUDA",
    expect_signatures=[],
    notes="Fabric Manager's own start-up message; no triage signature describes FM start-up failures",
)
log(
    "ggml_cuda_init: failed to initialize CUDA: system not yet initialized\n",
    id="ollama-12136-h100-fm-version-mixup",
    url="https://github.com/ollama/ollama/issues/12136",
    cause="On an 8x H100 HBM3 host the Fabric Manager version no longer matched the driver after driver/toolkit "
    "switching; CUDA init failed with 'system not yet initialized' until FM was purged and reinstalled at the "
    "driver's version.",
    established_by="reporter's verified fix in the thread ('Turns out that's what my issue was ... neglected the "
    "fabric manager version. I purged everything associated with it and reinstalled the right version with a "
    "reboot. Voila.')",
    mechanism="Fabric Manager absent/mismatched on an NVSwitch system -> CUDA_ERROR_SYSTEM_NOT_READY",
    expect_signatures=["CUDA-RUNTIME-ERROR"],
    expect_causes=["fabric-manager-not-running"],
    notes="the reporter quotes their own earlier log line; the comment's '> >' quote markers are dropped",
)
log(
    "10.0.0.101: nvlsm: ibwarn: [15] umad_init: can't read ABI version from /sys/class/infiniband_mad/abi_version "
    "(No such file or directory): is ib_umad module loaded?\n",
    id="siderolabs-docs-581-fm-nvlsm-needs-ib-umad",
    url="https://github.com/siderolabs/docs/pull/581",
    cause="On NVIDIA baseboards that need NVLSM (Blackwell NVLink 5 systems) the Talos ext-nvidia-fabricmanager "
    "service crash-loops because the ib_umad kernel module is not loaded, so NVLSM cannot open the umad interface.",
    established_by="merged docs PR (author's finding from the crash-looping service; adds loading ib_umad to the "
    "NVIDIA baseboard instructions)",
    mechanism="Fabric Manager's NVLink subnet manager needs ib_umad; without it FM crash-loops and the NVLink fabric "
    "is never configured",
    expect_signatures=[],
    sealed_source="issues",
    notes="the one log line quoted in the PR description",
)
log(
    "nv-fabricmanager[3228]: fabric manager NVIDIA GPU driver interface version 530.30.02 don't match with driver "
    "version 530.41.03. Please update with matching NVIDIA driver package.\n",
    id="gpu-operator-544-fm-530.30-vs-driver-530.41",
    url="https://github.com/NVIDIA/gpu-operator/issues/544",
    cause="The host had NVIDIA driver 530.41.03 (CUDA 12.1 installer) but nvidia-fabricmanager-530 from apt was "
    "530.30.02; Fabric Manager refuses to start when its driver interface version differs from the driver.",
    established_by="Fabric Manager's own message names both versions; the reporter's steps (driver 530 from the CUDA "
    "12.1 bundle, fabricmanager-530 from apt) confirm them",
    mechanism="Fabric Manager / driver version mismatch -> FM does not start",
    expect_signatures=[],
    notes="the issue description's first line",
)
log(
    "91: I0207 07:09:26.591536 47744 dynamic_loader.cc:67] Try to find library: libnccl.so from default system path.\n"
    "91: NCCL version 2.1.4+cuda9.1\n"
    "91:\n"
    "91: idgsim-gpu-001:47744:47744 [0] init.cu:674 WARN Cuda failure 'CUDA driver version is insufficient for CUDA "
    "runtime version'\n"
    "91: unknown file: Failure\n"
    '91: C++ exception with description "unhandled cuda error at [/paddle/Paddle/paddle/platform/nccl_test.cu:34]\n',
    id="paddle-8195-nccl-cuda9.1-on-cuda8-driver",
    url="https://github.com/PaddlePaddle/Paddle/issues/8195",
    cause="NCCL 2.1.4 built against CUDA 9.1 was loaded on a node whose driver supports only up to the CUDA 8 "
    "image's needs; NCCL's statically linked CUDA 9.1 runtime cannot initialise.",
    established_by="Paddle developer (dzhwinter): 'we need to upgrade our CUDA Driver to 9.1 if we want to use "
    "NCCL2.1.4' (NCCL 1.3 worked)",
    mechanism="NCCL build CUDA newer than the node driver supports",
    expect_signatures=["CUDA-DRIVER-INSUFFICIENT"],
    expect_causes=["node-driver-too-old"],
)
log(
    "RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
    "NumCudaDevices() that might have already set an error? Error 803: system has unsupported display driver / cuda "
    "driver combination\n",
    id="gpustack-4678-803-compat-libcuda-via-ldconfig",
    url="https://github.com/gpustack/gpustack/issues/4678",
    cause="vLLM >= 0.15.0 images register the CUDA forward-compat libraries in ld.so.conf; under the NVIDIA runtime "
    "the ldcache update makes that older compat libcuda win over the host's 580 driver library -> 803.",
    established_by="reporter's A/B (--gpus all works; --runtime nvidia with NVIDIA_VISIBLE_DEVICES/CDI fails) and "
    "the LD_LIBRARY_PATH=/usr/local/nvidia/lib64:... workaround; closed",
    mechanism="forward-compat libcuda older than the kernel driver loaded first",
    expect_signatures=["CUDA-DRIVER-MISMATCH-803"],
    expect_causes=["compat-libcuda-loaded"],
)
log(
    "RuntimeError: The NVIDIA driver on your system is too old (found version 12090). Please update your GPU driver "
    "by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx "
    "Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your version "
    "of the CUDA driver.\n",
    id="vllm-33992-cuda13-image-on-575-without-compat",
    url="https://github.com/vllm-project/vllm/pull/33992",
    cause="A CUDA 13.0 vLLM image (torch built for CUDA 13) on an A100 with driver 575.57.08 (CUDA 12.9) with the "
    "image's cuda-compat path disabled (VLLM_ENABLE_CUDA_COMPATIBILITY=0, cuda-compat.conf removed): the driver is "
    "too old for the image's CUDA; with the compat path enabled the same data-center GPU works.",
    established_by="merged PR by the author's A/B on 1x A100 with 575.57.08 (compat disabled -> this error; compat "
    "enabled -> works), part of fixing the compat-path setting for data-center and consumer GPUs",
    mechanism="image CUDA newer than the node driver and no forward-compat libcuda on the path",
    expect_signatures=["CUDA-DRIVER-INSUFFICIENT"],
    expect_causes=["node-driver-too-old", "compat-libs"],
    notes="from the PR description's 'Expected Result' block for VLLM_ENABLE_CUDA_COMPATIBILITY=0",
)
log(
    "Test NCCL failure common.cu:777 'unhandled cuda error'\n",
    id="nccl-tests-6-nccl-for-cuda11-on-cuda10.2",
    url="https://github.com/NVIDIA/nccl-tests/issues/6",
    cause="The installed NCCL was the build for CUDA 11.0 while the system had CUDA 10.2 (and its driver); with "
    "NCCL_DEBUG=WARN the commenter saw the CUDA mismatch, and installing libnccl2=2.9.8-1+cuda10.2 fixed it.",
    established_by="commenter's verified fix in the thread (qysnn: 'my nccl depends on a different CUDA version "
    "(11.0) than I have on my system(10.2). Installing the correct nccl version fixs the problem')",
    mechanism="NCCL build for a newer CUDA than the node's driver supports",
    expect_signatures=["NCCL-ERR-1"],
    expect_causes=["driver-mismatch"],
    notes="quoted inline in a 2021 comment on the 2018 issue (the original reporter's CUDA 8 case is unresolved)",
)
log(
    "failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: "
    "unable to start container process: error during container init: error running prestart hook #0: exit status 1, "
    "stdout: , stderr: Auto-detected mode as 'legacy'\n"
    "nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: unknown\n"
    "Failed to initialize NVML: Driver/library version mismatch\n"
    "NVML library version: 570.195\n",
    id="k8s-device-plugin-1431-nvml-mismatch-initial-boot",
    url="https://github.com/NVIDIA/k8s-device-plugin/issues/1431",
    cause="On the GPU nodes' initial boot the loaded kernel module did not match the user-space driver (NVML "
    "570.195); after a reboot the mismatch disappears and the device plugin registers the GPUs.",
    established_by="reporter's A/B (error on initial boot, gone after reboot) and the tools' own mismatch messages",
    mechanism="kernel module vs user-space driver version mismatch",
    expect_signatures=["NVIDIA-DRIVER-LIBRARY-MISMATCH"],
    expect_causes=["module-userspace-mismatch", "reload-or-reboot"],
    notes="two blocks of the description: the containerd error, then the nvidia-smi output (its 'nvidia-smi output' "
    "caption line dropped)",
)
log(
    "nvidia-smi \nFailed to initialize NVML: Driver/library version mismatch\nNVML library version: 570.124\n",
    id="tinygrad-ogkm-47-p2p-modules-570.124.06-userspace-570.124.04",
    url="https://github.com/tinygrad/open-gpu-kernel-modules/issues/47",
    cause="The reporter installed the 570.124.04 user-space driver (--no-kernel-modules) and then built the kernel "
    "modules from the 570.124.06-p2p branch; module and NVML library versions differ.",
    established_by="the reporter's own build commands in the issue (570.124.04 runfile, 570.124.06-p2p modules) and "
    "a participant's diagnosis '570.124.04 != 570.124.06 ... install 570.124.06 to get NVML updated'",
    mechanism="kernel module vs user-space driver version mismatch",
    expect_signatures=["NVIDIA-DRIVER-LIBRARY-MISMATCH"],
    expect_causes=["module-userspace-mismatch"],
    notes="the issue's 'Terminal output' block; the first line is the command as typed",
)
log(
    "NVRM: GPU at PCI:000f:01:00: GPU-0f059bf0-a212-94c1-44a7-1068a6c6be66\n"
    "NVRM: Xid (PCI:000f:01:00): 169, fd8cd000 94000000\n"
    "NVRM: GPU 000f:01:00.0: RmInitAdapter failed! (0x62:0x1a:2631)\n",
    id="start9-3693-gb10-proprietary-module-rminitadapter",
    url="https://github.com/Start9Labs/start-technologies/pull/3693",
    cause="Driver 580.173.02's proprietary kernel-module flavour on a DGX Spark (GB10, Blackwell): Blackwell is "
    "supported only by the open modules, so the GPU never initialises; the same driver's open flavour works.",
    established_by="merged PR with the A/B on the DGX Spark (open modules installed -> GPU works; proprietary -> "
    "these lines every ~60 s) and NVIDIA's README ('Blackwell and later are only supported by the open kernel "
    "modules'); tracked in Start9Labs/start-technologies#3465",
    mechanism="GPU generation needs the open kernel modules; proprietary flavour fails RmInitAdapter",
    expect_signatures=[],
    notes="no signature describes the kernel-module flavour; an Xid lookup would not name it",
)
log(
    "[    3.596579] NVRM kgspInitRm_IMPL: missing NVDEC0 engine, cannot initialize GSP-RM\n"
    "[    3.596583] NVRM RmInitAdapter: Cannot initialize GSP firmware RM\n"
    "[    3.596745] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x63:0x56:1689)\n"
    "[    3.597360] NVRM: GPU 0000:01:00.0: rm_init_adapter failed, device minor number 0\n",
    id="open-gpu-kernel-modules-116-rtx2060-open-module-gsp",
    url="https://github.com/NVIDIA/open-gpu-kernel-modules/issues/116",
    cause="The open GPU kernel module 515.43.04 failed to start GSP-RM on an RTX 2060 whose NVDEC0 engine is absent; "
    "switching back to the proprietary module of the same version loads fine.",
    established_by="reporter's A/B (open module fails; 'After switching back to the proprietary KM ... The "
    "proprietary driver loads just fine') and NVIDIA's triage (labels NV-Triaged, Implemented)",
    mechanism="open kernel module / GSP firmware init fails on this GPU SKU; proprietary flavour works",
    expect_signatures=[],
)
log(
    "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory\n"
    "/opt/vllm-source/vllm/_C.abi3.so:\n"
    "  libcudart.so.12 => not found\n",
    id="llm-d-1402-cuda13-image-needs-cudart12",
    url="https://github.com/llm-d/llm-d/issues/1402",
    cause="The CUDA 13 GB200 image ships only libcudart.so.13, but its precompiled vLLM extensions are linked against "
    "libcudart.so.12.",
    established_by="reporter's ldd evidence and maintainer 'this is fixed in main'",
    mechanism="a library the image's own extension needs is not in the image",
    expect_signatures=["LD-LIB-NOT-FOUND"],
    expect_causes=["library-not-in-image"],
    notes="two blocks of the description: the error, then the 'Debug Evidence' ldd lines",
)

# ---------------------------------------------------------------- NCCL versions / topology files
log(
    "2a8874e7d1e6:2196:2275 [1] graph/xml.h:101 NCCL WARN Attribute arch of node cpu not found\n"
    "2a8874e7d1e6:2196:2275 [1] NCCL INFO graph/topo.cc:493 -> 3\n"
    "2a8874e7d1e6:2196:2275 [1] NCCL INFO graph/topo.cc:623 -> 3\n"
    "2a8874e7d1e6:2196:2275 [1] NCCL INFO graph/topo.cc:773 -> 3\n",
    id="aws-ofi-nccl-785-static-p5-topo-subset-gpus",
    url="https://github.com/aws/aws-ofi-nccl/issues/785",
    cause="aws-ofi-nccl < 1.11 loaded its static p5.48xl-topo.xml; with runners on GPU subsets NCCL 2.21.5's own "
    "detection did not fill arch/vendor of every <cpu>, and ncclTopoAddCpu failed.",
    established_by="AWS maintainer (mozarhua): the static topo file had issues; plugin >= 1.11 generates the "
    "topology dynamically - upgrade (v1.13.2-aws); closed",
    mechanism="topology XML with <cpu> lacking arch/vendor, loaded by the network plugin",
    expect_signatures=["NCCL-TOPO-FILE-XML"],
    expect_causes=["topo-file-malformed"],
    notes="lines of the reporter's log as quoted by the maintainer",
)
log(
    "enqueue.cc:1556 NCCL WARN Cuda failure 700 'an illegal memory access was encountered'\n",
    id="vllm-19890-nccl-wheel-illegal-access",
    url="https://github.com/vllm-project/vllm/issues/19890",
    cause="The NCCL shipped in the environment's nvidia-nccl-cu12 wheel hit an illegal memory access in vLLM's "
    "collectives; upgrading the wheel (pip install -U nvidia-nccl-cu12) fixed it.",
    established_by="verified fix posted in the thread ('solve by python -m pip install -U nvidia-nccl-cu12', linking "
    "the same fix in vllm-project/vllm#18814); closed",
    mechanism="NCCL release-level defect in the bundled wheel version",
    expect_signatures=[],
    notes="the issue title; NCCL-CUDA-FAILURE matches the line but none of its causes names an NCCL release defect",
)

# ---------------------------------------------------------------- launch: Slurm/pyxis/enroot, Kubernetes
log(
    "RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a "
    "driver from http://www.nvidia.com/Download/index.aspx\n",
    id="enroot-205-no-nvidia-visible-devices",
    url="https://github.com/NVIDIA/enroot/issues/205",
    cause="The image does not set NVIDIA_VISIBLE_DEVICES, so enroot's 98-nvidia.sh hook injected no driver into the "
    "pyxis container although Slurm allocated GPUs.",
    established_by="enroot maintainer (3XX0): 'You have to set NVIDIA_VISIBLE_DEVICES (in your srun env, enroot env "
    "file, container, etc)'",
    mechanism="container started without the NVIDIA hook's trigger variable -> no driver inside",
    expect_signatures=["CUDA-NO-DEVICE"],
    expect_causes=["no-gpu-in-container"],
)
log(
    "[compute-od-gpu-dy-p4d-24xlarge-1:08575] PMIX ERROR: ERROR in file gds_ds12_lock_pthread.c at line 168\n"
    "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4294967296 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
    "#\n"
    "# Using devices\n"
    "compute-od-gpu-dy-p4d-24xlarge-1: Test CUDA failure common.cu:1045 'unknown error'\n"
    " .. compute-od-gpu-dy-p4d-24xlarge-1 pid 8575: Test failure common.cu:1007\n"
    "srun: error: compute-od-gpu-dy-p4d-24xlarge-1: task 0: Exited with exit code 2\n",
    id="pyxis-81-nccl-tests-cuda-unknown-error-uvm",
    url="https://github.com/NVIDIA/pyxis/issues/81",
    cause="nvidia_uvm was not loaded (and its device not created) on the fresh ParallelCluster p4d node; CUDA in the "
    "container failed with 'unknown error'. 'sudo modprobe nvidia_uvm' plus a one-off container run on the host "
    "fixed it.",
    established_by="reporter's verified workaround in the thread",
    mechanism="nvidia_uvm missing on the node -> CUDA runtime init 'unknown error' in containers",
    expect_signatures=[],
    notes="no signature cause names nvidia_uvm; the PMIX line is unrelated noise from the same run",
)
log(
    "pyxis: importing docker image ...\n"
    "slurmstepd: error: pyxis: container start failed with error code: 1\n"
    "slurmstepd: error: pyxis: printing contents of log file ...\n"
    "slurmstepd: error: pyxis:     [ERROR] Command not found: nvidia-container-cli, see "
    "https://github.com/NVIDIA/libnvidia-container\n"
    "slurmstepd: error: pyxis:     [ERROR] /etc/enroot/hooks.d/98-nvidia.sh exited with return code 1\n"
    "slurmstepd: error: pyxis: couldn't start container\n"
    "slurmstepd: error: pyxis: if the image has an unusual entrypoint, try using --no-container-entrypoint\n"
    "slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1\n"
    "slurmstepd: error: Failed to invoke spank plugin stack\n",
    id="pyxis-110-nvidia-container-cli-missing",
    url="https://github.com/NVIDIA/pyxis/issues/110",
    cause="The GPU nodes had enroot/pyxis but not libnvidia-container's nvidia-container-cli, which enroot's "
    "98-nvidia.sh hook needs to inject the driver when NVIDIA_DRIVER_CAPABILITIES/VISIBLE_DEVICES request GPUs.",
    established_by="enroot's own error names the missing command and its project; the reporter's observation "
    "(containers start only with --export=None, i.e. without the NVIDIA variables)",
    mechanism="node lacks the NVIDIA container CLI the enroot GPU hook runs",
    expect_signatures=[],
)
log(
    "pyxis: imported docker image: 192.168.61.4:5000#/cosmoflow-nvidia:0.4\n"
    "slurmstepd: error: pyxis: container start failed with error code: 1\n"
    "slurmstepd: error: pyxis: printing enroot log file:\n"
    "slurmstepd: error: pyxis:     /usr/bin/enroot: line 44: HOME: unbound variable\n"
    "slurmstepd: error: pyxis:     [ERROR] Command not found: nvidia-container-cli, see "
    "https://github.com/NVIDIA/libnvidia-container\n"
    "slurmstepd: error: pyxis:     [ERROR] /etc/enroot/hooks.d/98-nvidia.sh exited with return code 1\n"
    "slurmstepd: error: pyxis: couldn't start container\n"
    "slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1\n",
    id="pyxis-101-bright-node-no-nvidia-container-cli",
    url="https://github.com/NVIDIA/pyxis/issues/101",
    cause="The Bright-managed compute node had no nvidia-container-cli (libnvidia-container-tools), so enroot's "
    "98-nvidia.sh hook failed for a GPU step (-G 4).",
    established_by="enroot's own error naming the missing command; issue closed",
    mechanism="node lacks the NVIDIA container CLI the enroot GPU hook runs",
    expect_signatures=[],
    notes="lines from a comment's srun output; 'HOME: unbound variable' is a separate, harmless enroot warning",
)
log(
    "(Worker pid=960) INFO 08-12 20:26:09 [pynccl.py:113] vLLM is using nccl==2.28.9\n",
    id="hami-2641-last-line-before-hang",
    url="https://github.com/Project-HAMi/HAMi/issues/2641",
    cause="HAMi's LD_PRELOADed libvgpu.so intercepts cuMemCreate inside NCCL's cuMem host allocation and deadlocks "
    "vLLM's ctypes-loaded NCCL at ncclCommInitRank; CUDA_DISABLE_CONTROL=true makes init finish in 0.22s.",
    established_by="reporter's root cause and A/B in the issue; closed as kind/bug",
    mechanism="GPU-sharing LD_PRELOAD shim deadlocks NCCL init (hang, no error line)",
    expect_signatures=[],
    notes="the issue says this is the last line before the hang; nothing NCCL or the fabric did is at fault",
)
log(
    "(Runner pid=868697) Error while creating shared memory segment /dev/shm/nccl-UmqSM9 (size 7340384)\n",
    id="easyr1-228-nccl-shm-segment",
    url="https://github.com/hiyouga/EasyR1/issues/228",
    cause="Not enough /dev/shm for NCCL's shared-memory segments in the Ray runner's environment.",
    established_by="maintainer (hiyouga): 'increase shmem' (pointing to the NCCL shared-memory issue); closed",
    mechanism="/dev/shm too small for NCCL SHM transport",
    expect_signatures=["NCCL-SHM-SEGMENT"],
    expect_causes=["dev-shm-too-small"],
    notes="the issue description's first line",
)
log(
    "HP-Z8-Fury-G5-Workstation-Desktop-PC:23458:23665 [0] NCCL INFO comm 0x23ba7ea0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 "
    "busId 47000 commId 0x47dc53f08cbcda96 - Init COMPLETE\n"
    "HP-Z8-Fury-G5-Workstation-Desktop-PC:23541:23673 [1] NCCL INFO Channel 00 : 1[1] -> 0[0] via SHM/direct/direct\n"
    "HP-Z8-Fury-G5-Workstation-Desktop-PC:23541:23673 [1] NCCL INFO Channel 01 : 1[1] -> 0[0] via SHM/direct/direct\n"
    "INFO 11-01 23:16:33 distributed_gpu_executor.py:56] # GPU blocks: 185231, # CPU blocks: 18724\n"
    "<vllm.entrypoints.llm.LLM object at 0x72c46e351a50>\n"
    "Processed prompts:   0%|          | 0/16 [00:00<?, ?it/s, est. speed input: 0.00 toks/s, output: 0.00 toks/s]\n",
    id="vllm-9920-tp2-stall-after-init-acs",
    url="https://github.com/vllm-project/vllm/issues/9920",
    cause="PCIe ACS and the IOMMU on the workstation redirected GPU peer-to-peer traffic; the second TP=2 run stalls "
    "after NCCL init.",
    established_by="reporter: 'disable ACS and IOMMU solved the issue'",
    mechanism="ACS/IOMMU redirect of GPU P2P -> hang after init (no error line)",
    expect_signatures=[],
    notes="end of the log block in the description; the run hangs here",
)

# ---------------------------------------------------------------- RDMA / UCX / MPI
log(
    "[1580848780.699283] [H1:163962:0]       ib_verbs.h:84   UCX  ERROR ibv_exp_query_device(mlx5_0) returned 38: "
    "No space left on device\n",
    id="ucx-4770-exp-query-device-on-upstream-libs",
    url="https://github.com/openucx/ucx/issues/4770",
    cause="HPC-X 2.5's UCX (built for MLNX_OFED's legacy experimental verbs) ran on MLNX_OFED 4.7 installed with the "
    "upstream rdma-core libraries; ibv_exp_query_device fails and UCX loses its accelerated IB transports (~6x slower).",
    established_by="reporter's A/B (legacy libs: normal performance; upstream libs: this error and ~6x drop)",
    mechanism="UCX build flavour (exp verbs) vs verbs library flavour",
    expect_signatures=[],
    notes="the first UCX line of the description's mpirun output; UCX-ERROR matches but its causes do not name this",
)
log(
    "    self.engine.register(kv_data_ptr, kv_data_len)\n"
    '  File "/opt/app/python3.12/lib/python3.12/site-packages/sglang/srt/disaggregation/mooncake/transfer_engine.py", '
    "line 36, in register\n"
    '    raise RuntimeError("Mooncake memory registration failed.")\n'
    "RuntimeError: Mooncake memory registration failed.\n",
    id="sglang-6193-mooncake-registration-failed",
    url="https://github.com/sgl-project/sglang/issues/6193",
    cause="PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True made PyTorch allocate the KV cache with cuMem virtual "
    "memory, which Mooncake's RDMA registration could not register.",
    established_by="sglang maintainer (ShangmingCai) closed the issue 'as resolved in' kvcache-ai/Mooncake#351, whose "
    "reporter root-caused it to expandable_segments and fixed it by removing the variable",
    mechanism="allocator setting makes tensors unregistrable for RDMA",
    expect_signatures=[],
    notes="tail of the traceback in a comment; no signature covers Mooncake registration failures",
)

# ---------------------------------------------------------------- container toolkit
log(
    "nvidia-container-cli: mount error: stat failed: /GeForce: no such file or directory\n",
    id="nvidia-docker-957-libnvidia-container-mount-geforce",
    url="https://github.com/NVIDIA/nvidia-docker/issues/957",
    cause="A libnvidia-container bug in the installed release; the reporter updated libnvidia-container-tools and "
    "libnvidia-container1 to 1.0.2-1 and containers started.",
    established_by="reporter's verified fix ('I update libnvidia-container-tools and libnvidia-container1:amd64 to "
    "1.0.2-1, and it works. closing this issue.')",
    mechanism="container toolkit release bug (host side), not the image or the driver",
    expect_signatures=[],
    notes="the issue title",
)

# ---------------------------------------------------------------- negatives: runs that worked
log(
    "W1204 18:29:54.725748 Ignoring error getting device memory: Not Supported\n"
    "I1204 18:29:54.733542 Registered device plugin for 'nvidia.com/gpu' with Kubelet\n",
    id="gpu-operator-1794-fixed-plugin-on-gb10-negative",
    url="https://github.com/NVIDIA/gpu-operator/issues/1794",
    cause="(negative) device plugin v0.17.4 on a DGX Spark (GB10) logs that NVML cannot report device memory and "
    "registers the GPU anyway; the run works.",
    established_by="participant's fix report in the thread (v0.17.4 'gracefully ignores the unsupported memory "
    "query'); the reporter confirmed GPU Operator v25.10.0 works",
    mechanism="(negative) harmless warning from a working device plugin",
    expect_signatures=[],
    negative=True,
)
log(
    "computeinstance-e00vcar76672ttnkq6:697:739 [0] NCCL INFO Using network IB\n"
    "computeinstance-e00vcar76672ttnkq6:698:698 [1] NCCL INFO cudaDriverVersion 12040\n"
    "computeinstance-e00vcar76672ttnkq6:698:698 [1] NCCL INFO Bootstrap: Using dstack-default-:192.168.0.5<0>\n"
    "computeinstance-e00vcar76672ttnkq6:698:698 [1] NCCL INFO NCCL version 2.26.2+cuda12.2\n"
    "computeinstance-e00vcar76672ttnkq6:698:698 [1] NCCL INFO Comm config Blocking set to 1\n"
    "computeinstance-e00vcar76672ttnkq6:697:739 [0] NCCL INFO ncclCommInitRankConfig comm 0x171265c0 rank 0 nranks 16 "
    "cudaDev 0 nvmlDev 0 busId 8d000 commId 0x1735d44e93dd5631 - Init START\n"
    "computeinstance-e00vcar76672ttnkq6:703:740 [6] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using "
    "internal net plugin.\n"
    "computeinstance-e00vcar76672ttnkq6:701:741 [4] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using "
    "internal net plugin.\n",
    id="dstack-2712-ib-works-after-rdma-core-negative",
    url="https://github.com/dstackai/dstack/issues/2712",
    cause="(negative) after installing libibverbs1 and ibverbs-providers in the image NCCL uses IB on the 2x 8xH100 "
    "cluster; the missing external net plugin line is informational.",
    established_by="dstack maintainer (r4victor): 'Just confirmed ... enables IB network' and 'Could not find: "
    "libnccl-net.so. Using internal net plugin. is okay since internal net plugin is used'",
    mechanism="(negative) working NCCL-over-IB start-up with the no-external-plugin INFO line",
    expect_signatures=[],
    negative=True,
)
log(
    "ibv_exp_query_device: invalid comp_mask !!! (comp_mask = 0x26b00000002 valid_mask = 0x1)\n"
    "[cu01][[12691,1],1][btl_openib_component.c:1670:init_one_device] error obtaining device attributes for mlx4_0 "
    "errno says Invalid argument\n"
    "--------------------------------------------------------------------------\n"
    "WARNING: There was an error initializing an OpenFabrics device.\n"
    "\n"
    "  Local host:   cu01\n"
    "  Local device: mlx4_0\n"
    "--------------------------------------------------------------------------\n",
    id="ompi-5807-openib-exp-query-warning-run-ok-negative",
    url="https://github.com/open-mpi/ompi/issues/5807",
    cause="(negative) Open MPI 3.1.3's openib BTL prints these on ConnectX-3 Pro with MLNX_OFED 4.4 over RoCE v2, but "
    "the MPI program (cpi) still runs and gives correct results.",
    established_by="reporter in the issue: 'However, the program still run, and I can get correct results.'",
    mechanism="(negative) openib BTL device-attribute warning from a run that completed correctly",
    expect_signatures=[],
    negative=True,
    notes="output block of the description; lines of the other rank omitted",
)

log(
    "ds-ml-01-0:17754:17754 [0] NCCL INFO Bootstrap : Using [0]lo:127.0.0.1<0>\n"
    "ds-ml-01-0:17754:17754 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so).\n"
    "ds-ml-01-0:17754:17754 [0] NCCL INFO NET/IB : No device found.\n"
    "ds-ml-01-0:17754:17754 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0>\n"
    "NCCL version 2.4.8+cuda10.1\n"
    "ds-ml-01-0:17755:17755 [1] NCCL INFO Bootstrap : Using [0]lo:127.0.0.1<0>\n"
    "ds-ml-01-0:17755:17755 [1] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so).\n"
    "ds-ml-01-0:17755:17755 [1] NCCL INFO NET/IB : No device found.\n"
    "ds-ml-01-0:17755:17755 [1] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0>\n",
    id="nccl-352-single-node-lo-socket-run-ok-negative",
    url="https://github.com/NVIDIA/nccl/issues/352",
    cause="(negative) a single-node, two-GPU all_reduce_perf in a Kubeflow notebook pod with NCCL_SOCKET_IFNAME=lo: "
    "no external net plugin and no IB device, NCCL uses sockets on loopback for bootstrap, and the test runs.",
    established_by="the commenter's report in the thread: 'It did work with the socket option as below' (followed by "
    "this start-up output)",
    mechanism="(negative) INFO lines of a working single-node run (no plugin, no IB, loopback bootstrap)",
    expect_signatures=[],
    negative=True,
    notes="the first lines of the working run's output in the comment",
)


def main() -> None:
    d = os.path.join(HERE, "logs")
    os.makedirs(d, exist_ok=True)
    ids = [e["id"] for e in LOGS]
    assert len(ids) == len(set(ids))
    for e in LOGS:
        for k in ("id", "file", "url", "cause", "established_by", "mechanism", "expect_signatures"):
            assert e.get(k) is not None and (e[k] != "" or k == "expect_signatures"), (e.get("id"), k)
        with open(os.path.join(d, e["file"]), "w", encoding="utf-8") as fh:
            fh.write(TEXT[e["file"]])
    with open(os.path.join(d, "index.json"), "w", encoding="utf-8") as fh:
        json.dump(LOGS, fh, indent=1)
        fh.write("\n")
    print(f"wrote {len(LOGS)} logs")


if __name__ == "__main__":
    main()
