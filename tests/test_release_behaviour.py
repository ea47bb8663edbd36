"""Release behaviour changes, not defects (issue #32): the catalog release_behaviour_changes.json is what its
generator makes of the parameter catalogs and the curated notes, and RELEASE-BEHAVIOUR-CHANGE decides each row with
`matters` over the catalog: inside the release window a finding naming the change, its consequence and the restoring
setting; an info finding when the image pins that setting; nothing before the change or from fixed_in on; an
unknown naming the fact when the derived state is not known. Built from the committed facts of a real Debian image
and the committed node facts (an H100 node with driver 550, whose CUDA 12.4 turns NCCL's cuMem auto-detection on)."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os

import pytest
from engine_facts import committed_facts, matrix, node, run, with_nccl

from imgcheck.engine import release_behaviour
from imgcheck.model.image import Package

RULE = "RELEASE-BEHAVIOUR-CHANGE"
H100 = "mofed-23.10-open-550-peermem"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROWS = list(matrix().rows("release_behaviour_changes"))
DECIDED = [r for r in ROWS if r.get("matters") and r["component"] == "nccl"]


def _generator():
    path = os.path.join(ROOT, "tools", "upstreams", "gen_behaviour_changes.py")
    spec = importlib.util.spec_from_file_location("gen_behaviour_changes", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_catalog_is_what_the_generator_makes():
    gen = _generator()
    with open(gen.OUT) as f:
        committed = json.load(f)
    assert gen.build() == committed, "re-run python tools/upstreams/gen_behaviour_changes.py"


def test_every_generated_row_is_a_default_step_of_its_parameter_catalog():
    params = {
        "nccl": {r["name"]: r for r in matrix().rows("nccl_params")},
        "ucx": {r["name"]: r for r in matrix().rows("ucx_params")},
    }
    generated = [r for r in ROWS if r["origin"] == "generated"]
    assert len(generated) > 100  # the whole family, not a sample
    for row in generated:
        history = params[row["component"]][row["parameter"]]["default_history"]
        steps = [s.partition(": ") for s in history]
        pairs = {(new[0], old[2].strip(), new[2].strip()) for old, new in zip(steps, steps[1:], strict=False)}
        assert (row["release"], row["old"], row["new"]) in pairs, row["id"]


def test_declaration_moves_are_not_behaviour_changes():
    gen = _generator()
    assert gen.nccl_value("128 * 1024") == gen.nccl_value("128*1024") == 131072
    assert gen.nccl_value("NCCL_CONFIG_UNDEF_INT") is None
    assert gen.ucx_value("n") == gen.ucx_value("no") == gen.ucx_value("off")
    assert gen.ucx_value("(not a literal)") is None
    ids = {r["id"] for r in ROWS}
    assert "nccl:NCCL_DEBUG@2.30.7" not in ids  # None -> NCCL_LOG_NONE: the declaration moved
    assert {"nccl:NCCL_CUMEM_ENABLE@2.19.1", "nccl:NCCL_IB_TIMEOUT@2.23.4", "ucx:UCX_PROTO_ENABLE@1.16.0"} <= ids


def test_rows_that_matter_name_conditions_and_settings_the_rule_reads():
    assert DECIDED, "no row is decided by the engine"
    kinds = {release_behaviour.DERIVED, release_behaviour.WORKLOAD}
    for row in DECIDED:
        assert {c.partition(":")[0] for c in row["matters"]} <= kinds, row["id"]
        name = row["restore"].partition("=")[0]
        assert name in release_behaviour.RESTORE_SETTINGS, row["id"]


def _image(version, env=None, packages=()):
    facts = with_nccl(committed_facts("bookworm"), version, env=env)
    return dataclasses.replace(facts, packages=facts.packages + tuple(packages))


def _found(result):
    return [f for f in result.findings if f.id == RULE]


@pytest.mark.parametrize("row", DECIDED, ids=lambda r: r["id"])
def test_inside_the_window_the_change_is_named_with_its_consequence_and_restoring_setting(row):
    found = _found(run(_image(row["release"]), node(H100)))
    assert len(found) == 1
    f = found[0]
    assert row["parameter"] in f.title and row["restore"] in " ".join(f.fixes)
    assert row["consequence"].split(":")[0] in f.mechanism
    workload = [c for c in row["matters"] if c.startswith(release_behaviour.WORKLOAD)]
    assert bool(f.assumes) == bool(workload)  # a trigger only the program decides stays conditional
    # with no program of the image known to pull the trigger it is information, not a warning
    assert f.severity == ("info" if workload else "warning")


@pytest.mark.parametrize("row", DECIDED, ids=lambda r: r["id"])
def test_before_the_change_and_from_the_fix_nothing_is_said(row):
    older = [r for r in matrix().rows("nccl_params") if r["name"] == row["parameter"]][0]["first"]
    for version in [older, row.get("fixed_in")]:
        if version and version != row["release"]:
            result = run(_image(version), node(H100))
            assert not _found(result) and RULE not in [u.rule for u in result.unknowns], version


@pytest.mark.parametrize("row", DECIDED, ids=lambda r: r["id"])
def test_a_pinned_restore_is_reported_as_info(row):
    name, _, value = row["restore"].partition("=")
    found = _found(run(_image(row["release"], env={name: value}), node(H100)))
    assert [f.severity for f in found] == ["info"]
    assert not found[0].assumes


def test_cumem_off_on_this_node_drops_the_cumem_row():
    # NCCL_CUMEM_ENABLE=1 pins cuMem on: the change is in effect although not by default
    on = _found(run(_image("2.19.3", env={"NCCL_CUMEM_ENABLE": "1"}), node(H100)))
    assert on and "NCCL_CUMEM_ENABLE" in on[0].title
    # the driver's CUDA is unknown: whether auto turns cuMem on is not known, and the rule says which fact decides
    blank = node(H100)
    blank = dataclasses.replace(
        blank, gpu=dataclasses.replace(blank.gpu, driver_version=None, cuda_driver_version=None)
    )
    result = run(_image("2.19.3"), blank)
    assert not _found(result)
    reasons = [u for u in result.unknowns if u.rule == RULE]
    assert reasons and "node.gpu.driver_version" in reasons[0].facts


def test_a_vllm_image_is_named_as_the_graph_capturing_program():
    vllm = Package("vllm", "0.4.2", "pip", "/usr/local/lib/python3.11/dist-packages/vllm-0.4.2.dist-info/METADATA")
    f = _found(run(_image("2.19.3", packages=[vllm]), node(H100)))[0]
    assert "vllm 0.4.2" in f.mechanism
    assert any(e.collection == "image.packages" and e.item == "vllm" for e in f.evidence)


def test_triage_reads_the_same_window_for_an_out_of_memory_line():
    """The triage cause for CUDA out of memory (RANK-CRASH, NCCL-CUDA-OOM) asks nccl.cumem_default_memory, which reads
    the catalog row, not a copy of its versions."""
    from imgcheck.knowledge import nccl as nccl_k
    from imgcheck.triage.predicates import PREDICATES
    from imgcheck.triage.signatures import load_signatures

    row = next(r for r in DECIDED if r["parameter"] == "NCCL_CUMEM_ENABLE")
    m = matrix()
    assert nccl_k.in_behaviour_window(m, row["release"], "NCCL_CUMEM_ENABLE", "memory")[0] is True
    assert nccl_k.in_behaviour_window(m, row["fixed_in"], "NCCL_CUMEM_ENABLE", "memory")[0] is False
    older = [r for r in m.rows("nccl_params") if r["name"] == "NCCL_CUMEM_ENABLE"][0]["first"]
    assert nccl_k.in_behaviour_window(m, older, "NCCL_CUMEM_ENABLE", "memory")[0] is False
    assert nccl_k.in_behaviour_window(m, None, "NCCL_CUMEM_ENABLE", "memory")[0] is None
    assert "nccl.cumem_default_memory" in PREDICATES
    sigs = {s.id: s for s in load_signatures(None).signatures}
    for sid in ("RANK-CRASH", "NCCL-CUDA-OOM"):
        causes = {c.id: c for c in sigs[sid].causes}
        assert "nccl-cumem-default-graph-memory" in causes, sid


def test_vllm_from_its_override_release_restores_the_setting_itself():
    """vLLM sets NCCL_CUMEM_ENABLE=0 for its workers from 0.4.3 on (read from the wheel): the change is reported as
    already reverted, not as a memory risk; a vLLM whose version cannot be compared is named in the condition."""
    override = next(r for r in ROWS if r["kind"] == release_behaviour.OVERRIDE and r["component"] == "vllm")
    site = "/usr/local/lib/python3.10/dist-packages"
    for version in (override["release"], "0.5.3.post1"):
        vllm = Package("vllm", version, "pip", f"{site}/vllm-{version}.dist-info/METADATA")
        found = _found(run(_image("2.20.5", packages=[vllm]), node(H100)))
        assert [f.severity for f in found] == ["info"] and f"vllm {version}" in found[0].mechanism, version
    older = Package("vllm", "0.4.2", "pip", f"{site}/vllm-0.4.2.dist-info/METADATA")
    assert [f.severity for f in _found(run(_image("2.20.5", packages=[older]), node(H100)))] == ["warning"]
    odd = Package("vllm", "dev", "pip", f"{site}/vllm-dev.dist-info/METADATA")
    f = _found(run(_image("2.20.5", packages=[odd]), node(H100)))[0]
    assert f.severity == "warning" and any("vllm dev does not set" in a for a in f.assumes)


STALE = [r for r in DECIDED if r.get("pin_cost") and r.get("fixed_in")]


@pytest.mark.parametrize("row", STALE, ids=lambda r: r["id"])
def test_a_pin_kept_past_the_fix_is_named_with_what_it_costs(row):
    from engine_facts import replace_in

    name, _, value = row["restore"].partition("=")
    image = _image(row["fixed_in"], env={name: value})
    found = _found(run(image, node(H100)))
    assert [f.severity for f in found] == ["info"] and row["pin_cost"] in found[0].mechanism
    # on a node with IMEX channels (multi-node NVLink) the pin turns MNNVL off: a warning naming the channel device
    imex = replace_in(node(H100), "state.imex_channels", ("channel0",))
    found = _found(run(image, imex))
    assert [f.severity for f in found] == ["warning"] and "MNNVL" in found[0].mechanism
    assert any(e.fact == "state.imex_channels" or "imex" in e.fact for e in found[0].evidence)


def test_outside_every_window_the_rule_decides_instead_of_asking():
    """An image whose NCCL is outside every window, with packages and Env unread, gets no blanket unknown."""
    row = STALE[0]
    image = dataclasses.replace(_image(row["fixed_in"]), unknown={"packages": "not read", "env": "not read"})
    result = run(image, node(H100))
    assert not _found(result) and RULE not in [u.rule for u in result.unknowns]
