"""Typed errors of the Baton client.

Three families, so that a program can branch on what went wrong:

* :class:`ProblemError` - the service answered with ``application/problem+json``; ``code`` is the
  stable machine code of docs/protocol.md. The codes a program branches on have their own
  subclass (``LockLostError``, ``DuplicateRequestError``, ...).
* :class:`UnexpectedResponseError` - something answered that is not Baton speaking (a proxy's
  HTML 502, a body that is not JSON). Never retried: it is not a state Baton vouches for.
* :class:`TransportError` - the call never got an answer (refused, reset, timed out).
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Type

__all__ = [
    "BatonError", "TransportError", "UnexpectedResponseError", "ProblemError",
    "InvalidRequestError", "UnauthorizedError", "ForbiddenError", "NotFoundError",
    "MethodNotAllowedError", "NotAcceptableError", "LockLostError", "DuplicateRequestError",
    "NotQueuedError", "NotDeadError", "BatchMismatchError", "PayloadTooLargeError",
    "UnsupportedMediaTypeError", "QueueFullError", "InternalServerError",
    "BackendUnavailableError", "BatonTimeoutError", "problem_error",
]


class BatonError(Exception):
    """Base of every error this client raises on its own behalf."""

    #: How many HTTP attempts the failing call made (1 = it was not retried). A program can tell
    #: from ``attempts > 1`` that an earlier attempt of the same call may have been applied.
    attempts: int = 1


class TransportError(BatonError):
    """No answer: connection refused or reset, or the read timed out. ``cause`` is the OS error;
    ``host`` and ``port`` the service it could not reach, also named by the message
    (``connection refused: 127.0.0.1:8081 (GET /v1/locks/L)``), so that a wrong URL shows at once."""

    def __init__(self, message: str, cause: Optional[BaseException] = None, host: Optional[str] = None,
                 port: Optional[int] = None) -> None:
        super().__init__(message)
        self.cause = cause
        self.host = host
        self.port = port


class UnexpectedResponseError(BatonError):
    """An answer that is not Baton's: not problem+json on an error status, or not JSON on 2xx.

    ``status`` is the HTTP status, ``body`` the body text (decoded leniently), ``content_type``
    the answer's Content-Type header.
    """

    def __init__(self, status: int, body: str, content_type: Optional[str] = None) -> None:
        snippet = body if len(body) <= 200 else body[:200] + "..."
        super().__init__(f"unexpected response: HTTP {status} ({content_type or 'no content type'}): {snippet}")
        self.status = status
        self.body = body
        self.content_type = content_type


class ProblemError(BatonError):
    """A problem+json answer (RFC 9457). ``body`` holds every field, known or not."""

    def __init__(self, status: Optional[int], body: Mapping[str, Any],
                 retry_after: Optional[float] = None) -> None:
        self.status = status
        self.body: Dict[str, Any] = dict(body)
        self.code: str = str(self.body.get("code", ""))
        self.type: Optional[str] = self.body.get("type")
        self.title: Optional[str] = self.body.get("title")
        self.detail: Optional[str] = self.body.get("detail")
        self.field: Optional[str] = self.body.get("field")
        self.instance: Optional[str] = self.body.get("instance")
        self.retry_after = retry_after
        text = f"{self.code or 'problem'} (HTTP {status})" if status is not None else (self.code or "problem")
        if self.detail:
            text += f": {self.detail}"
        if self.field:
            text += f" [field {self.field}]"
        super().__init__(text)


class InvalidRequestError(ProblemError):
    """400 INVALID_REQUEST: fix the request (``field`` names the rule broken); nothing was stored."""


class UnauthorizedError(ProblemError):
    """401 UNAUTHORIZED: no or an unknown API key."""


class ForbiddenError(ProblemError):
    """403 FORBIDDEN: an operator call with a worker key."""


class NotFoundError(ProblemError):
    """404 NOT_FOUND: the request is unknown (never sent, or its record expired)."""


class MethodNotAllowedError(ProblemError):
    """405 METHOD_NOT_ALLOWED."""


class NotAcceptableError(ProblemError):
    """406 NOT_ACCEPTABLE."""


class LockLostError(ProblemError):
    """The holder no longer holds the lock: stop working and writing; the request is not lost.

    Who decided is told apart. ``by_client`` False: the service answered 409 LOCK_LOST (``status``
    409, ``body`` its problem). ``by_client`` True: this client decided, because its own lease
    deadline passed with no renewal (the service could not be reached or did not answer in
    time); ``status`` is None and the message says so.
    """

    def __init__(self, status: Optional[int], body: Mapping[str, Any],
                 retry_after: Optional[float] = None, *, by_client: bool = False) -> None:
        super().__init__(status, body, retry_after)
        self.by_client = by_client

    @classmethod
    def local(cls, lcid: str, detail: str) -> "LockLostError":
        """The client's own decision: no renewal before its deadline (no answer of the service)."""
        return cls(None, {"code": "LOCK_LOST", "title": "Lock lost",
                          "detail": f"{lcid}: {detail} (decided by this client, not by an answer of the service)"},
                   by_client=True)


class _StateProblem(ProblemError):
    def __init__(self, status: Optional[int], body: Mapping[str, Any],
                 retry_after: Optional[float] = None) -> None:
        super().__init__(status, body, retry_after)
        self.state: Optional[str] = self.body.get("state")
        self.attempt: Optional[int] = self.body.get("attempt")


class DuplicateRequestError(_StateProblem):
    """409 DUPLICATE_REQUEST: the requestId is known; ``state``, ``attempt``, ``result`` (DONE)."""

    def __init__(self, status: Optional[int], body: Mapping[str, Any],
                 retry_after: Optional[float] = None) -> None:
        super().__init__(status, body, retry_after)
        self.result: Any = self.body.get("result")


class NotQueuedError(_StateProblem):
    """409 NOT_QUEUED: a withdrawal of a request that no longer waits (``state``)."""


class NotDeadError(_StateProblem):
    """409 NOT_DEAD: a retry of a dead letter that is not DEAD (a repeated retry lands here)."""


class BatchMismatchError(ProblemError):
    """409 BATCH_MISMATCH: complete named other requests; ``active_request_ids``; still held."""

    def __init__(self, status: Optional[int], body: Mapping[str, Any],
                 retry_after: Optional[float] = None) -> None:
        super().__init__(status, body, retry_after)
        self.active_request_ids: List[str] = list(self.body.get("activeRequestIds") or [])


class PayloadTooLargeError(ProblemError):
    """413 PAYLOAD_TOO_LARGE."""


class UnsupportedMediaTypeError(ProblemError):
    """415 UNSUPPORTED_MEDIA_TYPE."""


class QueueFullError(ProblemError):
    """429 QUEUE_FULL (raised once retries up to the deadline did not get through)."""


class InternalServerError(ProblemError):
    """500 INTERNAL_ERROR (raised once retries up to the deadline did not get through)."""


class BackendUnavailableError(ProblemError):
    """503 BACKEND_UNAVAILABLE (raised once retries up to the deadline did not get through)."""


class BatonTimeoutError(BatonError, TimeoutError):
    """await_turn / await_result / lock_all did not get there within the caller's timeout."""


_BY_CODE: Dict[str, Type[ProblemError]] = {
    "INVALID_REQUEST": InvalidRequestError,
    "UNAUTHORIZED": UnauthorizedError,
    "FORBIDDEN": ForbiddenError,
    "NOT_FOUND": NotFoundError,
    "METHOD_NOT_ALLOWED": MethodNotAllowedError,
    "NOT_ACCEPTABLE": NotAcceptableError,
    "LOCK_LOST": LockLostError,
    "DUPLICATE_REQUEST": DuplicateRequestError,
    "NOT_QUEUED": NotQueuedError,
    "NOT_DEAD": NotDeadError,
    "BATCH_MISMATCH": BatchMismatchError,
    "PAYLOAD_TOO_LARGE": PayloadTooLargeError,
    "UNSUPPORTED_MEDIA_TYPE": UnsupportedMediaTypeError,
    "QUEUE_FULL": QueueFullError,
    "INTERNAL_ERROR": InternalServerError,
    "BACKEND_UNAVAILABLE": BackendUnavailableError,
}


def problem_error(status: int, body: Mapping[str, Any], retry_after: Optional[float] = None) -> ProblemError:
    """The typed error for a problem body; an unknown code (a newer server) is a plain ProblemError."""
    cls = _BY_CODE.get(str(body.get("code", "")), ProblemError)
    return cls(status, body, retry_after)
