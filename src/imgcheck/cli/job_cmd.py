"""`imgcheck job check FILE...`: check launch specs with the images they name and the nodes they run on."""

from __future__ import annotations

import argparse
import copy
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import ImgcheckError, UsageError
from .check_cmd import add_check_args

if TYPE_CHECKING:
    from ..job.model import JobFacts
    from .common_args import Subparsers

# Reports that can follow one another on stdout; json, sarif and junit are one document per run.
SEVERAL_FORMATS = ("table", "markdown")

NAMES = ("job",)


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "job",
        help="check a job spec (Kubernetes, Slurm/Pyxis, docker run, compose) with its image",
        description="Work with launch specs.",
    )
    jsub = p.add_subparsers(dest="job_command", metavar="COMMAND", required=True)
    c = jsub.add_parser(
        "check",
        help="check the spec, the image it names and the nodes together",
        description="Read FILE, take the image from it (or --image) and run `imgcheck check IMAGE "
        "--job FILE`. With several FILEs each is checked in turn (table or markdown "
        "reports one after another) and the exit code is the highest of theirs.",
    )
    c.add_argument("spec", metavar="FILE", nargs="+", help="the launch spec(s)")
    c.add_argument("--image", help="the image to check, when the spec names none or several")
    add_check_args(c)
    c.set_defaults(func=run)


def _image(jobs: Sequence[JobFacts], asked: str | None) -> str:
    from ..job.model import FORM_SQUASHFS

    if asked:
        return asked
    images = sorted({j.image for j in jobs if j.image})
    if not images:
        why = next((n for j in jobs for n in j.notes if "container-image" in n), None)
        raise UsageError(
            "the spec names no image it is known to run"
            + (f" ({why})" if why else " (a shell variable?)")
            + ": give --image REF"
        )
    if len(images) > 1:
        raise UsageError(f"the spec runs {len(images)} images ({', '.join(images)}): choose one with --image")
    image = images[0]
    if any(j.image == image and j.image_form == FORM_SQUASHFS for j in jobs):
        return f"enroot:{image}"  # Pyxis runs a squashfs file on the node's filesystem: read it where it is
    # Pyxis/enroot write a registry as REGISTRY#IMAGE; imgcheck takes REGISTRY/IMAGE
    return image.replace("#", "/", 1) if "#" in image else image


def run(args: argparse.Namespace) -> int:
    if args.job:
        raise UsageError("give the spec once: `imgcheck job check FILE` (or `imgcheck check IMAGE --job FILE`)")
    if len(args.spec) == 1:
        return _check(args, args.spec[0])
    outputs = args.output or ["table"]  # not json when stdout is no terminal: reports follow one another
    from .output import is_stdout

    if any(o.partition("=")[0] not in SEVERAL_FORMATS or not is_stdout(o.partition("=")[2] or None) for o in outputs):
        raise UsageError(
            f"with several FILEs give -o {' or -o '.join(SEVERAL_FORMATS)} (to stdout); "
            "check one FILE at a time for json, sarif, junit or a file"
        )
    worst = 0
    for spec in args.spec:
        print(f"== imgcheck job check {spec}", flush=True)
        try:
            code = _check(copy.copy(args), spec, outputs)
        except ImgcheckError as exc:  # one file's bad input does not hide the others' results
            message = " ".join(str(exc).split())
            print(
                f"imgcheck: error: {message if spec in message else f'{spec}: {message}'}", file=sys.stderr, flush=True
            )
            code = exc.exit_code
        worst = max(worst, code)
    return worst


def _check(args: argparse.Namespace, spec: str, outputs: list[str] | None = None) -> int:
    from ..job import load_job_spec
    from ..job.parse import for_image
    from . import check_cmd

    jobs = load_job_spec(spec)
    args.image = _image(jobs, args.image)
    args.job = spec
    args.job_facts = tuple(for_image(jobs, args.image))
    if outputs is not None:
        args.output = outputs
    return check_cmd.run(args)
