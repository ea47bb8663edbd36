"""The list of subcommand modules. Module `<word>_cmd` has NAMES = ("<word>",) and register(subparsers).

Only the module of the command being run is imported (the others pull in web servers, the triage
signatures, ...), which keeps every invocation's start-up short; `--help` imports them all.
"""

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
    "recommend_cmd",
    "catalog_cmd",
    "diff_cmd",
    "job_cmd",
)


def names() -> set[str]:
    return {name[: -len("_cmd")] for name in MODULES}


def register_all(subparsers, only: str | None = None) -> None:
    """Register every command, or just `only` (a command word) when it is known."""
    wanted = [f"{only}_cmd"] if only in names() else list(MODULES)
    for name in wanted:
        importlib.import_module(f"imgcheck.cli.{name}").register(subparsers)
