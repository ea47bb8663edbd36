"""Finding the first failure across ranks. The real multi-rank excerpts are in test_cases.py;
these tests use short synthetic logs in the documented line formats to pin the ordering rules."""

from __future__ import annotations

import gzip
import io

from imgcheck.triage import triage


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_without_timestamps_a_local_error_beats_consequences(tmp_path):
    # rank 0 and 1 only report consequences; rank 5's log (given last) has the local error
    a = _write(
        tmp_path,
        "r0.log",
        "[rank0]: torch.distributed.DistBackendError: NCCL error in: x.cpp:1, remote process exited "
        "or there was a network error, NCCL version 2.21.5\n",
    )
    b = _write(
        tmp_path,
        "r1.log",
        "[rank1]:[E ProcessGroupNCCL.cpp:458] [Rank 1] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=5, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600013 milliseconds before timing out.\n",
    )
    c = _write(
        tmp_path,
        "r5.log",
        "node3:77:78 [5] NCCL INFO comm 0x1 rank 5 nranks 8 cudaDev 5 busId 1 - Init COMPLETE\n"
        "node3:77:90 [5] misc/ibvwrap.cc:182 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Bad address\n",
    )
    r = triage([a, b, c])
    assert r.first_failure.signature == "IBV-REG-MR-EFAULT"
    assert r.first_failure.where.rank == 5 and r.first_failure.where.host == "node3"
    assert "local error" in r.first_failure.basis
    assert r.timeline[0].where.rank == 5 and {t.where.rank for t in r.timeline[1:]} == {0, 1}
    assert [d.signature for d in r.diagnoses][:1] == ["IBV-REG-MR-EFAULT"]


def test_timestamps_win_over_input_order(tmp_path):
    a = _write(
        tmp_path,
        "a.log",
        "[2025-03-18 21:30:00] n2:5:6 [0] misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer n1<1>\n"
        "n2:5:6 [0] NCCL INFO comm 0x1 rank 1 nranks 2 cudaDev 0 busId 1 - Init COMPLETE\n",
    )
    b = _write(
        tmp_path,
        "b.log",
        "n1:9:9 [0] NCCL INFO comm 0x2 rank 0 nranks 2 cudaDev 0 busId 1 - Init COMPLETE\n"
        "[2025-03-18 21:29:58] n1:9:9 [0] transport/net_ib.cc:1 NCCL WARN NET/IB : Got completion from peer "
        "10.0.0.2<1> with status=12 opcode=0 len=0 vendor err 129 (Recv)\n",
    )
    r = triage([a, b])
    assert r.first_failure.where.rank == 0 and r.first_failure.signature == "IB-VENDOR-ERR-129"
    assert r.first_failure.basis == "earliest timestamp across ranks"
    assert r.first_failure.where.timestamp.startswith("2025-03-18 21:29:58")


def test_year_less_timestamps_take_the_year_of_full_ones(tmp_path):
    a = _write(
        tmp_path,
        "a.log",
        "[2024-03-21 02:00:00] n1:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
        "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout\n",
    )
    r = triage([a])
    assert r.first_failure.where.timestamp.startswith("2024-03-21 02:07:08")
    assert any("assumed 2024" in n for n in r.notes)


def test_silent_rank_is_named_when_others_time_out(tmp_path):
    lines = []
    for rank in (0, 1, 3):
        lines.append(f"n{rank}:1{rank}:1 [0] NCCL INFO comm 0xa rank {rank} nranks 4 cudaDev 0 busId 1 - Init COMPLETE")
        lines.append(
            f"[rank{rank}]:[E321 02:07:0{rank}.000000000 ProcessGroupNCCL.cpp:607] [Rank {rank}] Watchdog caught "
            f"collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE) ran for 600000 milliseconds before timing out."
        )
    r = triage([_write(tmp_path, "job.log", "\n".join(lines) + "\n")])
    assert r.silent_ranks == (2,)
    assert any("rank(s) 2 reported no error" in n for n in r.notes)


def test_laggard_from_last_completed_work(tmp_path):
    text = "".join(
        f"[rank{r}]:[E626 06:24:4{r}.000000000 ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank {r}] Exception "
        f"(either an error or timeout) detected by watchdog at work: 808, last enqueued NCCL work: 811, last completed NCCL work: {n}.\n"
        for r, n in ((0, 807), (1, 790), (2, 807))
    )
    r = triage([_write(tmp_path, "job.log", text)])
    assert any("rank(s) 1 completed the fewest collectives" in n for n in r.notes)


def test_specific_signature_explains_generic_one_in_the_same_rank(tmp_path):
    text = (
        "[rank3]: node1:1:2 [3] misc/ibvwrap.cc:182 NCCL WARN Call to ibv_reg_mr_iova2 failed with error Invalid argument\n"
        "[rank3]: torch.distributed.DistBackendError: NCCL error in: x.cpp:1, unhandled system error (run with NCCL_DEBUG=INFO for details)\n"
    )
    r = triage([_write(tmp_path, "r3.log", text)])
    assert [d.signature for d in r.diagnoses] == ["IBV-REG-MR-EINVAL"]


def test_same_line_two_signatures_specific_first(tmp_path):
    text = (
        "[E ProcessGroupNCCL.cpp:455] NCCL error: remote process exited or there was a network error, NCCL version 2.14.3 "
        "ncclRemoteError: Last error: NET/IB : Got completion from peer 11.214.147.122<39138> with error 12, opcode 0, len 0, vendor err 129\n"
    )
    r = triage([_write(tmp_path, "x.log", text)])
    # the specific completion error leads; the framework's ncclRemoteError on the same writer is that
    # same failure (NCCL returns ncclRemoteError for transport errors), so it is folded into it
    assert [d.signature for d in r.diagnoses] == ["IB-VENDOR-ERR-129"]


def test_init_stall_only_when_nothing_else_explains(tmp_path):
    text = (
        "n1:1:1 [0] NCCL INFO comm 0xa rank 0 nranks 2 cudaDev 0 busId 1 - Init START\n"
        "n1:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
    )
    r = triage([_write(tmp_path, "a.log", text)])
    assert [d.signature for d in r.diagnoses] == ["NCCL-INIT-STALL"]
    assert r.diagnoses[0].causes[0].id == "stale-caches"
    r = triage([_write(tmp_path, "b.log", text + "n1:1:1 [0] NCCL INFO NET/IB : No device found.\n")])
    assert [d.signature for d in r.diagnoses] == ["NET-IB-NO-DEVICE"]


def test_gzip_and_stdin_inputs(tmp_path):
    gz = tmp_path / "r.log.gz"
    with gzip.open(gz, "wt") as fh:
        fh.write("misc/ibvwrap.cc:288 NCCL WARN Call to ibv_reg_dmabuf_mr failed with error Operation not supported\n")
    stdin = io.BytesIO(b"Cuda failure common.cu:891 'CUDA driver version is insufficient for CUDA runtime version'\n")
    r = triage([str(gz), "-"], stdin=stdin)
    assert {d.signature for d in r.diagnoses} == {"IBV-REG-DMABUF-EOPNOTSUPP", "CUDA-DRIVER-INSUFFICIENT"}
    assert [i.name for i in r.inputs] == [str(gz), "<stdin>"]


def test_repeated_lines_are_counted_not_kept(tmp_path):
    line = "n1:1:2 [0] NCCL INFO NET/IB : No device found.\n"
    r = triage([_write(tmp_path, "big.log", line * 5000)])
    assert r.diagnoses[0].occurrences == 5000


def test_internal_error_with_xid31_on_several_nodes(tmp_path):
    # kernel logs of two nodes (journalctl format names the host) plus a rank's NCCL internal error
    k1 = _write(
        tmp_path,
        "node1.kern",
        "Mar 21 02:07:01 node1 kernel: NVRM: Xid (PCI:0000:1a:00): 31, pid=1, name=python3, Ch 00000008\n",
    )
    k2 = _write(
        tmp_path,
        "node2.kern",
        "Mar 21 02:07:02 node2 kernel: NVRM: Xid (PCI:0000:1a:00): 31, pid=2, name=python3, Ch 00000008\n",
    )
    r0 = _write(
        tmp_path,
        "r0.log",
        "[rank0]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:3763, internal error\n",
    )
    r = triage([r0, k1, k2])
    err3 = next(d for d in r.diagnoses if d.signature == "NCCL-ERR-3")
    assert err3.causes[0].id == "xid-many-nodes" and err3.causes[0].status == "supported"
    xid = next(d for d in r.diagnoses if d.signature == "GPU-XID-31")
    assert xid.hosts == ("node1", "node2") and xid.causes[0].id == "app-memory-corruption"
    # one node, one GPU, one fault: no burst, so the XID catalog says check the application first
    r = triage([r0, k1])
    err3 = next(d for d in r.diagnoses if d.signature == "NCCL-ERR-3")
    # no NCCL WARN names the producing site: reading it comes first (nccl-tests#275), the layout guess next
    assert [c.id for c in err3.causes[:2]] == ["read-the-warn", "connectivity-layout"]
    assert next(c for c in err3.causes if c.id == "xid-many-nodes").status == "unlikely"
