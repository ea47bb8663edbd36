"""The first affected release of the fix rows traced from their fixing hunks (issue 32, tools/nccl/gen_first_affected.py).

Data-driven over catalogs/nccl_fix_ranges.json: every first_affected is a release NCCL published and precedes the
fixing one; every row the generator traces carries it with how it was tied (derived or hypothesis); with the NCCL
mirror present the generator reproduces the catalog. End to end: a traced start decides where a null one asked.
"""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest
from engine_facts import committed_facts, matrix, node, replace_in, run, with_nccl

from imgcheck.model.node import Gpu
from imgcheck.versions import ranges

TOOLS = os.path.join(os.path.dirname(__file__), "..", "tools", "nccl")
MIRROR = os.environ.get("NCCL_MIRROR", "/work/.mirror/NVIDIA+nccl/repo")
FIXES = {r["entry"]: r for r in matrix().rows("nccl_fix_ranges")}
NOTES = {r["entry"]: r for r in matrix().rows("nccl_release_notes")}
RELEASES = {r["release"] for r in NOTES.values()}


def _generator():
    sys.path.insert(0, TOOLS)
    try:
        spec = importlib.util.spec_from_file_location(
            "gen_first_affected", os.path.join(TOOLS, "gen_first_affected.py")
        )
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its frozen dataclass looks its module up while the class is made
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(TOOLS)
    return module


GEN = _generator()


@pytest.mark.parametrize("entry", sorted(e for e, r in FIXES.items() if r["first_affected"]))
def test_first_affected_is_a_release_before_the_fix(entry):
    row = FIXES[entry]
    # 2.0-2.2 were never published as source: the oldest release the rows can start at is the mirror's first
    assert row["first_affected"] in RELEASES | {"2.3.5"}, row["first_affected"]
    assert ranges.below(row["first_affected"], NOTES[entry]["release"]) is True
    assert row.get("first_affected_confidence") in (None, "derived", "hypothesis")


@pytest.mark.parametrize("probe", GEN.PROBES, ids=lambda p: p.entry)
def test_every_traced_row_names_its_tag_file_and_tie(probe):
    row = FIXES[probe.entry]
    assert row["first_affected"] and row["first_affected_confidence"] == probe.confidence
    assert f"v{row['first_affected']}-" in row["first_affected_source"] and probe.path in row["first_affected_source"]


@pytest.mark.parametrize("probe", GEN.UNRELEASED, ids=lambda p: p.entry)
def test_a_fix_of_code_no_release_had_is_never_released(probe):
    row = FIXES[probe.entry]
    assert row["first_affected"] is None and row["phase"] == "never-released" and row["first_affected_source"]


def test_every_untraced_failure_fix_says_what_was_tried():
    for row in FIXES.values():
        failure = row["phase"] not in ("build", "never-released") and row.get("symptom") != "performance"
        if row["first_affected"] is None and failure:
            assert row["first_affected_source"].startswith("not ") or "no release" in row["first_affected_source"]


@pytest.mark.skipif(not os.path.isdir(MIRROR), reason=f"no NVIDIA/nccl mirror at {MIRROR} (fetch github:NVIDIA/nccl)")
def test_the_generator_reproduces_the_catalog(monkeypatch, capsys):
    monkeypatch.setenv("NCCL_MIRROR", MIRROR)
    assert GEN.main(["gen_first_affected.py"]) == 0, capsys.readouterr().out


def _later_fix_texts(version: str) -> str:
    gpus = tuple(Gpu(index=i, name="NVIDIA H100 80GB HBM3") for i in range(8))
    h100 = replace_in(node("mofed-23.10-open-550-peermem"), "gpu.gpus", gpus)
    result = run(with_nccl(committed_facts("bookworm"), version), h100)
    return " ".join(
        [u.reason for u in result.unknowns if u.rule == "NCCL-RELEASE-LATER-FIX"]
        + [f.mechanism for f in result.findings if f.id == "NCCL-RELEASE-LATER-FIX"]
    )


def test_a_traced_start_leaves_out_the_releases_before_it():
    # the NUMA id -1 crash (fixed in 2.23.4) is in the topology id macro first shipped in 2.21.5: 2.22.3 is asked about
    # it, 2.20.5 predates the code and is not
    assert "NUMA IDs are equal to -1" in _later_fix_texts("2.22.3")
    assert "NUMA IDs are equal to -1" not in _later_fix_texts("2.20.5")
