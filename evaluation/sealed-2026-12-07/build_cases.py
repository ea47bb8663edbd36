"""Build /work/sealed/cases.json (the sealed incident set) from the case list below.

Each case is in the format of the repo's tests/incidents/cases.json, plus `mechanism`, `expect_kind` and
`sealed_source`. Facts are as the thread states them; every fact added is listed in `assumptions`.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))

DESCRIPTION = (
    "SEALED held-out incident set for imgcheck: public threads nobody on the team had read (none of these URLs "
    "appears in the repo or in shared/research when collected). Same case format as tests/incidents/cases.json: "
    "image/node/job facts as each thread states them, `assumptions` lists every fact added, `expect` the rule ids "
    "of docs/rules.md that name the established mechanism today (empty when none does), `must_not` what the "
    "thread rules out, `working` the configuration the thread shows working. Extra fields: `mechanism` (one "
    "sentence), `expect_kind` (which kind of answer would be right), `sealed_source` (issues|pages). Scored once "
    "by score.py after the rules are done."
)

MLX5 = {"name": "mlx5_0", "driver": "mlx5_core"}

CASES = []


def case(**kw):
    kw.setdefault("sealed_source", "issues")
    CASES.append(kw)


# ---------------------------------------------------------------- EFA / libfabric / launch spec on Kubernetes
case(
    id="aws-do-eks-pr63-hostpath-infiniband-breaks-efa",
    url="https://github.com/aws-samples/aws-do-eks/pull/63",
    cause="The pod spec mounted the whole host /dev/infiniband (hostPath) on B200 HyperPod nodes that carry two "
    "mlx5 NICs next to the 8 EFA devices. libfabric's EFA provider opens every verbs device it lists; the mlx5 "
    "devices cannot be opened in the pod, so EFA provider initialisation fails as a whole (fi_getinfo -61) and "
    "NCCL silently falls back to TCP.",
    established_by="the PR author's A/B on the same node and image (dynamo-vllm-efa:1.3.1-patched): with the "
    "hostPath fi_info -p efa returns -61, with only the EFA device plugin's 8 uverbs it lists 24 provider entries; "
    "merged. The libfabric bug was filed as ofiwg/libfabric#12708 and fixed by ofiwg/libfabric PR 12744 "
    "('continue initializing devices if one fails').",
    fix="remove the /dev/infiniband hostPath and let the EFA device plugin expose only the EFA uverbs devices "
    "(or use a libfabric with the fix)",
    seen="fi_getinfo: -61 (No data available)",
    image={
        "profile": "efa-installer",
        "reference": "dynamo-vllm-efa:1.3.1-patched",
        "nccl_net_plugins": [{"name": "aws-ofi-nccl", "path": "/opt/amazon/ofi-nccl/lib/libnccl-net.so"}],
    },
    node={
        "name": "p6-b200",
        "rdma": {
            "stack": "inbox",
            "devices": [{"name": f"rdmap{n}s0", "driver": "efa"} for n in (79, 80, 81, 82, 96, 97, 98, 99)]
            + [{"name": "ibp115s0f0", "driver": "mlx5_core"}, {"name": "ibp116s0f0", "driver": "mlx5_core"}],
        },
        "gpu": {"gpus": [{"index": i, "name": "NVIDIA B200"} for i in range(8)]},
    },
    job={
        "runtime": "kubernetes",
        "kind": "LeaderWorkerSet",
        "devices": ["/dev/infiniband"],
        "resources": {"vpc.amazonaws.com/efa": "8", "nvidia.com/gpu": "8"},
        "gpus": 8,
    },
    assumptions=[
        "the EFA device names (rdmap79s0 ...) are illustrative: the PR gives the count (8 EFA) and the two mlx5 names",
        "the image's libfabric is the EFA installer's (the image is an EFA build: dynamo-vllm-efa)",
        "the image carries aws-ofi-nccl (path illustrative): the same image uses EFA once the hostPath is removed",
        "the pod requests 8 EFA devices from the device plugin (the 'plugin-only' spec the PR measured)",
        "the host RDMA stack is modelled as inbox (not stated)",
    ],
    expect=[],
    mechanism="A launch spec that hostPath-mounts all of /dev/infiniband on a node with non-EFA (mlx5) verbs "
    "devices next to EFA makes libfabric's EFA provider fail ibv_open_device on a device the pod's device cgroup "
    "does not allow, which (before libfabric PR 12744) aborts the whole EFA device list: fi_getinfo returns "
    "-FI_ENODATA (-61) and NCCL falls back to sockets.",
    expect_kind="job-spec rule on job + node facts (devices mounted wholesale vs. the node's mixed EFA/mlx5 "
    "devices) and the image's libfabric version",
    must_not=["EFA-NO-OFI-PLUGIN"],
    working={"job": {"devices": []}, "absent": []},
)

case(
    id="aws-do-eks-pr69-gloo-loopback-under-hostnetwork",
    url="https://github.com/aws-samples/aws-do-eks/pull/69",
    cause="Under hostNetwork the container inherits the node hostname, which /etc/hosts resolves only to "
    "127.0.0.1; torch's Gloo picks its bind address by resolving the hostname, falls back to loopback, and every "
    "cross-node rank advertises 127.0.0.1, so connectFullMesh fails with Connection refused (the Ray "
    "ActorHandleNotFoundError on top is a consequence).",
    established_by="the PR's in-pod measurements and root cause (ProcessGroupGloo::createDefaultDevice resolves "
    "gethostname()); merged fix exporting GLOO_SOCKET_IFNAME, reproduced deterministically on p6-b200 before it.",
    fix="export GLOO_SOCKET_IFNAME (a concrete interface name, e.g. the one routing to the leader) in the launch",
    seen="RuntimeError: Gloo connectFullMesh failed with [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:152]",
    image={"profile": "efa-installer"},
    node={
        "name": "p6-b200",
        "net_interfaces": [{"name": "lo"}, {"name": "enp71s0", "operstate": "up"}],
        "gpu": {"gpus": [{"index": i, "name": "NVIDIA B200"} for i in range(8)]},
    },
    job={
        "runtime": "kubernetes",
        "kind": "LeaderWorkerSet",
        "host_network": True,
        "gpus": 8,
        "env": {"NCCL_SOCKET_IFNAME": "^lo,docker,veth,eni"},
    },
    assumptions=[
        "the node's primary interface name (enp71s0) is illustrative; the PR says hostnames resolve to a CIDR not "
        "bindable in the pod netns",
        "the image is the vLLM/Dynamo EFA image of the nemotron-ultra manifests (EFA installer libfabric)",
        "NCCL_SOCKET_IFNAME as set by the earlier PR 50 of the same manifests",
    ],
    expect=[],
    mechanism="With hostNetwork and no GLOO_SOCKET_IFNAME, torch Gloo resolves gethostname() to 127.0.0.1 (only "
    "loopback in the host-network /etc/hosts) and binds/advertises loopback, so cross-node Gloo connectFullMesh "
    "gets ECONNREFUSED from 127.0.0.1.",
    expect_kind="job-spec rule (hostNetwork + multi-node torch without GLOO_SOCKET_IFNAME)",
    must_not=["EFA-NO-OFI-PLUGIN", "ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE"],
)

case(
    id="aws-do-eks-pr51-gloo-ifname-given-nccl-exclusion-syntax",
    url="https://github.com/aws-samples/aws-do-eks/pull/51",
    cause="GLOO_SOCKET_IFNAME was set to NCCL's exclusion-list syntax '^lo,docker,veth,eni'. Gloo takes one "
    "concrete interface name, so it looked for an interface literally named '^lo' and world init crashed.",
    established_by="the PR author (who had set it in PR 50): 'That syntax is valid for NCCL but not for Gloo'; "
    "merged fix resolving a concrete interface at run time.",
    fix="keep NCCL_SOCKET_IFNAME=^lo,docker,veth,eni but set GLOO_SOCKET_IFNAME to one concrete interface",
    seen="ifa != nullptr. Unable to find address for: ^lo",
    image={"profile": "efa-installer"},
    node={"name": "p5-eks", "net_interfaces": [{"name": "lo"}, {"name": "ens5", "operstate": "up"}]},
    job={
        "runtime": "kubernetes",
        "kind": "LeaderWorkerSet",
        "host_network": True,
        "env": {"GLOO_SOCKET_IFNAME": "^lo,docker,veth,eni", "NCCL_SOCKET_IFNAME": "^lo,docker,veth,eni"},
    },
    assumptions=["the node interface names are illustrative (the PR names ens5/eth0/enp* as possibilities)"],
    expect=[],
    mechanism="GLOO_SOCKET_IFNAME accepts a single interface name (no '^' exclusion or comma list as "
    "NCCL_SOCKET_IFNAME does); gloo's tcp device lookup fails with 'Unable to find address for: ^lo'.",
    expect_kind="job-spec env rule (GLOO_SOCKET_IFNAME value syntax / interface exists on the node)",
    working={"job": {"env": {"GLOO_SOCKET_IFNAME": "ens5"}}, "absent": []},
)

case(
    id="aws-do-eks-pr54-socket-fallback-picks-pod-identity-link",
    url="https://github.com/aws-samples/aws-do-eks/pull/54",
    cause="With EFA failing to initialise on the node NCCL fell back to sockets, and the exclusion list "
    "NCCL_SOCKET_IFNAME=^lo,docker,veth,eni left EKS Pod Identity's link-local interface pod-id-link0 "
    "(169.254.170.x, per node, not routable) eligible; cross-node ranks connected to the 169.254 address and "
    "got Connection refused.",
    established_by="NCCL_DEBUG=INFO output quoted in the PR (NET/Socket using enp73s0 and pod-id-link0; "
    "socketPollConnect to 169.254.170.23 refused); merged fix adding pod-id-link0 to the exclusion list.",
    fix="NCCL_SOCKET_IFNAME=^lo,docker,veth,eni,pod-id-link0 (or name the routable interface)",
    seen="socketPollConnect: connect to 169.254.170.23<...> returned Connection refused, retrying (13/34)",
    image={"profile": "efa-installer"},
    node={
        "name": "eks-gpu",
        "net_interfaces": [
            {"name": "lo"},
            {"name": "enp73s0", "operstate": "up"},
            {"name": "pod-id-link0", "operstate": "unknown"},
        ],
    },
    job={
        "runtime": "kubernetes",
        "kind": "LeaderWorkerSet",
        "host_network": True,
        "env": {"NCCL_SOCKET_IFNAME": "^lo,docker,veth,eni"},
    },
    assumptions=["pod-id-link0's operstate is not stated", "hostNetwork as in the same manifests (PR 69)"],
    expect=[],
    mechanism="An NCCL_SOCKET_IFNAME exclusion list that does not exclude a per-node link-local interface "
    "(EKS Pod Identity pod-id-link0, 169.254.170.x) lets NCCL's socket transport advertise a non-routable address; "
    "peers get ECONNREFUSED.",
    expect_kind="env rule on job + node facts (interfaces the setting admits that are link-local / not routable)",
    must_not=["ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE"],
)

case(
    id="awsome-distributed-ai-312-container-oom-looks-like-efa-qpn-error",
    url="https://github.com/awslabs/awsome-distributed-ai/issues/312",
    cause="The EKS NCCL-tests manifest limited the container to 8 GB; a rank ran out of memory, and the peers' "
    "EFA sends then completed with 'Invalid receiver queue pair number (QPN)'. The fabric was not at fault.",
    established_by="the maintainer who filed it (sean-smith, AWS): 'but is really an OOM issue. We need to bump "
    "up the memory limit'; the manifest line with the 8 GB limit.",
    fix="raise the container memory limit in the manifest",
    seen="process_err_completion:1562 NCCL WARN NET/OFI Request 0x7f08c0001d30 completed with error. RC: 5. "
    "Error: Invalid receiver queue pair number (QPN)",
    image={
        "profile": "efa-installer",
        "nccl_net_plugins": [{"name": "aws-ofi-nccl", "path": "/opt/amazon/ofi-nccl/lib/libnccl-net.so"}],
    },
    node={"name": "p4d-eks", "rdma": {"stack": "inbox", "devices": [{"name": "rdmap16s27", "driver": "efa"}]}},
    job={"runtime": "kubernetes", "kind": "MPIJob", "resources": {"memory": "8Gi", "vpc.amazonaws.com/efa": "4"}},
    assumptions=[
        "the node's EFA device name is illustrative",
        "the container memory limit is modelled in `resources` (imgcheck's job facts have no memory-limit field)",
        "the NCCL-tests image carries aws-ofi-nccl (path illustrative; the manifest is AWS's EFA NCCL-tests sample)",
    ],
    expect=[],
    mechanism="A container memory limit too small for the ranks gets a rank OOM-killed; its EFA endpoint "
    "disappears and the peers' libfabric completions fail with FI_EFA 'Invalid receiver queue pair number "
    "(QPN)' (RC 5), which looks like a fabric error.",
    expect_kind="job-spec rule (container memory limit vs. ranks), and triage that does not blame the fabric",
    must_not=["EFA-NO-OFI-PLUGIN", "OFI-PLUGIN-LIBFABRIC-TOO-OLD", "EFA-LIBFABRIC-CUDA-SYNC-MEMOPS"],
)

case(
    id="gardener-aws-1832-efa-needs-self-referencing-egress",
    url="https://github.com/gardener/gardener-extension-provider-aws/issues/1832",
    cause="The worker security group allowed egress to 0.0.0.0/0 but had no self-referencing egress rule; EFA's "
    "SRD traffic is matched only by security-group-id rules, so every NCCL/MPI workload over EFA failed with "
    "Error 4126 (unresponsive receiver). Nothing in the image or node software was wrong.",
    established_by="the issue's investigation (AWS mandates the rule; EFA traffic not covered by CIDR rules) and "
    "the merged fix PR 1833 adding the self-referencing egress rule for EFA worker pools.",
    fix="add a self-referencing security-group egress rule (protocol -1) for EFA-enabled nodes",
    seen="Error 4126: Unresponsive receiver (reachable by EFA device but handshake failed)",
    image={
        "profile": "efa-installer",
        "nccl_net_plugins": [{"name": "aws-ofi-nccl", "path": "/opt/amazon/ofi-nccl/lib/libnccl-net.so"}],
    },
    node={"name": "efa-worker", "rdma": {"stack": "inbox", "devices": [{"name": "rdmap0s6", "driver": "efa"}]}},
    assumptions=[
        "the workload image carries the EFA installer's libfabric and aws-ofi-nccl (not stated)",
        "the node's EFA device name is illustrative",
    ],
    expect=[],
    mechanism="EFA SRD traffic between instances needs a security-group rule that references the group itself; "
    "a CIDR-only egress rule (0.0.0.0/0) does not admit it, so the EFA handshake fails (libfabric error 4126, "
    "unresponsive receiver).",
    expect_kind="node/cluster rule outside the image (cloud network config); image rules must stay silent",
    must_not=["EFA-NO-OFI-PLUGIN", "OFI-PLUGIN-LIBFABRIC-TOO-OLD", "EFA-LIBFABRIC-CUDA-SYNC-MEMOPS"],
)

case(
    id="sagemaker-hyperpod-cli-pr282-efa-plugin-allocates-nvlink-ibp",
    url="https://github.com/aws/sagemaker-hyperpod-cli/pull/282",
    cause="On p6-b200.48xlarge the InfiniBand subsystem shows 10 devices: 8 rdmap* EFA devices and 2 ibp* "
    "devices that are NVLink controllers. aws-efa-k8s-device-plugin before 0.5.10 counted the ibp* devices as EFA, "
    "so pods could be allocated them and NCCL failed or timed out.",
    established_by="merged PR bumping the plugin to 0.5.10, quoting the AWS EFA team ('eventually EKS will "
    "schedule them as EFA devices, but they aren't, and then NCCL will get confused').",
    fix="aws-efa-k8s-device-plugin >= 0.5.10",
    seen=None,
    image={"profile": "efa-installer"},
    node={
        "name": "p6-b200",
        "rdma": {
            "stack": "inbox",
            "devices": [{"name": f"rdmap{n}s0", "driver": "efa"} for n in (79, 80, 81, 82, 96, 97, 98, 99)]
            + [{"name": "ibp115s0f0"}, {"name": "ibp116s0f0"}],
        },
        "labels": {"aws-efa-k8s-device-plugin": "0.5.9"},
    },
    job={"runtime": "kubernetes", "kind": "Pod", "resources": {"vpc.amazonaws.com/efa": "8"}},
    assumptions=[
        "the plugin version (0.5.9) stands for 'before 0.5.10'; modelled as a node label",
        "the ibp* devices' kernel driver is not stated",
        "EFA device names illustrative",
    ],
    expect=[],
    mechanism="An EFA device plugin older than 0.5.10 advertises non-EFA ibp* RDMA devices (NVLink controllers on "
    "B200) as vpc.amazonaws.com/efa, so a pod can be allocated a device libfabric/NCCL cannot use as EFA.",
    expect_kind="node/cluster rule (device-plugin version vs. the node's device set)",
)

# ---------------------------------------------------------------- socket interface selection baked into images
case(
    id="aws-dlc-pr6469-image-env-socket-ifname-eth0",
    url="https://github.com/aws/deep-learning-containers/pull/6469",
    cause="The ray-train image hard-coded ENV NCCL_SOCKET_IFNAME=eth0. HyperPod-Slurm and EC2 hosts name the "
    "interface ens6/enp40s0, so NCCL found no socket interface (ncclInvalidUsage) and training died; the image's "
    "/etc/nccl.conf already had the working exclusion list but the env var overrode it.",
    established_by="merged PR found during HyperPod-Slurm validation ('this interface-name bug was the one real "
    "image finding').",
    fix="drop the ENV; rely on /etc/nccl.conf NCCL_SOCKET_IFNAME=^docker0,lo or set the interface per platform",
    seen="NCCL WARN Bootstrap: no socket interface found",
    image={
        "profile": "efa-installer",
        "env": {"NCCL_SOCKET_IFNAME": "eth0"},
        "nccl_conf": {"NCCL_SOCKET_IFNAME": "^docker0,lo"},
    },
    node={
        "name": "hyperpod-slurm",
        "net_interfaces": [{"name": "lo"}, {"name": "ens6", "operstate": "up"}, {"name": "docker0"}],
    },
    job={"runtime": "enroot", "kind": "slurm", "host_network": True},
    assumptions=[
        "Enroot/Pyxis containers share the host network namespace (host_network true; not stated in the PR)",
        "the node has ens6 and no eth0 (the PR names ens6/enp40s0 for these hosts)",
        "docker0 present on the host (not stated)",
    ],
    expect=[{"id": "ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE", "severity": "error"}],
    mechanism="An image ENV NCCL_SOCKET_IFNAME naming an interface (eth0) the node does not have leaves NCCL's "
    "bootstrap with no socket interface (ncclInvalidUsage), and the env var takes precedence over /etc/nccl.conf.",
    expect_kind="rule on image env + node interface facts",
    working={"image": {"env": {}}, "absent": ["ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE"]},
)

case(
    id="horovod-pr700-nccl-conf-docker0-admits-lo",
    url="https://github.com/horovod/horovod/pull/700",
    cause="The Horovod image wrote NCCL_SOCKET_IFNAME=^docker0 into /etc/nccl.conf. Since NCCL 2.3.5 a user "
    "setting replaces the default exclusion of docker0 and lo, so ^docker0 lets NCCL pick lo and the multi-node "
    "job (mpi-operator) hung.",
    established_by="an NCCL maintainer (sjeaugey) in the PR: 'setting NCCL_SOCKET_IFNAME=^docker0 means we might "
    "pick the lo interface ... you should either set NCCL_SOCKET_IFNAME=^docker0,lo or not set anything'; the PR "
    "removing the line, tested on the MPI operator, merged.",
    fix="remove NCCL_SOCKET_IFNAME from nccl.conf (or use ^docker0,lo)",
    seen=None,
    image={
        "profile": "no-rdma-userspace",
        "reference": "uber/horovod (Dockerfile of December 2018)",
        "nccl": [{"version": "2.3.5", "origin": "library", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.3.5"}],
        "nccl_conf": {"NCCL_SOCKET_IFNAME": "^docker0"},
    },
    node={"name": "k8s-gpu", "net_interfaces": [{"name": "lo"}, {"name": "eth0", "operstate": "up"}]},
    job={"runtime": "kubernetes", "kind": "MPIJob"},
    assumptions=[
        "NCCL 2.3.5 as a system library (the PR title names 2.3.5)",
        "the pod's interfaces are lo and eth0 (Kubernetes default; not stated)",
        "no RDMA user space in the image (not stated; irrelevant to the mechanism)",
    ],
    expect=[{"id": "ENV-NCCL-SOCKET-IFNAME-ALLOWS-LO", "severity": "warning"}],
    mechanism="A /etc/nccl.conf NCCL_SOCKET_IFNAME exclusion list that omits lo replaces NCCL's default "
    "(^docker,lo), so NCCL may bootstrap over loopback and remote ranks hang or cannot connect.",
    expect_kind="rule on image nccl.conf (+ NCCL version)",
    working={
        "image": {"nccl_conf": {"NCCL_SOCKET_IFNAME": "^docker0,lo"}},
        "absent": ["ENV-NCCL-SOCKET-IFNAME-ALLOWS-LO"],
    },
)

# ---------------------------------------------------------------- NCCL topology / graph files and releases
case(
    id="nccl-1008-graph-file-in-nccl-conf",
    url="https://github.com/NVIDIA/nccl/issues/1008",
    cause="The Azure NC A100 v4 VM's /etc/nccl.conf set NCCL_GRAPH_FILE (and NCCL_TOPO_FILE) to files for 4 GPUs; "
    "running on 2 or 3 GPUs, NCCL imported a graph naming devices that did not exist ('Dev not found').",
    established_by="an NCCL maintainer (sjeaugey): 'you're injecting a graph e.g. NCCL_GRAPH_FILE=graph.xml but "
    "the graph file is for 4 GPUs, not 2 or 3' ... 'Could it be set inside /etc/nccl.conf'; the reporter deleted "
    "them from /etc/nccl.conf and it worked.",
    fix="remove NCCL_GRAPH_FILE from /etc/nccl.conf (NCCL_TOPO_FILE may stay)",
    seen="Dev not found",
    image={
        "profile": "rdma-core-39-mlx5",
        "nccl_conf": {
            "NCCL_TOPO_FILE": "/opt/microsoft/ncv4/topo.xml",
            "NCCL_GRAPH_FILE": "/opt/microsoft/ncv4/graph.xml",
        },
    },
    node={
        "name": "nc-a100-v4",
        "rdma": {
            "stack": "mlnx_ofed",
            "devices": [{"name": "mlx5_an0", "driver": "mlx5_core", "link_layer": "Ethernet"}],
        },
        "gpu": {"gpus": [{"index": 0, "name": "NVIDIA A100 80GB PCIe"}, {"index": 1, "name": "NVIDIA A100 80GB PCIe"}]},
    },
    job={"gpus": 2, "ranks_per_node": 2},
    assumptions=[
        "the nccl.conf is modelled as the image's (the thread's is the Azure HPC VM image's /etc/nccl.conf)",
        "the graph path /opt/microsoft/ncv4/graph.xml as printed in the same family of reports (nccl#1240)",
        "2 A100 GPUs and the mlx5_an0 accelerated-networking VF of NC A100 v4 (not stated in this thread)",
    ],
    expect=[],
    mechanism="NCCL_GRAPH_FILE (here from /etc/nccl.conf) forces a ring/tree graph recorded for a different GPU "
    "count; on import NCCL cannot find the devices it names ('Dev not found' / 'XML Import Channel : dev N not "
    "found') and init fails.",
    expect_kind="rule on image/node nccl.conf (+ job GPU count): NCCL_GRAPH_FILE set at all is a production hazard",
)

case(
    id="nccl-1726-malformed-ofi-topo-xml",
    url="https://github.com/NVIDIA/nccl/issues/1726",
    cause="The aws-ofi-nccl topology file the image ships for p5 (/usr/local/share/aws-ofi-nccl/xml/"
    "p5.48xl-topo.xml) was malformed (missing the cpu node's arch and vendor attributes); NCCL loaded it via "
    "NCCL_TOPO_FILE and ncclCommInitRank failed with an internal error.",
    established_by="the reporter's minimal NCCL test showed 'Attribute arch of node cpu not found'; fixing the "
    "XML resolved it (also pytorch/pytorch#154342).",
    fix="use a well-formed topology file (or unset NCCL_TOPO_FILE on p5, where the plugin no longer needs it)",
    seen="ncclCommInitRank failed with error: NCCL error: internal error",
    image={
        "profile": "efa-installer",
        "env": {"NCCL_TOPO_FILE": "/usr/local/share/aws-ofi-nccl/xml/p5.48xl-topo.xml"},
        "nccl_net_plugins": [{"name": "aws-ofi-nccl", "path": "/opt/amazon/ofi-nccl/lib/libnccl-net.so"}],
    },
    node={
        "name": "p5",
        "rdma": {"stack": "inbox", "devices": [{"name": "rdmap79s0", "driver": "efa"}]},
        "gpu": {"gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3"}]},
    },
    assumptions=[
        "NCCL_TOPO_FILE pointed at the file through the image environment (how it was set is not stated)",
        "the plugin path is illustrative",
    ],
    expect=[],
    mechanism="A topology XML injected through NCCL_TOPO_FILE whose <cpu> node lacks arch/vendor makes NCCL's "
    "topology code fail ('Attribute arch of node cpu not found') and ncclCommInitRank return ncclInternalError.",
    expect_kind="rule on image files (validate the NCCL_TOPO_FILE the image points at)",
)

case(
    id="nccl-1748-nic-fusion-net-id-0",
    url="https://github.com/NVIDIA/nccl/issues/1748",
    cause="With NCCL 2.26 (PyTorch 2.7's), a failed tree-path search fell back to a hard-coded NET id 0, which "
    "does not exist once NIC fusion merged the NICs; init failed with 'Could not find NET with id 0'. NCCL 2.27 "
    "(PyTorch 2.8/2.9) works.",
    established_by="an NCCL developer (kiskra-nvidia) traced the fallback to the hard-coded net id invalid under "
    "NIC fusion (issue labelled bug); the reporter confirmed it works with Torch 2.8/2.9 (NCCL 2.27).",
    fix="NCCL 2.27 or newer (PyTorch 2.8+)",
    seen="graph/topo.h:230 NCCL WARN Could not find NET with id 0",
    image={
        "profile": "rdma-core-39-mlx5",
        "nccl": [
            {
                "version": "2.26.2",
                "origin": "pip",
                "path": "/usr/local/lib/python3.12/dist-packages/nvidia_nccl_cu12-2.26.2.dist-info/METADATA",
            }
        ],
    },
    node={
        "name": "4gpu-4nic",
        "rdma": {"stack": "mlnx_ofed", "devices": [{"name": f"mlx5_{i}", "driver": "mlx5_core"} for i in range(4)]},
        "gpu": {"gpus": [{"index": i, "name": "NVIDIA H100 80GB HBM3"} for i in range(4)]},
    },
    assumptions=[
        "NCCL 2.26.2 from the nvidia-nccl-cu12 wheel of PyTorch 2.7.1 (the maintainer names 2.26.2)",
        "4 GPUs and 4 NICs per node (the comment's 'perfectly orderly' topology); GPU model not stated",
    ],
    expect=[{"id": "NCCL-RELEASE-KNOWN-ISSUE", "severity": "warning"}],
    mechanism="NCCL 2.26's NIC fusion plus the tree-search fallback that hard-codes NET/0 makes init fail with "
    "'Could not find NET with id 0' on multi-NIC nodes; fixed in behaviour by NCCL 2.27.",
    expect_kind="rule on image facts (NCCL version known-issue catalog)",
    working={
        "image": {
            "nccl": [
                {
                    "version": "2.27.3",
                    "origin": "pip",
                    "path": "/usr/local/lib/python3.12/dist-packages/nvidia_nccl_cu12-2.27.3.dist-info/METADATA",
                }
            ]
        },
        "absent": ["NCCL-RELEASE-KNOWN-ISSUE"],
    },
)

# ---------------------------------------------------------------- images without RDMA user space
case(
    id="sglang-pr1427-image-lacks-libibverbs",
    url="https://github.com/sgl-project/sglang/pull/1427",
    cause="sglang's Docker image had no libibverbs, so NCCL on multi-node InfiniBand deployments printed "
    "'Failed to open libibverbs.so[.1]' and ran all-reduces over TCP on ib0.",
    established_by="merged PR adding libibverbs-dev to the Dockerfile; the author reports it fixes the fallback "
    "and speeds up multi-node deployments (vLLM's image does the same).",
    fix="install libibverbs (and providers) in the image",
    seen="NCCL INFO Failed to open libibverbs.so[.1]",
    image={"profile": "no-rdma-userspace", "reference": "lmsysorg/sglang (September 2024)"},
    node={
        "name": "ib-node",
        "rdma": {"stack": "mlnx_ofed", "devices": [MLX5]},
        "net_interfaces": [{"name": "ib0", "operstate": "up"}],
    },
    assumptions=[
        "ConnectX (mlx5) IB HCAs (the log shows ib0; HCA type not stated)",
        "MLNX_OFED host stack (not stated)",
    ],
    expect=[{"id": "RDMA-NO-LIBIBVERBS", "severity": "warning"}],
    mechanism="The image has no libibverbs, so NCCL cannot dlopen it, disables NET/IB and uses the socket "
    "transport over IPoIB.",
    expect_kind="rule on image + node facts",
    working={"image": {"profile": "rdma-core-39-mlx5"}, "absent": ["RDMA-NO-LIBIBVERBS"]},
)

case(
    id="prime-rl-pr1600-image-lacks-libibverbs-nebius",
    url="https://github.com/PrimeIntellect-ai/prime-rl/pull/1600",
    cause="The prime-rl CUDA image had no libibverbs, so multi-node training on a Nebius MK8S InfiniBand cluster "
    "used TCP sockets (0.2% MFU on a 235B model).",
    established_by="merged PR (and the earlier PR 1599) adding libibverbs1 and ibverbs-providers after finding "
    "libibverbs.so missing from the container.",
    fix="apt-get install libibverbs1 ibverbs-providers in the image",
    seen=None,
    image={"profile": "no-rdma-userspace"},
    node={
        "name": "nebius-mk8s",
        "rdma": {"stack": "mlnx_ofed", "devices": [MLX5]},
        "gpu": {"gpus": [{"index": i, "name": "NVIDIA H200"} for i in range(8)]},
    },
    assumptions=["ConnectX (mlx5) IB HCAs and H200 GPUs (Nebius IB clusters; not stated)", "host stack not stated"],
    expect=[{"id": "RDMA-NO-LIBIBVERBS", "severity": "warning"}],
    mechanism="Without libibverbs in the image NCCL cannot use NET/IB and falls back to TCP sockets.",
    expect_kind="rule on image + node facts",
    working={"image": {"profile": "rdma-core-39-mlx5"}, "absent": ["RDMA-NO-LIBIBVERBS"]},
)

# ---------------------------------------------------------------- launch spec: memlock
case(
    id="ompi-6468-docker-memlock-limits-conf-ignored",
    url="https://github.com/open-mpi/ompi/issues/6468",
    cause="Open MPI ran inside a Docker container with InfiniBand; the container's locked-memory limit was 64 KiB. "
    "The reporter added 'memlock unlimited' to /etc/security/limits.conf in the Dockerfile, which does not apply "
    "to processes Docker starts, so creating the completion queue failed.",
    established_by="Open MPI maintainers (jsquyres, jjhursey): locked memory is needed for IB in Docker; start the "
    "container with --ulimit memlock=-1 ('I'm guessing @jjhursey's answer is the right one'); the reporter's "
    "ulimit -a in the container shows max locked memory 64.",
    fix="docker run --ulimit memlock=-1 (limits.conf in the image has no effect)",
    seen="Failed to create a completion queue (CQ)",
    image={"profile": "rdma-core-39-mlx5"},
    node={"name": "ib-node", "rdma": {"stack": "mlnx_ofed", "devices": [MLX5]}},
    job={"runtime": "docker", "kind": "docker run", "devices": ["/dev/infiniband"]},
    assumptions=[
        "the docker run gave the container the IB devices (the failure is at CQ creation, after the device opened)",
        "mlx5 HCA and the image's rdma-core are illustrative",
        "the docker run sets no --ulimit memlock (the reporter's ulimit -a in the container shows 64 KiB, the "
        "daemon default)",
    ],
    expect=[{"id": "JOB-MEMLOCK-TOO-LOW", "severity": "error"}],
    mechanism="RDMA verbs objects (CQ/MR) are pinned against RLIMIT_MEMLOCK; a container started with Docker's "
    "default 64 KiB memlock fails ibv_create_cq with ENOMEM, and limits.conf inside the image is not applied "
    "to the container's processes.",
    expect_kind="job-spec rule (container memlock limit)",
    working={"job": {"memlock_kib": -1}, "absent": ["JOB-MEMLOCK-TOO-LOW"]},
)

# ---------------------------------------------------------------- env typos
case(
    id="podman-hpc-136-nccl-module-env-typo",
    url="https://github.com/NERSC/podman-hpc/issues/136",
    cause="podman-hpc's nccl module passed '-e CCL_NET_GDR_LEVEL=PHB' (the N of NCCL missing), so the intended "
    "NCCL_NET_GDR_LEVEL never reached NCCL and small-message bandwidth was slow.",
    established_by="a maintainer (scanon): 'That looks like a bug'; the reporter measured slow bandwidth without "
    "NCCL_NET_GDR_LEVEL=PHB.",
    fix="pass NCCL_NET_GDR_LEVEL=PHB",
    seen=None,
    image={"profile": "rdma-core-39-mlx5"},
    node={"name": "perlmutter-gpu", "gpu": {"gpus": [{"index": i, "name": "NVIDIA A100-SXM4-40GB"} for i in range(4)]}},
    job={"runtime": "podman", "kind": "podman-hpc run", "env": {"CCL_NET_GDR_LEVEL": "PHB"}},
    assumptions=["Perlmutter A100 nodes (NERSC; not stated)", "image user space illustrative"],
    expect=[],
    mechanism="A misspelled NCCL variable (CCL_NET_GDR_LEVEL) in the launch is silently ignored by NCCL, so the "
    "intended GPUDirect RDMA level is not applied.",
    expect_kind="job-spec env rule (near-miss NCCL_* variable names)",
    working={"job": {"env": {"NCCL_NET_GDR_LEVEL": "PHB"}}, "absent": []},
)

# ---------------------------------------------------------------- batch 2
case(
    id="nemo-speech-13996-nemo-container-nccl-net-id-0",
    url="https://github.com/NVIDIA-NeMo/Speech/issues/13996",
    cause="Multi-node training in the NeMo framework containers from 25.04 failed right after process-group "
    "registration with 'Could not find NET with id 0' on two EuroHPC InfiniBand clusters; upgrading the "
    "container's NCCL to 2.27.3 fixed it.",
    established_by="the reporter's verified fix (NCCL 2.27.3 in the container solved it); another user "
    "(NVIDIA-NeMo/Speech#13854, NeMo-Run#266, NCCL 2.25.1) confirmed the same cause and fix; the NCCL developer "
    "diagnosis of the message is in NVIDIA/nccl#1748.",
    fix="a container with NCCL 2.27 or newer (or install NCCL 2.27.3 into it)",
    seen="graph/topo.h:230 NCCL WARN Could not find NET with id 0",
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "nvcr.io/nvidia/nemo:25.04",
        "nccl": [{"version": "2.25.1", "origin": "library", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.25.1"}],
    },
    node={
        "name": "leonardo-booster",
        "rdma": {"stack": "mlnx_ofed", "devices": [{"name": f"mlx5_{i}", "driver": "mlx5_core"} for i in range(4)]},
        "gpu": {
            "gpus": [{"index": i, "name": "NVIDIA A100-SXM-64GB"} for i in range(4)],
            "driver_version": "570.133.20",
        },
    },
    assumptions=[
        "NCCL 2.25.1 as printed by the same-cause report NeMo-Run#266 (this thread does not print the version)",
        "LEONARDO booster nodes: 4 A100 and 4 HCAs (not stated); driver 570.133.20 as reported in NeMo/Speech#13854",
        "the image's rdma-core is illustrative (the NGC image ships its own)",
    ],
    expect=[{"id": "NCCL-RELEASE-KNOWN-ISSUE", "severity": "warning"}],
    mechanism="NCCL before 2.27 can fall back to a hard-coded NET/0 after a failed tree search while NIC fusion "
    "has removed NET/0; multi-node init fails with 'Could not find NET with id 0' (internal error).",
    expect_kind="rule on image facts (NCCL version known-issue catalog)",
    working={
        "image": {
            "nccl": [{"version": "2.27.3", "origin": "library", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.27.3"}]
        },
        "absent": ["NCCL-RELEASE-KNOWN-ISSUE"],
    },
)

case(
    id="nv-kernels-pr590-kho-cma-blocks-rdma-pinning",
    url="https://github.com/NVIDIA/NV-Kernels/pull/590",
    cause="The arm64 nvidia kernel 7.0.0-1019 enables Kexec HandOver by default; KHO reserves ~9.3 GiB of scratch "
    "and releases it as MIGRATE_CMA pageblocks, which long-term pins cannot use. Under GPU memory pressure "
    "pin_user_pages_fast fails and ibv_reg_mr_iova2 returns ENOMEM on DGX Spark (GB10) RoCE clusters; 6.17 works.",
    established_by="the PR's kernel return tracing (migrate_pages -> __gup_longterm_locked -ENOMEM -> ib_umem_get -> "
    "mlx5_ib_reg_user_mr) and A/B on two systems with driver, firmware, userspace and container held constant: "
    "kho=off or CONFIG_KEXEC_HANDOVER_ENABLE_DEFAULT=n passes all 4,096 registrations.",
    fix="boot with kho=off (or a kernel built with CONFIG_KEXEC_HANDOVER_ENABLE_DEFAULT=n), or the 6.17 kernel",
    seen="Call to ibv_reg_mr_iova2 failed with error Cannot allocate memory",
    image={"profile": "rdma-core-39-mlx5", "platform": "linux/arm64"},
    node={
        "name": "dgx-spark",
        "arch": "arm64",
        "kernel": {
            "release": "7.0.0-1019-nvidia",
            "config": {"CONFIG_KEXEC_HANDOVER_ENABLE_DEFAULT": "y"},
            "cmdline": "",
            "cmdline_params": {},
        },
        "rdma": {
            "stack": "inbox",
            "devices": [{"name": "rocep1s0f0", "driver": "mlx5_core", "link_layer": "Ethernet"}],
        },
        "gpu": {"driver_version": "595.84", "gpus": [{"index": 0, "name": "NVIDIA GB10"}]},
        "limits": {"memlock_kib": -1},
    },
    assumptions=[
        "the HCA name is illustrative (ConnectX-7 RoCE on DGX Spark)",
        "memlock unlimited (the PR holds userspace/container constant and the 6.17 kernel passes)",
        "host RDMA stack modelled as inbox; image rdma-core illustrative (arm64)",
        "the kernel command line has no kho= parameter (default-enabled KHO is the failing case)",
    ],
    expect=[],
    mechanism="With KHO enabled by default the kernel hands ~9 GiB back as MIGRATE_CMA pageblocks; FOLL_LONGTERM "
    "pinning (ib_umem_get for ibv_reg_mr) must migrate pages out of CMA and fails with -ENOMEM under memory "
    "pressure, so NCCL's ibv_reg_mr_iova2 returns 'Cannot allocate memory' although memlock is unlimited.",
    expect_kind="node-only rule on kernel release/config/cmdline (KHO default on arm64 nvidia 7.0 kernels)",
    must_not=["MEMLOCK-TOO-LOW", "JOB-MEMLOCK-TOO-LOW"],
    working={
        "node": {"kernel": {"release": "6.17.0-1032-nvidia", "config": {"CONFIG_KEXEC_HANDOVER_ENABLE_DEFAULT": "n"}}},
        "absent": ["MEMLOCK-TOO-LOW"],
    },
)

case(
    id="aws-ofi-nccl-107-docker-memlock-on-ubuntu-host",
    url="https://github.com/aws/aws-ofi-nccl/issues/107",
    cause="The same EFA image worked under Docker on an Amazon Linux 2 AMI but crashed on an Ubuntu DLAMI: the "
    "docker run had no --ulimit memlock, and on Ubuntu the container's locked-memory limit is the low default, "
    "so libfabric's EFA provider failed with -12 (ENOMEM).",
    established_by="the reporter's follow-up in aws/aws-ofi-nccl#106: 'we add --ulimit memlock=-1 due to "
    "https://github.com/aws/aws-ofi-nccl/issues/107', after which the Ubuntu runs worked.",
    fix="docker run --ulimit memlock=-1",
    seen="Unable to write to EQ: Missing or unavailable event queue. err: Unknown error -12 (-12)",
    image={"profile": "efa-installer"},
    node={
        "name": "p3dn-ubuntu",
        "rdma": {"stack": "inbox", "devices": [{"name": "rdmap0s6", "driver": "efa"}]},
        "gpu": {
            "driver_version": "510.47.03",
            "gpus": [{"index": i, "name": "Tesla V100-SXM2-32GB"} for i in range(8)],
        },
        "kernel": {"release": "5.13.0-1021-aws"},
    },
    job={
        "runtime": "docker",
        "kind": "docker run",
        "host_network": True,
        "devices": ["/dev/infiniband/uverbs0"],
        "env": {"FI_PROVIDER": "EFA", "NCCL_SOCKET_IFNAME": "ens5"},
    },
    assumptions=[
        "the failing run is the #106 command without --ulimit memlock=-1 (network host, uverbs0 device, env as quoted)",
        "the Ubuntu DLAMI kernel release is illustrative",
        "p3dn.24xlarge: 8 V100-SXM2-32GB",
    ],
    expect=[{"id": "JOB-MEMLOCK-TOO-LOW", "severity": "error"}],
    mechanism="A docker run without --ulimit memlock inherits the daemon's default RLIMIT_MEMLOCK (low on the "
    "Ubuntu AMI, unlimited on the AL2 AMI); EFA memory registration/queue setup fails with ENOMEM (-12).",
    expect_kind="job-spec rule (docker run with no memlock ulimit) with the node's daemon default",
    working={"job": {"memlock_kib": -1}, "absent": ["JOB-MEMLOCK-TOO-LOW"]},
)

case(
    id="mxnet-21114-driver-autoupdate-nvml-mismatch",
    url="https://github.com/apache/mxnet/issues/21114",
    cause="CI GPU nodes auto-updated NVIDIA packages at launch, so the user-space driver libraries no longer "
    "matched the loaded kernel module and every GPU container failed at the nvidia-container-cli prestart hook.",
    established_by="the CI maintainer (josephevans): auto-updates at launch override packages and cause the "
    "mismatch; the AMIs were rebuilt with updated packages and the jobs recovered; the reporter notes a reboot "
    "cures it.",
    fix="keep driver packages and the loaded module in step (pin the packages in the AMI, or reboot after an update)",
    seen="nvidia-container-cli: initialization error: nvml error: driver/library version mismatch: unknown.",
    image={"profile": "no-rdma-userspace", "cuda": {"version": "11.7.1", "origin": "env", "path": "image config Env"}},
    node={"name": "mxnet-ci-gpu", "gpu": {"driver_version": "510.73.08", "userspace_driver_version": "515.48.07"}},
    assumptions=[
        "both driver versions are illustrative: the thread states only that they differ",
        "the CI image is a CUDA image (CUDA 11.7.1 illustrative): the failing job is a GPU container",
    ],
    expect=[{"id": "NODE-DRIVER-USERSPACE-MISMATCH", "severity": "error"}],
    mechanism="When the NVIDIA user-space libraries (libnvidia-ml) are upgraded but the old kernel module stays "
    "loaded, NVML init fails with 'driver/library version mismatch' and nvidia-container-cli cannot set up any GPU "
    "container.",
    expect_kind="node-only rule (loaded kernel module version vs. user-space driver version)",
    working={"node": {"gpu": {"userspace_driver_version": "510.73.08"}}, "absent": ["NODE-DRIVER-USERSPACE-MISMATCH"]},
)

case(
    id="nvidia-docker-182-kernel-module-older-than-client",
    url="https://github.com/NVIDIA/nvidia-docker/issues/182",
    cause="The NVIDIA driver was upgraded to 367.44 but the loaded kernel module was still 367.35, so the "
    "nvidia-docker plugin and nvidia-smi failed with an NVRM API mismatch until the machine was rebooted.",
    established_by="a maintainer (3XX0): 'Your kernel module is still 367.35, you should load the 367.44 instead'; "
    "the reporter: after a reboot everything works.",
    fix="reload the nvidia modules (or reboot) after a driver upgrade",
    seen="NVRM: API mismatch: the client has the version 367.44, but",
    image={
        "profile": "no-rdma-userspace",
        "reference": "nvidia/cuda (2016)",
        "cuda": {"version": "8.0.44", "origin": "env", "path": "image config Env"},
    },
    node={"name": "workstation", "gpu": {"driver_version": "367.35", "userspace_driver_version": "367.44"}},
    assumptions=["the container is an nvidia/cuda 8.0 image (nvidia-docker of 2016; version illustrative)"],
    expect=[{"id": "NODE-DRIVER-USERSPACE-MISMATCH", "severity": "error"}],
    mechanism="The loaded nvidia.ko (367.35) is older than the user-space driver (367.44); NVRM rejects the client "
    "with 'API mismatch' and no GPU container can start.",
    expect_kind="node-only rule (loaded module vs. user-space driver)",
    working={"node": {"gpu": {"driver_version": "367.44"}}, "absent": ["NODE-DRIVER-USERSPACE-MISMATCH"]},
)

case(
    id="pocketflow-105-socket-ifname-eth1-not-in-container",
    url="https://github.com/Tencent/PocketFlow/issues/105",
    cause="PocketFlow's launch set NCCL_SOCKET_IFNAME=eth1; inside the Horovod container the only interface was "
    "eth0, so NCCL found 0 socket interfaces and stopped. Changing it to eth0 made it work.",
    established_by="the reporter's verified fix (eth0 worked) after the maintainer pointed at the interface option.",
    fix="set NCCL_SOCKET_IFNAME to the container's interface (eth0)",
    seen="transport/net_socket.cu:39 NCCL WARN NET/Socket : no interface found",
    image={
        "profile": "no-rdma-userspace",
        "reference": "uber/horovod (2018)",
        "nccl": [{"version": "2.2.13", "origin": "library", "path": "/usr/lib/x86_64-linux-gnu/libnccl.so.2.2.13"}],
    },
    node={"name": "gpu-server", "net_interfaces": [{"name": "lo"}, {"name": "eth0", "operstate": "up"}]},
    job={
        "runtime": "docker",
        "kind": "docker run",
        "host_network": False,
        "env": {"NCCL_SOCKET_IFNAME": "eth1", "NCCL_IB_DISABLE": "1"},
    },
    assumptions=[
        "the interfaces listed are the container's (Docker bridge network: lo and eth0); modelled as node interfaces",
        "NCCL 2.2.13 (the Horovod image of the time; the log's 'transport/net_socket.cu' paths are NCCL 2.2-era)",
    ],
    expect=[{"id": "ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE", "severity": "error"}],
    mechanism="NCCL_SOCKET_IFNAME names an interface (eth1) that the container's network namespace does not have, "
    "so NCCL's socket transport finds no interface and init fails.",
    expect_kind="env rule on job env + the container's interfaces",
    working={"job": {"env": {"NCCL_SOCKET_IFNAME": "eth0"}}, "absent": ["ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE"]},
)

case(
    id="dynamo-pr1140-ucx-built-without-verbs",
    url="https://github.com/ai-dynamo/dynamo/pull/1140",
    cause="dynamo's container built UCX before the EFA installer / libibverbs was present, so UCX was configured "
    "without verbs ('libibverbs not found', IB modules: < >) and at run time fell back to TCP although the device "
    "supports RDMA.",
    established_by="the PR's configure output (no IB modules) and its fix installing EFA/libibverbs before building "
    "UCX.",
    fix="install libibverbs (EFA installer) before configuring UCX so its IB modules are built",
    seen="configure: WARNING: libibverbs not found",
    image={
        "profile": "efa-installer",
        "ucx": {"version": "1.18.0", "origin": "ucx.pc", "path": "/usr/local/ucx/lib/pkgconfig/ucx.pc"},
    },
    node={"name": "p5", "rdma": {"stack": "inbox", "devices": [{"name": "rdmap79s0", "driver": "efa"}]}},
    assumptions=["UCX version and path illustrative", "EFA node (the PR is about EFA)"],
    expect=[],
    mechanism="UCX configured without libibverbs builds no IB transport modules (IB modules: < >), so its "
    "inter-node traffic can only use TCP even on RDMA-capable nodes.",
    expect_kind="rule on image facts (UCX's installed transport modules vs. the node's RDMA devices)",
    sealed_source="issues",
)

case(
    id="pplx-garden-pr3-dmabuf-on-linux-5.10",
    url="https://github.com/perplexityai/pplx-garden/pull/3",
    cause="On Linux 5.10 (p5 with the Amazon Linux 2 5.10 kernel) the CUDA driver can export a DMA-BUF fd but the "
    "kernel RDMA stack cannot register it (ibv_reg_dmabuf_mr support landed in 5.12); libibverbs returns "
    "EPROTONOSUPPORT and pplx-garden's registration failed.",
    established_by="merged PR enabling DMA-BUF only on Linux >= 5.12, citing aws-ofi-nccl's dmabuf check; an "
    "aws-ofi-nccl maintainer made the same observation for p5 + AL2 5.10 (aws/aws-ofi-nccl PR 618).",
    fix="use DMA-BUF only on kernels >= 5.12 (fall back to peer memory), or a newer kernel",
    seen=None,
    image={"profile": "efa-installer"},
    node={
        "name": "p5-al2",
        "kernel": {"release": "5.10.230-223.885.amzn2.x86_64"},
        "rdma": {"stack": "inbox", "devices": [{"name": "rdmap79s0", "driver": "efa"}]},
        "gpu": {"kernel_module": "open", "gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3"}]},
    },
    assumptions=["the AL2 5.10 kernel release string is illustrative", "open kernel modules (DMA-BUF export works)"],
    expect=[],
    mechanism="The kernel's RDMA core before 5.12 has no ib_umem_dmabuf / reg_dmabuf_mr uverbs method, so "
    "ibv_reg_dmabuf_mr fails (EPROTONOSUPPORT) even though CUDA exports the dma-buf; a library that uses DMA-BUF "
    "unconditionally fails registration.",
    expect_kind="rule on node kernel + the image's RDMA consumer (non-NCCL libraries that register via DMA-BUF)",
)

case(
    id="nv-peer-memory-41-peermem-only-on-host-negative",
    url="https://github.com/Mellanox/nv_peer_memory/issues/41",
    cause="Not a failure: 'service nv_peer_mem status' says 'unrecognized service' inside the Horovod container "
    "while the module is loaded on the host. nv_peer_mem is a host kernel module; the container does not need it.",
    established_by="a Mellanox developer (haggaie): 'regarding nv_peer_mem, it is only required' on the host; "
    "horovod/horovod#940 cites this comment as the answer to where nv_peer_memory must be installed.",
    fix="nothing for GPUDirect RDMA inside the container (load nv_peer_mem on the host)",
    seen="nv_peer_mem: unrecognized service",
    image={"profile": "rdma-core-39-mlx5", "reference": "uber/horovod (2018)"},
    node={
        "name": "c4140-v100",
        "rdma": {"stack": "mlnx_ofed", "devices": [MLX5], "peer_memory_api": True},
        "gpu": {
            "driver_version": "396.26",
            "peermem": {"legacy_nv_peer_mem": True, "loaded": False},
            "gpus": [{"index": i, "name": "Tesla V100-SXM2-16GB"} for i in range(4)],
        },
    },
    assumptions=[
        "driver 396.26 and MLNX_OFED host stack (not stated; 2018 C4140 V100 servers)",
        "the image is given an RDMA user space here (the reporter's horovod image of the time lacked libibverbs, "
        "which is a different question in the same thread)",
    ],
    expect=[],
    must_not=["GDR-PEERMEM-MISSING"],
    mechanism="GPUDirect RDMA's peer-memory client is a host kernel module; its service script being absent in "
    "the container is irrelevant, the container only needs the RDMA user space and the HCA devices.",
    expect_kind="negative: no rule should fire on the peer-memory path when the host module is loaded",
)

# ---------------------------------------------------------------- batch 3
case(
    id="nccl-2101-vgpu-without-uvm-nccl-2.27",
    url="https://github.com/NVIDIA/nccl/issues/2101",
    cause="On a VMware ESXi VM with NVIDIA vGPU and Unified Virtual Memory not enabled for the passthrough, NCCL "
    "2.27.5 (vLLM's, tensor parallel > 1) failed during init with Cuda failure 'operation not supported' at "
    "init.cc:426; NCCL_CUMEM_ENABLE=0 did not help. Enabling UVM (pciPassthruX.cfg.enable_uvm=1) fixed it, and "
    "NCCL 2.21.5 worked in the same VM without UVM.",
    established_by="the reporter's A/B: enabling UVM resolves the crash; NCCL 2.21.5 works unchanged in the same VM",
    fix="enable UVM for the vGPU (pciPassthruX.cfg.enable_uvm=1), or use an NCCL that does not need it (2.21.5 worked)",
    seen="RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
    image={
        "profile": "no-rdma-userspace",
        "nccl": [
            {
                "version": "2.27.5",
                "origin": "pip",
                "path": "/usr/local/lib/python3.12/dist-packages/nvidia_nccl_cu12-2.27.5.dist-info/METADATA",
            }
        ],
        "cuda": {"version": "12.9.0", "origin": "pip", "path": "torch"},
    },
    node={
        "name": "esxi-vgpu-vm",
        "gpu": {
            "driver_version": "575.51.06",
            "gpus": [{"index": 0, "name": "NVIDIA L40S-48Q"}, {"index": 1, "name": "NVIDIA L40S-48Q"}],
        },
    },
    job={
        "runtime": "kubernetes",
        "kind": "Pod",
        "env": {"NCCL_CUMEM_ENABLE": "0", "NCCL_CUMEM_HOST_ENABLE": "0"},
        "gpus": 2,
    },
    assumptions=[
        "vGPU profile and guest driver illustrative (cudaDriverVersion 12090 printed, i.e. a 575-series driver)",
        "NCCL 2.27.5 from vLLM's nvidia-nccl-cu12 wheel (the log prints 'NCCL version 2.27.5+cuda12.9')",
        "the node facts cannot express 'UVM disabled for the vGPU VM' today",
        "the workload runs as a Kubernetes pod (the pod-style hostname in the log; not stated)",
    ],
    expect=[],
    mechanism="In a vGPU VM without UVM enabled, CUDA calls NCCL 2.27 makes during init (not gated by "
    "NCCL_CUMEM_ENABLE) return cudaErrorNotSupported, so communicator init fails with 'operation not supported'.",
    expect_kind="rule on node facts (vGPU/VM without UVM) + image NCCL version",
    must_not=["CUMEM-OLD-DRIVER"],
    working={
        "image": {
            "nccl": [
                {
                    "version": "2.21.5",
                    "origin": "pip",
                    "path": "/usr/local/lib/python3.12/dist-packages/nvidia_nccl_cu12-2.21.5.dist-info/METADATA",
                }
            ]
        },
        "absent": [],
    },
)

case(
    id="determined-pr4297-nccl-picks-rsip-interface",
    url="https://github.com/determined-ai/determined/pull/4297",
    cause="On the Cray 'horizon' cluster (no InfiniBand; Gemini fabric through IPoGIF) NCCL picked the 'rsip' "
    "interface (172.x) instead of 'ipogif0' (10.x) for DeepSpeed jobs, so ranks could not reach each other.",
    established_by="merged PR setting NCCL_SOCKET_IFNAME from the cluster's configured dtrain_network_interface, "
    "with the ifconfig evidence of both interfaces.",
    fix="set NCCL_SOCKET_IFNAME to the fabric interface (ipogif0)",
    seen=None,
    image={"profile": "no-rdma-userspace"},
    node={
        "name": "nid00153",
        "net_interfaces": [{"name": "lo"}, {"name": "ipogif0", "operstate": "up"}, {"name": "rsip", "operstate": "up"}],
    },
    job={"runtime": "docker", "kind": "docker run", "host_network": True, "env": {}},
    assumptions=[
        "the task container uses the host network (Determined on the Cray nodes; not stated)",
        "operstates not stated",
    ],
    expect=[],
    mechanism="Without NCCL_SOCKET_IFNAME NCCL takes the first interface that is not lo/docker; on these nodes "
    "that is rsip, whose 172.x address is not routable between nodes, so bootstrap connections fail.",
    expect_kind="env/node rule (multiple candidate interfaces, no NCCL_SOCKET_IFNAME: which one NCCL picks)",
    working={"job": {"env": {"NCCL_SOCKET_IFNAME": "ipogif0"}}, "absent": []},
)

# ---------------------------------------------------------------- negatives: the threads show these setups working
case(
    id="aws-do-eks-pr63-plugin-only-efa-works-negative",
    url="https://github.com/aws-samples/aws-do-eks/pull/63",
    cause="Working configuration: the same image on the same B200 node with only the EFA device plugin's 8 uverbs "
    "in the pod (no /dev/infiniband hostPath): fi_info -p efa lists 24 provider entries.",
    established_by="the PR's A/B table (plugin-only spec, same node as the failing pod, 24 entries); merged",
    fix="n/a (this is the fixed spec)",
    seen=None,
    image={
        "profile": "efa-installer",
        "reference": "dynamo-vllm-efa:1.3.1-patched",
        "nccl_net_plugins": [{"name": "aws-ofi-nccl", "path": "/opt/amazon/ofi-nccl/lib/libnccl-net.so"}],
    },
    node={
        "name": "p6-b200",
        "rdma": {
            "stack": "inbox",
            "devices": [{"name": f"rdmap{n}s0", "driver": "efa"} for n in (79, 80, 81, 82, 96, 97, 98, 99)]
            + [{"name": "ibp115s0f0", "driver": "mlx5_core"}, {"name": "ibp116s0f0", "driver": "mlx5_core"}],
        },
        "gpu": {"gpus": [{"index": i, "name": "NVIDIA B200"} for i in range(8)]},
    },
    job={
        "runtime": "kubernetes",
        "kind": "LeaderWorkerSet",
        "resources": {"vpc.amazonaws.com/efa": "8", "nvidia.com/gpu": "8"},
        "gpus": 8,
    },
    assumptions=["as in aws-do-eks-pr63-hostpath-infiniband-breaks-efa (including the aws-ofi-nccl plugin path)"],
    expect=[],
    must_not=["JOB-RDMA-DEVICES-NOT-EXPOSED", "EFA-NO-OFI-PLUGIN"],
    mechanism="Negative: the EFA device plugin resource exposes exactly the EFA uverbs devices; libfabric's EFA "
    "provider initialises and NCCL uses EFA.",
    expect_kind="negative: no job-spec or EFA rule should fire",
)

case(
    id="aws-dlc-pr6469-fixed-image-autodetects-negative",
    url="https://github.com/aws/deep-learning-containers/pull/6469",
    cause="Working configuration after the PR: the image no longer sets NCCL_SOCKET_IFNAME in its Env; "
    "/etc/nccl.conf's NCCL_SOCKET_IFNAME=^docker0,lo lets NCCL pick ens6 on Slurm/EC2 hosts.",
    established_by="merged PR (the install_efa nccl.conf exclusion list 'works on all platforms')",
    fix="n/a (this is the fixed image)",
    seen=None,
    image={"profile": "efa-installer", "nccl_conf": {"NCCL_SOCKET_IFNAME": "^docker0,lo"}},
    node={
        "name": "hyperpod-slurm",
        "net_interfaces": [{"name": "lo"}, {"name": "ens6", "operstate": "up"}, {"name": "docker0"}],
    },
    job={"runtime": "enroot", "kind": "slurm", "host_network": True},
    assumptions=["as in aws-dlc-pr6469-image-env-socket-ifname-eth0"],
    expect=[],
    must_not=["ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE", "ENV-NCCL-SOCKET-IFNAME-ALLOWS-LO"],
    mechanism="Negative: an exclusion list that removes docker0 and lo leaves the host's ens6 for bootstrap.",
    expect_kind="negative: no interface rule should fire",
)

case(
    id="ompi-11458-openib-banner-on-omnipath-negative",
    url="https://github.com/open-mpi/ompi/issues/11458",
    cause="Not a failure: Open MPI 4.x prints 'infiniband ports on a device are not used by default ... use UCX' "
    "on Omni-Path nodes running with PML cm / MTL psm2 simply because verbs support was compiled in; the job "
    "runs over PSM2.",
    established_by="an Open MPI maintainer (hppritcha): yes, it is because verbs support is compiled in; "
    "configure --with-verbs=no removes it; the reporter confirmed it behaves as intended on Omni-Path.",
    fix="nothing (or build Open MPI --with-verbs=no)",
    seen="By default, for Open MPI 4.0 and later, infiniband ports on a device",
    image={
        "profile": "rdma-core-39-mlx5",
        "env": {"OMPI_MCA_PML": "cm", "OMPI_MCA_MTL": "psm2,^ucx", "OMPI_MCA_BTL": "self,^tcp,^openib"},
    },
    node={"name": "opa-node", "rdma": {"stack": "inbox", "devices": [{"name": "hfi1_0", "driver": "hfi1"}]}},
    assumptions=[
        "Open MPI runs from an image with rdma-core user space (the thread's site install; illustrative)",
        "the MCA settings are modelled as image Env (the reporter sets them with setenv)",
    ],
    expect=[],
    must_not=["RDMA-NO-MLX5-PROVIDER", "UCX-TLS-NO-INTERNODE"],
    mechanism="Negative: the openib BTL's UCX-policy banner on an Omni-Path (hfi1) node is informational when "
    "PSM2 carries the traffic.",
    expect_kind="negative: no RDMA user-space rule should fire for an hfi1 node using PSM2",
)

case(
    id="sglang-pr1427-fixed-image-negative",
    url="https://github.com/sgl-project/sglang/pull/1427",
    cause="Working configuration after the PR: the sglang image with libibverbs installed on the same InfiniBand "
    "deployment; NCCL uses NET/IB instead of sockets.",
    established_by="merged PR; the author reports the fix works and speeds up multi-node deployments",
    fix="n/a (this is the fixed image)",
    seen=None,
    image={"profile": "rdma-core-39-mlx5", "reference": "lmsysorg/sglang (with libibverbs-dev)"},
    node={
        "name": "ib-node",
        "rdma": {"stack": "mlnx_ofed", "devices": [MLX5]},
        "net_interfaces": [{"name": "ib0", "operstate": "up"}],
    },
    assumptions=[
        "as in sglang-pr1427-image-lacks-libibverbs; the installed rdma-core is modelled as rdma-core 39 "
        "with the mlx5 provider (libibverbs-dev pulls ibverbs-providers on Ubuntu)"
    ],
    expect=[],
    must_not=["RDMA-NO-LIBIBVERBS", "RDMA-NO-MLX5-PROVIDER"],
    mechanism="Negative: libibverbs and the mlx5 provider in the image let NCCL open the HCAs.",
    expect_kind="negative: no RDMA user-space rule should fire",
)

case(
    id="ainode-pr87-engine-containers-without-infiniband",
    url="https://github.com/getainode/ainode/pull/87",
    cause="AINode decided whether to pass /dev/infiniband to the engine containers by checking the device node "
    "from inside its own container, where it does not exist; the engine containers on both DGX Spark nodes were "
    "started with no devices, so NCCL initialised no network plugin and ncclCommInitRank failed (invalid usage).",
    established_by="merged PR: docker inspect on both engine containers showed Devices: []; the probe now reads "
    "/sys/class/infiniband; live proof on the same pair followed",
    fix="pass the host's /dev/infiniband devices to the engine containers",
    seen="NCCL WARN Failed to initialize any NET plugin",
    image={
        "profile": "rdma-core-39-mlx5",
        "platform": "linux/arm64",
        "nccl": [
            {
                "version": "2.27.7",
                "origin": "pip",
                "path": "/usr/local/lib/python3.12/dist-packages/nvidia_nccl_cu12-2.27.7.dist-info/METADATA",
            }
        ],
    },
    node={
        "name": "spark-2",
        "arch": "arm64",
        "rdma": {
            "stack": "inbox",
            "devices": [
                {"name": "rocep1s0f1", "driver": "mlx5_core", "link_layer": "Ethernet"},
                {"name": "roceP2p1s0f1", "driver": "mlx5_core", "link_layer": "Ethernet"},
            ],
        },
        "gpu": {"gpus": [{"index": 0, "name": "NVIDIA GB10"}]},
    },
    job={
        "runtime": "docker",
        "kind": "docker run",
        "devices": [],
        "privileged": False,
        "host_network": True,
        "gpus": -1,
    },
    assumptions=[
        "HCA names illustrative (ConnectX-7 RoCE ports of a DGX Spark)",
        "the engine image's RDMA user space and NCCL version are illustrative (a vLLM arm64 image)",
        "host networking and all GPUs for the engine containers (not stated)",
    ],
    expect=[{"id": "JOB-RDMA-DEVICES-NOT-EXPOSED", "severity": "warning"}],
    mechanism="A launch that passes no /dev/infiniband devices (and is not privileged) leaves libibverbs with no "
    "usable uverbs device in the container, so NCCL has no IB device and, with sockets disallowed or failing, init "
    "fails.",
    expect_kind="job-spec rule on job + node facts (node has HCAs, the container gets none)",
    working={"job": {"devices": ["/dev/infiniband"]}, "absent": ["JOB-RDMA-DEVICES-NOT-EXPOSED"]},
)

case(
    id="dynamo-pr3343-ucx-no-ib-missing-libibverbs-symlink",
    url="https://github.com/ai-dynamo/dynamo/pull/3343",
    cause="In the dynamo-base and TRT-LLM images (built on CUDA base images whose ibverbs dev packages lack the "
    "libibverbs.so symlink), UCX's configure did not enable the IB and EFA modules, so UCX had no RDMA transport "
    "and ucx_info -d listed no InfiniBand devices.",
    established_by="merged PR: reinstalling the RDMA packages (apt --reinstall) recreates the symlink; tested with "
    "ucx_info -d listing the InfiniBand devices afterwards; the same broken-symlink finding in ai-dynamo/nixl PR 889",
    fix="apt-get install --reinstall the ibverbs dev packages before building UCX (or build from a base image "
    "with intact packages)",
    seen=None,
    image={
        "profile": "rdma-core-39-mlx5",
        "reference": "dynamo-base (CUDA base image)",
        "ucx": {"version": "1.19.0", "origin": "ucx.pc", "path": "/usr/local/ucx/lib/pkgconfig/ucx.pc"},
    },
    node={"name": "ib-node", "rdma": {"stack": "mlnx_ofed", "devices": [MLX5]}},
    job={
        "runtime": "docker",
        "kind": "docker run",
        "devices": ["/dev/infiniband"],
        "memlock_kib": -1,
        "host_network": True,
    },
    assumptions=[
        "the run-time libibverbs and mlx5 provider are present (the PR's test lists IB devices once UCX is rebuilt); "
        "modelled as rdma-core 39",
        "UCX version/path illustrative",
        "the docker run is the PR's test command (--ulimit memlock=-1, --device=/dev/infiniband, --net=host)",
    ],
    expect=[],
    mechanism="A build image whose libibverbs development symlink (libibverbs.so) is missing makes UCX's configure "
    "fail its -libverbs link test, so UCX is built without IB/EFA transport modules and runs TCP-only although "
    "the run-time RDMA user space and devices are fine.",
    expect_kind="rule on image facts (UCX's built transport modules vs. the RDMA devices it is deployed to)",
)


def main() -> None:
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for c in CASES:
        for key in (
            "id",
            "url",
            "cause",
            "established_by",
            "fix",
            "seen",
            "image",
            "node",
            "assumptions",
            "expect",
            "mechanism",
            "expect_kind",
            "sealed_source",
        ):
            assert key in c, (c["id"], key)
    with open(os.path.join(HERE, "cases.json"), "w", encoding="utf-8") as fh:
        json.dump({"description": DESCRIPTION, "cases": CASES}, fh, indent=1)
    print(len(CASES), "cases written")


if __name__ == "__main__":
    main()
