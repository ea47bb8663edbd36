"""HTTP for registries: bounded retries (429/5xx, Retry-After honoured) and blob bodies that resume.

Retrying is bounded in attempts and in total sleep, so a broken registry ends in one clear
UnavailableError rather than a hang. A blob body that drops mid-stream is re-requested from the
byte it stopped at (HTTP Range); the caller's digest check covers the stitched result.
"""

from __future__ import annotations

import email.utils
import http.client
import os
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeVar
from urllib.parse import urlsplit

import requests
import urllib3

from ..deadline import Deadline
from ..errors import BadInputError, UnavailableError

T = TypeVar("T")
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
# Failures no retry can mend ("Temporary failure in name resolution" is retried).
PERMANENT = frozenset({"Name or service not known", "nodename nor servname provided, or not known"})


@dataclass(frozen=True)
class HttpPolicy:
    connect_timeout: float = 15.0
    read_timeout: float = 60.0  # per socket read, not per download
    max_attempts: int = 5  # per request, first try included
    backoff: float = 0.5  # first retry delay; doubles each attempt
    max_backoff: float = 20.0
    max_retry_after: float = 120.0  # a server asking for a longer wait gets an error instead
    max_resumes: int = 8  # per blob
    # A total deadline per blob, not only per read: a registry that trickles a byte every few
    # seconds never trips the read timeout. The deadline is blob_grace seconds plus the time the
    # declared size takes at min_blob_rate bytes/s (64 KiB/s: far below any working link).
    blob_grace: float = 300.0
    min_blob_rate: float = 64 * 1024
    # The same for every other request (manifests, configs, tokens: kilobytes): the whole answer within this many
    # read timeouts, whatever pace it comes at.
    request_reads: float = 4.0

    @property
    def request_deadline(self) -> float:
        return self.connect_timeout + self.request_reads * self.read_timeout


def describe(exc: BaseException) -> str:
    """A short reason for a network failure (requests' own messages run to several lines)."""
    text = str(exc)
    m = re.search(r"\[Errno -?\d+\] ([^'\")]+)", text)
    if m:
        return m.group(1).strip()
    m = re.search(r"Error\(-?\d+, '([^']+)'\)", text)  # e.g. FileNotFoundError(2, 'No such file ...')
    if m:
        return m.group(1).strip()
    for needle in (
        "Read timed out",
        "Connection refused",
        "timed out",
        "Connection reset by peer",
        "Connection aborted",
        "IncompleteRead",
        "Name or service not known",
        "certificate verify failed",
        "wrong version number",
    ):
        if needle in text:
            return needle
    return exc.__class__.__name__


def retry_after(resp: requests.Response) -> float | None:
    """Seconds from a Retry-After header (delta-seconds or an HTTP date), or None."""
    value = resp.headers.get("Retry-After")
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


NETWORK_ERRORS = (requests.ConnectionError, requests.Timeout, urllib3.exceptions.HTTPError, OSError)


class HttpClient:
    """A requests.Session with the retry policy; `sleep` is injectable so tests need not wait."""

    def __init__(
        self,
        policy: HttpPolicy = HttpPolicy(),
        session: requests.Session | None = None,
        sleep: Callable[[float], None] | None = None,
        deadline: Deadline | None = None,
    ):
        self.policy = policy
        self.session = session or requests.Session()
        self.sleep = sleep or (lambda seconds: time.sleep(seconds))
        self.deadline = deadline  # the whole read's (--timeout): every timeout and wait is clamped to it
        self._pid = os.getpid()

    def _own_connections(self) -> None:
        """In a forked layer worker, start with empty connection pools.

        The pooled keep-alive sockets are the parent's too: two processes sending on one connection
        would interleave their requests. The copies are dropped, not closed: they stay the parent's.
        Credentials and headers on the session are kept.
        """
        if self._pid == os.getpid():
            return
        self._pid = os.getpid()
        for adapter in self.session.adapters.values():
            if isinstance(adapter, requests.adapters.HTTPAdapter):
                adapter.init_poolmanager(adapter._pool_connections, adapter._pool_maxsize, block=adapter._pool_block)
                adapter.proxy_manager = {}

    def _wait(self, seconds: float, what: str) -> None:
        """A back-off sleep, never past the deadline (a wait that cannot end in time is an error now)."""
        if self.deadline is not None and seconds >= self.deadline.remaining():
            raise self.deadline.error(f"{what} (a retry would wait {seconds:g}s)")
        self.sleep(seconds)

    def answer_limit(self) -> float:
        """Seconds a whole non-blob answer may take: the policy's total per answer, within --timeout's."""
        limit = self.policy.request_deadline
        return self.deadline.clamp(limit) if self.deadline is not None else limit

    def _delay(self, attempt: int) -> float:
        return min(self.policy.max_backoff, self.policy.backoff * (2.0 ** (attempt - 1)))

    def send(
        self,
        method: str,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        stream: bool = False,
        verify: bool = True,
        attempts: int | None = None,
        **kw: Any,
    ) -> requests.Response:
        """Send with retries. Returns the last response (maybe still 429/5xx); raises only when
        the server could not be reached at all."""
        self._own_connections()
        host = urlsplit(url).netloc
        attempts = attempts or self.policy.max_attempts
        deadline = self.deadline
        waiting = f"waiting for registry {host}"
        for attempt in range(1, attempts + 1):
            timeout: tuple[float, float] = (self.policy.connect_timeout, self.policy.read_timeout)
            if deadline is not None:
                deadline.check(waiting)
                timeout = (deadline.clamp(timeout[0]), deadline.clamp(timeout[1]))
            try:
                # Always streamed, so that a body read (below) runs under a total deadline; a caller that
                # streams reads it under its own (ResumingBody).
                resp = self.session.request(
                    method, url, headers=headers, stream=True, verify=verify, timeout=timeout, **kw
                )
                if not stream:
                    read_within(resp, self.answer_limit(), host, partial(_content, resp))
            except requests.exceptions.SSLError:
                raise  # not transient; the caller decides (scheme fallback or a clear error)
            except NETWORK_ERRORS as exc:
                reason = describe(exc)
                if deadline is not None and deadline.passed():
                    raise deadline.error(f"{waiting} ({reason})") from None
                if attempt == attempts or reason in PERMANENT:
                    raise UnavailableError(f"cannot reach registry {host}: {reason}") from None
                self._wait(self._delay(attempt), waiting)
                continue
            if resp.status_code in RETRY_STATUS and attempt < attempts:
                wait = retry_after(resp)
                if wait is not None and wait > self.policy.max_retry_after:
                    return resp  # the caller reports the rate limit with its Retry-After
                resp.close()
                self._wait(self._delay(attempt) if wait is None else wait, waiting)
                continue
            return resp
        raise AssertionError("unreachable")  # pragma: no cover


def _content(resp: requests.Response) -> bytes:
    return resp.content


def read_within(resp: requests.Response, deadline: float, host: str, read: Callable[[], T]) -> T:
    """`read()` (which reads `resp`'s body) within `deadline` seconds from now, or UnavailableError: a watchdog
    shuts the socket down at the deadline, which ends a read in progress whatever pace the bytes come at."""
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        _shut_down(resp)

    watchdog = threading.Timer(deadline, expire)
    watchdog.daemon = True
    watchdog.start()
    try:
        result = read()
    except (*NETWORK_ERRORS, http.client.HTTPException, requests.RequestException):
        if not expired.is_set():
            raise
    finally:
        watchdog.cancel()
        watchdog.join()  # gone before the caller may fork layer workers (can_fork wants one thread)
    if expired.is_set():
        resp.close()
        raise UnavailableError(f"registry {host} did not finish answering within {deadline:.0f} s (too slow)")
    return result


class ResumingBody:
    """A file object over a blob download that re-requests from the current offset on a drop.

    `open_at(offset)` returns a streaming response: 206 starting at `offset`, or 200 with the
    whole body (a server ignoring Range), whose first `offset` bytes are then skipped.
    """

    def __init__(
        self,
        open_at: Callable[[int], requests.Response],
        what: str,
        expected_size: int | None,
        max_resumes: int,
        deadline: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._open_at = open_at
        self._what = what
        self._expected = expected_size
        self._resumes_left = max_resumes
        self._pos = 0
        self.resumes = 0
        self._clock = clock
        self._deadline = None if deadline is None else clock() + deadline
        self._allowed = deadline
        self._expired = False
        self._resp = open_at(0)
        # One read may block far longer than the read timeout (a buffered read waits for a full
        # buffer and a trickling server sends a byte per timeout): at the deadline a watchdog
        # shuts the socket down, which ends any read in progress.
        self._watchdog = None
        if deadline is not None and clock is time.monotonic:
            self._watchdog = threading.Timer(deadline, self._expire)
            self._watchdog.daemon = True
            self._watchdog.start()

    def _expire(self) -> None:
        self._expired = True
        _shut_down(self._resp)

    def _check_deadline(self) -> None:
        if self._expired or (self._deadline is not None and self._clock() > self._deadline):
            raise UnavailableError(
                f"{self._what}: download too slow: {self._pos} bytes in {self._allowed:.0f} s "
                "(a total deadline per blob)"
            )

    def _body(self) -> http.client.HTTPResponse | None:
        """What to read the body from: the http.client response urllib3 wraps, when it exposes one.

        urllib3's read() and readinto() each copy every chunk once more; http.client's readinto
        fills the caller's buffer straight from the socket (~0.3 s less per 360 MB here). All reads
        of a body go the same way, so urllib3's byte accounting is never half-updated. The digest
        and the declared size are checked by the caller either way.
        """
        fp = getattr(self._resp.raw, "_fp", None)
        return fp if fp is not None and hasattr(fp, "readinto") else None

    def _readinto_raw(self, buffer: bytearray | memoryview) -> int:
        fp = self._body()
        if fp is not None:
            return fp.readinto(buffer)
        data = self._resp.raw.read(len(buffer), decode_content=False)
        buffer[: len(data)] = data
        return len(data)

    def _reopen(self, reason: str) -> None:
        if self._resumes_left <= 0:
            raise UnavailableError(f"{self._what}: download kept failing at byte {self._pos} ({reason})")
        self._resumes_left -= 1
        self.resumes += 1
        self._resp.close()
        resp = self._open_at(self._pos)
        if resp.status_code == 206:
            start = re.match(r"bytes (\d+)-", resp.headers.get("Content-Range", ""))
            if not start or int(start.group(1)) != self._pos:
                resp.close()
                raise BadInputError(
                    f"{self._what}: server answered a resume at byte {self._pos} "
                    f"with range {resp.headers.get('Content-Range')!r}"
                )
            self._resp = resp
            return
        # 200: the whole blob again; skip what was already read (the digest still covers all)
        self._resp = resp
        skip = self._pos
        scratch = memoryview(bytearray(min(skip, 1 << 20)))
        while skip:
            self._check_deadline()
            got = self._readinto_raw(scratch[: min(skip, len(scratch))])
            if not got:
                raise UnavailableError(f"{self._what}: server restarted the download and ended early")
            skip -= got

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            parts: list[bytes] = []
            while True:
                chunk = self.read(1 << 20)
                if not chunk:
                    return b"".join(parts)
                parts.append(chunk)
        buffer = bytearray(n)  # read() only sniffs a few bytes or drains: readinto is the fast path
        got = self.readinto(buffer)
        return bytes(memoryview(buffer)[:got])

    def readinto(self, buffer: bytearray | memoryview) -> int:
        """Bytes into `buffer`, re-requesting from the current offset when the connection fails."""
        if not len(buffer):
            return 0
        while True:
            self._check_deadline()
            try:
                got = self._readinto_raw(buffer)
            except (*NETWORK_ERRORS, http.client.HTTPException, ValueError) as exc:
                self._check_deadline()  # a read the watchdog ended is not retried
                self._reopen(describe(exc))
                continue
            if not got and self._expected is not None and self._pos < self._expected:
                self._check_deadline()
                self._reopen("connection closed early")  # a close-delimited body cut short
                continue
            self._pos += got
            return got

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
        self._resp.close()


def _shut_down(resp: requests.Response) -> None:
    """End any read in progress on a streaming response's socket (a watchdog's deadline)."""
    sock = _socket_of(resp)
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _socket_of(resp: object) -> socket.socket | None:
    """The socket under a streaming requests response (http.client's buffered file's raw SocketIO)."""
    fp = getattr(getattr(resp, "raw", None), "_fp", None)  # http.client.HTTPResponse
    raw = getattr(getattr(fp, "fp", None), "raw", None)  # socket.SocketIO
    sock = getattr(raw, "_sock", None)
    return sock if isinstance(sock, socket.socket) else None
