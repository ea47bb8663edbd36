"""nvidia_uvm and /dev/nvidia-uvm, and nvidia-peermem configured but not loaded: probed from fixture roots laid out as
the hosts lay them out (/sys/module/<name>/, /dev nodes, /etc/modules-load.d, /etc/modprobe.d), judged by the
node-only rules NODE-NVIDIA-UVM-MISSING and NODE-PEERMEM-CONFIGURED-NOT-LOADED."""

from __future__ import annotations

import os
import shutil

import pytest
from engine_facts import matrix

from imgcheck.engine.evaluate import evaluate_node
from imgcheck.engine.node_only import NODE_ONLY_IMAGE
from imgcheck.node.probe import probe

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
UVM, PEER = "NODE-NVIDIA-UVM-MISSING", "NODE-PEERMEM-CONFIGURED-NOT-LOADED"


def _copy(tmp_path, name):
    dest = tmp_path / name
    shutil.copytree(os.path.join(FIXTURES, name), dest, symlinks=True)
    return dest


def _check(facts):
    result = evaluate_node(NODE_ONLY_IMAGE, facts, matrix())
    return {f.id: f for f in result.findings}, {u.rule: u.reason for u in result.unknowns}


@pytest.mark.parametrize("name", ["inbox-ubuntu2204", "mlnx-ofed-23.10-ubuntu2204", "doca-24.10-ubuntu2404"])
def test_a_healthy_node_says_nothing(name):
    facts = probe(os.path.join(FIXTURES, name))
    assert (facts.gpu.uvm_loaded, facts.gpu.uvm_device) == (True, True)
    found, unknown = _check(facts)
    assert UVM not in found and UVM not in unknown and PEER not in found and PEER not in unknown


def test_uvm_not_loaded_and_no_device(tmp_path):
    root = _copy(tmp_path, "inbox-ubuntu2204")
    shutil.rmtree(root / "sys/module/nvidia_uvm")
    os.unlink(root / "dev/nvidia-uvm")
    facts = probe(str(root))
    assert (facts.gpu.uvm_loaded, facts.gpu.uvm_device) == (False, False)
    found, _ = _check(facts)
    assert "nvidia_uvm module is not loaded" in found[UVM].title and "/dev/nvidia-uvm" in found[UVM].title


def test_uvm_unreadable_is_unknown(tmp_path):
    root = _copy(tmp_path, "inbox-ubuntu2204")
    shutil.rmtree(root / "dev")  # the probe pod did not mount the host's /dev
    facts = probe(str(root))
    assert facts.gpu.uvm_device is None and "/dev is not visible" in facts.unknown["gpu.uvm_device"]
    found, unknown = _check(facts)
    assert UVM not in found and "/dev is not visible" in unknown[UVM]


def test_peermem_configured_but_not_loaded():
    facts = probe(os.path.join(FIXTURES, "ofed-upgrade-stale-peermem"))
    assert facts.gpu.peermem_configured == ("/etc/modules-load.d/nvidia-peermem.conf: nvidia-peermem",)
    assert facts.gpu.peermem.loaded is False
    found, _ = _check(facts)
    assert "/etc/modules-load.d/nvidia-peermem.conf" in found[PEER].mechanism
    assert "NODE-PEERMEM-STALE-BUILD" in found  # the reason it failed is named by its own rule


def test_modprobe_softdep_counts_and_loaded_is_quiet(tmp_path):
    root = _copy(tmp_path, "inbox-ubuntu2204")
    os.makedirs(root / "etc/modprobe.d", exist_ok=True)
    (root / "etc/modprobe.d/nvidia-peermem.conf").write_text("# GPUDirect\nsoftdep nvidia post: nvidia-peermem\n")
    facts = probe(str(root))
    assert facts.gpu.peermem_configured == ("/etc/modprobe.d/nvidia-peermem.conf: softdep nvidia post: nvidia-peermem",)
    found, _ = _check(facts)
    assert PEER in found
    loaded = probe(os.path.join(FIXTURES, "doca-24.10-ubuntu2404"))  # nvidia_peermem loaded there
    assert PEER not in _check(loaded)[0]


def test_etc_not_visible_is_unknown(tmp_path):
    root = _copy(tmp_path, "ofed-upgrade-stale-peermem")
    shutil.rmtree(root / "etc")
    facts = probe(str(root), name="n1")
    assert facts.gpu.peermem_configured is None
    _, unknown = _check(facts)
    assert "/etc is not visible" in unknown[PEER]
