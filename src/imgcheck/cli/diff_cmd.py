"""`imgcheck diff OLD NEW`: what a base-image bump changed in the RDMA/GPU userspace, and which nodes move."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..errors import EXIT_FINDINGS, EXIT_OK
from .common_args import (
    add_image_read_args,
    add_matrix_arg,
    add_node_args,
    image_read_options,
    node_selection,
    parsed_platform,
    read_deadline,
    reading,
    selected_nodes,
)
from .output import parse_outputs, write_output

if TYPE_CHECKING:
    from .common_args import Subparsers

NAMES = ("diff",)
FORMATS = ("table", "json", "markdown", "sarif")


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "diff",
        help="what a base-image bump changed, and which nodes move from ok to failing",
        description="Compare the RDMA/GPU userspace of OLD and NEW and run the engine on both against "
        "the nodes. Exit 1 if some node moves to failing, 0 otherwise.",
    )
    p.add_argument("old", metavar="OLD", help="the image before the bump (any IMAGE form imgcheck reads)")
    p.add_argument("new", metavar="NEW", help="the image after the bump")
    add_node_args(p)
    p.add_argument(
        "-o",
        "--output",
        action="append",
        metavar="FORMAT[=PATH]",
        help="table, json, markdown (a PR comment) or sarif (an alert per rule NEW adds); repeatable, one may go to stdout",
    )
    add_matrix_arg(p)
    add_image_read_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..formats.diff_table import diff_json, diff_table
    from ..recommend_entry import diff_for

    outputs = parse_outputs(args.output, FORMATS)
    nodes = selected_nodes(args) if node_selection(args) else []  # no nodes: the image change alone
    deadline = read_deadline(args)
    with reading(deadline, f"reading {args.old} and {args.new}"):
        result = diff_for(
            args.old,
            args.new,
            nodes,
            matrix_path=args.matrix,
            options=image_read_options(args, deadline, parsed_platform(args)),
        )
    from ..formats.diff_formats import diff_markdown, diff_sarif

    render = {"json": diff_json, "markdown": diff_markdown, "sarif": diff_sarif, "table": diff_table}
    for spec in outputs:
        write_output(spec, render[spec.format](result))
    return EXIT_FINDINGS if result.newly_failing else EXIT_OK
