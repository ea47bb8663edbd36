"""The list of subcommand modules. Module `<word>_cmd` has NAMES = ("<word>",) and register(subparsers);
the default command's module (`imgcheck IMAGE ...`) also has DESCRIPTION and configure(parser).

Only the module of the command being run is imported (the others pull in web servers, the triage
signatures, ...), which keeps every invocation's start-up short; `--help` imports them all.
"""

from __future__ import annotations

import argparse
import importlib
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .common_args import Subparsers

DEFAULT = "check"  # what `imgcheck IMAGE ...` (a first word that is no command) runs

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


def register_all(subparsers: Subparsers, only: str | None = None) -> None:
    """Register every command, or just `only` (a command word) when it is known."""
    wanted = [f"{only}_cmd"] if only in names() else list(MODULES)
    for name in wanted:
        importlib.import_module(f"imgcheck.cli.{name}").register(subparsers)


def _default_module() -> ModuleType:
    return importlib.import_module(f"imgcheck.cli.{DEFAULT}_cmd")


def default_description() -> str:
    description: str = _default_module().DESCRIPTION
    return description


def default_exit_codes() -> str:
    return getattr(_default_module(), "EXIT_CODES", "")


def configure_default(parser: argparse.ArgumentParser) -> None:
    """Give `parser` the default command's arguments (the same as `imgcheck check`)."""
    _default_module().configure(parser)
