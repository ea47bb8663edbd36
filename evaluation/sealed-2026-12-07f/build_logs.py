"""Build /work/sealed6/logs/: one file per verbatim log excerpt plus logs/index.json and logs/README.md.

Each excerpt holds lines copied from the public thread named in `url` (trimmed to the lines that matter, lines
never edited; a thread's own '...' elisions and redactions are kept; markdown backticks/quote markers around a
quoted line are dropped and `notes` says so). The text of every excerpt is embedded below and written out by
main(), so the set can be rebuilt from this file alone.
`expect_signatures`: ids from src/imgcheck/data/triage/signatures.json whose title covers the failure and whose
causes describe the established cause today ([] if none does, or the log is noise from a job that worked ->
`negative`); `expect_causes` names the cause ids of those signatures that fit.
Every source was checked with exclusion-check.sh (see exclusion-check.txt) on 2026-12-07.
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
    kw["file"] = kw["id"] + ".log"
    assert kw["file"] not in TEXT, kw["file"]
    TEXT[kw["file"]] = text
    LOGS.append(kw)


# ---------------------------------------------------------------- GPU visibility, MIG, launch specs
log(
    "THCudaCheck FAIL file=/opt/pytorch/pytorch/torch/csrc/cuda/Module.cpp line=33 error=101 : invalid device ordinal\n"
    "Traceback (most recent call last):\n"
    '  File "<string>", line 1, in <module>\n'
    '  File "/usr/local/lib64/python3.6/site-packages/torch/cuda/__init__.py", line 265, in set_device\n'
    "    torch._C._cuda_setDevice(device)\n"
    "RuntimeError: cuda runtime error (101) : invalid device ordinal at "
    "/opt/pytorch/pytorch/torch/csrc/cuda/Module.cpp:33\n",
    id="mlcommons-training-442-mig-set-device-1-invalid-ordinal",
    url="https://github.com/mlcommons/training/issues/442",
    cause="Several MIG instances of an A100 were visible to the container; a CUDA process enumerates only one MIG "
    "device, so bind_launch.py's torch.cuda.set_device(local_rank) fails for every local rank but 0.",
    established_by="reporter's reproduction (set_device(0) works, set_device(1) fails) and verified working form: "
    "CUDA_VISIBLE_DEVICES=<MIG UUID> per process with set_device(0)",
    mechanism="one MIG device per process; set_device(local_rank) past it -> invalid device ordinal",
    expect_signatures=["CUDA-INVALID-DEVICE-ORDINAL"],
    expect_causes=["local-rank-mapping"],
    notes="the description's first code block (the error every spawned subprocess but the first threw), unchanged",
)
log(
    "loading NVML\nFailed to start nvml with error:  could not load NVML library\n",
    id="k8s-device-plugin-23-nvml-not-loadable-default-runtime",
    url="https://github.com/NVIDIA/k8s-device-plugin/issues/23",
    cause="nvidia-docker2 installed but Docker's default runtime was still runc: the device-plugin pod got no "
    "driver libraries and could not load NVML.",
    established_by="maintainer's answer (make nvidia the default runtime) and the reporter's confirmation",
    mechanism="GPU pod started without the NVIDIA runtime -> no libnvidia-ml -> device plugin cannot start",
    expect_signatures=[],
    notes="the two lines the reporter quotes from kubectl describe, unchanged; no signature matches this wording",
)
log(
    'OCI runtime create failed: container_linux.go:348: starting container process caused "process_linux.go:402: '
    'container init caused \\"process_linux.go\n'
    ':385: running prestart hook 1 caused \\\\\\"error running hook: exit status 1, stdout: , stderr: exec command: '
    "[/usr/bin/nvidia-container-cli --load-kmods configure --ldconfig=@/sbin/ldconfig.real --device=all --com\n"
    "pute --compat32 --graphics --utility --video --display --require=cuda>=8.0 --pid=32239 "
    "/var/lib/docker/overlay2/bd4f3570d4eb99d9df1117bd3751a00c8c0eb63429e65eba2a196c6c543cc52f/merged]\\\\\\\\nnvidia-container-cli: m\n"
    "ount error: file creation failed: "
    "/var/lib/docker/overlay2/bd4f3570d4eb99d9df1117bd3751a00c8c0eb63429e65eba2a196c6c543cc52f/merged/usr/bin/nvidia-smi: "
    'file exists\\\\\\\\n\\\\\\"\\"": unknown\n',
    id="nvidia-docker-825-nvidia-smi-in-image-file-exists",
    url="https://github.com/NVIDIA/nvidia-docker/issues/825",
    cause="The image contained the driver's user space (nvidia-smi and driver libraries); the runtime hook could not "
    "mount the host's nvidia-smi over the image's file.",
    established_by="maintainer (3XX0): 'This is expected, nvidia-smi shouldn't be in the container image'",
    mechanism="driver user space baked into the image collides with the runtime's injection -> container start fails",
    expect_signatures=[],
    notes="the reporter's block, line breaks as wrapped in the thread, unchanged",
)
log(
    "Status: Downloaded newer image for ghcr.io/synerbi/sirf:petric2\n"
    "docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI "
    "runtime create failed: runc create failed: unable to start container process: error during container init: "
    "error running prestart hook #0: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"
    "nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.8, please update your driver to a "
    "newer version, or use an earlier cuda container\n",
    id="petric2-27-requirement-cuda-12.8-driver-551",
    url="https://github.com/SyneRBI/PETRIC2/issues/27",
    cause="The image requires CUDA >= 12.8 and the host driver (551.78) supports CUDA 12.4.",
    established_by="the reporter's nvidia-smi (Driver 551.78, CUDA Version 12.4) against the requirement; closed "
    "as wontfix (update the driver)",
    mechanism="image's CUDA requirement newer than the host driver -> toolkit refuses the container",
    expect_signatures=["CUDA-DRIVER-INSUFFICIENT"],
    expect_causes=["node-driver-too-old"],
    notes="the reporter's 'I get:' block, unchanged",
)
log(
    "Abort(3712399) on node 0 (rank 0 in comm 0): Fatal error in PMPI_Init: Other MPI error, error stack:\n"
    "MPIR_Init_thread(159).......: \n"
    "MPID_Init(597)..............: \n"
    "MPIDI_UCX_mpi_init_hook(250): \n"
    "initial_address_exchange(97): \n"
    "MPIDU_bc_table_create(155)..: \n"
    "MPIR_pmi_allgather_shm(699).: \n"
    "get_ex(450).................: \n"
    "MPIR_pmi_kvs_get(227).......: PMI_KVS_Get returned -1\n",
    id="nccl-tests-92-mpich-pmi-kvs-get-failed",
    url="https://github.com/NVIDIA/nccl-tests/issues/92",
    cause="The MPI installation/launch was not functional across the two nodes (MPI_Init failed in the PMI "
    "key-value exchange), before NCCL was involved.",
    established_by="NCCL maintainer's diagnosis (sjeaugey): 'Your MPI doesn't seem functional; I'm not sure this has "
    "much to do with NCCL'",
    mechanism="broken MPI launch (PMI KVS get fails at MPI_Init) -> nccl-tests never starts",
    expect_signatures=[],
    notes="result1 block of the description, unchanged (trailing spaces kept)",
)

# ---------------------------------------------------------------- NCCL: NVLS, SHM, releases
log(
    "[pie-driver-cuda] fatal: NCCL async error at driver/cuda/src/distributed.cpp:100\n"
    "    (ncclCommInitRankConfig(&comm_, world_size, uid, rank, &config)): unhandled cuda error\n"
    "transport/nvls.cc:251 NCCL WARN Cuda failure 1 'invalid argument'\n"
    "transport/nvls.cc:401 -> 1\n"
    "init.cc:1138 -> 1\n"
    "init.cc:1407 -> 1\n"
    "group.cc:75 -> 1 [Async thread]\n",
    id="pie-500-nvls-invalid-argument-container-without-nvidia-caps",
    url="https://github.com/pie-project/pie/issues/500",
    cause="NVSwitch-backed 4x H200 pod whose container lacks /dev/nvidia-caps: NCCL's NVLS multicast allocation is "
    "refused and communicator init fails.",
    established_by="reporter's A/B: NCCL_NVLS_ENABLE=0 resolves it completely on the same pod (healthy NV18 mesh)",
    mechanism="NVLS multicast refused in a container without the capability devices -> NCCL init fails",
    expect_signatures=["NCCL-NVLS-CUDA"],
    expect_causes=["disable-nvls"],
    notes="the 'Observed' block and the NCCL_DEBUG=INFO block of the description, concatenated, lines unchanged",
)
log(
    "node08:27106:27302 [0] include/shm.h:27 NCCL WARN Call to shm_open failed : Permission denied\n"
    "node08:27106:27302 [0] NCCL INFO include/shm.h:41 -> 2\n"
    "node08:27106:27302 [0] include/shm.h:48 NCCL WARN Error while creating shared memory segment "
    "nccl-shm-recv-b7948f403864987a-0-3-0 (size 4460544)\n",
    id="nccl-328-shm-open-permission-denied",
    url="https://github.com/NVIDIA/nccl/issues/328",
    cause="/dev/shm did not let the user create files; fixed by chmod 777 /dev/shm.",
    established_by="reporter's verified fix ('the problem is gone'); maintainer explains the printed reason",
    mechanism="/dev/shm not writable -> shm_open EACCES -> SHM segment creation fails -> unhandled system error",
    expect_signatures=[],
    notes="the three lines quoted in the description, unchanged; no NCCL-SHM-SEGMENT cause covers a permission problem",
)
log(
    "NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:825, unhandled system error, NCCL version 2.7.8\n",
    id="coreweave-ml-containers-10-nccl-2.7.8-unhandled-system-error",
    url="https://github.com/coreweave/ml-containers/pull/10",
    cause="An old image (NCCL 2.7.8) failed on the cluster's A100 80GB NVLink nodes; rebuilding with torch "
    "1.13.1+cu117 (newer NCCL) removed the error on the same nodes.",
    established_by="merged PR by the image maintainer with before/after on named nodes",
    mechanism="old NCCL release fails init on a newer node type; newer NCCL works",
    expect_signatures=[],
    notes="the PR description's NCCL Error block, unchanged; no NCCL-ERR-2 cause names an outdated release",
)

# ---------------------------------------------------------------- UCX / Open MPI
log(
    "process_vm_readv delivered 0 instead of 480960, error message Operation not permitted\n",
    id="ucx-3545-cma-process-vm-readv-eperm",
    url="https://github.com/openucx/ucx/issues/3545",
    cause="Yama ptrace_scope=1 (Ubuntu 18.04 default) forbids process_vm_readv between ranks; UCX 1.5.1's CMA "
    "transport failed (fixed by ptrace_scope=0; UCX 1.6 checks it).",
    established_by="reporter's verified fix (sysctl kernel.yama.ptrace_scope=0) and the UCX maintainer's answer "
    "(fixed in #3205, UCX 1.6)",
    mechanism="cross-memory attach forbidden by ptrace_scope -> UCX CMA transfer fails",
    expect_signatures=[],
    notes="the error line quoted in the description, unchanged",
)
log(
    "osc_ucx_component.c:379  Error: OSC UCX component priority set inside component query failed\n",
    id="ompi-14086-osc-ucx-priority-message-negative",
    url="https://github.com/open-mpi/ompi/issues/14086",
    cause="(negative) UCX installed in a TCP-only container: Open MPI's one-sided UCX component disqualifies itself "
    "with this message; MPI runs over TCP.",
    established_by="Open MPI maintainer's analysis (bosilca): a normal outcome when UCX has no transport with the "
    "needed RMA/AMO features",
    mechanism="(negative) component-selection noise from a run that works",
    expect_signatures=[],
    negative=True,
    notes="the line from the description's shell block, unchanged",
)
log(
    "--------------------------------------------------------------------------\n"
    "No OpenFabrics connection schemes reported that they were able to be\n"
    "used on a specific port.  As such, the openib BTL (OpenFabrics\n"
    "support) will be disabled for this port.\n"
    "\n"
    "  Local host:           centos203\n"
    "  Local device:         mlx5_0\n"
    "  Local port:           1\n"
    "  CPCs attempted:       rdmacm, udcm\n"
    "--------------------------------------------------------------------------\n"
    "Hello, world, I am 0 of 4, (Open MPI v4.1.2, package: Open MPI nscc-gz@centos203 Distribution, ident: 4.1.2, "
    "repo rev: v4.1.2, Nov 24, 2021, 112)\n"
    "Hello, world, I am 1 of 4, (Open MPI v4.1.2, package: Open MPI nscc-gz@centos203 Distribution, ident: 4.1.2, "
    "repo rev: v4.1.2, Nov 24, 2021, 112)\n"
    "Hello, world, I am 2 of 4, (Open MPI v4.1.2, package: Open MPI nscc-gz@centos203 Distribution, ident: 4.1.2, "
    "repo rev: v4.1.2, Nov 24, 2021, 112)\n"
    "Hello, world, I am 3 of 4, (Open MPI v4.1.2, package: Open MPI nscc-gz@centos203 Distribution, ident: 4.1.2, "
    "repo rev: v4.1.2, Nov 24, 2021, 112)\n",
    id="ompi-11063-openib-no-cpcs-hello-runs-negative",
    url="https://github.com/open-mpi/ompi/issues/11063",
    cause="(negative) The deprecated openib BTL prints its 'no OpenFabrics connection schemes' banner and disables "
    "itself for the port; the MPI program runs (all four ranks print).",
    established_by="the thread's own output: hello_c completes on all ranks after the banner",
    mechanism="(negative) openib BTL banner from a run that completes",
    expect_signatures=[],
    negative=True,
    notes="the reporter's output block of 2022-11-15 (the mpirun line itself dropped), unchanged",
)
log(
    "--------------------------------------------------------------------------\n"
    "By default, for Open MPI 4.0 and later, infiniband ports on a device\n"
    "are not used by default.  The intent is to use UCX for these devices.\n"
    "You can override this policy by setting the btl_openib_allow_ib MCA parameter\n"
    "to true.\n"
    "\n"
    "  Local host:              coe\n"
    "  Local adapter:           hfi1_0\n"
    "  Local port:              1\n"
    "\n"
    "--------------------------------------------------------------------------\n"
    "--------------------------------------------------------------------------\n"
    "WARNING: There was an error initializing an OpenFabrics device.\n"
    "\n"
    "  Local host:   coe\n"
    "  Local device: hfi1_0\n"
    "--------------------------------------------------------------------------\n",
    id="jdftx-270-openib-not-used-by-default-banner-negative",
    url="https://github.com/shankar1729/jdftx/issues/270",
    cause="(negative) Open MPI 4's openib BTL announces it does not use the InfiniBand-class port by default and "
    "fails to initialize it; the run goes on over another transport.",
    established_by="maintainer's answer: 'This is an OpenMPI warning that usually has no impact'",
    mechanism="(negative) openib BTL banners on a node whose job is not affected",
    expect_signatures=[],
    negative=True,
    notes="the quoted output after the jdftx command line, unchanged (the quote marker dropped)",
)

log(
    "                    RDMA_Write BW Test\n"
    " Dual-port       : OFF          Device         : mlx5_2\n"
    " Number of qps   : 1            Transport type : IB\n"
    " Connection type : RC           Using SRQ      : OFF\n"
    " TX depth        : 128\n"
    " CQ Moderation   : 100\n"
    " Mtu             : 1024[B]\n"
    " Link type       : Ethernet\n"
    " GID index       : 0\n"
    " Max inline data : 0[B]\n"
    " rdma_cm QPs     : OFF\n"
    " Data ex. method : Ethernet\n"
    "---------------------------------------------------------------------------------------\n"
    " local address: LID 0000 QPN 0x003b PSN 0xab3a5e RKey 0x015b1a VAddr 0x007f72e9620000\n"
    " GID: 00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00\n"
    " remote address: LID 0000 QPN 0x003c PSN 0x65b096 RKey 0x014d0c VAddr 0x007fcb322d5000\n"
    " GID: 00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00\n"
    "Failed to modify QP 59 to RTR\n"
    " Unable to Connect the HCA's through the link\n",
    id="k8s-rdma-shared-dev-plugin-72-roce-pod-gids-zero",
    url="https://github.com/Mellanox/k8s-rdma-shared-dev-plugin/issues/72",
    cause="RoCE HCA shared into pods whose only network is the CNI's (no netdev of the RoCE NIC in the pod's "
    "namespace): every GID is zero in the pod, so the QP cannot move to RTR.",
    established_by="plugin maintainer's diagnosis ('i see link type is ethernet, are you using macvlan as secondary "
    "network? your GIDs are zero') and the A/B in projectcalico/calico#8482 (Calico fails, macvlan works)",
    mechanism="RoCE device without a netdev in the pod's network namespace -> zero GIDs -> QP RTR fails",
    expect_signatures=[],
    notes="the ib_write_bw output block of the description, unchanged (not an NCCL line; no signature covers perftest's "
    "RTR failure)",
)

log(
    "$ kubectl logs pod/nvidia-driver-daemonset-jdr89 -n gpu-operator-resources\n"
    "========== NVIDIA Software Installer ==========\n"
    "Starting installation of NVIDIA driver version 418.87.01 for Linux kernel version 4.15.0-66-generic\n"
    "Stopping NVIDIA persistence daemon...\n"
    "Unloading NVIDIA driver kernel modules...\n"
    "Unmounting NVIDIA driver rootfs...\n"
    "Checking NVIDIA driver packages...\n"
    "Found NVIDIA driver package nvidia-modules-4.15.0-builtin\n"
    "Installing NVIDIA driver kernel modules...\n"
    "WARNING: The nvidia-drm module will not be installed. As a result, DRM-KMS will not function with this "
    "installation of the NVIDIA driver.\n"
    "ERROR: Unable to open 'kernel/dkms.conf' for copying (No such file or directory)\n",
    id="gpu-operator-8-driver-container-dkms-conf-nouveau",
    url="https://github.com/NVIDIA/gpu-operator/issues/8",
    cause="The host's nouveau driver was loaded; the operator's driver container could not install the NVIDIA "
    "kernel modules until nouveau was blacklisted.",
    established_by="reporter's verified fix: installation completed after disabling nouveau and updating the initramfs",
    mechanism="nouveau loaded on the node -> driver container's module install fails",
    expect_signatures=[],
    negative=False,
    notes="the driver pod log from the reporter's update comment; whitespace-only lines and trailing spaces dropped, "
    "other lines unchanged; the ERROR line is the issue's title, which is that log's last line",
)

log(
    "[worker] LEADER_IP=10.1.227.0 MY_IP=            <- MY_IP is EMPTY\n"
    "worker  scripts.py:1128 -- Local node IP: 172.16.89.194\n"
    "worker  node.py:421 -- Failed to get node info b'RPC error: Deadline Exceeded'\n"
    "worker  Exception: The current node timed out during startup ... raylet failed to startup\n"
    "leader  [leader] ray nodes seen: 1 (target 2)   <- stuck at 1 forever\n",
    id="aws-do-eks-49-hostnetwork-ray-worker-secondary-interface",
    url="https://github.com/aws-samples/aws-do-eks/pull/49",
    cause="Under hostNetwork: true the Ray worker's 'hostname -i' returned nothing, so ray start auto-detected its "
    "address and bound the raylet to a secondary interface (172.16.89.194) the head on the primary VPC CIDR (10.1.x) "
    "cannot route to; registration timed out.",
    established_by="merged PR: root cause traced in the combined pod log; fixed by resolving the worker IP with "
    "'ip route get $LEADER_IP'",
    mechanism="hostNetwork pod whose host name does not resolve advertises an unreachable secondary-interface address",
    expect_signatures=[],
    notes="the PR description's excerpt of the combined agg-pods log, including the author's own '<-' annotations "
    "and '...' elision, unchanged; no signature covers Ray's raylet registration",
)

log(
    "ggml_cuda_init: failed to initialize CUDA: forward compatibility was attempted on non supported HW\n"
    "CPU: using device CPU\n"
    "...\n",
    id="club-3090-633-ggml-cuda-init-forward-compat-geforce",
    url="https://github.com/noonghunna/club-3090/issues/633",
    cause="A CUDA 13.2 runtime image on an RTX 3090 with driver 580.159.03 (CUDA 13.0): CUDA took the "
    "forward-compatibility path, which GeForce GPUs do not support (error 804); the server fell back to CPU and "
    "crash-looped.",
    established_by="reporter's A/B with the CUDA 12.6 build of the same commit; maintainer's merged fix PR #640 "
    "(driver-aware cu13/cu12 selection)",
    mechanism="forward-compat libcuda on a consumer GPU (CUDA image newer than the driver)",
    expect_signatures=["CUDA-RUNTIME-ERROR"],
    expect_causes=["compat-on-unsupported-gpu"],
    notes="the first three lines of the issue's code block (the thread's own '...' kept); the block's last line, "
    "the reporter's parenthesised summary of what followed, is left out",
)

log(
    "neither nv_peer_mem, or nvidia_peermem detected. Skipping transport.\n",
    id="deepep-151-nvshmem-neither-nv-peer-mem-nor-nvidia-peermem",
    url="https://github.com/deepseek-ai/DeepEP/pull/151",
    cause="nvidia_peermem was loaded (driver 550.54.15, H800), but NVSHMEM checked only "
    "/sys/kernel/mm/memory_peers/nv_mem{,_nc}/version, absent on these nodes, so it skipped its IB transport.",
    established_by="merged PR with the author's verified before/after (check /sys/module/nvidia_peermem/version "
    "instead; multi-node tests pass)",
    mechanism="NVSHMEM's legacy memory_peers check misses a loaded nvidia-peermem",
    expect_signatures=[],
    notes="the message as the PR description quotes it inline (backticks dropped); the source-location prefix "
    "NVSHMEM prints before it is not in the PR; no signature covers NVSHMEM's transport message",
)

log(
    "/opt/slurm/bin/srun --container-image hello-world.sqsh hostname\n"
    "pyxis: importing docker image: hello-world.sqsh\n"
    "slurmstepd: error: pyxis: child 10028 failed with error code: 1\n"
    "slurmstepd: error: pyxis: failed to import docker image\n"
    "slurmstepd: error: pyxis: printing enroot log file:\n"
    "slurmstepd: error: pyxis:     [INFO] Querying registry for permission grant\n"
    "slurmstepd: error: pyxis:     [INFO] Authenticating with user: <anonymous>\n"
    "slurmstepd: error: pyxis: couldn't start container\n"
    "slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1\n"
    "slurmstepd: error: Failed to invoke spank plugin stack\n"
    "srun: error: compute-0: task 0: Exited with exit code 1\n",
    id="pyxis-127-sqsh-file-without-dot-slash-pulled-from-registry",
    url="https://github.com/NVIDIA/pyxis/issues/127",
    cause="--container-image was given a bare squashfs file name (hello-world.sqsh); Pyxis treats a name that does "
    "not start with '/' or './' as a registry image, so enroot queried a registry for 'hello-world.sqsh' instead of "
    "opening the local file.",
    established_by="Pyxis maintainer (flx42): 'You have to start the path with / or ./ to use a squashfs image, "
    "otherwise it's considered as a docker image from a registry'",
    mechanism="launch spec names a local squashfs without a path prefix: Pyxis pulls it as a registry image",
    expect_signatures=[],
    notes="the description's srun command and output, unchanged (the trailing spaces after the command dropped); the "
    "reporter's later 'no such file' follow-up (the path on the compute node) is not part of this excerpt",
)

log(
    "1765457011.052824] [nvl72119-T17:1222683:0]      ucp_device.c:415  UCX  ERROR failed to select lane for local "
    "device GPU0\n",
    id="nixl-1110-ucx-no-lane-for-gpu-cuda-ipc-excluded",
    url="https://github.com/ai-dynamo/nixl/issues/1110",
    cause="The NIXL container exported UCX_TLS=^cuda_ipc; on GB200 the nixl_ep benchmark's NVLink (ipc) backend "
    "found no UCX lane for the GPU.",
    established_by="reporter's verified fix (unset UCX_TLS or UCX_TLS=all); maintainers' merged PRs #1099/#1169 "
    "removed the UCX_TLS=^cuda_ipc export",
    mechanism="UCX_TLS in the image excludes cuda_ipc; GPU-to-GPU transfer has no transport",
    expect_signatures=[],
    notes="the first error line of the issue, with the thread's markdown emphasis and backslash escapes removed; the "
    "line's opening '[' is missing in the thread itself (eaten by the markdown) and is not restored; the second, "
    "truncated line ('failed to create handle: ...') is left out",
)


def write_readme(d: str) -> None:
    lines = [
        "# Sealed held-out logs #6",
        "",
        "Verbatim excerpts from public threads (lines unchanged; the thread's own elisions kept). Built by "
        "../build_logs.py; index.json has url, cause, established_by, expect_signatures, expect_causes, notes.",
        "`negative: true` marks output of a setup that works (nothing should be diagnosed as the failure).",
        "",
        "| file | source | cause (short) |",
        "|---|---|---|",
    ]
    for e in LOGS:
        lines.append(f"| {e['file']} | {e['url']} | {e['mechanism']} |")
    with open(os.path.join(d, "README.md"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


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
    write_readme(d)
    print(f"wrote {len(LOGS)} logs")


if __name__ == "__main__":
    main()
