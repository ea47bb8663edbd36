"""Entry point. Picks the parser for the first word, runs the command, and maps every error to its exit
code and one line on stderr (never exit 1, never a traceback unless --debug asks for one, and then the
exit code stays the same).

The first word decides: a command name (`imgcheck node list`), or else the default command `check`
whose IMAGE it is (`imgcheck IMAGE --node N`), with check's options allowed before IMAGE. The top-level
options take no value (--debug is taken out beforehand), so the first word is always argv[0].
"""

from __future__ import annotations

import argparse
import difflib
import sys
import traceback
from typing import NoReturn

from .. import __version__
from ..errors import EXIT_INTERRUPTED, EXIT_UNAVAILABLE, EXIT_USAGE, ImgcheckError, UsageError
from ..user_text import clip, clip_words
from . import commands

COMMANDS = commands.names()
_NOT_A_COMMAND = ("-h", "--help", "--version")  # first words the top-level parser itself answers
_TYPO_CUTOFF = 0.75  # difflib ratio: chek, nod, serv, recomend are typos; ubuntu, pytorch, trainer are images

USAGE = (
    "imgcheck [--version] [--debug] COMMAND [ARGS]\n"
    "       imgcheck [CHECK OPTIONS] IMAGE [CHECK OPTIONS]   (= imgcheck check ...)"
)
EPILOG = (
    f"A first word that is no command is the IMAGE of `{commands.DEFAULT}`, and check's options may come "
    "before it: `imgcheck IMAGE --node N`, `imgcheck --node N -o json IMAGE`. A bare first word close to a "
    "command name (chek, nod) is refused as a typo (exit 2): to check an image of such a name write "
    "`imgcheck check NAME` or a fuller reference (NAME:latest, ./NAME). --debug may go anywhere before `--`."
)


class Parser(argparse.ArgumentParser):
    """argparse's own errors ("invalid choice: '...'") quote input too: cut long input short there as well.
    Subcommand parsers are made of the same class, so every command's usage errors go through here."""

    def error(self, message: str) -> NoReturn:
        super().error(clip_words(message))


def _add_globals(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--version", action="version", version=f"imgcheck {__version__}")
    parser.add_argument(
        "--debug",
        action="store_true",  # taken out of argv before parsing (_take_debug)
        help="also show the traceback of an error (anywhere on the command line; exit codes stay)",
    )


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """`imgcheck COMMAND ...`: every command, or only `command`'s module when it is known (start-up time)."""
    parser = Parser(
        prog="imgcheck",
        usage=USAGE,
        epilog=EPILOG,
        description="Predict whether a container image's RDMA/NCCL/CUDA userspace works on your nodes.",
    )
    _add_globals(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", prog="imgcheck")  # not USAGE's two lines
    commands.register_all(sub, only=command)
    return parser


def build_default_parser() -> argparse.ArgumentParser:
    """`imgcheck [CHECK OPTIONS] IMAGE ...`: the default command's own parser under the program's name.

    argparse has no default subcommand; a second parser for the bare form (not `check` spliced into
    argv) lets options come before IMAGE and keeps argparse's own errors and --help for it.
    """
    parser = Parser(
        prog="imgcheck",
        usage="imgcheck [CHECK OPTIONS] IMAGE [CHECK OPTIONS]",
        epilog=EPILOG + " " + commands.default_exit_codes(),
        description=commands.default_description(),
    )
    _add_globals(parser)
    commands.configure_default(parser)
    parser.set_defaults(command=commands.DEFAULT)  # as `imgcheck check ...` would set it
    return parser


def looks_like_reference(word: str) -> bool:
    """A tag, digest, registry, scheme or path: an image however close its name is to a command."""
    return any(c in word for c in ":/@")


def refuse_typo(word: str) -> None:
    """A bare first word that is no command but close to one is a mistyped command, not an image name."""
    if looks_like_reference(word):
        return
    close = difflib.get_close_matches(word, sorted(COMMANDS), n=1, cutoff=_TYPO_CUTOFF)
    if close:
        raise UsageError(
            f"unknown command {clip(word)!r} (did you mean {close[0]!r}?); to check an image named "
            f"{word!r} write `imgcheck {commands.DEFAULT} {word}` or {word}:TAG"
        )


def parser_for(argv: list[str]) -> argparse.ArgumentParser:
    """The parser that fits the command line's first word; it then parses the whole command line."""
    first = argv[0] if argv else None
    if first is None or first in COMMANDS or first in _NOT_A_COMMAND:
        return build_parser(first if first in COMMANDS else None)
    if not first.startswith("-"):  # options first (`imgcheck --node N IMAGE`) can only mean the default command
        refuse_typo(first)
    return build_default_parser()


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
    parser = parser_for(argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed its message (or the help: code 0)
        return int(exc.code) if isinstance(exc.code, int) else EXIT_USAGE
    args.debug = debug
    if not getattr(args, "func", None):  # `imgcheck` alone, or a command group without its subcommand
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
        print(f"imgcheck: error: {clip_words(message)}", file=sys.stderr)
        return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
