"""Unknown is never silent (issue 31): for every registered rule, now and later.

The bases are realistic facts: every incident case as its thread states it (tests/incidents) and the committed
real Debian images on the committed node fixtures. For each base, each rule that says something (a finding or an
unknown) must still say something when any one fact is made unknown (engine/facts.py ALL), and when any
component is made present-with-unknown-details (facts.COMPONENTS). A rule that returns silently on a fact it
did not declare fails here (test_a_rule_that_forgets_is_caught shows it)."""

from __future__ import annotations

import copy
import dataclasses
import multiprocessing
import os
import types
from collections.abc import Iterable

import pytest
from engine_facts import matrix as load_matrix
from unknown_bases import bases

from imgcheck.engine import evaluate, facts
from imgcheck.engine.context import Ctx
from imgcheck.engine.contract import reads_of, requires_of
from imgcheck.engine.evaluate import FAMILIES, REGISTERED
from imgcheck.model.node import Limits

# Rules no per-(image, node) base can make speak, and why: they run another way or read only what no base has.
NOT_PER_NODE = {
    "FLEET-LINK-LAYER-MIXED": "fleet_compare runs over all nodes at once (report.evaluate_fleet), not per node",
    "FLEET-MTU-MIXED": "fleet_compare",
    "FLEET-STACK-MIXED": "fleet_compare",
    "FLEET-FW-MIXED": "fleet_compare",
    "FLEET-DRIVER-BRANCH-MIXED": "fleet_compare",
    "FLEET-ROCE-GID-MIXED": "fleet_compare",
    "FLEET-ROCE-GID-INDEX-DIFFERS": "fleet_compare",
    "JOB-ENV-OVERRIDES-IMAGE": "reads only the spec's and the image's Env (both always known); tests/job covers it",
    "JOB-ENV-SHADOWED-BY-IMAGE": "reads only the spec's and the image's Env (both always known); tests/job covers it",
    "LAUNCH-APPTAINER-NVCCLI": "no public --nvccli script with a citable repository was found for a base; "
    "tests/job/test_apptainer_launch.py covers it (found, asked, decided) on hand-made command lines",
}


@pytest.fixture(scope="module")
def matrix():
    return load_matrix()


def said(result) -> set[str]:
    return {f.id for f in result.findings} | {u.rule for u in result.unknowns}


def _silences_on(base, matrix, families, changes: Iterable[facts.Fact], vague: bool) -> dict[str, set[str]]:
    name, image, node, job = base
    out: dict[str, set[str]] = {}
    spoke = said(evaluate(image, node, matrix, families=families, job=job))
    for fact in changes:
        change = fact.vague if vague else fact.blank
        assert change is not None
        if vague and fact.state(Ctx(image, node, matrix, job)) is not facts.State.KNOWN:
            continue  # present-with-unknown-details is a change of a component the base has
        i, n, j = change(image, node, job)
        for rule in spoke - said(evaluate(i, n, matrix, families=families, job=j)):
            out.setdefault(rule, set()).add(f"{name}: {fact.name}")
    return out


_FORKED: tuple = ()  # what a forked worker reads (facts carry lambdas, so they are inherited, not pickled)


def _forked_base(index: int) -> dict[str, set[str]]:
    bases_list, matrix, families, changes, vague = _FORKED
    return _silences_on(bases_list[index], matrix, families, changes, vague)


def silences(matrix, families, changes: Iterable[facts.Fact], vague: bool = False) -> dict[str, set[str]]:
    """rule -> '<base>: <fact>' where the rule spoke on the base and fell silent with that fact changed. The bases
    are independent, so they are spread over the machine's cores (thousands of evaluations)."""
    global _FORKED
    all_bases, changes = list(bases()), tuple(changes)
    workers = min(os.cpu_count() or 1, 4)
    if workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        parts = [_silences_on(b, matrix, families, changes, vague) for b in all_bases]
    else:
        _FORKED = (all_bases, matrix, families, changes, vague)
        try:
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                parts = pool.map(_forked_base, range(len(all_bases)), chunksize=4)
        finally:
            _FORKED = ()
    out: dict[str, set[str]] = {}
    for part in parts:
        for rule, where in part.items():
            out.setdefault(rule, set()).update(where)
    return out


def test_every_rule_declares_the_facts_it_reads():
    for family in REGISTERED:
        reads, requires = reads_of(family), requires_of(family)
        assert set(reads) == set(family.RULES), f"{family.__name__}: READS must name each of its RULES"
        for rule, required in requires.items():
            assert {f.name for f in required} <= {f.name for f in reads[rule]}, f"{rule}: REQUIRES facts are read too"


def test_every_rule_speaks_on_some_realistic_base(matrix):
    spoke = set()
    for _, image, node, job in bases():
        spoke |= said(evaluate(image, node, matrix, job=job))
    rules = {r for f in FAMILIES for r in f.RULES}
    assert rules - spoke - set(NOT_PER_NODE) == set(), "give these rules a base (incident case or fixture)"


def every_fact() -> tuple[facts.Fact, ...]:
    """facts.ALL and every fact a family declares (settings, facts added later), once each."""
    found = {f.name: f for f in facts.ALL}
    for family in REGISTERED:
        for declared in reads_of(family).values():
            found.update({f.name: f for f in declared if f.name not in found})
    return tuple(found.values())


def test_blanking_any_fact_never_silences_a_rule(matrix):
    assert silences(matrix, FAMILIES, every_fact()) == {}


def test_a_component_present_with_unknown_details_never_silences_a_rule(matrix):
    assert silences(matrix, FAMILIES, facts.COMPONENTS, vague=True) == {}


def test_a_rule_that_forgets_is_caught(matrix):
    """A new rule in the family-module shape that returns when ctx.nccl is None, without declaring NCCL."""
    from imgcheck.engine import emit

    def check(ctx):
        if ctx.nccl is None:
            return
        yield emit.unknown("X-FORGETFUL", "NCCL version seen")

    forgetful = types.SimpleNamespace(RULES=("X-FORGETFUL",), check=check, __name__="forgetful")
    found = silences(matrix, FAMILIES + (forgetful,), (facts.NCCL,))
    assert "X-FORGETFUL" in found
    declared = types.SimpleNamespace(**{**vars(forgetful), "READS": {"X-FORGETFUL": (facts.NCCL,)}})
    assert "X-FORGETFUL" not in silences(matrix, FAMILIES + (declared,), (facts.NCCL,))
    assert "X-FORGETFUL" not in silences(matrix, FAMILIES + (declared,), (facts.NCCL,), vague=True)


# ---------- the measured silent cases, from realistic facts ----------


def case(case_id: str):
    return next((i, n, j) for name, i, n, j in bases() if name == f"incident {case_id}")


def unknown_of(result, rule):
    return next((u for u in result.unknowns if u.rule == rule), None)


def test_memlock_64k_with_libibverbs_unknown_is_undecided_not_silent(matrix):
    image, node, _ = case("cudf-spark-pr7632-container-memlock-64mb")  # the stated 64 MiB container limit
    image, node, _ = facts.LIBIBVERBS.blank(image, node, None)
    result = evaluate(image, node, matrix)
    u = unknown_of(result, "MEMLOCK-TOO-LOW")
    assert u is not None and "libibverbs" in u.reason and u.facts == ("image.rdma.libibverbs",)
    assert u.severity == "error"  # the worst the rule can give: it can decide the verdict


def test_memlock_unlimited_is_decided_whatever_the_image(matrix):
    image, node, _ = case("cudf-spark-pr7632-container-memlock-64mb")
    image, node, _ = facts.LIBIBVERBS.blank(image, node, None)
    node = dataclasses.replace(node, limits=Limits(memlock_kib=-1))
    assert "MEMLOCK-TOO-LOW" not in said(evaluate(image, node, matrix))


def test_job_launch_with_nccl_unknown_asks_instead_of_passing(matrix):
    image, node, job = case("nccl-342-docker-default-shm")  # Docker's 64 MiB /dev/shm, 4 ranks
    assert "JOB-SHM-TOO-SMALL" in {f.id for f in evaluate(image, node, matrix, job=job).findings}
    blank = facts.NCCL.blank(image, node, job)
    u = unknown_of(evaluate(blank[0], blank[1], matrix, job=blank[2]), "JOB-SHM-TOO-SMALL")
    assert u is not None and "NCCL" in u.reason


def test_nccl_present_with_unknown_version_is_not_no_nccl(matrix):
    image, node, job = case("nccl-342-docker-default-shm")
    vague = facts.NCCL.vague(image, node, job)
    assert facts.NCCL.vague is not None
    result = evaluate(vague[0], vague[1], matrix, job=vague[2])
    # the /dev/shm rule needs NCCL's presence, not its version: still the finding, never "no NCCL"
    assert "JOB-SHM-TOO-SMALL" in {f.id for f in result.findings}
    # a rule that needs the version asks, naming NCCL as present with unknown details
    u = unknown_of(result, "NCCL-RELEASE-KNOWN-ISSUE")
    assert u is not None and "present, but its details are unknown" in u.reason
    absent = dataclasses.replace(image, nccl=())
    assert "JOB-SHM-TOO-SMALL" not in said(evaluate(absent, node, matrix, job=job))  # known absent: no NCCL rule


# ---------- the verdict is never greener than its facts ----------


def thread_facts_files(tmp_path, case_id: str, drop_libibverbs: bool = True) -> tuple[str, str]:
    """An incident's facts as files a user would pass (facts: image, --node-facts), libibverbs left out."""
    import json

    from corpus import CASES, image_doc, node_facts

    from imgcheck.model.serde import to_dict

    spec = next(c for c in CASES if c["id"] == case_id)
    doc = copy.deepcopy(image_doc(spec["image"], case_id))  # image_doc shares the corpus profiles' dicts
    if drop_libibverbs:
        doc["rdma"].pop("libibverbs")  # left out: unknown (what a hand-written facts file gives)
    image_path, node_path = tmp_path / "image.json", tmp_path / "node.json"
    image_path.write_text(json.dumps(doc))
    node_path.write_text(json.dumps(to_dict(node_facts(spec["node"], case_id))))
    return str(image_path), str(node_path)


def test_undecided_error_rule_makes_the_outcome_incomplete_with_the_question_first(tmp_path, capsys):
    from imgcheck.cli.main import main

    image, node = thread_facts_files(tmp_path, "cudf-spark-pr7632-container-memlock-64mb")
    args = [f"facts:{image}", "--node-facts", node]
    assert (
        main([*args, "-o", "table"]) == 0
    )  # default --fail-on error: an undecided rule is no error (backward compatible)
    text = capsys.readouterr().out
    assert text.startswith("INCOMPLETE ") and "No compatibility problems found" not in text
    first_screen = "\n".join(text.splitlines()[:12])
    assert "could not be decided" in first_screen and "libibverbs" in first_screen and "MEMLOCK-TOO-LOW" in first_screen
    assert main([*args, "--fail-on", "unknown", "-o", "table"]) == 4
    capsys.readouterr()
    assert main([*args, "--fail-on", "unknown", "-o", "json"]) == 4
    import json

    doc = json.loads(capsys.readouterr().out)
    assert (doc["verdict"], doc["outcome"], doc["schema_version"]) == ("ok", "incomplete", 5)
    memlock = next(u for u in doc["unknowns"] if u["rule"] == "MEMLOCK-TOO-LOW")
    assert memlock["severity"] == "error" and memlock["facts"] == ["image.rdma.libibverbs"]


def test_with_the_fact_stated_the_same_check_decides(tmp_path, capsys):
    from imgcheck.cli.main import main

    image, node = thread_facts_files(tmp_path, "cudf-spark-pr7632-container-memlock-64mb", drop_libibverbs=False)
    assert main([f"facts:{image}", "--node-facts", node, "--fail-on", "unknown", "-o", "json"]) in (1, 4)
    import json

    doc = json.loads(capsys.readouterr().out)
    assert "MEMLOCK-TOO-LOW" in {f["id"] for f in doc["findings"]}
    assert "MEMLOCK-TOO-LOW" not in {u["rule"] for u in doc["unknowns"]}


def test_an_error_found_is_fail_whatever_is_undecided():
    from imgcheck.model.report import Finding, Unknown, outcome_of

    error = Finding("X", "error", "t", None, "m", "verified")
    undecided = Unknown("Y", "q", severity="error")
    assert outcome_of([error], [undecided]) == "fail"
    assert outcome_of([], [undecided]) == "incomplete"
    assert outcome_of([], [Unknown("Z", "q", severity="warning")]) == "ok"  # a lesser check: listed, not the headline


# ---------- nodes that cannot carry a multi-node GPU job say so ----------


def test_node_with_no_rdma_and_no_driver_is_never_a_silent_ok(matrix):
    from engine_facts import node as fixture_node

    image, _, _ = case("nccl-342-docker-default-shm")  # an NCCL image, as the thread states it
    cpu = fixture_node("cpu-no-rdma")  # rdma stack none, gpu {}: the driver is not stated
    u = unknown_of(evaluate(image, cpu, matrix), "NODE-NO-MULTINODE-GPU-PATH")
    assert u is not None and "node.gpu.driver_version" in u.facts
    # what the probe writes when it looked and found no driver (node/nvidia.py): a wrong root looks like this
    probed = dataclasses.replace(
        cpu, unknown={"gpu.driver_version": "no NVIDIA kernel driver loaded (/proc/driver/nvidia/version absent)"}
    )
    found = {f.id: f for f in evaluate(image, probed, matrix).findings}["NODE-NO-MULTINODE-GPU-PATH"]
    assert found.severity == "warning" and "wrong root" in found.title  # never a green OK


def test_node_without_rdma_says_nccl_uses_sockets(matrix):
    from engine_facts import node as fixture_node

    image, node, _ = case("nccl-342-docker-default-shm")  # 4 H100s, driver 550; the thread names no NIC
    no_rdma = dataclasses.replace(node, rdma=fixture_node("cpu-no-rdma").rdma)
    found = {f.id: f for f in evaluate(image, no_rdma, matrix).findings}["NODE-NO-MULTINODE-GPU-PATH"]
    assert "TCP sockets" in found.title and found.predicted_error == "NCCL INFO NET/IB : No device found."
    with_uvm_off = dataclasses.replace(
        node,
        rdma=fixture_node("mofed-23.10-open-550-peermem").rdma,
        gpu=dataclasses.replace(node.gpu, uvm_loaded=False),
    )
    found = {f.id: f for f in evaluate(image, with_uvm_off, matrix).findings}["NODE-NO-MULTINODE-GPU-PATH"]
    assert "nvidia_uvm" in found.title


def test_a_cpu_image_on_a_cpu_node_is_decided(matrix):
    from engine_facts import committed_facts
    from engine_facts import node as fixture_node

    result = evaluate(committed_facts("bookworm"), fixture_node("cpu-no-rdma"), matrix)  # no NCCL, CUDA or torch
    assert "NODE-NO-MULTINODE-GPU-PATH" not in said(result)


# ---------- ranking by evidence ----------


def test_a_version_range_only_known_issue_ranks_below_a_shown_mechanism(matrix):
    """NCCL 2.19.3 as nccl#1116 states it, in an image without libibverbs (known absent): the missing verbs library is
    shown; the known cuMem/all-to-all hang matches the version range but its workload condition is not shown."""
    from corpus import CASES, image_doc, image_facts

    from imgcheck.engine.report import build_report
    from imgcheck.formats.report_table import render_table

    _, node, _ = case("nccl-1116-cumem-a2a-deadlock-2.19")
    spec = next(c for c in CASES if c["id"] == "nccl-1116-cumem-a2a-deadlock-2.19")
    doc = copy.deepcopy(image_doc(spec["image"], spec["id"]))
    doc["rdma"] = {"libibverbs": None, "providers": [], "flavor": "none"}  # looked, found none
    report = build_report(image_facts(doc, spec["id"]), [node], matrix, generated_at="x")
    ids = [f.id for f in report.findings]
    assert ids.index("RDMA-NO-LIBIBVERBS") < ids.index("NCCL-RELEASE-KNOWN-ISSUE")
    known = next(f for f in report.findings if f.id == "NCCL-RELEASE-KNOWN-ISSUE")
    assert known.unshown and "all-to-all" in known.unshown[0] and "cannot show" in known.mechanism
    text = render_table(report)
    assert text.index("RDMA-NO-LIBIBVERBS") < text.index("NCCL-RELEASE-KNOWN-ISSUE")
    assert "not shown to hold: all-to-all" in text


def test_every_format_says_incomplete(tmp_path):
    import json

    from corpus import CASES, image_doc, image_facts, node_facts

    from imgcheck.engine.report import build_report
    from imgcheck.formats.report_formats import render

    spec = next(c for c in CASES if c["id"] == "cudf-spark-pr7632-container-memlock-64mb")
    doc = copy.deepcopy(image_doc(spec["image"], spec["id"]))
    doc["rdma"].pop("libibverbs")
    report = build_report(
        image_facts(doc, spec["id"]), [node_facts(spec["node"], spec["id"])], load_matrix(), generated_at="x"
    )
    assert report.outcome == "incomplete"
    md = render(report, "markdown")
    assert md.startswith("### imgcheck: :grey_question: **INCOMPLETE**") and "No compatibility problems found" not in md
    assert "Does the image ship libibverbs (rdma-core), and which release?" in md
    sarif = json.loads(render(report, "sarif"))
    assert sarif["runs"][0]["properties"]["outcome"] == "incomplete"
    assert '<property name="outcome" value="incomplete" />' in render(report, "junit")
    assert 'type="undecided:MEMLOCK-TOO-LOW"' not in render(report, "junit")  # --fail-on error: skipped
    assert 'type="undecided:MEMLOCK-TOO-LOW"' in render(report, "junit", fail_on="unknown")
