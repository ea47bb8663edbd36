"""What a read of an image may be told, and what it did: one typed object from the caller to the source and the view.

Every field has the default a plain `imgcheck inspect IMAGE` uses. The object is frozen; the
progress display and the stats it carries are the caller's own objects, written to as the read goes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import BadInputError
from .platform import Platform

if TYPE_CHECKING:  # only names here: the registry client and the layer walk load on first use
    import requests

    from ..deadline import Deadline
    from .http import HttpPolicy


@dataclass(frozen=True)
class ReadOptions:
    platform: Platform | None = None  # None: the image's default (linux/amd64 from an index)
    use_cache: bool = True  # the facts and layer caches under $IMGCHECK_HOME (or IMGCHECK_CACHE_URL)
    insecure_registries: tuple[str, ...] = ()  # hosts allowed plain HTTP / unverified TLS
    workers: int | None = None  # layers indexed at once; None: one per CPU
    progress: Any = None  # a formats.progress.LayerProgress, or None for no display
    stats: ReadStats | None = None  # filled in with what the read did
    limits: Limits | None = None  # None: Limits.from_env()
    timeout: float | None = None  # seconds per socket read (registry) or daemon read (docker:)
    deadline: Deadline | None = None  # the total time the whole read may take (--timeout); None: no limit
    http_policy: HttpPolicy | None = None  # the registry client's retries and timeouts
    session: requests.Session | None = None  # a caller's session: it sends every request (tests, the service)
    sleep: Callable[[float], None] | None = None  # the registry client's back-off sleep (tests)
    docker_client: Any = None  # a docker.DockerClient for the docker: source (tests)
    # eStargz and zstd:chunked layers from a registry are read by range (TOC and wanted files, each digest-checked;
    # view/estargz.py, view/zstdchunked.py);
    # False reads every layer whole, which also checks each layer's diff_id (`--whole-layers`)
    range_reads: bool = True

    def __post_init__(self) -> None:
        # callers pass lists (argparse, the service's config); a tuple keeps the object hashable
        object.__setattr__(self, "insecure_registries", tuple(self.insecure_registries))


# The view's limits and the read's stats are named by ReadOptions, which the source takes: they live here, below
# the view, so that no layer names a type of a layer above it.


@dataclass(frozen=True)
class Limits:
    max_entries: int = 5_000_000  # per layer
    max_uncompressed: int = 256 * 1024**3  # per layer: 256 GiB
    max_symlinks: int = 200_000  # per layer; symlinks are always kept for path resolution
    # per image (and so per layer): the bytes of every wanted file kept in memory together. Each
    # want has its own per-file cap; this bounds a layer of a million small wanted files.
    max_kept_bytes: int = 256 * 1024**2  # a real image keeps tens of MB once hidden copies are let go (reader._hold)
    # per layer: the bytes of the directory paths the layer names or implies. A member name may be PATH_MAX
    # long and implies every parent, so 2,000 components cost 4 MB of prefixes from a 4 KB header; a real
    # layer's directories total a few MB.
    max_dir_bytes: int = 64 * 1024**2

    @classmethod
    def from_env(cls) -> Limits:
        """Limits overridden by IMGCHECK_MAX_LAYER_BYTES / _ENTRIES / _SYMLINKS (see docs/reliability.md)."""
        import os

        values = {}
        for field_name, var in (
            ("max_uncompressed", "IMGCHECK_MAX_LAYER_BYTES"),
            ("max_entries", "IMGCHECK_MAX_LAYER_ENTRIES"),
            ("max_symlinks", "IMGCHECK_MAX_LAYER_SYMLINKS"),
            ("max_kept_bytes", "IMGCHECK_MAX_WANTED_BYTES"),
            ("max_dir_bytes", "IMGCHECK_MAX_DIR_BYTES"),
        ):
            raw = os.environ.get(var)
            if raw:
                try:
                    values[field_name] = int(raw)
                except ValueError:
                    raise BadInputError(f"{var}={raw[:40]!r} is not a whole number") from None
                if values[field_name] < 0:
                    raise BadInputError(f"{var}={raw!r} must not be negative")
        return cls(**values)


@dataclass
class ReadStats:
    """What a read did; tests assert on these instead of on time."""

    layers_read: list[str] = field(default_factory=list)  # digests streamed from the source
    layers_ranged: list[str] = field(default_factory=list)  # of those, seekable layers read by range
    bytes_ranged: int = 0  # compressed bytes those range reads fetched
    layers_cached: list[str] = field(default_factory=list)  # digests served by the cache
    layers_waited: list[str] = field(default_factory=list)  # of those, read meanwhile by another reader (shared cache)
    bytes_decompressed: int = 0
    # layers whose new wants were served from their file index (view/file_index.py): only the wanted files re-read
    layers_reread: list[str] = field(default_factory=list)
    bytes_reread: int = 0  # uncompressed bytes those re-reads inflated
    bytes_reread_compressed: int = 0  # compressed bytes of the blobs they read
    facts_cached: bool = False  # the whole image's facts came from the facts cache: no layer touched
    layer_processes: int = 0  # worker processes the layers were indexed in (0: in this process)
