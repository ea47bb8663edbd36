"""Jobs that end or hang with no NCCL line: a stack inside NCCL's abort, Slurm's cancel banners, Kubernetes' kills
(issue 32 round 5). The lines are the upstream formats as real logs print them."""

from __future__ import annotations

from imgcheck.triage import triage


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


# slurmstepd req.c's banner at the end of a training log (tqdm bar, then the cancel), as a public log shows it
TIME_LIMIT = (
    " 22%|##        | 11/50 [1:55:52<6:50:13, 631.11s/it]slurmstepd: error: *** JOB 42196 ON clr0710 CANCELLED AT "
    "2022-04-14T16:17:16 DUE TO TIME LIMIT ***\n"
)
PREEMPTED = (
    "srun: Force Terminated job 557341\n"
    "slurmstepd: error: *** STEP 557341.0 ON c4-n12 CANCELLED AT 2025-03-11T13:26:25 DUE TO PREEMPTION ***\n"
)


def test_time_limit_alone_names_the_hang_and_the_short_limit(tmp_path):
    r = triage([_write(tmp_path, "job.out", TIME_LIMIT)])
    assert r.first_failure is not None and r.first_failure.signature == "SLURM-JOB-CANCELLED"
    ids = [c.id for c in r.diagnoses[0].causes]
    assert ids[:2] == ["hang-into-time-limit", "limit-shorter-than-run"]
    assert {c.id: c.status for c in r.diagnoses[0].causes}["preempted"] == "unlikely"


def test_preemption_is_not_blamed_on_the_job(tmp_path):
    r = triage([_write(tmp_path, "job.out", PREEMPTED)])
    assert r.diagnoses[0].causes[0].id == "preempted"


def test_a_concrete_error_leads_over_the_cancel(tmp_path):
    # the cancel reports how the job ended; a rank's own error is the first failure
    text = (
        "node1:123:456 [0] misc/socket.cc:71 NCCL WARN socketProgress: Connection closed by remote peer "
        "10.10.1.3<36138>\n" + TIME_LIMIT
    )
    r = triage([_write(tmp_path, "job.out", text)])
    assert r.first_failure is not None and r.first_failure.signature == "NCCL-ERR-6"


def test_abort_stack_names_candidates_and_the_deciding_version(tmp_path):
    # pytorch#149153: an lldb backtrace of a process stuck in ProcessGroupNCCL::abort(), no NCCL version printed
    text = (
        "    frame #2: 0x00007fb090db0b85 libtorch_cuda.so`c10d::ProcessGroupNCCL::waitForFutureOrTimeout(...) + 725\n"
        "    frame #3: 0x00007fb090db1068 libtorch_cuda.so`c10d::ProcessGroupNCCL::abort() + 664\n"
    )
    r = triage([_write(tmp_path, "bt.txt", text)])
    causes = r.diagnoses[0].causes
    assert r.first_failure.signature == "TORCH-NCCL-ABORT-HANG"
    assert causes[0].id == "nccl-abort-does-not-return" and causes[0].status == "unknown"
    assert any("NCCL version unknown" in b for b in causes[0].because)
    # with the version printed and inside the traced range, the release defect is supported
    r = triage([_write(tmp_path, "bt2.txt", "host:1:1 [0] NCCL INFO NCCL version 2.25.1+cuda12.4\n" + text)])
    assert r.diagnoses[0].causes[0].status == "supported"
    # and outside it, it is not the answer
    r = triage([_write(tmp_path, "bt3.txt", "host:1:1 [0] NCCL INFO NCCL version 2.27.3+cuda12.9\n" + text)])
    assert r.diagnoses[0].causes[0].id != "nccl-abort-does-not-return"


def test_kubernetes_kills(tmp_path):
    oom = "    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n"
    r = triage([_write(tmp_path, "describe.txt", oom)])
    assert r.first_failure.signature == "K8S-POD-OOMKILLED"
    ev = 'Message: Usage of EmptyDir volume "dshm" exceeds the limit "1Gi". \n'
    r = triage([_write(tmp_path, "describe2.txt", ev)])
    assert r.first_failure.signature == "K8S-POD-EVICTED"
    assert r.diagnoses[0].causes[0].id == "emptydir-size-limit"


def test_log_with_only_an_undecided_probe_has_no_first_failure(tmp_path):
    # pytorch#73790: NCCL's libibverbs probe alone; nothing says the job spanned nodes meant for IB
    line = "john-trx40-designare:115664:115664 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
    r = triage([_write(tmp_path, "r.log", line)])
    assert r.verdict == "advisory_only" and r.first_failure is None
    d = r.diagnoses[0]
    assert d.signature == "LIBIBVERBS-MISSING" and "not confirmed as a failure" in (d.note or "")
