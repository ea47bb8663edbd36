"""`imgcheck triage LOG... [-] [--image IMAGE] [--node NAME | --node-facts FILE] [-o table|json]`.

Exit codes: 0 no known failure signature, 1 signature(s) found, 2 bad input (unreadable log,
bad signature file), 3 the image or node facts could not be obtained.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..errors import EXIT_FINDINGS, EXIT_OK
from ..sources.platform import parse_platform
from ..triage.api import triage
from ..triage.render import render_json, render_text
from ..triage.result import VERDICT_FOUND
from .output import parse_outputs, write_output

if TYPE_CHECKING:
    from .common_args import Subparsers

NAMES = ("triage",)
FORMATS = ("table", "json")


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "triage",
        help="from a failed job's logs to the first failure, its cause candidates and next commands",
        description="Read NCCL/PyTorch/kernel logs of a failed multi-node job (several rank logs at once, "
        "or - for stdin), find the first failing rank and its known signature, and print the "
        "cause candidates in order with the next command to run.",
    )
    p.add_argument("logs", nargs="+", metavar="LOG", help="log files (plain or .gz); - reads standard input")
    p.add_argument("--image", help="join with this image's static facts (any imgcheck IMAGE reference, or facts:PATH)")
    p.add_argument("--job", metavar="SPEC", help="the job's launch spec (Kubernetes YAML, compose, docker run, sbatch)")
    node = p.add_mutually_exclusive_group()
    node.add_argument("--node", help="join with this node from the inventory")
    node.add_argument("--node-facts", metavar="FILE", help="join with node facts from `imgcheck node probe`")
    p.add_argument("--signatures", metavar="FILE", help="use this signatures file instead of the built-in one")
    p.add_argument("--platform", help="os/arch[/variant] to pick from a multi-platform image")
    p.add_argument("--timeout", metavar="DURATION", help="the most reading --image may take: seconds, or 90s, 5m, 1h")
    p.add_argument(
        "-v", "--verbose", action="store_true", help="also show the causes the facts make unlikely (hidden by default)"
    )
    p.add_argument("-o", "--output", action="append", metavar="FORMAT[=PATH]", help="table or json (repeatable)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    outputs = parse_outputs(args.output, FORMATS)
    platform = parse_platform(args.platform) if args.platform else None
    from .common_args import read_deadline, reading

    deadline = read_deadline(args)
    import contextlib

    with reading(deadline, f"reading {args.image}") if args.image else contextlib.nullcontext():
        report = triage(
            args.logs,
            image=args.image,
            node=args.node,
            node_facts=args.node_facts,
            job=args.job,
            signatures=args.signatures,
            platform=platform,
            deadline=deadline,
        )
    for spec in outputs:
        write_output(spec, render_json(report) if spec.format == "json" else render_text(report, verbose=args.verbose))
    return EXIT_FINDINGS if report.verdict == VERDICT_FOUND else EXIT_OK
