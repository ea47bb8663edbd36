"""Line parsing: launcher prefixes, NCCL's host:pid:tid [cudaDev] prefix, timestamps, INFO context."""

from __future__ import annotations

from datetime import datetime

from imgcheck.triage.context import ContextAccumulator
from imgcheck.triage.logparse import parse_line
from imgcheck.triage.timestamps import find_stamp


def test_nccl_prefix_bracket_is_the_cuda_device_not_the_rank():
    # NCCL's debug.cc prints "%s:%d:%d [%d]" with hostname, pid, tid, cudaDev (nccl#1405 line)
    line = parse_line("kp-ddp-worker-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion", "f", 1)
    assert (line.host, line.pid, line.cuda_dev, line.rank) == ("kp-ddp-worker-0", 3468, 4, None)


def test_launcher_labels_give_ranks():
    assert parse_line("[rank3]:     next(self.gen)", "f", 1).rank == 3  # PyTorch
    assert parse_line(" 93: !!!!!!! Segfault encountered !!!!!!!", "f", 1).rank == 93  # srun -l
    assert parse_line("[1,13]<stdout>:192.168.0.138: Test CUDA failure", "f", 1).rank == 13  # mpirun --tag-output
    line = parse_line("[80746] [rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog", "f", 1)
    assert line.rank == 0 and line.text.startswith("[E321 02:07:08")


def test_labelled_nccl_line_keeps_both_identities():
    line = parse_line("[rank2]:[2025-03-18 21:25:51] node7:11:12 [2] NCCL INFO Using network IB", "f", 1)
    assert (line.rank, line.host, line.pid, line.cuda_dev) == (2, "node7", 11, 2)
    assert line.when == datetime(2025, 3, 18, 21, 25, 51)


def test_timestamp_formats():
    s = find_stamp("[2025-03-18 21:25:51] nickelpie-job-0:1:1 [0] NCCL INFO cudaDriverVersion 12080")
    assert s.when == datetime(2025, 3, 18, 21, 25, 51) and s.has_year
    s = find_stamp("[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog")
    assert (s.when.month, s.when.day, s.when.hour, s.when.microsecond, s.has_year) == (3, 21, 2, 408271, False)
    s = find_stamp("[rank0]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607]")
    assert (s.when.month, s.when.day) == (12, 6)
    s = find_stamp("[Mon Aug  5 03:54:13 2024] NVRM: Xid (PCI:0000:00:07): 31, pid=2512125")
    assert s.when == datetime(2024, 8, 5, 3, 54, 13) and s.kind == "dmesg"
    s = find_stamp("Mar 21 02:07:08 node12 kernel: NVRM: Xid (PCI:0000:1a:00): 79")
    assert (s.when.month, s.when.day, s.has_year) == (3, 21, False)
    s = find_stamp("(Worker pid=509) INFO 04-13 19:52:24 [multiproc_executor.py:749] Parent process exited")
    assert (s.when.month, s.when.day, s.when.hour) == (4, 13, 19)
    s = find_stamp("2024-03-21 02:07:08,123 - INFO - step 10")
    assert s.when == datetime(2024, 3, 21, 2, 7, 8, 123000)
    # a time quoted deep inside a message is not the line's timestamp
    assert find_stamp("x" * 120 + " 2024-03-21 02:07:08") is None
    assert find_stamp("NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM") is None


def test_kernel_syslog_line_names_its_host():
    line = parse_line("Mar 21 02:07:08 node12 kernel: NVRM: Xid (PCI:0000:1a:00): 79, pid=1", "dmesg", 1)
    assert line.host == "node12" and line.pid is None


def _ctx(*lines):
    acc = ContextAccumulator()
    for i, raw in enumerate(lines, 1):
        acc.feed(parse_line(raw, "f", i))
    return acc


def test_info_context_from_real_lines():
    # lines from NVIDIA/nccl#1537, nccl-tests#185, nccl#1925, nccl#1814 and nccl#1053
    acc = _ctx(
        "hostname1:25668:27396 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB primaryip:10.10.10.10<0>",
        "dgxh100-4:460770:460770 [0] NCCL INFO cudaDriverVersion 12000",
        "NCCL version 2.19.3+cuda12.3",
        "nccl-sleep-c7d759db6-2bp29:2620969:2620969 [1] NCCL INFO DMA-BUF is available on GPU device 1",
        "hostname-test:981:1267 [1] NCCL INFO Channel 01/0 : 26[2] -> 33[1] [receive] via NET/IBext_v8/4",
        "hostname-test:980:1265 [0] NCCL INFO Channel 00/0 : 32[0] -> 39[7] via P2P/CUMEM",
        "axa:3048391:3048566 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.",
        "hostname1:25668:27396 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'",
        "axa:3048391:3048566 [0] NCCL INFO NET/Socket : GPU Direct RDMA Disabled for HCA 0 'lo'",
    )
    ctx = acc.summary()
    assert ctx.ib_devices == ("mlx5_0:1/RoCE", "mlx5_1:1/RoCE") and ctx.relaxed_ordering is True
    assert ctx.nccl_versions == ("2.19.3",) and ctx.cuda_runtime == ("12.3",) and ctx.cuda_driver == ("12000",)
    assert ctx.dmabuf_gpus == (1,)
    assert ctx.transports == ("NET/IBext_v8", "P2P/CUMEM")
    assert ctx.env == {"NCCL_IB_DISABLE": "1"}
    assert ctx.gdr_disabled == ("mlx5_0",)  # the NET/Socket line about 'lo' is not an IB GDR problem


def test_ro_absent_is_false_and_gdrdma_transport_detected():
    ctx = _ctx(
        "master_node:20:289 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:192.168.11.1<0>",
        "n1:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA",
    ).summary()
    assert ctx.relaxed_ordering is False and ctx.gdrdma_transport and ctx.transports == ("NET/IB/GDRDMA",)


def test_world_rank_from_comm_lines():
    acc = _ctx(
        "n1:7:8 [1] NCCL INFO ncclCommInitRankConfig comm 0xaaaa rank 1 nranks 8 cudaDev 1 nvmlDev 1 busId 901000 commId 0x2f - Init START",
        "n1:7:8 [1] NCCL INFO comm 0xbbbb rank 0 nranks 2 cudaDev 1 busId 901000 - Init COMPLETE",
    )
    assert acc.world_rank() == (1, 8)
    assert acc.inits["0xaaaa"].started is not None and not acc.inits["0xaaaa"].completed
    assert acc.inits["0xbbbb"].completed


def test_colour_codes_are_ignored():
    line = parse_line("\x1b[31m[rank2]:\x1b[0m n1:5:6 [2] NCCL INFO NET/IB : No device found.\n", "f", 1)
    assert line.rank == 2 and line.host == "n1" and line.text.endswith("No device found.")


# Collectors' prefixes, each in the layout the tool documents, around a message from a public thread
# (NVIDIA/k8s-device-plugin#23: "Failed to start nvml with error:  could not load NVML library")
_NVML_LOAD = "Failed to start nvml with error:  could not load NVML library"


def test_collector_prefixes_are_removed_before_matching():
    layouts = (
        "2019-01-15T09:47:11.034597419Z " + _NVML_LOAD,  # kubectl logs --timestamps (RFC 3339, nanoseconds)
        "[pod/nvidia-device-plugin-daemonset-x2k4p/nvidia-device-plugin-ctr] " + _NVML_LOAD,  # kubectl --prefix
        "device-plugin-1  | " + _NVML_LOAD,  # docker compose v2
        "k8s_device_plugin_1   | " + _NVML_LOAD,  # docker-compose v1
        "Jan 15 09:47:11 gpu-node-3 nvidia-device-plugin[2811]: " + _NVML_LOAD,  # journalctl short format
        "[1,0]<stderr>:" + _NVML_LOAD,  # mpirun --tag-output
    )
    for raw in layouts:
        assert parse_line(raw, "f", 1).text == _NVML_LOAD, raw


def test_kernel_journal_lines_keep_their_tag_and_host():
    line = parse_line("Mar 21 02:07:08 node12 kernel: NVRM: Xid (PCI:0000:1a:00): 79, pid=1", "dmesg", 1)
    assert line.text.startswith("Mar 21 02:07:08 node12 kernel: NVRM") and line.host == "node12"


def test_table_rows_are_not_compose_prefixes():
    row = "| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |"
    assert parse_line(row, "f", 1).text == row


def test_quoted_reply_and_spawned_job_labels():
    # horovod/horovod#313: the reporter quoted NCCL's lines in a reply ("> workstation131:89:116 [0] ...")
    line = parse_line("> workstation131:89:116 [0] misc/ibvwrap.cu:61 WARN Failed to open libibverbs.so[.1]", "f", 1)
    assert line.text.startswith("workstation131:89:116 [0] misc/ibvwrap.cu:61") and line.pid == 89
    assert parse_line("[2,5]<stderr>:" + _NVML_LOAD, "f", 1).rank == 5  # a spawned job's ranks (PRRTE tag)
    iso = "2019-01-15T09:47:11+0000 gpu-node-3 nvidia-device-plugin[2811]: " + _NVML_LOAD  # journalctl -o short-iso
    assert parse_line(iso, "f", 1).text == _NVML_LOAD


def test_a_kubectl_stamp_before_a_message_with_a_colon_is_not_a_journal_line():
    # NVIDIA/nccl#1784's loader line under kubectl --timestamps: "undefined symbol:" is the message, not HOST IDENT:
    line = parse_line('2024-05-01T10:00:00.123456789Z undefined symbol: "ncclCommWindowRegister"', "f", 1)
    assert line.text == 'undefined symbol: "ncclCommWindowRegister"'
