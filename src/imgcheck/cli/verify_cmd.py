"""`imgcheck verify IMAGE --runtime docker|enroot|apptainer`: ground truth on this node."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from ..errors import UsageError
from .output import parse_outputs, write_output

if TYPE_CHECKING:
    from .common_args import Subparsers

NAMES = ("verify",)
FORMATS = ("table", "json")


def _memlock(value: str) -> int | None:
    if value == "unlimited":
        return -1
    if value == "default":
        return None
    try:
        number = int(value)
    except ValueError:
        raise UsageError(f"--memlock {value!r}: give unlimited, default or a number of bytes") from None
    if number < 0:
        raise UsageError(f"--memlock {value!r}: must not be negative")
    return number


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "verify", help="run a verifier inside the image on this node and compare with the static prediction"
    )
    p.add_argument(
        "image",
        help="docker: a local image reference; enroot: a .sqsh file or container name; "
        "apptainer: a SIF file or docker://...",
    )
    p.add_argument(
        "--runtime",
        choices=("docker", "enroot", "apptainer"),
        default="docker",
        help="container runtime to run the verifier with (default docker)",
    )
    p.add_argument("--timeout", type=float, default=120.0, help="seconds before the verifier is killed (default 120)")
    p.add_argument(
        "--gpus",
        choices=("auto", "all", "none"),
        default="auto",
        help="pass the node's GPUs in (auto: when /dev/nvidiactl exists)",
    )
    p.add_argument("--no-gpu-test", action="store_true", help="do not load libcuda in the container")
    p.add_argument(
        "--memlock",
        default="unlimited",
        help="RLIMIT_MEMLOCK in the container: unlimited (default), default (the runtime's), or bytes",
    )
    p.add_argument(
        "--static",
        metavar="REF",
        dest="static_ref",
        help="read the static facts from REF instead (e.g. facts:FILE, docker-archive:PATH)",
    )
    p.add_argument("--no-static", action="store_true", help="only run the verifier; no predictions to compare")
    p.add_argument("-o", "--output", action="append", metavar="FORMAT[=PATH]", help="table or json (repeatable)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..verify.report import exit_code_of, render_json, render_text
    from ..verify.run import verify_image

    outputs = parse_outputs(args.output, FORMATS)
    if args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    image = args.image
    if args.runtime == "docker" and image.startswith("docker:") and not image.startswith("docker://"):
        image = image[len("docker:") :]  # imgcheck's own spelling of a daemon image; Docker itself wants REF
    report = verify_image(
        image,
        args.runtime,
        timeout=args.timeout,
        gpus=args.gpus,
        memlock=_memlock(args.memlock),
        static_ref=args.static_ref,
        use_static=not args.no_static,
        test_gpu=not args.no_gpu_test,
    )
    for spec in outputs:
        write_output(spec, render_json(report) if spec.format == "json" else render_text(report))
    return exit_code_of(report)
