"""Options several commands share, declared once so their spelling and help never drift apart."""

from __future__ import annotations


def add_node_args(p) -> None:
    """--node / --node-facts / --fleet: which nodes to check against (see check_cmd.resolve_nodes)."""
    p.add_argument("--node-facts", action="append", default=[], metavar="FILE",
                   help="node facts JSON (from `imgcheck node probe` or written by hand); repeatable")
    p.add_argument("--node", action="append", default=[], metavar="NAME", help="a node from the inventory; repeatable")
    p.add_argument("--fleet", metavar="SELECTOR", help="every inventory node the selector matches")


def add_image_read_args(p, platform_help: str = "os/arch[/variant] to pick from a multi-platform image") -> None:
    """How images are read: platform, plain-HTTP registries, the caches."""
    p.add_argument("--platform", help=platform_help)
    p.add_argument("--insecure-registry", action="append", default=[], metavar="HOST[:PORT]",
                   help="allow plain HTTP (or an unverified certificate) for this registry; repeatable. "
                        "localhost, 127.0.0.1 and ::1 are always allowed")
    p.add_argument("--no-cache", action="store_true", help="read every layer; neither use nor fill the caches")


def add_matrix_arg(p) -> None:
    p.add_argument("--matrix", metavar="DIR", help="use this compat matrix directory instead of the shipped one")
