"""What the layer walk reports its progress to: formats/progress.py draws it (the view never imports formats)."""

from __future__ import annotations

from typing import Protocol


class ByteProgress(Protocol):
    """Compressed bytes of a layer as the walk pulls them (a worker process reports only these)."""

    def layer_bytes(self, digest: str, n: int, /) -> None: ...


class LayerProgress(ByteProgress, Protocol):
    """A display of every layer: started, bytes, finished."""

    def layer_started(self, digest: str, size: int | None = None, /) -> None: ...

    def layer_finished(self, digest: str, /) -> None: ...
