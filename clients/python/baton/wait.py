"""Wait mode: ``await_turn`` (a ``wait`` request's turn, picked up and heartbeated), ``Turn``,
``await_result``, and ``lock_all`` (turns on several lcids in one global order).

Built on the calls and on the holder's lease (``holder.py``); nothing here is imported by them.
"""
from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any, Callable, Dict, Iterable, List, Optional

from . import _tracing
from .calls import LONG_POLL_MAX_MS, Calls, new_request_id
from .errors import (BatonError, BatonTimeoutError, LockLostError, NotFoundError, NotQueuedError,
                     UnexpectedResponseError)
from .holder import _Lease, _reason
from .outcomes import ENDED_STATES, Acquired, Outcome, Queued, Released, RequestView

__all__ = ["Turn", "LockAllWork", "await_turn", "await_result", "lock_all"]

log = logging.getLogger("baton")

WHO_RESCUES_WHAT = "https://github.com/baton-dev/baton/blob/main/docs/claims-and-dead-letters.md#who-rescues-what"


class Turn:
    """A wait-mode request's turn, picked up and heartbeated in the background.

    Finish it with ``complete(result)`` or ``abort(requeue=..., reason=...)``. Used as a context
    manager it completes (without result) on a normal exit and aborts (no requeue) on an error.
    """

    def __init__(self, calls: Calls, acquired: Acquired, payload: Any, lease: _Lease) -> None:
        self._calls = calls
        self._token = acquired.token
        self._lease = lease
        self.lcid = acquired.lcid
        self.request_id = acquired.request_id
        self.fence = acquired.fence
        self.lease_ms = acquired.lease_ms
        self.payload = payload
        self.traceparent = acquired.traceparent
        self.tracestate = acquired.tracestate
        #: Which attempt of the request this turn is (1 from a service older than protocol v1.2):
        #: more than 1 means the work is being redone.
        self.attempt = acquired.attempt
        self.cancelled: threading.Event = lease.cancelled
        self.finished = False

    def check(self) -> None:
        if self.cancelled.is_set():
            raise self._lease.lost or LockLostError.local(self.lcid, "cancelled")

    @property
    def deadline(self) -> float:
        return self._lease.deadline

    def complete(self, result: Any = None, take: Optional[int] = None) -> Outcome:
        """Completes the request. RELEASED (maybe ``passed_to`` the next waiter); with ``take``
        the holder may be handed queued handoff requests (NEXT), which it must then do."""
        lost = self._lease.stop()
        self.finished = True
        if lost is not None:
            raise lost
        return self._calls.complete(self.lcid, self._token, self.request_id, result=result, take=take)

    def abort(self, requeue: bool = False, reason: Optional[str] = None) -> Released:
        """Gives the turn up: ABORTED, or with requeue back at the head with attempt + 1."""
        self._lease.stop()
        self.finished = True
        return self._calls.abort(self.lcid, self._token, self.request_id, requeue=requeue, reason=reason)

    def __enter__(self) -> "Turn":
        return self

    def __exit__(self, kind: Any, error: Any, tb: Any) -> None:
        if self.finished:
            return
        if error is None:
            self.complete()
        else:
            try:
                self.abort(reason=_reason(error))
            except BatonError as failure:
                log.warning("baton: abort of %s on %s failed: %s", self.request_id, self.lcid, failure)

    def __repr__(self) -> str:
        return f"Turn(lcid={self.lcid!r}, request_id={self.request_id!r}, fence={self.fence}, attempt={self.attempt})"


class LockAllWork:
    """What a ``lock_all`` handler gets: every lcid's fence, and one cancellation for all."""

    def __init__(self, turns: List[Turn], cancelled: threading.Event) -> None:
        self.fences: Dict[str, int] = {t.lcid: t.fence for t in turns}
        self.turns = list(turns)
        self.cancelled = cancelled

    def check(self) -> None:
        if self.cancelled.is_set():
            for turn in self.turns:
                if turn._lease.lost is not None:
                    raise turn._lease.lost
            raise LockLostError.local(",".join(self.fences), "cancelled")

    def __repr__(self) -> str:
        return f"LockAllWork(fences={self.fences!r})"


def _gives_up(error: BaseException) -> bool:
    """Whether the caller gave the wait up (so it is withdrawn): its timeout ran out, or it was
    cancelled (KeyboardInterrupt, SystemExit, or any other exception that is not this client's).
    A failure of a call itself (a transport error or 503 past the retry deadline, an unexpected
    answer) is not: the request keeps its place, and waiting again with the same requestId
    waits on in the same place."""
    return isinstance(error, BatonTimeoutError) or not isinstance(error, BatonError)


class _StrandedWatch:
    """Tells, once per wait, that the lcid has requests queued and nobody holding it: work ahead
    of this turn (a ``handoff`` request, a requeued one) that only a claim poller or a new
    ``handoff`` acquire on the lcid will do. Two lock-view reads in a row, each after a long-poll
    that answered QUEUED, must find it so: a single one may fall between two holders."""

    def __init__(self, calls: Calls, lcid: str, request_id: str) -> None:
        self._calls = calls
        self._lcid = lcid
        self._request_id = request_id
        self._in_a_row = 0
        self._warned = False

    def after_queued(self) -> None:
        if self._warned:
            return
        try:
            view = self._calls.lock(self._lcid)
        except BatonError as error:  # the wait goes on; the next long-poll tells more
            log.debug("baton: lock view of %s failed: %s", self._lcid, error)
            self._in_a_row = 0
            return
        self._in_a_row = self._in_a_row + 1 if not view.held and view.queue_length > 0 else 0
        if self._in_a_row >= 2:
            self._warned = True
            log.warning("baton: %s has %d request(s) queued and no holder while %s waits for its turn: work "
                        "ahead of it is done only by a claim poller (or a new handoff acquire on %s); is one "
                        "running for these lcids? See who rescues what: %s", self._lcid, view.queue_length,
                        self._request_id, self._lcid, WHO_RESCUES_WHAT)


def await_turn(calls: Calls, lcid: str, request_id: Optional[str] = None, payload: Any = None, *,
               lease_ms: Optional[int] = None, timeout: Optional[float] = None,
               traceparent: Optional[str] = None, tracestate: Optional[str] = None,
               _also_cancel: Iterable[threading.Event] = (), _withdraw_on_failure: bool = False) -> Turn:
    """``Client.await_turn``. ``_withdraw_on_failure``: lock_all gives up on any failure."""
    rid = request_id or new_request_id()
    # Resolved once: the context of this call, whatever is current when a long-poll is repeated.
    context = _tracing.outgoing(traceparent, tracestate)
    deadline = None if timeout is None else time.monotonic() + timeout
    stranded = _StrandedWatch(calls, lcid, rid)
    submitted = False  # maybe stored: from the first send on, giving up must withdraw it
    asked = False
    try:
        while True:
            remaining_ms = LONG_POLL_MAX_MS if deadline is None else int((deadline - time.monotonic()) * 1000)
            if asked and remaining_ms <= 0:
                raise BatonTimeoutError(f"{lcid}/{rid}: no turn within {timeout} s")
            submitted = True
            outcome = calls.acquire(lcid, rid, payload, lease_ms=lease_ms, mode="wait",
                                    wait_ms=max(0, min(remaining_ms, LONG_POLL_MAX_MS)),
                                    traceparent=context.get("traceparent"), tracestate=context.get("tracestate"))
            asked = True
            if isinstance(outcome, Acquired):
                return _pick_up(calls, outcome, payload, list(_also_cancel))
            if not isinstance(outcome, Queued):
                raise UnexpectedResponseError(200, json.dumps(outcome.raw), "application/json")
            stranded.after_queued()
    except BaseException as error:
        if submitted and (_withdraw_on_failure or _gives_up(error)):
            _give_up_waiting(calls, lcid, rid, payload, lease_ms)
        raise


def _pick_up(calls: Calls, acquired: Acquired, payload: Any, also_cancel: List[threading.Event]) -> Turn:
    """A turn is live when it is returned. The service started its lease at the pick-up,
    somewhere between the send of the call's first attempt (``acquired.sent_at``, where the
    client's own deadline counts from) and the answer. When more than a third of the lease has
    passed since that send (a long-poll held until the turn came, a retry), it is renewed at once,
    before the caller works on it: so a turn granted after a wait of any length can be used."""
    lease_ms, sent_at = acquired.lease_ms, acquired.sent_at
    answered = time.monotonic()
    if answered - sent_at > lease_ms / 3000.0:
        try:
            # Retried until the latest moment the lease can end: the pick-up came before the answer.
            renewed = calls._heartbeat_until(acquired.lcid, acquired.token, answered + lease_ms / 1000.0)
        except LockLostError:
            raise
        except BatonError as error:
            raise LockLostError.local(acquired.lcid, f"the turn of {acquired.request_id} could not be renewed "
                                      f"after its pick-up ({error})") from error
        lease_ms, sent_at = renewed.lease_ms, renewed.sent_at
    lease = _Lease(calls, acquired.lcid, acquired.token, lease_ms, sent_at, also_cancel=also_cancel).start()
    return Turn(calls, acquired, payload, lease)


def _give_up_waiting(calls: Calls, lcid: str, rid: str, payload: Any, lease_ms: Optional[int]) -> None:
    """Withdraws a wait request; if its turn was just granted, picks it up and aborts it."""
    try:
        calls.withdraw(lcid, rid, reason="the waiter gave up")
    except NotQueuedError as error:
        if error.state != "ACTIVE":
            return
        try:
            outcome = calls.acquire(lcid, rid, payload, lease_ms=lease_ms, mode="wait")
            if isinstance(outcome, Acquired):
                calls.abort(lcid, outcome.token, rid, reason="the waiter gave up")
        except BatonError as failure:
            log.warning("baton: giving up the turn of %s on %s failed: %s", rid, lcid, failure)
    except (NotFoundError, BatonError) as failure:
        log.warning("baton: withdrawing %s on %s failed: %s", rid, lcid, failure)


def await_result(calls: Calls, lcid: str, request_id: str, *, timeout: Optional[float] = None) -> RequestView:
    """``Client.await_result``: long-polls the request view until DONE, ABORTED or DEAD."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        remaining_ms = LONG_POLL_MAX_MS if deadline is None else int((deadline - time.monotonic()) * 1000)
        view = calls.request(lcid, request_id, wait_ms=max(0, min(remaining_ms, LONG_POLL_MAX_MS)))
        if view.state in ENDED_STATES:
            return view
        if deadline is not None and time.monotonic() >= deadline:
            raise BatonTimeoutError(f"{lcid}/{request_id} still {view.state} after {timeout} s")


def lock_all(calls: Calls, lcids: Iterable[str], handler: Callable[[LockAllWork], Any], *,
             lease_ms: Optional[int] = None, timeout: Optional[float] = None,
             traceparent: Optional[str] = None, tracestate: Optional[str] = None) -> Any:
    """``Client.lock_all``: turns on every lcid in UTF-8 byte order, the handler, completes in
    reverse order; on any failure aborts what it holds and withdraws what it waits for."""
    ordered = sorted(set(lcids), key=lambda s: s.encode("utf-8"))
    deadline = None if timeout is None else time.monotonic() + timeout
    cancelled = threading.Event()
    turns: List[Turn] = []
    try:
        for lcid in ordered:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            turns.append(await_turn(calls, lcid, new_request_id(), lease_ms=lease_ms, timeout=left,
                                    traceparent=traceparent, tracestate=tracestate,
                                    _also_cancel=[cancelled], _withdraw_on_failure=True))
        work = LockAllWork(turns, cancelled)
        with _tracing.work_span({"baton.lcids": list(ordered), "baton.fences": [t.fence for t in turns]}, turns):
            result = handler(work)
        work.check()
    except BaseException as error:
        for turn in reversed(turns):
            if not turn.finished:
                try:
                    turn.abort(reason=_reason(error))
                except BatonError as failure:
                    log.warning("baton: abort of %s failed: %s", turn.lcid, failure)
        raise
    first_error: Optional[BaseException] = None
    for turn in reversed(turns):
        try:
            turn.complete()
        except BatonError as error:  # the work is done: finish the others, then report
            first_error = first_error or error
    if first_error is not None:
        raise first_error
    return result
