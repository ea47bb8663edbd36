"""`imgcheck catalog add IMAGE...` / `imgcheck catalog list`: the base-image catalog recommend draws from."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ..errors import UsageError
from ..sources.platform import parse_platform
from ..sources.read_options import ReadOptions
from .output import parse_outputs, write_output

if TYPE_CHECKING:
    from .common_args import Subparsers

NAMES = ("catalog",)
FORMATS = ("table", "json")


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "catalog",
        help="the base-image catalog: add the images you use, list what is known",
        description="The shipped catalog (NVIDIA release notes) plus a local one under "
        "$IMGCHECK_HOME/catalog/ with the facts of images you inspected.",
    )
    verbs = p.add_subparsers(dest="catalog_verb", metavar="{add,import,list}")
    add = verbs.add_parser("add", help="inspect images and store their facts in the local catalog")
    add.add_argument("images", nargs="+", metavar="IMAGE")
    add.add_argument("--platform", help="os/arch[/variant] to pick from a multi-platform image")
    add.add_argument(
        "--insecure-registry",
        action="append",
        default=[],
        metavar="HOST[:PORT]",
        help="allow plain HTTP (or an unverified certificate) for this registry; repeatable",
    )
    add.add_argument("--no-cache", action="store_true", help="neither use nor fill the layer cache")
    add.add_argument(
        "--timeout", metavar="DURATION", help="the most reading all the images may take: seconds, or 90s, 5m, 1h"
    )
    add.add_argument("-q", "--quiet", action="store_true", help="no per-image line")
    add.set_defaults(func=run_add)
    imp = verbs.add_parser(
        "import",
        help="add catalog rows from a JSON or YAML file (your base images, not inspected)",
        description="Rows in the shipped base_images shape (image, tag or release, framework, "
        "framework_version, distro, python, cuda, nccl, nccl_origin, rdma_core, "
        "rdma_flavor, mlnx_ofed, doca, ucx, hpcx, min_driver, source, confidence, note); "
        "fields left out are unknown. Every row is checked before any is stored.",
    )
    imp.add_argument("file", metavar="FILE")
    imp.add_argument("--matrix", metavar="DIR", help="use this compat matrix directory instead of the shipped one")
    imp.add_argument("-q", "--quiet", action="store_true", help="no per-row line")
    imp.set_defaults(func=run_import)
    ls = verbs.add_parser("list", help="list catalog images (local first, then shipped)")
    ls.add_argument("--local", action="store_true", help="only images added with `catalog add` or `catalog import`")
    ls.add_argument("-o", "--output", action="append", metavar="FORMAT[=PATH]", help="table or json (repeatable)")
    ls.add_argument("--matrix", metavar="DIR", help="use this compat matrix directory instead of the shipped one")
    ls.set_defaults(func=run_list)
    p.set_defaults(func=_missing_verb)


def _missing_verb(args: argparse.Namespace) -> int:
    raise UsageError(
        "catalog needs a verb: `imgcheck catalog add IMAGE...`, `imgcheck catalog import FILE` "
        "or `imgcheck catalog list`"
    )


def run_add(args: argparse.Namespace) -> int:
    from ..recommend_entry import catalog_add
    from .common_args import read_deadline, reading

    deadline = read_deadline(args)
    with reading(deadline, "reading " + " ".join(args.images)):
        added = catalog_add(
            args.images,
            options=ReadOptions(
                platform=parse_platform(args.platform) if args.platform else None,
                use_cache=not args.no_cache,
                insecure_registries=tuple(args.insecure_registry),
                deadline=deadline,
            ),
        )
    if not args.quiet:
        for facts, _path in added:
            lib = facts.rdma.libibverbs
            what = f"rdma-core {lib.rdma_core} (PABI {lib.private_abi})" if lib else "no libibverbs"
            sys.stdout.write(f"added {facts.reference}{'@' + facts.digest if facts.digest else ''}: {what}\n")
    return 0


def run_import(args: argparse.Namespace) -> int:
    from ..recommend_entry import catalog_import

    entries = catalog_import(args.file, matrix_path=args.matrix)
    if not args.quiet:
        for e in entries:
            what = "checkable" if not e.not_checkable else f"listed, not checkable: {e.not_checkable}"
            sys.stdout.write(f"imported {e.reference} ({e.confidence}): {what}\n")
    return 0


def run_list(args: argparse.Namespace) -> int:
    from ..formats.recommend_table import catalog_json, catalog_table
    from ..recommend_entry import catalog_list

    outputs = parse_outputs(args.output, FORMATS)
    entries, problems = catalog_list(matrix_path=args.matrix, local_only=args.local)
    for spec in outputs:
        write_output(
            spec, catalog_json(entries, problems) if spec.format == "json" else catalog_table(entries, problems)
        )
    return 0
