"""RmInitAdapter failures joined with the node's kernel-module flavour (node.kmod_flavour_unsupported).

The log is Start9Labs/start-technologies#3693's (GB10 under the proprietary 580.173.02 module); the node facts
are that PR's DGX Spark as it describes it (tests/triage/nodes/dgx-spark-gb10-proprietary-580.json)."""

from __future__ import annotations

import json
import os

from imgcheck.triage import triage

HERE = os.path.dirname(os.path.abspath(__file__))
LOG = os.path.join(HERE, "logs", "start9-3693-gb10-proprietary-module-rminitadapter.log")
NODE = os.path.join(HERE, "nodes", "dgx-spark-gb10-proprietary-580.json")


def first(report):
    return report.diagnoses[0]


def test_the_init_failure_is_the_first_failure_not_the_xid_it_logged():
    d = first(triage([LOG]))
    assert d.signature.endswith("NVRM-RMINITADAPTER-FAILED")
    assert d.causes[0].id == "kmod-flavour-or-branch-vs-gpu"


def test_node_facts_confirm_the_flavour(tmp_path):
    d = first(triage([LOG], node_facts=NODE))
    assert d.causes[0].id == "kmod-flavour-or-branch-vs-gpu" and d.causes[0].status == "supported"


def test_a_flavour_that_drives_the_gpu_moves_the_flavour_cause_last(tmp_path):
    facts = json.load(open(NODE))
    facts["gpu"]["kernel_module"] = "open"
    path = tmp_path / "open.json"
    path.write_text(json.dumps(facts))
    d = first(triage([LOG], node_facts=str(path)))
    flavour = next(c for c in d.causes if c.id == "kmod-flavour-or-branch-vs-gpu")
    assert flavour.status == "unlikely" and d.causes[0].id != flavour.id
