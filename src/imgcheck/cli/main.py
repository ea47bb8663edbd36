"""Entry point. Maps every ImgcheckError to its exit code and one line on stderr."""

from __future__ import annotations

import argparse
import sys

from .. import __version__
from ..errors import EXIT_INTERRUPTED, EXIT_USAGE, ImgcheckError
from . import commands

# First words that name a subcommand; anything else is an image reference for `check`.
SUBCOMMANDS = commands.names()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="imgcheck",
        description="Predict whether a container image's RDMA/NCCL/CUDA userspace works on your nodes.",
    )
    parser.add_argument("--version", action="version", version=f"imgcheck {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.register_all(sub, only=command)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # `imgcheck IMAGE ...` is `imgcheck check IMAGE ...`
    first = next((a for a in argv if not a.startswith("-")), None)
    if first is not None and first not in SUBCOMMANDS and not any(a in ("-h", "--help", "--version") for a in argv[:1]):
        idx = argv.index(first)
        argv.insert(idx, "check")
    command = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(None if any(a in ("-h", "--help") for a in argv[:1]) else command)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed its message
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return int(args.func(args))
    except ImgcheckError as exc:
        if args.debug:
            raise
        message = " ".join(str(exc).split())  # always exactly one line
        print(f"imgcheck: error: {message}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("imgcheck: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - CI reads exit 1 as "findings": nothing else may end in 1
        if args.debug:
            raise
        return _unexpected(exc)


def _unexpected(exc: Exception) -> int:
    """Anything not an ImgcheckError: still one line and exit 2 (bad input) or 3 (cannot obtain)."""
    from ..errors import EXIT_UNAVAILABLE

    if isinstance(exc, RecursionError):
        message, code = "input nested too deeply to process", EXIT_USAGE
    elif isinstance(exc, MemoryError):
        message, code = "out of memory while reading the input", EXIT_UNAVAILABLE
    elif isinstance(exc, OSError):
        message, code = " ".join(str(exc).split()) or exc.__class__.__name__, EXIT_UNAVAILABLE
    else:
        text = " ".join(str(exc).split())[:200]
        message = f"unexpected {exc.__class__.__name__}: {text} (--debug shows the traceback; please report it)"
        code = EXIT_USAGE
    print(f"imgcheck: error: {message}", file=sys.stderr)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
