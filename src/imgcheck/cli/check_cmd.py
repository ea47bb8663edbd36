"""`imgcheck check IMAGE` (also the bare `imgcheck IMAGE`): predict multi-node NCCL/RDMA failures on nodes."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

from .. import api
from ..errors import (
    EXIT_FINDINGS,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_UNAVAILABLE,
    EXIT_UNDECIDED,
    EXIT_USAGE,
    ImgcheckError,
    UsageError,
)
from ..model.report import FAIL_ON_UNKNOWN, at_or_above, report_outcome, unconditional
from ..sources.platform import parse_platform
from .common_args import (
    add_image_read_args,
    add_matrix_arg,
    add_node_args,
    add_report_args,
    image_read_options,
    read_deadline,
    reading,
    selected_nodes,
)
from .output import parse_outputs, write_output

if TYPE_CHECKING:
    from ..formats.progress import LayerProgress
    from ..job.model import JobFacts
    from ..model.node import NodeFacts
    from ..model.report import Report, Suppression
    from ..sources.platform import Platform
    from .common_args import Subparsers

NAMES = ("check",)
FAIL_ON = ("error", "warning", "unknown", "never")
DESCRIPTION = (
    "Predict multi-node NCCL/RDMA failures of IMAGE on the given nodes. `imgcheck IMAGE ...` "
    "is the same command, and its options may also come before IMAGE."
)


EXIT_CODES = (
    "exit codes: "
    f"{EXIT_OK} nothing at or above --fail-on; "
    f"{EXIT_FINDINGS} findings at or above --fail-on (every -o report is still written); "
    f"{EXIT_USAGE} usage error or bad input (reference, facts file, job spec, matrix, ignore file); "
    f"{EXIT_UNAVAILABLE} the image or node facts could not be obtained (network, auth, missing image, "
    f"daemon down, --timeout passed); "
    f"{EXIT_UNDECIDED} with --fail-on unknown only: no error found, but a check that could give one was not "
    f"decided; "
    f"{EXIT_INTERRUPTED} interrupted"
)


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "check",
        help="predict whether an image's RDMA/NCCL/CUDA userspace works on your nodes",
        description=DESCRIPTION,
        epilog=EXIT_CODES,
    )
    configure(p)


def configure(p: argparse.ArgumentParser) -> None:
    """IMAGE and every option: `imgcheck check`'s parser and the bare `imgcheck IMAGE` parser alike."""
    p.add_argument(
        "image",
        metavar="IMAGE",
        help="name[:tag][@digest], docker-archive:PATH[:NAME:TAG], oci:PATH[:REF], "
        "oci-archive:PATH, a bare image.tar or OCI layout directory, facts:PATH, ...",
    )
    add_check_args(p)
    p.set_defaults(func=run)


def add_check_args(p: argparse.ArgumentParser) -> None:
    """Everything `check` takes after IMAGE (also used by `imgcheck job check`)."""
    p.add_argument(
        "--job",
        metavar="FILE",
        help="the launch spec (Kubernetes YAML, Slurm/Pyxis script, docker run script, compose file): "
        "check what it gives the container too",
    )
    add_node_args(p)
    add_report_args(p, FAIL_ON)
    add_matrix_arg(p)
    add_image_read_args(
        p,
        platform_help="os/arch[/variant] to pick from a multi-platform image "
        "(default: the nodes' architecture when they agree)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    p.add_argument(
        "--show-env",
        action="store_true",
        help="show every image Env value (default: only NCCL_*, UCX_*, CUDA_*, ... and *PATH; the rest redacted)",
    )


def _flag_suppressions(args: argparse.Namespace) -> tuple[Suppression, ...]:
    from ..engine import parse_ignore

    if not args.ignore:
        if args.reason:
            raise UsageError("--reason goes with --ignore")
        return ()
    if not args.reason or not all(r.strip() for r in args.reason):
        raise UsageError("--ignore needs --reason TEXT saying why the finding is acceptable")
    if len(args.reason) not in (1, len(args.ignore)):
        raise UsageError("give one --reason for all --ignore flags, or one per --ignore")
    reasons = args.reason * len(args.ignore) if len(args.reason) == 1 else args.reason
    return tuple(parse_ignore(spec, reason) for spec, reason in zip(args.ignore, reasons))


def _suppressions(args: argparse.Namespace) -> tuple[Suppression, ...]:
    """--ignore flags, then the ignore file's entries; every rule id must be one the engine has."""
    from ..engine import RULE_IDS
    from .ignore_file import check_rule_ids, default_ignore_file, load_ignore_file

    flags = _flag_suppressions(args)
    check_rule_ids(flags, RULE_IDS, "--ignore")
    if args.no_ignore_file:
        if args.ignore_file:
            raise UsageError("--ignore-file and --no-ignore-file contradict each other")
        return flags
    path = args.ignore_file or default_ignore_file()
    if path is None:
        return flags
    loaded = load_ignore_file(path)
    check_rule_ids(loaded.suppressions, RULE_IDS, path)
    for line in loaded.expired:
        print(f"imgcheck: warning: {line}", file=sys.stderr)
    return flags + loaded.suppressions


def _platform(args: argparse.Namespace, nodes: Iterable[NodeFacts]) -> tuple[Platform | None, Platform | None]:
    """(asked, preferred): --platform must exist in the image; the nodes' architecture is only preferred."""
    if args.platform:
        return parse_platform(args.platform), None
    return None, _node_platform(nodes)


def _node_platform(nodes: Iterable[NodeFacts]) -> Platform | None:
    arches = {n.arch for n in nodes if n.arch}
    if len(arches) != 1:
        return None  # unknown or mixed architectures: the image's default platform (give --platform to choose)
    try:
        return parse_platform(f"linux/{arches.pop()}")
    except ImgcheckError:
        return None  # an odd arch string in node facts should not block the check


def _progress(quiet: bool) -> LayerProgress | None:
    """Layer-read progress for a person at a terminal; None (nothing to call) otherwise."""
    try:
        from ..formats.progress import LayerProgress
    except ImportError:
        return None
    progress = LayerProgress.for_terminal(quiet=quiet)
    return progress if getattr(progress, "enabled", False) else None


def _jobs(args: argparse.Namespace) -> tuple[JobFacts, ...]:
    """The spec's containers that run the image (--job), or () without a spec."""
    path = getattr(args, "job", None)
    if not path:
        return ()
    from ..job import load_job_spec
    from ..job.parse import for_image

    return tuple(getattr(args, "job_facts", None) or for_image(load_job_spec(path), args.image))


def exit_code(report: Report, fail_on: str) -> int:
    """0 nothing at or above --fail-on; 1 findings at or above it; 4 (--fail-on unknown) no error found but a
    check that could give one was not decided (the report's outcome is "incomplete")."""
    if any(at_or_above(f.severity, fail_on) for f in unconditional(report.findings)):  # a hypothesis fails nothing
        return EXIT_FINDINGS
    if fail_on == FAIL_ON_UNKNOWN and report_outcome(report) == "incomplete":
        return EXIT_UNDECIDED
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    from ..formats.report_formats import REPORT_FORMATS, render

    outputs = parse_outputs(args.output, tuple(REPORT_FORMATS))
    jobs = _jobs(args)  # a bad spec fails before any image bytes are read
    suppressions = _suppressions(args)
    nodes = selected_nodes(args)
    platform, preferred = _platform(args, nodes)
    deadline = read_deadline(args)
    options = image_read_options(args, deadline, platform)
    progress = _progress(args.quiet)

    def check(progress: LayerProgress | None = None) -> Report:
        return api.check_image(
            args.image,
            nodes,
            dataclasses.replace(options, progress=progress),
            matrix_path=args.matrix,
            suppressions=suppressions,
            prefer_platform=preferred,
            jobs=jobs,
        )

    with reading(deadline, f"reading {args.image}"):
        if progress is None:
            report = check()
        else:
            with progress:
                report = check(progress)
    if not args.show_env:  # image Env often holds build-time tokens; reports travel further than images
        from ..model.env_redact import redact_report

        report = redact_report(report)
    for spec in outputs:  # every report is written before a failing exit code
        color = spec.path is None and sys.stdout.isatty()
        write_output(
            spec,
            render(
                report,
                spec.format,
                color=color,
                fail_on=args.fail_on,
                verbose=args.verbose,
                fleet=getattr(args, "fleet", None),
            ),
        )
    return exit_code(report, args.fail_on)
