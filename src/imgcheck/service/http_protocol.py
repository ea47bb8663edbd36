"""uvicorn's h11 protocol with the two bounds it lacks: a header timeout and an idle-connection budget.

uvicorn times out idle keep-alive connections only after a first response, so a client that connects
and sends nothing, or sends its headers a byte at a time, holds a connection for ever; and its
`limit_concurrency` counts such connections, so a few hundred of them made every request, /livez
included, answer 503. Here:
- a connection whose request headers are not complete `header_timeout` seconds after it opened (or
  after its previous response) is closed;
- when a new connection would exceed the budget (`limit_concurrency` - 1), the oldest connections with
  no request in progress (silent, or idle between requests: none of them authenticated anything) are
  closed to make room, so a probe or a webhook delivery always gets through. Requests in progress still
  count against `limit_concurrency` (uvicorn answers 503 beyond it).
"""

from __future__ import annotations

import asyncio
import logging

from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger("imgcheck.service")


class BoundedH11Protocol(H11Protocol):
    header_timeout = 10.0  # set by server_options() through a subclass

    # uvicorn narrows asyncio's BaseTransport to Transport (and ignores [override] itself); so does this subclass
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._header_timer: asyncio.TimerHandle | None = None
        self._arm_header_timer()
        if self.limit_concurrency is not None:
            self._make_room(self.limit_concurrency - 1)

    def _busy(self) -> bool:
        return self.cycle is not None and not self.cycle.response_complete

    def _make_room(self, budget: int) -> None:
        excess = len(self.connections) - budget
        if excess <= 0:
            return
        idle = [c for c in self.connections if c is not self and isinstance(c, BoundedH11Protocol) and not c._busy()]
        for conn in idle[:excess]:  # a set: arbitrary order, every one of them idle
            conn.transport.close()
        if idle:
            log.warning(
                "connection budget reached: closed %d idle connection(s)",
                min(excess, len(idle)),
                extra={"event": "http.connections_shed", "count": min(excess, len(idle))},
            )

    def _arm_header_timer(self) -> None:
        self._cancel_header_timer()
        self._header_timer = self.loop.call_later(self.header_timeout, self._header_timed_out)

    def _cancel_header_timer(self) -> None:
        timer = getattr(self, "_header_timer", None)
        if timer is not None:
            timer.cancel()
            self._header_timer = None

    def _header_timed_out(self) -> None:
        self._header_timer = None
        if not self._busy():  # still no complete request head: a slow or silent client
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        before = self.cycle
        super().data_received(data)
        if self.cycle is not before:  # a request head arrived: the body has its own timeout (app.py)
            self._cancel_header_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_header_timer()  # the next request's head must come in time too

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        super().connection_lost(exc)


def bounded_protocol(header_timeout: float) -> type[BoundedH11Protocol]:
    return type("BoundedH11Protocol", (BoundedH11Protocol,), {"header_timeout": header_timeout})
