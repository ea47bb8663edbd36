"""A total deadline for reading images (`--timeout`, like trivy's): one object, carried in ReadOptions.

The registry client clamps each request's timeouts and back-off sleeps to what is left and stops
retrying once it has passed, so a registry that accepts and then hangs ends in one clear line instead
of minutes of retried 60-second reads. `read_guard()` is the command line's backstop for whatever
else blocks (a read in another library, a local file on a hung mount): at the deadline SIGALRM ends
the blocking call in the main thread, and layer reader processes are stopped as after Ctrl-C. The
same guard prints one line on stderr when a read is slow and stderr is no terminal (a CI log shows no
progress display, so a silent wait would look like a hang).
"""

from __future__ import annotations

import math
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType
from typing import TextIO

from .errors import UnavailableError, UsageError

SLOW_NOTICE_SECONDS = 20.0  # a read still going after this long gets one line on a non-terminal stderr
_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|h)?\s*$")
_UNIT = {None: 1.0, "ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
MAX_SECONDS = 24 * 3600.0


def parse_duration(text: str, what: str = "--timeout") -> float:
    """`90`, `90s`, `5m`, `1.5h` -> seconds; more than 0 and at most a day."""
    from .user_text import clip

    match = _DURATION.match(text or "")
    if not match:
        raise UsageError(f"{what} {clip(text)!r}: give seconds (90), or a number with s, m or h (5m)")
    seconds = float(match.group(1)) * _UNIT[match.group(2)]
    if not math.isfinite(seconds) or seconds <= 0 or seconds > MAX_SECONDS:
        raise UsageError(f"{what} {clip(text)!r}: must be more than 0 and at most 24h")
    return seconds


class DeadlineExceeded(UnavailableError):
    """The total time `--timeout` allowed passed (exit 3: the image could not be obtained in time)."""


class _Alarm(BaseException):
    """Raised by the SIGALRM backstop; a BaseException so no `except Exception` on the way swallows it."""


@dataclass(frozen=True)
class Deadline:
    seconds: float  # the total allowed, for messages
    at: float = field(default=-1.0)  # time.monotonic() when it passes (system-wide: forked workers share it)

    def __post_init__(self) -> None:
        if self.at < 0:
            object.__setattr__(self, "at", time.monotonic() + self.seconds)

    def remaining(self) -> float:
        return self.at - time.monotonic()

    def passed(self) -> bool:
        return self.remaining() <= 0

    def error(self, what: str) -> DeadlineExceeded:
        return DeadlineExceeded(f"--timeout {self.seconds:g}s passed while {what}")

    def check(self, what: str) -> None:
        if self.passed():
            raise self.error(what)

    def clamp(self, seconds: float) -> float:
        """`seconds`, or what is left when less (at least a millisecond: 0 means "no timeout" to sockets)."""
        return max(0.001, min(seconds, self.remaining()))


def _notice_after(after: float | None) -> float:
    if after is not None:
        return after
    try:
        return float(os.environ.get("IMGCHECK_SLOW_NOTICE_SECONDS", SLOW_NOTICE_SECONDS))
    except ValueError:
        return SLOW_NOTICE_SECONDS


@contextmanager
def read_guard(
    deadline: Deadline | None, what: str, notice_after: float | None = None, stream: TextIO | None = None
) -> Iterator[None]:
    """Around a command's read, in the main thread: one line on stderr if it is still going after
    `notice_after` seconds (SLOW_NOTICE_SECONDS, or IMGCHECK_SLOW_NOTICE_SECONDS) and stderr is no terminal
    (at a terminal the progress display shows the read; in a CI log nothing would), and `deadline`'s
    backstop: at the deadline the blocking call is ended and DeadlineExceeded raised.

    One interval timer (SIGALRM), no thread: layer reader processes are forked only while the process has
    one thread, and forked children do not inherit the timer."""
    stream = stream or sys.stderr
    after = _notice_after(notice_after)
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):
        terminal = False
    notice = None if terminal or after <= 0 else time.monotonic() + after
    usable = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    if not usable or (notice is None and deadline is None):
        yield
        return
    started = time.monotonic()
    state = {"noticed": notice is None}

    def arm() -> None:
        due = [t for t in ((None if state["noticed"] else notice), deadline.at if deadline else None) if t]
        if due:
            signal.setitimer(signal.ITIMER_REAL, max(0.001, min(due) - time.monotonic()))

    def ring(_signum: int, _frame: FrameType | None) -> None:
        if deadline is not None and deadline.passed():
            raise _Alarm()
        if not state["noticed"]:
            state["noticed"] = True
            try:
                stream.write(
                    f"imgcheck: still {what} after {time.monotonic() - started:.0f}s "
                    "(a slow or unresponsive registry or daemon; --timeout bounds the whole read)\n"
                )
                stream.flush()
            except (OSError, ValueError):
                pass
        arm()

    previous = signal.signal(signal.SIGALRM, ring)
    arm()
    try:
        yield
    except _Alarm:
        assert deadline is not None
        raise deadline.error(what) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
