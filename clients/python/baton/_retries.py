"""The retry loop: every call is sent again with the *same* body after a connection error, a
timeout, 429, 500 or 503 (a problem answer), with full-jitter exponential backoff, until its
deadline. Baton answers a repeated call from what is stored, so a retry never does work twice
(docs/protocol.md, "Guarantees"). Retrying is not silent: after the third failed attempt of one
call, one warning names the call, the service's host:port and the last error.

Imports only the transport below it (and the error types).
"""
from __future__ import annotations

import http.client
import json
import logging
import random
import socket
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Mapping, Optional, Tuple

from ._http import Cancel, Response, Transport
from .errors import BatonError, ProblemError, TransportError, UnexpectedResponseError, problem_error

log = logging.getLogger("baton")

_RETRY_STATUSES = frozenset({429, 500, 503})
_BACKOFF_BASE = 0.1
_BACKOFF_CAP = 5.0
_WARN_AFTER = 3  # failed attempts of one call before its one warning


class Cancelled(Exception):
    """The call was cut off by its Cancel (the claim poller was stopped): no answer to use."""


def backoff_delay(attempt: int, retry_after: Optional[float] = None, rng: Callable[[], float] = random.random) -> float:
    """Full-jitter exponential backoff: random in [0, min(cap, base * 2^attempt)], at least Retry-After."""
    delay = rng() * min(_BACKOFF_CAP, _BACKOFF_BASE * (2 ** min(attempt, 16)))
    if retry_after is not None:
        delay = max(delay, retry_after)
    return delay


@dataclass
class Reply:
    status: int
    body: Any  # parsed JSON, None for an empty answer (204)
    #: time.monotonic() when the call's first attempt was sent: a replayed acquire, complete or
    #: turn pick-up answers what that first attempt may already have done.
    first_sent: float
    #: time.monotonic() when the answered attempt was sent.
    sent: float


class Retrier:
    def __init__(self, transport: Transport, timeout: float, retry_timeout: float) -> None:
        self.transport = transport
        self.timeout = timeout
        self.retry_timeout = retry_timeout

    def send(self, method: str, path: str, body: Optional[Mapping[str, Any]] = None, *,
             read_timeout: Optional[float] = None, deadline: Optional[float] = None,
             extra_headers: Optional[Mapping[str, str]] = None, cancel: Optional[Cancel] = None) -> Reply:
        """One call with retries until ``deadline`` (time.monotonic(); by default now + retry_timeout
        + read_timeout). ``read_timeout``: of each attempt (a long-poll's waitMs + 5 s)."""
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode("utf-8")
        headers: Dict[str, str] = dict(extra_headers or {})
        if data is not None:
            headers["Content-Type"] = "application/json"
        per_attempt = read_timeout if read_timeout is not None else self.timeout
        if deadline is None:
            deadline = time.monotonic() + self.retry_timeout + (read_timeout or 0.0)
        host, port = self.transport.host, self.transport.port
        attempt = 0
        sends = 0
        first_sent: Optional[float] = None
        while True:
            if cancel is not None and cancel.is_set():
                raise Cancelled(f"{method} {path}")
            attempt += 1
            sent_at = time.monotonic()
            first_sent = sent_at if first_sent is None else first_sent
            timeout = max(0.05, min(per_attempt, deadline - sent_at))
            retry_after: Optional[float] = None
            try:
                answer = self.transport.exchange(method, path, data, headers, timeout, cancel)
            except (OSError, http.client.HTTPException) as cause:
                if cancel is not None and cancel.is_set():
                    raise Cancelled(f"{method} {path}") from cause
                sends += 1
                error: BatonError = TransportError(f"{_unreachable(cause)}: {host}:{port} ({method} {path})",
                                                   cause, host, port)
            else:
                sends += answer.sends
                status, parsed, error_or_none = interpret(answer)
                if error_or_none is None:
                    return Reply(status, parsed, first_sent, sent_at)
                error = error_or_none
                if not (isinstance(error, ProblemError) and answer.status in _RETRY_STATUSES):
                    error.attempts = sends
                    raise error
                retry_after = error.retry_after
            error.attempts = sends
            delay = backoff_delay(attempt - 1, retry_after)
            left = deadline - time.monotonic()
            if delay >= left:
                raise error
            if attempt == _WARN_AFTER:
                # Never the key or a token: neither is in the method, the path or the error.
                log.warning("baton: %s %s to %s:%d failed %d times (last: %s); retrying until its deadline, "
                            "%.1f s from now", method, path, host, port, attempt, error, left)
            else:
                log.debug("baton: %s %s failed (%s), retry in %.2f s", method, path, error, delay)
            if cancel is not None:
                if cancel.wait(delay):
                    raise Cancelled(f"{method} {path}")
            else:
                time.sleep(delay)


def _unreachable(cause: BaseException) -> str:
    """What went wrong with the exchange, in words (the host and port are added by the caller)."""
    if isinstance(cause, ConnectionRefusedError):
        return "connection refused"
    if isinstance(cause, ConnectionResetError):
        return "connection reset"
    if isinstance(cause, http.client.RemoteDisconnected):
        return "connection closed without an answer"
    if isinstance(cause, (socket.timeout, TimeoutError)):
        return "timed out"
    if isinstance(cause, socket.gaierror):
        return f"host not found ({cause.strerror or cause})"
    if isinstance(cause, OSError) and cause.strerror:
        return cause.strerror[:1].lower() + cause.strerror[1:]
    return f"{type(cause).__name__}: {cause}" if str(cause) else type(cause).__name__


def _retry_after(headers: Mapping[str, str]) -> Optional[float]:
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value.strip()))
    except ValueError:
        return None  # an HTTP-date: Baton never sends one; the backoff alone applies


def interpret(answer: Response) -> Tuple[int, Any, Optional[BatonError]]:
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
