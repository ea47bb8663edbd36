"""Build /work/sealed5/logs/: one file per verbatim log excerpt plus logs/index.json and logs/README.md.

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


# ---------------------------------------------------------------- CUDA driver / libraries in containers
log(
    '$ python -c "import torch; print(torch.cuda.is_available())"\n'
    "/usr/local/lib/python3.8/dist-packages/torch/cuda/__init__.py:83: UserWarning: CUDA initialization: Unexpected "
    "error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have "
    "already set an error? Error 34: CUDA driver is a stub library (Triggered internally at  "
    "../c10/cuda/CUDAFunctions.cpp:109.)\n"
    "  return torch._C._cuda_getDeviceCount() > 0\n"
    "False\n",
    id="stable-diffusion-docker-22-cuda-stub-library",
    url="https://github.com/fboulnois/stable-diffusion-docker/issues/22",
    cause="The image (FROM tensorflow latest-gpu) had /usr/local/cuda/lib64/stubs ahead of the driver's libcuda.so.1, "
    "so torch loaded the toolkit's stub libcuda.so.",
    established_by="maintainer's merged fix (PR 23 'Remove CUDA stubs to prevent errors', resolves #22 and #13); "
    "#13's reporter had verified that deleting the stubs directory fixed CUDA",
    mechanism="CUDA stub libcuda on the image's loader path ahead of the injected driver -> Error 34",
    expect_signatures=["CUDA-RUNTIME-ERROR"],
    expect_causes=["stub-libcuda"],
    notes="the reporter's shell block from the comment of 2022-10-12, unchanged",
)
log(
    "/sd-cli: error while loading shared libraries: libcuda.so.1: cannot open shared object file: No such file or "
    "directory\n",
    id="stable-diffusion-cpp-1352-libcuda-missing-without-gpus",
    url="https://github.com/leejet/stable-diffusion.cpp/issues/1352",
    cause="The CUDA image was started with `docker run -it --rm ghcr.io/leejet/stable-diffusion.cpp:master-cuda` "
    "without --gpus, so the host driver's libcuda.so.1 was not injected.",
    established_by="reporter's verified fix: 'Not a bug. I just needed to add --gpus all when running the image.'",
    mechanism="container started without a GPU request -> driver library not mounted -> loader error",
    expect_signatures=["LD-LIB-NOT-FOUND"],
    expect_causes=["driver-not-in-container"],
    notes="the error block of the issue, unchanged",
)
log(
    "+ nvidia-smi\n"
    "/__w/_temp/e57682ae-6d73-4df9-b0fd-fc623ab194cc.sh: line 1: nvidia-smi: command not found\n"
    "##[error]Process completed with exit code 127.\n",
    id="cuda-python-2724-ci-container-no-nvidia-visible-devices",
    url="https://github.com/NVIDIA/cuda-python/issues/2724",
    cause="The GPU CI job's container had no NVIDIA_VISIBLE_DEVICES, so the nvidia-container-runtime hook mounted no "
    "driver libraries or tools; nvidia-smi did not exist in the container (the runner had an L4 attached).",
    established_by="maintainers' root-cause analysis in the issue (P1 bug, closed)",
    mechanism="GPU container started without NVIDIA_VISIBLE_DEVICES -> nothing injected -> nvidia-smi not found",
    expect_signatures=[],
    notes="the symptom block from the issue, unchanged; no signature covers 'nvidia-smi: command not found' "
    "(CUDA-NO-DEVICE's cause no-gpu-in-container describes the mechanism but not this message)",
)
log(
    "$ nvidia-smi\n"
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA "
    "driver is installed and running.\n",
    id="gcp-compute-gpu-installation-18-driver-gone-after-kernel-upgrade",
    url="https://github.com/GoogleCloudPlatform/compute-gpu-installation/pull/18",
    cause="After an automatic kernel upgrade the installed NVIDIA driver had no kernel module for the new kernel (dkms "
    "was not installed before the upgrade).",
    established_by="merged PR by the maintainers; the reviewer confirms the DKMS-before-upgrade cause",
    mechanism="kernel upgraded without a rebuilt NVIDIA module -> driver not loaded",
    expect_signatures=[],
    notes="the shell block of the PR description, unchanged; no signature covers this nvidia-smi message",
)
log(
    '    "component": "accelerator-nvidia-fabric-manager",\n'
    '    "states": [\n'
    "      {\n"
    '        "time": "2025-11-20T04:46:02Z",\n'
    '        "component": "accelerator-nvidia-fabric-manager",\n'
    '        "name": "accelerator-nvidia-fabric-manager",\n'
    '        "health": "Unhealthy",\n'
    '        "reason": "NVIDIA-H100-80GB-HBM3 checked fabric state; fabric manager found but not active",\n'
    '        "extra_info": {\n'
    '          "data": "{\\"fabric_manager_active\\":false,\\"fabric_state_supported\\":true,\\"\n',
    id="gpud-1151-h100-fabric-manager-not-active",
    url="https://github.com/leptonai/gpud/pull/1151",
    cause="Fabric Manager installed but not active on an H100 80GB HBM3 (NVSwitch) node; after restarting it the node "
    "was healthy.",
    established_by="merged PR by the gpud maintainer with before/after output (healthy after restart)",
    mechanism="Fabric Manager not running on an NVSwitch node (health-checker output)",
    expect_signatures=[],
    notes="the 'fixed via alpha.12' JSON block of the PR description, unchanged up to where the thread's block is "
    "cut; a node health-checker's output, not a job log; no signature covers it",
)

# ---------------------------------------------------------------- shared memory (containers)
log(
    'Thread 787 "imagenet_fake_d" received signal SIGBUS, Bus error.\n'
    "[Switching to Thread 0x7f45d7dff640 (LWP 3925)]\n"
    "0x00007f6b59544f3b in ncclShmOpen(char*, unsigned long, void**, void**, int, void**) () from "
    "/usr/local/lib/python3.10/dist-packages/jaxlib/xla_extension.so\n"
    "(gdb) bt\n"
    "#0 0x00007f6b59544f3b in ncclShmOpen(char*, unsigned long, void**, void**, int, void**) ()\n"
    "  from /usr/local/lib/python3.10/dist-packages/jaxlib/xla_extension.so\n"
    "#1 0x00007f6b595436d7 in ncclProxyService(void*) ()\n"
    "  from /usr/local/lib/python3.10/dist-packages/jaxlib/xla_extension.so\n"
    "#2 0x00007f6b5e7adb43 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442\n"
    "#3 0x00007f6b5e83ebb4 in clone () at ../sysdeps/unix/sysv/linux/x86_64/clone.S:100\n",
    id="jax-toolbox-183-ncclshmopen-sigbus-small-shm",
    url="https://github.com/NVIDIA/JAX-Toolbox/issues/183",
    cause="The JAX container was started without a larger /dev/shm; NCCL's shared-memory segment could not be backed "
    "and the proxy thread got SIGBUS in ncclShmOpen.",
    established_by="issue filed by a JAX-Toolbox maintainer: 'Something like --shm-size=1g will help to avoid errors "
    "such as' this trace (closed with the container warning)",
    mechanism="container /dev/shm too small -> SIGBUS touching NCCL's shm segment",
    expect_signatures=["RANK-CRASH", "NCCL-SHM-SEGMENT"],
    expect_causes=["dev-shm-sigbus", "dev-shm-too-small"],
    notes="the gdb block of the issue, unchanged",
)
log(
    "[8d6bf97c3bf4:3039 :0:3095] Caught signal 7 (Bus error: nonexistent physical address)\n"
    "==== backtrace (tid:   3095) ====\n"
    " 0 0x0000000000043090 killpg()  ???:0\n"
    " 1 0x000000000018bb41 __nss_database_lookup()  ???:0\n"
    " 2 0x000000000007587d ncclGroupEnd()  ???:0\n"
    " 3 0x000000000007b0ef ncclGroupEnd()  ???:0\n"
    " 4 0x0000000000059e97 ncclGetUniqueId()  ???:0\n"
    " 5 0x00000000000489b1 ???()  /usr/lib/x86_64-linux-gnu/libnccl.so.2:0\n"
    " 6 0x000000000004a655 ???()  /usr/lib/x86_64-linux-gnu/libnccl.so.2:0\n"
    " 7 0x0000000000063dcc ncclRedOpDestroy()  ???:0\n"
    " 8 0x0000000000008609 start_thread()  ???:0\n"
    " 9 0x000000000011f133 clone()  ???:0\n"
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n",
    id="pipedream-76-docker-bus-error-nccl-shm",
    url="https://github.com/msr-fiddle/pipedream/issues/76",
    cause="docker run's default shared memory (64M) was too small for NCCL; starting the container with "
    '--shm-size="6g" fixed it.',
    established_by="reporter's follow-up with the cause and fix (docker default shm 64M; add --shm-size)",
    mechanism="Docker default 64 MB /dev/shm -> bus error in NCCL",
    expect_signatures=["RANK-CRASH", "NCCL-SHM-SEGMENT"],
    expect_causes=["dev-shm-sigbus", "dev-shm-too-small"],
    notes="the issue description's block, unchanged",
)

# ---------------------------------------------------------------- NCCL / torch.distributed
log(
    "tf144:143468:143468 [1] NCCL INFO Bootstrap : Using enp88s0:192.168.17.144<0>\n"
    "tf144:143468:143468 [1] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation\n"
    "tf144:143468:143468 [1] NCCL INFO NCCL_IB_DISABLE set by environment to 0.\n"
    "tf144:143468:143468 [1] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [2]i40iw0:1/RoCE ; OOB "
    "enp88s0:192.168.17.144<0>\n"
    "tf144:143468:143468 [1] NCCL INFO Using network IB\n"
    "tf144:143468:143535 [1] NCCL INFO Trees [0] -1/-1/-1->1->0 [1] -1/-1/-1->1->0 [2] 0/-1/-1->1->-1 [3] "
    "0/-1/-1->1->-1\n"
    "tf144:143468:143535 [1] NCCL INFO Setting affinity for GPU 1 to fff0,00fff000\n"
    "tf144:143468:143535 [1] NCCL INFO Channel 00 : 0[2f000] -> 1[86000] [receive] via NET/IB/1\n"
    "tf144:143468:143535 [1] NCCL INFO Channel 01 : 0[2f000] -> 1[86000] [receive] via NET/IB/0\n"
    "tf144:143468:143535 [1] NCCL INFO Channel 02 : 0[2f000] -> 1[86000] [receive] via NET/IB/1\n"
    "NCCL WARN NET/IB : Got completion from peer 192.168.17.147<38560> with error 12, opcode 0, len 0, vendor err "
    "129\n",
    id="pytorch-81628-roce-vendor-err-129",
    url="https://github.com/pytorch/pytorch/issues/81628",
    cause="RoCE NICs of the two nodes could not reach each other (QP retry timeout, vendor err 129); for a commenter "
    "with the same error on nodes under different switches the default GID could not link and NCCL_IB_GID_INDEX=3 "
    "fixed it.",
    established_by="maintainer (kwen2501): 'vendor err 129 is usually a timeout ... the NICs can't talk to each other "
    "using IB or RoCE'; commenter's verified GID-index fix",
    mechanism="RoCE peers unreachable with the default GID -> QP timeout (vendor err 129)",
    expect_signatures=["IB-VENDOR-ERR-129"],
    expect_causes=["roce-gid-tc", "peer-unreachable"],
    notes="the first ten lines are the reporter's NCCL INFO output from the description (cut where the thread "
    "excerpt ends); the last line is the issue title, which is the reporter's copy of the WARN line (the title "
    "carries no host/pid prefix)",
)
log(
    'undefined symbol: "ncclCommWindowRegister"\n'
    "(venv) root@dgx-035:/workspace/3rdparty/nccl-tests# ls $NCCL_HOME/lib/libnccl.so.2 -lh\n"
    "lrwxrwxrwx 1 root root 17 Jul 17 19:02 /workspace/3rdparty/nccl/build/lib/libnccl.so.2 -> libnccl.so.2.27.0\n"
    "(venv) root@dgx-035:/workspace/3rdparty/nccl-tests# ls /usr/lib/x86_64-linux-gnu/libnccl.so.2 -lh\n"
    "lrwxrwxrwx 1 root root 17 Sep 10  2024 /usr/lib/x86_64-linux-gnu/libnccl.so.2 -> libnccl.so.2.23.4\n",
    id="nccl-1784-undefined-ncclcommwindowregister-old-system-libnccl",
    url="https://github.com/NVIDIA/nccl/issues/1784",
    cause="nccl-tests built for NCCL 2.27 resolved the system libnccl.so.2 (2.23.4) at run time, which lacks "
    "ncclCommWindowRegister.",
    established_by="reporter's verified diagnosis in reply to the maintainer ('it linked to old version')",
    mechanism="older libnccl first on the loader path -> undefined nccl symbol",
    expect_signatures=["LD-UNDEFINED-NCCL-SYMBOL"],
    expect_causes=["older-libnccl-first"],
    notes="first line is the issue title's error text (the report's own error output was a screenshot); the ls lines "
    "are the reporter's comment, unchanged",
)
log(
    "iZmj7cfy2ysqwfo0nrci4pZ:2532579:2532579 [0] enqueue.cc:336 NCCL WARN Cuda failure 'invalid resource handle'\n"
    "iZmj7cfy2ysqwfo0nrci4pZ:2532579:2532579 [0] NCCL INFO enqueue.cc:1382 -> 1\n"
    "[rank1]: Traceback (most recent call last):\n"
    '[rank1]:   File "/home/yyc/dist.py", line 45, in <module>\n'
    "[rank1]:     main()\n"
    '[rank1]:   File "/home/yyc/dist.py", line 40, in main\n'
    "[rank1]:     dist_allreduce()\n"
    '[rank1]:   File "/home/yyc/dist.py", line 18, in dist_allreduce\n'
    "[rank1]:     dist.barrier()\n"
    '[rank1]:   File "/home/yyc/repo/pytorch/torch/distributed/c10d_logger.py", line 79, in wrapper\n'
    "[rank1]:     return func(*args, **kwargs)\n",
    id="pytorch-130414-torch-2.3-nccl-2.12-invalid-resource-handle",
    url="https://github.com/pytorch/pytorch/issues/130414",
    cause="PyTorch 2.3 (after PR 119421) with NCCL 2.12.10: a barrier without set_device fails; NCCL 2.13 works.",
    established_by="reporter's A/B (2.12.10 fails, 2.13 works), triaged by maintainers as a high-priority regression",
    mechanism="framework release needing a newer NCCL than installed -> CUDA invalid resource handle in NCCL",
    expect_signatures=["NCCL-CUDA-FAILURE"],
    expect_causes=[],
    notes="the output block of the issue, unchanged up to where the thread excerpt is cut; no cause of "
    "NCCL-CUDA-FAILURE describes a framework/NCCL version floor",
)
log(
    '[rank0]:   File "/data/anaconda/envs/ENV_NAME/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py",'
    " line 2726, in broadcast\n"
    "[rank0]:     work = group.broadcast([tensor], opts)\n"
    "[rank0]:            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
    "[rank0]: torch.distributed.DistBackendError: NCCL error in: "
    "/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:2588, internal error - please report this issue to "
    "the NCCL developers, NCCL version 2.21.5\n"
    "[rank0]: ncclInternalError: Internal check failed.\n"
    "[rank0]: Last error:\n"
    "[rank0]: Bootstrap : no socket interface found\n",
    id="open-r1-multimodal-7-socket-ifname-eth0-not-present",
    url="https://github.com/EvolvingLMMs-Lab/open-r1-multimodal/issues/7",
    cause="The project's launch scripts hard-code NCCL_SOCKET_IFNAME=eth0; the reporter's machine has no eth0, so "
    "NCCL's bootstrap found no socket interface.",
    established_by="reporter's diagnosis in the issue ('It is resulting from the NCCL_SOCKET_IFNAME=eth0 ... should "
    "make the socket configuration according to the user's ifconfig')",
    mechanism="NCCL_SOCKET_IFNAME names an interface the host does not have -> no socket interface found",
    expect_signatures=["NCCL-BOOTSTRAP-SOCKET"],
    expect_causes=["ifname-not-found"],
    notes="the traceback block of the issue, unchanged (it starts mid-traceback as posted)",
)

# ---------------------------------------------------------------- Gloo
log(
    "terminate called after throwing an instance of 'gloo::IoException'\n"
    "  what():  [/opt/conda/conda-bld/pytorch_1544084119927/work/third_party/gloo/gloo/transport/tcp/pair.cc:724] "
    "connect [127.0.1.1]:3210: Connection refused\n"
    "Aborted (core dumped)\n",
    id="pytorch-15592-gloo-connect-127.0.1.1-refused",
    url="https://github.com/pytorch/pytorch/issues/15592",
    cause="Gloo used the address the host name resolves to (127.0.1.1 in /etc/hosts) and advertised it to the other "
    "node; setting GLOO_SOCKET_IFNAME to the real interface fixed it.",
    established_by="PyTorch maintainer (teng-li) fix; reporter: 'It works'",
    mechanism="Gloo advertises a loopback host-name address -> remote connect refused",
    expect_signatures=["GLOO-CONNECT-FULL-MESH", "GLOO-LOOPBACK-FALLBACK"],
    expect_causes=["gloo-loopback"],
    notes="the error block of the issue description, unchanged",
)

# ---------------------------------------------------------------- MPI / UCX / libfabric
log(
    "[pge328:67669] ../../../../../openmpi-3.1.2/ompi/mca/pml/ucx/pml_ucx.c:226 Error: UCP worker does not support "
    "MPI_THREAD_MULTIPLE\n",
    id="ompi-6171-ucx-no-thread-multiple",
    url="https://github.com/open-mpi/ompi/issues/6171",
    cause="The UCX library Open MPI loaded was built without multi-thread support (--enable-mt).",
    established_by="UCX maintainer (yosefe): 'looks like UCX was compiled without multi-thread support - need to add "
    "--enable-mt'",
    mechanism="UCX built without --enable-mt -> pml ucx refuses MPI_THREAD_MULTIPLE",
    expect_signatures=[],
    notes="the error line of the description, unchanged; UCX-ERROR matches pml_ucx errors but none of its causes "
    "describes a UCX build without thread support",
)
log(
    "version `EFA_1.2' not found (required by /opt/amazon/efa/lib/libfabric.so.1) No plugin found (libnccl-net.so), "
    "using internal implementation\n",
    id="awsome-distributed-ai-284-efa-1.2-not-found-plugin-fallback",
    url="https://github.com/awslabs/awsome-distributed-ai/issues/284",
    cause="A conda-pulled NCCL/aws-ofi-nccl combination not compiled against the system libfabric failed to load; NCCL "
    "fell back to its internal implementation (slow). Installing aws-ofi-nccl from the AWS conda channel fixed it.",
    established_by="AWS maintainers' troubleshooting tip with the verified fix",
    mechanism="net plugin / libfabric / libefa version mix fails to load -> silent fallback from EFA",
    expect_signatures=["AWS-OFI-ERROR", "IBVERBS-SYMBOL-VERSION"],
    expect_causes=["plugin-libfabric-mismatch", "host-libs-mixed-in"],
    notes="the line quoted in the tip (inside a code block), unchanged",
)
log(
    "clima.gps.caltech.edu:3667226] Failed to register remote memory, rc=-1\n",
    id="clima-slurm-buildkite-54-gpus-per-task-register-remote-memory",
    url="https://github.com/CliMA/slurm-buildkite/issues/54",
    cause="--ntasks=4 --gpus-per-task=1 made Slurm give each task one visible GPU, so CUDA IPC between the Open MPI "
    "ranks failed; --gpus=4 (all GPUs visible to every task) avoids it.",
    established_by="maintainer analysis (srun printenv of CUDA_VISIBLE_DEVICES for both layouts) and the linked Open "
    "MPI issue on Slurm GPU binding",
    mechanism="per-task GPU isolation -> CUDA IPC registration of a peer's buffer fails",
    expect_signatures=[],
    notes="the error line from the issue (as posted, the leading '[' is missing); the cause per-task-gpu-isolation "
    "exists under CUDA-INVALID-DEVICE-ORDINAL, whose message this is not",
)
log(
    "[LOG_CAT_ML] component ucx_p2p is not available but requested in hierarchy: ucx_p2p:p2p\n"
    "[LOG_CAT_ML] ml_discover_hierarchy exited with error\n"
    "...\n"
    "...\n",
    id="ompi-11469-hcoll-ucx-p2p-messages-negative",
    url="https://github.com/open-mpi/ompi/issues/11469",
    negative=True,
    cause="(negative) HCOLL hierarchy-discovery messages printed by Open MPI 4.1.5 with UCX_TLS=xpmem while the "
    "programs ran fine; they disappear with -mca coll ^hcoll.",
    established_by="Mellanox/NVIDIA HPC-X maintainer (janjust): HCOLL issue, run with -mca coll ^hcoll; reporter: 'That "
    "gets rid of the messages' (the benchmark itself ran)",
    mechanism="(negative) HCOLL component-discovery noise from a run that works",
    expect_signatures=[],
    notes="the message block of the description, unchanged (the reporter's own '...' elisions kept; the command line "
    "above it is omitted)",
)

# ---------------------------------------------------------------- Kubernetes / enroot launch
log(
    "msg=Waiting for MOFED to be installed..\n",
    id="k8s-driver-manager-123-waiting-for-host-mofed",
    url="https://github.com/NVIDIA/k8s-driver-manager/issues/123",
    cause="k8s-driver-manager v0.9.0 inverted its host-MOFED readiness check (driver.rdma.useHostMofed=true), so its "
    "init container looped although MOFED was loaded on the host.",
    established_by="reporter's code analysis; fix confirmed in the GPU Operator release notes (NVIDIA/cloud-native-docs "
    "PR 355)",
    mechanism="GPU Operator component release defect -> init container waits forever",
    expect_signatures=[],
    notes="the log message quoted inline in the issue (backticks dropped); no signature covers it",
)
log(
    "nvidia-container-cli: device error: 4: unknown device\n",
    id="enroot-207-unknown-device-host-index",
    url="https://github.com/NVIDIA/enroot/issues/207",
    cause="NVIDIA_VISIBLE_DEVICES carried host indices 0,1,4,5 into a job whose device cgroup holds four GPUs; index 4 "
    "does not exist there.",
    established_by="enroot maintainer (3XX0): invalid/unavailable GPU IDs passed to enroot; with Slurm+Pyxis the "
    "variable should be 'all' and the gres restricts devices",
    mechanism="NVIDIA_VISIBLE_DEVICES with indices outside the allocation -> enroot NVIDIA hook fails",
    expect_signatures=["ENROOT-NVIDIA-HOOK-FAILED"],
    expect_causes=[],
    notes="the error quoted inline in the issue (backticks dropped); neither cause of ENROOT-NVIDIA-HOOK-FAILED "
    "describes an index outside the allocation",
)

# ---------------------------------------------------------------- added late (same checks)
log(
    "Traceback (most recent call last):\n"
    '  File "train.py", line 141, in <module>\n'
    "    main(args_)\n"
    '  File "train.py", line 63, in main\n'
    "    dist.broadcast(ps, 0)\n"
    '  File "/opt/conda/lib/python3.6/site-packages/torch/distributed/distributed_c10d.py", line 842, in broadcast\n'
    "    work = _default_pg.broadcast([tensor], opts)\n"
    "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:518, unhandled system error, NCCL "
    "version 2.4.8\n",
    id="insightface-1444-docker-bridge-network-multinode",
    url="https://github.com/deepinsight/insightface/issues/1444",
    cause="Two-machine training ran inside docker containers on the default (bridge) network: the container address is "
    "separate from the physical machines', so NCCL did not get an address the other node could reach.",
    established_by="reporter's verified fix: restarting the containers with --network=host solved it",
    mechanism="multi-node job in bridge-networked containers -> NCCL bootstrap/socket address unreachable -> "
    "unhandled system error",
    expect_signatures=["NCCL-ERR-2"],
    expect_causes=["socket-iface-virtual"],
    notes="the traceback from the description, unchanged; NCCL 2.4.8",
)
log(
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1331, "
    "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1\n"
    "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \n"
    "Last error:\n",
    id="accelerate-2107-multinode-containers-bridge-network",
    url="https://github.com/huggingface/accelerate/issues/2107",
    cause="Multi-node training across docker containers using the default bridge network failed in the first barrier; "
    "the same job worked once the containers were run with --network=host.",
    established_by="reporter's verified fix: 'Finally, I got it work by run the docker with --network=host'",
    mechanism="multi-node job in bridge-networked containers -> peers cannot reach each other's container addresses",
    expect_signatures=["NCCL-ERR-2"],
    expect_causes=["socket-iface-virtual"],
    notes="three consecutive lines of the description's interleaved traceback, unchanged (the trailing space after "
    "'device error.' is in the thread); NCCL 2.18.1",
)
log(
    ":~/nccl-tests$ export NCCL_SOCKET_IFNAME=lo\n"
    ":~/nccl-tests$ ./build/all_reduce_perf -b 8 -e 128M -f 2 -g 1\n"
    "# nThread 1 nGpus 1 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 "
    "validation: 1 graph: 0\n"
    "#\n"
    "# Using devices\n"
    "#  Rank  0 Group  0 Pid  70918 on NAME device  0 [0x01] NVIDIA RTX A6000\n"
    "NAME :70918:70918 [0] NCCL INFO Bootstrap : Using lo:127.0.0.1<0>\n"
    "NAME :70918:70918 [0] NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)\n"
    "NAME :70918:70918 [0] NCCL INFO NET/Plugin: Using internal network plugin.\n"
    "NAME :70918:70918 [0] NCCL INFO cudaDriverVersion 12040\n"
    "NCCL version 2.21.5+cuda12.4\n"
    "NAME :70918:70928 [0] NCCL INFO NET/IB : No device found.\n"
    "NAME :70918:70928 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0>\n"
    "NAME :70918:70928 [0] NCCL INFO Using non-device net plugin version 0\n"
    "NAME :70918:70928 [0] NCCL INFO Using network Socket\n"
    "\n"
    "NAME :70918:70927 [0] misc/socket.cc:50 NCCL WARN socketProgress: Connection closed by remote peer "
    "localhost<56086>\n"
    "NAME :70918:70927 [0] NCCL INFO misc/socket.cc:752 -> 6\n"
    "NAME:70918:70927 [0] NCCL INFO misc/socket.cc:428 -> 6\n",
    id="nccl-tests-217-endpoint-security-closes-loopback-sockets",
    url="https://github.com/NVIDIA/nccl-tests/issues/217",
    cause="Host endpoint-security software (ESET Web Access Protection) interfered with NCCL's local TCP "
    "connections, so even a single-GPU all_reduce_perf hung; restarting the ESET service and then disabling Web "
    "Access Protection fixed it.",
    established_by="reporter's verified fix ('Disabling ESET's Web Access Protection fixed this issue'), "
    "acknowledged by the NCCL maintainers in the thread",
    mechanism="host security software breaks NCCL's loopback bootstrap sockets -> connection closed -> hang",
    expect_signatures=[],
    notes="the reporter's comment of 2024-05-22 with the markdown fence dropped; the host name is redacted as 'NAME' "
    "in the thread (with its inconsistent spacing); lines after 'misc/socket.cc:428 -> 6' are left out. "
    "NCCL-ERR-6 matches 'Connection closed by remote peer' but none of its causes describes this one",
)
log(
    "node08:27106:27302 [0] include/shm.h:27 NCCL WARN Call to shm_open failed : Permission denied\n"
    "node08:27106:27302 [0] NCCL INFO include/shm.h:41 -> 2\n"
    "node08:27106:27302 [0] include/shm.h:48 NCCL WARN Error while creating shared memory segment "
    "nccl-shm-recv-b7948f403864987a-0-3-0 (size 4460544)\n",
    id="pytorch-37004-dev-shm-permission-denied",
    url="https://github.com/pytorch/pytorch/issues/37004",
    cause="/dev/shm on the node was not writable by the user (shm_open: Permission denied), so NCCL's shared-memory "
    "transport could not create its segments on a 4-GPU single-node job.",
    established_by="reporter's verified fix: 'sudo chmod 777 /dev/shm and the problem is gone'",
    mechanism="/dev/shm permissions -> shm_open EACCES -> NCCL SHM segment creation fails -> unhandled system error",
    expect_signatures=[],
    notes="the three lines quoted in the description, unchanged; NCCL-SHM-SEGMENT matches the second WARN line, but "
    "none of its causes describes a permission problem (they cover size, stale files, CUDA registration)",
)
log(
    "clima:810632:810657 [0] NCCL INFO Topology detection: network path "
    "/sys/devices/pci0000:2b/0000:2b:08.1/0000:2e:00.3/usb1/1-1/1-1.2/1-1.2:2.0 is not a PCI device (usb). "
    "Attaching to first CPU\n"
    "clima:810632:810657 [0] graph/xml.h:85 NCCL WARN Attribute busid of node nic not found\n",
    id="nccl-1125-usb-network-device-topology",
    url="https://github.com/NVIDIA/nccl/issues/1125",
    cause="NCCL's topology detection mishandled a USB network device on the node (a NIC node without a busid), so "
    "communicator init failed when fewer than four GPUs were used; a NCCL defect.",
    established_by="NCCL maintainers: diagnosis in the thread, a patch to xml.cc, reinjecting the dumped topology "
    "with NCCL_TOPO_FILE worked for the reporter; per the maintainer (in NVIDIA/nccl#1051) the fix for "
    "'NCCL not handling USB network devices correctly' ships in NCCL 2.20",
    mechanism="NCCL release bug: USB network interface breaks topology XML (missing busid) -> init fails",
    expect_signatures=[],
    notes="the two log lines the maintainer quoted from the reporter's log, unchanged; no signature covers this",
)


log(
    "[1608298882.555115] [b2294:54275:0]          ib_md.c:1678 UCX  ERROR ibv_open_device(mlx5_0) failed: Cannot "
    "allocate memory\n"
    "[2605244.823409] mlx5_core 0000:61:00.0: mlx5_cmd_check:795:(pid 53945): ALLOC_UAR(0x802) op_mod(0x0) failed, "
    "status limits exceeded(0x8), syndrome (0x5a7939)\n",
    id="ucx-6049-ibv-open-device-enomem-uar-limit",
    url="https://github.com/openucx/ucx/issues/6049",
    cause="With 256 MPI ranks on one node (HPC-X 2.7 / Open MPI 4.0.5) every rank opens mlx5_0 and the HCA ran out of "
    "UAR resources (dmesg: ALLOC_UAR ... status limits exceeded), so ibv_open_device returned ENOMEM; fixed by the "
    "NIC firmware configuration (mlxconfig) setting the UCX maintainer pointed to.",
    established_by="UCX maintainer (yosefe) pointed to the fix in open-mpi/ompi#6854 (an mlxconfig firmware "
    "setting; solved the same failure there); reporter: 'that worked, thanks!'",
    mechanism="too many processes per node open the HCA -> firmware UAR limit exceeded -> ibv_open_device ENOMEM",
    expect_signatures=[],
    notes="the two blocks of the description (UCX error line, then the dmesg line), unchanged; UCX-ERROR matches the "
    "first line but none of its causes describes a device UAR limit",
)


log(
    "[kazuito@mgmt ~]$ srun --container-image=centos grep PRETTY /etc/os-release\n"
    "slurmstepd: pyxis: importing docker image ...\n"
    "slurmstepd: error: pyxis: child 12004 failed with error code: 1\n"
    "slurmstepd: error: pyxis: failed to import docker image\n"
    "slurmstepd: error: pyxis: printing contents of log file ...\n"
    "slurmstepd: error: pyxis:     mkdir: cannot create directory '/run/enroot': Permission denied\n"
    "slurmstepd: pyxis: could not remove squashfs: No such file or directory\n"
    "slurmstepd: error: spank: required plugin spank_pyxis.so: task_init_privileged() failed with rc=-1\n"
    "slurmstepd: error: spank_task_init_privileged failed\n"
    "slurmstepd: error: write to unblock task 0 failed: Broken pipe\n"
    "srun: error: vm-standard2-1-ad1-0001: task 0: Exited with exit code 1\n",
    id="pyxis-12-enroot-runtime-path-permission",
    url="https://github.com/NVIDIA/pyxis/issues/12",
    cause="The compute node's enroot configuration used a runtime path under /run that the unprivileged job user "
    "cannot create ('/run/enroot': Permission denied), so pyxis failed to import the image (the same enroot commands "
    "worked when the user ran them by hand on the node). The maintainer's setup uses a custom /etc/enroot/enroot.conf "
    "with a per-user ENROOT_RUNTIME_PATH under /run/enroot.",
    established_by="pyxis maintainer (flx42): the node needs a custom /etc/enroot/enroot.conf with per-user runtime "
    "paths (documentation gap acknowledged)",
    mechanism="Slurm/pyxis node setup: enroot runtime path not writable by the job user -> image import fails",
    expect_signatures=[],
    notes="the description's block, unchanged; no signature covers pyxis/enroot setup errors",
)


log(
    "./deviceQuery Starting...\n"
    "CUDA Device Query (Runtime API) version (CUDART static linking)\n"
    "cudaGetDeviceCount returned 35\n"
    "-> CUDA driver version is insufficient for CUDA runtime version\n"
    "Result = FAIL\n",
    id="nvidia-docker-24-device-nodes-without-driver-libraries",
    url="https://github.com/NVIDIA/nvidia-docker/issues/24",
    cause="The container (nvidia/cuda:7.0-cudnn3-devel) was started with plain `docker run --device /dev/nvidia*` "
    "flags only; the host driver's user-space libraries were not mounted into it, so the CUDA runtime found no usable "
    "driver and reported error 35, although the host driver (346.46) supports CUDA 7.0.",
    established_by="nvidia-docker maintainer (flx42): the images do not contain the driver; the driver libraries "
    "have to be mounted from the host at start (use the nvidia-docker wrapper)",
    mechanism="GPU device nodes passed but driver libraries not injected -> 'driver version is insufficient' "
    "(misleading: the host driver is new enough)",
    expect_signatures=[],
    notes="the description's indented block, unchanged except for the leading indentation of the markdown code block; "
    "CUDA-DRIVER-INSUFFICIENT matches the message but its causes (old driver, compat libs, older image) are what the "
    "thread rules out",
)


# ---------------------------------------------------------------- negatives
log(
    "Rank  0 Pid  12414 on 51e6e7896958 device  0 [0x1a] Tesla V100-SXM3-32GB\n"
    "Rank  1 Pid  12414 on 51e6e7896958 device  1 [0x1b] Tesla V100-SXM3-32GB\n"
    "Rank  2 Pid  12414 on 51e6e7896958 device  2 [0x1c] Tesla V100-SXM3-32GB\n"
    "Rank  3 Pid  12414 on 51e6e7896958 device  3 [0x1e] Tesla V100-SXM3-32GB\n"
    "[New Thread 0x7fffe6d73700 (LWP 12424)]\n"
    "[New Thread 0x7fffe6572700 (LWP 12425)]\n"
    "[New Thread 0x7fffe5a55700 (LWP 12426)]\n"
    "[New Thread 0x7fffe523c700 (LWP 12427)]\n"
    "[New Thread 0x7fffe4a23700 (LWP 12428)]\n"
    "warning: Cuda API error detected: cudaDeviceEnablePeerAccess returned (0x2c0)\n"
    "warning: Cuda API error detected: cudaGetLastError returned (0x2c0)\n"
    "warning: Cuda API error detected: cudaDeviceEnablePeerAccess returned (0x2c0)\n",
    id="nccl-258-cuda-gdb-peer-access-warnings-negative",
    url="https://github.com/NVIDIA/nccl/issues/258",
    negative=True,
    cause="(negative) cuda-gdb reports failed cudaDeviceEnablePeerAccess calls while nccl-tests runs to completion: "
    "P2P is not available and NCCL falls back to shared memory.",
    established_by="NCCL maintainer (sjeaugey): 'The warning lines are just warning ... NCCL will fall back to using "
    "shared memory'; reporter: 'No problem for the time being'",
    mechanism="(negative) P2P unavailable, NCCL uses SHM; cuda-gdb API warnings are harmless",
    expect_signatures=[],
    notes="the description's quoted block with the markdown quote markers ('>' and leading spaces) dropped; lines "
    "otherwise unchanged",
)


def write_readme(d: str) -> None:
    lines = [
        "# Sealed held-out logs #5",
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
