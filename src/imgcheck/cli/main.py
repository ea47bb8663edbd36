"""Entry point. Maps every error to its exit code and one line on stderr (never exit 1, never a traceback
unless --debug asks for one, and then the exit code stays the same)."""

from __future__ import annotations

import argparse
import sys
import traceback

from .. import __version__
from ..errors import EXIT_INTERRUPTED, EXIT_UNAVAILABLE, EXIT_USAGE, ImgcheckError
from . import commands

# First words that name a subcommand; anything else is an image reference for `check`.
SUBCOMMANDS = commands.names()


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="imgcheck",
        description="Predict whether a container image's RDMA/NCCL/CUDA userspace works on your nodes.",
    )
    parser.add_argument("--version", action="version", version=f"imgcheck {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="also show the traceback of an error (anywhere on the command line; exit codes stay)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.register_all(sub, only=command)
    return parser


def _take_debug(argv: list[str]) -> tuple[list[str], bool]:
    """--debug may come before or after the subcommand (but not after `--`, where it is an operand)."""
    end = argv.index("--") if "--" in argv else len(argv)
    head = [a for a in argv[:end] if a != "--debug"]
    return head + argv[end:], len(head) != end


def _unexpected(exc: BaseException) -> tuple[str, int]:
    """A bug or an error a library raised that imgcheck did not wrap: still one line and exit 2 or 3.

    OSError covers what stops imgcheck obtaining its input (connections, files, permissions; requests'
    and the Docker SDK's HTTP errors derive from it), so it is 3; anything else is taken as bad input (2).
    """
    if isinstance(exc, RecursionError):
        return "input nested too deeply to process", EXIT_USAGE
    if isinstance(exc, MemoryError):
        return "out of memory while reading the input", EXIT_UNAVAILABLE
    code = EXIT_UNAVAILABLE if isinstance(exc, OSError) else EXIT_USAGE
    text = " ".join(str(exc).split())[:200] or "no message"
    return f"unexpected {type(exc).__name__}: {text} (--debug shows the traceback)", code


def _dispatch(argv: list[str], debug: bool) -> int:
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
    args.debug = debug
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    return int(args.func(args))


def main(argv: list[str] | None = None) -> int:
    argv, debug = _take_debug(list(sys.argv[1:] if argv is None else argv))
    try:  # around building the parser too: a command module that fails to import is one line as well
        return _dispatch(argv, debug)
    except KeyboardInterrupt:
        print("imgcheck: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - the one place every error becomes an exit code
        if debug:
            traceback.print_exc(file=sys.stderr)
        if isinstance(exc, ImgcheckError):
            message, code = " ".join(str(exc).split()), exc.exit_code  # always exactly one line
        else:
            message, code = _unexpected(exc)
        print(f"imgcheck: error: {message}", file=sys.stderr)
        return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
