"""The Baton client: every call of protocol v1.1, with retries, and the holder loops on top.

One ``Client`` may be shared by many threads: it holds a keep-alive connection pool and, with a
token file, the last token read (under a lock); no other mutable state. Every call is retried with
the *same* body after a connection error, a timeout, 429, 500 or 503 (a problem answer): Baton
answers a repeated call from what is stored, so a retry never does work twice (docs/protocol.md,
"Guarantees").
"""
from __future__ import annotations

import http.client
import json
import logging
import os
import random
import threading
import time
import urllib.parse
import uuid
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple, Union

from . import __version__ as _version
from . import _tracing
from ._http import Pool, Response
from .errors import (BatonError, BatonTimeoutError, DuplicateRequestError, LockLostError, NotFoundError,
                     NotQueuedError, ProblemError, TransportError, UnexpectedResponseError, problem_error)
from .holder import LockAllWork, Turn, Work, _Lease, _reason
from .outcomes import (ENDED_STATES, Acquired, DeadLetter, Item, LockView, Next, Outcome, Queued, Released,
                       RequestView, RunReport, parse_outcome)

__all__ = ["Client", "new_request_id"]

log = logging.getLogger("baton")

_RETRY_STATUSES = frozenset({429, 500, 503})
_BACKOFF_BASE = 0.1
_BACKOFF_CAP = 5.0
_LONG_POLL_MAX_MS = 30000
_LONG_POLL_SLACK = 5.0  # read timeout of a long-poll: waitMs + 5 s

Handler = Callable[[Work], Any]


def new_request_id() -> str:
    """A fresh random requestId (UUID4 hex: inside the requestId alphabet)."""
    return uuid.uuid4().hex


def backoff_delay(attempt: int, retry_after: Optional[float] = None, rng: Callable[[], float] = random.random) -> float:
    """Full-jitter exponential backoff: random in [0, min(cap, base * 2^attempt)], at least Retry-After."""
    delay = rng() * min(_BACKOFF_CAP, _BACKOFF_BASE * (2 ** min(attempt, 16)))
    if retry_after is not None:
        delay = max(delay, retry_after)
    return delay


def _retry_after(headers: Mapping[str, str]) -> Optional[float]:
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value.strip()))
    except ValueError:
        return None  # an HTTP-date: Baton never sends one; the backoff alone applies


def _quote(segment: str) -> str:
    return urllib.parse.quote(segment, safe="")


class _TokenFile:
    """The bearer token in a file that is replaced before the token expires (a Kubernetes
    projected service-account token: hourly, by a symlink swap). Read once at construction, so a
    wrong path fails there, then again when the last read is older than ``refresh`` seconds."""

    def __init__(self, path: Union[str, "os.PathLike[str]"], refresh: float) -> None:
        self.path = os.fspath(path)
        self.refresh = refresh
        self._lock = threading.Lock()
        self._warned = False
        try:
            self._token = self._read()
        except (OSError, ValueError) as cause:
            raise ValueError(f"token_file {self.path!r} cannot be used: {_unreadable(cause)}") from cause
        self._read_at = time.monotonic()

    def _read(self) -> str:
        with open(self.path, "rb") as file:
            token = file.read().strip().decode("ascii", errors="replace")
        if not token:
            raise ValueError("it is empty")
        # http.client would put the whole header value, the token, into its error message.
        if not all("!" <= c <= "~" for c in token):
            raise ValueError("it holds whitespace or characters other than visible ASCII")
        return token

    def token(self, renew: bool = False) -> str:
        """The token to send; ``renew`` reads the file whatever the interval (after a 401)."""
        with self._lock:
            if renew or time.monotonic() - self._read_at >= self.refresh:
                try:
                    self._token, self._read_at, self._warned = self._read(), time.monotonic(), False
                except (OSError, ValueError) as cause:
                    # Mid-swap, or the kubelet is late: the last token may well still be valid,
                    # and the server is the one to say it is not.
                    if not self._warned:
                        self._warned = True
                        log.warning("baton: token file %s cannot be read again (%s); sending the last token read",
                                    self.path, _unreadable(cause))
            return self._token


def _unreadable(cause: BaseException) -> str:
    """Why a token file cannot be used, without its content."""
    if isinstance(cause, OSError):
        return cause.strerror or type(cause).__name__
    return str(cause)


class Client:
    """A Baton client.

    ``url``: the API base (``http://host:8080``); ``api_key``: sent as ``Authorization: Bearer``;
    ``token_file``: instead of ``api_key``, a file holding a JWT workload token (a Kubernetes
    projected service-account token), sent the same way and read again every ``token_refresh``
    seconds (30; 0 = before every attempt) and at once after a 401;
    ``timeout``: read timeout of one attempt, seconds (10); ``retry_timeout``: how long one call
    keeps retrying before its last error is raised, seconds (30).
    """

    def __init__(self, url: str, api_key: Optional[str] = None, *,
                 token_file: Optional[Union[str, "os.PathLike[str]"]] = None, token_refresh: float = 30.0,
                 timeout: float = 10.0, retry_timeout: float = 30.0, max_idle_connections: int = 16) -> None:
        if api_key and token_file is not None:
            raise ValueError("give api_key or token_file, not both")
        if token_refresh < 0:
            raise ValueError(f"token_refresh must be >= 0 seconds, not {token_refresh}")
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.retry_timeout = retry_timeout
        self._pool = Pool(self.url, max_idle_connections)
        self._headers = {"Accept": "application/json, application/problem+json",
                         "User-Agent": f"baton-python/{_version}"}
        self._api_key = api_key or None
        self._token_file = None if token_file is None else _TokenFile(token_file, token_refresh)

    # ------------------------------------------------------------------ transport

    def close(self) -> None:
        """Closes the idle connections (calls still work afterwards, on new connections)."""
        self._pool.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _authorization(self, renew: bool = False) -> Optional[str]:
        """The Authorization header of the next attempt. Asked per attempt, so every call, also
        the background heartbeats and claim pollers, sends a token file's current token."""
        if self._token_file is not None:
            return f"Bearer {self._token_file.token(renew)}"
        return f"Bearer {self._api_key}" if self._api_key else None

    def _call(self, method: str, path: str, body: Optional[Mapping[str, Any]] = None, *,
              read_timeout: Optional[float] = None, deadline: Optional[float] = None,
              extra_headers: Optional[Mapping[str, str]] = None) -> Tuple[int, Any, float]:
        """One call with retries. Returns (status, parsed JSON or None, send time of the answered attempt)."""
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode("utf-8")
        headers = dict(self._headers)
        if extra_headers:
            headers.update(extra_headers)
        if data is not None:
            headers["Content-Type"] = "application/json"
        per_attempt = read_timeout if read_timeout is not None else self.timeout
        if deadline is None:
            deadline = time.monotonic() + self.retry_timeout + (read_timeout or 0.0)
        attempt = 0
        renewed = False
        while True:
            attempt += 1
            authorization = self._authorization()
            if authorization is not None:
                headers["Authorization"] = authorization
            sent_at = time.monotonic()
            timeout = max(0.05, min(per_attempt, deadline - sent_at))
            retry_after: Optional[float] = None
            try:
                answer = self._pool.request(method, path, data, headers, timeout)
            except (OSError, http.client.HTTPException) as cause:
                error: BatonError = TransportError(f"{method} {path}: {type(cause).__name__}: {cause}", cause)
            else:
                status, parsed, error_or_none = _interpret(answer)
                if error_or_none is None:
                    return status, parsed, sent_at
                error = error_or_none
                # The token may have been rotated since it was read: a changed file earns one
                # more attempt at once, an unchanged one means the 401 is meant.
                if (answer.status == 401 and self._token_file is not None and not renewed
                        and self._authorization(renew=True) != authorization):
                    renewed = True
                    continue
                if not (isinstance(error, ProblemError) and answer.status in _RETRY_STATUSES):
                    error.attempts = attempt
                    raise error
                retry_after = error.retry_after
            error.attempts = attempt
            delay = backoff_delay(attempt - 1, retry_after)
            if time.monotonic() + delay >= deadline:
                raise error
            log.debug("baton: %s %s failed (%s), retry in %.2f s", method, path, error, delay)
            time.sleep(delay)

    # ------------------------------------------------------------------ the calls

    def acquire(self, lcid: str, request_id: str, payload: Any = None, *, lease_ms: Optional[int] = None,
                mode: Optional[str] = None, wait_ms: Optional[int] = None, take: Optional[int] = None,
                traceparent: Optional[str] = None, tracestate: Optional[str] = None
                ) -> Union[Acquired, Queued, Next]:
        """Takes the lock for a request (ACQUIRED), queues it (QUEUED), or rescues a queue (NEXT).

        ``traceparent`` / ``tracestate``: the W3C trace context stored with a new request; by
        default the current OpenTelemetry span's, if the application has OpenTelemetry.
        """
        body: Dict[str, Any] = {"requestId": request_id}
        if payload is not None:
            body["payload"] = payload
        _put(body, "leaseMs", lease_ms)
        _put(body, "mode", mode)
        _put(body, "waitMs", wait_ms)
        _put(body, "take", take)
        read = wait_ms / 1000.0 + _LONG_POLL_SLACK if wait_ms else None
        _, answer, sent = self._call("POST", f"/v1/locks/{_quote(lcid)}/acquire", body, read_timeout=read,
                                     extra_headers=_tracing.outgoing(traceparent, tracestate))
        return parse_outcome(answer, sent)  # type: ignore[return-value]

    def heartbeat(self, lcid: str, token: str, *, lease_ms: Optional[int] = None) -> Acquired:
        """Renews the lease (LockLostError when it is gone). ``lease_ms`` changes the lease in force."""
        body: Dict[str, Any] = {"token": token}
        _put(body, "leaseMs", lease_ms)
        _, answer, sent = self._call("POST", f"/v1/locks/{_quote(lcid)}/heartbeat", body)
        return parse_outcome(answer, sent)  # type: ignore[return-value]

    def _heartbeat_until(self, lcid: str, token: str, deadline: float) -> Acquired:
        """The background heartbeat: retries only until the holder's own lease deadline."""
        _, answer, sent = self._call("POST", f"/v1/locks/{_quote(lcid)}/heartbeat", {"token": token},
                                     deadline=deadline)
        return parse_outcome(answer, sent)  # type: ignore[return-value]

    def complete(self, lcid: str, token: str, request_id: Optional[str] = None, result: Any = None, *,
                 completed: Optional[Mapping[str, Any]] = None, take: Optional[int] = None) -> Union[Next, Released]:
        """Finishes the active request (``request_id``, ``result``) or batch (``completed``: a
        mapping requestId -> result, None for no result), then hands off (NEXT) or releases."""
        body: Dict[str, Any] = {"token": token}
        if completed is not None:
            if request_id is not None or result is not None:
                raise ValueError("send either request_id (with result) or completed, not both")
            entries = []
            for rid, value in completed.items():
                entry: Dict[str, Any] = {"requestId": rid}
                if value is not None:
                    entry["result"] = value
                entries.append(entry)
            body["completed"] = entries
        else:
            if request_id is None:
                raise ValueError("complete needs request_id or completed")
            body["requestId"] = request_id
            if result is not None:
                body["result"] = result
        _put(body, "take", take)
        _, answer, sent = self._call("POST", f"/v1/locks/{_quote(lcid)}/complete", body)
        return parse_outcome(answer, sent)  # type: ignore[return-value]

    def abort(self, lcid: str, token: str, request_id: str, *, requeue: bool = False,
              reason: Optional[str] = None) -> Released:
        """The holder gives up its request (its whole batch); with requeue it goes back to the head."""
        body: Dict[str, Any] = {"requestId": request_id, "token": token}
        if requeue:
            body["requeue"] = True
        _put(body, "reason", None if reason is None else reason[:1024])
        _, answer, sent = self._call("POST", f"/v1/locks/{_quote(lcid)}/abort", body)
        return parse_outcome(answer, sent)  # type: ignore[return-value]

    def withdraw(self, lcid: str, request_id: str, *, reason: Optional[str] = None) -> Released:
        """A waiter takes its QUEUED request out of the queue (NotQueuedError if it no longer waits)."""
        body: Dict[str, Any] = {"requestId": request_id}
        _put(body, "reason", None if reason is None else reason[:1024])
        _, answer, sent = self._call("POST", f"/v1/locks/{_quote(lcid)}/abort", body)
        return parse_outcome(answer, sent)  # type: ignore[return-value]

    def lock(self, lcid: str) -> LockView:
        """The lock view (never the token)."""
        _, answer, _ = self._call("GET", f"/v1/locks/{_quote(lcid)}")
        return LockView.from_json(answer)

    def request(self, lcid: str, request_id: str, *, wait_ms: Optional[int] = None) -> RequestView:
        """The request view; with ``wait_ms`` held until the request ended or wait_ms passed."""
        path = f"/v1/locks/{_quote(lcid)}/requests/{_quote(request_id)}"
        if wait_ms is not None:
            path += f"?waitMs={int(wait_ms)}"
        read = wait_ms / 1000.0 + _LONG_POLL_SLACK if wait_ms else None
        _, answer, _ = self._call("GET", path, read_timeout=read)
        return RequestView.from_json(answer)

    def claim(self, *, lease_ms: Optional[int] = None, take: Optional[int] = None,
              lcid_prefix: Optional[str] = None) -> Optional[Next]:
        """Takes orphaned work of the tenant (NEXT), or None (204). Use run_claims to poll."""
        body: Dict[str, Any] = {}
        _put(body, "leaseMs", lease_ms)
        _put(body, "take", take)
        _put(body, "lcidPrefix", lcid_prefix)
        status, answer, sent = self._call("POST", "/v1/claims", body)
        if status == 204 or answer is None:
            return None
        return parse_outcome(answer, sent)  # type: ignore[return-value]

    def dead_letters(self, *, limit: Optional[int] = None) -> List[DeadLetter]:
        """The tenant's DEAD requests, newest first (admin key)."""
        path = "/v1/dead-letters" + (f"?limit={int(limit)}" if limit is not None else "")
        _, answer, _ = self._call("GET", path)
        return [DeadLetter.from_json(item) for item in answer.get("items", [])]

    def redrive(self, lcid: str, request_id: str) -> Queued:
        """Queues a DEAD request again with attempt 1 (admin key). NotDeadError: nothing to do."""
        _, answer, sent = self._call("POST", f"/v1/locks/{_quote(lcid)}/requests/{_quote(request_id)}/retry")
        return parse_outcome(answer, sent)  # type: ignore[return-value]

    def queue(self, lcid: str, *, offset: int = 0, limit: int = 50, payload: bool = False) -> Dict[str, Any]:
        """A page of an lcid's queue, head first (admin key), as the raw answer."""
        path = f"/v1/locks/{_quote(lcid)}/queue?offset={int(offset)}&limit={int(limit)}&payload={str(payload).lower()}"
        return self._call("GET", path)[1]  # type: ignore[no-any-return]

    def busy_locks(self, *, order: str = "held", offset: int = 0, limit: int = 50) -> Dict[str, Any]:
        """The tenant's busy lcids (admin key), as the raw answer."""
        return self._call("GET", f"/v1/busy-locks?order={order}&offset={int(offset)}&limit={int(limit)}")[1]  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ the holder

    def run(self, lcid: str, handler: Handler, *, request_id: Optional[str] = None, payload: Any = None,
            lease_ms: Optional[int] = None, take: Optional[int] = None, traceparent: Optional[str] = None,
            tracestate: Optional[str] = None) -> RunReport:
        """Submits a request and, whenever this call holds the lock, does the queue's work.

        QUEUED: returns at once (the holder does it). ACQUIRED / NEXT: calls ``handler(work)`` for
        each request (or batch), heartbeating in the background, completes with its return value
        and goes on until RELEASED. A handler error aborts with requeue and is re-raised; a lost
        lock cancels the handler and raises LockLostError. ``traceparent`` / ``tracestate``: as
        for ``acquire``; with OpenTelemetry each handler call runs in a ``baton.work`` span.
        """
        rid = request_id or new_request_id()
        try:
            outcome = self.acquire(lcid, rid, payload, lease_ms=lease_ms, take=take, traceparent=traceparent,
                                   tracestate=tracestate)
        except DuplicateRequestError as error:
            # An earlier attempt of this very call was stored (its answer was lost to a 503 or a
            # restart) and another holder has taken the request since: that is QUEUED, done.
            if error.attempts > 1 and error.state in ("ACTIVE", "DONE"):
                return RunReport("QUEUED", lcid, rid)
            raise
        if isinstance(outcome, Queued):
            return RunReport("QUEUED", lcid, rid, position=outcome.position)
        return self.hold(outcome, handler, payload=payload, take=take)

    def hold(self, outcome: Union[Acquired, Next], handler: Handler, *, payload: Any = None,
             take: Optional[int] = None) -> RunReport:
        """The holder loop of ``run`` from an ACQUIRED or NEXT you got yourself (``acquire``,
        ``claim``): handler, complete, ... until RELEASED. ``payload``: of your own request (an
        ACQUIRED answer does not repeat it)."""
        own = (Item(outcome.request_id, payload, 1, outcome.traceparent, outcome.tracestate)
               if isinstance(outcome, Acquired) else None)
        released, handled = self._hold(outcome.lcid, outcome, own, handler, take)
        rid = outcome.request_id if isinstance(outcome, Acquired) else outcome.request.request_id
        return RunReport("RELEASED", outcome.lcid, rid, handled=handled, released=released)

    def _hold(self, lcid: str, outcome: Outcome, own: Optional[Item], handler: Handler,
              take: Optional[int]) -> Tuple[Released, List[str]]:
        """The holder loop of docs/protocol.md from an ACQUIRED or NEXT outcome to RELEASED."""
        handled: List[str] = []
        while isinstance(outcome, (Acquired, Next)):
            if isinstance(outcome, Acquired):
                items = [own if own is not None and own.request_id == outcome.request_id
                         else Item(outcome.request_id, None, 1, outcome.traceparent, outcome.tracestate)]
            else:
                items = outcome.requests
            lease = _Lease(self, lcid, outcome.token, outcome.lease_ms, outcome.sent_at).start()
            work = Work(lcid, outcome.fence, items, lease)
            attributes: Dict[str, Any] = {"baton.lcid": lcid, "baton.request_id": items[0].request_id,
                                          "baton.fence": outcome.fence}
            if len(items) > 1:
                attributes["baton.batch_size"] = len(items)
            try:
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
                    self.abort(lcid, outcome.token, items[0].request_id, requeue=True, reason=_reason(error))
                except BatonError as failure:
                    log.warning("baton: abort after handler error on %s failed: %s", lcid, failure)
                raise
            lost = lease.stop()
            if lost is not None:
                raise lost
            if len(items) == 1:
                outcome = self.complete(lcid, outcome.token, items[0].request_id, result, take=take)
            else:
                results: Mapping[str, Any] = result or {}
                outcome = self.complete(lcid, outcome.token, completed={i.request_id: results.get(i.request_id)
                                                                        for i in items}, take=take)
            handled.extend(i.request_id for i in items)
        if not isinstance(outcome, Released):
            raise UnexpectedResponseError(200, json.dumps(outcome.raw), "application/json")
        return outcome, handled

    def run_claims(self, handler: Handler, *, lcid_prefix: Optional[str] = None, lease_ms: Optional[int] = None,
                   take: Optional[int] = None, stop: Optional[threading.Event] = None) -> int:
        """The continuous claim poller: claim; on work run the holder loop and claim again at once;
        on 204 sleep a random 200 ms..1 s; until ``stop`` is set. Returns how many claims got work.

        Handler errors and lost locks are logged and polling goes on (the request was requeued or
        will come back after its lease): one bad request must not stop a worker.
        """
        stop = stop or threading.Event()
        claimed = 0
        while not stop.is_set():
            try:
                outcome = self.claim(lease_ms=lease_ms, take=take, lcid_prefix=lcid_prefix)
            except BatonError as error:
                log.warning("baton: claim failed: %s", error)
                stop.wait(random.uniform(0.2, 1.0))
                continue
            if outcome is None:
                stop.wait(random.uniform(0.2, 1.0))
                continue
            claimed += 1
            try:
                self._hold(outcome.lcid, outcome, None, handler, take)
            except Exception as error:  # noqa: BLE001 - logged; the poller goes on
                log.warning("baton: claimed work on %s failed: %s", outcome.lcid, error)
        return claimed

    # ------------------------------------------------------------------ wait mode

    def await_turn(self, lcid: str, request_id: Optional[str] = None, payload: Any = None, *,
                   lease_ms: Optional[int] = None, timeout: Optional[float] = None,
                   traceparent: Optional[str] = None, tracestate: Optional[str] = None,
                   _also_cancel: Iterable[threading.Event] = ()) -> Turn:
        """Submits (or repeats) a ``wait`` request and long-polls until its turn, picks it up and
        heartbeats it. ``timeout`` (seconds, None = no limit): on expiry the request is withdrawn
        (or, if its turn was just granted, picked up and aborted) and BatonTimeoutError raised.
        ``traceparent`` / ``tracestate``: as for ``acquire``.
        """
        rid = request_id or new_request_id()
        # Resolved once: the context of this call, whatever is current when a long-poll is repeated.
        context = _tracing.outgoing(traceparent, tracestate)
        deadline = None if timeout is None else time.monotonic() + timeout
        submitted = False  # maybe stored: from the first send on, a failure must withdraw it
        asked = False
        try:
            while True:
                remaining_ms = _LONG_POLL_MAX_MS if deadline is None else int((deadline - time.monotonic()) * 1000)
                if asked and remaining_ms <= 0:
                    raise BatonTimeoutError(f"{lcid}/{rid}: no turn within {timeout} s")
                submitted = True
                outcome = self.acquire(lcid, rid, payload, lease_ms=lease_ms, mode="wait",
                                       wait_ms=max(0, min(remaining_ms, _LONG_POLL_MAX_MS)),
                                       traceparent=context.get("traceparent"), tracestate=context.get("tracestate"))
                asked = True
                if isinstance(outcome, Acquired):
                    # The held call picked the turn up somewhere between its send and its answer;
                    # counting the lease from the send is safe but, after a long hold, leaves
                    # nothing of it: renew at once then, and count from that heartbeat.
                    started = outcome
                    if time.monotonic() - outcome.sent_at > outcome.lease_ms / 3000.0:
                        started = self.heartbeat(lcid, outcome.token)
                    lease = _Lease(self, lcid, outcome.token, started.lease_ms, started.sent_at,
                                   also_cancel=list(_also_cancel)).start()
                    return Turn(self, outcome, payload, lease)
                if not isinstance(outcome, Queued):
                    raise UnexpectedResponseError(200, json.dumps(outcome.raw), "application/json")
        except BaseException:
            if submitted:
                self._give_up_waiting(lcid, rid, payload, lease_ms)
            raise

    def _give_up_waiting(self, lcid: str, rid: str, payload: Any, lease_ms: Optional[int]) -> None:
        """Withdraws a wait request; if its turn was just granted, picks it up and aborts it."""
        try:
            self.withdraw(lcid, rid, reason="the waiter gave up")
        except NotQueuedError as error:
            if error.state != "ACTIVE":
                return
            try:
                outcome = self.acquire(lcid, rid, payload, lease_ms=lease_ms, mode="wait")
                if isinstance(outcome, Acquired):
                    self.abort(lcid, outcome.token, rid, reason="the waiter gave up")
            except BatonError as failure:
                log.warning("baton: giving up the turn of %s on %s failed: %s", rid, lcid, failure)
        except (NotFoundError, BatonError) as failure:
            log.warning("baton: withdrawing %s on %s failed: %s", rid, lcid, failure)

    def await_result(self, lcid: str, request_id: str, *, timeout: Optional[float] = None) -> RequestView:
        """Long-polls the request view until DONE, ABORTED or DEAD (BatonTimeoutError after timeout)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            remaining_ms = _LONG_POLL_MAX_MS if deadline is None else int((deadline - time.monotonic()) * 1000)
            view = self.request(lcid, request_id, wait_ms=max(0, min(remaining_ms, _LONG_POLL_MAX_MS)))
            if view.state in ENDED_STATES:
                return view
            if deadline is not None and time.monotonic() >= deadline:
                raise BatonTimeoutError(f"{lcid}/{request_id} still {view.state} after {timeout} s")

    # ------------------------------------------------------------------ several lcids

    def lock_all(self, lcids: Iterable[str], handler: Callable[[LockAllWork], Any], *,
                 lease_ms: Optional[int] = None, timeout: Optional[float] = None,
                 traceparent: Optional[str] = None, tracestate: Optional[str] = None) -> Any:
        """Holds every lcid at once (wait-mode turns taken in UTF-8 byte order, so two callers
        never wait for each other in a cycle), runs ``handler(work)`` with ``work.fences`` and
        completes in reverse order. Any failure aborts (no requeue) what is held and withdraws
        what is waited for, then re-raises. Nothing is atomic across lcids: see the README.
        ``traceparent`` / ``tracestate``: as for ``acquire``, sent with every turn.
        """
        ordered = sorted(set(lcids), key=lambda s: s.encode("utf-8"))
        deadline = None if timeout is None else time.monotonic() + timeout
        cancelled = threading.Event()
        turns: List[Turn] = []
        try:
            for lcid in ordered:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                turns.append(self.await_turn(lcid, new_request_id(), lease_ms=lease_ms, timeout=left,
                                             traceparent=traceparent, tracestate=tracestate,
                                             _also_cancel=[cancelled]))
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


def _put(body: Dict[str, Any], name: str, value: Any) -> None:
    if value is not None:
        body[name] = value


def _interpret(answer: Response) -> Tuple[int, Any, Optional[BatonError]]:
    """(status, parsed body, error or None) of one answer."""
    content_type = answer.headers.get("content-type", "")
    media = content_type.split(";")[0].strip().lower()
    text = answer.body.decode("utf-8", errors="replace")
    if 200 <= answer.status < 300:
        if answer.status == 204 or not answer.body:
            return answer.status, None, None
        if media != "application/json":
            return answer.status, None, UnexpectedResponseError(answer.status, text, content_type)
        try:
            return answer.status, json.loads(text), None
        except ValueError:
            return answer.status, None, UnexpectedResponseError(answer.status, text, content_type)
    if media in ("application/problem+json", "application/json"):
        try:
            body = json.loads(text)
        except ValueError:
            body = None
        if isinstance(body, dict) and "code" in body:
            return answer.status, body, problem_error(answer.status, body, _retry_after(answer.headers))
    return answer.status, None, UnexpectedResponseError(answer.status, text, content_type)
