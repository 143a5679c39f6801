"""W3C trace context that travels with a request, and OpenTelemetry when the application has it.

Baton stores the ``traceparent`` / ``tracestate`` of the call that submitted a request and hands
them out with it. The client sends the submitter's context and, around the handler, starts a
``baton.work`` span linked to the context of every request it was handed: the work is often done
by another process, long after the submitting call's span ended, so a link (not a parent) is
what joins the two traces.

OpenTelemetry is optional: ``opentelemetry`` is imported at first use, and without it (or
without an SDK, when every span is a no-op) nothing is sent unless given and no span is made.
"""
from __future__ import annotations

import contextlib
import logging
import re
from typing import Any, Dict, Iterator, Mapping, Optional, Sequence, Tuple

from ._version import __version__ as _version

log = logging.getLogger("baton")

_UNSET: Any = object()
_api: Any = _UNSET  # the opentelemetry.trace module, None without it; looked up once

_TRACEPARENT = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-[ -~]*)?$")


def _trace() -> Any:
    global _api
    if _api is _UNSET:
        try:
            from opentelemetry import trace
        except ImportError:
            trace = None
        _api = trace
    return _api


def parse_traceparent(value: Optional[str]) -> Optional[Tuple[int, int, int]]:
    """(trace id, span id, flags) of a valid W3C traceparent, None for anything else."""
    match = _TRACEPARENT.match(value or "")
    if match is None:
        return None
    version, trace_id, span_id, flags, rest = match.groups()
    # Version 00 has exactly four fields; ff is forbidden; a later version may add fields.
    if version == "ff" or (version == "00" and rest) or len(value or "") > 512:
        return None
    if int(trace_id, 16) == 0 or int(span_id, 16) == 0:
        return None
    return int(trace_id, 16), int(span_id, 16), int(flags, 16)


def outgoing(traceparent: Optional[str], tracestate: Optional[str]) -> Dict[str, str]:
    """The headers that submit a request: the caller's context, else the current span's."""
    if traceparent:
        headers = {"traceparent": traceparent}
        if tracestate:
            headers["tracestate"] = tracestate
        return headers
    trace = _trace()
    if trace is None:
        return {}
    try:
        context = trace.get_current_span().get_span_context()
        if not context.is_valid:
            return {}
        headers = {"traceparent": f"00-{context.trace_id:032x}-{context.span_id:016x}-{int(context.trace_flags):02x}"}
        state = context.trace_state.to_header() if context.trace_state else ""
        if state:
            headers["tracestate"] = state
        return headers
    except Exception as error:  # noqa: BLE001 - tracing must never fail a lock call
        log.debug("baton: no trace context from OpenTelemetry: %s", error)
        return {}


def _links(trace: Any, handed: Sequence[Any]) -> list:
    links = []
    for item in handed:
        parsed = parse_traceparent(item.traceparent)
        if parsed is None:
            continue
        trace_id, span_id, flags = parsed
        state = trace.TraceState.from_header([item.tracestate]) if item.tracestate else None
        context = trace.SpanContext(trace_id=trace_id, span_id=span_id, is_remote=True,
                                    trace_flags=trace.TraceFlags(flags), trace_state=state)
        links.append(trace.Link(context, {"baton.request_id": item.request_id}))
    return links


@contextlib.contextmanager
def work_span(attributes: Mapping[str, Any], handed: Sequence[Any]) -> Iterator[None]:
    """Runs the body in a current ``baton.work`` span linked to each handed-out request
    (anything with ``request_id``, ``traceparent``, ``tracestate``), if OpenTelemetry is there."""
    trace = _trace()
    span_cm = None
    if trace is not None:
        try:
            # The exception is recorded here, not by the API, so that it is the same on every
            # API version (older ones only catch Exception) and for a cancelled handler too.
            span_cm = trace.get_tracer("baton", _version).start_as_current_span(
                "baton.work", links=_links(trace, handed), attributes=dict(attributes),
                record_exception=False, set_status_on_exception=False)
        except Exception as error:  # noqa: BLE001 - tracing must never fail the work
            log.debug("baton: no work span: %s", error)
    if span_cm is None:
        yield
        return
    with span_cm as span:
        try:
            yield
        except BaseException as error:
            span.record_exception(error)
            span.set_status(trace.Status(trace.StatusCode.ERROR, f"{type(error).__name__}: {error}"))
            raise
