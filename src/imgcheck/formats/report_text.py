"""Small text helpers shared by the report formats (no rich, no XML), so every format shows a value alike."""

from __future__ import annotations


def value_text(value: object) -> str:
    """An evidence value as people read it: None -> unknown, booleans -> yes/no."""
    if value is None:
        return "unknown"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def short_layer(layer: str | None) -> str:
    """sha256:abcdef... -> abcdef012345 (12 hex digits, like docker's short ids)."""
    return layer.split(":", 1)[-1][:12] if layer else ""
