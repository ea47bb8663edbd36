"""Hangs: a log that stops with no error line names its candidates and what tells them apart (NCCL-HANG-NO-ERROR),
and PyTorch's watchdog / heartbeat prints of every release are read as the timeout they report."""

from __future__ import annotations

import os

from imgcheck.triage import triage

HERE = os.path.dirname(__file__)


def log(name: str) -> str:
    return os.path.join(HERE, "logs", name)


def _text(name: str) -> str:
    with open(log(name), encoding="utf-8") as fh:
        return fh.read()


def test_a_stall_after_init_names_candidates_not_ok():
    """vllm#9920: Init COMPLETE, channels via SHM, a progress bar at 0/16, then nothing. Not 'no signature': the
    hang's candidates, the one the log's own channels support first (every channel between GPUs of one node:
    ACS/IOMMU), then what to run to tell them apart, then the guesses."""
    r = triage([log("vllm-9920-tp2-stall-after-init-acs.log")])
    assert r.verdict == "advisory_only" and r.first_failure is None  # nothing shows the job was stopped
    d = next(d for d in r.diagnoses if d.signature == "NCCL-HANG-NO-ERROR")
    assert d.note and "not confirmed" in d.note
    ids = [c.id for c in d.causes]
    assert ids[:2] == ["acs-iommu-peer-path", "tell-apart"]
    assert d.causes[0].status == "supported" and "NCCL_P2P_DISABLE=1" in d.causes[0].next
    assert "NCCL_DEBUG_SUBSYS" in d.causes[1].next and d.causes[1].kind == "read"
    # the multi-node candidates need a network the log does not show
    assert {c.id: c.status for c in d.causes}["rdma-path-unusable"] != "supported"


def test_the_same_stall_stopped_by_the_scheduler_is_a_located_hang(tmp_path):
    stopped = tmp_path / "job.log"
    stopped.write_text(
        _text("vllm-9920-tp2-stall-after-init-acs.log")
        + "slurmstepd: error: *** JOB 10711368 ON c0617 CANCELLED AT 2026-09-30T16:00:24 DUE TO TIME LIMIT ***\n"
    )
    r = triage([str(stopped)])
    assert r.verdict == "signature_found" and r.first_failure is not None
    assert r.first_failure.signature == "NCCL-HANG-NO-ERROR"


def test_a_log_cut_right_after_init_is_not_a_hang(tmp_path):
    """Without the work having begun (no progress bar, no nccl-tests table header) a log that ends after Init
    COMPLETE reads the same as a working run's start-up: nothing is said."""
    lines = _text("vllm-9920-tp2-stall-after-init-acs.log").splitlines()
    cut = tmp_path / "cut.log"
    cut.write_text("\n".join(lines[:3]) + "\n")
    r = triage([str(cut)])
    assert all(d.signature != "NCCL-HANG-NO-ERROR" for d in r.diagnoses)


def test_progress_after_the_waiting_line_is_no_hang(tmp_path):
    """A result row after the waiting line (here nccl-tests#82's own rows, unchanged) means a step completed."""
    rows = [ln for ln in _text("nccl-tests-82-ibverbs-warn-then-results.log").splitlines() if " float " in ln]
    assert rows
    went_on = tmp_path / "ok.log"
    went_on.write_text(_text("vllm-9920-tp2-stall-after-init-acs.log") + "\n".join(rows) + "\n")
    r = triage([str(went_on)])
    assert all(d.signature != "NCCL-HANG-NO-ERROR" for d in r.diagnoses)


def test_pytorch_heartbeat_monitor_timeout_prints_are_the_watchdog_timeout():
    """PyTorch 2.5+ prints the timeout from the heartbeat monitor ('Received a dump signal due to a collective
    timeout from ...', 'Observed flight recorder dump signal from another rank via TCPStore'): the same family as
    'Watchdog caught collective operation timeout' (accelerate#3861's lines, unchanged)."""
    r = triage([log("accelerate-3861-dump-signal-tcpstore.log")])
    assert r.diagnoses[0].signature == "TORCH-WATCHDOG-TIMEOUT"
    assert r.diagnoses[0].occurrences == 2


def test_a_rank_that_never_enqueued_a_collective_is_the_supported_cause():
    """sglang#10216: 'Last enqueued NCCL work: -1' (lastEnqueuedSeq starts at -1 in ProcessGroupNCCL): the rank
    never reached its first collective on that group, so the log itself supports 'stuck before NCCL' first."""
    r = triage([log("sglang-10216-dump-signal-never-enqueued.log")])
    d = next(d for d in r.diagnoses if d.signature == "TORCH-WATCHDOG-TIMEOUT")
    assert d.causes[0].id == "rank-never-enqueued" and d.causes[0].status == "supported"
    assert "collective-mismatch" in [c.id for c in d.causes]
