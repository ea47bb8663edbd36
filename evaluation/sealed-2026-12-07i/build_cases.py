"""Build /work/sealed9/cases.json (the ninth sealed incident set) from the case list below.

Each case is in the format of the repo's tests/incidents/cases.json (loaded by tests/incidents/corpus.py), plus
`mechanism`, `expect_kind`, `sealed_source`, `cause`, `established_by`, `fix`, `seen`, `must_not`, `working`,
`assumptions`. Facts are as the thread states them; every fact added is listed in `assumptions`.

Collected 2026-12-07. Every source (owner/repo + issue/PR number, or page address) was checked with
exclusion-check.sh against `git -C /work/main grep` (whole tree, evaluation/ included), /work/shared, /work/sealed ..
/work/sealed8, /work/main/evaluation and bare '#N' in /work/main/src/imgcheck/data and /work/main/compat_matrix
(files/lines naming the upstream); see exclusion-check.txt (a candidate named in any earlier set's
exclusion-check.txt counts as a hit). No imgcheck rule was run to choose a case; docs/rules.md was read only to fill
`expect` / `must_not` afterwards.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

DESCRIPTION = (
    "SEALED held-out incident set #9 for imgcheck: public threads nobody on the team had read (none of these URLs "
    "or issue numbers appears in the repo, in /work/shared or in /work/sealed .. /work/sealed8 when collected). Same "
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


def gpus(name, n, cls="datacenter"):
    out = []
    for i in range(n):
        g = {"index": i, "name": name}
        if cls:
            g["gpu_class"] = cls
        out.append(g)
    return out


def efa(n, prefix="rdmap"):
    return [{"name": f"{prefix}{i}s0", "driver": "efa"} for i in range(n)]


# ================================================================================ CUDA userspace vs node driver
case(
    id="cutlass-2866-cuda13-cuda-python-on-r575-insufficient-driver",
    url="https://github.com/NVIDIA/cutlass/issues/2866",
    cause="CuTe DSL's Blackwell example (examples/python/CuTeDSL/blackwell/dense_gemm.py) failed with "
    "cudaErrorInsufficientDriver: the Python environment had cuda-python 13.x, which needs an R580 or newer "
    "driver, on nodes with driver 570.133.20 (reporter) and a 575 driver (second reporter).",
    established_by="NVIDIA maintainer (brandon-yujie-sun): 'if you have a 13.0+ cuda-python installed, it won't work "
    "as 13.0+ cuda-python requires 580+ driver. You would need to install a 12.9 cuda-python'; quoting the second "
    "reporter 'Everything works with CUDA driver version 580.95.05' ('Yes this is expected')",
    fix="upgrade the node driver to R580 or newer, or pin cuda-python 12.9 in the image",
    seen=None,
    image={
        "profile": "no-rdma-userspace",
        "reference": "CUTLASS CuTe DSL python environment with cuda-python 13.x",
        "cuda": {"version": "13.0", "origin": "pip cuda-python"},
    },
    node={
        "name": "blackwell-node",
        "gpu": {"driver_version": "575.57.08", "gpus": gpus("NVIDIA B200", 1)},
    },
    job={"runtime": "bare-metal", "kind": "python examples/python/CuTeDSL/blackwell/dense_gemm.py"},
    working={"node": {"gpu": {"driver_version": "580.95.05"}}, "absent": ["CUDA-DRIVER-TOO-OLD"]},
    assumptions=[
        "the failing configuration is the second reporter's (a 575 driver with cuda-python 13.x, as the maintainer "
        "reads it); the exact 575 build 575.57.08 is illustrative",
        "cuda-python 13.x is modelled as the image's CUDA 13.0 userspace (origin 'pip cuda-python'); the thread "
        "names the cuda-python major only",
        "the GPU is a Blackwell part (the example is the Blackwell dense GEMM); B200 and one GPU are illustrative",
        "no container is named; bare-metal is illustrative",
        "the working variant is the driver the second reporter names (580.95.05) with the same environment",
    ],
    expect=[{"id": "CUDA-DRIVER-TOO-OLD", "severity": "error"}],
    must_not=[],
    mechanism="CUDA 13 user-space (cuda-python 13.x) on a node driver older than R580: every CUDA call returns "
    "cudaErrorInsufficientDriver.",
    expect_kind="image-vs-node CUDA minimum driver rule",
)

# ================================================================================ EFA / aws-ofi-nccl / GIN
case(
    id="aws-ofi-nccl-1061-gin-proxy-p5-rail-mismatch-needs-force-num-rails",
    url="https://github.com/aws/aws-ofi-nccl/issues/1061",
    cause="NCCL 2.28.9 with GIN (GPU-Initiated Networking) proxy backend (NCCL_GIN_TYPE=2) and aws-ofi-nccl "
    "v1.16.3/v1.17.2 on two HyperPod p5.48xlarge nodes: the EFA devices report different rail counts (1-3 rails per "
    "device) and GIN's proxy backend needs the same rail layout on every device, so every connection failed with "
    "'NET/OFI Unexpected number of remote rails' and NCCL returned 'internal error'.",
    established_by="reporter's verified fix (dmvevents, who filed NVIDIA/nccl#1921 the same day with the same "
    "errors): OFI_NCCL_FORCE_NUM_RAILS=4 is 'required for NCCL GIN to work with AWS EFA on P5 instances'; "
    "without it 'users experience complete failure with rail mismatch errors'",
    fix="set OFI_NCCL_FORCE_NUM_RAILS=4 in the job environment when GIN proxy mode is enabled on P5 (or leave GIN off)",
    seen="NET/OFI Unexpected number of remote rails for dev 0. Expected 3 but got 2",
    image={
        "profile": "efa-installer",
        "reference": "public.ecr.aws/hpc-cloud/nccl-tests with NCCL 2.28.9 and aws-ofi-nccl built from source",
        "nccl": [{"version": "2.28.9", "origin": "built", "path": "/workspace/nccl/build/lib/libnccl.so.2"}],
        "nccl_net_plugins": [{"name": "aws-ofi-nccl", "path": "/workspace/aws-ofi-nccl/install/lib/libnccl-net.so"}],
    },
    node={
        "name": "hyperpod-p5-48xlarge",
        "rdma": {"stack": "inbox", "devices": efa(32)},
        "gpu": {"gpus": gpus("NVIDIA H100 80GB HBM3", 8)},
        "labels": {"node.kubernetes.io/instance-type": "ml.p5.48xlarge"},
    },
    job={
        "runtime": "kubernetes",
        "kind": "mpirun all_reduce_perf",
        "ranks_per_node": 8,
        "env": {
            "NCCL_GIN_ENABLE": "1",
            "NCCL_GIN_TYPE": "2",
            "FI_PROVIDER": "efa",
            "FI_EFA_USE_DEVICE_RDMA": "1",
            "FI_EFA_FORK_SAFE": "1",
        },
    },
    working={
        "job": {"env": {"OFI_NCCL_FORCE_NUM_RAILS": "4"}},
        "absent": ["EFA-NO-OFI-PLUGIN", "OFI-PLUGIN-LIBFABRIC-TOO-OLD"],
    },
    assumptions=[
        "the image, plugin path and env are those of the same reporter's NVIDIA/nccl#1913 setup (GIN env, "
        "FI_* settings, /workspace build paths); #1061 itself names NCCL 2.28.9, aws-ofi-nccl v1.16.3/v1.17.2, "
        "HyperPod P5.48xlarge and 16 GPUs on 2 nodes",
        "32 EFA devices per node (the #1913 environment); device names are illustrative",
        "the launch is modelled as mpirun inside a Kubernetes (HyperPod) pod; ranks_per_node 8 follows '16 GPUs "
        "across 2 nodes'",
    ],
    expect=[],
    must_not=["EFA-NO-OFI-PLUGIN", "OFI-PLUGIN-LIBFABRIC-TOO-OLD", "JOB-RDMA-DEVICES-NOT-EXPOSED"],
    mechanism="GIN proxy backend over aws-ofi-nccl expects one rail layout on every EFA device; P5 devices report "
    "1-3 rails, so connection setup fails (internal error) unless the plugin is told a fixed rail count.",
    expect_kind="NCCL-feature x network-plugin setting rule (GIN proxy on multi-rail EFA; no rule names it today)",
)

case(
    id="aws-ofi-nccl-1369-efa-gdaki-node-requirements",
    url="https://github.com/aws/aws-ofi-nccl/issues/1369",
    cause="The GIN kernel-initiated fast path (EFA GDA / GDAKI, aws-ofi-nccl 1.21) needs node and driver pieces the "
    "release notes did not list: an rdma-core with the efadv completion-counter API (libfabric built against it), "
    "efa.ko >= 3.3.0 and the NVIDIA driver module option PeerMappingOverride=1; without them the plugin cannot open "
    "its counters or map EFA device memory into the GPU address space.",
    established_by="aws-ofi-nccl maintainer (rauteric): requirements added to the getting-started doc (PR #1371: "
    "rdma-core, efa driver, 'the required NVIDIA driver option, PeerMappingOverride=1', GDRCopy 2.5), error messages "
    "improved (PR #1378: 'Libfabric compiled with an older rdma-core', 'likely due to missing NVIDIA driver flag "
    "PeerMappingOverride=1'), EFA installer 1.50.0 ships all required versions; both PRs merged and the issue closed",
    fix="install EFA installer >= 1.50.0 on the node (rdma-core, efa.ko, libfabric, plugin) and load the NVIDIA "
    "driver with PeerMappingOverride=1; or use the GIN proxy mode",
    seen=None,
    image={
        "profile": "efa-installer",
        "reference": "training image with aws-ofi-nccl 1.21 and NCCL with GIN (EFA GDA)",
        "nccl": [
            {
                "version": "2.31.2",
                "origin": "pip:nvidia-nccl-cu13",
                "path": "/usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2",
            }
        ],
        "nccl_net_plugins": [{"name": "aws-ofi-nccl", "path": "/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so"}],
    },
    node={
        "name": "p6-b200",
        "rdma": {"stack": "inbox", "devices": efa(8)},
        "gpu": {"driver_version": "580.95.05", "gpus": gpus("NVIDIA B200", 8)},
        "labels": {"node.kubernetes.io/instance-type": "p6-b200.48xlarge"},
    },
    job={
        "runtime": "bare-metal",
        "kind": "mpirun all_reduce_perf",
        "env": {"NCCL_GIN_TYPE": "5", "FI_PROVIDER": "efa"},
    },
    assumptions=[
        "the reporter's instance, driver and NCCL are not in the excerpt: P6-B200 (a supported EFA-GDA type per "
        "PR #1371), driver 580.95.05, NCCL 2.31.2 (the release aws-ofi-nccl 1.21 was tested with) and 8 EFA "
        "devices are illustrative",
        "NCCL_GIN_TYPE=5 is how the 1.21 release notes say EFA GDA is enabled; assumed for the job",
        "rdma-core without the comp-cntr API, efa.ko < 3.3.0 and the missing PeerMappingOverride=1 are the "
        "thread's three named requirements; none of them is a node fact imgcheck reads",
    ],
    expect=[],
    must_not=["EFA-NO-OFI-PLUGIN"],
    mechanism="EFA GDA (GIN kernel path) needs node rdma-core with efadv comp-cntr, efa.ko >= 3.3.0 and the NVIDIA "
    "driver option PeerMappingOverride=1; an older node stack fails counter open / device-memory mapping.",
    expect_kind="node-stack requirement rule for an NCCL feature (EFA GDA); no rule names it today",
)

case(
    id="aws-ofi-nccl-1301-gin-device-type-enum-renumbered-in-nccl-2.30.7",
    url="https://github.com/aws/aws-ofi-nccl/pull/1301",
    cause="NCCL 2.30.7 inserted NCCL_NET_DEVICE_GIN_GPI=4 and renumbered NCCL_NET_DEVICE_GIN_EFA_GDA from 4 to 5; "
    "aws-ofi-nccl's vendored net_device.h still had EFA_GDA=4, so the GDAKI plugin advertised netDeviceType=4 while "
    "NCCL (NCCL_GIN_TYPE=5) expected 5 and skipped the plugin ('GIN support not enabled').",
    established_by="merged aws-ofi-nccl PR (akkart-aws, 2026-06-25) syncing the vendored GIN type enum to NCCL 2.30.7, "
    "with this diagnosis in its description",
    fix="use an aws-ofi-nccl build with the synced net_device.h (after PR #1301) with NCCL >= 2.30.7",
    seen="GIN support not enabled",
    image={
        "profile": "efa-installer",
        "reference": "image with NCCL 2.30.7 and aws-ofi-nccl built from main before 2026-06-25",
        "nccl": [
            {
                "version": "2.30.7",
                "origin": "pip:nvidia-nccl-cu13",
                "path": "/usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2",
            }
        ],
        "nccl_net_plugins": [{"name": "aws-ofi-nccl", "path": "/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so"}],
    },
    node={
        "name": "p6-b200",
        "rdma": {"stack": "inbox", "devices": efa(8)},
        "gpu": {"gpus": gpus("NVIDIA B200", 8)},
    },
    job={"runtime": "bare-metal", "kind": "mpirun all_reduce_perf", "env": {"NCCL_GIN_TYPE": "5"}},
    assumptions=[
        "instance, GPUs, EFA device count and the pip origin of NCCL are illustrative; the PR names NCCL 2.30.7 "
        "and NCCL_GIN_TYPE=5",
        "the plugin build date (main before the PR) is how the defect is modelled; the plugin version is not a fact "
        "the PR states",
    ],
    expect=[],
    must_not=["EFA-NO-OFI-PLUGIN"],
    mechanism="Plugin/NCCL release skew in a device-API enum: the plugin's stale GIN device type makes NCCL 2.30.7 "
    "skip it for GIN (no error, GIN silently off).",
    expect_kind="network-plugin x NCCL release compatibility rule (GIN device-type enum); no rule names it today",
    sealed_source="issues (merged PR)",
)

# ================================================================================ NCCL copies / wheels in the image
case(
    id="cugraph-4465-container-libnccl-2.16-shadows-torch-wheel-nccl",
    url="https://github.com/rapidsai/cugraph/issues/4465",
    cause="In RAPIDS CI wheel-test containers cupy used the container's built-in libnccl.so (2.16.2) while torch>=2.2 "
    "links the libnccl.so from the nvidia-nccl-cu11 wheel (2.20.5); when cupy was imported first, the older NCCL was "
    "already loaded and 'import torch' failed with 'undefined symbol: ncclCommRegister'.",
    established_by="reporter's root cause in the issue description ('The root cause is that cupy points to the "
    "builtin libnccl.so (2.16.2) in the container, while pytorch links to libnccl.so (2.20.5) from the "
    "nvidia-nccl-cu11 wheel ... When cupy is imported before torch, the older nccl in the system path shadows the "
    "version needed by pytorch'), with the import-order workaround ('always import torch first')",
    fix="remove the older libnccl from the image (or make cupy use the wheel's NCCL); import torch before cupy as a "
    "workaround",
    seen="undefined symbol: ncclCommRegister",
    image={
        "profile": "no-rdma-userspace",
        "reference": "RAPIDS CI wheel-tests container (CUDA 11, Python 3.9.19)",
        "nccl": [
            {"version": "2.16.2", "origin": "library", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.16.2"},
            {
                "version": "2.20.5",
                "origin": "pip:nvidia-nccl-cu11",
                "path": "/pyenv/versions/3.9.19/lib/python3.9/site-packages/nvidia/nccl/lib/libnccl.so.2",
            },
        ],
    },
    node={"name": "ci-gpu-runner", "gpu": {"gpus": gpus("NVIDIA A100-SXM4-80GB", 1)}},
    job={"runtime": "docker", "kind": "pytest (wheel-tests)"},
    assumptions=[
        "the path of the container's NCCL 2.16.2 (/usr/lib/x86_64-linux-gnu) is illustrative; the thread says "
        "'builtin libnccl.so (2.16.2) in the container' / 'system path'",
        "the wheel path follows the traceback's /pyenv/versions/3.9.19 site-packages; nvidia-nccl-cu11 2.20.5 is "
        "stated",
        "the CI runner GPU is illustrative",
    ],
    expect=[{"id": "NCCL-OLDER-COPY-LOADED", "severity": "warning"}],
    must_not=["NCCL-WHEELS-TWO-CUDA-MAJORS"],
    mechanism="Two libnccl.so.2 in one image: the older system copy (2.16.2) is loaded first (via cupy) and torch's "
    "libtorch_cuda.so binds to it, missing symbols of the 2.20.5 it was built for.",
    expect_kind="image rule (two NCCL copies, the older one resolved first)",
)

case(
    id="pytorch-156888-aarch64-cu129-wheel-without-libnccl",
    url="https://github.com/pytorch/pytorch/pull/156888",
    cause="The aarch64 CUDA 12.9 PyTorch nightly wheel was built with USE_SYSTEM_NCCL=1 (pytorch#152835), so "
    "libtorch links libnccl.so.2 dynamically, but the wheel shipped no libnccl.so.2 (and pulled none in): "
    "'import torch' failed with 'libnccl.so.2: cannot open shared object file'.",
    established_by="PyTorch PR by NVIDIA (tinglvv) copying libnccl.so into the aarch64 CUDA wheel, with this diagnosis "
    "and the traceback; reviewed by the release maintainer (atalman)",
    fix="use a wheel that ships or depends on libnccl.so.2 (after the fix), or install the matching nvidia-nccl wheel",
    seen="ImportError: libnccl.so.2: cannot open shared object file: No such file or directory",
    image={
        "profile": "no-rdma-userspace",
        "reference": "python 3.12 aarch64 image with torch nightly cu129 (June 2025)",
        "platform": "linux/arm64",
        "cuda": {"version": "12.9", "origin": "pip"},
        "nccl": [],
    },
    node={"name": "gh200-node", "arch": "aarch64", "gpu": {"gpus": gpus("NVIDIA GH200 480GB", 1)}},
    job={"runtime": "docker", "kind": "python -c 'import torch'"},
    assumptions=[
        "node (GH200, aarch64) is illustrative; the PR says 'latest 12.9 arm nightly wheel'",
        "nccl [] models 'the wheel is missing the NCCL lib' (no libnccl.so.2 anywhere in the image); the "
        "traceback's /usr/local/lib/python3.12/dist-packages is a system-Python image",
    ],
    expect=[],
    must_not=["PLATFORM-ARCH-MISMATCH"],
    mechanism="Framework wheel packaging defect: torch links libnccl.so.2 dynamically but the wheel ships no NCCL, "
    "so the import fails before any GPU work.",
    expect_kind="image rule (a library the framework links is absent from the image); no rule names it today",
    sealed_source="issues (merged PR)",
)

# ================================================================================ launch spec / settings
case(
    id="miaai-dspark-11-one-gid-index-for-both-nodes",
    url="https://github.com/MiaAI-Lab/DeepSeek-v4-Flash-DSpark-2x-DGX-Spark/pull/11",
    cause="Two DGX Spark nodes (TP=2 over the ConnectX-7 RoCE link, vLLM in Docker Compose) were launched with one "
    "NCCL_IB_GID_INDEX value for both ranks; the RoCEv2 IPv4 GID index differs per node and can drift across reboots "
    "and link events, so with the head's index on the worker NCCL failed at init with 'unhandled system error'.",
    established_by="merged PR by the repository owner (MiaAI-Lab) adding a per-node worker GID index injected by the "
    "launcher, after PR #10; the problem statement calls it 'the #1 troubleshooting item in the howtospark "
    "dual-spark guide'",
    fix="set NCCL_IB_GID_INDEX per node from each node's GID table (show_gids), or leave it unset on NCCL >= 2.21.5",
    seen="unhandled system error",
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "vLLM DeepSeek-V4-Flash DGX Spark image (docker-compose.dspark.yml)",
        "platform": "linux/arm64",
    },
    node={
        "name": "spark-worker",
        "arch": "aarch64",
        "rdma": {
            "stack": "mlnx_ofed",
            "devices": [
                {"name": "rocep1s0f1", "driver": "mlx5_core", "link_layer": "Ethernet"},
                {"name": "roceP2p1s0f1", "driver": "mlx5_core", "link_layer": "Ethernet"},
            ],
        },
        "gpu": {"gpus": gpus("NVIDIA GB10", 1, None)},
    },
    job={
        "runtime": "docker",
        "kind": "docker compose (worker, rank 1)",
        "host_network": True,
        "env": {"NCCL_IB_GID_INDEX": "3"},
    },
    assumptions=[
        "the value 3 is the PR's example of a shared IPv4 index; the worker's real index is not given, so its GID "
        "table is left out (unknown) rather than invented",
        "device names rocep1s0f1 / roceP2p1s0f1 are those of DGX Spark launch logs in the same repository; the "
        "RDMA stack (MLNX_OFED/DOCA) and image rdma-core profile are illustrative",
        "one GB10 GPU per node (DGX Spark)",
    ],
    expect=[],
    must_not=[],
    mechanism="One cluster-wide NCCL_IB_GID_INDEX on RoCE nodes whose GID tables differ: the worker's queue pairs use "
    "the wrong GID entry and NCCL init fails.",
    expect_kind="fleet rule (FLEET-ROCE-GID-INDEX-DIFFERS names it but needs both nodes' GID tables; a one-node "
    "case without the table cannot show it)",
    sealed_source="issues (merged PR)",
)

case(
    id="thomaskalnik-deepseek-v3-part4-device-order-duplicate-gpu",
    url="https://www.thomaskalnik.com/posts/deepseek-v3-part-4-nccl-networking-stability",
    cause="A 3-node torchrun + DeepSpeed ZeRO-3 job (8x A100-SXM4-80GB per node, LLaMA-Factory containers with "
    "--network host) failed with NCCL duplicate-GPU errors ('rank 27 and rank 19 both on CUDA device 53000'); the "
    "author traced it to inconsistent GPU enumeration order and fixed it with CUDA_DEVICE_ORDER=PCI_BUS_ID.",
    established_by="author's verified fix on the page: 'Root cause: inconsistent device ordering across nodes. Fix: "
    "export CUDA_DEVICE_ORDER=PCI_BUS_ID' - 'That forced consistent GPU enumeration and eliminated cross-node device "
    "aliasing'",
    fix="export CUDA_DEVICE_ORDER=PCI_BUS_ID in every rank's environment",
    seen="Error: rank 27 and rank 19 both on CUDA device 53000 (PCI 53:00.0)",
    image={"profile": "no-rdma-userspace", "reference": "hiyouga/llamafactory:latest"},
    node={
        "name": "a100-node",
        "gpu": {"gpus": gpus("NVIDIA A100-SXM4-80GB", 8)},
    },
    job={
        "runtime": "docker",
        "kind": "torchrun --nnodes=3 --nproc_per_node=8 (docker exec)",
        "host_network": True,
        "host_ipc": True,
        "ranks_per_node": 8,
        "env": {
            "CUDA_VISIBLE_DEVICES": "0,1,2,3,4,5,6,7",
            "LOCAL_WORLD_SIZE": "8",
            "NCCL_SOCKET_IFNAME": "eth0",
            "GLOO_SOCKET_IFNAME": "eth0",
            "NCCL_P2P_DISABLE": "1",
            "NCCL_IB_DISABLE": "1",
            "NCCL_SHM_DISABLE": "1",
        },
    },
    working={"job": {"env": {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}}, "absent": []},
    assumptions=[
        "the job env is the page series' Part 2 launch environment without CUDA_DEVICE_ORDER (the fix); the "
        "series says IB/P2P/SHM were disabled for the smoke test",
        "NVSwitch backplanes are stated (Part 1) but not modelled",
        "the docker run flags (--network host, --ipc host, --gpus all) are from Part 1",
    ],
    expect=[],
    must_not=["ENV-DISABLES-IB"],
    mechanism="Ranks mapped LOCAL_RANK to CUDA device indices under the default (fastest-first) enumeration, which "
    "did not match PCI order consistently; two ranks landed on one GPU and NCCL refused ('both on CUDA device').",
    expect_kind="launch-spec rule (GPU enumeration order / rank-to-GPU mapping); no rule names it today",
    sealed_source="pages",
)


# ================================================================================ launch limits / UCX release
case(
    id="nvidia-container-toolkit-2037-non-root-ipc-lock-inert-containerd-memlock-8mib",
    url="https://github.com/NVIDIA/nvidia-container-toolkit/issues/2037",
    cause="On Kubernetes 1.36 / containerd 2.3.3 (toolkit v1.19.1 via GPU Operator) every container inherits "
    "containerd's systemd LimitMEMLOCK default (8 MiB); the pod adds IPC_LOCK, but the container runs as uid 1000, "
    "and capabilities added through securityContext never reach a non-root process's effective set, so ibv_reg_mr "
    "fails with ENOMEM and NCCL falls back to TCP sockets.",
    established_by="reporter's measured A/B on the same image and node: uid 1000 + IPC_LOCK -> CapEff "
    "0000000000000000, ulimit -l 8192 KB, mlock of 64 MiB -> ENOMEM; uid 0 + IPC_LOCK -> capability effective, "
    "mlock of 1 GiB OK",
    fix="raise the runtime's limit (LimitMEMLOCK=infinity for containerd, or a per-runtime rlimit), or run the RDMA "
    "container as root with IPC_LOCK",
    seen=None,
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "non-root (uid 1000) GPU image with NCCL",
        "nccl": [
            {
                "version": "2.27.3",
                "origin": "pip:nvidia-nccl-cu12",
                "path": "/usr/local/lib/python3.12/dist-packages/nvidia/nccl/lib/libnccl.so.2",
            }
        ],
    },
    node={
        "name": "k8s-gpu-node",
        "rdma": {
            "stack": "mlnx_ofed",
            "devices": [{"name": f"mlx5_{i}", "driver": "mlx5_core", "link_layer": "InfiniBand"} for i in range(8)],
        },
        "gpu": {"gpus": gpus("NVIDIA H100 80GB HBM3", 8)},
        "limits": {"memlock_kib": 8192},
    },
    job={
        "runtime": "kubernetes",
        "kind": "Pod",
        "cap_add": ["IPC_LOCK"],
        "resources": {"nvidia.com/gpu": "8", "rdma/ib": "1"},
    },
    assumptions=[
        "the image is not named ('same image'); NCCL 2.27.3 from a pip wheel and the rdma-core profile are "
        "illustrative; the uid 1000 user is stated but not a fact the case format carries",
        "node hardware (8 H100, 8 IB HCAs, MLNX_OFED) and the RDMA resource name are illustrative; the thread "
        "names Kubernetes 1.36, containerd 2.3.3 and toolkit v1.19.1 via GPU Operator",
        "node.limits memlock_kib 8192 is the measured 'ulimit -l 8192 KB' inside the container",
    ],
    expect=[{"id": "MEMLOCK-TOO-LOW", "severity": "error"}],
    must_not=["JOB-NO-IPC-LOCK"],
    mechanism="RLIMIT_MEMLOCK inherited from containerd (8 MiB) with IPC_LOCK added but ineffective for a non-root "
    "container: RDMA registration fails with ENOMEM and NCCL falls back to sockets.",
    expect_kind="node/launch limit rule (inherited memlock limit; the non-root capability loss is not a case fact)",
)

case(
    id="rapidsai-ucxx-733-ucx-1.21-cuda-ipc-same-process-gpu-oom",
    url="https://github.com/rapidsai/ucxx/issues/733",
    cause="With UCX 1.21 same-process / same-GPU transfers over cuda_ipc can run the GPU out of memory "
    "(openucx/ucx#11854); RAPIDS CI on L4 runners hit host- or device-side OOMs after allowing UCX 1.21.",
    established_by="UCX-Py/UCXX maintainer (pentschev): the OOM is the UCX issue openucx/ucx#11854 (fix "
    "openucx/ucx#11855), worked around with UCX_TLS=^cuda_ipc; 'The issue has already been fixed in UCX v1.22 and "
    "above', so PR #734 disables CUDA IPC for 1.21.* only (merged)",
    fix="use UCX >= 1.22, or set UCX_TLS=^cuda_ipc with UCX 1.21",
    seen=None,
    image={
        "profile": "no-rdma-userspace",
        "reference": "RAPIDS UCXX CI conda environment (cuda 12.9) with ucx 1.21.0",
        "ucx": {"version": "1.21.0", "origin": "conda", "path": "/opt/conda/lib/libucp.so.0"},
    },
    node={"name": "ci-l4", "gpu": {"gpus": gpus("NVIDIA L4", 1)}},
    job={"runtime": "docker", "kind": "ci/run_*.sh (pytest)"},
    working={"job": {"env": {"UCX_TLS": "^cuda_ipc"}}, "absent": []},
    assumptions=[
        "the conda prefix path of libucp and the single L4 GPU are illustrative; #727 says the OOMs were on L4 "
        "instances and #733 that CI has no multi-GPU tests",
        "the working variant is the CI workaround the thread applied (UCX_TLS=^cuda_ipc)",
    ],
    expect=[],
    must_not=[],
    mechanism="UCX 1.21 release defect: cuda_ipc between peers in the same process on one GPU leaks/over-allocates "
    "device memory until OOM; fixed in UCX 1.22.",
    expect_kind="UCX release known-issue rule; no rule names it today",
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
