"""Every call of protocol v1.2, one method per endpoint, each with retries, answering typed
outcomes and raising typed errors.

``Calls`` may be shared by many threads: it holds a keep-alive connection pool and, with a token
file, the last token read (under a lock); no other mutable state. The holder (``holder.py``),
wait mode (``wait.py``) and the claim poller (``claims.py``) are built on these calls only, and
``Client`` (``client.py``) offers all of them.
"""
from __future__ import annotations

import json
import os
import urllib.parse
import uuid
from typing import Any, Dict, List, Mapping, Optional, TypeVar, Union

from . import _tracing
from ._http import Cancel, Transport
from ._retries import Reply, Retrier
from .errors import UnexpectedResponseError
from .outcomes import Acquired, DeadLetter, LockView, Next, Outcome, Queued, Released, RequestView, parse_outcome

__all__ = ["Calls", "new_request_id"]

_Self = TypeVar("_Self", bound="Calls")

LONG_POLL_MAX_MS = 30000
_LONG_POLL_SLACK = 5.0  # read timeout of a long-poll: waitMs + 5 s


def new_request_id() -> str:
    """A fresh random requestId (UUID4 hex: inside the requestId alphabet)."""
    return uuid.uuid4().hex


def _quote(segment: str) -> str:
    return urllib.parse.quote(segment, safe="")


def _put(body: Dict[str, Any], name: str, value: Any) -> None:
    if value is not None:
        body[name] = value


def _malformed(reply: Reply, cause: BaseException) -> UnexpectedResponseError:
    """A 2xx JSON answer that is not the shape of the protocol: not Baton speaking either."""
    error = UnexpectedResponseError(reply.status, json.dumps(reply.body), "application/json")
    error.__cause__ = cause
    return error


def _outcome(reply: Reply, sent_at: float) -> Outcome:
    try:
        return parse_outcome(reply.body, sent_at)
    except (KeyError, ValueError, TypeError, AttributeError) as cause:
        raise _malformed(reply, cause) from cause


def _renewal(reply: Reply) -> Acquired:
    """A heartbeat's answer, which is ACQUIRED or an error. Each attempt renews anew, so the lease
    counts from the send of the answered one."""
    outcome = _outcome(reply, reply.sent)
    if not isinstance(outcome, Acquired):
        raise _malformed(reply, ValueError(f"a heartbeat answered {outcome.status}"))
    return outcome


class Calls:
    """The calls of a Baton client, with retries.

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
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.retry_timeout = retry_timeout
        self._transport = Transport(self.url, api_key, token_file, token_refresh, max_idle_connections)
        self._retrier = Retrier(self._transport, timeout, retry_timeout)

    def close(self) -> None:
        """Closes the idle connections (calls still work afterwards, on new connections)."""
        self._transport.close()

    def __enter__(self: _Self) -> _Self:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _send(self, method: str, path: str, body: Optional[Mapping[str, Any]] = None, **options: Any) -> Reply:
        return self._retrier.send(method, path, body, **options)

    # ------------------------------------------------------------------ the holder's calls

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
        reply = self._send("POST", f"/v1/locks/{_quote(lcid)}/acquire", body, read_timeout=read,
                           extra_headers=_tracing.outgoing(traceparent, tracestate))
        # A grant or pick-up may have been made by the first attempt, whose answer was lost: the
        # lease counts from its send.
        return _outcome(reply, reply.first_sent)  # type: ignore[return-value]

    def heartbeat(self, lcid: str, token: str, *, lease_ms: Optional[int] = None) -> Acquired:
        """Renews the lease (LockLostError when it is gone). ``lease_ms`` changes the lease in force."""
        body: Dict[str, Any] = {"token": token}
        _put(body, "leaseMs", lease_ms)
        return _renewal(self._send("POST", f"/v1/locks/{_quote(lcid)}/heartbeat", body))

    def _heartbeat_until(self, lcid: str, token: str, deadline: float) -> Acquired:
        """The holder's heartbeat: retries only until ``deadline`` (its own lease deadline)."""
        return _renewal(self._send("POST", f"/v1/locks/{_quote(lcid)}/heartbeat", {"token": token}, deadline=deadline))

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
        reply = self._send("POST", f"/v1/locks/{_quote(lcid)}/complete", body)
        return _outcome(reply, reply.first_sent)  # type: ignore[return-value]  # a replay answers the first

    def abort(self, lcid: str, token: str, request_id: str, *, requeue: bool = False,
              reason: Optional[str] = None) -> Released:
        """The holder gives up its request (its whole batch); with requeue it goes back to the head."""
        body: Dict[str, Any] = {"requestId": request_id, "token": token}
        if requeue:
            body["requeue"] = True
        _put(body, "reason", None if reason is None else reason[:1024])
        reply = self._send("POST", f"/v1/locks/{_quote(lcid)}/abort", body)
        return _outcome(reply, reply.first_sent)  # type: ignore[return-value]

    def withdraw(self, lcid: str, request_id: str, *, reason: Optional[str] = None) -> Released:
        """A waiter takes its QUEUED request out of the queue (NotQueuedError if it no longer waits)."""
        body: Dict[str, Any] = {"requestId": request_id}
        _put(body, "reason", None if reason is None else reason[:1024])
        reply = self._send("POST", f"/v1/locks/{_quote(lcid)}/abort", body)
        return _outcome(reply, reply.first_sent)  # type: ignore[return-value]

    # ------------------------------------------------------------------ views

    def lock(self, lcid: str) -> LockView:
        """The lock view (never the token)."""
        reply = self._send("GET", f"/v1/locks/{_quote(lcid)}")
        try:
            return LockView.from_json(reply.body)
        except (KeyError, ValueError, TypeError, AttributeError) as cause:
            raise _malformed(reply, cause) from cause

    def request(self, lcid: str, request_id: str, *, wait_ms: Optional[int] = None) -> RequestView:
        """The request view; with ``wait_ms`` held until the request ended or wait_ms passed."""
        path = f"/v1/locks/{_quote(lcid)}/requests/{_quote(request_id)}"
        if wait_ms is not None:
            path += f"?waitMs={int(wait_ms)}"
        read = wait_ms / 1000.0 + _LONG_POLL_SLACK if wait_ms else None
        reply = self._send("GET", path, read_timeout=read)
        try:
            return RequestView.from_json(reply.body)
        except (KeyError, ValueError, TypeError, AttributeError) as cause:
            raise _malformed(reply, cause) from cause

    # ------------------------------------------------------------------ claims and operators

    def claim(self, *, lease_ms: Optional[int] = None, take: Optional[int] = None,
              lcid_prefix: Optional[str] = None, _cancel: Optional[Cancel] = None) -> Optional[Next]:
        """Takes orphaned work of the tenant (NEXT), or None (204). Use run_claims to poll."""
        body: Dict[str, Any] = {}
        _put(body, "leaseMs", lease_ms)
        _put(body, "take", take)
        _put(body, "lcidPrefix", lcid_prefix)
        reply = self._send("POST", "/v1/claims", body, cancel=_cancel)
        if reply.status == 204 or reply.body is None:
            return None
        # A claim is not replayed, so only the answered attempt can have granted the lock.
        return _outcome(reply, reply.sent)  # type: ignore[return-value]

    def dead_letters(self, *, limit: Optional[int] = None) -> List[DeadLetter]:
        """The tenant's DEAD requests, newest first (admin key)."""
        path = "/v1/dead-letters" + (f"?limit={int(limit)}" if limit is not None else "")
        reply = self._send("GET", path)
        try:
            return [DeadLetter.from_json(item) for item in reply.body.get("items", [])]
        except (KeyError, ValueError, TypeError, AttributeError) as cause:
            raise _malformed(reply, cause) from cause

    def retry_dead_letter(self, lcid: str, request_id: str) -> Queued:
        """Queues a DEAD request again with attempt 1 (admin key). NotDeadError: nothing to do."""
        reply = self._send("POST", f"/v1/locks/{_quote(lcid)}/requests/{_quote(request_id)}/retry")
        return _outcome(reply, reply.first_sent)  # type: ignore[return-value]

    def queue(self, lcid: str, *, offset: int = 0, limit: int = 50, payload: bool = False) -> Dict[str, Any]:
        """A page of an lcid's queue, head first (admin key), as the raw answer."""
        path = f"/v1/locks/{_quote(lcid)}/queue?offset={int(offset)}&limit={int(limit)}&payload={str(payload).lower()}"
        return self._send("GET", path).body  # type: ignore[no-any-return]

    def busy_locks(self, *, order: str = "held", offset: int = 0, limit: int = 50) -> Dict[str, Any]:
        """The tenant's busy lcids (admin key), as the raw answer."""
        return self._send("GET", f"/v1/busy-locks?order={order}&offset={int(offset)}&limit={int(limit)}").body  # type: ignore[no-any-return]
