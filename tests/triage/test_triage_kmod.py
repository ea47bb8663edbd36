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
    # without node facts: the step the line names (0x62, GSP firmware init from 525), whose fix is the flavour
    assert d.causes[0].id == "gsp-firmware-init-failed" and "Blackwell" in d.causes[0].text


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


def test_the_gsp_cause_matches_exactly_the_firmware_steps_of_every_release():
    """The cause's line condition names the RM_INIT_* codes generated from every open-gpu-kernel-modules tag
    (nvidia_rm_init_status): every code of the GSP firmware step in any release, and no code of another step."""
    import re

    from imgcheck.knowledge import shipped

    data = json.load(open(os.path.join(HERE, "..", "..", "src", "imgcheck", "data", "triage", "host_messages.json")))
    entry = next(m for m in data["messages"] if m["id"] == "NVRM-RMINITADAPTER-FAILED")
    cause = next(c for c in entry["causes"] if c["id"] == "gsp-firmware-init-failed")
    pattern = re.compile(cause["when"][0].removeprefix("line~"))
    rows = shipped().rows("nvidia_rm_init_status")
    assert rows
    for row in rows:
        line = f"NVRM: GPU 0000:01:00.0: RmInitAdapter failed! ({row['code']}:0x56:1689)"
        assert bool(pattern.search(line)) == (row["step_class"] == "gsp-firmware"), row["key"]


def test_an_open_module_gsp_init_failure_on_turing_names_the_gsp_step():
    # open-gpu-kernel-modules#116 (now in-sample): RTX 2060 under the open 515.43.04 module, 0x63 = FIRMWARE_INIT there
    d = first(triage([os.path.join(HERE, "logs", "ogkm-116-open-module-gsp-init.log")]))
    assert d.signature.endswith("NVRM-RMINITADAPTER-FAILED")
    assert d.causes[0].id == "gsp-firmware-init-failed"
