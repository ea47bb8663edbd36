"""`imgcheck recommend`: which catalog images the engine predicts clean on the nodes, and the node-side path."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..errors import EXIT_FINDINGS, EXIT_OK
from .common_args import add_image_read_args, add_matrix_arg, add_node_args, selected_nodes
from .output import parse_outputs, write_output

if TYPE_CHECKING:
    from .common_args import Subparsers

NAMES = ("recommend",)
FORMATS = ("table", "json")


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "recommend",
        help="images predicted clean on your nodes (and the node-side upgrade path)",
        description="Rank the base-image catalog (shipped + `imgcheck catalog add`) by what the engine "
        "predicts on the nodes. Exit 0 when something is recommended, 1 when nothing fits.",
    )
    add_node_args(p)
    p.add_argument(
        "--like",
        metavar="IMAGE",
        help="the image you run now: rank by closeness to it and show the node-side change that would make it work",
    )
    p.add_argument(
        "--framework",
        metavar="NAME",
        help="only images of this framework (pytorch, tensorflow, mxnet, paddlepaddle, cuda-dl, cuda, ...)",
    )
    p.add_argument("-o", "--output", action="append", metavar="FORMAT[=PATH]", help="table or json (repeatable)")
    add_matrix_arg(p)
    add_image_read_args(p, platform_help="os/arch[/variant] for --like")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..formats.recommend_table import recommend_json, recommend_table
    from ..recommend_entry import recommend_for

    outputs = parse_outputs(args.output, FORMATS)
    nodes = selected_nodes(args)
    from .common_args import image_read_options, parsed_platform, read_deadline, reading

    deadline = read_deadline(args)
    with reading(deadline, f"reading {args.like}" if args.like else "checking catalog images"):
        result = recommend_for(
            nodes,
            like=args.like,
            framework=args.framework,
            matrix_path=args.matrix,
            options=image_read_options(args, deadline, parsed_platform(args)),
        )
    for spec in outputs:
        write_output(spec, recommend_json(result) if spec.format == "json" else recommend_table(result))
    return EXIT_OK if result.recommendations else EXIT_FINDINGS
