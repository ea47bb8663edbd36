"""Progress for long image reads: layers, bytes and rate, on stderr, only for a person at a terminal.

The layer reader calls three methods and never needs to know whether anything is shown:

    progress = LayerProgress.for_terminal(quiet=args.quiet)
    with progress:
        progress.layer_started(digest, size)       # size may be None (unknown)
        progress.layer_bytes(digest, n)            # n more bytes read (compressed bytes, as transferred)
        progress.layer_finished(digest)

It is silent (a no-op) with -q, when stderr is not a TTY (CI logs, pipes), or when TERM=dumb, and it
never writes to stdout, so `-o json` on stdout stays machine-readable. Safe to call from several
reader threads: rich.progress locks its own state, and our dict is guarded.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.progress import TaskID


class LayerProgress:
    """No-op base: what the reader gets when nothing should be shown."""

    enabled = False

    def __enter__(self) -> LayerProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def layer_started(self, digest: str, size: int | None = None) -> None:
        pass

    def layer_bytes(self, digest: str, n: int) -> None:
        pass

    def layer_finished(self, digest: str) -> None:
        pass

    def close(self) -> None:
        pass

    @staticmethod
    def for_terminal(quiet: bool = False, stream: TextIO | None = None) -> LayerProgress:
        """A rich display on ``stream`` (default stderr) if a person can see it, else the no-op."""
        stream = sys.stderr if stream is None else stream
        if quiet or not _is_tty(stream) or os.environ.get("TERM") == "dumb":
            return LayerProgress()
        return RichLayerProgress(stream)


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed or not a real file
        return False


def _short(digest: str) -> str:
    return digest.split(":", 1)[-1][:12]


class RichLayerProgress(LayerProgress):
    """One bar per layer being read plus an overall line, drawn by rich.progress on ``stream``."""

    enabled = True

    def __init__(self, stream: TextIO):
        # rich is imported here so that nothing below the CLI pays for it when progress is off
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        self._console = Console(file=stream, stderr=stream is sys.stderr)
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=self._console,
            transient=True,  # the bars vanish when done; the report is what stays on screen
        )
        self._lock = threading.Lock()
        self._tasks: dict[str, TaskID] = {}
        self._done = 0
        self._started = False
        self._overall: TaskID | None = None  # added when the first layer starts

    def _ensure_started(self) -> None:
        if not self._started:
            self._progress.start()
            self._overall = self._progress.add_task("layers 0 done", total=None)
            self._started = True

    def layer_started(self, digest: str, size: int | None = None) -> None:
        with self._lock:
            self._ensure_started()
            if digest not in self._tasks:
                self._tasks[digest] = self._progress.add_task(f"layer {_short(digest)}", total=size)

    def layer_bytes(self, digest: str, n: int) -> None:
        with self._lock:
            task = self._tasks.get(digest)
            if task is None:
                return
            assert self._overall is not None  # a layer task exists only once started
            self._progress.advance(task, n)
            self._progress.advance(self._overall, n)

    def layer_finished(self, digest: str) -> None:
        with self._lock:
            task = self._tasks.pop(digest, None)
            if task is None:
                return
            assert self._overall is not None  # a layer task exists only once started
            self._progress.remove_task(task)
            self._done += 1
            self._progress.update(self._overall, description=f"layers {self._done} done")

    @property
    def layers_done(self) -> int:
        return self._done

    def close(self) -> None:
        with self._lock:
            if self._started:
                self._progress.stop()
                self._started = False
