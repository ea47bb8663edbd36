"""imgcheck.node.select: the one node selection, used by the CLI's --node-facts/--node/--fleet and the
service's [fleets.NAME]. Real node facts files and a real inventory under a temporary IMGCHECK_HOME."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil

import pytest
from engine_facts import NODES_DIR

from imgcheck.cli.main import main
from imgcheck.errors import EXIT_UNAVAILABLE, EXIT_USAGE, BadInputError, UnavailableError
from imgcheck.model.node_io import load_node_facts
from imgcheck.node import select
from imgcheck.node.inventory import Inventory
from imgcheck.node.select import NodeSelection, NoNodesFound, NoNodesSelected, select_nodes
from imgcheck.service.config import FleetConfig
from imgcheck.service.worker import fleet_nodes

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IMAGE = "facts:" + os.path.join(REPO, "examples", "incidents", "nccl-1842-image.json")


def nf(name: str) -> str:
    return os.path.join(NODES_DIR, name + ".json")


@pytest.fixture()
def inventory(tmp_path, monkeypatch):
    monkeypatch.setenv("IMGCHECK_HOME", str(tmp_path / "home"))
    inv = Inventory.default()
    base = load_node_facts(nf("inbox-6.8-open-570"))
    for name, pool in (("a1", "train"), ("a2", "train"), ("b1", "infer")):
        inv.add(dataclasses.replace(base, name=name, labels={"pool": pool}))
    return inv


@pytest.fixture()
def facts_dir(tmp_path):
    d = tmp_path / "nodes [rack 1]"  # glob metacharacters in a directory name are not a pattern
    d.mkdir()
    for name in ("mofed-23.10-open-550-peermem", "inbox-5.15-proprietary-535"):
        shutil.copy(nf(name), d / f"{name}.json")
    (d / "README.txt").write_text("not node facts")
    return str(d)


def names(nodes) -> list[str]:
    return [n.name for n in nodes]


def test_files_then_names_then_fleet(inventory, facts_dir):
    nodes = select_nodes(NodeSelection(facts=(nf("cpu-no-rdma"), facts_dir), names=("b1",), fleet="pool=train"))
    # a directory's *.json in name order (inbox-5.15 before mofed-23.10), its other files ignored
    assert names(nodes) == ["cpu-01", "gpu-inbox-515", "gpu-mofed2310", "b1", "a1", "a2"]


def test_an_explicit_inventory_is_used(tmp_path, facts_dir):
    inv = Inventory(str(tmp_path / "other"))
    inv.add(load_node_facts(nf("cpu-no-rdma")))
    assert names(select_nodes(NodeSelection(names=("cpu-01",)), inventory=inv)) == ["cpu-01"]


def test_nothing_selected_is_a_usage_error():
    assert not NodeSelection()
    with pytest.raises(NoNodesSelected) as exc:
        select_nodes(NodeSelection())
    assert exc.value.exit_code == EXIT_USAGE


def test_an_empty_directory_is_unavailable_not_empty(tmp_path):
    with pytest.raises(NoNodesFound) as exc:
        select_nodes(NodeSelection(facts=(str(tmp_path),)))
    assert exc.value.exit_code == EXIT_UNAVAILABLE and str(tmp_path) in str(exc.value)


def test_errors_of_the_sources_pass_through(tmp_path, inventory):
    with pytest.raises(UnavailableError, match="not in the inventory"):
        select_nodes(NodeSelection(names=("ghost",)))
    with pytest.raises(UnavailableError, match="matched no nodes"):
        select_nodes(NodeSelection(fleet="pool=none"))
    bad = tmp_path / "bad.json"
    bad.write_text('{"name": "n1", "gpu": {"kernel_module": 7}}')
    with pytest.raises(BadInputError, match="kernel_module"):
        select_nodes(NodeSelection(facts=(str(bad),)))


def test_cli_and_service_select_through_the_same_function(inventory, facts_dir, monkeypatch, capsys):
    calls = []
    real = select.select_nodes
    monkeypatch.setattr(select, "select_nodes", lambda sel, *a, **k: calls.append(sel) or real(sel, *a, **k))

    service = fleet_nodes(FleetConfig(name="prod", selector="pool=train", node_facts=(facts_dir,)))
    assert main(["--node-facts", facts_dir, "--fleet", "pool=train", "-o", "json", IMAGE]) == 0
    cli = json.loads(capsys.readouterr().out)["nodes"]
    assert calls == [NodeSelection(facts=(facts_dir,), fleet="pool=train")] * 2
    assert [n["name"] for n in cli] == names(service) == ["gpu-inbox-515", "gpu-mofed2310", "a1", "a2"]


def test_an_empty_fleet_directory(tmp_path, capsys):
    # the CLI: exit 3, one line; the service: UnavailableError naming the fleet, so the job is retried
    assert main(["--node-facts", str(tmp_path), IMAGE]) == 3
    assert "no node facts (*.json) in" in capsys.readouterr().err
    with pytest.raises(UnavailableError, match="fleet 'prod' has no node facts") as exc:
        fleet_nodes(FleetConfig(name="prod", node_facts=(str(tmp_path),)))
    assert isinstance(exc.value.__cause__, NoNodesFound)  # --debug / the service log shows why
