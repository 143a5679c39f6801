"""The holder: ``run`` (submit, and be the holder while this call holds the lock), ``hold``,
the background heartbeat that keeps a lease, and what a handler is given.

The holder keeps its own lease deadline (docs/protocol.md, "Lease sizing"): the monotonic send
time of its last successful renewal (the acquire, complete, claim or heartbeat that gave it the
lock or its current request) plus the lease. It does not trust ``expiresAt``: that is the Redis
clock, and a holder that cannot reach Baton cannot learn that its lease ran out. When that
deadline passes without a renewal, or a heartbeat answers LOCK_LOST, the handler is cancelled and
the client never completes for it: another holder may already be doing the work.

Built on the calls only (``calls.py``); wait mode and the claim poller build on this.
"""
from __future__ import annotations

import json
import logging
import threading
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from . import _tracing
from .calls import Calls, new_request_id
from .errors import BatonError, DuplicateRequestError, LockLostError, UnexpectedResponseError
from .outcomes import Acquired, Item, Next, Outcome, Queued, Released, RunReport

__all__ = ["Work", "Handler", "OnSubmit", "run", "hold"]

log = logging.getLogger("baton")

Handler = Callable[["Work"], Any]
#: ``on_submit(lcid, request_id, outcome)``: the acquire's answer (Acquired, Next or Queued), or
#: None when a retried acquire found its request already taken by another holder.
OnSubmit = Callable[[str, str, Optional[Outcome]], Any]


def _log_lost(lcid: str, error: LockLostError) -> None:
    if error.by_client:
        log.warning("baton: lock lost on %s, decided by this client (no renewal before its own lease deadline): %s",
                    lcid, error)
    else:
        log.warning("baton: lock lost on %s, the service answered LOCK_LOST: %s", lcid, error)


class _Lease:
    """One holding's lease: heartbeats every lease/3 on a daemon thread until stopped or lost."""

    def __init__(self, calls: Calls, lcid: str, token: str, lease_ms: int, sent_at: float,
                 also_cancel: Sequence[threading.Event] = ()) -> None:
        self._calls = calls
        self.lcid = lcid
        self._token = token
        self._lease_s = lease_ms / 1000.0
        self.deadline = sent_at + self._lease_s
        self._next_at = sent_at + self._lease_s / 3.0
        self.cancelled = threading.Event()
        self._also_cancel = list(also_cancel)
        self.lost: Optional[LockLostError] = None
        self._stopped = False
        self._wake = threading.Event()
        self._mutex = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name=f"baton-heartbeat-{lcid}", daemon=True)

    def start(self) -> "_Lease":
        self._thread.start()
        return self

    def renewed(self, sent_at: float, lease_ms: int) -> None:
        with self._mutex:
            self._lease_s = lease_ms / 1000.0
            self.deadline = max(self.deadline, sent_at + self._lease_s)

    def _lose(self, error: LockLostError) -> None:
        with self._mutex:
            if self._stopped or self.lost is not None:
                return
            self.lost = error
        _log_lost(self.lcid, error)
        self.cancelled.set()
        for event in self._also_cancel:
            event.set()

    def _loop(self) -> None:
        while True:
            with self._mutex:
                if self._stopped:
                    return
                deadline, next_at = self.deadline, self._next_at
            wait = min(next_at, deadline) - time.monotonic()
            if wait > 0 and self._wake.wait(wait):
                return  # stopped
            now = time.monotonic()
            if now >= deadline:
                self._lose(LockLostError.local(self.lcid, "no heartbeat renewed the lease before its deadline"))
                return
            if now < next_at:
                continue
            try:
                answer = self._calls._heartbeat_until(self.lcid, self._token, deadline)
            except LockLostError as error:
                self._lose(error)
                return
            except Exception as error:  # noqa: BLE001 - a BatonError, or a malformed answer
                # The retries already ran until the deadline (or the answer was not retryable):
                # try again soon, unless the deadline is what stopped them. Never let this
                # thread die: it is what cancels the handler when the deadline passes.
                log.info("baton: heartbeat on %s failed: %s", self.lcid, error)
                with self._mutex:
                    self._next_at = time.monotonic() + min(self._lease_s / 3.0, 0.25)
                continue
            with self._mutex:
                self.deadline = max(self.deadline, answer.sent_at + answer.lease_ms / 1000.0)
                self._lease_s = answer.lease_ms / 1000.0
                self._next_at = answer.sent_at + self._lease_s / 3.0

    def stop(self) -> Optional[LockLostError]:
        """Stops heartbeating. Returns the loss if the lock was lost (or the deadline is gone)."""
        with self._mutex:
            if not self._stopped and self.lost is None and time.monotonic() >= self.deadline:
                self.lost = LockLostError.local(self.lcid, "the lease deadline passed before the handler returned")
                lost_now = True
            else:
                lost_now = False
            self._stopped = True
        self._wake.set()
        if lost_now:
            _log_lost(self.lcid, self.lost)  # type: ignore[arg-type]
            self.cancelled.set()
            for event in self._also_cancel:
                event.set()
        return self.lost


class Work:
    """What a ``run`` / ``run_claims`` handler gets: the request(s) under one lock and fence.

    Pass ``fence`` to the database with every write (reject a lower one than the last stored; for
    a batch, accept an equal one). Long work should look at ``cancelled`` (a threading.Event) or
    call ``check()`` now and then: once set, the lock is gone and writing must stop.
    """

    def __init__(self, lcid: str, fence: int, requests: List[Item], lease: _Lease) -> None:
        self.lcid = lcid
        self.fence = fence
        self.requests = requests
        self._lease = lease
        self.cancelled: threading.Event = lease.cancelled

    @property
    def request(self) -> Item:
        """The first (for take=1 the only) request."""
        return self.requests[0]

    @property
    def request_id(self) -> str:
        return self.requests[0].request_id

    @property
    def payload(self) -> Any:
        return self.requests[0].payload

    @property
    def deadline(self) -> float:
        """The holder's own lease deadline, on time.monotonic()."""
        return self._lease.deadline

    def check(self) -> None:
        """Raises LockLostError if the lock was lost: call it between steps of long work."""
        if self.cancelled.is_set():
            raise self._lease.lost or LockLostError.local(self.lcid, "cancelled")

    def __repr__(self) -> str:
        return f"Work(lcid={self.lcid!r}, fence={self.fence}, requests={self.requests!r})"


def _reason(error: BaseException) -> str:
    """The abort reason for a handler's error: its message (or type), cut to the 1024 allowed."""
    text = str(error) or type(error).__name__
    return text[:1024]


def _attach(error: BaseException, report: RunReport) -> None:
    """A failed run keeps its report: whatever it raises carries what was handled until then."""
    try:
        error.report = report  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - an exception type that takes no attributes: nothing to keep it on
        pass


def run(calls: Calls, lcid: str, handler: Handler, *, request_id: Optional[str] = None, payload: Any = None,
        lease_ms: Optional[int] = None, take: Optional[int] = None, traceparent: Optional[str] = None,
        tracestate: Optional[str] = None, on_submit: Optional[OnSubmit] = None) -> RunReport:
    """``Client.run``: submits a request and, whenever this call holds the lock, does the queue's
    work until RELEASED. See ``Client.run``."""
    rid = request_id or new_request_id()
    handled: List[str] = []
    try:
        try:
            outcome = calls.acquire(lcid, rid, payload, lease_ms=lease_ms, take=take, traceparent=traceparent,
                                    tracestate=tracestate)
        except DuplicateRequestError as error:
            # An earlier attempt of this very call was stored (its answer was lost to a timeout, a
            # dropped connection or a 503) and another holder has taken the request since: that
            # is QUEUED, done. On a first send the requestId was simply used before: raised.
            if error.attempts > 1 and error.state in ("ACTIVE", "DONE"):
                if on_submit is not None:
                    on_submit(lcid, rid, None)
                return RunReport("QUEUED", lcid, rid)
            raise
        if isinstance(outcome, Queued):
            if on_submit is not None:
                on_submit(lcid, rid, outcome)
            return RunReport("QUEUED", lcid, rid, position=outcome.position)
        own = (Item(rid, payload, outcome.attempt, outcome.traceparent, outcome.tracestate)
               if isinstance(outcome, Acquired) else None)
        submitted = None if on_submit is None else (lambda: on_submit(lcid, rid, outcome))
        released = _hold(calls, lcid, outcome, own, handler, take, handled, before_first=submitted)
    except BaseException as error:
        _attach(error, RunReport("FAILED", lcid, rid, handled=list(handled), handled_own=rid in handled))
        raise
    return RunReport("RELEASED", lcid, rid, handled=handled, released=released, handled_own=rid in handled)


def hold(calls: Calls, outcome: Union[Acquired, Next], handler: Handler, *, payload: Any = None,
         take: Optional[int] = None, request_id: Optional[str] = None) -> RunReport:
    """``Client.hold``: the holder loop of ``run`` from an ACQUIRED or NEXT you got yourself."""
    own_id = request_id or (outcome.request_id if isinstance(outcome, Acquired) else None)
    own = (Item(outcome.request_id, payload, outcome.attempt, outcome.traceparent, outcome.tracestate)
           if isinstance(outcome, Acquired) else None)
    rid = own_id or outcome.request.request_id  # type: ignore[union-attr]
    handled: List[str] = []
    try:
        released = _hold(calls, outcome.lcid, outcome, own, handler, take, handled)
    except BaseException as error:
        _attach(error, RunReport("FAILED", outcome.lcid, rid, handled=list(handled), handled_own=own_id in handled))
        raise
    return RunReport("RELEASED", outcome.lcid, rid, handled=handled, released=released,
                     handled_own=own_id in handled)


def _hold(calls: Calls, lcid: str, outcome: Outcome, own: Optional[Item], handler: Handler,
          take: Optional[int], handled: List[str], before_first: Optional[Callable[[], Any]] = None) -> Released:
    """The holder loop of docs/protocol.md from an ACQUIRED or NEXT outcome to RELEASED; appends
    each completed requestId to ``handled`` as it goes (so a failure still tells what was done).
    ``before_first``: run once the first lease heartbeats, before the first handler (run's
    on_submit); an error there is handled as a handler's."""
    while isinstance(outcome, (Acquired, Next)):
        if isinstance(outcome, Acquired):
            items = [own if own is not None and own.request_id == outcome.request_id
                     else Item(outcome.request_id, None, outcome.attempt, outcome.traceparent, outcome.tracestate)]
        else:
            items = outcome.requests
        lease = _Lease(calls, lcid, outcome.token, outcome.lease_ms, outcome.sent_at).start()
        work = Work(lcid, outcome.fence, items, lease)
        attributes: Dict[str, Any] = {"baton.lcid": lcid, "baton.request_id": items[0].request_id,
                                      "baton.fence": outcome.fence}
        if len(items) > 1:
            attributes["baton.batch_size"] = len(items)
        try:
            if before_first is not None:
                first, before_first = before_first, None
                first()
            with _tracing.work_span(attributes, items):
                result = handler(work)
            if len(items) > 1 and result is not None and not isinstance(result, Mapping):
                raise TypeError("a batch handler returns a mapping requestId -> result (or None)")
        except BaseException as error:
            lost = lease.stop()
            if lost is not None:  # never abort or complete for a lock that is gone
                if lost is error:
                    raise
                raise lost from error
            try:
                # Back to the head of the lcid with attempt + 1; nobody holds it then: a claim
                # poller (or the next acquire on the lcid) does it.
                calls.abort(lcid, outcome.token, items[0].request_id, requeue=True, reason=_reason(error))
            except BatonError as failure:
                log.warning("baton: abort after handler error on %s failed: %s", lcid, failure)
            raise
        lost = lease.stop()
        if lost is not None:
            raise lost
        if len(items) == 1:
            outcome = calls.complete(lcid, outcome.token, items[0].request_id, result, take=take)
        else:
            results: Mapping[str, Any] = result or {}
            outcome = calls.complete(lcid, outcome.token, completed={i.request_id: results.get(i.request_id)
                                                                     for i in items}, take=take)
        handled.extend(i.request_id for i in items)
    if not isinstance(outcome, Released):
        raise UnexpectedResponseError(200, json.dumps(outcome.raw), "application/json")
    return outcome
