"""What a read of an image may be told: one typed object from the caller to the source and the view.

Every field has the default a plain `imgcheck inspect IMAGE` uses. The object is frozen; the
progress display and the stats it carries are the caller's own objects, written to as the read goes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .sources.platform import Platform

if TYPE_CHECKING:  # only names here: the registry client and the layer walk load on first use
    import requests

    from .deadline import Deadline
    from .sources.http import HttpPolicy
    from .view.layer_index import Limits
    from .view.reader import ReadStats


@dataclass(frozen=True)
class ReadOptions:
    platform: Platform | None = None  # None: the image's default (linux/amd64 from an index)
    use_cache: bool = True  # the facts and layer caches under $IMGCHECK_HOME (or IMGCHECK_CACHE_URL)
    insecure_registries: tuple[str, ...] = ()  # hosts allowed plain HTTP / unverified TLS
    workers: int | None = None  # layers indexed at once; None: one per CPU
    progress: Any = None  # a formats.progress.LayerProgress, or None for no display
    stats: ReadStats | None = None  # filled in with what the read did
    limits: Limits | None = None  # None: view.layer_index.Limits.from_env()
    timeout: float | None = None  # seconds per socket read (registry) or daemon read (docker:)
    deadline: Deadline | None = None  # the total time the whole read may take (--timeout); None: no limit
    http_policy: HttpPolicy | None = None  # the registry client's retries and timeouts
    session: requests.Session | None = None  # a caller's session: it sends every request (tests, the service)
    sleep: Callable[[float], None] | None = None  # the registry client's back-off sleep (tests)
    docker_client: Any = None  # a docker.DockerClient for the docker: source (tests)

    def __post_init__(self) -> None:
        # callers pass lists (argparse, the service's config); a tuple keeps the object hashable
        object.__setattr__(self, "insecure_registries", tuple(self.insecure_registries))
