"""Rule texts may name matrix values instead of repeating them: `{nccl_min[dmabuf]}`, `{stack_min[dmabuf_mr.inbox]}`,
`{rdma_core_min[ibv_reg_dmabuf_mr]}`, `{threshold[cumem_min_cuda]}`, `{cuda_min_driver[12]}`. The text then
cannot drift from the sourced row; `imgcheck matrix validate` checks every such reference resolves."""

from __future__ import annotations

import string
from collections.abc import Callable, Iterable, Mapping
from typing import Any

Row = dict[str, Any]

# placeholder map -> (table, row -> key, row -> value)
REFS: dict[str, tuple[str, Callable[[Row], Any], Callable[[Row], Any]]] = {
    "nccl_min": ("nccl_features", lambda r: r.get("feature"), lambda r: r.get("nccl_min")),
    "ucx_min": ("ucx_features", lambda r: r.get("feature"), lambda r: r.get("ucx_min")),
    "stack_min": (
        "kernel_rdma_features",
        lambda r: f"{r.get('feature')}.{r.get('stack')}",
        lambda r: r.get("min_version"),
    ),
    "rdma_core_min": ("rdma_core_functions", lambda r: r.get("function"), lambda r: r.get("first_release")),
    "threshold": ("thresholds", lambda r: r.get("key"), lambda r: r.get("value")),
    "cuda_min_driver": ("cuda_minor_compat", lambda r: str(r.get("cuda_major")), lambda r: r.get("minimum_driver")),
}


class _Lookup(dict[Any, Any]):
    def __init__(self, name: str, values: dict[Any, Any]):
        super().__init__(values)
        self.name = name

    def __missing__(self, key: str) -> str:  # validate() refuses such a text; never crash on one
        return f"<{self.name}[{key}]?>"


def ref_maps(tables: Mapping[str, Iterable[Any]]) -> dict[str, dict[Any, Any]]:
    """{map name: {key: value}} over the matrix tables (rows with a null value are left out)."""
    out: dict[str, dict[Any, Any]] = {}
    for name, (table, key_of, value_of) in REFS.items():
        rows = [r for r in tables.get(table, ()) if isinstance(r, dict)]
        out[name] = _Lookup(name, {key_of(r): value_of(r) for r in rows if value_of(r) is not None})
    return out


def references(text: Any) -> list[tuple[str, str]]:
    """(map, key) for every `{map[key]}` placeholder in text."""
    if not isinstance(text, str):
        return []
    found = []
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(text) if f]
    except ValueError:
        return []
    for field in fields:
        name, bracket, rest = field.partition("[")
        if bracket and name in REFS:
            found.append((name, rest.rstrip("]")))
    return found


def reference_problems(text: Any, maps: Mapping[str, Mapping[str, Any]]) -> list[str]:
    return [
        f"{{{name}[{key}]}} names no {REFS[name][0]} row with a value"
        for name, key in references(text)
        if key not in maps[name]
    ]
