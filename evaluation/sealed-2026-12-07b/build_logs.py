"""Build /work/sealed2/logs/: one file per verbatim log excerpt plus logs/index.json.

Each excerpt holds lines copied from the public thread named in `url` (trimmed to the lines that matter, lines
never edited; a thread's own '...' elisions and redactions are kept; where a thread quotes several blocks, or an
inline quote or the title, `notes` says so). The text of every excerpt is embedded below and written out by main(),
so the set can be rebuilt from this file alone.
`expect_signatures`: ids from src/imgcheck/data/triage/signatures.json that would be right today ([] if none:
either no signature describes the cause, or the log is noise from a job that worked -> `negative`).
Every url was checked against `git -C /work/main grep`, /work/shared and /work/sealed (no hits) on 2026-12-07.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
LOGS = []
TEXT = {}


def log(text: str, **kw):
    kw.setdefault("sealed_source", "issues")
    kw.setdefault("negative", False)
    assert kw["file"] not in TEXT
    TEXT[kw["file"]] = text
    LOGS.append(kw)


# ---------------------------------------------------------------- RoCE / IB connection
log(
    "_ibvwrap.cc: NCCL WARN Call to ibv_modify_qp failed with error Connection timed out_\n",
    id="nccl-769-modify-qp-timeout-link-local-gid",
    file="nccl-769-modify-qp-timeout-link-local-gid.log",
    url="https://github.com/NVIDIA/nccl/issues/769",
    cause="NCCL_IB_GID_INDEX=1 selected the RoCE v2 GID of the interface's IPv6 link-local fe80:: address, which is "
    "not routed between the nodes, so moving the QP to RTR/RTS timed out; GID 3 (IPv4-mapped RoCE v2) works.",
    established_by="NCCL maintainer (sjeaugey): the fe80:: address is link-local and not routed, use GID 3; the "
    "reporter's A/B (index 1 fails, index 3 works)",
    mechanism="RoCE GID index pointing at a link-local GID; address resolution for the peer fails at RTR",
    expect_signatures=["IBV-MODIFY-QP"],
    fabric_at_fault=False,
    notes="quoted inline in the thread; the leading/trailing underscores are the thread's markdown italics, kept",
)
log(
    "[0] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with error No such device\n",
    id="nccl-718-modify-qp-nodev-gid-per-pod",
    file="nccl-718-modify-qp-nodev-gid-per-pod.log",
    url="https://github.com/NVIDIA/nccl/issues/718",
    cause="In Kubernetes with the RDMA device plugin different pods see their RoCE address at different GID indexes; "
    "the job set NCCL_IB_GID_INDEX=5 for every pod, and on pods whose GIDs are 6/7 index 5 named no usable GID.",
    established_by="the reporter's diagnosis ('because of the wrong IB_GID_INDEX'); NCCL maintainer (sjeaugey) "
    "recommended writing the per-node index from show_gids into /etc/nccl.conf",
    mechanism="NCCL_IB_GID_INDEX names a GID that is not usable in this network namespace",
    expect_signatures=["IBV-MODIFY-QP"],
    fabric_at_fault=False,
)
log(
    "NCCL WARN NET/IB : Got completion from peer fe80::966d:ae03:8b:df54%ib0<33397> with error 4, opcode 32611, "
    "len 32611, vendor err 81 (Send)\n",
    id="nccl-928-wc-loc-prot-acs",
    file="nccl-928-wc-loc-prot-acs.log",
    url="https://github.com/NVIDIA/nccl/issues/928",
    cause="ACS enabled on the PCIe path broke GPU Direct RDMA writes between GPU and NIC: IB completion error 4 "
    "(local protection error).",
    established_by="NCCL maintainer (sjeaugey): 'IB error 4 is usually due to ACS being enabled and breaking GPU "
    "Direct RDMA'; a user with the same error confirmed (disabling ACS made it work and fast)",
    mechanism="ACS redirect breaks GPUDirect RDMA peer-to-peer DMA -> IBV_WC_LOC_PROT_ERR (4) on the send",
    expect_signatures=["IB-WC-LOC-PROT-ERR", "IB-COMPLETION-ERROR"],
    fabric_at_fault=False,
    notes="the issue title",
)

# ---------------------------------------------------------------- driver / CUDA / NVML
log(
    "THCudaCheck FAIL file=/root/torch/extra/cutorch/lib/THC/THCGeneral.c line=66 error=35 : CUDA driver version "
    "is insufficient for CUDA runtime version\n",
    id="nvidia-docker-414-driver-insufficient",
    file="nvidia-docker-414-driver-insufficient.log",
    url="https://github.com/NVIDIA/nvidia-docker/issues/414",
    cause="The host driver 367.57 was older than the CUDA 8.0 release in the Torch image requires (375 series); "
    "cutorch's first CUDA call returned error 35.",
    established_by="NVIDIA (cliffwoolley): upgrade to a 375-series driver or later for the latest CUDA 8 release",
    mechanism="CUDA runtime newer than the kernel driver supports (cudaErrorInsufficientDriver, 35)",
    expect_signatures=["CUDA-DRIVER-INSUFFICIENT"],
    fabric_at_fault=False,
)
log(
    "$ nvidia-smi\n"
    "Failed to initialize NVML: Function Not Found\n"
    "$ sudo nvidia-docker run -it nvidia/cuda-ppc64le:8.0-cudnn6-devel-ubuntu16.04 nvidia-smi\n"
    "nvidia-docker | 2017/12/21 05:04:46 Error: nvml: Driver/library version mismatch\n",
    id="nvidia-docker-584-nvml-stale-libs",
    file="nvidia-docker-584-nvml-stale-libs.log",
    url="https://github.com/NVIDIA/nvidia-docker/issues/584",
    cause="After 'yum update' upgraded the driver, /usr/lib64/nvidia still held symlinks to the old revision's "
    "libnvidia-ml, so user-space NVML did not match the loaded kernel module (a reboot did not help).",
    established_by="the reporter's fix: the symlinks in /usr/lib64/nvidia had to be updated to the latest driver's "
    "libnvidia-ml files",
    mechanism="user-space NVML library from a different driver version than the kernel module",
    expect_signatures=["NVIDIA-DRIVER-LIBRARY-MISMATCH"],
    fabric_at_fault=False,
)
log(
    "Failed to initialize NVML: Driver/library version mismatch\n",
    id="dockermonitor-42-driver-in-image",
    file="dockermonitor-42-driver-in-image.log",
    url="https://github.com/hpc-admin-sist/DockerMonitor/issues/42",
    cause="A user installed CUDA (and with it an NVIDIA driver user space) inside their container on a Docker-based "
    "GPU cluster; the container's NVML no longer matched the host kernel module. A reboot cannot fix that.",
    established_by="the cluster admin: uninstall the self-installed driver (the container cannot change the host "
    "driver); after that nvidia-smi worked and the user confirmed",
    mechanism="driver user-space libraries baked into the image instead of injected from the host",
    expect_signatures=["NVIDIA-DRIVER-LIBRARY-MISMATCH"],
    fabric_at_fault=False,
    notes="an inline quote in the thread",
)
log(
    "idf2@koelsch:~$ nvidia-smi\nFailed to initialize NVML: Driver/library version mismatch\n",
    id="machine-shop-60-nvml-mismatch-reboot",
    file="machine-shop-60-nvml-mismatch-reboot.log",
    url="https://github.com/illinois-scicomp/machine-shop-maintenance/issues/60",
    cause="The driver packages were upgraded on the host while the old kernel module stayed loaded.",
    established_by="the admins' resolution in the issue: the machine was rebooted and the error went away",
    mechanism="user-space driver upgraded without reloading the kernel module",
    expect_signatures=["NVIDIA-DRIVER-LIBRARY-MISMATCH"],
    fabric_at_fault=False,
)
log(
    "(container) $ nvidia-smi -L\nFailed to initialize NVML: Unknown Error\n",
    id="nvidia-container-toolkit-1227-daemon-reload",
    file="nvidia-container-toolkit-1227-daemon-reload.log",
    url="https://github.com/NVIDIA/nvidia-container-toolkit/issues/1227",
    cause="`systemctl daemon-reload` on the host (systemd cgroup driver) re-applied the running containers' device "
    "cgroups without the NVIDIA devices injected at start; the containers lost their GPUs while the host was fine.",
    established_by="the reporter's reproduction (works until daemon-reload, fails after); mechanism as in NVIDIA's "
    "notice NVIDIA/nvidia-docker#1730",
    mechanism="systemd re-applies the device cgroup without runtime-injected /dev/nvidia* (no /dev/char symlinks)",
    expect_signatures=["NVML-UNKNOWN-ERROR"],
    fabric_at_fault=False,
)
log(
    "RuntimeError: cuda runtime error (101) : invalid device ordinal at /pytorch/torch/csrc/cuda/Module.cpp:59"
    "\u548b\u5904\u7406\uff1f\n",
    id="pick-pytorch-14-invalid-device-ordinal",
    file="pick-pytorch-14-invalid-device-ordinal.log",
    url="https://github.com/wenwenyu/PICK-pytorch/issues/14",
    cause="The launcher started 4 processes per node (--nproc_per_node=4) while CUDA_VISIBLE_DEVICES exposed only "
    "2 GPUs; ranks 2 and 3 asked for device ordinals that did not exist.",
    established_by="the maintainer's answer: nproc_per_node must equal the number of visible GPUs",
    mechanism="more local ranks than visible GPUs -> cudaSetDevice(local_rank) out of range",
    expect_signatures=["CUDA-INVALID-DEVICE-ORDINAL"],
    fabric_at_fault=False,
    notes="the issue title (the trailing Chinese question is part of the title)",
)
log(
    "[2025-09-09 23:51:24] 9b405963aa12:774:854 [0] transport/shm.cc:590 NCCL WARN Cuda failure 217 'peer access "
    "is not supported between these two devices'\n",
    id="nccl-1838-cumem-host-no-p2p",
    file="nccl-1838-cumem-host-no-p2p.log",
    url="https://github.com/NVIDIA/nccl/issues/1838",
    cause="NCCL 2.27's cuMem-based host memory sharing in the SHM transport needed peer access that PCIe L4 GPUs "
    "without P2P do not have; with NCCL_CUMEM_HOST_ENABLE=0 the same test passes.",
    established_by="the reporter's A/B (NCCL_CUMEM_HOST_ENABLE=0 passes); issue closed by the NCCL team",
    mechanism="NCCL release behaviour: cuMem host sharing requires P2P between the two GPUs",
    expect_signatures=["NCCL-CUDA-FAILURE", "CUDA-PEER-ACCESS-UNSUPPORTED"],
    fabric_at_fault=False,
)
log(
    "free(): corrupted unsorted chunks\n"
    "[rack1-93-slot7:186363] *** Process received signal ***\n"
    "free(): corrupted unsorted chunks\n"
    "[rack1-93-slot7:186363] Signal: Aborted (6)\n"
    "[rack1-93-slot7:186363] Signal code:  (-6)\n",
    id="nccl-1611-gb200-nccl-too-old",
    file="nccl-1611-gb200-nccl-too-old.log",
    url="https://github.com/NVIDIA/nccl/issues/1611",
    cause="nccl-tests on GB200 with NCCL 2.21.5 crashed on 10-12 nodes; GB200/Blackwell support arrived in NCCL "
    "2.25.1.",
    established_by="NCCL maintainer (AddyLaddy): GB200 officially supported from 2.25.1, update first; the "
    "reporter: 'NCCL 2.25.1 is ok!'",
    mechanism="NCCL release too old for the GPU/platform",
    expect_signatures=[],
    fabric_at_fault=False,
)

# ---------------------------------------------------------------- memory registration
log(
    "[2025-06-16 17:17:39] kilo:318:3584 [5] misc/ibvwrap.cc:183 NCCL WARN Call to ibv_reg_dmabuf_mr failed with "
    "error Cannot allocate memory\n"
    "ERROR 06-13 07:35:59 [core.py:517] cupy_backends.cuda.libs.nccl.NcclError: NCCL_ERROR_SYSTEM_ERROR: unhandled "
    "system error (run with NCCL_DEBUG=INFO for details)\n",
    id="vllm-19613-dmabuf-enomem-buffsize",
    file="vllm-19613-dmabuf-enomem-buffsize.log",
    url="https://github.com/vllm-project/vllm/issues/19613",
    cause="NCCL_BUFFSIZE was set too large; buffer registration failed (ibv_reg_dmabuf_mr ENOMEM) and NCCL init "
    "raised a system error. With the default NCCL_BUFFSIZE it worked. Not memlock, not missing DMA-BUF support.",
    established_by="the reporter's verified fix: 'NCCL_BUFFSIZE ... set too large. Using the default value made the "
    "issue go away'",
    mechanism="registration of oversized NCCL buffers fails with ENOMEM",
    expect_signatures=["IBV-REG-DMABUF-ERRNO", "NCCL-ERR-2"],
    fabric_at_fault=False,
    notes="two lines quoted from two runs in the thread (different dates), kept in the thread's order",
)

# ---------------------------------------------------------------- shared memory / IPC
log(
    "fastmoe: Test NCCL failure common.cu:777 'unhandled system error'\n"
    "RuntimeError: NCCL Error 2: unhandled system error\n",
    id="nccl-473-docker-no-ipc-host",
    file="nccl-473-docker-no-ipc-host.log",
    url="https://github.com/NVIDIA/nccl/issues/473",
    cause="nccl-tests in a docker container started without --ipc=host: NCCL's SHM transport could not create its "
    "segments in the default 64 MB /dev/shm and init failed with 'unhandled system error'.",
    established_by="the reporter's verified fix: after running docker with --ipc=host the error disappeared",
    mechanism="/dev/shm too small in the container for NCCL's SHM segments",
    expect_signatures=["NCCL-ERR-2"],
    fabric_at_fault=False,
    notes="two blocks from the thread",
)
log(
    "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:825, unhandled system error, NCCL "
    "version 2.7.8\n"
    "ncclSystemError: System call (socket, malloc, munmap, etc) failed.\n",
    id="dekr-18-docker-ipc-host",
    file="dekr-18-docker-ipc-host.log",
    url="https://github.com/HRNet/DEKR/issues/18",
    cause="Multi-GPU training in a docker container without --ipc=host: NCCL's shared-memory setup failed in the "
    "64 MB /dev/shm; adding --ipc=host fixed it.",
    established_by="the verified fix in the thread (docker --ipc=host)",
    mechanism="/dev/shm too small in the container",
    expect_signatures=["NCCL-ERR-2"],
    fabric_at_fault=False,
    notes="the first line is a '> ' block quote in the issue; the quote marker is left out",
)
log(
    "Error while creating shared memory segment /dev/shm/nccl-pZafXL (size 7340384)\n",
    id="video-diffusion-speedrun-2-shm",
    file="video-diffusion-speedrun-2-shm.log",
    url="https://github.com/fal-ai-community/video-diffusion-speedrun/issues/2",
    cause="The repo's documented docker run left /dev/shm at docker's default; NCCL could not create its shared "
    "memory segment.",
    established_by="the reporter's verified fix: adding --shm-size=1g to docker run",
    mechanism="/dev/shm too small for NCCL SHM transport",
    expect_signatures=["NCCL-SHM-SEGMENT"],
    fabric_at_fault=False,
)
log(
    "mm_iface failed to allocate receive FIFO\n...\n[ucp_address_unpack] Caught signal 11 (Segmentation fault)\n",
    id="ai-cloud-validation-643-ucx-shm-k8s",
    file="ai-cloud-validation-643-ucx-shm-k8s.log",
    url="https://github.com/NVIDIA/ai-cloud-validation/issues/643",
    cause="The Kubernetes Job's pods had no /dev/shm volume (container default); with 8 ranks per pod UCX's "
    "shared-memory transport could not allocate its receive FIFO and the run crashed.",
    established_by="the reporter's A/B in the issue (the same job passes once a memory-backed /dev/shm is mounted)",
    mechanism="UCX posix/sysv shared memory transport out of /dev/shm in a pod",
    expect_signatures=["UCX-SHM-NOSPACE"],
    fabric_at_fault=False,
    notes="'...' is the thread's own elision",
)
log(
    "RuntimeError: DataLoader worker (pid 729) is killed by signal: Bus error. It is possible that dataloader's "
    "workers are out of shared memory. Please try to raise your shared memory limit.\n"
    "Traceback (most recent call last):\n"
    '  File "/srv/hops/anaconda/envs/hopsworks_environment/lib/python3.10/multiprocessing/queues.py", line 244, '
    "in _feed\n"
    "    obj = _ForkingPickler.dumps(obj)\n"
    '  File "/srv/hops/anaconda/envs/hopsworks_environment/lib/python3.10/multiprocessing/reduction.py", line 51, '
    "in dumps\n"
    "    cls(buf, protocol).dump(obj)\n"
    '  File "/srv/hops/anaconda/envs/hopsworks_environment/lib/python3.10/site-packages/torch/multiprocessing/'
    'reductions.py", line 618, in reduce_storage\n'
    "    fd, size = storage._share_fd_cpu_()\n"
    '  File "/srv/hops/anaconda/envs/hopsworks_environment/lib/python3.10/site-packages/torch/storage.py", '
    "line 451, in wrapper\n"
    "    return fn(self, *args, **kwargs)\n"
    '  File "/srv/hops/anaconda/envs/hopsworks_environment/lib/python3.10/site-packages/torch/storage.py", '
    "line 526, in _share_fd_cpu_\n"
    "    return super()._share_fd_cpu_(*args, **kwargs)\n"
    "RuntimeError: unable to write to file </torch_739_144252761_4>: No space left on device (28)\n",
    id="hopsworks-1557-dataloader-shm",
    file="hopsworks-1557-dataloader-shm.log",
    url="https://github.com/logicalclocks/hopsworks/issues/1557",
    cause="PyTorch DataLoader workers ran out of the container's default 64 MB /dev/shm (ENOSPC writing the shared "
    "tensor file), killing a worker with SIGBUS.",
    established_by="the issue's analysis (ENOSPC on the /dev/shm file; default 64M shm in the pod) and the request "
    "to make /dev/shm configurable, closed by the maintainers",
    mechanism="DataLoader IPC through a too-small /dev/shm",
    expect_signatures=["DATALOADER-SHM"],
    fabric_at_fault=False,
)

# ---------------------------------------------------------------- sockets / Gloo
log(
    "[<some path>/gloo/gloo/transport/tcp/pair.cc:761] connect [127.0.1.1]:60817: Connection refused\n",
    id="gloo-223-hostname-127-0-1-1",
    file="gloo-223-hostname-127-0-1-1.log",
    url="https://github.com/pytorch/gloo/issues/223",
    cause="The host name resolved to 127.0.1.1 (Debian/Ubuntu /etc/hosts), so Gloo bound and advertised a loopback "
    "address; remote ranks connected to their own loopback and were refused.",
    established_by="Gloo maintainer (pietern): Gloo resolves the hostname, here to 127.0.1.1; override with the "
    "interface name (--tcp-device)",
    mechanism="Gloo device address from the host name -> 127.0.1.1",
    expect_signatures=[],
    fabric_at_fault=False,
    notes="'<some path>' is the thread's own redaction",
)

# ---------------------------------------------------------------- EFA
log(
    "FI_EFA_USE_DEVICE_RDMA=1 was set by user, but EFA device has no rdma-read capability.  Application will "
    "abort().\n",
    id="aws-ofi-nccl-981-efa-no-rdma-read",
    file="aws-ofi-nccl-981-efa-no-rdma-read.log",
    url="https://github.com/aws/aws-ofi-nccl/issues/981",
    cause="FI_EFA_USE_DEVICE_RDMA=1 was set on an instance whose EFA device has no RDMA read; libfabric (since "
    "ofiwg/libfabric PR 8661) aborts instead of ignoring the setting.",
    established_by="the thread's explanation: the abort is libfabric's check added in ofiwg/libfabric PR 8661; the "
    "instance's EFA (Nitro v3) has no rdma-read",
    mechanism="user forces EFA device RDMA on hardware without rdma-read",
    expect_signatures=[],
    fabric_at_fault=False,
)

# ---------------------------------------------------------------- more registration / limits, driver, EFA
log(
    "[0] DAPL startup: RLIMIT_MEMLOCK too small\n[1] DAPL startup: RLIMIT_MEMLOCK too small\n",
    id="fds-6023-torque-memlock-64k",
    file="fds-6023-torque-memlock-64k.log",
    url="https://github.com/firemodels/fds/issues/6023",
    cause="Jobs started by Torque's pbs_mom inherited a 64 KiB max-locked-memory limit (limits.conf is applied to "
    "logins, not to the daemon's children), so Intel MPI's DAPL/RDMA startup refused to run.",
    established_by="the reporter's measurement (ulimit -l is unlimited in a shell but 64 inside the job script) "
    "and the FDS maintainer's answer: raise the limits in the pbs_mom startup script (ulimit -l unlimited)",
    mechanism="RLIMIT_MEMLOCK too small in batch jobs (resource manager daemon's limit inherited)",
    expect_signatures=[],
    fabric_at_fault=False,
)
log(
    "docker: Error response from daemon: failed to create shim task: OCI runtime create failed: runc create failed: "
    "unable to start container process: error during container init: error running hook #0: error running hook: "
    "exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"
    "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared object "
    "file: no such file or directory: unknown.\n",
    id="docker-wechat-173-no-host-driver",
    file="docker-wechat-173-no-host-driver.log",
    url="https://github.com/huan/docker-wechat/issues/173",
    cause="The host had no NVIDIA driver installed, so the NVIDIA container runtime hook could not load the driver's "
    "libnvidia-ml.so.1 and container creation with GPUs failed.",
    established_by="the commenter's own diagnosis and fix in the thread (installing the NVIDIA driver/CUDA on the "
    "host solved it)",
    mechanism="GPU container requested on a host without the NVIDIA driver user-space libraries",
    expect_signatures=["LD-LIB-NOT-FOUND"],
    fabric_at_fault=False,
    notes="a comment's block in the issue (the issue itself is about a different error)",
)
log(
    "[1,13]<stdout>:nccl-tests-worker-1:35:89 [5] ofi_process_cq:1039 NCCL WARN NET/OFI Request 0x7fbb944701b8 "
    "completed with error. RC: 20. Error: unknown error. Completed length: 0, Request: { buffer_index: 255, dev: 1, "
    "size: 0, state: CREATED, direction: SEND }\n"
    "[1,13]<stderr>:libfabric:35:1668017255::efa:cq:rxr_cq_write_tx_error():243<warn> rxr_cq_write_tx_error: err: "
    "20, prov_err: Not a directory (20)\n",
    id="aws-ofi-nccl-156-efa-security-group",
    file="aws-ofi-nccl-156-efa-security-group.log",
    url="https://github.com/aws/aws-ofi-nccl/issues/156",
    cause="The EC2 instances' security group did not allow all inbound and outbound traffic to itself, which EFA "
    "requires; EFA sends between the MPIJob's workers failed.",
    established_by="the maintainer (wzamazon) asked to check the security group; the reporter: 'That was indeed "
    "the issue'",
    mechanism="EFA traffic blocked by the security group (no self-referencing all-traffic rules)",
    expect_signatures=["AWS-OFI-ERROR"],
    fabric_at_fault=False,
    notes="the issue quotes the two lines as one inline-code span; the enclosing backticks are left out",
)

log(
    "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n"
    "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.\n",
    id="pytorch-167244-wheel-without-sm120",
    file="pytorch-167244-wheel-without-sm120.log",
    url="https://github.com/pytorch/pytorch/issues/167244",
    cause="The installed PyTorch wheel (cu124 nightly) was compiled only up to sm_90; the RTX 5090 (sm_120) has no "
    "kernels in it, so the first CUDA kernel launch fails. Wheels built with CUDA 12.8+ include sm_120.",
    established_by="PyTorch's own warning in the log naming the GPU's sm_120 and the architectures the build "
    "supports; the cu128+ builds' arch list includes 12.0 (PyTorch build matrix)",
    mechanism="framework build lacks kernels for the GPU architecture (image/wheel vs GPU mismatch)",
    expect_signatures=["CUDA-RUNTIME-ERROR"],
    fabric_at_fault=False,
    notes="the issue's lines; its prose 'PyTorch prints:' lines between them left out",
)
log(
    "(corgs) **********DS3H:CoR-GS$ bash scripts/run_360.sh \n"
    "[500, 2000, 3000, 5000, 7000, 10000, 15000, 30000]\n"
    "Traceback (most recent call last):\n"
    '  File "train.py", line 469, in <module>\n'
    "    safe_state(args.quiet)\n"
    '  File "./exp/CoR-GS/utils/general_utils.py", line 139, in safe_state\n'
    '    torch.cuda.set_device(torch.device("cuda:0"))\n'
    '  File "./.local/lib/python3.8/site-packages/torch/cuda/__init__.py", line 399, in set_device\n'
    "    torch._C._cuda_setDevice(device)\n"
    '  File "./.local/lib/python3.8/site-packages/torch/cuda/__init__.py", line 293, in _lazy_init\n'
    "    torch._C._cuda_init()\n"
    "RuntimeError: No CUDA GPUs are available\n",
    id="cor-gs-23-empty-cuda-visible-devices",
    file="cor-gs-23-empty-cuda-visible-devices.log",
    url="https://github.com/jiaw-z/CoR-GS/issues/23",
    cause="scripts/run_360.sh does `export CUDA_VISIBLE_DEVICES=$1` and was run without arguments, so "
    "CUDA_VISIBLE_DEVICES was set to the empty string and hid every GPU from the process.",
    established_by="the script's first line in the repository (export CUDA_VISIBLE_DEVICES=$1) together with the "
    "command in the log (no arguments); the reporter's workaround (CUDA_VISIBLE_DEVICES='0') made it work",
    mechanism="CUDA_VISIBLE_DEVICES set to an empty value hides all GPUs",
    expect_signatures=["CUDA-NO-DEVICE"],
    fabric_at_fault=False,
    notes="the issue quotes the block as one inline-code span; the enclosing backticks are left out; the "
    "asterisks are the reporter's own redaction",
)

log(
    "RuntimeError: cuda runtime error (10) : invalid device ordinal at /pytorch/torch/csrc/cuda/Module.cpp:33\n"
    "THCudaCheck FAIL file=/pytorch/torch/csrc/cuda/Module.cpp line=33 error=10 : invalid device ordinal\n"
    "Traceback (most recent call last):\n"
    '  File "tools/train.py", line 289, in <module>\n'
    "    main()\n"
    '  File "tools/train.py", line 98, in main\n'
    "    torch.cuda.set_device(args.local_rank)\n"
    '  File "/home/qfy/.conda/envs/HRnets-torch1.1/lib/python3.6/site-packages/torch/cuda/__init__.py", line 265, '
    "in set_device\n"
    "    torch._C._cuda_setDevice(device)\n",
    id="hrnet-seg-171-nproc-exceeds-gpus",
    file="hrnet-seg-171-nproc-exceeds-gpus.log",
    url="https://github.com/HRNet/HRNet-Semantic-Segmentation/issues/171",
    cause="torch.distributed.launch was started with more processes per node (--nproc_per_node) than the 3 visible "
    "GPUs; the extra local ranks called cuda.set_device(local_rank) on ordinals that do not exist.",
    established_by="the reporter's verified fix: '--nproc_per_node parameter is the number of GPUs. I set it "
    "wrong'; CUDA_VISIBLE_DEVICES=0,1,2 with --nproc_per_node=3 works",
    mechanism="more local ranks than visible GPUs -> cudaSetDevice(local_rank) out of range",
    expect_signatures=["CUDA-INVALID-DEVICE-ORDINAL"],
    fabric_at_fault=False,
)
log(
    "THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch_1595629403081/work/torch/csrc/cuda/Module.cpp line=59 "
    "error=101 : invalid device ordinal\n",
    id="nvidia-semseg-68-recipe-for-8-gpus",
    file="nvidia-semseg-68-recipe-for-8-gpus.log",
    url="https://github.com/NVIDIA/semantic-segmentation/issues/68",
    cause="The evaluation recipe launches --nproc_per_node=8 (written for an 8-GPU system) on a machine with fewer "
    "GPUs; ranks beyond the GPU count ask for device ordinals that do not exist.",
    established_by="the maintainer (ajtao): the yml recipe uses --nproc_per_node=8 for an 8-GPU system; adjust for "
    "fewer GPUs",
    mechanism="more local ranks than visible GPUs -> invalid device ordinal",
    expect_signatures=["CUDA-INVALID-DEVICE-ORDINAL"],
    fabric_at_fault=False,
    notes="the issue quotes the line in double quotes; the quotes are left out",
)

log(
    "$ /usr/lib/wsl/lib/nvidia-smi\n"
    "Failed to initialize NVML: GPU access blocked by the operating system\n"
    "Failed to properly shut down NVML: GPU access blocked by the operating system\n",
    id="dxgkrnl-dkms-7-gpu-pv-missing-driver-files",
    file="dxgkrnl-dkms-7-gpu-pv-missing-driver-files.log",
    url="https://github.com/staralt/dxgkrnl-dkms/issues/7",
    cause="In a Hyper-V GPU-paravirtualized Linux VM (dxgkrnl) not all of the Windows host driver's user-space files "
    "had been copied into the guest (the D3D12/driver libraries are no longer under System32\\lxss\\lib), so NVML "
    "could not open the GPU through the paravirtual interface.",
    established_by="the reporter's fix (copying the host GPU driver files with the Copy-HostGPUDriverToUbuntu/"
    "install-gpu scripts made it work) and the maintainer's confirmation of which libraries had moved",
    mechanism="GPU-PV guest missing the host driver's user-space libraries",
    expect_signatures=[],
    fabric_at_fault=False,
)

log(
    "e66aa18dc444:3171:3171 [0] misc/ibvwrap.cu:61 WARN Failed to open libibverbs.so[.1]\n"
    "e66aa18dc444:3171:3171 [0] include/socket.h:311 WARN Socket creation failed : Address family not supported by "
    "protocol\n"
    "NCCL failure common.cu:874 'unhandled system error'\n",
    id="nccl-tests-14-container-no-ip-interface",
    file="nccl-tests-14-container-no-ip-interface.log",
    url="https://github.com/NVIDIA/nccl-tests/issues/14",
    cause="Inside the docker container NCCL found no usable IP interface for its bootstrap socket (the socket "
    "creation failed), so ncclGetUniqueId failed; running the container with the host's network (--net host) fixed "
    "it. The libibverbs warning is incidental (no IB in use).",
    established_by="NCCL maintainer (sjeaugey): the second WARN is printed when NCCL finds no usable IP interface, "
    "the first is to be ignored unless IB/RoCE is wanted; the reporter: '--net host ... solved the problem'",
    mechanism="no usable IP interface for NCCL bootstrap in the container's network namespace",
    expect_signatures=["NCCL-BOOTSTRAP-SOCKET", "NCCL-ERR-2"],
    fabric_at_fault=False,
    notes="the two WARN lines from a comment, then the failure line from the description (it precedes them in the "
    "thread but follows them in the run); the description's enclosing double quote is left out",
)

# ---------------------------------------------------------------- negatives (noise from jobs that worked)
log(
    " NCCL INFO NET/Plugin: Failed to find ncclNetPlugin_v8 symbol.\n"
    " NCCL INFO NET/Plugin: Failed to find ncclNetPlugin symbol (>= v5). ncclNetPlugin symbols v4 and lower are not "
    "supported.\n"
    "NCCL INFO cudaDriverVersion 12040\n"
    "NCCL version 2.20.3+cuda12.4\n",
    id="nccl-1292-plugin-symbol-info-noise",
    file="nccl-1292-plugin-symbol-info-noise.log",
    url="https://github.com/NVIDIA/nccl/issues/1292",
    cause="Not a failure: NCCL probing a net plugin's symbol versions logs these INFO lines; the reporter's problem "
    "lay elsewhere.",
    established_by="NCCL maintainer (kiskra) in the thread: these messages are informational, not an error",
    mechanism="informational plugin-probe lines",
    expect_signatures=[],
    fabric_at_fault=False,
    negative=True,
    notes="NEGATIVE: nothing here should be diagnosed",
)
log(
    "$ mpirun -n 2 --mca pml ob1 --mca btl sm,self --mca smsc xpmem osu_bcast -m 1\n"
    "[1668693503.473099] [ampere:1188443:0]          ib_log.c:246  UCX  ERROR mlx5_0: ibv_create_cq() failed: "
    "Cannot allocate memory. Please set max locked memory (ulimit -l) to 'unlimited' (current: 64 kbytes)\n"
    "[1668693503.473424] [ampere:1188442:0]          ib_log.c:246  UCX  ERROR mlx5_0: ibv_create_cq() failed: "
    "Cannot allocate memory. Please set max locked memory (ulimit -l) to 'unlimited' (current: 64 kbytes)\n"
    "\n"
    "# OSU MPI Broadcast Latency Test v5.8\n"
    "# Size       Avg Latency(us)\n"
    "1                       0.23\n",
    id="ucx-8684-cq-memlock-noise",
    file="ucx-8684-cq-memlock-noise.log",
    url="https://github.com/openucx/ucx/issues/8684",
    cause="Not a failure of this job: the single-node run used only sm/self/xpmem and completed; UCX, loaded "
    "anyway, probed an mlx5 device whose port is down and printed a CQ error. The issue (labelled Bug) is that UCX "
    "prints such errors for devices the user never asked for.",
    established_by="the reporter's output (the benchmark completes) and ibstat (port Down); UCX labelled it a bug "
    "in its messages",
    mechanism="noise: UCX device probe errors in a job that does not use the device",
    expect_signatures=[],
    fabric_at_fault=False,
    negative=True,
    notes="NEGATIVE: a block from the thread (comment 2); spacing as quoted",
)
log(
    "2024-05-22 06:25:20.552227-04:00 Error From <host>: [W socket.cpp:436] [c10d] The server socket cannot be "
    "initialized on [::]:22010 (errno: 97 - Address family not supported by protocol).\n",
    id="pytorch-128998-ipv6-listen-noise",
    file="pytorch-128998-ipv6-listen-noise.log",
    url="https://github.com/pytorch/pytorch/issues/128998",
    cause="Not a failure: training proceeded; c10d tries every address getaddrinfo returns and warns for the IPv6 "
    "one the host cannot use even though the IPv4 listen succeeded.",
    established_by="the reporter ('training proceeds correctly') with the socket.cpp logic identified; triaged by "
    "the PyTorch distributed team",
    mechanism="noise: spurious c10d warning for an unsupported address family",
    expect_signatures=[],
    fabric_at_fault=False,
    negative=True,
    notes="NEGATIVE; '<host>' is the thread's own redaction",
)
log(
    "test_daso (heat.optim.tests.test_dp_optimizer.TestDASO) ... [W socket.cpp:401] [c10d] The server socket "
    "cannot be initialized on [::]:29500 (errno: 97 - Address family not supported by protocol).\n"
    "[W socket.cpp:558] [c10d] The client socket cannot be initialized to connect to [localhost]:29500 (errno: 97 "
    "- Address family not supported by protocol).\n"
    "[W socket.cpp:558] [c10d] The client socket cannot be initialized to connect to [localhost]:29500 (errno: 97 "
    "- Address family not supported by protocol).\n",
    id="heat-1003-ipv6-socket-noise",
    file="heat-1003-ipv6-socket-noise.log",
    url="https://github.com/helmholtz-analytics/heat/issues/1003",
    cause="Not a failure: the tests pass; c10d warns about IPv6 attempts on a host without IPv6 and then connects "
    "over IPv4.",
    established_by="the issue author's (maintainer's) edit: 'tests do not fail, just a ton of warnings'",
    mechanism="noise: c10d IPv6 warnings",
    expect_signatures=[],
    fabric_at_fault=False,
    negative=True,
    notes="NEGATIVE; the first three lines of the quoted block",
)

log(
    "h0913n-ubuntu:12877:12877 [0] NCCL INFO Bootstrap : Using [0]enp0s31f6:192.168.97.149<0>\n"
    "h0913n-ubuntu:12877:12877 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so).\n"
    "\n"
    "h0913n-ubuntu:12877:12877 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
    "h0913n-ubuntu:12877:12877 [0] NCCL INFO NET/Socket : Using [0]enp0s31f6:192.168.97.149<0>\n"
    "NCCL version 2.4.8+cuda10.1\n"
    "h0913n-ubuntu:12877:12877 [7] NCCL INFO nranks 8\n",
    id="nccl-259-no-plugin-no-verbs-single-node-noise",
    file="nccl-259-no-plugin-no-verbs-single-node-noise.log",
    url="https://github.com/NVIDIA/nccl/issues/259",
    cause="Not a failure: a single-node nccl-tests run on a machine without InfiniBand; 'No plugin found' and "
    "'Failed to open libibverbs.so' only say NCCL uses its internal transports (sockets between nodes, irrelevant on "
    "one node). The test's results were normal.",
    established_by="NCCL developers (kwen2501: 'just for information purpose rather than reporting an error'; "
    "sjeaugey: the error column values are normal, 'Out of bounds values : 0 OK')",
    mechanism="noise: informational plugin/verbs probe on a node without IB",
    expect_signatures=[],
    fabric_at_fault=False,
    negative=True,
    notes="NEGATIVE; the NCCL lines of the issue's block (the nccl-tests device table above them left out)",
)

log(
    " [0] NCCL INFO NET/OFI Could not disable CUDA API usage for HMEM, disabling GDR\n"
    ' [0] NCCL INFO NET/OFI Setting NCCL_PROTO to "simple"\n'
    "[0] NCCL INFO NET/OFI Could not disable CUDA API usage for HMEM, disabling GDR\n"
    '[0] NCCL INFO NET/OFI Setting NCCL_PROTO to "simple"\n'
    "[0] NCCL INFO DMA-BUF is available on GPU device 0\n"
    "[0] NCCL INFO DMA-BUF is available on GPU device 0\n"
    "[0] NCCL INFO comm 0x2515e00 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1e0 commId 0x1c71981584deedae - Init "
    "START\n"
    "[0] NCCL INFO comm 0x2b049f0 rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId 1e0 commId 0x1c71981584deedae - Init "
    "START\n",
    id="nccl-tests-245-dmabuf-probe-gdr-off-noise",
    file="nccl-tests-245-dmabuf-probe-gdr-off-noise.log",
    url="https://github.com/NVIDIA/nccl-tests/issues/245",
    cause="Not a failure: a 2-node nccl-tests run on A10G nodes over EFA, where the AWS plugin runs without GPUDirect "
    "RDMA; 'DMA-BUF is available on GPU device 0' is a generic capability probe NCCL always does at init, whatever "
    "the network path.",
    established_by="NCCL maintainer (kiskra-nvidia): 'It's a generic test that's always done during "
    "initialization, irrespective of the communication layer used or its configuration.'",
    mechanism="noise: informational GDR/DMA-BUF init messages in a working run without GDR",
    expect_signatures=[],
    fabric_at_fault=False,
    negative=True,
    notes="NEGATIVE; the first eight lines of the issue's block (leading spaces as quoted)",
)


README_HEAD = """# Sealed real-log set #2: verbatim excerpts from public threads

Each file holds lines copied from the public thread named in index.json (`url`), trimmed to the lines that matter;
lines are not edited (a thread's own `...` elisions and redactions such as `<host>` or `**********` are kept as
quoted). `notes` in index.json says where an excerpt is a title, an inline quote, a block quote whose marker was
dropped, or blocks put in log order. The files carry no header on purpose. Entries with `negative: true` are noise
from runs that worked: nothing in them should be diagnosed (`expect_signatures` is empty).

Every source was checked on 2026-12-07 against `git -C /work/main grep`, /work/shared and /work/sealed (owner/repo
plus issue/PR number in any of the usual forms): none appears there.

| file | source | cause established by |
|---|---|---|
"""


def write_readme() -> None:
    rows = []
    for e in LOGS:
        est = e["established_by"].replace("|", "/").replace("\n", " ")
        neg = " (negative)" if e.get("negative") else ""
        rows.append(f"| {e['file']}{neg} | {e['url']} | {est} |")
    with open(os.path.join(HERE, "logs", "README.md"), "w", encoding="utf-8") as fh:
        fh.write(README_HEAD + "\n".join(rows) + "\n")


def main() -> None:
    ids = [e["id"] for e in LOGS]
    assert len(ids) == len(set(ids))
    os.makedirs(os.path.join(HERE, "logs"), exist_ok=True)
    for e in LOGS:
        with open(os.path.join(HERE, "logs", e["file"]), "w", encoding="utf-8") as fh:
            fh.write(TEXT[e["file"]])
    with open(os.path.join(HERE, "logs", "index.json"), "w", encoding="utf-8") as fh:
        json.dump(LOGS, fh, indent=1, ensure_ascii=False)
    write_readme()
    print(len(LOGS), "logs indexed,", sum(1 for e in LOGS if e["negative"]), "negative")


if __name__ == "__main__":
    main()
