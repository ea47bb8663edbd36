"""`imgcheck matrix validate [DIR]`: check the compat matrix (the shipped one by default).
`imgcheck matrix docs [--write REPO]`: docs/rules.md (rule table and rule texts) from rules.json."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ..errors import EXIT_OK, EXIT_USAGE

if TYPE_CHECKING:
    from .common_args import Subparsers

NAMES = ("matrix",)


def register(sub: Subparsers) -> None:
    p = sub.add_parser("matrix", help="the compatibility matrix: validate it, or generate its rule docs")
    msub = p.add_subparsers(dest="matrix_command", metavar="ACTION", required=True)
    v = msub.add_parser(
        "validate",
        help="check every row has a source and a confidence, versions parse, "
        "and the rows the engine needs exist; exit 2 with one line per problem",
    )
    v.add_argument("directory", nargs="?", help="a matrix directory (default: the one shipped with imgcheck)")
    v.set_defaults(func=run_validate)
    d = msub.add_parser(
        "docs", help="print docs/rules.md generated from rules.json; --write REPO rewrites REPO/docs/rules.md"
    )
    d.add_argument("--write", metavar="REPO", help="the repository root to update")
    d.set_defaults(func=run_docs)


def run_docs(args: argparse.Namespace) -> int:
    import os

    from ..engine import REQUIRED_ROWS
    from ..errors import UnavailableError
    from ..matrix import load_matrix
    from ..matrix.docs import rules_markdown

    matrix = load_matrix(required=REQUIRED_ROWS)
    text = rules_markdown(matrix)
    if not args.write:
        sys.stdout.write(text)
        return EXIT_OK
    docs_dir = os.path.join(args.write, "docs")
    if not os.path.isdir(docs_dir):
        raise UnavailableError(f"{docs_dir}: no such directory (give the repository root)")
    with open(os.path.join(docs_dir, "rules.md"), "w", encoding="utf-8") as fh:
        fh.write(text)
    print(f"wrote {os.path.join(docs_dir, 'rules.md')}")
    return EXIT_OK


def run_validate(args: argparse.Namespace) -> int:
    from ..engine import REQUIRED_ROWS
    from ..matrix import read_files, validate_files
    from ..matrix.files import digest_of

    files, location = read_files(args.directory)
    problems = validate_files(files, REQUIRED_ROWS)
    if problems:
        for problem in problems:
            print(f"{location}: {problem}", file=sys.stderr)
        return EXIT_USAGE
    import json

    version = json.loads(files["matrix.json"]).get("version")
    tables = json.loads(files["schema.json"])["tables"].values()
    rows = sum(len(json.loads(files[spec["file"]])["rows"]) for spec in tables)
    print(f"{location}: valid; version {version}, {digest_of(files)}, {len(files)} files, {rows} rows")
    return EXIT_OK
