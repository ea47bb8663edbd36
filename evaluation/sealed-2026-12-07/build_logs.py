"""Build /work/sealed/logs/index.json: one entry per verbatim log excerpt in logs/.

Each file holds lines copied from the public thread named in `url` (trimmed to the lines that matter, lines
never edited; where the thread quotes several blocks of one log, they are kept in log order and `notes` says so).
`expect_signatures`: ids from src/imgcheck/data/triage/signatures.json that would be right today ([] if none).
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
LOGS = []


def log(**kw):
    kw.setdefault("sealed_source", "issues")
    LOGS.append(kw)


log(
    id="aws-do-eks-pr69-gloo-loopback",
    file="aws-do-eks-pr69-gloo-loopback.log",
    url="https://github.com/aws-samples/aws-do-eks/pull/69",
    cause="Under hostNetwork the pod's hostname resolves only to 127.0.0.1, so torch Gloo bound/advertised "
    "loopback and cross-node connectFullMesh got Connection refused; the Ray ActorHandleNotFoundError is a "
    "consequence of the restart.",
    established_by="PR root cause with in-pod measurements; merged fix setting GLOO_SOCKET_IFNAME",
    mechanism="Gloo default device from gethostname() -> 127.0.0.1 under hostNetwork; ECONNREFUSED from loopback",
    expect_signatures=[],
    fabric_at_fault=False,
    notes="two blocks quoted by the PR; the PR says the Gloo failure is earlier in the same log, so it is first here",
)
log(
    id="aws-do-eks-pr50-gloo-loopback-fallback",
    file="aws-do-eks-pr50-gloo-loopback-fallback.log",
    url="https://github.com/aws-samples/aws-do-eks/pull/50",
    cause="vLLM's Gloo world group could not map the pod hostname (hostNetwork) to a routable address and fell "
    "back to 127.0.0.1; cross-node ranks connected to their own loopback and were refused.",
    established_by="PR root cause; merged fix (then corrected by PR 51 to a concrete GLOO_SOCKET_IFNAME)",
    mechanism="Gloo loopback fallback when the hostname does not resolve to a local routable address",
    expect_signatures=[],
    fabric_at_fault=False,
    notes="the PR's excerpt contains its own '...' elisions; lines otherwise as quoted",
)
log(
    id="aws-do-eks-pr51-gloo-ifname-syntax",
    file="aws-do-eks-pr51-gloo-ifname-syntax.log",
    url="https://github.com/aws-samples/aws-do-eks/pull/51",
    cause="GLOO_SOCKET_IFNAME was given NCCL's exclusion syntax '^lo,docker,veth,eni'; Gloo takes one interface "
    "name and found none called '^lo'.",
    established_by="PR author's diagnosis of their own earlier change; merged fix",
    mechanism="GLOO_SOCKET_IFNAME value is not an interface name (NCCL '^' list syntax)",
    expect_signatures=[],
    fabric_at_fault=False,
)
log(
    id="aws-do-eks-pr54-pod-identity-link",
    file="aws-do-eks-pr54-pod-identity-link.log",
    url="https://github.com/aws-samples/aws-do-eks/pull/54",
    cause="EFA failed to initialise on the node (no eligible libfabric provider) so NCCL fell back to sockets, "
    "and NCCL_SOCKET_IFNAME=^lo,docker,veth,eni admitted the EKS Pod Identity link-local pod-id-link0 "
    "(169.254.170.x); peers' connects to it were refused.",
    established_by="NCCL_DEBUG=INFO output in the PR; merged fix excluding pod-id-link0",
    mechanism="socket fallback advertises a non-routable link-local interface admitted by the exclusion list",
    expect_signatures=["NCCL-SOCKET-CONNECT"],
    fabric_at_fault=True,
    notes="annotated lines of the PR's excerpt (with arrows) left out; the remaining lines are as quoted",
)
log(
    id="libfabric-12708-efa-open-device",
    file="libfabric-12708-efa-open-device.log",
    url="https://github.com/ofiwg/libfabric/issues/12708",
    cause="In a Kubernetes pod, a non-EFA verbs device on the host (ConnectX of an HGX B200) is visible in sysfs "
    "but not openable; libfabric's EFA provider aborts its whole device list on that open failure, so fi_getinfo "
    "returns -61 although EFA devices are present.",
    established_by="issue analysis of efa_device_list_initialize(); fixed by ofiwg/libfabric PR 12744 (merged)",
    mechanism="EFA provider init aborts on the first unopenable verbs device (ibv_open_device fails in the pod)",
    expect_signatures=["EFA-NO-DEVICE"],
    fabric_at_fault=False,
    notes="the '...' in the libfabric prefixes are the reporter's elisions",
)
log(
    id="awsome-distributed-ai-312-qpn-oom",
    file="awsome-distributed-ai-312-qpn-oom.log",
    url="https://github.com/awslabs/awsome-distributed-ai/issues/312",
    cause="The NCCL-tests container was limited to 8 GB and a rank ran out of memory; the EFA QPN error on the "
    "peers is a consequence. Not a fabric problem.",
    established_by="the AWS maintainer who filed it: 'but is really an OOM issue'; fix raises the memory limit",
    mechanism="container memory limit -> rank OOM -> peer EFA sends to a vanished QP (Invalid receiver QPN)",
    expect_signatures=[],
    fabric_at_fault=False,
)
log(
    id="gardener-aws-1832-efa-4126",
    file="gardener-aws-1832-efa-4126.log",
    url="https://github.com/gardener/gardener-extension-provider-aws/issues/1832",
    cause="The worker security group lacked a self-referencing egress rule; EFA SRD traffic is only matched by "
    "security-group-id rules, so the EFA handshake failed.",
    established_by="issue investigation; merged fix gardener-extension-provider-aws PR 1833",
    mechanism="cloud security group blocks EFA SRD traffic (no self-referencing egress)",
    expect_signatures=[],
    fabric_at_fault=True,
    notes="the error text as quoted inline in the issue",
)
log(
    id="sglang-pr1427-no-libibverbs",
    file="sglang-pr1427-no-libibverbs.log",
    url="https://github.com/sgl-project/sglang/pull/1427",
    cause="The sglang image had no libibverbs; NCCL used sockets over ib0.",
    established_by="merged PR adding libibverbs-dev to the Dockerfile",
    mechanism="no libibverbs in the image -> NET/IB disabled -> socket transport",
    expect_signatures=["LIBIBVERBS-MISSING"],
    fabric_at_fault=False,
    notes="the '...' lines of the PR's excerpt left out; '<ip>' is the PR's redaction",
)
log(
    id="nemo-run-266-net-id-0",
    file="nemo-run-266-net-id-0.log",
    url="https://github.com/NVIDIA-NeMo/Run/issues/266",
    cause="The NCCL in the NeMo container hit the tree-search fallback with a hard-coded NET id 0 that NIC fusion "
    "had removed; upgrading NCCL to 2.27 fixed it.",
    established_by="the same reporter (bhaddow) in NVIDIA-NeMo/Speech#13854: 'the cause was the same as #13996 - "
    "upgrading to NCCL 2.27 fixes the problem'; NCCL developer diagnosis in NVIDIA/nccl#1748",
    mechanism="NCCL release bug: 'Could not find NET with id 0' after 'Could not find a path for pattern 1'",
    expect_signatures=[],
    notes_on_expect="NCCL-ERR-3 matches the internal error, but its causes (connectivity/layout, Xid) do not name "
    "the NCCL-version mechanism; no signature names it today",
    fabric_at_fault=False,
)

log(
    id="aws-ofi-nccl-107-eq-enomem",
    file="aws-ofi-nccl-107-eq-enomem.log",
    url="https://github.com/aws/aws-ofi-nccl/issues/107",
    cause="docker run without --ulimit memlock on the Ubuntu AMI: the container's memlock limit was the low "
    "default and libfabric's EFA provider failed with -12 (ENOMEM); the same image worked on AL2.",
    established_by="the reporter's follow-up in aws/aws-ofi-nccl#106 ('we add --ulimit memlock=-1 due to #107')",
    mechanism="container RLIMIT_MEMLOCK too low for EFA registrations/queues -> ENOMEM (-12)",
    expect_signatures=[],
    expect_cause="memlock (in the container)",
    fabric_at_fault=False,
)
log(
    id="miaai-v41-14-kernel7-enomem",
    file="miaai-v41-14-kernel7-enomem.log",
    url="https://github.com/MiaAI-Lab/DeepSeek-v4.1-Flash-DGX-Sparks/issues/14",
    cause="Kernel 7.0.0-1019-nvidia on GB10 (DGX Spark): long-term pinning fails (default-enabled KHO hands memory "
    "back as CMA pageblocks); the same systems work on 6.17.0-1032 with driver, NCCL and container unchanged.",
    established_by="the reporter's A/B across kernels with everything else held constant; 'NVIDIA is aware of this "
    "bug on the kernel'; root-caused in NVIDIA/NV-Kernels PR 590/591 (KHO, kho=off fixes)",
    mechanism="kernel-side pinning failure (ENOMEM from pin_user_pages under KHO CMA), not RLIMIT_MEMLOCK",
    expect_signatures=["IBV-REG-MR-ENOMEM"],
    expect_cause="kernel-pinning",
    fabric_at_fault=False,
)
log(
    id="azhpc-images-327-graph-file",
    file="azhpc-images-327-graph-file.log",
    url="https://github.com/Azure/azhpc-images/issues/327",
    cause="The Azure HPC image sets NCCL_GRAPH_FILE=/opt/microsoft/ncv4/graph.xml (for 4 GPUs) on an NC24ads A100 "
    "v4 VM with one GPU; NCCL's graph import references a device that does not exist.",
    established_by="issue labelled bug by the image maintainers; the same mechanism diagnosed by an NCCL maintainer "
    "in NVIDIA/nccl#1008 and NVIDIA/nccl#1240 (NCCL_GRAPH_FILE 'should never be set in production')",
    mechanism="NCCL_GRAPH_FILE from the image/VM environment names GPUs the job does not have",
    expect_signatures=[],
    fabric_at_fault=False,
)
log(
    id="nccl-1240-graph-file-env",
    file="nccl-1240-graph-file-env.log",
    url="https://github.com/NVIDIA/nccl/issues/1240",
    cause="NCCL_GRAPH_FILE was set (Azure NCv4 default installation) to /opt/microsoft/ncv4/graph.xml; unsetting "
    "it fixed the ncclSystemError.",
    established_by="an NCCL maintainer (sjeaugey): 'This is the problem: ... NCCL_GRAPH_FILE set by environment ... "
    "This parameter should never be set in production'; the reporter: solved",
    mechanism="NCCL_GRAPH_FILE injected by the environment/nccl.conf",
    expect_signatures=[],
    fabric_at_fault=False,
    notes="the single line the maintainer quoted as 'the problem'",
)
log(
    id="determined-pr4297-no-gpus-found",
    file="determined-pr4297-no-gpus-found.log",
    url="https://github.com/determined-ai/determined/pull/4297",
    cause="DeepSpeed's launcher did not pass LD_LIBRARY_PATH to the ranks, so the CUDA libraries were not found "
    "and torch saw no GPUs.",
    established_by="merged PR adding LD_LIBRARY_PATH to the variables passed to deepspeed",
    mechanism="launcher drops LD_LIBRARY_PATH -> CUDA libraries not found -> no GPUs",
    expect_signatures=[],
    fabric_at_fault=False,
)
log(
    id="mxnet-21114-nvml-mismatch",
    file="mxnet-21114-nvml-mismatch.log",
    url="https://github.com/apache/mxnet/issues/21114",
    cause="CI nodes auto-updated NVIDIA packages at launch; user-space driver and loaded kernel module differed.",
    established_by="the CI maintainer's diagnosis and rebuilt AMIs; reboot also cures it",
    mechanism="user-space driver newer than the loaded nvidia.ko -> NVML driver/library version mismatch",
    expect_signatures=["NVIDIA-DRIVER-LIBRARY-MISMATCH"],
    fabric_at_fault=False,
)
log(
    id="nvidia-docker-182-nvrm-api-mismatch",
    file="nvidia-docker-182-nvrm-api-mismatch.log",
    url="https://github.com/NVIDIA/nvidia-docker/issues/182",
    cause="Driver upgraded to 367.44 while the 367.35 kernel module stayed loaded; a reboot fixed it.",
    established_by="maintainer (3XX0): the kernel module is still 367.35; the reporter: works after reboot",
    mechanism="loaded kernel module older than the user-space client -> NVRM API mismatch",
    expect_signatures=["NVIDIA-DRIVER-LIBRARY-MISMATCH"],
    fabric_at_fault=False,
    notes="kernel log lines from the description (the preceding quoted systemd line left out)",
)
log(
    id="ompi-11458-openib-banner-omnipath",
    file="ompi-11458-openib-banner-omnipath.log",
    url="https://github.com/open-mpi/ompi/issues/11458",
    cause="Harmless: Open MPI 4.x prints the openib/UCX banner on Omni-Path nodes because verbs support is compiled "
    "in; the job runs over PSM2.",
    established_by="Open MPI maintainer (hppritcha); the reporter confirmed it works as intended",
    mechanism="informational banner; not a failure",
    expect_signatures=[],
    fabric_at_fault=False,
    negative=True,
)
log(
    id="ompi-6785-openib-not-allowed-segv",
    file="ompi-6785-openib-not-allowed-segv.log",
    url="https://github.com/open-mpi/ompi/issues/6785",
    cause="Open MPI 4.0.x built without UCX: when the openib BTL is not explicitly allowed it is still selected "
    "and segfaults in mca_btl_openib_register_mem.",
    established_by="issue labelled bug / Severity: blocker on the v4.0.x target by the Open MPI developers",
    mechanism="Open MPI 4.0.x openib BTL bug (segfault after the UCX-policy banner); the IB fabric is not at fault",
    expect_signatures=["RANK-CRASH"],
    fabric_at_fault=False,
)
log(
    id="pocketflow-105-no-socket-interface",
    file="pocketflow-105-no-socket-interface.log",
    url="https://github.com/Tencent/PocketFlow/issues/105",
    cause="NCCL_SOCKET_IFNAME=eth1 in the launch; the Horovod container only had eth0; setting eth0 worked.",
    established_by="the reporter's verified fix",
    mechanism="NCCL_SOCKET_IFNAME names an interface absent from the container",
    expect_signatures=["NCCL-BOOTSTRAP-SOCKET"],
    expect_cause="ifname-not-found",
    fabric_at_fault=False,
)
log(
    id="nccl-2101-vgpu-no-uvm",
    file="nccl-2101-vgpu-no-uvm.log",
    url="https://github.com/NVIDIA/nccl/issues/2101",
    cause="VMware vGPU VM without UVM enabled: NCCL 2.27.5 init fails ('operation not supported'); enabling UVM "
    "fixes it and NCCL 2.21.5 works without it.",
    established_by="the reporter's A/B (UVM on fixes; older NCCL works)",
    mechanism="vGPU VM lacking UVM -> CUDA call in NCCL 2.27 init returns cudaErrorNotSupported",
    expect_signatures=[],
    fabric_at_fault=False,
)
log(
    id="vitis-ai-103-unsatisfied-cuda",
    file="vitis-ai-103-unsatisfied-cuda.log",
    url="https://github.com/Xilinx/Vitis-AI/issues/103",
    cause="The host NVIDIA driver was older than the CUDA 10.0 the image requires (the image's NVIDIA_REQUIRE_CUDA), "
    "so the container toolkit refused to start it; driver >= 410.78 needed.",
    established_by="answers in the thread (surekha1723: driver must be newer; hanxue: install NVIDIA driver >= "
    "410.78), per NVIDIA's CUDA 10.0 driver table",
    mechanism="nvidia-container-cli requirement check: image cuda>=10.0 vs. host driver's CUDA version",
    expect_signatures=[],
    expect_cause="node-driver-too-old",
    fabric_at_fault=False,
)
log(
    id="horde-worker-regen-349-error-804",
    file="horde-worker-regen-349-error-804.log",
    url="https://github.com/Haidra-Org/horde-worker-reGen/issues/349",
    cause="The host driver did not support the CUDA version the container image requires (CUDA 12.4); updating "
    "the host driver fixed it.",
    established_by="the maintainer (tazlin): host driver/CUDA lower than the image's requirement; the reporter "
    "confirmed ('Glad to hear it' / docs updated)",
    mechanism="image CUDA newer than the driver; the forward-compatibility path is refused (error 804)",
    expect_signatures=["CUDA-RUNTIME-ERROR"],
    expect_cause="compat-on-unsupported-gpu / node driver too old",
    fabric_at_fault=False,
    notes="the issue title (the thread's error text)",
)
log(
    id="nv-peer-memory-41-service-in-container",
    file="nv-peer-memory-41-service-in-container.log",
    url="https://github.com/Mellanox/nv_peer_memory/issues/41",
    cause="Harmless: the nv_peer_mem service script does not exist inside the container; the module is needed "
    "only on the host, where it was loaded.",
    established_by="a Mellanox developer (haggaie); horovod/horovod#940 cites that comment as the answer",
    mechanism="not a failure",
    expect_signatures=[],
    fabric_at_fault=False,
    negative=True,
)
log(
    id="nemo-speech-13996-net-id-0",
    file="nemo-speech-13996-net-id-0.log",
    url="https://github.com/NVIDIA-NeMo/Speech/issues/13996",
    cause="NCCL in the NeMo 25.04+ containers fails multi-node init with 'Could not find NET with id 0'; NCCL 2.27.3 "
    "fixes it.",
    established_by="the reporter's verified fix (upgrade NCCL in the container); confirmed by NeMo/Speech#13854",
    mechanism="NCCL release bug (NIC fusion + hard-coded NET/0 fallback)",
    expect_signatures=[],
    fabric_at_fault=False,
    notes="the line as quoted inline in the description",
)
log(
    id="nccl-1726-ofi-topo-internal-error",
    file="nccl-1726-ofi-topo-internal-error.log",
    url="https://github.com/NVIDIA/nccl/issues/1726",
    cause="The aws-ofi-nccl p5 topology XML shipped in the image was malformed (cpu node without arch/vendor).",
    established_by="the reporter's minimal test showing 'Attribute arch of node cpu not found'; fixing the XML "
    "resolved it",
    mechanism="malformed NCCL_TOPO_FILE -> ncclInternalError at init",
    expect_signatures=[],
    fabric_at_fault=False,
    notes="the issue title",
)
log(
    id="aws-ofi-nccl-663-av-insert",
    file="aws-ofi-nccl-663-av-insert.log",
    url="https://github.com/aws/aws-ofi-nccl/issues/663",
    cause="The EC2 security group had no outbound rule allowing EFA traffic to itself; EFA address-vector inserts "
    "failed. Software in the image was fine.",
    established_by="the reporter found the missing outbound (self) rule; the aws-ofi-nccl maintainer acknowledged",
    mechanism="cloud security group blocks EFA traffic",
    expect_signatures=[],
    fabric_at_fault=True,
    notes="the issue title",
)
log(
    id="ompi-6468-cq-title",
    file="ompi-6468-cq-title.log",
    url="https://github.com/open-mpi/ompi/issues/6468",
    cause="Open MPI in a Docker container with the default 64 KiB memlock limit; limits.conf in the image has no "
    "effect; --ulimit memlock=-1 is needed.",
    established_by="Open MPI maintainers (jsquyres, jjhursey); the reporter's in-container ulimit -a shows 64",
    mechanism="container RLIMIT_MEMLOCK too low -> CQ creation ENOMEM",
    expect_signatures=["IBV-CALL-FAILED"],
    expect_cause="memlock-in-container",
    fabric_at_fault=False,
    notes="the issue title (first line of Open MPI's help banner)",
)
log(
    id="awsome-distributed-ai-pr89-ngc-driver-too-old",
    file="awsome-distributed-ai-pr89-ngc-driver-too-old.log",
    url="https://github.com/awslabs/awsome-distributed-ai/pull/89",
    cause="The NGC pytorch 23.12 base image is built for driver 545.23 or later; on hosts with 535.104.12 it "
    "refuses (forward compatibility unavailable).",
    established_by="the PR author's note with the container's own banner; the template pins a matching base",
    mechanism="image CUDA needs a newer driver than the node's; compat mode unavailable",
    expect_signatures=["CUDA-DRIVER-INSUFFICIENT"],
    expect_cause="node-driver-too-old",
    fabric_at_fault=False,
)
log(
    id="aws-ofi-nccl-20-efa-fork-eq",
    file="aws-ofi-nccl-20-efa-fork-eq.log",
    url="https://github.com/aws/aws-ofi-nccl/issues/20",
    cause="PyTorch DataLoader workers forked under mpirun with the EFA provider triggered a libfabric EFA bug; fixed "
    "in libfabric (ofiwg/libfabric PR 5215, AWS libfabric v1.8.0amzn1.1).",
    established_by="aws-ofi-nccl maintainers reproduced it and shipped the libfabric fix",
    mechanism="libfabric EFA provider bug with fork (DataLoader workers)",
    expect_signatures=[],
    fabric_at_fault=True,
)
log(
    id="libfabric-7805-efa-prov-double-free",
    file="libfabric-7805-efa-prov-double-free.log",
    url="https://github.com/ofiwg/libfabric/issues/7805",
    cause="libfabric's EFA provider crashed (double free in its device cleanup) on a system with a Mellanox device "
    "and no EFA device.",
    established_by="issue labelled bug with the gdb trace into efa_device_list_finalize; fixed upstream",
    mechanism="libfabric EFA provider bug on non-EFA verbs devices",
    expect_signatures=[],
    fabric_at_fault=True,
)
log(
    id="aws-dlc-pr6469-bootstrap-no-interface",
    file="aws-dlc-pr6469-bootstrap-no-interface.log",
    url="https://github.com/aws/deep-learning-containers/pull/6469",
    cause="The image's ENV NCCL_SOCKET_IFNAME=eth0 on hosts whose interface is ens6/enp40s0.",
    established_by="merged PR (HyperPod-Slurm validation)",
    mechanism="NCCL_SOCKET_IFNAME names an interface absent on the node",
    expect_signatures=["NCCL-BOOTSTRAP-SOCKET"],
    expect_cause="ifname-not-found",
    fabric_at_fault=False,
    notes="the message as quoted in the PR description",
)

log(
    id="ainode-pr87-no-infiniband-devices",
    file="ainode-pr87-no-infiniband-devices.log",
    url="https://github.com/getainode/ainode/pull/87",
    cause="The launcher decided whether to pass /dev/infiniband by looking for the device node from inside its "
    "own container, which has none; the engine containers were started with no devices (docker inspect: "
    "Devices: []), so NCCL found no NET plugin device and init failed.",
    established_by="merged PR (probe /sys/class/infiniband instead), with docker inspect evidence on both nodes",
    mechanism="launch spec gives the container no RDMA devices -> NCCL has no network transport it can initialise",
    expect_signatures=["NET-IB-NO-DEVICE"],
    expect_cause="no-uverbs-in-container",
    fabric_at_fault=False,
    notes="the two messages as quoted inline in the PR description, in log order",
)
log(
    id="aws-do-eks-pr53-remote-process-exited",
    file="aws-do-eks-pr53-remote-process-exited.log",
    url="https://github.com/aws-samples/aws-do-eks/pull/53",
    cause="PR 53 blamed NVLS, but the follow-up PR 54's NCCL_DEBUG output showed the real cause: EFA failed to "
    "initialise (no eligible libfabric provider) and the socket fallback advertised the non-routable EKS Pod "
    "Identity interface pod-id-link0 (169.254.170.x), so cross-node connects were refused.",
    established_by="aws-samples/aws-do-eks PR 54 (merged): 'it was not NVLS', NCCL_DEBUG evidence and the fix "
    "excluding pod-id-link0",
    mechanism="misleading 'remote process exited' from a socket fallback over a link-local interface",
    expect_signatures=["NCCL-ERR-6"],
    expect_cause="network",
    fabric_at_fault=True,
    notes="the PR's excerpt of the failure; its own diagnosis (NVLS) was later withdrawn",
)
log(
    id="dynamo-pr1140-ucx-configure-no-verbs",
    file="dynamo-pr1140-ucx-configure-no-verbs.log",
    url="https://github.com/ai-dynamo/dynamo/pull/1140",
    cause="UCX was configured in the image build before libibverbs/EFA were installed, so it was built with no IB "
    "transport modules and fell back to TCP at run time.",
    established_by="the PR's configure output and fix (install EFA/libibverbs before UCX)",
    mechanism="UCX built without verbs -> no IB modules in the image",
    expect_signatures=[],
    fabric_at_fault=False,
    notes="a build log (UCX configure output); the '...' line of the PR's excerpt left out",
)
log(
    id="nccl-1008-dev-not-found",
    file="nccl-1008-dev-not-found.log",
    url="https://github.com/NVIDIA/nccl/issues/1008",
    cause="NCCL_GRAPH_FILE set in /etc/nccl.conf to a graph for 4 GPUs while the job used 2 or 3.",
    established_by="an NCCL maintainer (sjeaugey); the reporter removed it from /etc/nccl.conf and it worked",
    mechanism="NCCL_GRAPH_FILE from nccl.conf names devices that do not exist",
    expect_signatures=[],
    fabric_at_fault=False,
    notes="the issue title",
)

log(
    id="charliecloud-pr166-ompi-opa-unreachable",
    file="charliecloud-pr166-ompi-opa-unreachable.log",
    url="https://github.com/hpc/charliecloud/pull/166",
    cause="On Omni-Path clusters the example container's Open MPI could not use the fabric: the openib BTL found "
    "no usable interface on the hfi1 HCA, only vader/self remained, and ranks on different nodes could not reach "
    "each other.",
    established_by="merged PR (labelled bug) fixing the Open MPI examples to work on Omni-Path clusters",
    mechanism="the image's Open MPI has no working inter-node transport for the node's fabric (OPA needs PSM2/OFI, "
    "not openib)",
    expect_signatures=[],
    fabric_at_fault=False,
    notes="the PR's excerpt; '[...]' is the PR's own elision; the truncated last line left out",
)


def main() -> None:
    ids = [e["id"] for e in LOGS]
    assert len(ids) == len(set(ids))
    for e in LOGS:
        files = e["file"] if isinstance(e["file"], list) else [e["file"]]
        for f in files:
            assert os.path.exists(os.path.join(HERE, "logs", f)), f
    with open(os.path.join(HERE, "logs", "index.json"), "w", encoding="utf-8") as fh:
        json.dump(LOGS, fh, indent=1)
    print(len(LOGS), "logs indexed")


if __name__ == "__main__":
    main()
