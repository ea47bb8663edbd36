"""Build /work/sealed8/logs/: one file per verbatim log excerpt plus logs/index.json and logs/README.md.

Each excerpt holds lines copied from the public thread named in `url` (trimmed to the lines that matter, lines
never edited; where the thread goes on, the excerpt simply ends; `notes` says what was cut). The text of every
excerpt is embedded below and written out by main(), so the set can be rebuilt from this file alone.
`expect_signatures`: ids from src/imgcheck/data/triage/signatures.json whose title covers the failure and whose
causes describe the established cause today ([] if none does, or the log is output of a job that worked ->
`negative`); `expect_causes` names the cause ids of those signatures that fit. signatures.json was read only after
the excerpts were chosen; no triage was run.
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


# ---------------------------------------------------------------- scheduler / container runtime
log(
    "Sep 24 08:24:46 nda100v4-2 slurmd[8614]: error: [job 5888] epilog failed status=1:0\n"
    "Sep 24 08:26:20 nda100v4-2 spank-epilog[38569]: error: pyxis: child 38570 failed with error code: 1\n"
    "Sep 24 08:26:20 nda100v4-2 spank-epilog[38569]: error: pyxis: couldn't execute enroot command\n"
    "Sep 24 08:26:20 nda100v4-2 spank-epilog[38569]: error: pyxis: printing enroot log file:\n"
    "Sep 24 08:26:20 nda100v4-2 spank-epilog[38569]: error: pyxis:     mkdir: cannot create directory '/run/enroot': "
    "Permission denied\n"
    "Sep 24 08:26:20 nda100v4-2 spank-epilog[38569]: error: pyxis: couldn't get list of existing containers\n"
    "Sep 24 08:26:20 nda100v4-2 spank-epilog[38569]: error: pyxis: couldn't cleanup pyxis containers for job 5886\n"
    "Sep 24 08:26:20 nda100v4-2 spank-epilog[38569]: error: spank: required plugin spank_pyxis.so: job_epilog() "
    "failed with rc=-1\n"
    "Sep 24 08:26:20 nda100v4-2 slurmd[8614]: error: spank/epilog returned status 0x0100\n"
    "Sep 24 08:26:20 nda100v4-2 slurmd[8614]: error: [job 5886] epilog failed status=1:0\n",
    id="pyxis-123-pyxis-0.16-job-scope-epilog-enroot-runtime-path",
    url="https://github.com/NVIDIA/pyxis/issues/123",
    cause="After upgrading pyxis 0.15 -> 0.16 the Slurm epilog failed and nodes went to DRAIN: pyxis 0.16 defaults to "
    "job-scoped containers and cleans them up in the job epilog by running enroot there, and enroot could not create "
    "its runtime directory in that context.",
    established_by="pyxis maintainer (flx42): caused by the 0.16 change (commit aa901d9); 'container_scope=global' in "
    "the plugstack config restores the old behaviour",
    mechanism="pyxis 0.16 container_scope=job runs enroot cleanup in the epilog -> enroot runtime dir cannot be "
    "created -> epilog fails -> node drained",
    expect_signatures=[],
    notes="the ten journal lines of the issue description, unchanged",
)

log(
    "[2025-05-19T09:38:16.163] [1848523.0] pyxis: starting container: pyxis_1848523.0\n"
    "[2025-05-19T09:38:16.462] [1848523.0] error: pyxis: container start failed with error code: 1\n"
    "[2025-05-19T09:38:16.462] [1848523.0] error: pyxis: printing enroot log file:\n"
    "[2025-05-19T09:38:16.462] [1848523.0] error: pyxis:     nvidia-container-cli: mount error: failed to add device "
    "rules: unable to find any existing device filters attached to the cgroup: bpf_prog_query(B\n"
    "PF_CGROUP_DEVICE) failed: operation not permitted\n"
    "[2025-05-19T09:38:16.462] [1848523.0] error: pyxis:     [ERROR] /etc/enroot/hooks.d/98-nvidia.sh exited with "
    "return code 1\n"
    "[2025-05-19T09:38:16.462] [1848523.0] error: pyxis: couldn't start container\n"
    "[2025-05-19T09:38:16.462] [1848523.0] error: spank: required plugin spank_pyxis.so: task_init() failed with "
    "rc=-1\n"
    "[2025-05-19T09:38:16.462] [1848523.0] error: Failed to invoke spank plugin stack\n"
    "[2025-05-19T09:38:16.463] [1848523.0] pyxis: removing container filesystem: pyxis_1848523.0\n",
    id="nvidia-container-toolkit-1093-1.17.7-enroot-hook-device-rules",
    url="https://github.com/NVIDIA/nvidia-container-toolkit/issues/1093",
    cause="nvidia-container-toolkit / libnvidia-container 1.17.7-1 on DGX-OS 6.3.2 Slurm nodes: enroot's NVIDIA hook "
    "failed to add the device cgroup rules for every container; downgrading to 1.17.6-1 resolved it.",
    established_by="reporter's A/B in the issue (1.17.6-1 works); Google Cloud cluster-toolkit maintainers "
    "(cluster-toolkit #4144 / merged PR #4145): the 1.17.7 release contains a regression that breaks GPU jobs under "
    "enroot in Slurm",
    mechanism="container-toolkit release regression -> enroot 98-nvidia.sh hook fails (device rules) -> pyxis "
    "cannot start any GPU container",
    expect_signatures=[],
    notes="the slurmd.log lines of the reporter's comment of 2025-05-20, unchanged; the thread shows the fourth line "
    "broken inside 'bpf_prog_query(B' / 'PF_CGROUP_DEVICE)' and the break is kept",
)

log(
    "cudaErrorCompatNotSupportedOnDevice: forward compatibility was attempted on non supported HW\n",
    id="quip-miner-24-forward-compat-on-consumer-gpu",
    url="https://github.com/QuipNetwork/quip-miner/issues/24",
    cause="The image's forward-compat libcuda (/usr/local/cuda/compat) was loaded instead of the host driver 570 on "
    "a GeForce RTX 3060; forward compatibility is not supported on consumer GPUs.",
    established_by="reporter's workaround (LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu); maintainer: fixed by "
    "skipping the forward-compat library in the entrypoint, root issue the CUDA minimum driver (575 v. 570)",
    mechanism="image's cuda-compat libcuda on the loader path on a consumer GPU -> CUDA error 804",
    expect_signatures=["CUDA-DRIVER-MISMATCH-803"],
    expect_causes=["compat-libcuda-loaded"],
    notes="the 'Error log' block of the issue, unchanged (one line)",
)

# ---------------------------------------------------------------- GPU sharing shim
log(
    "[HAMI-core ERROR (pid:565 thread=140267266266944 multiprocess_memory_limit.c:831)]: Illegal device id: "
    "850725928\n"
    "!!!!!!! Segfault encountered !!!!!!!\n"
    '  File "/libvgpu/src/multiprocess/multiprocess_memory_limit.c", line 833, in get_current_device_memory_limit\n'
    '  File "/libvgpu/src/allocator/allocator.c", line 44, in oom_check\n'
    '  File "/libvgpu/src/cuda/memory.c", line 582, in cuMemCreate\n'
    '  File "misc/cudawrap.cc", line 92, in ncclCuMemHostEnable()\n'
    '  File "misc/cudawrap.cc", line 202, in ncclCuMemHostEnable()\n'
    '  File "misc/cudawrap.cc", line 280, in initOnceFunc\n'
    '  File "misc/cudawrap.cc", line 298, in ncclCudaLibraryInit()\n'
    '  File "/dvs/p4/build/sw/gpgpu/nccl/gitfusion/stable/src/init.cc", line 1852, in ncclCommInitRank\n',
    id="hami-core-169-libvgpu-cumemcreate-illegal-device-nccl-cumem-host-segfault",
    url="https://github.com/Project-HAMi/HAMi-core/issues/169",
    cause="vLLM 0.18.0 under HAMi 2.8.0: NCCL's cuMem host-allocation probe (ncclCuMemHostEnable) calls cuMemCreate "
    "for a host location; HAMi-core's libvgpu cuMemCreate hook ran its OOM check with a device id that was never "
    "set (garbage 'Illegal device id') and segfaulted.",
    established_by="the stack in the issue (cuMemCreate hook <- ncclCuMemHostEnable <- ncclCommInitRank) and the "
    "code analysis in HAMi-core #187 (the hook reads an uninitialised dev when the allocation's location is not a "
    "device); merged fix PR HAMi-core #192 'Fix cuMemCreate memory tracking'",
    mechanism="LD_PRELOADed vGPU shim's cuMemCreate hook reads an uninitialised device id for a host-located "
    "allocation -> segfault inside ncclCommInitRank",
    expect_signatures=["RANK-CRASH"],
    expect_causes=["read-the-stack"],
    notes="the first ten lines of the issue's error block, unchanged (the Python frames that follow are cut)",
)

# ---------------------------------------------------------------- NVSHMEM / RDMA registration
log(
    "NVSHMEM: Unable to dlopen libmlx5dv. Disabling directNIC features.\n",
    id="deepep-759-nvshmem-no-libmlx5dv-erdma-ibgda",
    url="https://github.com/deepseek-ai/DeepEP/issues/759",
    cause="DeepEP with NVSHMEM IBGDA on Alibaba Cloud eRDMA NICs: NVSHMEM's GPU-initiated path needs Mellanox mlx5 "
    "devices (mlx5dv); eRDMA is not mlx5, so IBGDA cannot be used there.",
    established_by="reporter's diagnosis in the issue (mlx5dv_open_device fails on erdma_0; IBGDA is mlx5-only)",
    mechanism="NVSHMEM IBGDA requires mlx5 direct verbs; non-mlx5 RDMA NIC -> directNIC features disabled",
    expect_signatures=[],
    notes="one line from the issue's log, unchanged",
)
log(
    "E0819 11:21:45.193161 147554 rdma_context.cpp:588] Failed to register memory 0x12397fd5800: Invalid argument "
    "[22]\n"
    "E0819 11:21:45.193186 147554 rdma_transport.cpp:302] Failed to register memory region with context 0\n"
    "W0819 11:21:45.193463 147554 rdma_transport.cpp:481] RdmaTransport: Failed to register memory: addr "
    "0x12397fd5800 length 1916853120\n",
    id="mooncake-2511-expandable-segments-register-memory-einval",
    url="https://github.com/kvcache-ai/Mooncake/issues/2511",
    cause="With PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True the KV cache is backed by CUDA VMM mappings; "
    "Mooncake's transfer engine exported the dma-buf for only the one mapping cuMemGetAddressRange reports (a 20 MiB "
    "growth chunk) while registering the whole buffer, so the dma-buf registration failed with EINVAL.",
    established_by="the analysis in the issue and merged fix PR #3538 ('Export the requested range for dma-buf "
    "registration under CUDA VMM (fixes #2511)'), with captured values dmabuf_size=20971520, "
    "offset+length=1925067648 -> errno=22",
    mechanism="dma-buf exported for one VMM chunk, whole buffer registered -> registration EINVAL",
    expect_signatures=[],
    notes="three consecutive lines from the issue's log, unchanged (no ibv_* call is named in the lines)",
)
log(
    "Traceback (most recent call last):\n"
    '  File "/home/dpsk_a2a/DeepEP/tests/test_internode.py", line 339, in test_loop\n'
    "    ref_hash += test_main(args, i, local_rank, num_local_ranks, num_ranks, num_nodes, rank, buffer, group,\n"
    '  File "/home/dpsk_a2a/DeepEP/tests/test_internode.py", line 138, in test_main\n'
    "    recv_x, recv_topk_idx, recv_topk_weights, recv_num_tokens_per_expert_list, handle, event = "
    "buffer.dispatch(\n"
    '  File "/usr/local/lib/python3.12/dist-packages/deep_ep-1.2.1+309785a-py3.12-linux-x86_64.egg/deep_ep/'
    'buffer.py", line 377, in dispatch\n'
    "    return self.internode_dispatch(x, handle, num_tokens_per_rank, num_tokens_per_rdma_rank, "
    "is_token_in_rank,\n"
    '  File "/usr/local/lib/python3.12/dist-packages/deep_ep-1.2.1+309785a-py3.12-linux-x86_64.egg/deep_ep/'
    'buffer.py", line 490, in internode_dispatch\n'
    "    recv_src_meta, send_rdma_head, send_nvl_head, event = self.runtime.internode_dispatch(\n"
    "RuntimeError: DeepEP error: timeout (dispatch CPU)\n",
    id="deepep-553-nvshmem-3.5.19-internode-dispatch-timeout",
    url="https://github.com/deepseek-ai/DeepEP/issues/553",
    cause="DeepEP 1.2.1 with NVSHMEM 3.5.19 on H100 RoCE clusters: NVSHMEM 3.5 moved the default RC queue pairs in "
    "its device state; DeepEP still used the old layout, so internode dispatch never completed.",
    established_by="merged DeepEP PR #564 ('Update RC selection for NVSHMEM 3.5. The locations of QPs within the "
    "device state struct changed'), tested on 4 H100 nodes; DeepEP #691 / #707 restate it",
    mechanism="DeepEP predating the NVSHMEM 3.5 queue-pair layout -> internode dispatch hangs -> DeepEP CPU timeout",
    expect_signatures=[],
    notes="the traceback of the issue description, unchanged",
)
log(
    "W0717 18:50:07.754983 3957032 rdma_context.cpp:199] The buffer length exceeds device max_mr_size, shrink it "
    "to 68719476736: No space left on device [28]\n",
    id="mooncake-640-global-segment-exceeds-max-mr-size",
    url="https://github.com/kvcache-ai/Mooncake/issues/640",
    cause="A Mooncake Store global segment larger than 64 GB was registered as one memory region; the NIC's "
    "max_mr_size is 64 GiB (68719476736), so Mooncake shrank the registration and the segment could not be used "
    "in full.",
    established_by="reporter: 'This is caused by the memory region limit'; Mooncake maintainer: fixed in PR #647 "
    "(the segment is split into several registrations)",
    mechanism="one registration larger than the device's max_mr_size -> registration shrunk (ENOSPC) -> segment "
    "size limited to 64 GB",
    expect_signatures=[],
    notes="the one log line of the issue description, unchanged",
)
log(
    "NIC buffer will be on GPU memory\nNIC handler will be GPU\n",
    id="nvshmem-23-ibgda-nic-buffer-on-gpu-negative",
    url="https://github.com/NVIDIA/nvshmem/issues/23",
    cause="(negative) NVSHMEM reporting that the IBGDA NIC buffer and NIC handler are on the GPU, after the reporter "
    "removed NVreg_EnableStreamMemOPs=1 and PeerMappingOverride=1 from the driver options: IBGDA still came up.",
    established_by="NVSHMEM maintainer (benhg) in the thread: starting with 3.4.5 the two options are not needed "
    "for CPU-assisted IBGDA (still needed for fully device-assisted IBGDA)",
    mechanism="(negative) informational NVSHMEM IBGDA placement lines",
    expect_signatures=[],
    negative=True,
    notes="the two lines quoted in the issue description, unchanged",
)

# ---------------------------------------------------------------- UCX / NIXL
log(
    "E ucx_utils.cpp:592  VRAM memory is detected as host by UCX.\n"
    "                     UCX is likely not configured with CUDA support.\n"
    "                     VRAM registration cannot proceed.\n"
    "E nixl_agent.cpp:470 registerMem: registration failed for the specified or all potential backends\n"
    "nixl_cu13._bindings.nixlBackendError: NIXL_ERR_BACKEND\n",
    id="nixl-1628-nixl-cu13-ucx-vram-detected-as-host",
    url="https://github.com/ai-dynamo/nixl/issues/1628",
    cause="The nixl-cu13 1.0.0 wheel bundles CUDA-enabled UCX modules in nixl_cu13.libs/ucx/, but UCX initialised "
    "without finding them (lmsysorg/sglang cu130 runtime image), so UCX classified GPU memory as host and NIXL's "
    "VRAM registerMem failed.",
    established_by="reporter's confirmed workaround in the issue: with UCX_MODULE_DIR=<site-packages>/"
    "nixl_cu13.libs/ucx (and UCX_TLS=cuda_copy,cuda_ipc,sm,tcp,self) the same disagg test passes; issue closed",
    mechanism="UCX without loadable CUDA modules -> VRAM seen as host -> NIXL registerMem fails",
    expect_signatures=[],
    notes="five consecutive lines from the issue, unchanged (the two continuation lines keep their indentation)",
)
log(
    "allocate memory : Please set max locked memory (ulimit -l) to 'unlimited' (current: 8192 kbytes)\n"
    "[...]\n"
    "UCX  ERROR mlx5_0: mlx5dv_devx_umem_reg(size=131072 access=0x0) failed: Cannot allocate memory\n"
    "[...]\n"
    "pml_ucx.c:309  Error: Failed to create UCP worker\n",
    id="mlperf-automations-664-docker-daemon-memlock-ucx-devx-umem",
    url="https://github.com/mlcommons/mlperf-automations/issues/664",
    cause="Containers inherit the Docker daemon's 8 MiB locked-memory limit although the host shell shows "
    "unlimited; UCX could not pin its mlx5 DevX memory and Open MPI's pml_ucx failed to create the UCP worker.",
    established_by="the issue's root cause and resolution (maintainer-side write-up): LimitMEMLOCK=infinity for "
    "docker.service, then the harness runs",
    mechanism="container runtime's default memlock (8 MiB) -> UCX DevX umem registration ENOMEM -> UCP worker fails",
    expect_signatures=["UCX-ERROR", "FABRIC-HOST-MEMORY"],
    expect_causes=["ucx-reg-limits", "memlock-limit"],
    notes="the issue's 'Observed Error' block, unchanged (the '[...]' lines are in the issue)",
)

# ---------------------------------------------------------------- EFA / OFI
log(
    "  NCCL INFO NET/Plugin: libnccl-net-ofi.so: /opt/rdma-core/build/lib/libibverbs.so.1: version "
    "`IBVERBS_PRIVATE_34' not found (required by\n"
    "  /usr/lib/x86_64-linux-gnu/libefa.so.1)\n"
    "  NCCL INFO NET/Plugin: Could not find: ofi\n",
    id="megatron-bridge-2824-hpcx-libibverbs-ibverbs-private-34-not-found",
    url="https://github.com/NVIDIA-NeMo/Megatron-Bridge/issues/2824",
    cause="NeMo 26.02.00 container on AWS H100: HPC-X's libibverbs (/opt/rdma-core/build/lib, IBVERBS_PRIVATE_59) "
    "was loaded instead of the system libibverbs (IBVERBS_PRIVATE_34) that libefa was built against, so the OFI "
    "plugin failed to load and NCCL used sockets.",
    established_by="reporter's analysis and minimal ctypes reproduction in the issue",
    mechanism="two rdma-core builds in the image, the wrong libibverbs loaded -> libefa symbol-version failure -> "
    "no OFI plugin",
    expect_signatures=["IBVERBS-SYMBOL-VERSION"],
    expect_causes=["built-against-other-rdma-core"],
    notes="the issue's first code block, unchanged: its first line is wrapped after '(required by' and every "
    "line keeps the two leading spaces",
)
log(
    "NCCL INFO GIN/Plugin: Successfully loaded external plugin /opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so\n"
    "NCCL INFO GIN/Plugin: Loaded gin plugin Libfabric_GDAKI (v14)\n"
    "NCCL INFO GIN/Plugin: Skipping plugin Libfabric index 3 type 2: NCCL_GIN_TYPE=5 requested\n"
    "NCCL INFO NET/OFI Initializing aws-ofi-nccl 1.21.1\n",
    id="awsome-distributed-ai-1239-efa-installer-ofi-plugin-loaded-negative",
    url="https://github.com/awslabs/awsome-distributed-ai/pull/1239",
    cause="(negative) the aws-ofi-nccl plugin bundled by the EFA installer (1.21.1) loads and NCCL picks the "
    "requested GIN type; the PR uses this output to show the image works.",
    established_by="reviewer's end-to-end validation in the merged PR (2 nodes, 16 ranks, run completed; "
    "NCCL_DEBUG=INFO showing the bundled plugin loaded on every rank)",
    mechanism="(negative) OFI plugin found and initialised",
    expect_signatures=[],
    negative=True,
    notes="four lines from the PR description's output, unchanged",
)

log(
    "NCCL INFO NCCL_IB_HCA set to rocep\n"
    "NCCL INFO NET/IB : Using [0]rocep161s0_dma:1/RoCE \u2026 [7]rocep202s0_dma:1/RoCE [RO]\n"
    "NCCL INFO Using network IB\n",
    id="aicr-1413-gb300-roce-nccl-ib-banner-negative",
    url="https://github.com/NVIDIA/aicr/issues/1413",
    cause="(negative) NCCL built-in IB over the eight ConnectX-8 RoCE devices of a GB300 node (NCCL_IB_HCA=rocep, "
    "OFI plugin bypassed); the run reached about 387 GB/s peak busbw.",
    established_by="maintainer's end-to-end validation comment in the issue",
    mechanism="(negative) RoCE NET transport selected as intended",
    expect_signatures=[],
    negative=True,
    notes="the three banner lines quoted in the comment of 2026-06-23, unchanged (the '\u2026' is the commenter's "
    "own elision)",
)

log(
    '$ fi_pingpong -p "verbs;ofi_rxd" -e rdm\n'
    "[error] util/pingpong.c:1580: fi_av_insert: number of addresses inserted = 0;\n"
    "                              number of addresses given = 1\n",
    id="libfabric-12673-verbs-rxd-link-local-gid-index-0",
    url="https://github.com/ofiwg/libfabric/issues/12673",
    cause="libfabric 2.6.0 verbs;ofi_rxd on RoCE v2 (Intel iRDMA): FI_VERBS_GID_IDX defaults to 0, which on these "
    "NICs is the link-local GID (fe80::...); a link-local GID has no route, so the UD path cannot build an address "
    "handle for the remote peer and fi_av_insert inserts nothing.",
    established_by="reporter's A/B in the issue: the same fi_pingpong with FI_VERBS_GID_IDX=1 (the routable "
    "::ffff:192.168.64.4 GID) runs at 5521 MB/s",
    mechanism="RoCE v2 GID index 0 is link-local -> remote address handle cannot be created -> av insert fails",
    expect_signatures=[],
    notes="the first three lines of the issue's first code block, unchanged (the continuation line keeps its "
    "indentation); the A/B run that follows is cut",
)

log(
    "[lxbk0609:07143] PMIX ERROR: ERROR in file gds_dstore.c at line 1244\n"
    "[lxbk0609:07143] PMIX ERROR: OUT-OF-RESOURCE in file gds_dstore.c at line 1017\n"
    "[lxbk0609:07143] PMIX ERROR: OUT-OF-RESOURCE in file gds_dstore.c at line 2234\n",
    id="singularity-5195-slurm-pmix-gds-dstore-in-container",
    url="https://github.com/apptainer/singularity/issues/5195",
    cause="Open MPI 3.1 in a Singularity 3.5 container launched by Slurm 18.08 with PMIx 2.2 (same version on host "
    "and in the container): PMIx's shared-memory job-data store (gds/dstore) failed during initialisation; with the "
    "gds/hash component instead the job ran without errors.",
    established_by="reporter's A/B in the issue: switching PMIx to the GDS/hash component works without errors",
    mechanism="PMIx gds/dstore shared-memory segments not usable across the container boundary -> PMIx init errors "
    "(gds/hash avoids them)",
    expect_signatures=[],
    notes="the three PMIx lines of the issue description, unchanged (the fence lines of three single quotes around "
    "them are dropped)",
)
log(
    "[node01:25301] PMIX ERROR: PMIX_ERR_OUT_OF_RESOURCE in file client/pmix_client.c at line 278\n"
    "[pspmix_0x000062d1[0:25297]:0]: PMIx_Init failed: PMIX_ERROR\n",
    id="openpmix-3204-pmix-5.0.1-client-gds-out-of-resource",
    url="https://github.com/openpmix/openpmix/issues/3204",
    cause="PMIx 5.0.1 on both server and client: PMIx_Init of the client failed with "
    "PMIX_ERR_OUT_OF_RESOURCE from the default gds component; PMIX_MCA_gds=hash on the client alone made it work.",
    established_by="reporter's A/B in the thread (PMIX_MCA_gds=hash on the client side removes the error); PMIx "
    "maintainer (rhc54): resolved on master and queued for PMIx v5.0.2",
    mechanism="PMIx 5.0.1 client gds shared-memory component defect -> PMIx_Init fails (fixed for 5.0.2; gds=hash "
    "avoids it)",
    expect_signatures=[],
    notes="the two log lines of the reporter's comment of 2023-12-01, unchanged",
)

log(
    "OPAL ERROR: Unreachable in file pmix3x_client.c at line 112\n"
    "--------------------------------------------------------------------------\n"
    'The application appears to have been direct launched using "srun",\n'
    "but OMPI was not built with SLURM's PMI support and therefore cannot\n"
    "execute. There are several options for building PMI support under\n"
    "SLURM, depending upon the SLURM version you are using:\n"
    "\n"
    "  version 16.05 or later: you can use SLURM's PMIx support. This\n"
    "  requires that you configure and build SLURM --with-pmix.\n"
    "\n"
    "  Versions earlier than 16.05: you must use either SLURM's PMI-1 or\n"
    "  PMI-2 support. SLURM builds PMI-1 by default, or you can manually\n"
    "  install PMI-2. You must then build Open MPI using --with-pmi pointing\n"
    "  to the SLURM PMI library location.\n"
    "\n"
    "Please configure as appropriate and try again.\n"
    "--------------------------------------------------------------------------\n"
    "*** An error occurred in MPI_Init\n"
    "*** on a NULL communicator\n"
    "*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,\n"
    "***    and potentially your MPI job)\n",
    id="picongpu-4962-ompi-direct-srun-without-slurm-pmi",
    url="https://github.com/ComputationalRadiationPhysics/picongpu/pull/4962",
    cause="A CI test started the MPI program directly under Slurm without mpiexec; the Open MPI build it used has no "
    "Slurm PMI support, so MPI_Init could not reach a PMIx server and aborted.",
    established_by="merged PR: the test now launches the program with mpiexec ('did not use mipexec and thus failed "
    "e.g. on hemera with the following error'), which fixes it",
    mechanism="Open MPI direct-launched by srun without Slurm PMI/PMIx support in the build -> MPI_Init fails",
    expect_signatures=[],
    notes="the PR description's error block, unchanged",
)


def write_readme(d: str) -> None:
    lines = [
        "# Sealed held-out logs #8",
        "",
        "Verbatim excerpts from public threads (lines unchanged; where the thread goes on, the excerpt ends). Built by "
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
        for k in (
            "id",
            "file",
            "url",
            "cause",
            "established_by",
            "mechanism",
            "expect_signatures",
        ):
            assert e.get(k) is not None and (e[k] != "" or k == "expect_signatures"), (
                e.get("id"),
                k,
            )
        with open(os.path.join(d, e["file"]), "w", encoding="utf-8") as fh:
            fh.write(TEXT[e["file"]])
    with open(os.path.join(d, "index.json"), "w", encoding="utf-8") as fh:
        json.dump(LOGS, fh, indent=1)
        fh.write("\n")
    write_readme(d)
    print(f"wrote {len(LOGS)} logs")


if __name__ == "__main__":
    main()
