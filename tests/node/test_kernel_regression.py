"""CmaTotal from /proc/meminfo and NODE-KERNEL-PINNING-REGRESSION (catalog kernel_pinning_regressions, keyed by the
exact release): a fixture root copied and given the release and meminfo of the reported DGX Spark node."""

from __future__ import annotations

import os
import shutil

from engine_facts import matrix

from imgcheck.engine.evaluate import evaluate_node
from imgcheck.engine.node_only import NODE_ONLY_IMAGE
from imgcheck.node.probe import probe

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
RULE = "NODE-KERNEL-PINNING-REGRESSION"
# /proc/meminfo's layout (fs/proc/meminfo.c); CmaTotal 0 kB as the reporter's node showed it
MEMINFO = "MemTotal:       127535988 kB\nMemFree:        98765432 kB\nCmaTotal:              0 kB\nCmaFree:               0 kB\n"


def _root(tmp_path, release: str, meminfo: str | None):
    root = tmp_path / "node"
    shutil.copytree(os.path.join(FIXTURES, "inbox-ubuntu2404-open"), root, symlinks=True)
    (root / "proc/sys/kernel/osrelease").write_text(release + "\n")
    if meminfo is not None:
        (root / "proc/meminfo").write_text(meminfo)
    return str(root)


def _check(facts):
    result = evaluate_node(NODE_ONLY_IMAGE, facts, matrix())
    return [f for f in result.findings if f.id == RULE], [u for u in result.unknowns if u.rule == RULE]


def test_the_catalogued_release_fails_with_its_source(tmp_path):
    facts = probe(_root(tmp_path, "7.0.0-1019-nvidia", MEMINFO))
    assert facts.kernel.cma_total_kib == 0
    (f,), _ = _check(facts)
    assert f.severity == "error" and "7.0.0-1019-nvidia" in f.title
    assert "6.17.0-1031-nvidia" in f.fixes[0] and "luxingcom/aicad-nccl-optimization/issues/1" in f.mechanism
    assert {e.fact for e in f.evidence} >= {"node.kernel.release", "node.kernel.cma_total_kib"}


def test_other_releases_are_not_judged(tmp_path):
    facts = probe(
        _root(tmp_path, "6.17.0-1031-nvidia", MEMINFO.replace("CmaTotal:              0", "CmaTotal:         65536"))
    )
    assert facts.kernel.cma_total_kib == 65536
    assert _check(facts) == ([], [])


def test_no_cma_line_is_unknown_fact(tmp_path):
    facts = probe(_root(tmp_path, "6.8.0-45-generic", "MemTotal:       127535988 kB\n"))
    assert facts.kernel.cma_total_kib is None and "CONFIG_CMA" in facts.unknown["kernel.cma_total_kib"]
