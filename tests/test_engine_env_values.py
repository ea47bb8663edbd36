"""NCCL_ALGO / NCCL_PROTO grammar per release (engine/env_values.py) against the generated nccl_env_grammar catalog,
on real launch settings (tests/data/nccl_env/README.md names each URL)."""

from __future__ import annotations

import os
import re

import pytest
from engine_facts import matrix, node, run
from test_engine_env_nccl_params import IB_NODE, image, script_env

from imgcheck.engine import env_values

RULE = env_values.RULE
DATA = os.path.join(os.path.dirname(__file__), "data", "nccl_env")
_PY_ENV = re.compile(r'^os\.environ\["([A-Z_0-9]+)"\] = "(.*)"$')


def python_env(name: str) -> dict[str, str]:
    """The `os.environ["NAME"] = "value"` lines of a real Python source excerpt."""
    with open(os.path.join(DATA, name)) as f:
        return dict(m.groups() for line in f if (m := _PY_ENV.match(line.strip())))


def grammar(version: str | None, env: dict[str, str]):
    result = run(image(version, env), node(IB_NODE))
    return [f for f in result.findings if f.id == RULE], [u for u in result.unknowns if u.rule == RULE]


def rows():
    return list(matrix().rows("nccl_env_grammar"))


def test_catalog_is_generated_from_the_release_tags():
    got = rows()
    assert [r["per_collective"] for r in got][-1] == 1
    per = [r for r in got if r["per_collective"]]
    assert per[0]["first"] == "2.24.3"  # parseList gained its prefix table in 2.24.3
    assert {"AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce"} <= set(per[0]["functions"])
    assert per[0]["unknown_prefix"] == "ncclInvalidUsage" and per[0]["prefix_after_first"] == 1
    # the fallbacks when nothing is left enabled: Ring+Tree without CollNet from 2.8.3, Ring per collective 2.19.1
    assert [r["first"] for r in got if r["all_off_ring"]] == ["2.19.1"]
    assert all(r["source"][0].startswith("NVIDIA/nccl@v") and r["confidence"] == "verified" for r in got)


def test_vllm_batch_invariant_settings_on_an_nccl_without_per_collective_selection():
    env = python_env("vllm_batch_invariant.py.txt")
    assert env["NCCL_ALGO"] == "allreduce:tree"
    found, _ = grammar("2.21.5", env)  # the NCCL of torch 2.5 wheels
    (f,) = found
    assert f.evidence[0].fact == "image.env.NCCL_ALGO"
    assert f.severity == "warning"  # Ring and Tree come back (no CollNet) or Ring alone: nothing is pinned
    assert "Ring" in f.mechanism and "not pinned" in f.mechanism
    # NCCL_PROTO=Simple is a plain list: read the same by every release
    assert not [x for x in found if x.evidence[0].fact == "image.env.NCCL_PROTO"]


def test_vllm_batch_invariant_settings_on_an_nccl_that_reads_them():
    found, unknowns = grammar("2.26.2", python_env("vllm_batch_invariant.py.txt"))
    assert found == [] and unknowns == []


def test_version_unknown_asks_for_it():
    found, unknowns = grammar(None, python_env("vllm_batch_invariant.py.txt"))
    assert found == []
    assert unknowns and "2.24.3" in unknowns[0].reason


def test_plain_lists_are_decided_on_every_release():
    env = script_env("flagperf_gs40_main.sh")
    assert env["NCCL_ALGO"] == "Ring" and env["NCCL_PROTO"] == "LL128"
    for version in ("2.7.8", "2.18.3", "2.21.5", "2.26.2", None):
        assert grammar(version, env) == ([], [])


@pytest.mark.parametrize("row", rows(), ids=lambda r: r["id"])
def test_each_release_range_reads_the_per_collective_form_as_its_source_says(row):
    found, _ = grammar(row["first"], {"NCCL_ALGO": "allreduce:tree"})
    if row["per_collective"]:
        assert found == []
        (bad,) = grammar(row["first"], {"NCCL_ALGO": "all_reduce:tree"})[0]
        assert bad.severity == "error" and "all_reduce" in bad.predicted_error
        (order,) = grammar(row["first"], {"NCCL_PROTO": "LL128;Simple"})[0]
        assert order.severity == "error" and "must have a prefix" in order.predicted_error
    else:
        (f,) = found
        # no fallback in the release: the first collective fails; otherwise NCCL chooses for itself
        fails = not row["all_off_ring_tree"] and not row["all_off_ring"]
        assert (f.severity == "error") is fails
        (kept,) = grammar(row["first"], {"NCCL_ALGO": "Ring,allreduce:tree"})[0]
        assert kept.severity == "warning" and "Ring" in kept.title + kept.mechanism
        (excl,) = grammar(row["first"], {"NCCL_PROTO": "^LL128;allreduce:LL128"})[0]
        assert "exclusion does not happen" in excl.title


def test_protocol_list_with_nothing_known_before_the_ring_fallback_fails():
    (f,) = grammar("2.18.3", {"NCCL_PROTO": "allreduce:simple"})[0]
    assert f.severity == "error" and "no algorithm/protocol available" in f.predicted_error
    (g,) = grammar("2.18.3", {"NCCL_ALGO": "allreduce:tree"})[0]
    assert g.severity == "warning"  # Ring and Tree come back when the communicator has no CollNet


def test_entries_split_as_parse_list_does():
    got = env_values.entries("ring,collnetdirect;allreduce:tree,collnetdirect;broadcast:^ring")
    assert [(e.prefix, e.exclude, e.words) for e in got] == [
        (None, False, ("ring", "collnetdirect")),
        ("allreduce", False, ("tree", "collnetdirect")),
        ("broadcast", True, ("ring",)),
    ]
