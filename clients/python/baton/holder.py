"""The holder side: the background heartbeat that keeps a lease, and what a handler is given.

The holder keeps its own lease deadline (docs/protocol.md, "Lease sizing"): the monotonic send
time of its last successful renewal (the acquire, complete, claim or heartbeat that gave it the
lock or its current request) plus the lease. It does not trust ``expiresAt``: that is the Redis
clock, and a holder that cannot reach Baton cannot learn that its lease ran out. When that
deadline passes without a renewal, or a heartbeat answers LOCK_LOST, the handler is cancelled and
the client never completes for it: another holder may already be doing the work.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

from .errors import BatonError, LockLostError
from .outcomes import Acquired, Item, Outcome, Released

if TYPE_CHECKING:  # pragma: no cover
    from .client import Client

__all__ = ["Work", "Turn", "LockAllWork"]

log = logging.getLogger("baton")


class _Lease:
    """One holding's lease: heartbeats every lease/3 on a daemon thread until stopped or lost."""

    def __init__(self, client: "Client", lcid: str, token: str, lease_ms: int, sent_at: float,
                 also_cancel: Sequence[threading.Event] = ()) -> None:
        self._client = client
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
        log.warning("baton: lock lost on %s: %s", self.lcid, error)
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
                answer = self._client._heartbeat_until(self.lcid, self._token, deadline)
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


class Turn:
    """A wait-mode request's turn, picked up and heartbeated in the background.

    Finish it with ``complete(result)`` or ``abort(requeue=..., reason=...)``. Used as a context
    manager it completes (without result) on a normal exit and aborts (no requeue) on an error.
    """

    def __init__(self, client: "Client", acquired: Acquired, payload: Any, lease: _Lease) -> None:
        self._client = client
        self._token = acquired.token
        self._lease = lease
        self.lcid = acquired.lcid
        self.request_id = acquired.request_id
        self.fence = acquired.fence
        self.lease_ms = acquired.lease_ms
        self.payload = payload
        self.traceparent = acquired.traceparent
        self.tracestate = acquired.tracestate
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
        return self._client.complete(self.lcid, self._token, self.request_id, result=result, take=take)

    def abort(self, requeue: bool = False, reason: Optional[str] = None) -> Released:
        """Gives the turn up: ABORTED, or with requeue back at the head with attempt + 1."""
        self._lease.stop()
        self.finished = True
        return self._client.abort(self.lcid, self._token, self.request_id, requeue=requeue, reason=reason)

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
        return f"Turn(lcid={self.lcid!r}, request_id={self.request_id!r}, fence={self.fence})"


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


def _reason(error: BaseException) -> str:
    """The abort reason for a handler's error: its message (or type), cut to the 1024 allowed."""
    text = str(error) or type(error).__name__
    return text[:1024]
