"""Run a runtime's command line with a time limit; on timeout the whole process group is killed."""

from __future__ import annotations

import os
import signal
import subprocess

from ...errors import UnavailableError


def run_cli(argv: list[str], timeout: float) -> tuple[int | None, str, str, bool]:
    """(exit code or None, stdout, stderr, timed_out)."""
    try:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True
        )  # its own group, so a timeout kills children too
    except OSError as exc:
        raise UnavailableError(f"cannot run {argv[0]}: {exc.strerror}") from None
    try:
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), False
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        return None, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), True
    except BaseException:  # KeyboardInterrupt: leave nothing running
        _kill_group(proc)
        proc.communicate()
        raise


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
