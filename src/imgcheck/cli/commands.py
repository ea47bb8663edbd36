"""The list of subcommand modules. Each module has NAMES (tuple of words) and register(subparsers)."""

from __future__ import annotations

import importlib

# module names under imgcheck.cli; add a line to add a command
MODULES = (
    "serve_cmd",
    "inspect_cmd",
    "cache_cmd",
    "node_cmd",
    "check_cmd",
    "matrix_cmd",
    "triage_cmd",
    "verify_cmd",
)


def _modules():
    return [importlib.import_module(f"imgcheck.cli.{name}") for name in MODULES]


def names() -> set[str]:
    result: set[str] = set()
    for mod in _modules():
        result.update(mod.NAMES)
    return result


def register_all(subparsers) -> None:
    for mod in _modules():
        mod.register(subparsers)
