"""The kernel-module flavour against each GPU's architecture (NODE-KMOD-FLAVOUR-UNSUPPORTED-GPU).

Hosts are the inbox-ubuntu2204 fixture root (an H100 node with the proprietary 535 module) with the files a real
host of each case has: /proc/driver/nvidia/version's first line in the layout the driver writes (open:
"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  <ver>  Release Build  (<builder>)  <date>", quoted in
NVIDIA's kernel_open README and NVIDIA/open-gpu-kernel-modules#171; the builder/date tails below are from
open-gpu-kernel-modules#543's "NVRM: loading" line), /proc/driver/nvidia/gpus/<bus>/information's Model line and
/sys/bus/pci/devices/<bus>/device. The GPUs and releases are the threads':
- negativo17/nvidia-driver#158: GeForce GT 1030, PCI ID 10de:1d01, open module 560.31 -> refused (no GSP);
- NVIDIA/open-gpu-kernel-modules#322: Tesla V100 SXM2 32GB, 10de:1db5, open module -> refused;
- getsolus/packages#5575: GeForce RTX 5090 (10de:2b85) with the proprietary 570.144 -> refused (needs open).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from node_fixtures import fixture_root

from imgcheck.engine.evaluate import evaluate_node
from imgcheck.engine.node_only import NODE_ONLY_IMAGE
from imgcheck.knowledge import shipped
from imgcheck.node.probe import probe

RULE = "NODE-KMOD-FLAVOUR-UNSUPPORTED-GPU"
OPEN = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  {v}  Release Build  (dvs-builder@U16-I2-C02-10-4)  Tue Aug  1 21:54:36 UTC 2023\n"
PROPRIETARY = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  {v}  Sun May 12 19:39:15 UTC 2024\n"


def host(tmp_path: Path, version_line: str | None, model: str | None, device: str | None) -> str:
    root = tmp_path / "host"
    shutil.copytree(fixture_root("inbox-ubuntu2204"), root, symlinks=True)
    nv = root / "proc/driver/nvidia"
    if version_line is None:
        (nv / "version").unlink()
        shutil.rmtree(nv / "gpus")
        return str(root)
    rest = (nv / "version").read_text().split("\n", 1)[1]
    (nv / "version").write_text(version_line + rest)
    for info in (nv / "gpus").glob("*/information"):
        bus = info.parent.name
        if model is not None:
            text = info.read_text()
            info.write_text(
                "\n".join(f"Model: \t\t {model}" if ln.startswith("Model:") else ln for ln in text.split("\n"))
            )
        dev = root / "sys/bus/pci/devices" / bus / "device"
        if device is None:
            dev.unlink(missing_ok=True)
        else:
            dev.write_text(device + "\n")
    return str(root)


def outcome(root: str):
    result = evaluate_node(NODE_ONLY_IMAGE, probe(root), shipped())
    found = [f for f in result.findings if f.id == RULE]
    unknown = [u for u in result.unknowns if u.rule == RULE]
    return found, unknown


def test_open_module_on_pascal_is_refused_for_want_of_gsp(tmp_path):
    found, _ = outcome(host(tmp_path, OPEN.format(v="560.31.02"), "NVIDIA GeForce GT 1030", "0x1d01"))
    assert len(found) == 1
    assert found[0].severity == "error"
    assert "GSP" in found[0].predicted_error
    assert "pascal" in found[0].mechanism
    assert any("proprietary" in fix for fix in found[0].fixes)


def test_open_module_on_volta_is_refused(tmp_path):
    found, _ = outcome(host(tmp_path, OPEN.format(v="535.54.03"), "Tesla V100-SXM2-32GB", "0x1db5"))
    assert found and "volta" in found[0].mechanism


def test_proprietary_module_on_blackwell_is_refused(tmp_path):
    found, _ = outcome(host(tmp_path, PROPRIETARY.format(v="570.144"), "NVIDIA GeForce RTX 5090", "0x2b85"))
    assert len(found) == 1
    assert "open kernel modules" in found[0].predicted_error
    assert any("open" in fix for fix in found[0].fixes)


def test_proprietary_module_on_grace_hopper_is_refused_but_not_on_h100(tmp_path):
    found, _ = outcome(host(tmp_path, PROPRIETARY.format(v="550.54.15"), "NVIDIA GH200 480GB", "0x2342"))
    assert found and "open kernel modules" in found[0].predicted_error
    found, unknown = outcome(host(tmp_path / "h100", PROPRIETARY.format(v="535.183.01"), None, "0x2330"))
    assert not found and not unknown  # the fixture itself: an H100 under the proprietary 535 module works


def test_either_flavour_drives_ampere_after_the_datacenter_only_check_went(tmp_path):
    for i, line in enumerate((OPEN.format(v="550.54.15"), PROPRIETARY.format(v="550.54.15"))):
        found, unknown = outcome(host(tmp_path / str(i), line, "NVIDIA A100-SXM4-80GB", "0x20b2"))
        assert not found and not unknown


def test_a_branch_after_the_architectures_last_refuses_it(tmp_path):
    found, _ = outcome(host(tmp_path, PROPRIETARY.format(v="590.44.01"), "Tesla V100-SXM2-32GB", "0x1db5"))
    assert len(found) == 1
    assert "580" in found[0].title and "not supported by the NVIDIA" in found[0].predicted_error
    found, _ = outcome(host(tmp_path / "580", PROPRIETARY.format(v="580.95.05"), "Tesla V100-SXM2-32GB", "0x1db5"))
    assert not found  # 580 itself still drives Volta


def test_unknown_flavour_on_blackwell_asks_for_it(tmp_path):
    root = host(tmp_path, "NVRM version: something else\n", "NVIDIA B200", "0x2901")
    found, unknown = outcome(root)
    assert not found
    assert unknown and "node.gpu.kernel_module" in unknown[0].facts


def test_unknown_device_id_asks_for_it(tmp_path):
    found, unknown = outcome(host(tmp_path, OPEN.format(v="560.31.02"), "NVIDIA Graphics Device", None))
    assert not found
    assert unknown and "node.gpu.gpus.pci_device_id" in unknown[0].facts


def test_open_535_on_a_non_datacenter_turing_needs_the_parameter(tmp_path):
    found, unknown = outcome(host(tmp_path, OPEN.format(v="535.98"), "NVIDIA GeForce RTX 2080 Ti", "0x1e04"))
    assert not found
    assert unknown and "OpenRmEnableUnsupportedGpus" in unknown[0].reason


def test_a_gpu_known_only_by_its_model_name_is_placed(tmp_path):
    # the DGX Spark of start9labs/start-os#3465 as nvidia-smi names it, under the proprietary 580 module
    found, _ = outcome(host(tmp_path, PROPRIETARY.format(v="580.95.05"), "NVIDIA GB10", None))
    assert found and "blackwell" in found[0].mechanism and "model name" in found[0].mechanism
    # nvidia-smi's "Tesla V100-SXM2-32GB" is pci.ids' "Tesla V100 SXM2 32GB"
    found, _ = outcome(host(tmp_path / "v100", OPEN.format(v="560.31.02"), "Tesla V100-SXM2-32GB", None))
    assert found and "volta" in found[0].mechanism
    # a name only the compute-capability table knows (the fixture's H100 names): Hopper, either flavour
    found, unknown = outcome(host(tmp_path / "h100", PROPRIETARY.format(v="535.183.01"), "NVIDIA H100 PCIe", None))
    assert not found and not unknown
