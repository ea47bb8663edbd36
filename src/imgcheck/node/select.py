"""Which nodes a check runs against: node facts files, inventory names, a fleet selector.

The one way imgcheck turns "these nodes" into NodeFacts: the CLI's --node-facts/--node/--fleet and the
service's [fleets.NAME] node_facts/selector both build a NodeSelection and call select_nodes, so a file,
a directory or a selector means the same thing in both.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import UnavailableError, UsageError
from ..model.node import NodeFacts
from ..model.node_io import load_node_facts

if TYPE_CHECKING:
    from .inventory import Inventory


class NoNodesSelected(UsageError):
    """The selection names no node at all (exit 2: the caller forgot to say which nodes)."""


class NoNodesFound(UnavailableError):
    """The selection was given but yielded no node facts, e.g. an empty directory (exit 3: not probed yet)."""


@dataclass(frozen=True)
class NodeSelection:
    facts: tuple[str, ...] = ()  # node facts JSON files, or directories whose *.json are node facts
    names: tuple[str, ...] = ()  # nodes in the inventory
    fleet: str | None = None  # an inventory fleet selector (imgcheck.node.inventory)

    def __bool__(self) -> bool:
        return bool(self.facts or self.names or self.fleet)


def _facts_files(path: str) -> list[str]:
    return sorted(glob.glob(os.path.join(glob.escape(path), "*.json"))) if os.path.isdir(path) else [path]


def select_nodes(selection: NodeSelection, inventory: Inventory | None = None) -> list[NodeFacts]:
    """The selection's node facts, in order: files, then names, then the fleet. Never empty.

    Read afresh at every call, so nodes probed since the last call count. `inventory` defaults to
    Inventory.default() ($IMGCHECK_HOME) and is opened only for names or a fleet.
    Raises NoNodesSelected, NoNodesFound, or what reading a file or the inventory raises
    (BadInputError for bad facts, UnavailableError for a missing file or node).
    """
    if not selection:
        raise NoNodesSelected("no nodes selected: give node facts files, inventory node names or a fleet selector")
    nodes = [load_node_facts(f) for path in selection.facts for f in _facts_files(path)]
    if selection.names or selection.fleet:
        if inventory is None:
            from .inventory import Inventory

            inventory = Inventory.default()
        nodes += [inventory.get(name) for name in selection.names]
        if selection.fleet:
            nodes += inventory.fleet(selection.fleet)  # raises when the selector matches nothing
    if not nodes:
        raise NoNodesFound(f"no node facts (*.json) in {', '.join(selection.facts)}")
    return nodes
