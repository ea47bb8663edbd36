"""The embedded inventory ($IMGCHECK_HOME/nodes) and fleet selectors, through the library and the CLI."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest
from node_fixtures import fixture_root

from imgcheck.cli.main import main
from imgcheck.errors import BadInputError, UnavailableError, UsageError
from imgcheck.model.node_io import dump_node_facts
from imgcheck.node import inventory as inventory_mod
from imgcheck.node.inventory import Inventory, parse_label_selector
from imgcheck.node.probe import probe


def _facts(fixture: str, name: str, **labels):
    return dataclasses.replace(probe(fixture_root(fixture)), name=name, labels=labels)


def test_default_uses_imgcheck_home(home):
    inv = Inventory.default()
    inv.add(_facts("inbox-ubuntu2204", "n1"))
    assert (home / "nodes" / "n1.json").is_file()


def test_add_get_list_remove(home):
    inv = Inventory.default()
    a = _facts("inbox-ubuntu2204", "gpu-a")
    b = _facts("doca-24.10-ubuntu2404", "gpu-b")
    inv.add(b)
    inv.add(a)
    assert inv.get("gpu-a") == a
    assert [n.name for n in inv.list()] == ["gpu-a", "gpu-b"]
    replaced = dataclasses.replace(a, kernel=dataclasses.replace(a.kernel, release="6.8.0-1-generic"))
    inv.add(replaced)
    assert inv.get("gpu-a").kernel.release == "6.8.0-1-generic"
    inv.remove("gpu-a")
    assert [n.name for n in inv.list()] == ["gpu-b"]
    assert os.listdir(home / "nodes") == ["gpu-b.json"]  # no temp files left behind
    with pytest.raises(UnavailableError, match="'gpu-a' is not in the inventory"):
        inv.get("gpu-a")
    with pytest.raises(UnavailableError):
        inv.remove("gpu-a")


@pytest.mark.parametrize("bad", ["../evil", "a/b", ".hidden", "", "x" * 300, "a..b", "/abs"])
def test_names_cannot_escape_the_directory(home, bad):
    inv = Inventory.default()
    with pytest.raises(UsageError, match="invalid node name"):
        inv.add(_facts("inbox-ubuntu2204", bad))
    with pytest.raises(UsageError):
        inv.get(bad)
    assert not (home / "evil.json").exists() and not (home.parent / "evil.json").exists()


def test_failed_write_keeps_the_old_file_and_leaves_no_temp(home, monkeypatch):
    inv = Inventory.default()
    inv.add(_facts("inbox-ubuntu2204", "n1"))
    before = (home / "nodes" / "n1.json").read_text()

    def boom(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(inventory_mod.os, "replace", boom)
    with pytest.raises(UnavailableError, match="No space left"):
        inv.add(_facts("doca-24.10-ubuntu2404", "n1"))
    assert (home / "nodes" / "n1.json").read_text() == before
    assert os.listdir(home / "nodes") == ["n1.json"]


def test_corrupt_or_mismatched_files_are_bad_input(home):
    inv = Inventory.default()
    (home / "nodes").mkdir(parents=True)
    (home / "nodes" / "broken.json").write_text("{not json")
    with pytest.raises(BadInputError, match="not valid JSON"):
        inv.get("broken")
    (home / "nodes" / "other.json").write_text(dump_node_facts(_facts("inbox-ubuntu2204", "someone-else")))
    with pytest.raises(BadInputError, match="'someone-else', not 'other'"):
        inv.get("other")


@pytest.fixture
def fleet_inv(home):
    inv = Inventory.default()
    inv.add(_facts("inbox-ubuntu2204", "a1", rack="r1", **{"imgcheck.fleet": "prod"}))
    inv.add(_facts("mlnx-ofed-23.10-ubuntu2204", "a2", rack="r1", gpu="a100"))
    inv.add(_facts("doca-24.10-ubuntu2404", "b1", rack="r2", gpu="h100", **{"imgcheck.fleet": "prod"}))
    return inv


def test_fleet_all_and_labels(fleet_inv):
    names = lambda nodes: [n.name for n in nodes]  # noqa: E731
    assert names(fleet_inv.fleet("all")) == ["a1", "a2", "b1"]
    assert names(fleet_inv.fleet("rack=r1")) == ["a1", "a2"]
    assert names(fleet_inv.fleet("rack==r1,gpu")) == ["a2"]
    assert names(fleet_inv.fleet("rack!=r1")) == ["b1"]
    assert names(fleet_inv.fleet("prod")) == ["a1", "b1"]  # imgcheck.fleet=prod label


def test_named_fleet_file_wins_over_labels(fleet_inv, home):
    (home / "fleets").mkdir()
    (home / "fleets" / "prod.txt").write_text("# training pool\nb1\na2  # the A100 box\n\nb1\n")
    assert [n.name for n in fleet_inv.fleet("prod")] == ["b1", "a2"]
    (home / "fleets" / "ghost.txt").write_text("zz9\n")
    with pytest.raises(UnavailableError, match="'zz9' is not in the inventory"):
        fleet_inv.fleet("ghost")


def test_fleet_errors(fleet_inv):
    with pytest.raises(UnavailableError, match="matched no nodes"):
        fleet_inv.fleet("rack=r9")
    with pytest.raises(UnavailableError, match="matched no nodes"):
        fleet_inv.fleet("nosuchfleet")
    with pytest.raises(UsageError):
        fleet_inv.fleet("rack=r1,=x")
    with pytest.raises(UsageError):
        fleet_inv.fleet("../etc")
    assert parse_label_selector("a=b, c!=d ,e") == [("a", "=", "b"), ("c", "!=", "d"), ("e", "exists", None)]


def test_k8s_selector_goes_to_the_kubernetes_reader(fleet_inv, monkeypatch):
    from imgcheck.node import k8s

    seen = []
    monkeypatch.setattr(k8s, "read_nodes", lambda sel: seen.append(sel) or [_facts("inbox-ubuntu2204", "k1")])
    assert [n.name for n in fleet_inv.fleet("k8s:nvidia.com/gpu.present=true")] == ["k1"]
    assert seen == ["nvidia.com/gpu.present=true"]


# -- CLI -------------------------------------------------------------------------------------------
def test_cli_add_list_show_rm(home, tmp_path, capsys):
    files = []
    for fixture in ("inbox-ubuntu2204", "mlnx-ofed-5.8-rocky86"):
        path = tmp_path / f"{fixture}.json"
        assert main(["node", "probe", "--root", fixture_root(fixture), "-o", str(path), "-q"]) == 0
        files.append(str(path))
    assert main(["node", "add", *files]) == 0
    capsys.readouterr()
    assert main(["node", "list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["NAME", "KERNEL", "RDMA", "OFED", "DRIVER", "MODULE", "PEERMEM", "COLLECTED"]
    assert out[1].split()[:7] == ["gpu-roce-01", "5.15.0-25-generic", "inbox", "-", "535.183.01", "proprietary", "no"]
    assert out[2].split()[:7] == [
        "node002",
        "4.18.0-372.9.1.el8.x86_64",
        "mlnx_ofed",
        "5.8-3.0.7.0",
        "535.104.05",
        "proprietary",
        "yes",
    ]
    assert main(["node", "show", "node002"]) == 0
    assert json.loads(capsys.readouterr().out)["rdma"]["ofed_version"] == "5.8-3.0.7.0"
    assert main(["node", "list", "--json", "--fleet", "all"]) == 0
    assert [n["name"] for n in json.loads(capsys.readouterr().out)] == ["gpu-roce-01", "node002"]
    assert main(["node", "rm", "node002"]) == 0
    assert main(["node", "show", "node002"]) == 3
    assert "not in the inventory" in capsys.readouterr().err


def test_cli_add_is_all_or_nothing(home, tmp_path, capsys):
    good = tmp_path / "good.json"
    good.write_text(dump_node_facts(_facts("inbox-ubuntu2204", "good")))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "bad", "schema_version": 99}))
    assert main(["node", "add", str(good), str(bad)]) == 2
    assert "newer than this imgcheck" in capsys.readouterr().err
    assert not (home / "nodes").exists()
    assert main(["node", "add", str(tmp_path / "missing.json")]) == 3


def test_cli_probe_add_stores_in_inventory(home, capsys):
    assert main(["node", "probe", "--root", fixture_root("doca-24.10-ubuntu2404"), "--add", "-q"]) == 0
    capsys.readouterr()
    assert Inventory.default().get("dgx01").rdma.stack == "doca"
