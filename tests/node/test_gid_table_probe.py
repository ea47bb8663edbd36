"""The probe's GID table and interface facts: read from sysfs-shaped roots, bounded, unknown when not visible."""

from __future__ import annotations

import dataclasses
import os

from imgcheck.model.node import GidEntry
from imgcheck.node.hostroot import HostRoot
from imgcheck.node.net_interfaces import scan_interfaces
from imgcheck.node.probe import probe
from imgcheck.node.rdma_devices import GID_READ_CAP, ZERO_GID, scan_devices

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")


def _write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text + "\n")


def test_roce_fixture_table_as_show_gids_lists_it():
    facts = probe(os.path.join(FIXTURES, "inbox-ubuntu2204"))
    port = facts.rdma.devices[0].ports[0]
    assert (port.gid_table_len, port.gids_read) == (256, 256)
    assert tuple(dataclasses.replace(g, gid=None, kind=None) for g in port.gids) == tuple(
        GidEntry(i, "IB/RoCE v1" if i % 2 == 0 else "RoCE v2", "ens1f0np0") for i in range(6)
    )
    assert port.gids[5].gid == "0000:0000:0000:0000:0000:ffff:ac13:003c" and port.gids[5].kind == "ipv4-mapped"
    assert [(i.name, i.operstate) for i in facts.net_interfaces] == [
        ("docker0", "down"),
        ("ens1f0np0", "up"),
        ("ens2f0np0", "up"),
        ("lo", "unknown"),
    ]


def test_a_table_longer_than_the_cap_is_read_only_that_far(tmp_path):
    root = str(tmp_path)
    port = "sys/class/infiniband/rxe0/ports/1"
    _write(root, f"{port}/link_layer", "Ethernet")
    for i in range(GID_READ_CAP + 44):
        _write(root, f"{port}/gids/{i}", ZERO_GID)
    for i in (2, GID_READ_CAP + 10):  # one entry inside the cap, one past it
        _write(root, f"{port}/gids/{i}", "0000:0000:0000:0000:0000:ffff:c0a8:0606")
        _write(root, f"{port}/gid_attrs/types/{i}", "RoCE v2")
    unknown: dict[str, str] = {}
    (dev,) = scan_devices(HostRoot(root), unknown).devices
    (p,) = dev.ports
    assert (p.gid_table_len, p.gids_read) == (GID_READ_CAP + 44, GID_READ_CAP)
    assert p.gids == (GidEntry(2, "RoCE v2", None, "0000:0000:0000:0000:0000:ffff:c0a8:0606", "ipv4-mapped"),)
    assert p.gid_entry(GID_READ_CAP + 10) == ("unknown", None)  # not read: not said to be zero
    assert p.gid_entry(GID_READ_CAP + 44) == ("beyond", None) and p.gid_entry(3) == ("zero", None)


def test_missing_gids_and_net_class_are_unknown_with_a_reason(tmp_path):
    root = str(tmp_path)
    _write(root, "sys/class/infiniband/mlx5_0/ports/1/link_layer", "InfiniBand")
    unknown: dict[str, str] = {}
    (dev,) = scan_devices(HostRoot(root), unknown).devices
    assert dev.ports[0].gids is None and "gids is absent" in unknown["rdma.devices.mlx5_0.ports.1.gids"]
    assert scan_interfaces(HostRoot(root), unknown) is None and "/sys/class/net" in unknown["net_interfaces"]
