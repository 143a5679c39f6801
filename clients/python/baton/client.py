"""The Baton client: every call of the protocol (``Calls``), and the holder, wait mode, the claim
poller and ``lock_all`` on top, as methods of one object.

The parts are built one way only (clients/README.md, "How each client is built"): ``_http`` (the
transport, authentication, the token file) <- ``_retries`` (the backoff loop and its warning) <-
``calls`` (one method per endpoint) <- ``holder`` (``run``, the lease), ``wait`` (turns,
``lock_all``), ``claims`` (the poller) <- this facade, which only puts them together.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Iterable, Optional, Union

from . import claims as _claims
from . import holder as _holder
from . import wait as _wait
from ._retries import backoff_delay
from .calls import Calls, new_request_id
from .claims import OnClaim, OnError
from .holder import Handler, OnSubmit
from .outcomes import Acquired, ClaimReport, Next, RequestView, RunReport
from .wait import LockAllWork, Turn

__all__ = ["Client", "new_request_id", "backoff_delay"]


class Client(Calls):
    """A Baton client: the calls of ``Calls`` (``acquire``, ``heartbeat``, ``complete``, ...)
    plus the holder (``run``, ``hold``), wait mode (``await_turn``, ``await_result``), the claim
    poller (``run_claims``) and ``lock_all``.

    ``Client(url, api_key=None, *, token_file=None, token_refresh=30.0, timeout=10.0,
    retry_timeout=30.0, max_idle_connections=16)``: see ``Calls``. Safe to share between threads.

    Every deployment that uses ``run`` also runs a claim poller (``run_claims``) for its kind of
    lcids, in this process or another: a request whose handler threw, whose holder died, or that
    waits behind a ``wait`` turn is done only by it (or by a new acquire on its lcid).
    """

    def run(self, lcid: str, handler: Handler, *, request_id: Optional[str] = None, payload: Any = None,
            lease_ms: Optional[int] = None, take: Optional[int] = None, traceparent: Optional[str] = None,
            tracestate: Optional[str] = None, on_submit: Optional[OnSubmit] = None) -> RunReport:
        """Submits a request and, whenever this call holds the lock, does the queue's work.

        QUEUED: returns at once; the request is stored and another holder (or a claim poller)
        does it. ACQUIRED / NEXT: calls ``handler(work)`` for each request (or batch), heartbeating
        in the background, completes with its return value and goes on until RELEASED. RELEASED
        does not mean this caller's request was done: the lock may have passed to a ``wait``
        request queued ahead of it (``report.released.passed_to``); ``report.handled_own`` says
        whether it was done here, ``await_result`` tells when it is.

        ``on_submit(lcid, request_id, outcome)``: called exactly once, as soon as Baton
        acknowledged the request as stored and before any handler runs, with the acquire's
        answer (``Acquired``, ``Next`` or ``Queued``; None when a retried acquire found its request
        already taken by another holder): journal the request there. If it raises while this call
        holds the lock, the lock is given back as for a handler's error.

        A handler that raises: the request is aborted with requeue (back at the head of its lcid,
        ``attempt`` + 1) and the error re-raised; a claim poller (or the next acquire on the lcid)
        does it then. A lost lock cancels the handler (``work.cancelled``) and raises
        ``LockLostError`` (``by_client`` tells who decided). Whatever ``run`` raises carries the
        report of what was handled until then as ``error.report`` (status ``FAILED``).

        ``traceparent`` / ``tracestate``: as for ``acquire``; with OpenTelemetry each handler call
        runs in a ``baton.work`` span.
        """
        return _holder.run(self, lcid, handler, request_id=request_id, payload=payload, lease_ms=lease_ms,
                           take=take, traceparent=traceparent, tracestate=tracestate, on_submit=on_submit)

    def hold(self, outcome: Union[Acquired, Next], handler: Handler, *, payload: Any = None,
             take: Optional[int] = None, request_id: Optional[str] = None) -> RunReport:
        """The holder loop of ``run`` from an ACQUIRED or NEXT you got yourself (``acquire``,
        ``claim``): handler, complete, ... until RELEASED. ``payload``: of your own request (an
        ACQUIRED answer does not repeat it); ``request_id``: your own request (by default the
        ACQUIRED one), for the report's ``handled_own``. Errors carry ``error.report`` as in ``run``."""
        return _holder.hold(self, outcome, handler, payload=payload, take=take, request_id=request_id)

    def run_claims(self, handler: Handler, *, lcid_prefix: Optional[str] = None, lease_ms: Optional[int] = None,
                   take: Optional[int] = None, stop: Optional[threading.Event] = None,
                   on_error: Optional[OnError] = None, on_claim: Optional[OnClaim] = None) -> ClaimReport:
        """The continuous claim poller: claim; on work run the holder loop and claim again at once;
        on 204 sleep a random 200 ms..1 s; until ``stop`` (a ``threading.Event``) is set. Then it
        returns a ``ClaimReport`` (``claims``, ``handled``, ``failed``).

        ``on_error(error)``: every handler error, lost lock and failed claim (default: a warning
        on the ``baton`` logger); the poller goes on after each (the request was requeued, or
        comes back after its lease): one bad request must not stop a worker. A handler's error
        carries ``error.report`` (its ``lcid``). ``on_claim(next)``: sees each claim's answer
        before its work is done (an error there gives the claim back and goes to ``on_error``).

        Setting ``stop`` ends a claim in flight at once, its retries included; the holder loop in
        hand runs to its end.
        """
        return _claims.run_claims(self, handler, lcid_prefix=lcid_prefix, lease_ms=lease_ms, take=take, stop=stop,
                                  on_error=on_error, on_claim=on_claim)

    def await_turn(self, lcid: str, request_id: Optional[str] = None, payload: Any = None, *,
                   lease_ms: Optional[int] = None, timeout: Optional[float] = None,
                   traceparent: Optional[str] = None, tracestate: Optional[str] = None) -> Turn:
        """Submits (or repeats) a ``wait`` request and long-polls until its turn, picks it up and
        heartbeats it. The ``Turn`` is live when returned (renewed at once if a long wait or a
        retry used up a third of its lease) and has the request's ``attempt``.

        The request is withdrawn only when the caller gives up: ``timeout`` (seconds, None = no
        limit) ran out (then BatonTimeoutError; a turn granted just then is picked up and
        aborted), or the wait was interrupted (KeyboardInterrupt, SystemExit, any exception that
        is not a BatonError). A failure of the call itself (a TransportError or a 503 past the
        retry deadline, an unexpected answer) is raised without withdrawing: the request keeps its
        place, and ``await_turn`` with the same ``request_id`` waits on in the same place.

        While it waits, a lock view with requests queued and no holder, seen twice in a row,
        is logged once as a warning: work ahead of the turn that waits for a claim poller.
        ``traceparent`` / ``tracestate``: as for ``acquire``.
        """
        return _wait.await_turn(self, lcid, request_id, payload, lease_ms=lease_ms, timeout=timeout,
                                traceparent=traceparent, tracestate=tracestate)

    def await_result(self, lcid: str, request_id: str, *, timeout: Optional[float] = None) -> RequestView:
        """Long-polls the request view until DONE, ABORTED or DEAD (BatonTimeoutError after timeout)."""
        return _wait.await_result(self, lcid, request_id, timeout=timeout)

    def lock_all(self, lcids: Iterable[str], handler: Callable[[LockAllWork], Any], *,
                 lease_ms: Optional[int] = None, timeout: Optional[float] = None,
                 traceparent: Optional[str] = None, tracestate: Optional[str] = None) -> Any:
        """Holds every lcid at once (wait-mode turns taken in UTF-8 byte order, so two callers
        never wait for each other in a cycle), runs ``handler(work)`` with ``work.fences`` and
        completes in reverse order. Any failure (also a transport error) aborts (no requeue) what
        is held and withdraws what is waited for, then re-raises. Nothing is atomic across lcids:
        see the README.

        ``handoff`` requests (``run``) on the same lcids queue like everyone else's: after a turn,
        one at the head waits for a claim poller, and every later ``lock_all`` waits behind it.
        Run a claim poller when ``lock_all`` and ``run`` share lcids.
        ``traceparent`` / ``tracestate``: as for ``acquire``, sent with every turn.
        """
        return _wait.lock_all(self, lcids, handler, lease_ms=lease_ms, timeout=timeout, traceparent=traceparent,
                              tracestate=tracestate)
