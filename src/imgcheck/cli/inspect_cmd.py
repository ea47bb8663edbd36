"""`imgcheck inspect IMAGE`: facts only."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from .. import api
from ..formats.json_format import render_facts
from ..sources.platform import parse_platform
from .common_args import add_image_read_args
from .output import parse_outputs, write_output

if TYPE_CHECKING:
    from .common_args import Subparsers

NAMES = ("inspect",)
FORMATS = ("table", "json")


def register(sub: Subparsers) -> None:
    p = sub.add_parser("inspect", help="read an image's RDMA/GPU userspace facts without running it")
    p.add_argument("image", help="name[:tag][@digest], or docker-archive:PATH, oci-dir:PATH, oci-archive:PATH, ...")
    p.add_argument("-o", "--output", action="append", metavar="FORMAT[=PATH]", help="table or json (repeatable)")
    add_image_read_args(p)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    p.add_argument(
        "--show-env",
        action="store_true",
        help="show every image Env value (default: only NCCL_*, UCX_*, CUDA_*, ... and *PATH; the rest redacted)",
    )
    p.add_argument(
        "--stats",
        action="store_true",
        help="say on stderr what the read did: layers streamed or cached, bytes, worker processes",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    outputs = parse_outputs(args.output, FORMATS)
    platform = parse_platform(args.platform) if args.platform else None
    from ..formats.progress import LayerProgress

    stats = None
    if args.stats:
        from ..sources.read_options import ReadStats

        stats = ReadStats()
    from .common_args import image_read_options, read_deadline, reading

    deadline = read_deadline(args)
    with reading(deadline, f"reading {args.image}"), LayerProgress.for_terminal(quiet=args.quiet) as progress:
        facts = api.inspect_image(
            args.image,
            image_read_options(args, deadline, platform, progress=progress if progress.enabled else None, stats=stats),
        )
    if stats is not None:
        from ..formats.read_stats import render_read_stats

        print(render_read_stats(stats), file=sys.stderr)
    if not args.show_env:
        from ..model.env_redact import redact_facts

        facts = redact_facts(facts)
    for spec in outputs:
        if spec.format == "json":
            text = render_facts(facts)
        else:
            from ..formats.facts_table import render_facts_table  # rich only when a table is asked for

            text = render_facts_table(facts, color=spec.path is None and sys.stdout.isatty())
        write_output(spec, text)
    return 0
