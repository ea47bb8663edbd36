"""Issue 32, triage side: how far the run got (run_outcome.json), messages printed while probing in working runs
(benign_probes.json), and causes ranked by what they are (a concrete cause before advice to read more; a cause
whose environment is unconfirmed after one that presumes nothing). Real log text (tests/triage/logs, cited in
logs/README.md) or the upstream print format named by the marker's site."""

from __future__ import annotations

import json
import os
from importlib import resources

import pytest

from imgcheck.triage import triage
from imgcheck.triage.logparse import parse_line
from imgcheck.triage.outcome import OutcomeScanner, load_markers, summarise
from imgcheck.triage.probes import load_probes
from imgcheck.triage.signatures import load_signatures

HERE = os.path.dirname(__file__)
JOB_SPECS = os.path.join(HERE, "..", "job", "specs")


def log(name: str) -> str:
    return os.path.join(HERE, "logs", name)


def _data(name: str) -> dict:
    return json.loads(resources.files("imgcheck.data.triage").joinpath(name).read_text("utf-8"))


# one real line per marker: (marker id, line, where it was printed)
REAL_MARKER_LINES = [
    ("nccl-tests-out-of-bounds-ok", "# Out of bounds values : 0 OK", "NVIDIA/nccl-tests#119"),
    ("nccl-tests-avg-bus-bandwidth", "# Avg bus bandwidth    : 84.8558", "NVIDIA/nccl-tests#119"),
    (
        "nccl-tests-result-row",
        "   127926280      31981570     float     sum      -1   2560.7   49.96   95.75      0   2556.2   50.05   95.92      0",
        "NVIDIA/nccl-tests#119",
    ),
    (
        "nccl-tests-result-row",
        "           8             2   float       0    45.82    0.00    0.00    N/A    38.17    0.00    0.00    N/A",
        "NVIDIA/nccl-tests#82 (before the redop column)",
    ),
    ("python-keyboard-interrupt", "KeyboardInterrupt", "CPython's traceback (Ctrl-C)"),
    (
        "perftest-header",
        " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]",
        "linux-rdma/perftest#273",
    ),
    (
        "perftest-result-row",
        " 8          224958464        0.00               0.48   \t\t   7.498617",
        "linux-rdma/perftest#273",
    ),
    ("nccl-tests-out-of-bounds-failed", "# Out of bounds values : 248 FAILED", "NVIDIA/nccl-tests#7 (its title)"),
    (
        "torch-elastic-succeeded",
        "INFO:torch.distributed.elastic.agent.server.api:[default] worker group successfully finished. Waiting 300 "
        "seconds for other agents to finish.",
        "meta-pytorch/torchx#492",
    ),
    (
        "torch-elastic-sigterm",
        "W0219 09:17:03.837000 140066961602368 torch/distributed/elastic/multiprocessing/api.py:858] Sending process "
        "2448006 closing signal SIGTERM",
        "hpcaitech/ColossalAI#6202",
    ),
]


@pytest.mark.parametrize("marker,text,where", REAL_MARKER_LINES)
def test_each_marker_reads_its_real_line(marker, text, where):
    by_id = {m.id: m for m in load_markers()}
    assert by_id[marker].pattern.search(text), where
    others = [m.id for m in load_markers() if m.kind != "context" and m.id != marker and m.pattern.search(text)]
    assert not others  # one line, one meaning


def test_osu_rows_count_only_after_the_osu_header():
    """A bare number row means an OSU result only after OSU's table header (ucx#8684's output)."""
    sc = OutcomeScanner(load_markers())
    sc.feed(parse_line("1                       0.23\n", "a.log", 1))
    assert summarise(sc.by_source).state == "unknown"
    for n, text in enumerate(["# OSU MPI Broadcast Latency Test v5.8", "# Size       Avg Latency(us)", "1      0.23"]):
        sc.feed(parse_line(text + "\n", "a.log", n + 2))
    assert summarise(sc.by_source).state == "progressed"


def test_every_marker_and_probe_names_its_site_and_known_signatures():
    sigs = {s.id for s in load_signatures().signatures}
    for doc in _data("benign_probes.json")["probes"]:
        assert doc["site"] and doc["source"] and doc["matters_when"]
        assert set(doc["signatures"]) <= sigs, doc["id"]
    assert len(load_probes(frozenset(sigs))) == len(_data("benign_probes.json")["probes"])
    for m in load_markers():
        assert m.site and m.meaning


def test_a_completed_run_reports_its_outcome_and_retires_earlier_errors():
    """ucx#8684: UCX's CQ error for a device the sm/self run never used, then OSU's results: information, exit 0,
    and the outcome says the run progressed."""
    r = triage([log("ucx-8684-cq-memlock-noise.log")])
    assert r.verdict == "info_only" and r.first_failure is None
    assert r.outcome.state == "progressed" and r.outcome.marker == "osu-result-row"
    d = r.diagnoses[0]
    assert d.severity == "info" and "went on past this line" in (d.note or "") or "probe" in (d.note or "")
    assert r.certainty is not None and r.certainty.reasons[0].startswith("run outcome: progressed")
    assert r.certainty.level == "high"


def test_c10d_address_attempts_are_probes_but_the_final_failure_is_not():
    """heat#1003's per-address IPv6 warnings are information; with LlamaFactory#3715's real connect failure in the
    same input, C10D-CLIENT-CONNECT is still the located failure (only the probe lines are left out)."""
    alone = triage([log("heat-1003-ipv6-socket-noise.log")])
    assert alone.verdict == "info_only"
    # the lines are the information-only C10D-ADDRESS-FAMILY-PROBE (process catalog) or, in a form that signature does
    # not take, C10D-CLIENT-CONNECT with the benign-probe note
    d = alone.diagnoses[0]
    assert d.signature == "C10D-ADDRESS-FAMILY-PROBE" or "c10d-per-address-attempt" in (d.note or "")
    both = triage([log("heat-1003-ipv6-socket-noise.log"), log("llamafactory-3715-c10d-netmask.log")])
    assert both.verdict == "signature_found" and both.first_failure is not None
    assert both.first_failure.signature == "C10D-CLIENT-CONNECT"
    assert "cannot be initialized" not in both.first_failure.where.text
    assert any("are not failures" in n for n in both.notes) or any(
        d.signature == "C10D-ADDRESS-FAMILY-PROBE" and d.severity == "info" for d in both.diagnoses
    )


def test_libibverbs_probe_is_information_on_one_node_only():
    """nccl#259: ncclCommInitAll's 'nranks 8' (one process, one node): information. nccl#1647: two ranks, one host
    seen: the node count is not known, so the warning stays and the notes say what would decide it."""
    one = triage([log("nccl-259-no-plugin-no-verbs-single-node-noise.log")])
    d = one.diagnoses[0]
    assert d.signature == "LIBIBVERBS-MISSING" and d.severity == "info" and "ncclCommInitAll" in (d.note or "")
    unknown = triage([log("nccl-1647-timestamps.log")])
    d = next(d for d in unknown.diagnoses if d.signature == "LIBIBVERBS-MISSING")
    assert d.severity == "warning"
    assert any("is a probe" in n and "where every rank ran" in n for n in unknown.notes)


def test_init_start_without_complete_is_a_failure_only_when_the_job_was_stopped(tmp_path):
    """nccl-tests#245's excerpt ends after Init START: information. The same lines followed by Slurm's cancel
    banner (slurmstepd's '*** JOB %u ON %s CANCELLED AT %s DUE TO TIME LIMIT ***') are a stalled init."""
    cut = triage([log("nccl-tests-245-dmabuf-probe-gdr-off-noise.log")])
    assert cut.verdict == "info_only" and cut.diagnoses[0].signature == "NCCL-INIT-STALL"
    with open(log("nccl-tests-245-dmabuf-probe-gdr-off-noise.log"), encoding="utf-8") as fh:
        text = fh.read()
    stopped = tmp_path / "job.log"
    stopped.write_text(
        text + "slurmstepd: error: *** JOB 10711368 ON c0617 CANCELLED AT 2026-09-30T16:00:24 DUE TO TIME LIMIT ***\n"
    )
    r = triage([str(stopped)])
    assert r.verdict == "signature_found" and r.first_failure is not None
    assert r.first_failure.signature == "NCCL-INIT-STALL" and r.outcome.state == "ended"


def test_read_advice_outranks_a_generic_codes_unsupported_guesses():
    """nccl#473 (07b) and nccl-tests#6 (07c): a bare result code with no WARN names no mechanism, so no cause of it
    is supported by a line: rerunning with NCCL_DEBUG=WARN leads, the first guess follows (not a GPU fault first)."""
    r = triage([log("nccl-473-docker-no-ipc-host.log")])
    causes = r.diagnoses[0].causes
    assert [c.id for c in causes[:2]] == ["read-the-warn", "dev-shm-container"]
    assert any("NCCL_DEBUG=WARN" in n for n in r.notes)
    r = triage([log("nccl-tests-6-nccl-for-cuda11-on-cuda10.2.log")])
    assert r.diagnoses[0].signature == "NCCL-ERR-1"
    assert r.diagnoses[0].causes[0].id == "read-the-warn"


def test_a_cause_a_line_supports_outranks_the_advice_to_read():
    """The other order: oneflow#3586's 'unhandled system error' comes with NCCL's socket lines naming a virtual
    interface (a condition the log shows), and ompi#2661's rank killed by signal 9: the supported cause leads, the
    advice to read more follows it, the unsupported guesses come after both."""
    causes = triage([log("oneflow-3586-socket-timeout.log")]).diagnoses[0].causes
    assert causes[0].id == "socket-iface-virtual" and causes[0].status == "supported"
    assert causes[1].kind == "read" and all(c.kind == "cause" for c in causes[2:])
    causes = triage([log("ompi-2661-rank-signal-9.log")]).diagnoses[0].causes
    assert causes[0].id == "oom-or-scheduler-kill" and causes[1].kind == "read"


def test_a_cause_that_presumes_a_container_waits_for_evidence_of_one():
    """CoR-GS#23 on a host shell: 'No CUDA GPUs are available' leads with CUDA_VISIBLE_DEVICES; read with a
    launch spec that runs a container, 'started without GPUs' is back in its advice place."""
    host = triage([log("cor-gs-23-empty-cuda-visible-devices.log")])
    ids = [c.id for c in host.diagnoses[0].causes]
    assert ids[0] == "visible-devices-mask" and ids.index("no-gpu-in-container") > ids.index("visible-devices-mask")
    boxed = triage([log("cor-gs-23-empty-cuda-visible-devices.log")], job=os.path.join(JOB_SPECS, "compose-gpu.yaml"))
    assert boxed.diagnoses[0].causes[0].id == "no-gpu-in-container"


def test_non_fatal_ib_events_are_probes_unless_a_transfer_fails(tmp_path):
    """NCCL 2.19's async thread WARNs 'NET/IB : Got async event : %s' for every event (net_ib.cc:95) with
    rdma-core's ibv_event_type_str names; 2.30 calls port active / GID table change non-fatal. Alone: information.
    With a completion error after it (nccl#1524's 249) it stays the failure's start; a subnet-manager event
    (DeepSpeedExamples#310's client reregistration) is never a probe."""
    line = "node1:5021:5386 [0] transport/net_ib.cc:95 NCCL WARN NET/IB : Got async event : GID table change\n"
    alone = tmp_path / "alone.log"
    alone.write_text(line)
    assert triage([str(alone)]).verdict == "info_only"
    with open(log("nccl-1524-async-then-249.log"), encoding="utf-8") as fh:
        failing = fh.read()
    mixed = tmp_path / "mixed.log"
    mixed.write_text(line + failing.split("\n", 1)[1])
    r = triage([str(mixed)])
    assert r.verdict == "signature_found"
    d = next(d for d in r.diagnoses if d.signature == "NET-IB-ASYNC-EVENT")
    assert d.severity == "error"
    rereg = triage([log("deepspeedexamples-310-client-rereg.log")])
    assert rereg.verdict == "signature_found" and rereg.first_failure.signature == "NET-IB-ASYNC-EVENT"


def test_a_later_run_does_not_retire_an_earlier_runs_failure(tmp_path):
    """An A/B log as issues paste them: nccl#1524's failing lines, then nccl-tests#82's run (its own prompt line and
    '# nThread' header start a new run, which prints results). The first run's failure stays the failure; the
    second run's libibverbs warning (two hosts: sockets between them) is a degradation that run went on past."""
    with open(log("nccl-1524-async-then-249.log"), encoding="utf-8") as fh:
        failing = fh.read()
    with open(log("nccl-tests-82-ibverbs-warn-then-results.log"), encoding="utf-8") as fh:
        working = fh.read()
    ab = tmp_path / "ab.log"
    ab.write_text(failing + working)
    r = triage([str(ab)])
    assert r.verdict == "signature_found" and r.first_failure is not None
    assert r.first_failure.signature == "NET-IB-ASYNC-EVENT"
    assert next(d for d in r.diagnoses if d.signature == "LIBIBVERBS-MISSING").severity == "warning"
    assert any("LIBIBVERBS-MISSING" in n and "did not stop the run" in n for n in r.notes)
    assert r.outcome.state == "progressed"  # the last run's


def test_the_table_says_the_run_went_on_instead_of_a_triage_order():
    """ucx#8684 as a user reads it: 'NO FAILURE. The run progressed', no general triage order (nothing to hunt), and
    the retired line's causes only behind -v."""
    from imgcheck.triage.render import render_text

    r = triage([log("ucx-8684-cq-memlock-noise.log")])
    text = render_text(r)
    assert "NO FAILURE. The run progressed" in text and "General triage order" not in text
    assert not r.general_order
    assert "-v shows them" in text and "ucx-reg-limits" not in text.split("ALSO SEEN", 1)[1].split("sources")[0]


def test_a_degradation_the_run_went_on_past_is_advisory_not_a_failure():
    """nccl-tests#82: no libibverbs on two nodes, then result rows: the socket fallback is worth a look (bandwidth),
    but the run went on, so the verdict is advisory_only (exit 0), not a located failure."""
    r = triage([log("nccl-tests-82-ibverbs-warn-then-results.log")])
    assert r.verdict == "advisory_only" and r.first_failure is None
    assert next(d for d in r.diagnoses if d.signature == "LIBIBVERBS-MISSING").severity == "warning"
    assert any("did not stop the run" in n for n in r.notes)
