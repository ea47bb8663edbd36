"""What a node's GPU model is: its class and what the class supports (gpu_classes rows, matched on the model name)."""

from __future__ import annotations

import re

from ..matrix import Matrix


def classify(name: str | None, matrix: Matrix) -> dict | None:
    """The first gpu_classes row whose pattern matches the model name (None: no name, or no row matches)."""
    if not name:
        return None
    for row in matrix.rows("gpu_classes"):
        if re.search(row["pattern"], name):
            return row
    return None


def class_of(gpu, matrix: Matrix) -> tuple[str | None, dict]:
    """(class, matching row): a class stated in the node facts wins over the one the name implies."""
    row = classify(gpu.name, matrix) or {}
    return (gpu.gpu_class or row.get("gpu_class")), row
