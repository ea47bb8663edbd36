"""`imgcheck job check FILE`: check a launch spec with the image it names and the nodes it runs on."""

from __future__ import annotations

from ..errors import UsageError
from .check_cmd import add_check_args

NAMES = ("job",)


def register(sub) -> None:
    p = sub.add_parser("job", help="check a job spec (Kubernetes, Slurm/Pyxis, docker run, compose) with its image",
                       description="Work with launch specs.")
    jsub = p.add_subparsers(dest="job_command", metavar="COMMAND", required=True)
    c = jsub.add_parser("check", help="check the spec, the image it names and the nodes together",
                        description="Read FILE, take the image from it (or --image) and run `imgcheck check IMAGE "
                                    "--job FILE`.")
    c.add_argument("spec", metavar="FILE", help="the launch spec")
    c.add_argument("--image", help="the image to check, when the spec names none or several")
    add_check_args(c)
    c.set_defaults(func=run)


def _image(jobs, asked: str | None) -> str:
    if asked:
        return asked
    images = sorted({j.image for j in jobs if j.image})
    if not images:
        raise UsageError("the spec names no image it is known to run (a shell variable?): give --image REF")
    if len(images) > 1:
        raise UsageError(f"the spec runs {len(images)} images ({', '.join(images)}): choose one with --image")
    image = images[0]
    # Pyxis/enroot write a registry as REGISTRY#IMAGE; imgcheck takes REGISTRY/IMAGE
    return image.replace("#", "/", 1) if "#" in image else image


def run(args) -> int:
    from ..job import load_job_spec
    from ..job.parse import for_image
    from . import check_cmd

    if args.job:
        raise UsageError("give the spec once: `imgcheck job check FILE` (or `imgcheck check IMAGE --job FILE`)")
    jobs = load_job_spec(args.spec)
    args.image = _image(jobs, args.image)
    args.job = args.spec
    args.job_facts = tuple(for_image(jobs, args.image))
    return check_cmd.run(args)
