"""Build /work/sealed4/logs/: one file per verbatim log excerpt plus logs/index.json and logs/README.md.

Each excerpt holds lines copied from the public thread named in `url` (trimmed to the lines that matter, lines
never edited; a thread's own '...' elisions and redactions are kept; markdown backticks/quote markers around a
quoted line are dropped and `notes` says so). The text of every excerpt is embedded below and written out by
main(), so the set can be rebuilt from this file alone.
`expect_signatures`: ids from src/imgcheck/data/triage/signatures.json whose causes describe the established
cause today ([] if none does, or the log is noise from a job that worked -> `negative`); `expect_causes` names
the cause ids of those signatures that fit.
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


# ---------------------------------------------------------------- driver / NVML
log(
    "kgk2@bock:~$ nvidia-smi\n"
    "Failed to initialize NVML: Driver/library version mismatch\n"
    "kgk2@bock:~$ cat /proc/driver/nvidia/version \n"
    "NVRM version: NVIDIA UNIX x86_64 Kernel Module  520.56.06  Thu Oct  6 21:38:55 UTC 2022\n"
    "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14) \n",
    id="illinois-scicomp-70-nvml-mismatch-module-520",
    url="https://github.com/illinois-scicomp/machine-shop-maintenance/issues/70",
    cause="Loaded kernel module 520.56.06 while the installed userspace (nvidia-smi package) was 525.85.12 after an "
    "update left apt in a broken state.",
    established_by="reporter's diagnosis (/proc version vs dpkg) and verified fix (apt sources repaired, apt install "
    "--fix-broken; nvidia-smi works)",
    mechanism="kernel module / userspace driver version mismatch -> NVML init fails",
    expect_signatures=["NVIDIA-DRIVER-LIBRARY-MISMATCH"],
    expect_causes=["module-userspace-mismatch"],
    notes="two shell blocks of the description and first comment joined (the dpkg table that follows is omitted)",
)
log(
    "ERROR: for dalle-backend  Cannot start service dalle-backend: failed to create shim: OCI runtime create \n"
    "failed: runc create failed: unable to start container process: error during container init: error running \n"
    "hook #0: error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: initialization error: \n"
    "nvml error: driver/library version mismatch: unknown\n"
    "ERROR: Encountered errors while bringing up the project.\n"
    "[ 7386.259769] NVRM: API mismatch: the client has the version 515.48.07, but\n"
    "               NVRM: this kernel module has the version 510.73.05.  Please\n"
    "               NVRM: make sure that this kernel module and all NVIDIA driver\n"
    "               NVRM: components have the same version.\n",
    id="dalle-playground-104-container-cli-nvml-mismatch-515-vs-510",
    url="https://github.com/saharmor/dalle-playground/issues/104",
    cause="The host's NVIDIA userspace was 515.48.07 while the loaded kernel module was still 510.73.05, so "
    "nvidia-container-cli (the container runtime hook) failed NVML init and no GPU container could start.",
    established_by="reporter's dmesg evidence in the thread ('NVRM: API mismatch ... Looks like my kernel module "
    "somehow got out of sync.')",
    mechanism="kernel module older than the userspace driver -> nvidia-container-cli NVML init error",
    expect_signatures=["NVIDIA-DRIVER-LIBRARY-MISMATCH"],
    expect_causes=["module-userspace-mismatch"],
    notes="the docker-compose error has the reporter's own added newlines ('added some newlines for readability'); "
    "the dmesg block is from the reporter's comment",
)

# ---------------------------------------------------------------- RDMA / UCX
log(
    "UCX ERROR ibv_create_cq(cqe=4096) failed: Cannot allocate memory\n",
    id="mscclpp-335-ucx-create-cq-enomem-no-ipc-lock",
    url="https://github.com/microsoft/mscclpp/issues/335",
    cause="Non-privileged docker container with --device /dev/infiniband but without CAP_IPC_LOCK; the verbs CQ "
    "could not be created (memory pinning denied).",
    established_by="commenter's verified fix ('it is necessary to add the --cap-add=IPC_LOCK option')",
    mechanism="no IPC_LOCK / memlock in the container -> ibv_create_cq ENOMEM",
    expect_signatures=["IBV-CALL-FAILED", "UCX-ERROR", "OMPI-CQ-CREATE"],
    expect_causes=["memlock-in-container", "ucx-reg-limits", "memlock-limit"],
    notes="the line as quoted inline (backticks dropped) in the comment of 2024-08-14",
)
log(
    "ERROR mlx5_0: both WC and NC_DEDICATED UAR allocation types are not supported\n",
    id="ucx-10180-devx-uar-types-unsupported",
    url="https://github.com/openucx/ucx/issues/10180",
    cause="UCX 1.18 (master) tried DevX UAR allocation on a device that supports neither the WC nor the "
    "NC_DEDICATED type and logged it at ERROR; building --without-devx cleared it. The merged fix "
    "openucx/ucx#10187 lowers it to DIAG and lets UCX disable DevX automatically.",
    established_by="reporter's A/B (--without-devx) and the maintainers' merged PR openucx/ucx#10187 referencing "
    "the issue",
    mechanism="DevX unusable on this device/driver -> UCX must fall back to verbs (no DevX)",
    expect_signatures=["UCX-ERROR"],
    expect_causes=["ucx-devx-unsupported"],
    notes="the issue title (the line as the reporter gives it)",
)
log(
    "rc_iface.c:650  UCX  ERROR Failed to create TM XRQ: No route to host\n",
    id="ucx-2195-tm-xrq-roce-cx5-old-mofed",
    url="https://github.com/openucx/ucx/issues/2195",
    cause="UCX 1.3 enabled RC hardware tag matching on a ConnectX-5 in RoCE mode; the installed MLNX_OFED could not "
    "create the TM XRQ on RoCE. UCX_RC_TM_ENABLE=n avoided it; a newer MLNX_OFED fixed it.",
    established_by="maintainers in the thread (yosefe: 'should be fixed in latest MOFED version'; reporter "
    "confirmed 'it's fixed in MOFED'; workaround UCX_RC_TM_ENABLE=n)",
    mechanism="MOFED version without RoCE support for hardware tag matching -> UCP worker creation fails",
    expect_signatures=[],
    notes="the description's line (backticks dropped); no signature's causes name an MLNX_OFED defect",
)
log(
    "./a.out: relocation error: /gpfs/projects/ChapmanGroup/opt/ucx/git/lib/ucx/libuct_ib.so.0: symbol "
    "mlx5dv_is_supported, version MLX5_1.8 not defined in file libmlx5.so.1 with link time reference\n",
    id="ucx-5469-uct-ib-built-against-other-libmlx5",
    url="https://github.com/openucx/ucx/issues/5469",
    cause="UCX was built on a node whose MLNX_OFED/rdma-core userspace differed from the node it ran on (package "
    "lists of login and compute nodes differ); the UCX IB module needs a libmlx5 symbol version the running "
    "node's libmlx5 lacks.",
    established_by="maintainer (yosefe): 'UCX has to be run with same MLNX_OFED / libibverbs version it was built "
    "with'; reporter rebuilt UCX on the compute node and the errors there stopped (this line is the login node "
    "then)",
    mechanism="UCX verbs module linked against a newer libmlx5 than the one loaded -> relocation error",
    expect_signatures=["IBVERBS-SYMBOL-VERSION"],
    expect_causes=["built-against-other-rdma-core"],
    notes="the line from the reporter's comment of 2020-07-24",
)

# ---------------------------------------------------------------- EFA / OFI
log(
    "ip-172-31-9-96:26565:26565 [0] NCCL INFO NET/Socket : Using [0]eth0:172.31.9.96<0>\n"
    "\n"
    "ip-172-31-9-96:26565:26565 [0] get_ofi_provider:312 NCCL WARN NET/OFI Could not find any optimal provider\n"
    "\n"
    "ip-172-31-9-96:26565:26565 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n",
    id="nccl-229-ofi-no-provider-then-libibverbs-fallback",
    url="https://github.com/NVIDIA/nccl/issues/229",
    cause="The aws-ofi-nccl plugin could not find a usable libfabric provider, so NCCL fell back to its internal IB "
    "transport (no libibverbs on the EFA instance) and then to sockets; the libibverbs warning is a consequence, "
    "not the cause (NCCL 2.4.6, 2019).",
    established_by="NCCL maintainer (sjeaugey): 'The real error here is : get_ofi_provider ... Could not find any "
    "optimal provider. This means the OFI plugin didn't initialize correctly ... it tries to use the next choices "
    ": Infiniband (which is not available -- hence the libibverbs.so not found message) and then falls back on "
    "Sockets.'",
    mechanism="OFI plugin init failure (no EFA provider) -> fallback; libibverbs message is secondary",
    expect_signatures=["AWS-OFI-ERROR"],
    expect_causes=["read-ofi-warn"],
    notes="description's output lines (nccl-tests over two p3dn/V100 EFA instances); LIBIBVERBS-MISSING as the "
    "first diagnosis would blame the secondary message",
)
log(
    "NCCL INFO NET/Plugin: Failed to find ncclCollNetPlugin_v6 symbol.\n"
    "NCCL INFO NET/Plugin: Failed to find ncclCollNetPlugin symbol (v4 or v5).\n",
    id="aws-dlc-2675-collnet-symbol-info-negative",
    url="https://github.com/aws/deep-learning-containers/issues/2675",
    cause="(negative) aws-ofi-nccl does not provide a CollNet plugin; NCCL logs that it found no CollNet symbols "
    "and continues with the net plugin. The AWS maintainer states these lines do not affect NCCL communication.",
    established_by="AWS DLC maintainer (roywei): 'It's ok to see the following warning, it does not affect NCCL to "
    "communicate'",
    mechanism="(negative) informational plugin-probe lines from a working setup",
    expect_signatures=[],
    negative=True,
    notes="the two lines as quoted by the maintainer",
)

# ---------------------------------------------------------------- sockets / gloo / c10d
log(
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1333, "
    "remote process exited or there was a network error, NCCL version 2.18.6\n",
    id="deepspeedexamples-845-remote-exited-socket-iface",
    url="https://github.com/deepspeedai/DeepSpeedExamples/issues/845",
    cause="Two-node DeepSpeed run (2x RTX 3090 per node, no InfiniBand): NCCL's socket transport used the eno1 "
    "interface, which did not work between the nodes; selecting the bridge interface with NCCL_SOCKET_IFNAME "
    "(plus NCCL_IB_DISABLE=1) made it run.",
    established_by="reporter's verified fix ('I think it is because the socket interface error. I have solved it "
    "... I can't use eno1 interface ... So i use the br0 finally.')",
    mechanism="wrong socket interface chosen for inter-node NCCL traffic -> remote process exited / network error",
    expect_signatures=["NCCL-ERR-6"],
    expect_causes=["network"],
    notes="the issue title (the error line as reported)",
)
log(
    "RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error\n",
    id="sglang-3226-gloo-full-mesh-multinode",
    url="https://github.com/sgl-project/sglang/issues/3226",
    cause="Multi-node sglang: Gloo (used for the CPU process group) bound an interface the other node could not "
    "reach; setting GLOO_SOCKET_IFNAME to the right interface fixed it on an IB cluster.",
    established_by="commenter's verified fix in the thread (homily707: 'Set Env GLOO_SOCKET_IFNAME works for me', "
    "on an IB network)",
    mechanism="Gloo uses an unreachable interface between nodes -> connectFullMesh fails",
    expect_signatures=["GLOO-CONNECT-FULL-MESH"],
    expect_causes=["gloo-unreachable"],
    notes="the issue title line (RuntimeError prefix as in the title)",
)
log(
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.7/site-packages/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py", '
    "line 156, in _create_tcp_store\n"
    "    host, port, is_master=is_server, timeout=timedelta(seconds=read_timeout)\n"
    "ValueError: host not found: Name or service not known\n",
    id="pytorch-73682-tcpstore-dns-not-yet-on-k8s",
    url="https://github.com/pytorch/pytorch/issues/73682",
    cause="On Kubernetes (1.18, Volcano) the DNS entry of the rendezvous host is created at the same time as or "
    "after the pods; TCPStore treated the failed hostname lookup as fatal instead of retrying, so jobs failed "
    "sporadically depending on DNS propagation.",
    established_by="PyTorch maintainer (d4l3k) diagnosis in the issue (labels module: c10d, triaged; closed), "
    "with mitigations (Volcano fix, retries, etcd rendezvous)",
    mechanism="rendezvous hostname not resolvable yet (DNS propagation) -> TCPStore creation fails",
    expect_signatures=[],
    notes="no signature in signatures.json matches 'host not found' or names DNS propagation on Kubernetes, so none is expected; the traceback from the description",
)

# ---------------------------------------------------------------- NCCL release
log(
    "  thread #16, name = 'python', stop reason = signal SIGSTOP\n"
    "    frame #0: 0x00007fb0b7f0792d libc.so.6`syscall + 29\n"
    "    frame #1: 0x00007fb08faef142 libstdc++.so.6`std::__atomic_futex_unsigned_base::_M_futex_wait_until_steady("
    "this=<unavailable>, __addr=0x00007fac98000b00, __val=2147483648, __has_timeout=true, __s=<unavailable>, __ns="
    "(__r = 711393434)) at futex.cc:217:18\n"
    "    frame #2: 0x00007fb090db0b85 libtorch_cuda.so`c10d::ProcessGroupNCCL::waitForFutureOrTimeout(std::future<bool>&, "
    "std::chrono::duration<long, std::ratio<1l, 1000l>> const&, std::__cxx11::basic_string<char, std::char_traits<char>, "
    "std::allocator<char>> const&, c10d::C10dLoggingData&, bool) + 725\n"
    "    frame #3: 0x00007fb090db1068 libtorch_cuda.so`c10d::ProcessGroupNCCL::abort() + 664\n",
    id="pytorch-149153-commabort-hang-nccl-2.25.1-stack",
    url="https://github.com/pytorch/pytorch/issues/149153",
    cause="ncclCommAbort hangs with NCCL 2.25.1-1 (PyTorch nightly); fixed in NCCL 2.26.2-1.",
    established_by="PyTorch maintainer's issue (repro + stacks) stating the fix in NCCL 2.26.2-1; PyTorch upgraded "
    "NCCL in PR #149351 / cherry-pick #149546",
    mechanism="NCCL 2.25.1 release defect: abort does not return",
    expect_signatures=[],
    notes="first four frames of the 'Relevant stack traces' block; no signature describes an abort hang today",
)


# ---------------------------------------------------------------- NVLS / Fabric Manager
log(
    "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:93, "
    "unhandled cuda error, NCCL version 2.29.7\n"
    "ncclUnhandledCudaError: Call to CUDA function failed.\n"
    "Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 2 'out of memory'.\n"
    "This is usually caused by a system or configuration error in the Fabric Manager or NVSwitches.\n"
    "Disable NVLS (NCCL_NVLS_ENABLE=0) if you wish to avoid this error in the future.\n",
    id="nccl-2077-nvls-bind-oom-2.29.7",
    url="https://github.com/NVIDIA/nccl/issues/2077",
    cause="With NCCL 2.29.7 on an 8x H200 NVSwitch node, NVLS multicast binding fails with CUDA 'out of memory' "
    "although GPU memory is free: the job exhausts the NVSwitch multicast object slots (many communicators each "
    "creating NVLS resources); the same job works with NCCL 2.28.9.",
    established_by="reporter's A/B (NCCL 2.28.9 works, 2.29.7 fails on the same nodes) and analysis of the Fabric "
    "Manager log; NCCL_NVLS_ENABLE=0 avoids it",
    mechanism="NVLS multicast resource (slot) exhaustion with a newer NCCL, reported as CUDA OOM",
    expect_signatures=[],
    notes="NCCL-NVLS-CUDA matches these lines but none of its causes (buffers out of memory, Fabric Manager state, disable NVLS until the node is fixed) describes multicast-slot exhaustion by an NCCL release, so no signature is expected; lines from the issue's error block, unchanged; the 'out of memory' is not GPU memory exhaustion here, so "
    "the signature's nvls-buffers-out-of-memory cause does not describe the established cause",
)
log(
    "  Failed to bind NVLink SHARP (NVLS) Multicast memory: CUDA error 401\n",
    id="pytorch-ao-3841-nvls-bind-401-h100-ci",
    url="https://github.com/pytorch/ao/pull/3841",
    cause="The 4xH100 CI runners' Fabric Manager / NVSwitch configuration does not support NVLS multicast; FSDP "
    "all-gather fails when NCCL binds NVLS multicast memory.",
    established_by="merged PR by the project's maintainers (NCCL_NVLS_ENABLE=0 in the H100 CI jobs fixes the runs)",
    mechanism="Fabric Manager / NVSwitch state does not allow NVLS multicast -> cuMulticastBindMem error 401",
    expect_signatures=["NCCL-NVLS-CUDA"],
    expect_causes=["fabric-manager-state", "disable-nvls"],
    notes="the single line as the PR description quotes it (indented in the PR text, kept)",
)
log(
    "[ERROR] not all local fabric manager instances finished their configuration\n"
    "[ERROR] fabric manager error handler is called for unhandled config error type 8\n"
    "[ERROR] failed to configure all the available GPUs or NVSwitches\n",
    id="pytorch-ci-infra-552-fm-started-too-early",
    url="https://github.com/pytorch/ci-infra/pull/552",
    cause="Node setup (cloud-init) started nvidia-fabricmanager while the GPU-resident local FM instances were still "
    "initializing; the host FM waited its 30 s GFM timeout and exited with these errors, so the node left the pool. "
    "Started later (systemd's normal boot path) FM configures the fabric in under a second.",
    established_by="merged PR by the CI maintainers with the root-cause analysis (measured: FM started 90 minutes "
    "after boot or by systemd completes); fix: stop starting FM from cloud-init",
    mechanism="Fabric Manager started before the local FM instances were ready -> fabric not configured",
    expect_signatures=[],
    notes="the three Fabric Manager log lines as the PR quotes them, unchanged; no signature in signatures.json "
    "matches Fabric Manager's own log",
)

# ---------------------------------------------------------------- NCCL bootstrap release defect
log(
    "[0] misc/socket.cc:71 NCCL WARN socketProgress: Connection closed by remote peer 10.10.1.3<36138>\n"
    "[0] NCCL INFO misc/socket.cc:80 -> 6\n"
    "[0] NCCL INFO misc/socket.cc:474 -> 6\n"
    "[0] NCCL INFO misc/socket.cc:628 -> 6\n"
    "[0] NCCL INFO misc/socket.cc:731 -> 6\n"
    "[0] NCCL INFO bootstrap.cc:701 -> 6\n"
    "[0] NCCL INFO init.cc:1402 -> 6\n"
    "[0] NCCL INFO group.cc:75 -> 6 [Async thread]\n"
    "[0] NCCL INFO group.cc:423 -> 6\n"
    "[0] NCCL INFO group.cc:573 -> 6\n"
    "[0] NCCL INFO group.cc:106 -> 6\n",
    id="nccl-1612-bootstrap-foreign-connection-closed-early",
    url="https://github.com/NVIDIA/nccl/issues/1612",
    cause="NCCL's bootstrap listener ignored foreign connections with a wrong magic but failed init when a foreign "
    "connection (e.g. a security scan) closed before sending the 8-byte magic; fixed in NCCL 2.27.3.",
    established_by="reporter's code analysis; NCCL maintainer (stephenmsachs) states it is resolved in v2.27.3-1 "
    "with a pointer to the fixed socket.cc",
    mechanism="NCCL < 2.27.3 bootstrap accept() aborts on a short-lived foreign connection -> init fails",
    expect_signatures=[],
    notes="NCCL-ERR-6 matches the WARN line but none of its causes describes a foreign connection, so no signature is expected; the issue's 'ref log' block, unchanged; the peer did not exit, so none of NCCL-ERR-6's causes describes "
    "the established cause",
)


# ---------------------------------------------------------------- MIG
log(
    "CUDA_VISIBLE_DEVICES=MIG-89c850dc-38e3-57df-85c7-690c186b68e9,MIG-f2b5fbbd-850e-51bb-8ffa-ac9fb48126da python -c "
    '"import torch; print(torch.cuda.device_count()); print(torch.randn(1).cuda(1))"\n'
    "1\n"
    "Traceback (most recent call last):\n"
    '  File "<string>", line 1, in <module>\n'
    "RuntimeError: CUDA error: invalid device ordinal\n"
    "CUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace below might be "
    "incorrect.\n",
    id="pytorch-92315-two-mig-uuids-one-process-ordinal",
    url="https://github.com/pytorch/pytorch/pull/92315",
    cause="Two MIG instances are listed in CUDA_VISIBLE_DEVICES, but CUDA enumerates only a single MIG instance per "
    "process, so device 1 does not exist.",
    established_by="PyTorch CUDA maintainer (ptrblck) in the PR thread, quoting the MIG user guide ('only enumeration "
    "of a single MIG instance is supported'); the failure is shown as expected",
    mechanism="one MIG instance per CUDA process -> invalid device ordinal for the second",
    expect_signatures=[],
    notes="CUDA-INVALID-DEVICE-ORDINAL matches but none of its causes names MIG's one-instance-per-process limit, so no signature is expected; the last command and its output from the maintainer's comment, unchanged (the earlier commands that "
    "worked are omitted); none of the signature's causes names MIG",
)


# ---------------------------------------------------------------- operators / verbs providers
log(
    'nvidia-driver-ctr:   ready=true   (log: "performing userspace-only install")\n'
    "nvidia-gdrcopy-ctr:  ready=true\n"
    "nvidia-peermem-ctr:  CrashLoopBackOff\n"
    "  modprobe: FATAL: Module nvidia-peermem not found in directory /lib/modules/6.8.0-1059-azure\n",
    id="gpu-operator-2619-peermem-sidecar-userspace-only-install",
    url="https://github.com/NVIDIA/gpu-operator/issues/2619",
    cause="After the GPU Operator driver pod restarted on a node where the driver was already loaded, the driver "
    "container took the 'userspace-only install' path (no kernel modules), which never populates /lib/modules/<kernel> "
    "in the new pod; the nvidia-peermem sidecar then cannot modprobe nvidia-peermem and crash-loops, wedging RDMA "
    "nodes and the driver upgrade flow.",
    established_by="reporter's root-cause analysis (gpu-operator v26.3.2, driver 580.126.20 open modules, AKS "
    "ND96isr H100 v5); the same behaviour is a documented GPU Operator known issue (NVIDIA/cloud-native-docs#372, "
    "merged: peermem container fails to restart when the driver pod restarts without a reboot; workaround "
    "FORCE_REINSTALL=true), and a maintainer points to the driver-container fix in NVIDIA/gpu-operator#2844",
    mechanism="driver pod restart without reboot -> peermem module files missing in the pod -> peermem sidecar "
    "modprobe fails",
    expect_signatures=[],
    notes="the pod status block from the issue, unchanged (its own summary lines); no signature in signatures.json "
    "describes a missing module tree in the operator pod",
)
log(
    "  root@scout:~# ibv_devinfo\n"
    "  libibverbs: Warning: couldn't open config directory '/etc/libibverbs.d'.\n"
    "  No IB devices found\n",
    id="infra-controller-5251-no-ibverbs-providers",
    url="https://github.com/dsx-ai-factory/infra-controller/pull/5251",
    cause="The environment had ibverbs-utils and rdma-core but not the ibverbs-providers package (the vendor "
    "libibverbs plugins such as mlx5 and their /etc/libibverbs.d entries), so libibverbs found no provider and "
    "reported no devices although the hardware was present.",
    established_by="merged PR adding ibverbs-providers, whose description states the cause",
    mechanism="libibverbs without provider plugins / config directory -> no IB devices",
    expect_signatures=["IBVERBS-NO-PROVIDER"],
    expect_causes=["config-dir-missing"],
    notes="the three lines as the PR description quotes them (indented there), unchanged",
)


log(
    "VM-0-14-tencentos:162637:162637 [6] NCCL INFO Bootstrap : Using eth0:172.17.0.14<0>\n"
    "VM-0-14-tencentos:162637:162637 [6] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object "
    "file: No such file or directory No plugin found (libnccl-net.so), using internal implementation\n"
    "VM-0-14-tencentos:162635:162635 [4] NCCL INFO cudaDriverVersion 12020\n",
    id="nccl-1231-net-plugin-dlerror-harmless-negative",
    url="https://github.com/NVIDIA/nccl/issues/1231",
    negative=True,
    cause="(negative) The 'NET/Plugin : dlerror=libnccl-net.so ... No plugin found ... using internal implementation' "
    "line only means NCCL found no external network plugin and uses its internal one (IB verbs, RoCE, sockets); it "
    "is not the failure (the job's failure in the thread is a separate CUDA 802 error).",
    established_by="NCCL maintainer (AddyLaddy) in the thread: 'This message ... is harmless'",
    mechanism="(negative) informational plugin-search message",
    expect_signatures=[],
    notes="the three INFO lines the reporter pasted under 'NCCL_DEBUG=INFO for details', unchanged; the thread's "
    "CUDA 802 error lines are deliberately not included",
)


# ---------------------------------------------------------------- Open MPI / UCX
log(
    "[1688710000.495329] [c7:2019617:0]       mm_posix.c:195  UCX  ERROR open(file_name=/proc/2019618/fd/20 "
    "flags=0x0) failed: Permission denied\n"
    "[1688710000.495329] [c7:2019618:0]       mm_posix.c:195  UCX  ERROR open(file_name=/proc/2019617/fd/20 "
    "flags=0x0) failed: Permission denied\n"
    "[1688710000.495362] [c7:2019618:0]          mm_ep.c:155  UCX  ERROR mm ep failed to connect to remote FIFO id "
    "0xc0000005001ed121: Shared memory error\n"
    "[1688710000.495363] [c7:2019617:0]          mm_ep.c:155  UCX  ERROR mm ep failed to connect to remote FIFO id "
    "0xc0000005001ed122: Shared memory error\n"
    "[c7:2019618] ../../../../../ompi/mca/pml/ucx/pml_ucx.c:424  Error: ucp_ep_create(proc=1) failed: Shared memory "
    "error\n",
    id="ucx-4511-posix-shm-proc-link-user-namespace",
    url="https://github.com/openucx/ucx/pull/4511",
    cause="Open MPI 4.1.5 + UCX 1.10.1 ranks each run in their own Apptainer user namespace (no setuid); UCX's posix "
    "shared-memory transport attaches the peer's segment through /proc/<pid>/fd/<fd>, which is refused across user "
    "namespaces, so intra-node endpoints fail with 'Shared memory error'.",
    established_by="commenter's A/B in the thread (UCX_TLS=posix,cma,ib fails; UCX_POSIX_USE_PROC_LINK=n or "
    "UCX_TLS=sysv,cma,ib works) and the later merged UCX PR openucx/ucx#9213 'UCT/MM: Add user namespace handling "
    "for posix and cma transports'",
    mechanism="UCX posix SHM via /proc/<pid>/fd across user namespaces -> permission denied -> ucp_ep_create fails",
    expect_signatures=[],
    notes="UCX-ERROR matches but none of its causes describes user namespaces, so no signature is expected; the error lines of the commenter's run in the PR thread, unchanged (the mpirun command line and the second "
    "rank's pml_ucx line are omitted)",
)
log(
    "[1,1]<stderr>:[ko067.localdomain:26640] common_ucx.c:298 rc_verbs/mlx5_0:1: matched transport list but not "
    "device list\n"
    "[1,1]<stderr>:[ko067.localdomain:26640] common_ucx.c:311 support level is transports only\n",
    id="ompi-9617-ucx-device-detection-pml-mismatch-4.1.1",
    url="https://github.com/open-mpi/ompi/issues/9617",
    cause="Open MPI 4.1.1's common_ucx device detection sometimes fails to match the mlx5 device on some ranks "
    "('matched transport list but not device list'), so those ranks fall back to pml ob1 while others use pml ucx, "
    "and the job fails with a pml mismatch; fixed by open-mpi/ompi#9505 (in 4.1.2).",
    established_by="Open MPI/UCX maintainers pointed to fix #9505; the reporter rebuilt 4.1.1 with it and 30+ runs "
    "no longer failed (previously within 4-5 tries); maintainer: fix is in 4.1.2",
    mechanism="Open MPI release bug in UCX device matching -> per-rank pml choice differs",
    expect_signatures=[],
    notes="the two lines of rank 1 as a maintainer quotes them from the reporter's output, unchanged; the matching "
    "rank-0 lines ('matched both transport and device list') are omitted",
)


# ---------------------------------------------------------------- container runtime
log(
    "$ docker run --gpus all [IMAGE]\n"
    "docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI "
    "runtime create failed: runc create failed: unable to start container process: error during container init: "
    "error running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"
    "nvidia-container-cli: error parsing IMEX info: unsupported IMEX channel value: all: unknown.\n"
    "ERRO[0000] error waiting for container: context canceled \n",
    id="pytorch-test-infra-5852-ctk-1.17.0-imex-all-legacy-image",
    url="https://github.com/pytorch/test-infra/pull/5852",
    cause="nvidia-container-toolkit 1.17.0 defaulted NVIDIA_IMEX_CHANNELS to 'all' for 'legacy' images (CUDA_VERSION "
    "set, no NVIDIA_REQUIRE_CUDA), which libnvidia-container's parser rejects, so GPU containers from such images "
    "failed to start.",
    established_by="merged PR pinning nvidia-container-toolkit to 1.16.2 (validated locally); the toolkit bug "
    "NVIDIA/nvidia-container-toolkit#797 and its merged fix #801 ('Fix NVIDIA_IMEX_CHANNELS handling on legacy "
    "images') by the toolkit maintainer",
    mechanism="container toolkit 1.17.0-1.17.2 + legacy CUDA image -> IMEX channel default 'all' -> hook fails",
    expect_signatures=[],
    notes="the command and error block from the PR description, unchanged ('[IMAGE]' is the PR's own placeholder)",
)


log(
    "NVRM: The NVIDIA GPU 0000:57:00.0 (PCI ID: 10de:2c3a)\n"
    "NVRM: installed in this system requires use of the NVIDIA open kernel modules.\n"
    "NVRM: GPU 0000:57:00.0: RmInitAdapter failed! (0x22:0x56:897)\n",
    id="amazon-eks-ami-2769-blackwell-proprietary-kmod-rminit",
    url="https://github.com/awslabs/amazon-eks-ami/pull/2769",
    cause="On EC2 g7 (RTX PRO 4500 Blackwell Server Edition, 10de:2c3a) the AL2023 NVIDIA AMI's nvidia-kmod-load.sh "
    "did not find the device ID in its open-kmod allowlist for driver 580 and loaded the proprietary kernel module; "
    "Blackwell requires the open kernel modules, so every GPU fails RmInitAdapter and nvidia-smi finds no devices.",
    established_by="reporter's root-cause analysis in awslabs/amazon-eks-ami#2768 (allowlist missing 0x2C3A, present "
    "in the 595 list) with this PR's one-line fix; the AMI maintainers closed the issue with release v20260917 that "
    "selects the driver/kmod per instance type",
    mechanism="proprietary NVIDIA kernel module on a GPU that needs the open modules -> RmInitAdapter failed",
    expect_signatures=[],
    notes="the three NVRM lines quoted in the PR description, unchanged",
)


log(
    "Pod Allocate failed due to device plugin GetPreferredAllocation rpc failed with err: rpc error: code = Unknown "
    "desc = error getting list of preferred allocation devices: unable to retrieve list of available devices: error "
    "creating nvml.Device 0: nvml: Unknown Error, which is unexpected\n",
    id="amazon-eks-ami-1523-gsp-nvml-unknown-error-g5",
    url="https://github.com/awslabs/amazon-eks-ami/issues/1523",
    cause="With the R535 driver's GSP firmware enabled on EC2 g4dn/g5/g5g (AMI release v20231116), the GPU becomes "
    "unresponsive: NVML queries return 'Unknown Error', the device plugin cannot allocate GPUs and containers fail "
    "to start.",
    established_by="AMI maintainer (cartermckinnon): the following release disables GSP automatically on g4dn "
    "(Kubernetes 1.29); for g5 (open kmod, where GSP cannot be disabled) they followed up with EC2 and NVIDIA",
    mechanism="GSP firmware on these instance types -> GPU unresponsive -> NVML Unknown Error",
    expect_signatures=[],
    notes="no signature's causes describe GSP (NVML-UNKNOWN-ERROR's pattern is 'Failed to initialize NVML: Unknown Error' and its causes are cgroup-related); the kubelet event line from a commenter (g5.4xlarge, driver 535.54.03), unchanged; neither of the "
    "signature's causes (device cgroup reset, container restart) describes GSP",
)


log(
    "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3353, "
    "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.26.2\n"
    "ncclUnhandledCudaError: Call to CUDA function failed.\n"
    "Last error:\n"
    "Cuda failure 217 'peer access is not supported between these two devices'\n",
    id="skyrl-108-l40s-no-p2p-nccl-2.26.2",
    url="https://github.com/NovaSky-AI/SkyRL/pull/108",
    cause="On GPUs without P2P support between them (L4 / L40S nodes), the training stack with NCCL 2.26.2 (after an "
    "upgrade to CUDA 12.8) fails NCCL init with CUDA error 217; disabling NCCL's P2P and SHM transports when peer "
    "access is unsupported lets it run.",
    established_by="merged PR by the project's maintainers: checks peer access between all GPUs and sets "
    "NCCL_P2P_DISABLE=1 / NCCL_SHM_DISABLE=1 when it is unsupported; verified running on L40S",
    mechanism="no P2P between the node's GPUs -> NCCL P2P/SHM setup hits cudaErrorPeerAccessUnsupported",
    expect_signatures=["CUDA-PEER-ACCESS-UNSUPPORTED"],
    expect_causes=["no-p2p-path", "nccl-cumem-host-no-p2p"],
    notes="the error block from the PR description, unchanged; the PR does not say which NCCL transport raised the "
    "error, so both of the signature's causes fit (it disables P2P and SHM)",
)


log(
    "john-trx40-designare:115664:115664 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n",
    id="pytorch-73790-libibverbs-missing-single-node-negative",
    url="https://github.com/pytorch/pytorch/issues/73790",
    negative=True,
    cause="(negative) In a single-node 2x A6000 Docker DDP job, NCCL warns that it cannot open libibverbs; that only "
    "disables the InfiniBand/RoCE transport, which an intra-node job does not use, so it is not why the job stopped.",
    established_by="PyTorch CUDA maintainer (ptrblck): 'NCCL WARN Failed to open libibverbs.so[.1] shouldn't be an "
    "issue as it would enable RDMA only, but shouldn't create a hang' (he sees the same warning in a working run)",
    mechanism="(negative) libibverbs absent in an image used for a single-node job",
    expect_signatures=[],
    notes="one WARN line from the reporter's NCCL_DEBUG=INFO output, unchanged; the job's actual stall is not part of "
    "this excerpt",
)


def write_readme(d: str) -> None:
    lines = [
        "# Sealed held-out logs #4",
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
