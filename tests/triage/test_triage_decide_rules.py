"""Issue 35: triage decides like an engineer. Each rule on real log lines (tests/triage/logs, cited in
logs/README.md); where a rule needs facts, node facts in the probe schema."""

from __future__ import annotations

import copy
import json
import os
from importlib import resources

from imgcheck.cli.main import main
from imgcheck.triage import triage
from imgcheck.triage.render import render_text

HERE = os.path.dirname(__file__)


def log(name: str) -> str:
    return os.path.join(HERE, "logs", name)


def _doc() -> dict:
    return json.loads(resources.files("imgcheck.data.triage").joinpath("signatures.json").read_text("utf-8"))


def _sigfile(tmp_path, doc: dict) -> str:
    p = tmp_path / "sigs.json"
    p.write_text(json.dumps(doc))
    return str(p)


def _ids(d):
    return [c.id for c in d.causes]


def test_concrete_signature_beats_the_generic_exception_in_one_process(tmp_path):
    """nccl#1837: 'ncclInternalError: Internal check failed.' (generic) comes two lines before the
    'Last error:' text that names the cause. Without the suppression the data has, the rule still
    puts the concrete signature first; with the rule turned off the generic one would lead."""
    doc = _doc()
    for s in doc["signatures"]:
        if s["id"] == "NCCL-BOOTSTRAP-SOCKET":
            s["suppresses"] = []
    r = triage([log("nccl-1837-ifname-missing.log")], signatures=_sigfile(tmp_path, doc))
    assert r.first_failure.signature == "NCCL-BOOTSTRAP-SOCKET"
    assert "NCCL-ERR-3" in [d.signature for d in r.diagnoses]  # still reported, not first
    off = copy.deepcopy(doc)
    for s in off["signatures"]:
        s.pop("generic", None)
    r = triage([log("nccl-1837-ifname-missing.log")], signatures=_sigfile(tmp_path, off))
    assert r.first_failure.signature == "NCCL-ERR-3"


def test_last_error_text_is_the_diagnosis(tmp_path):
    r = triage([log("nccl-1837-ifname-missing.log")])
    assert any("'Last error:' names the cause" in n and "neither AF_INET" in n for n in r.notes)
    doc = _doc()
    doc["signatures"] = [s for s in doc["signatures"] if s["id"] != "NCCL-BOOTSTRAP-SOCKET"]
    for s in doc["signatures"]:
        s["suppresses"] = [x for x in s.get("suppresses", []) if x != "NCCL-BOOTSTRAP-SOCKET"]
    r = triage([log("nccl-1837-ifname-missing.log")], signatures=_sigfile(tmp_path, doc))
    assert any("no signature names it" in n and "neither AF_INET" in n for n in r.notes)


def test_a_completion_error_naming_a_peer_points_at_the_peer():
    r = triage([log("deepspeed-6875-vendor249-remote.log")])
    assert any("names its peer 10.0.1.23" in n for n in r.notes)


def test_a_cause_the_failing_log_contradicts_is_not_first():
    """aws-ofi-nccl#24: other ranks run channels 'via NET/AWS Libfabric', so EFA is visible: the
    'EFA not exposed to the container' cause is contradicted and goes last."""
    r = triage([log("aws-ofi-nccl-24-open-av.log")])
    d = r.diagnoses[0]
    assert d.signature == "AWS-OFI-ERROR"
    assert d.causes[0].id != "efa-not-in-container"
    bad = next(c for c in d.causes if c.id == "efa-not-in-container")
    assert bad.status == "unlikely" and bad is d.causes[-1]


def test_socket_interfaces_the_log_shows_lead_to_nccl_socket_ifname():
    """horovod#584: NCCL's socket transport listed lo among its interfaces; connects were refused."""
    r = triage([log("horovod-584-socket-lo.log")])
    d = r.diagnoses[0]
    assert d.signature == "NCCL-SOCKET-CONNECT"
    assert d.causes[0].id == "socket-iface-virtual" and d.causes[0].status == "supported"
    assert "lo" in r.context.socket_ifaces


def test_ucx_posix_out_of_memory_with_sigbus_is_dev_shm():
    """rocm-systems#3700: uct_iface_open(posix/memory) Out of memory, then signal 7 (Bus error)."""
    r = triage([log("rocm-systems-3700-ucx-posix-sigbus.log")])
    assert r.first_failure.signature == "UCX-SHM-NOSPACE"
    assert r.diagnoses[0].causes[0].id == "dev-shm-small"
    r = triage([log("cudf-22233-ucx-posix-dev-shm.log")])
    assert r.first_failure.signature == "UCX-SHM-NOSPACE" and r.diagnoses[0].causes[0].id == "dev-shm-small"


def _node(tmp_path, module: str, userspace: str) -> str:
    with open(os.path.join(HERE, "nodes", "no-peermem.json"), encoding="utf-8") as fh:
        doc = json.load(fh)
    doc["gpu"]["driver_version"] = module
    doc["gpu"]["userspace_driver_version"] = userspace
    p = tmp_path / f"node-{userspace}.json"
    p.write_text(json.dumps(doc))
    return str(p)


def test_facts_rank_causes_and_a_ruled_out_cause_is_not_first(tmp_path):
    """easydiffusion#379's error 803 with node facts: a module/user-space mismatch on the node puts that
    cause first; the same log on a node whose two versions agree never shows it first."""
    logf = log("easydiffusion-379-cuda-803.log")
    r = triage([logf], node_facts=_node(tmp_path, "535.129.03", "550.54.14"))
    d = r.diagnoses[0]
    assert d.signature == "CUDA-DRIVER-MISMATCH-803"
    assert d.causes[0].id == "module-userspace-mismatch" and d.causes[0].status == "supported"
    r = triage([logf], node_facts=_node(tmp_path, "550.54.14", "550.54.14"))
    d = r.diagnoses[0]
    assert d.causes[0].id != "module-userspace-mismatch"
    assert next(c for c in d.causes if c.id == "module-userspace-mismatch").status == "unlikely"


def test_advisory_only_is_not_a_located_failure(capsys):
    """nccl#487: only 'falling back to simple order' warnings: advisory_only, exit 0, low certainty;
    a located failure (nccl#1537's GDR disabled with IB meant) stays signature_found, exit 1."""
    r = triage([log("nccl-487-graph-pattern.log")])
    assert r.verdict == "advisory_only" and r.first_failure is None and r.certainty.level == "low"
    assert main(["triage", log("nccl-487-graph-pattern.log"), "-o", "table"]) == 0
    assert "ADVISORY ONLY" in capsys.readouterr().out
    assert main(["triage", log("nccl-1537-gdr-disabled.log"), "-o", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    # the verdict and the certainty agree: a found signature has a located first failure
    assert doc["verdict"] == "signature_found" and doc["first_failure"]["signature"] == "GDR-DISABLED"
    assert not any("no failing line" in r for r in doc["certainty"]["reasons"])


def test_unlikely_causes_are_behind_verbose(capsys):
    r = triage([log("aws-ofi-nccl-24-open-av.log")])
    short, full = render_text(r), render_text(r, verbose=True)
    assert "EFA device (/dev/infiniband/uverbs*)" not in short.split("ALSO SEEN")[0].replace("\n", " ")
    assert "unlikely cause(s) not shown" in short
    assert "[unlikely," in full and "[unlikely," not in short
    assert main(["triage", log("aws-ofi-nccl-24-open-av.log"), "-v", "-o", "table"]) == 1
    assert "[unlikely," in capsys.readouterr().out


def test_never_advise_reading_a_warn_that_is_in_the_log():
    """pytorch#111187 alone: no WARN in the log, so 'read the preceding WARN' (with NCCL_DEBUG=WARN) is the
    advice, said in the notes and, since no line supports any concrete cause of a bare result code, first (a cause
    of kind "read"). Given with nccl#1176's WARN line as a second input, the WARN is quoted instead and that
    advice is demoted as unlikely."""
    alone = triage([log("pytorch-111187-unhandled-cuda.log")])
    causes = alone.diagnoses[0].causes
    read = next(c for c in causes if c.id == "read-the-warn")
    assert read.kind == "read" and read.status == "supported" and read is causes[0]
    assert all(c.kind == "cause" and c.status != "supported" for c in causes[1:])
    assert any("NCCL_DEBUG" in n and "no NCCL WARN" in n for n in alone.notes)
    both = triage([log("pytorch-111187-unhandled-cuda.log"), log("nccl-1176-message-truncated.log")])
    d = next(d for d in both.diagnoses if d.signature == "NCCL-ERR-1")
    assert d.causes[0].id != "read-the-warn"
    assert next(c for c in d.causes if c.id == "read-the-warn").status == "unlikely"
    # the WARN is quoted, or is itself the first failure (its cause class, from the code at its site, named)
    warn = "Message truncated : received 256 bytes instead of 4"
    assert any(warn in n for n in both.notes) or warn in both.first_failure.where.text
    assert both.first_failure.signature != "NCCL-ERR-1"


JOB_SPECS = os.path.join(HERE, "..", "job", "specs")


def test_a_launch_spec_ranks_causes(capsys):
    """rocm-systems#3700's UCX /dev/shm failure read against two real specs: NGC's documented `docker run
    --ipc=host` rules out a small /dev/shm (the cause is not first), a compose file that leaves /dev/shm at
    Docker's default supports it."""
    logf = log("rocm-systems-3700-ucx-posix-sigbus.log")
    host_ipc = triage([logf], job=os.path.join(JOB_SPECS, "ngc-pytorch-run.sh"))
    d = host_ipc.diagnoses[0]
    assert d.signature == "UCX-SHM-NOSPACE" and d.causes[0].id != "dev-shm-small"
    small = next(c for c in d.causes if c.id == "dev-shm-small")
    assert small.status == "unlikely" and any("IPC namespace" in b for b in small.because)
    default = triage([logf], job=os.path.join(JOB_SPECS, "compose-gpu.yaml"))
    top = default.diagnoses[0].causes[0]
    assert top.id == "dev-shm-small" and top.status == "supported"
    assert main(["triage", logf, "--job", os.path.join(JOB_SPECS, "compose-gpu.yaml"), "-o", "json"]) == 1
    capsys.readouterr()
