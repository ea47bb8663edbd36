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
"""

from __future__ import annotations

import gzip
import json
import logging
import os
import threading
import time

from . import safejson
from .facts_cache import FactsCache
from .view.cache import LayerCache, index_bytes, index_from_bytes
from .view.layer_index import LayerIndex

log = logging.getLogger("imgcheck.shared_cache")
URL_ENV = "IMGCHECK_CACHE_URL"
_TABLE_LOCK = 0x1A6C4ED  # pg_advisory_xact_lock key for creating the table
RETRY_SECONDS = 60.0  # after a failure, read locally only this long (a dead host must not cost a timeout per layer)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS imgcheck_cache (
    kind TEXT NOT NULL,
    namespace TEXT NOT NULL,
    key TEXT NOT NULL,
    value BYTEA NOT NULL,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (kind, namespace, key)
)
"""


class SharedStore:
    """One connection per process (guarded by a lock): cache traffic is a few small rows per layer."""

    def __init__(self, url: str):
        self.url = url
        self._conn = None
        self._lock = threading.Lock()
        self._broken = False
        self._retry_at = 0.0
        self.hits = 0
        self.misses = 0

    def _connection(self):
        if self._conn is None or self._conn.closed:
            if time.monotonic() < self._retry_at:
                raise ConnectionError("shared cache recently unreachable")
            import psycopg

            self._conn = psycopg.connect(self.url, autocommit=True, connect_timeout=5)
            with self._conn.transaction():
                self._conn.execute("SELECT pg_advisory_xact_lock(%s)", (_TABLE_LOCK,))
                self._conn.execute(_SCHEMA)
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


_stores: dict[str, SharedStore] = {}
_stores_lock = threading.Lock()


def shared_store(env: dict | None = None) -> SharedStore | None:
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

    def __init__(self, root: str, namespace: str, shared: SharedStore):
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
        return stored


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
            FactsCache._write(self, path, doc)  # local only; get() then validates it as any local entry

    def get(self, digest, platform, reference):
        if digest:
            self._fill(self._path(digest, platform))
        return super().get(digest, platform, reference)

    def get_resolved(self, top, asked, reference):
        self._fill(self._resolved_path(top, asked))
        return super().get_resolved(top, asked, reference)

    def _write(self, path: str, doc: dict) -> None:
        super()._write(path, doc)
        self.shared.put("facts", self.namespace, os.path.basename(path), json.dumps(doc).encode())
