"""`imgcheck recommend`: which catalog images the engine predicts clean on the nodes, and the node-side path."""

from __future__ import annotations

from ..errors import EXIT_FINDINGS, EXIT_OK
from ..sources.platform import parse_platform
from .check_cmd import resolve_nodes
from .output import parse_outputs, write_output

NAMES = ("recommend",)
FORMATS = ("table", "json")


def register(sub) -> None:
    p = sub.add_parser("recommend", help="images predicted clean on your nodes (and the node-side upgrade path)",
                       description="Rank the base-image catalog (shipped + `imgcheck catalog add`) by what the engine "
                                   "predicts on the nodes. Exit 0 when something is recommended, 1 when nothing fits.")
    p.add_argument("--node", action="append", default=[], metavar="NAME", help="a node from the inventory; repeatable")
    p.add_argument("--node-facts", action="append", default=[], metavar="FILE", help="node facts JSON; repeatable")
    p.add_argument("--fleet", metavar="SELECTOR", help="every inventory node the selector matches")
    p.add_argument("--like", metavar="IMAGE", help="the image you run now: rank by closeness to it and show the "
                                                   "node-side change that would make it work")
    p.add_argument("--framework", metavar="NAME", help="only images of this framework (pytorch, tensorflow, mxnet, "
                                                       "paddlepaddle, cuda-dl, cuda, ...)")
    p.add_argument("-o", "--output", action="append", metavar="FORMAT[=PATH]", help="table or json (repeatable)")
    p.add_argument("--matrix", metavar="DIR", help="use this compat matrix directory instead of the shipped one")
    p.add_argument("--platform", help="os/arch[/variant] for --like")
    p.add_argument("--insecure-registry", action="append", default=[], metavar="HOST[:PORT]",
                   help="allow plain HTTP for this registry (for --like); repeatable")
    p.add_argument("--no-cache", action="store_true", help="neither use nor fill the layer cache")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..formats.recommend_table import recommend_json, recommend_table
    from ..recommend.entry import recommend_for

    outputs = parse_outputs(args.output, FORMATS)
    nodes = resolve_nodes(args)
    result = recommend_for(nodes, like=args.like, framework=args.framework, matrix_path=args.matrix,
                           platform=parse_platform(args.platform) if args.platform else None,
                           use_cache=not args.no_cache, insecure_registries=tuple(args.insecure_registry))
    for spec in outputs:
        write_output(spec, recommend_json(result) if spec.format == "json" else recommend_table(result))
    return EXIT_OK if result.recommendations else EXIT_FINDINGS
