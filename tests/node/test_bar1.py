"""gpu.gpus[].bar1_bytes (issue 34): BAR1 from /sys/bus/pci/devices/<bus>/resource line 1, as sysfs lays it out
(drivers/pci/pci-sysfs.c resource_show: "start end flags" in hex, resource N on line N)."""

from __future__ import annotations

import os

from imgcheck.node import nfd
from imgcheck.node.hostroot import HostRoot
from imgcheck.node.nvidia import _gpus
from imgcheck.node.probe import probe

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
K40C_BAR1 = (0x37FC0000000, 256 << 20)  # lspci: Region 1: Memory at 37fc0000000 (64-bit, prefetchable) [size=256M]


def _root(tmp_path, bar1):
    bus = "0000:82:00.0"
    info = tmp_path / "proc/driver/nvidia/gpus" / bus / "information"
    info.parent.mkdir(parents=True)
    info.write_text(f"Model: \t\t Tesla K40c\nBus Location: \t {bus}\nDevice Minor: \t 0\n")
    dev = tmp_path / "sys/bus/pci/devices" / bus
    dev.mkdir(parents=True)
    start, size = bar1
    lines = [
        "0x00000000fa000000 0x00000000faffffff 0x0000000000040200",
        f"0x{start:016x} 0x{start + size - 1:016x} 0x000000000014220c",
    ]
    (dev / "resource").write_text(
        "\n".join(lines + ["0x0000000000000000 0x0000000000000000 0x0000000000000000"] * 5) + "\n"
    )
    return HostRoot(str(tmp_path))


def test_probe_reads_bar1_from_the_fixture_root():
    node = probe(os.path.join(FIXTURES, "inbox-ubuntu2204"))
    by_bus = {g.pci_bus_id: g for g in node.gpu.gpus}
    assert by_bus["0000:18:00.0"].bar1_bytes == 128 << 30
    assert by_bus["0000:2a:00.0"].bar1_bytes is None  # no resource file: unknown, not zero


def test_small_bar1(tmp_path):
    (gpu,) = _gpus(_root(tmp_path, K40C_BAR1), {})
    assert gpu.name == "Tesla K40c" and gpu.bar1_bytes == 256 << 20


def test_unassigned_or_garbled_bar1_is_unknown(tmp_path):
    (gpu,) = _gpus(_root(tmp_path, (0, 0)), {})
    assert gpu.bar1_bytes is None
    res = tmp_path / "sys/bus/pci/devices/0000:82:00.0/resource"
    res.write_text("garbage\n")
    (gpu,) = _gpus(HostRoot(str(tmp_path)), {})
    assert gpu.bar1_bytes is None


def test_nfd_label_round_trip():
    node = probe(os.path.join(FIXTURES, "inbox-ubuntu2204"))
    assert "nvidia.bar1-min-mib" not in nfd.features_of(node)  # one GPU's BAR1 unknown: no smallest
    import dataclasses

    known = dataclasses.replace(
        node,
        gpu=dataclasses.replace(
            node.gpu, gpus=tuple(dataclasses.replace(g, bar1_bytes=256 << 20) for g in node.gpu.gpus)
        ),
    )
    features = nfd.features_of(known)
    assert features["nvidia.bar1-min-mib"] == "256"
    labels = {nfd.PREFIX + k: v for k, v in features.items()} | {nfd.GFD_GPU_COUNT: "2"}
    back = nfd.facts_from_labels("n1", labels)
    assert [g.bar1_bytes for g in back.gpu.gpus] == [256 << 20, 256 << 20]
