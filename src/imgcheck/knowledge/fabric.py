"""Whether a node's GPUs sit behind NVSwitch, so that CUDA needs Fabric Manager (and NVLSM) on it: from the node's
NVSwitch PCI functions when they were read, else from its GPU model and count (compat_matrix nvswitch_systems)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..matrix import Matrix
from ..model.node import NodeFacts

ON_NODE = "on-node"
SWITCH_TRAYS = "switch-trays"
PCI_VISIBLE = "visible"


@dataclass(frozen=True)
class FabricNeed:
    fabric_manager: bool | None  # Fabric Manager must run on this node before CUDA can start (None: not known)
    nvlsm: bool | None  # and, NVLink 5, NVLSM with ib_umad
    why: str  # how it was decided, or what is missing to decide it
    row: dict[str, Any] | None = None  # the nvswitch_systems row the GPUs matched

    @property
    def system(self) -> str:
        return self.row["system"] if self.row else "an NVSwitch system"


def _system_row(node: NodeFacts, matrix: Matrix) -> tuple[dict[str, Any] | None, str | None, int]:
    """The first nvswitch_systems row one of the node's GPU models matches, that model, and how many GPUs match it."""
    names = [g.name for g in node.gpu.gpus if g.name]
    for row in matrix.rows("nvswitch_systems"):
        matching = [n for n in names if re.search(row["pattern"], n)]
        if matching:
            return row, matching[0], len(matching)
    return None, None, 0


def fabric_need(node: NodeFacts, matrix: Matrix) -> FabricNeed:
    switches = node.fabric.nvswitch_pci
    row, model, count = _system_row(node, matrix)
    if row is not None and row["fabric_manager"] == SWITCH_TRAYS:
        return FabricNeed(False, False, f"{model}: {row['system']} run Fabric Manager on the switch trays", row)
    nvlsm = (row["nvlsm"] == "required") if row is not None else None
    if switches:
        return FabricNeed(True, nvlsm, f"{len(switches)} NVSwitch PCI function(s) on the node", row)
    if row is not None and count >= row["min_gpus"]:
        if switches is not None and row["nvswitch_pci"] == PCI_VISIBLE:
            return FabricNeed(
                False,
                False,
                f"{count} x {model} but no NVSwitch PCI function: the GPUs were given without their NVSwitches "
                "(a VM of the shared-NVSwitch model, whose Fabric Manager runs outside it)",
                row,
            )
        return FabricNeed(True, nvlsm, f"{count} x {model}: {row['system']}", row)
    if row is not None:
        return FabricNeed(
            False, False, f"{count} x {model}: fewer than a {row['system']} baseboard has (direct NVLink)", row
        )
    if switches is not None:
        return FabricNeed(False, False, "no NVSwitch PCI function on the node")
    if any(g.name for g in node.gpu.gpus):
        return FabricNeed(False, False, "no GPU of an NVSwitch baseboard (nvswitch_systems) on the node")
    return FabricNeed(None, None, "neither the node's NVSwitches nor its GPU models are known")
