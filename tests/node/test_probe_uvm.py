"""gpu.uvm_loaded: /sys/module/nvidia_uvm as the probe sees it (issue 31: a node without it says so)."""

from __future__ import annotations

import os
import shutil

from imgcheck.node.probe import probe

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


def test_uvm_is_read_from_sys_module(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(os.path.join(FIXTURES, "inbox-ubuntu2204"), root, symlinks=True)
    facts = probe(str(root))
    assert facts.gpu.uvm_loaded is True and facts.location_of("gpu.uvm_loaded").path == "/sys/module/nvidia_uvm"
    shutil.rmtree(root / "sys" / "module" / "nvidia_uvm")
    assert probe(str(root)).gpu.uvm_loaded is False  # the driver is loaded, its unified-memory module is not
    shutil.rmtree(root / "sys" / "module")
    assert probe(str(root)).gpu.uvm_loaded is None  # /sys/module not visible: unknown, never "not loaded"
