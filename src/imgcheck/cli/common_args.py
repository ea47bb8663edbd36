"""Options several commands share, declared once so their spelling and help never drift apart."""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..errors import UsageError

if TYPE_CHECKING:  # imported where nodes are selected: `inspect` and a warm re-check never load node facts code
    from ..deadline import Deadline
    from ..model.node import NodeFacts
    from ..node.select import NodeSelection
    from ..sources.platform import Platform
    from ..sources.read_options import ReadOptions
    from .main import Parser

    Subparsers = argparse._SubParsersAction[Parser]  # what main's add_subparsers() returns


def add_node_args(p: argparse.ArgumentParser) -> None:
    """--node / --node-facts / --fleet: which nodes to check against (read by selected_nodes)."""
    p.add_argument(
        "--node-facts",
        action="append",
        default=[],
        metavar="FILE",
        help="node facts JSON (from `imgcheck node probe` or written by hand), or a directory of "
        "them (*.json); repeatable",
    )
    p.add_argument("--node", action="append", default=[], metavar="NAME", help="a node from the inventory; repeatable")
    p.add_argument("--fleet", metavar="SELECTOR", help="every inventory node the selector matches")


def node_selection(args: argparse.Namespace) -> NodeSelection:
    from ..node import select

    return select.NodeSelection(facts=tuple(args.node_facts), names=tuple(args.node), fleet=args.fleet)


def selected_nodes(args: argparse.Namespace) -> list[NodeFacts]:
    """The nodes --node-facts/--node/--fleet name (imgcheck.node.select, as the service reads its fleets)."""
    from ..node import select

    try:
        return select.select_nodes(node_selection(args))
    except select.NoNodesSelected as exc:  # the library's words, in this command line's terms
        raise UsageError(
            "no nodes to check against: give --node-facts FILE, --node NAME or --fleet SELECTOR "
            "(`imgcheck inspect IMAGE` shows the image's facts alone)"
        ) from exc


def add_image_read_args(
    p: argparse.ArgumentParser, platform_help: str = "os/arch[/variant] to pick from a multi-platform image"
) -> None:
    """How images are read: platform, plain-HTTP registries, the caches."""
    p.add_argument("--platform", help=platform_help)
    p.add_argument(
        "--insecure-registry",
        action="append",
        default=[],
        metavar="HOST[:PORT]",
        help="allow plain HTTP (or an unverified certificate) for this registry; repeatable. "
        "localhost, 127.0.0.1 and ::1 are always allowed",
    )
    p.add_argument("--no-cache", action="store_true", help="read every layer; neither use nor fill the caches")
    p.add_argument(
        "--whole-layers",
        action="store_true",
        help="read eStargz layers whole too, checking each layer's diff_id (default: their table of contents and "
        "the wanted files by HTTP range, each checked against its digest in the manifest)",
    )
    p.add_argument(
        "--timeout",
        metavar="DURATION",
        help="the most the whole read of the image(s) may take: seconds, or 90s, 5m, 1h (default: no limit; "
        "exit 3 when it passes). A read still going after 20s says so on stderr when stderr is no terminal",
    )


def image_read_options(
    args: argparse.Namespace, deadline: Deadline | None, platform: Platform | None = None, **more: Any
) -> ReadOptions:
    """The ReadOptions the image-read arguments (add_image_read_args) ask for; `more`: progress, stats."""
    from ..sources.read_options import ReadOptions as Options

    return Options(
        platform=platform,
        insecure_registries=tuple(args.insecure_registry),
        use_cache=not args.no_cache,
        range_reads=not args.whole_layers,
        deadline=deadline,
        **more,
    )


def parsed_platform(args: argparse.Namespace) -> Platform | None:
    from ..sources.platform import parse_platform

    return parse_platform(args.platform) if args.platform else None


def read_deadline(args: argparse.Namespace) -> Deadline | None:
    """--timeout as the Deadline every read of this command shares (None: no limit)."""
    value = getattr(args, "timeout", None)
    if not value:
        return None
    from ..deadline import Deadline, parse_duration

    return Deadline(parse_duration(value))


@contextmanager
def reading(deadline: Deadline | None, what: str) -> Iterator[None]:
    """Around a command's image read: --timeout's backstop and the slow-read notice (imgcheck.deadline)."""
    from ..deadline import read_guard

    with read_guard(deadline, what):
        yield


def add_matrix_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--matrix", metavar="DIR", help="use this compat matrix directory instead of the shipped one")


def add_report_args(p: argparse.ArgumentParser, fail_on: Sequence[str]) -> None:
    """What a check-style command writes and when it fails: -o, --fail-on, --ignore/--reason, the ignore file, -v."""
    p.add_argument(
        "-o",
        "--output",
        action="append",
        metavar="FORMAT[=PATH]",
        help="table, json, sarif, junit or markdown; repeatable, one may go to stdout",
    )
    p.add_argument(
        "--fail-on",
        choices=fail_on,
        default="error",
        help="exit 1 when a finding is at or above this severity (default: error); unknown: also exit 4 when no "
        "error was found but a check that could give one was not decided",
    )
    p.add_argument(
        "--ignore",
        action="append",
        default=[],
        metavar="RULE[@NODE]",
        help="drop a rule's findings (on one node with @NODE); needs --reason; repeatable",
    )
    p.add_argument(
        "--reason",
        action="append",
        default=[],
        metavar="TEXT",
        help="why the --ignore is acceptable (once for all, or once per --ignore); kept in the report",
    )
    p.add_argument(
        "--ignore-file",
        metavar="PATH",
        help="accepted findings with reasons and optional expiry (YAML, or a pyproject.toml with "
        "[tool.imgcheck]); default: ./.imgcheckignore, else ./pyproject.toml's [tool.imgcheck]",
    )
    p.add_argument("--no-ignore-file", action="store_true", help="do not read ./.imgcheckignore or pyproject.toml")
    p.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="table: why, evidence, every fix and the sources for each finding (default: a summary)",
    )
