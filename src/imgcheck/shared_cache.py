"""Layer and image facts shared through PostgreSQL (IMGCHECK_CACHE_URL), so replicas and CI runners
never re-read a layer someone already read.

A second tier behind the local caches under $IMGCHECK_HOME: a local hit costs nothing; a local miss
asks the database and copies a hit into the local cache; whatever is computed locally is also
written to the database. Keys are the local caches' own keys (layer digest, facts key) within the
local cache directory's name, which hashes the extractors' identity and the view version, so an
imgcheck whose readers differ never reads another's entries. Entries are content
addressed, so writers race harmlessly; only content verified against its digest is written, and it
replaces a damaged row.

Trust: whoever can write this table can make images look fine to every reader, so give CI runners
and replicas their own role with INSERT/SELECT only on it, and no one else write access. Layer
entries are still checked against the layer's digest and facts against the image digest on read,
as local ones are. The database being unreachable only makes reads slower, never wrong: every
error is a miss (logged once).

In-flight sharing: a layer that misses everywhere is claimed (table imgcheck_cache_claims, one row per
namespace and layer digest, with a lease on the database clock) before it is read. A reader that finds
the layer claimed by another reads its other layers first and then polls for the holder's entry; the
holder renews its claims while alive, so a dead reader's claim runs out (CLAIM_LEASE_SECONDS) and the
next waiter takes it over. A wait is bounded (IMGCHECK_LAYER_WAIT_SECONDS): after it the waiter reads
the layer itself. So a burst of images on one new base layer reads that layer once, not once per worker.
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import socket
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any

from . import safejson
from .facts_cache import FactsCache
from .model.image import ImageFacts
from .sources.base import LayerRef
from .view.cache import LayerCache, index_bytes, index_from_bytes
from .view.layer_index import LayerIndex

if TYPE_CHECKING:
    import psycopg

log = logging.getLogger("imgcheck.shared_cache")
URL_ENV = "IMGCHECK_CACHE_URL"
_TABLE_LOCK = 0x1A6C4ED  # pg_advisory_xact_lock key for creating the table
RETRY_SECONDS = 60.0  # after a failure, read locally only this long (a dead host must not cost a timeout per layer)
CLAIM_LEASE_SECONDS = 30.0  # a reader's claim lives this long unless renewed (every third of it, while alive)
CLAIM_BYTES_PER_SECOND = 4 << 20  # plus the layer's size at this pace: a process that cannot renew (below)
WAIT_ENV = "IMGCHECK_LAYER_WAIT_SECONDS"
WAIT_SECONDS = 300.0  # longest wait for another reader's layer before reading it too
POLL_SECONDS = 0.5

_SCHEMA = """
CREATE TABLE IF NOT EXISTS imgcheck_cache (
    kind TEXT NOT NULL,
    namespace TEXT NOT NULL,
    key TEXT NOT NULL,
    value BYTEA NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (kind, namespace, key)
);
CREATE TABLE IF NOT EXISTS imgcheck_cache_claims (
    namespace TEXT NOT NULL,
    key TEXT NOT NULL,
    owner TEXT NOT NULL,
    lease_until TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (namespace, key)
)
"""


class SharedStore:
    """One connection per process (guarded by a lock): cache traffic is a few small rows per layer."""

    def __init__(self, url: str):
        self.url = url
        self._conn: psycopg.Connection[tuple[Any, ...]] | None = None
        self._lock = threading.Lock()
        self._broken = False
        self._retry_at = 0.0
        self.hits = 0
        self.misses = 0
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._held: set[tuple[str, str]] = set()  # (namespace, key) claimed by this process, renewed
        self._renewer: threading.Thread | None = None

    def _connection(self) -> psycopg.Connection[tuple[Any, ...]]:
        if self._conn is None or self._conn.closed:
            if time.monotonic() < self._retry_at:
                raise ConnectionError("shared cache recently unreachable")
            import psycopg

            conn = self._conn = psycopg.connect(self.url, autocommit=True, connect_timeout=5)
            with conn.transaction():
                # created only when missing: a role limited to these tables (deploy/service-pg/cache-role.sql)
                # has no CREATE on the schema, and CREATE TABLE IF NOT EXISTS checks that before existence
                missing = conn.execute(
                    "SELECT to_regclass('imgcheck_cache') IS NULL OR to_regclass('imgcheck_cache_claims') IS NULL"
                ).fetchone()
                if missing is not None and missing[0]:
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (_TABLE_LOCK,))
                    conn.execute(_SCHEMA)
        return self._conn

    def _failed(self, exc: Exception) -> None:
        if not self._broken:
            log.warning(
                "shared cache unavailable, reading locally only: %s", str(exc).splitlines()[0] if str(exc) else exc
            )
        self._broken = True
        self._retry_at = time.monotonic() + RETRY_SECONDS
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:
                pass
        self._conn = None

    def get(self, kind: str, namespace: str, key: str) -> bytes | None:
        with self._lock:
            try:
                row = (
                    self._connection()
                    .execute(
                        "SELECT value FROM imgcheck_cache WHERE kind = %s AND namespace = %s AND key = %s",
                        (kind, namespace, key),
                    )
                    .fetchone()
                )
            except Exception as exc:  # psycopg missing, server down, permission denied: a miss
                self._failed(exc)
                return None
        if row is None:
            self.misses += 1
            return None
        self.hits += 1
        return bytes(row[0])

    def put(self, kind: str, namespace: str, key: str, value: bytes) -> None:
        with self._lock:
            try:
                self._connection().execute(
                    "INSERT INTO imgcheck_cache (kind, namespace, key, value) VALUES (%s, %s, %s, %s) "
                    # only verified content is put: it replaces a damaged or forged row
                    "ON CONFLICT (kind, namespace, key) DO UPDATE SET value = EXCLUDED.value "
                    "WHERE imgcheck_cache.value <> EXCLUDED.value",
                    (kind, namespace, key, value),
                )
            except Exception as exc:
                self._failed(exc)

    # -- claims on layers being read ---------------------------------------------------------------

    def claim(self, namespace: str, key: str, size: int = 0) -> bool | None:
        """True: this process now holds the read of `key`; False: another live reader does; None: no database.

        The lease covers a read of `size` compressed bytes at a slow pace. A process with other threads
        (the service) also renews it; a single-threaded one (the CLI) does not start a thread for it,
        because then it could no longer fork its layer readers (view/layer_processes.can_fork).
        """
        lease = CLAIM_LEASE_SECONDS + max(size, 0) / CLAIM_BYTES_PER_SECOND
        with self._lock:
            try:
                row = (
                    self._connection()
                    .execute(
                        "INSERT INTO imgcheck_cache_claims (namespace, key, owner, lease_until) "
                        "VALUES (%s, %s, %s, clock_timestamp() + make_interval(secs => %s)) "
                        "ON CONFLICT (namespace, key) DO UPDATE SET owner = EXCLUDED.owner, "
                        "lease_until = EXCLUDED.lease_until "
                        "WHERE imgcheck_cache_claims.lease_until < clock_timestamp() RETURNING owner",
                        (namespace, key, self.owner, lease),
                    )
                    .fetchone()
                )
            except Exception as exc:
                self._failed(exc)
                return None
            if row is None:
                return False
            self._held.add((namespace, key))
            if threading.active_count() > 1:
                self._start_renewer()
            return True

    def release(self, namespace: str, key: str) -> None:
        with self._lock:
            if (namespace, key) not in self._held:
                return
            self._held.discard((namespace, key))
            try:
                self._connection().execute(
                    "DELETE FROM imgcheck_cache_claims WHERE namespace = %s AND key = %s AND owner = %s",
                    (namespace, key, self.owner),
                )
            except Exception as exc:  # the claim then runs out on its own
                self._failed(exc)

    def _start_renewer(self) -> None:
        if self._renewer is None or not self._renewer.is_alive():
            self._renewer = threading.Thread(target=self._renew_loop, name="imgcheck-cache-claims", daemon=True)
            self._renewer.start()

    def _renew_loop(self) -> None:
        while True:
            time.sleep(CLAIM_LEASE_SECONDS / 3)
            with self._lock:
                held = sorted(self._held)
                if not held:
                    self._renewer = None
                    return
                try:
                    with self._connection().cursor() as cur:
                        cur.executemany(
                            "UPDATE imgcheck_cache_claims SET lease_until = GREATEST(lease_until, "
                            "clock_timestamp() + make_interval(secs => %s)) "
                            "WHERE namespace = %s AND key = %s AND owner = %s",
                            [(CLAIM_LEASE_SECONDS, ns, key, self.owner) for ns, key in held],
                        )
                except Exception as exc:
                    self._failed(exc)


_stores: dict[str, SharedStore] = {}
_stores_lock = threading.Lock()


def shared_store(env: dict[str, str] | None = None) -> SharedStore | None:
    """The process's store for $IMGCHECK_CACHE_URL, or None when it is not set."""
    url = (os.environ if env is None else env).get(URL_ENV)
    if not url:
        return None
    with _stores_lock:
        if url not in _stores:
            _stores[url] = SharedStore(url)
        return _stores[url]


class SharedLayerCache(LayerCache):
    """The local layer cache with the shared store behind it."""

    def __init__(self, root: str, namespace: str, shared: SharedStore) -> None:
        super().__init__(root, namespace)
        self.namespace, self.shared = os.path.basename(self.dir), shared  # what the local cache is keyed by
        self.shared_hits = 0

    def get(self, digest: str) -> LayerIndex | None:
        idx = super().get(digest)
        if idx is not None:
            return idx
        blob = self.shared.get("layer", self.namespace, digest)
        if blob is None:
            return None
        try:  # a row is as untrusted as a file on disk: the same bounded parse and typed decode
            idx = index_from_bytes(gzip.decompress(blob), "shared cache entry")
        except (OSError, ValueError, KeyError, TypeError, EOFError, RecursionError, MemoryError):
            return None  # a damaged row is a miss (the reader then verifies and re-writes locally)
        if idx.digest is None:
            return None
        self.misses -= 1  # the local miss above was served after all
        self.hits += 1
        self.shared_hits += 1
        super().put(digest, idx)
        return idx

    def put(self, digest: str, idx: LayerIndex) -> bool:
        stored = super().put(digest, idx)
        self.shared.put("layer", self.namespace, digest, gzip.compress(index_bytes(idx), compresslevel=1, mtime=0))
        self.shared.release(self.namespace, digest)  # after the entry is there: waiters find it
        return stored

    # -- in-flight sharing (view/reader.py calls these for the layers that missed) -------------------

    def claim_reads(self, layers: list[LayerRef]) -> tuple[list[LayerRef], list[LayerRef], dict[int, LayerIndex]]:
        """(layers to read here, layers another reader is reading, {index: entry} that arrived meanwhile)."""
        mine: list[LayerRef] = []
        theirs: list[LayerRef] = []
        arrived: dict[int, LayerIndex] = {}
        for layer in layers:
            got = self.shared.claim(self.namespace, layer.digest, layer.size or 0)
            if got is False:
                theirs.append(layer)
                continue
            if got:  # finished by someone between our miss and the claim?
                idx = self._shared_hit(layer)
                if idx is not None:
                    self.shared.release(self.namespace, layer.digest)
                    arrived[layer.index] = idx
                    continue
            mine.append(layer)
        return mine, theirs, arrived

    def wait_for(self, layer: LayerRef) -> LayerIndex | None:
        """The entry another reader writes for `layer`, or None once this reader should read it itself
        (the holder died and the claim is now ours, or the wait ran out)."""
        try:
            bound = float(os.environ.get(WAIT_ENV, WAIT_SECONDS))
        except ValueError:
            bound = WAIT_SECONDS
        deadline = time.monotonic() + bound
        while True:
            idx = self._shared_hit(layer)
            if idx is not None:
                return idx
            if self.shared.claim(self.namespace, layer.digest, layer.size or 0) is not False:
                idx = self._shared_hit(layer)  # written and released just before our claim
                if idx is not None:
                    self.shared.release(self.namespace, layer.digest)
                return idx
            if time.monotonic() >= deadline:
                log.warning("waited %.0f s for another reader of layer %s; reading it here too", bound, layer.digest)
                return None
            time.sleep(POLL_SECONDS)

    def release_reads(self, layers: list[LayerRef]) -> None:
        """Give up claims on layers not read after all (an error): waiters take them over at once."""
        for layer in layers:
            self.shared.release(self.namespace, layer.digest)

    def _shared_hit(self, layer: LayerRef) -> LayerIndex | None:
        idx = self.get(layer.digest)
        return idx if idx is not None and idx.digest == layer.layer_id else None


class SharedFactsCache(FactsCache):
    """The local whole-image facts cache with the shared store behind it."""

    def __init__(self, root: str, namespace: str, shared: SharedStore):
        super().__init__(root, namespace)
        self.namespace, self.shared = os.path.basename(self.dir), shared  # carries the view version

    def _fill(self, path: str) -> None:
        if os.path.exists(path):
            return
        blob = self.shared.get("facts", self.namespace, os.path.basename(path))
        if blob is not None:
            try:
                doc = safejson.loads(blob, "shared facts entry", ValueError)
            except ValueError:
                return
            if not isinstance(doc, dict):
                return  # get() would refuse it too
            FactsCache._write(self, path, doc)  # local only; get() then validates it as any local entry

    def get(self, digest: str | None, platform: str | None, reference: str) -> ImageFacts | None:
        if digest:
            self._fill(self._path(digest, platform))
        return super().get(digest, platform, reference)

    def get_resolved(self, top: str, asked: str, reference: str) -> ImageFacts | None:
        self._fill(self._resolved_path(top, asked))
        return super().get_resolved(top, asked, reference)

    def _write(self, path: str, doc: dict[str, Any]) -> None:
        super()._write(path, doc)
        self.shared.put("facts", self.namespace, os.path.basename(path), json.dumps(doc).encode())
