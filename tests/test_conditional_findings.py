"""Conditional findings (engine/hypothesis.py): a rule undecided only because the image's NCCL (libibverbs, UCX,
CUDA) could not be read is evaluated under "present, details unknown"; what it then finds on known facts is
reported with `assumes`, never as a claim, and the presence question is asked once.

Property tests run over the unknown-contract bases (tests/unknown_bases.py: the incident cases, the committed
real Debian images on the committed node fixtures, real launch specs and real launch scripts' NCCL_* exports);
the unit tests use real public launch specs (tests/job/specs/real, URLs in SOURCES.md) on committed node facts.
"""

from __future__ import annotations

import dataclasses
import json
import os
from functools import cache

import pytest
from engine_facts import committed_facts, node, with_nccl
from engine_facts import matrix as load_matrix
from unknown_bases import REAL_SPECS, bases

from imgcheck.engine import evaluate, facts
from imgcheck.engine.context import Ctx
from imgcheck.engine.contract import reads_of, requires_of
from imgcheck.engine.evaluate import FAMILIES
from imgcheck.engine.report import build_report
from imgcheck.job import load_job_spec
from imgcheck.job.facts_io import parse_job_facts
from imgcheck.model.node_io import load_node_facts
from imgcheck.model.report import question_groups

HERE = os.path.dirname(__file__)
NCCL = facts.NCCL.name


@pytest.fixture(scope="module")
def matrix():
    return load_matrix()


def cond_node(name: str):
    return load_node_facts(os.path.join(HERE, "fixtures", "conditional_nodes", name + ".json"))


def spec_job(spec: str, role: str | None = None):
    jobs = load_job_spec(os.path.join(REAL_SPECS, spec))
    return next(j for j in jobs if role is None or j.role == role)


def conditional(result, fact: str = NCCL) -> dict:
    return {f.id: f for f in result.findings if fact in f.assumed_facts}


def unconditional(result) -> dict:
    return {f.id: f for f in result.findings if not f.assumes}


def blank_nccl(image):
    return facts.NCCL.blank(image, None, None)[0]


@cache
def _rule_facts() -> tuple[dict, dict]:
    reads: dict = {}
    requires: dict = {}
    for family in FAMILIES:
        reads.update(reads_of(family))
        requires.update(requires_of(family))
    return reads, requires


def _with_nccl_bases(matrix):
    """The bases whose image has NCCL (known or present with its version unknown): blanking it hides something."""
    for name, image, node_, job in bases():
        if facts.NCCL.state(Ctx(image, node_, matrix, job)) in (facts.State.KNOWN, facts.State.PARTIAL):
            yield name, image, node_, job


def _as_present(image, node_, job, finding):
    """The base with every component the conditional finding assumed made present with details unknown: NCCL by
    its vague change on the real copies, a component that was unknown in the base by the engine's own hypothesis."""
    i, n, j = facts.NCCL.vague(image, node_, job)
    for fact in facts.PRESENCE:
        if fact.name != NCCL and fact.name in finding.assumed_facts:
            i, n, j = fact.present(i, n, j)
    return i, n, j


# ---------- properties over the bases ----------


def test_every_conditional_finding_fires_when_nccl_is_present_vague(matrix):
    checked = 0
    wrong = []
    for name, image, node_, job in _with_nccl_bases(matrix):
        result = evaluate(blank_nccl(image), node_, matrix, job=job)
        for rule, found in conditional(result).items():
            assert found.severity in ("error", "warning") and found.assumes[0].startswith("the image ships NCCL")
            vague = evaluate(*_as_present(image, node_, job, found)[:2], matrix, job=job)
            checked += 1
            # with NCCL really there (version unknown) the rule says the same without assuming its presence; it may
            # still assume what the vague copy leaves open (the version range its mechanism holds for)
            if rule not in {f.id for f in vague.findings if NCCL not in f.assumed_facts}:
                wrong.append(f"{name}: {rule}")
    assert wrong == []
    assert checked > 0  # the bases do produce conditional findings


def test_no_conditional_finding_when_nccl_is_absent(matrix):
    _reads, requires = _rule_facts()
    for name, image, node_, job in _with_nccl_bases(matrix):
        blank = evaluate(blank_nccl(image), node_, matrix, job=job)
        absent = evaluate(dataclasses.replace(image, nccl=()), node_, matrix, job=job)  # looked, found none
        assert conditional(absent) == {}, name
        for rule in conditional(blank):
            if facts.NCCL in requires.get(rule, ()):
                assert rule not in {f.id for f in absent.findings}, f"{name}: {rule}"


def test_no_conditional_finding_rests_on_an_unknown_node_fact(matrix):
    """Blanking a node fact a conditional finding's rule reads: the hypothesis never decides what the facts do not
    (the rule either asks, or decides the same way with NCCL present)."""
    reads, _requires = _rule_facts()
    wrong = []
    for name, image, node_, job in _with_nccl_bases(matrix):
        found = conditional(evaluate(blank_nccl(image), node_, matrix, job=job))
        for rule, finding in found.items():
            for fact in reads.get(rule, ()):
                if not fact.name.startswith("node."):
                    continue
                i, n, j = fact.blank(blank_nccl(image), node_, job)
                again = conditional(evaluate(i, n, matrix, job=j))
                if rule in again:
                    vi, vn, vj = fact.blank(*_as_present(image, node_, job, finding))
                    if rule not in unconditional(evaluate(vi, vn, matrix, job=vj)):
                        wrong.append(f"{name}: {rule} with {fact.name} blank")
    assert wrong == []


def test_a_conditional_finding_never_makes_the_verdict(matrix):
    for _name, image, node_, job in _with_nccl_bases(matrix):
        blank = blank_nccl(image)
        report = build_report(blank, [node_], matrix, jobs=(job,) if job else (), generated_at="x")
        facts_only = [f for f in report.findings if not f.assumes]
        if not facts_only:
            assert report.verdict == "ok"
        if any(f.assumes for f in report.findings):
            assert report.outcome in ("incomplete", "fail", "warn")
            assert any(NCCL in u.gated_by for u in report.unknowns)


# ---------- the rules the held-out judgement named, on real specs and committed node facts ----------


def test_socket_ifname_decided_on_the_interfaces_whatever_nccl_is_read(matrix):
    """oci-volcano's MPI worker (hostNetwork, mpirun -x NCCL_SOCKET_IFNAME=eth0) on a node with no eth0."""
    job = spec_job("oci-volcano-BM.GPU.H100.8-nccl-test.yaml", "mpiworker")
    ib = cond_node("inbox-5.10-open-535-ib")
    image = with_nccl(committed_facts("bookworm"), "2.21.5")
    rule = "ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE"
    known = evaluate(image, ib, matrix, job=job)
    assert unconditional(known)[rule].severity == "error"
    unread = evaluate(blank_nccl(image), ib, matrix, job=job)
    found = conditional(unread)[rule]
    assert found.severity == "error" and found.title == unconditional(known)[rule].title
    # the launch's NCCL_* settings are named as the evidence of use, and said not to be a fact about the image
    assert "the job sets NCCL_CROSS_NIC" in found.assumes[0] and "not of what the image holds" in found.assumes[0]
    assert found.mechanism.startswith("If the image ships NCCL (not read:")
    u = next(u for u in unread.unknowns if u.rule == rule)
    assert u.gated_by == (NCCL,) and "conditional finding" in u.reason
    # absent stays absent: the Debian image without NCCL gets nothing for this rule
    assert rule not in {f.id for f in evaluate(committed_facts("bookworm"), ib, matrix, job=job).findings}
    # the interfaces not read: no conditional claim, the question is asked
    no_ifaces = dataclasses.replace(ib, net_interfaces=None, unknown={"net_interfaces": "not probed"})
    blind = evaluate(blank_nccl(image), no_ifaces, matrix, job=job)
    assert rule not in conditional(blind)
    assert "not probed" in next(u for u in blind.unknowns if u.rule == rule).reason


def test_socket_ifname_under_enroot_is_conditional_on_nccl(matrix):
    """contrastive-learning-eval-slurm.sh: Pyxis/enroot (the host's network namespace), NCCL_SOCKET_IFNAME=bond."""
    job = spec_job("contrastive-learning-eval-slurm.sh")
    image = blank_nccl(with_nccl(committed_facts("bookworm"), "2.21.5"))
    found = conditional(evaluate(image, cond_node("inbox-5.10-open-535-ib"), matrix, job=job))
    assert "ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE" in found


def test_devices_not_exposed_on_a_docker_launch_without_devices(matrix):
    """ray-aws-example-gpu-docker.yaml: docker, no --device, not privileged, on an InfiniBand node."""
    rule = "JOB-RDMA-DEVICES-NOT-EXPOSED"
    job = spec_job("ray-aws-example-gpu-docker.yaml", "worker")
    image = with_nccl(committed_facts("bookworm"), "2.21.5")
    ib = node("inbox-6.8-open-570")
    assert unconditional(evaluate(image, ib, matrix, job=job))[rule].severity == "warning"
    # NCCL unknown does not make it conditional: the image's other verbs user (Debian's libucx0 over libibverbs)
    # needs the devices too, so the launch is decided without NCCL (catalog rdma_consumers)
    assert rule in unconditional(evaluate(blank_nccl(image), ib, matrix, job=job))
    # the same launch written as a facts file (no `resources`: docker has none) decides too
    doc = {"runtime": "docker", "kind": "docker run", "devices": [], "privileged": False, "host_network": True}
    from_file = evaluate(image, ib, matrix, job=parse_job_facts(doc, "launch.json"))
    assert rule in unconditional(from_file)
    assert rule not in {u.rule for u in from_file.unknowns}
    exposed = parse_job_facts({**doc, "devices": ["/dev/infiniband"]}, "launch.json")
    assert rule not in {f.id for f in evaluate(image, ib, matrix, job=exposed).findings}


def test_dmabuf_on_a_kernel_before_5_12_asks_only_for_nccls_version(matrix):
    """Kernel 5.10 (inbox) cannot register dma-buf memory whatever NCCL is; only NCCL's version decides whether it
    tries (and fails or falls back)."""
    old = cond_node("inbox-5.10-open-535-ib")
    image = with_nccl(committed_facts("bookworm"), "2.21.5")
    vague = facts.NCCL.vague(image, old, None)[0]
    u = next(u for u in evaluate(vague, old, matrix).unknowns if u.rule == "DMABUF-UNSUPPORTED")
    assert "5.12" in u.reason and "depends on its version" in u.reason
    assert "DMABUF-UNSUPPORTED" in unconditional(evaluate(image, old, matrix))  # version known: decided
    # a kernel that can (6.8, open modules, rdma-core with ibv_reg_dmabuf_mr): decided without the version
    new = node("inbox-6.8-open-570")
    assert "DMABUF-UNSUPPORTED" not in {u.rule for u in evaluate(vague, new, matrix).unknowns}


def test_dmabuf_kernel_rules_out_gpudirect_for_an_unread_cuda_image(matrix):
    """The real Debian image (libibverbs, no NCCL) whose CUDA could not be read, on the 5.10 node: if it is a CUDA
    image there is no GPUDirect RDMA path (inbox: no peer memory; 5.10: no dma-buf registration)."""
    image = facts.CUDA.blank(committed_facts("bookworm"), None, None)[0]
    result = evaluate(image, cond_node("inbox-5.10-open-535-ib"), matrix)
    found = conditional(result, facts.CUDA.name)["NODE-DMABUF-UNAVAILABLE"]
    assert "5.12" in found.mechanism and found.assumes[0].startswith("the image ships a CUDA runtime")
    assert "NODE-DMABUF-UNAVAILABLE" not in conditional(
        evaluate(image, node("inbox-6.8-open-570"), matrix), "image.cuda"
    )


# ---------- the report ----------


@pytest.fixture(scope="module")
def unread_report(matrix):
    job = spec_job("contrastive-learning-eval-slurm.sh")  # enroot, NCCL_SOCKET_IFNAME=bond
    # the Env an nvidia/cuda-based image sets, so enroot's NVIDIA hook injects the driver (JOB-ENROOT-NO-GPU-DRIVER)
    gpu_env = {"NVIDIA_VISIBLE_DEVICES": "all", "NVIDIA_DRIVER_CAPABILITIES": "compute,utility"}
    image = blank_nccl(with_nccl(committed_facts("bookworm"), "2.21.5", env=gpu_env))
    return build_report(image, [cond_node("inbox-5.10-open-535-ib")], matrix, jobs=(job,), generated_at="x")


def test_report_keeps_verdict_and_exit_codes(unread_report):
    from imgcheck.cli.check_cmd import exit_code

    r = unread_report
    assert any(f.assumes and f.severity == "error" for f in r.findings)
    assert not any(f.severity == "error" and not f.assumes for f in r.findings)
    assert (r.verdict, r.outcome) == ("warn", "incomplete")  # the warning holds on the facts (NODE-DMABUF-...)
    assert exit_code(r, "error") == 0  # a hypothesis fails nothing
    assert exit_code(r, "unknown") == 4  # the presence question could decide an error
    ranks = [bool(f.assumes) for f in r.findings]
    assert ranks == sorted(ranks)  # conditional findings after every unconditional one


def test_presence_questions_are_grouped_with_their_rule_counts(unread_report):
    groups = question_groups(unread_report.unknowns)
    nccl = next(g for g in groups if g.question == facts.NCCL.question)
    assert nccl.presence and len(nccl.rules) >= 10 and nccl.error_rules
    assert "ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE" in nccl.rules
    assert groups.index(nccl) == 0 or len(groups[0].error_rules) >= len(nccl.error_rules)  # ranked by error rules
    assert [g.question for g in unread_report.questions] == [g.question for g in groups]


def test_every_format_shows_the_condition(unread_report):
    from imgcheck.formats.report_formats import render

    table = render(unread_report, "table")
    assert "ERROR (conditional) ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE" in table
    assert "only if the image ships NCCL (not read:" in table
    assert table.count(f"? {facts.NCCL.question} decides") == 1  # the presence question once, not per rule
    md = render(unread_report, "markdown")
    assert (
        "**Conditional:** only if the image ships NCCL" in md and "0 errors, 1 warning, 2 conditional" in md
    )  # + GDR-PEERMEM-MISSING: DMA-BUF is out for every NCCL on kernel 5.10
    doc = json.loads(render(unread_report, "json"))
    assert doc["schema_version"] == 5
    found = next(f for f in doc["findings"] if f["id"] == "ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE")
    assert found["assumed_facts"] == [NCCL] and found["assumes"][0].startswith("the image ships NCCL")
    gated = [u for u in doc["unknowns"] if u["gated_by"] == [NCCL]]
    assert len(gated) >= 10  # per-rule detail stays in JSON
    assert doc["questions"][0]["rules"] and "error_rules" in doc["questions"][0]
    sarif = json.loads(render(unread_report, "sarif"))
    result = next(r for r in sarif["runs"][0]["results"] if r["ruleId"] == "ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE")
    assert result["level"] == "note" and result["properties"]["assumes"]
    assert result["message"]["text"].startswith("If the image ships NCCL")
    junit = render(unread_report, "junit")
    assert 'type="error:ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE"' not in junit  # no failure on a hypothesis
    assert "only if: the image ships NCCL" in junit
    assert 'type="undecided:ENV-NCCL-SOCKET-IFNAME-NO-INTERFACE"' in render(unread_report, "junit", fail_on="unknown")
