"""Issue 20 behaviour beyond single-log cases: bounded work on hostile claims, NCCL version
mismatch between writers, 'No device found' as information only when the job never meant IB,
and every answer saying how sure it is."""

from __future__ import annotations

import json
import os
import tracemalloc

from imgcheck.cli.main import main
from imgcheck.triage import triage
from imgcheck.triage.context import MAX_COMMS, MAX_ENV
from imgcheck.triage.decide import RANK_LIST_LIMIT

HERE = os.path.dirname(__file__)


def log(name: str) -> str:
    return os.path.join(HERE, "logs", name)


def test_nranks_claim_does_not_size_the_work(tmp_path):
    # One real watchdog timeout line (tests/triage/logs/basicsr-737) after a comm line claiming 1e8 ranks.
    p = tmp_path / "rank0.log"
    p.write_text(
        "n1:11:11 [0] NCCL INFO comm 0x55aa rank 0 nranks 100000000 cudaDev 0 busId 1000 - Init COMPLETE\n"
        + open(log("basicsr-737/rank0.log"), encoding="utf-8").read()
    )
    tracemalloc.start()
    try:
        r = triage([str(p)])
        _cur, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert r.first_failure is not None and r.first_failure.signature == "TORCH-WATCHDOG-TIMEOUT"
    assert len(r.silent_ranks) <= RANK_LIST_LIMIT
    assert any("claims 100000000 ranks" in n for n in r.notes)
    assert peak < 64 * 1024 * 1024  # a set of 1e8 ranks would need gigabytes


def test_memory_per_writer_is_bounded(tmp_path):
    p = tmp_path / "one-writer.log"
    with open(p, "w", encoding="utf-8") as fh:
        for i in range(3000):
            fh.write(f"n1:7:7 [0] NCCL INFO NCCL_X{i} set by environment to {i}.\n")
            fh.write(f"n1:7:7 [0] NCCL INFO comm 0x{i:x} rank 0 nranks 2 cudaDev 0 busId 1 - Init START\n")
            fh.write(f"NCCL version 2.{i}.1+cuda12.4\n")
    r = triage([str(p)])
    assert len(r.context.env) <= MAX_ENV
    assert len(r.context.nccl_versions) <= 64
    # the communicators kept per writer are capped too (one stall diagnosis, not 3000)
    assert sum(1 for d in r.diagnoses if d.signature == "NCCL-INIT-STALL") <= 1
    assert MAX_COMMS < 3000


def test_nccl_version_mismatch_between_writers():
    # Two real logs whose ranks printed different NCCL versions (2.19.3 vs 2.21.5), given as one job.
    r = triage([log("nccl-1267-socket-family-no-ib.log"), log("nccl-tests-227-modify-qp-timeout.log")])
    assert set(r.context.nccl_versions) == {"2.19.3", "2.21.5"}
    d = next(d for d in r.diagnoses if d.signature == "NCCL-VERSION-MISMATCH")
    assert "NCCL version" in d.first.text and d.causes[0].id == "mixed-nccl"
    # advisory: it is evidence, never picked as the first failing line
    assert r.first_failure.signature != "NCCL-VERSION-MISMATCH"
    one = triage([log("nccl-1267-socket-family-no-ib.log")])
    assert "NCCL-VERSION-MISMATCH" not in [d.signature for d in one.diagnoses]


def test_no_device_is_a_warning_when_the_job_meant_ib(tmp_path, capsys):
    # Same real lines as nccl-226, plus the ENV line NCCL prints when NCCL_IB_HCA is set.
    p = tmp_path / "ib-meant.log"
    p.write_text(
        "ip-172-31-12-21:45361:45361 [0] NCCL INFO NCCL_IB_HCA set by environment to mlx5_0.\n"
        + open(log("nccl-226-no-device.log"), encoding="utf-8").read()
    )
    r = triage([str(p)])
    d = next(d for d in r.diagnoses if d.signature == "NET-IB-NO-DEVICE")
    assert d.severity == "warning" and d.note is None and r.verdict == "signature_found"
    assert main(["triage", str(p), "-o", "json"]) == 1
    capsys.readouterr()
    # without the setting the job used sockets on purpose: information, exit 0
    assert main(["triage", log("nccl-226-no-device.log"), "-o", "json"]) == 0
    capsys.readouterr()
    # NCCL_IB_DISABLE=1 says so explicitly, even without a "Using network" line
    q = tmp_path / "ib-off.log"
    q.write_text(
        "n1:1:1 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 1.\n"
        "n1:1:1 [0] NCCL INFO NET/IB : No device found.\n"
    )
    assert triage([str(q)]).verdict == "info_only"


def test_roce_completion_errors_check_gid_and_tc_before_retries():
    r = triage([log("nccl-1814-vendor129-roce.log")])
    d = r.diagnoses[0]
    assert d.signature == "IB-VENDOR-ERR-129"
    assert d.causes[0].id == "roce-gid-tc" and d.causes[0].status == "supported"
    # NCCL_IB_RETRY_CNT is unknown here: it must not outrank what the log shows
    assert [c.id for c in d.causes].index("retry-cnt-truncated") > 0


def test_vendor_249_points_to_the_earlier_async_event():
    r = triage([log("nccl-1524-async-then-249.log")])
    assert r.first_failure.signature == "NET-IB-ASYNC-EVENT"
    d249 = next(d for d in r.diagnoses if d.signature == "IB-VENDOR-ERR-249")
    assert d249.causes[0].id == "after-async-event" and d249.causes[0].status == "supported"
    # without an async event the same cause is ruled out, not left on top
    r = triage([log("deepep-106-vendor249.log")])
    d249 = next(d for d in r.diagnoses if d.signature == "IB-VENDOR-ERR-249")
    assert d249.causes[-1].id == "after-async-event" and d249.causes[-1].status == "unlikely"


def test_oom_kill_and_cuda_oom_are_different_causes():
    kill = triage([log("colossalai-3172-oom-kill.log")])
    cuda = triage([log("returnn-1482-cuda-oom-abort.log")])
    assert kill.diagnoses[0].signature == "HOST-OOM-KILL" and cuda.diagnoses[0].signature == "CUDA-OOM"
    assert kill.diagnoses[0].causes[0].id != cuda.diagnoses[0].causes[0].id


def test_every_answer_says_how_sure_and_why(capsys):
    for name, level in (("nccl-230-catastrophic.log", "high"), ("gpustack-3067-socket-no-error.log", "low")):
        main(["triage", log(name), "-o", "json"])
        doc = json.loads(capsys.readouterr().out)
        assert doc["certainty"]["level"] == level and doc["certainty"]["reasons"]
    main(["triage", log("nccl-230-catastrophic.log"), "-o", "table"])
    out = capsys.readouterr().out
    assert out.splitlines()[2].startswith("CERTAINTY  high") and "supported by the evidence" in out


def test_gate_regex_matches_exactly_what_the_literals_match():
    # The scan's prefilter is a prefix tree of the signatures' literals; it must accept a line
    # exactly when some literal occurs in it (else a signature would silently stop matching).
    import random
    import re

    from imgcheck.triage.scan import Scanner, trie_pattern
    from imgcheck.triage.signatures import load_signatures

    lits = sorted({lit for _s, _p, lit in Scanner(load_signatures()).checks if lit})
    gate = re.compile(trie_pattern(lits))
    rnd = random.Random(20)
    alphabet = "NCL WARET/IBOFcud:xa0129 -_'"
    samples = [log_line for log_line in open(log("nccl-1524-async-then-249.log"), encoding="utf-8")]
    samples += ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 60))) for _ in range(3000)]
    samples += [rnd.choice(lits)[: rnd.randint(1, 12)] + "|" + rnd.choice(lits) for _ in range(500)]
    samples += [lit[:-1] for lit in lits]
    for text in samples:
        assert bool(gate.search(text)) == any(lit in text for lit in lits), text


def test_writer_contexts_are_capped(tmp_path, monkeypatch):
    # Each distinct host:pid prefix is a writer; a log inventing thousands of them must not get a
    # context each. Beyond the cap the lines are still matched, only their INFO context is dropped.
    import imgcheck.triage.scan as scan

    monkeypatch.setattr(scan, "MAX_WRITERS", 50)
    p = tmp_path / "many-writers.log"
    with open(p, "w", encoding="utf-8") as fh:
        for i in range(300):
            fh.write(f"node{i}:{100 + i}:{100 + i} [0] NCCL INFO NCCL_IB_HCA set by environment to mlx5_{i}.\n")
        # a real line (nccl-tests-188) from a writer beyond the cap is still recognised
        fh.write("user:16899:16961 [0] misc/socket.cc:441 NCCL WARN socketFinalizeAccept: wrong type 4 != 3\n")
    result = scan.scan_logs([str(p)], load_signatures_for_test())
    assert len(result.contexts) == 50 and result.context_lines_dropped == 251  # 250 INFO lines + the WARN line
    r = triage([str(p)])
    assert r.first_failure.signature == "NCCL-SOCKET-TYPE-MISMATCH"
    assert any("more than 50 writers" in n for n in r.notes)


def load_signatures_for_test():
    from imgcheck.triage.signatures import load_signatures

    return load_signatures()
