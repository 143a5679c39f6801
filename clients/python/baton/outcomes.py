"""Typed outcomes and views (docs/protocol.md, "Outcomes", "Lock view", "Request view").

Every dataclass keeps the whole answer in ``raw`` (fields a newer server adds are not lost) and
ignores what it does not know. Tokens are never shown by ``repr``: a token is a capability.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Union

__all__ = [
    "Item", "Acquired", "Queued", "Next", "Released", "Outcome", "LockView", "RequestView",
    "DeadLetter", "RunReport", "ClaimReport", "parse_outcome", "ENDED_STATES",
]

#: Request states after which nothing more happens (until an operator retries a DEAD one).
ENDED_STATES = frozenset({"DONE", "ABORTED", "DEAD"})


def _text(body: Mapping[str, Any], name: str) -> Optional[str]:
    value = body.get(name)
    return str(value) if value else None


@dataclass(frozen=True)
class Item:
    """One request handed to a holder: its id, its payload (None when it has none), its attempt,
    and the W3C trace context it was submitted with (None when it came without one)."""

    request_id: str
    payload: Any = None
    attempt: int = 1
    traceparent: Optional[str] = None
    tracestate: Optional[str] = None

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "Item":
        return cls(str(body["requestId"]), body.get("payload"), int(body.get("attempt", 1)),
                   _text(body, "traceparent"), _text(body, "tracestate"))


@dataclass(frozen=True)
class Acquired:
    """200 ACQUIRED: you hold the lock; work on your own request (also a heartbeat's answer).

    ``attempt``: which attempt of the request this grant is for (protocol v1.2; 1 when the service
    does not send it, and on a heartbeat's answer, which is about the lease only). More than 1 on
    a wait request's turn means the work is being redone.
    """

    lcid: str
    request_id: str
    token: str = field(repr=False)
    fence: int
    lease_ms: int
    expires_at: str
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    #: time.monotonic() when the call that got this answer sent its first attempt (a heartbeat:
    #: the attempt that was answered, as each attempt renews): the holder's lease deadline counts
    #: from here (docs/protocol.md, "Lease sizing").
    sent_at: float = field(default=0.0, repr=False, compare=False)
    status: str = "ACQUIRED"
    #: The trace context the request was submitted with (never on a heartbeat's answer).
    traceparent: Optional[str] = None
    tracestate: Optional[str] = None
    attempt: int = 1


@dataclass(frozen=True)
class Queued:
    """202 QUEUED: stored at ``position`` (1 = next); a handoff request is done by the holder."""

    lcid: str
    request_id: str
    position: int
    queue_length: int
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    sent_at: float = field(default=0.0, repr=False, compare=False)
    status: str = "QUEUED"


@dataclass(frozen=True)
class Next:
    """200 NEXT: you hold the lock; work on ``requests`` (one, or a batch under one fence)."""

    lcid: str
    token: str = field(repr=False)
    fence: int
    lease_ms: int
    expires_at: str
    request: Item
    requests: List[Item]
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    sent_at: float = field(default=0.0, repr=False, compare=False)
    status: str = "NEXT"


@dataclass(frozen=True)
class Released:
    """200 RELEASED: nothing more for you. ``passed_to``: the wait request the lock went to."""

    lcid: str
    pending: int
    passed_to: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    sent_at: float = field(default=0.0, repr=False, compare=False)
    status: str = "RELEASED"


Outcome = Union[Acquired, Queued, Next, Released]


def parse_outcome(body: Mapping[str, Any], sent_at: float = 0.0) -> Outcome:
    """The typed outcome of an answer body; branches on ``status``, as the protocol asks."""
    status = body.get("status")
    raw = dict(body)
    if status == "ACQUIRED":
        return Acquired(str(body["lcid"]), str(body["requestId"]), str(body["token"]), int(body["fence"]),
                        int(body["leaseMs"]), str(body.get("expiresAt", "")), raw, sent_at,
                        traceparent=_text(body, "traceparent"), tracestate=_text(body, "tracestate"),
                        attempt=int(body.get("attempt") or 1))
    if status == "QUEUED":
        return Queued(str(body["lcid"]), str(body["requestId"]), int(body["position"]),
                      int(body.get("queueLength", body["position"])), raw, sent_at)
    if status == "NEXT":
        first = Item.from_json(body["request"])
        requests = [Item.from_json(r) for r in body.get("requests") or []] or [first]
        return Next(str(body["lcid"]), str(body["token"]), int(body["fence"]), int(body["leaseMs"]),
                    str(body.get("expiresAt", "")), first, requests, raw, sent_at)
    if status == "RELEASED":
        return Released(str(body["lcid"]), int(body.get("pending", 0)), body.get("passedTo"), raw, sent_at)
    raise ValueError(f"unknown outcome status {status!r}")


@dataclass(frozen=True)
class LockView:
    """GET /v1/locks/{lcid}: what anyone of the tenant may see of a lock (never its token)."""

    lcid: str
    held: bool
    fence: Optional[int]
    active_request_id: Optional[str]
    active_request_ids: List[str]
    held_for_ms: Optional[int]
    lease_remaining_ms: int
    queue_length: int
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "LockView":
        fence = body.get("fence")
        return cls(str(body["lcid"]), bool(body.get("held")), None if fence is None else int(fence),
                   body.get("activeRequestId"), list(body.get("activeRequestIds") or []),
                   body.get("heldForMs"), int(body.get("leaseRemainingMs") or 0), int(body.get("queueLength") or 0),
                   dict(body))


@dataclass(frozen=True)
class RequestView:
    """GET /v1/locks/{lcid}/requests/{requestId}: where one request stands."""

    lcid: str
    request_id: str
    state: str
    attempt: Optional[int]
    position: Optional[int]
    fence: Optional[int]
    result: Any
    reason: Optional[str]
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    traceparent: Optional[str] = None
    tracestate: Optional[str] = None

    @property
    def ended(self) -> bool:
        """DONE, ABORTED or DEAD."""
        return self.state in ENDED_STATES

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "RequestView":
        fence = body.get("fence")
        return cls(str(body["lcid"]), str(body["requestId"]), str(body["state"]), body.get("attempt"),
                   body.get("position"), None if fence is None else int(fence), body.get("result"),
                   body.get("reason"), dict(body), _text(body, "traceparent"), _text(body, "tracestate"))


@dataclass(frozen=True)
class DeadLetter:
    """One DEAD request of the tenant (GET /v1/dead-letters)."""

    lcid: str
    request_id: str
    attempts: int
    reason: Optional[str]
    payload: Any
    died_at: str
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, body: Mapping[str, Any]) -> "DeadLetter":
        return cls(str(body["lcid"]), str(body["requestId"]), int(body.get("attempts", 0)), body.get("reason"),
                   body.get("payload"), str(body.get("diedAt", "")), dict(body))


@dataclass(frozen=True)
class RunReport:
    """What one ``Client.run`` (or ``hold``) did.

    ``status``: ``"QUEUED"``: the request is stored and another holder or a claim poller does it
    (``position`` says where it stood, when known); ``"RELEASED"``: this call held the lock until
    it had nothing more to do (``released`` is that answer). RELEASED does **not** mean the
    caller's own request was done: the lock can pass to a ``wait`` request queued ahead of it
    (``released.passed_to``), and the request is then done later by the next holder of the lcid
    or a claim poller; ``handled_own`` says whether it was done here, ``await_result`` tells when
    it is. ``"FAILED"``: only on the report that an error raised by ``run`` carries
    (``error.report``).

    ``handled`` lists the requestIds this call's handler ran for and completed, in order;
    ``handled_own`` is True only when this caller's own ``request_id`` is among them.
    """

    status: str
    lcid: str
    request_id: str
    position: Optional[int] = None
    handled: List[str] = field(default_factory=list)
    released: Optional[Released] = None
    handled_own: bool = False


@dataclass(frozen=True)
class ClaimReport:
    """What a claim poller (``Client.run_claims``) did, returned when it is stopped.

    ``claims``: claims answered with work; ``handled``: requests completed; ``failed``: errors
    passed to ``on_error`` (handler errors, lost locks, failed claims).
    """

    claims: int = 0
    handled: int = 0
    failed: int = 0
