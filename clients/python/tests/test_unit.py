"""Unit tests of transport behaviour against a tiny local HTTP stub (never a stub of Baton's
logic): retries, backoff, Retry-After, deadlines, non-JSON bodies, keep-alive, outcome parsing,
token-file credentials, trace context (with a small stand-in for opentelemetry-api: it cannot be
installed here)."""
from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import os
import sys
import tempfile
import threading
import time
import types
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple
from unittest import mock

import baton
from baton import (BackendUnavailableError, BatchMismatchError, Client, DuplicateRequestError, InvalidRequestError,
                   LockLostError, Next, Queued, QueueFullError, Released, TransportError, UnauthorizedError,
                   UnexpectedResponseError)
from baton import Acquired, RequestView, _tracing
from baton.client import backoff_delay
from baton.outcomes import parse_outcome

Reply = Tuple[int, str, bytes, dict]  # status, content type, body, extra headers


def problem(status: int, code: str, **extra: Any) -> Reply:
    body = {"type": f"urn:baton:problem:{code.lower().replace('_', '-')}", "title": code, "status": status,
            "code": code, "detail": "stub", "instance": "/x"}
    body.update(extra)
    return status, "application/problem+json", json.dumps(body).encode(), {}


def ok(body: Any, status: int = 200) -> Reply:
    return status, "application/json", json.dumps(body).encode(), {}


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):  # a client that cut its call off
            super().handle_error(request, client_address)


class Stub:
    """A local HTTP server answering from a script of replies (the last one repeats)."""

    def __init__(self, replies: List[Reply]) -> None:
        self.replies = list(replies)
        self.bodies: List[Optional[bytes]] = []
        self.paths: List[str] = []
        self.headers: List[Dict[str, str]] = []
        self.times: List[float] = []
        self.connections = 0
        self.route: Optional[Callable[[str], Reply]] = None
        stub = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                stub.connections += 1

            def _reply(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                stub.bodies.append(self.rfile.read(length) if length else None)
                stub.paths.append(self.path)
                stub.headers.append({k.lower(): v for k, v in self.headers.items()})
                stub.times.append(time.monotonic())
                if stub.route is not None:
                    status, ctype, body, headers = stub.route(self.path)
                else:
                    status, ctype, body, headers = stub.replies.pop(0) if len(stub.replies) > 1 else stub.replies[0]
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _reply

            def log_message(self, *args: Any) -> None:
                pass

        self.server = _QuietServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class StubCase(unittest.TestCase):
    def stub(self, *replies: Reply) -> Stub:
        s = Stub(list(replies))
        self.addCleanup(s.close)
        return s

    def client(self, url: str, **options: Any) -> Client:
        c = Client(url, **options)
        self.addCleanup(c.close)
        return c


QUEUED = {"status": "QUEUED", "lcid": "L", "requestId": "r", "position": 2, "queueLength": 2}


class RetryTest(StubCase):
    def test_503_is_retried_with_the_same_body(self) -> None:
        s = self.stub(problem(503, "BACKEND_UNAVAILABLE"), problem(500, "INTERNAL_ERROR"), ok(QUEUED, 202))
        outcome = self.client(s.url, retry_timeout=10).acquire("L", "r", {"a": 1}, lease_ms=1000)
        self.assertIsInstance(outcome, Queued)
        self.assertEqual(len(s.bodies), 3)
        self.assertEqual(len(set(s.bodies)), 1)
        self.assertEqual(json.loads(s.bodies[0] or b""), {"requestId": "r", "payload": {"a": 1}, "leaseMs": 1000})

    def test_retry_after_is_honoured(self) -> None:
        busy = problem(429, "QUEUE_FULL")
        busy[3]["Retry-After"] = "1"
        s = self.stub(busy, ok(QUEUED, 202))
        self.client(s.url, retry_timeout=10).acquire("L", "r")
        self.assertGreaterEqual(s.times[1] - s.times[0], 0.95)

    def test_retries_stop_at_the_deadline_with_the_last_error(self) -> None:
        s = self.stub(problem(503, "BACKEND_UNAVAILABLE"))
        start = time.monotonic()
        with self.assertRaises(BackendUnavailableError) as caught:
            self.client(s.url, retry_timeout=0.8).acquire("L", "r")
        self.assertLess(time.monotonic() - start, 1.5)
        self.assertGreater(caught.exception.attempts, 1)

    def test_queue_full_after_deadline_is_typed(self) -> None:
        s = self.stub(problem(429, "QUEUE_FULL"))
        with self.assertRaises(QueueFullError):
            self.client(s.url, retry_timeout=0.3).acquire("L", "r")

    def test_4xx_is_not_retried(self) -> None:
        s = self.stub(problem(400, "INVALID_REQUEST", field="leaseMs"))
        with self.assertRaises(InvalidRequestError) as caught:
            self.client(s.url).acquire("L", "r", lease_ms=1)
        self.assertEqual(caught.exception.field, "leaseMs")
        self.assertEqual(caught.exception.status, 400)
        self.assertEqual(len(s.bodies), 1)

    def test_typed_409s(self) -> None:
        s = self.stub(problem(409, "LOCK_LOST"), problem(409, "DUPLICATE_REQUEST", state="DONE", attempt=1,
                                                         result={"x": 1}),
                      problem(409, "BATCH_MISMATCH", activeRequestIds=["a", "b"]))
        c = self.client(s.url)
        with self.assertRaises(LockLostError):
            c.heartbeat("L", "tok")
        with self.assertRaises(DuplicateRequestError) as dup:
            c.acquire("L", "r")
        self.assertEqual((dup.exception.state, dup.exception.result), ("DONE", {"x": 1}))
        with self.assertRaises(BatchMismatchError) as mismatch:
            c.complete("L", "tok", completed={"a": None})
        self.assertEqual(mismatch.exception.active_request_ids, ["a", "b"])

    def test_non_json_success_is_unexpected(self) -> None:
        s = self.stub((200, "text/plain", b"hello", {}))
        with self.assertRaises(UnexpectedResponseError) as caught:
            self.client(s.url).lock("L")
        self.assertEqual(caught.exception.body, "hello")
        self.assertEqual(len(s.bodies), 1)

    def test_html_503_is_unexpected_and_not_retried(self) -> None:
        s = self.stub((503, "text/html", b"<html>down</html>", {}))
        with self.assertRaises(UnexpectedResponseError) as caught:
            self.client(s.url).lock("L")
        self.assertEqual(caught.exception.status, 503)
        self.assertEqual(len(s.bodies), 1)

    def test_connection_refused_is_a_transport_error_after_retries(self) -> None:
        s = self.stub(ok({}))
        url = s.url
        s.close()
        start = time.monotonic()
        with self.assertRaises(TransportError):
            self.client(url, retry_timeout=0.5).lock("L")
        self.assertLess(time.monotonic() - start, 1.5)

    def test_keep_alive_reuses_one_connection(self) -> None:
        view = {"lcid": "L", "held": False, "fence": None, "leaseRemainingMs": 0, "queueLength": 0}
        s = self.stub(ok(view))
        c = self.client(s.url)
        for _ in range(5):
            c.lock("L")
        self.assertEqual(s.connections, 1)

    def test_claim_204_is_none(self) -> None:
        s = self.stub((204, "application/json", b"", {}))
        self.assertIsNone(self.client(s.url).claim(lcid_prefix="p-"))
        self.assertEqual(json.loads(s.bodies[0] or b""), {"lcidPrefix": "p-"})

    def test_complete_batch_body(self) -> None:
        s = self.stub(ok({"status": "RELEASED", "lcid": "L", "pending": 0}))
        out = self.client(s.url).complete("L", "tok", completed={"a": {"v": 1}, "b": None}, take=8)
        self.assertIsInstance(out, Released)
        self.assertEqual(json.loads(s.bodies[0] or b""),
                         {"token": "tok", "completed": [{"requestId": "a", "result": {"v": 1}}, {"requestId": "b"}],
                          "take": 8})

    def test_paths_are_quoted(self) -> None:
        s = self.stub(ok({"lcid": "a:b@c", "requestId": "r.1", "state": "DONE"}))
        self.client(s.url).request("a:b@c", "r.1", wait_ms=100)
        self.assertEqual(s.paths[0], "/v1/locks/a%3Ab%40c/requests/r.1?waitMs=100")


class LeaseDeadlineTest(StubCase):
    def test_heartbeats_that_cannot_renew_cancel_the_handler_at_the_deadline(self) -> None:
        acquired = {"status": "ACQUIRED", "lcid": "L", "requestId": "r", "token": "t", "fence": 7, "leaseMs": 600,
                    "expiresAt": "x"}
        s = self.stub(ok({}))
        s.route = lambda path: ok(acquired) if path.endswith("/acquire") else problem(503, "BACKEND_UNAVAILABLE")
        cancelled_after: List[float] = []

        def handler(work: baton.Work) -> None:
            start = time.monotonic()
            self.assertTrue(work.cancelled.wait(5))
            cancelled_after.append(time.monotonic() - start)
            work.check()

        with self.assertLogs("baton", "WARNING") as logs, self.assertRaises(LockLostError) as caught:
            self.client(s.url).run("L", handler, request_id="r")
        self.assertLess(cancelled_after[0], 1.2)
        # Lock lost, told apart: this client decided (no 409 came), and the error and log say so.
        self.assertTrue(caught.exception.by_client)
        self.assertIsNone(caught.exception.status)
        self.assertIn("decided by this client", str(caught.exception))
        self.assertTrue(any("lock lost on L, decided by this client" in line for line in logs.output), logs.output)
        self.assertEqual(caught.exception.report.status, "FAILED")  # type: ignore[attr-defined]
        self.assertTrue(any(p.endswith("/heartbeat") for p in s.paths))
        self.assertFalse(any(p.endswith("/complete") or p.endswith("/abort") for p in s.paths),
                         "never completes or aborts for a lost lock")


VIEW = {"lcid": "L", "held": False, "fence": None, "leaseRemainingMs": 0, "queueLength": 0}


class TokenFileTest(StubCase):
    def setUp(self) -> None:
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        self.path = os.path.join(folder.name, "token")
        self.write("tok-1\n")

    def write(self, token: str) -> None:
        # As the kubelet does: the new file appears whole, in one rename.
        with open(self.path + ".new", "w") as f:
            f.write(token)
        os.replace(self.path + ".new", self.path)

    @staticmethod
    def sent(s: Stub) -> List[Optional[str]]:
        return [h.get("authorization") for h in s.headers]

    def test_the_header_carries_the_files_token_and_the_new_one_after_a_change(self) -> None:
        s = self.stub(ok(VIEW))
        c = self.client(s.url, token_file=self.path, token_refresh=0)
        c.lock("L")
        self.write("tok-2")
        c.lock("L")
        self.assertEqual(self.sent(s), ["Bearer tok-1", "Bearer tok-2"])

    def test_a_token_is_reused_within_the_refresh_interval(self) -> None:
        s = self.stub(ok(VIEW))
        c = self.client(s.url, token_file=self.path, token_refresh=3600)
        self.write("tok-2")
        c.lock("L")
        self.assertEqual(self.sent(s), ["Bearer tok-1"])

    def test_background_heartbeats_send_the_new_token(self) -> None:
        acquired = {"status": "ACQUIRED", "lcid": "L", "requestId": "r", "token": "t", "fence": 1, "leaseMs": 300}
        s = self.stub(ok({}))
        s.route = _router(acquire=[ok(acquired)], heartbeat=[ok(acquired)], complete=[ok(RELEASED)])

        def handler(work: baton.Work) -> None:
            self.write("tok-2")
            until = time.monotonic() + 3
            while time.monotonic() < until and not any(
                    p.endswith("/heartbeat") and h.get("authorization") == "Bearer tok-2"
                    for p, h in zip(list(s.paths), list(s.headers))):
                time.sleep(0.02)

        self.client(s.url, token_file=self.path, token_refresh=0).run("L", handler, request_id="r")
        beats = [h.get("authorization") for p, h in zip(s.paths, s.headers) if p.endswith("/heartbeat")]
        self.assertIn("Bearer tok-2", beats)
        self.assertEqual(s.headers[-1].get("authorization"), "Bearer tok-2", "the complete too")

    def test_a_401_after_the_file_changed_is_repeated_once_with_the_new_token(self) -> None:
        s = self.stub(problem(401, "UNAUTHORIZED"), ok(VIEW))
        c = self.client(s.url, token_file=self.path, token_refresh=3600)  # only the 401 makes it read
        self.write("tok-2")
        self.assertFalse(c.lock("L").held)
        self.assertEqual(self.sent(s), ["Bearer tok-1", "Bearer tok-2"])

    def test_a_401_with_an_unchanged_file_is_unauthorized_after_one_request(self) -> None:
        s = self.stub(problem(401, "UNAUTHORIZED"))
        with self.assertRaises(UnauthorizedError) as caught:
            self.client(s.url, token_file=self.path, token_refresh=0).lock("L")
        self.assertEqual(len(s.headers), 1)
        self.assertEqual(caught.exception.attempts, 1)
        self.assertNotIn("tok-1", str(caught.exception))

    def test_a_second_401_is_raised_without_another_read(self) -> None:
        s = self.stub(problem(401, "UNAUTHORIZED"))
        c = self.client(s.url, token_file=self.path, token_refresh=3600)
        self.write("tok-2")
        with self.assertRaises(UnauthorizedError):
            c.lock("L")
        self.assertEqual(self.sent(s), ["Bearer tok-1", "Bearer tok-2"])

    def test_a_failed_reread_keeps_the_last_token_and_warns_once(self) -> None:
        s = self.stub(ok(VIEW))
        c = self.client(s.url, token_file=self.path, token_refresh=0)
        os.remove(self.path)
        with self.assertLogs("baton", "WARNING") as logs:
            c.lock("L")
            c.lock("L")
        self.assertEqual(len(logs.records), 1)
        self.assertIn(self.path, logs.output[0])
        self.assertNotIn("tok-1", logs.output[0])
        self.write("tok-2")
        c.lock("L")
        self.assertEqual(self.sent(s), ["Bearer tok-1", "Bearer tok-1", "Bearer tok-2"])

    def test_an_api_key_is_sent_as_before(self) -> None:
        s = self.stub(ok(VIEW))
        self.client(s.url, api_key="key-1").lock("L")
        self.client(s.url).lock("L")
        self.assertEqual(self.sent(s), ["Bearer key-1", None])

    def test_api_key_and_token_file_together_is_a_configuration_error(self) -> None:
        with self.assertRaises(ValueError) as caught:
            Client("http://127.0.0.1:1", api_key="secret-key", token_file=self.path)
        self.assertNotIn("secret", str(caught.exception))

    def test_a_missing_file_at_construction_is_an_error_naming_the_path(self) -> None:
        missing = self.path + "-missing"
        with self.assertRaises(ValueError) as caught:
            Client("http://127.0.0.1:1", token_file=missing)
        self.assertIn(missing, str(caught.exception))
        self.assertIsInstance(caught.exception.__cause__, FileNotFoundError)

    def test_an_empty_or_malformed_file_at_construction_is_an_error_without_its_content(self) -> None:
        for content in (" \n", "secret-1\nsecret-2\n"):
            self.write(content)
            with self.assertRaises(ValueError) as caught:
                Client("http://127.0.0.1:1", token_file=self.path)
            self.assertIn(self.path, str(caught.exception))
            self.assertNotIn("secret", str(caught.exception))


class PureTest(unittest.TestCase):
    def test_backoff_bounds(self) -> None:
        self.assertEqual(backoff_delay(0, rng=lambda: 1.0), 0.1)
        self.assertEqual(backoff_delay(3, rng=lambda: 1.0), 0.8)
        self.assertEqual(backoff_delay(20, rng=lambda: 1.0), 5.0)
        self.assertEqual(backoff_delay(20, rng=lambda: 0.0), 0.0)
        self.assertEqual(backoff_delay(0, retry_after=2.0, rng=lambda: 1.0), 2.0)

    def test_next_outcome_and_unknown_fields(self) -> None:
        out = parse_outcome({"status": "NEXT", "lcid": "L", "token": "secret", "fence": 2 ** 52, "leaseMs": 1000,
                             "expiresAt": "t", "request": {"requestId": "a", "attempt": 2},
                             "requests": [{"requestId": "a", "attempt": 2}, {"requestId": "b", "payload": [1]}],
                             "newField": 1})
        assert isinstance(out, Next)
        self.assertEqual([i.request_id for i in out.requests], ["a", "b"])
        self.assertEqual(out.requests[1].payload, [1])
        self.assertEqual(out.fence, 2 ** 52)
        self.assertNotIn("secret", repr(out))

    def test_version_is_the_package_version(self) -> None:
        import pathlib
        import re
        pyproject = (pathlib.Path(__file__).resolve().parent.parent / "pyproject.toml").read_text()
        self.assertEqual(baton.__version__, re.search(r'(?m)^version = "([^"]+)"', pyproject).group(1))


# ---------------------------------------------------------------------- trace context

TP1 = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
TP2 = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
RELEASED = {"status": "RELEASED", "lcid": "L", "pending": 0}


class FakeOtel:
    """The names of opentelemetry-api the client uses, recording every span started."""

    class SpanContext:
        def __init__(self, trace_id: int, span_id: int, is_remote: bool = False, trace_flags: Any = None,
                     trace_state: Any = None) -> None:
            self.trace_id, self.span_id, self.is_remote = trace_id, span_id, is_remote
            self.trace_flags = FakeOtel.TraceFlags(0) if trace_flags is None else trace_flags
            self.trace_state = FakeOtel.TraceState() if trace_state is None else trace_state

        @property
        def is_valid(self) -> bool:
            return self.trace_id != 0 and self.span_id != 0

    class TraceFlags(int):
        pass

    class TraceState:
        def __init__(self, entries: Any = ()) -> None:
            self.entries = list(entries)

        @classmethod
        def from_header(cls, headers: List[str]) -> "FakeOtel.TraceState":
            return cls(tuple(kv.strip().split("=", 1)) for h in headers for kv in h.split(",") if kv.strip())

        def to_header(self) -> str:
            return ",".join(f"{k}={v}" for k, v in self.entries)

        def __len__(self) -> int:
            return len(self.entries)

    class Link:
        def __init__(self, context: Any, attributes: Any = None) -> None:
            self.context, self.attributes = context, attributes

    class Status:
        def __init__(self, status_code: Any, description: Optional[str] = None) -> None:
            self.status_code, self.description = status_code, description

    class StatusCode:
        UNSET, OK, ERROR = "UNSET", "OK", "ERROR"

    class Span:
        def __init__(self, name: str, context: Any, parent: Any, links: Any, attributes: Any) -> None:
            self.name, self.context, self.parent = name, context, parent
            self.links, self.attributes = list(links or []), dict(attributes or {})
            self.exceptions: List[BaseException] = []
            self.status: Any = None
            self.ended = False

        def get_span_context(self) -> Any:
            return self.context

        def record_exception(self, exception: BaseException) -> None:
            self.exceptions.append(exception)

        def set_status(self, status: Any) -> None:
            self.status = status

    def __init__(self) -> None:
        self.spans: List[FakeOtel.Span] = []
        self._current: contextvars.ContextVar[Any] = contextvars.ContextVar("span")
        self._invalid = FakeOtel.Span("invalid", FakeOtel.SpanContext(0, 0), None, None, None)
        self._ids = iter(range(1, 1 << 30))
        fake = self

        class Tracer:
            @contextlib.contextmanager
            def start_as_current_span(self, name: str, links: Any = None, attributes: Any = None,
                                      record_exception: bool = True, set_status_on_exception: bool = True
                                      ) -> Iterator[Any]:
                parent = fake.get_current_span()
                trace_id = parent.context.trace_id if parent.context.is_valid else next(fake._ids)
                context = FakeOtel.SpanContext(trace_id, next(fake._ids), trace_flags=FakeOtel.TraceFlags(1),
                                               trace_state=FakeOtel.TraceState([("app", "1")]))
                span = FakeOtel.Span(name, context, parent, links, attributes)
                fake.spans.append(span)
                token = fake._current.set(span)
                try:
                    yield span
                finally:
                    fake._current.reset(token)
                    span.ended = True

        self.tracer = Tracer()
        trace = types.ModuleType("opentelemetry.trace")
        for name in ("SpanContext", "TraceFlags", "TraceState", "Link", "Status", "StatusCode"):
            setattr(trace, name, getattr(FakeOtel, name))
        trace.get_tracer = lambda *args, **kwargs: self.tracer  # type: ignore[attr-defined]
        trace.get_current_span = self.get_current_span  # type: ignore[attr-defined]
        package = types.ModuleType("opentelemetry")
        package.trace = trace  # type: ignore[attr-defined]
        self.modules = {"opentelemetry": package, "opentelemetry.trace": trace}

    def get_current_span(self) -> Any:
        return self._current.get(self._invalid)

    def work_spans(self) -> List["FakeOtel.Span"]:
        return [s for s in self.spans if s.name == "baton.work"]


class TraceCase(StubCase):
    def _modules(self, modules: Dict[str, Any]) -> None:
        patcher = mock.patch.dict(sys.modules, modules)
        patcher.start()
        self.addCleanup(patcher.stop)
        # The client looks opentelemetry up once: make it look again, now and after the test.
        _tracing._api = _tracing._UNSET
        self.addCleanup(setattr, _tracing, "_api", _tracing._UNSET)

    def with_otel(self) -> FakeOtel:
        fake = FakeOtel()
        self._modules(fake.modules)
        return fake

    def without_otel(self) -> None:
        self._modules({"opentelemetry": None, "opentelemetry.trace": None})


class TraceFieldsTest(unittest.TestCase):
    def test_acquired_next_and_request_view_carry_the_trace_context(self) -> None:
        acquired = parse_outcome({"status": "ACQUIRED", "lcid": "L", "requestId": "r", "token": "t", "fence": 1,
                                  "leaseMs": 1000, "traceparent": TP1, "tracestate": "vendor=x", "later": True})
        assert isinstance(acquired, Acquired)
        self.assertEqual((acquired.traceparent, acquired.tracestate), (TP1, "vendor=x"))
        entry = {"requestId": "r1", "attempt": 1, "traceparent": TP1, "tracestate": "vendor=x", "later": 1}
        nxt = parse_outcome({"status": "NEXT", "lcid": "L", "token": "t", "fence": 2, "leaseMs": 1000,
                             "request": entry, "requests": [entry, {"requestId": "r2", "traceparent": TP2}]})
        assert isinstance(nxt, Next)
        self.assertEqual((nxt.request.traceparent, nxt.request.tracestate), (TP1, "vendor=x"))
        self.assertEqual([(i.traceparent, i.tracestate) for i in nxt.requests], [(TP1, "vendor=x"), (TP2, None)])
        view = RequestView.from_json({"lcid": "L", "requestId": "r1", "state": "QUEUED", "traceparent": TP1,
                                      "tracestate": "vendor=x"})
        self.assertEqual((view.traceparent, view.tracestate), (TP1, "vendor=x"))

    def test_absent_trace_context_is_none(self) -> None:
        acquired = parse_outcome({"status": "ACQUIRED", "lcid": "L", "requestId": "r", "token": "t", "fence": 1,
                                  "leaseMs": 1000})
        assert isinstance(acquired, Acquired)
        self.assertEqual((acquired.traceparent, acquired.tracestate), (None, None))
        nxt = parse_outcome({"status": "NEXT", "lcid": "L", "token": "t", "fence": 2, "leaseMs": 1000,
                             "request": {"requestId": "r1"}, "requests": [{"requestId": "r1"}]})
        assert isinstance(nxt, Next)
        self.assertEqual((nxt.request.traceparent, nxt.requests[0].tracestate), (None, None))
        view = RequestView.from_json({"lcid": "L", "requestId": "r1", "state": "DONE"})
        self.assertEqual((view.traceparent, view.tracestate), (None, None))

    def test_traceparent_validity(self) -> None:
        self.assertEqual(_tracing.parse_traceparent(TP1),
                         (0x4bf92f3577b34da6a3ce929d0e0e4736, 0x00f067aa0ba902b7, 1))
        self.assertIsNotNone(_tracing.parse_traceparent("01" + TP1[2:] + "-later"))
        for bad in (None, "", "garbage", TP1.upper(), "ff" + TP1[2:], TP1 + "-x",
                    "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                    "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"):
            self.assertIsNone(_tracing.parse_traceparent(bad), bad)


class TraceHeaderTest(TraceCase):
    def test_given_trace_context_is_sent(self) -> None:
        self.without_otel()
        acquired = {"status": "ACQUIRED", "lcid": "L", "requestId": "w", "token": "t", "fence": 3, "leaseMs": 30000,
                    "traceparent": TP2}
        s = self.stub(ok(QUEUED, 202), ok(QUEUED, 202), ok(acquired), ok(RELEASED))
        c = self.client(s.url)
        c.acquire("L", "r", traceparent=TP1, tracestate="vendor=x")
        c.run("L", lambda work: None, request_id="r", traceparent=TP2)
        turn = c.await_turn("L", "w", traceparent=TP2, tracestate="a=b")
        self.assertEqual((turn.traceparent, turn.tracestate), (TP2, None))
        turn.complete()
        self.assertEqual((s.headers[0].get("traceparent"), s.headers[0].get("tracestate")), (TP1, "vendor=x"))
        self.assertEqual((s.headers[1].get("traceparent"), s.headers[1].get("tracestate")), (TP2, None))
        self.assertEqual((s.headers[2].get("traceparent"), s.headers[2].get("tracestate")), (TP2, "a=b"))
        self.assertNotIn("traceparent", s.headers[3], "only a submission carries it")

    def test_no_header_without_opentelemetry_or_a_given_one(self) -> None:
        self.without_otel()
        s = self.stub(ok(QUEUED, 202))
        self.client(s.url).acquire("L", "r")
        self.assertNotIn("traceparent", s.headers[0])
        self.assertNotIn("tracestate", s.headers[0])

    def test_the_current_span_is_sent_with_opentelemetry(self) -> None:
        fake = self.with_otel()
        s = self.stub(ok(QUEUED, 202))
        c = self.client(s.url)
        c.acquire("L", "r0")  # no span is current: nothing to send
        with fake.tracer.start_as_current_span("caller") as span:
            c.acquire("L", "r1")
            c.acquire("L", "r2", traceparent=TP1)  # given wins
        ctx = span.get_span_context()
        self.assertNotIn("traceparent", s.headers[0])
        self.assertEqual(s.headers[1].get("traceparent"), f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-01")
        self.assertEqual(s.headers[1].get("tracestate"), "app=1")
        self.assertEqual((s.headers[2].get("traceparent"), s.headers[2].get("tracestate")), (TP1, None))


def _router(**answers: List[Reply]) -> Callable[[str], Reply]:
    """Answers by the path's last segment (acquire, complete, abort, claims, ...), in order; the
    last answer of each repeats."""
    def route(path: str) -> Reply:
        queue = answers[path.split("?")[0].rsplit("/", 1)[-1]]
        return queue.pop(0) if len(queue) > 1 else queue[0]
    return route


class WorkSpanTest(TraceCase):
    def test_handler_runs_in_a_current_work_span_linked_to_each_request(self) -> None:
        fake = self.with_otel()
        secret = {"card": "4111-secret"}
        nxt = {"status": "NEXT", "lcid": "L", "token": "tok-secret", "fence": 7, "leaseMs": 30000,
               "request": {"requestId": "r1", "payload": secret, "traceparent": TP1, "tracestate": "vendor=x"},
               "requests": [{"requestId": "r1", "payload": secret, "traceparent": TP1, "tracestate": "vendor=x"},
                            {"requestId": "r2", "payload": secret},
                            {"requestId": "r3", "traceparent": "00-not-valid"},
                            {"requestId": "r4", "traceparent": TP2}]}
        s = self.stub(ok({}))
        s.route = _router(acquire=[ok(nxt)], complete=[ok(RELEASED)])
        inside: List[Any] = []

        def handler(work: baton.Work) -> Any:
            inside.append(fake.get_current_span())
            with fake.tracer.start_as_current_span("app.write") as own:
                inside.append(own)
            return {}

        report = self.client(s.url).run("L", handler, request_id="r1", take=8)
        self.assertEqual(report.handled, ["r1", "r2", "r3", "r4"])
        [span] = fake.work_spans()
        self.assertIs(inside[0], span, "the work span is current in the handler")
        self.assertIs(inside[1].parent, span, "the application's spans nest under it")
        self.assertTrue(span.ended)
        self.assertIsNot(fake.get_current_span(), span)
        self.assertEqual(span.attributes, {"baton.lcid": "L", "baton.request_id": "r1", "baton.fence": 7,
                                           "baton.batch_size": 4})
        self.assertEqual([(l.context.trace_id, l.context.span_id, l.context.is_remote, int(l.context.trace_flags),
                           l.context.trace_state.to_header(), l.attributes) for l in span.links],
                         [(0x4bf92f3577b34da6a3ce929d0e0e4736, 0x00f067aa0ba902b7, True, 1, "vendor=x",
                           {"baton.request_id": "r1"}),
                          (0x0af7651916cd43dd8448eb211c80319c, 0xb7ad6b7169203331, True, 0, "",
                           {"baton.request_id": "r4"})])
        shown = json.dumps([span.attributes] + [l.attributes for l in span.links])
        self.assertNotIn("secret", shown, "never a payload or a token")
        self.assertEqual((span.exceptions, span.status), ([], None))

    def test_a_throwing_handler_is_recorded_on_its_span(self) -> None:
        fake = self.with_otel()
        acquired = {"status": "ACQUIRED", "lcid": "L", "requestId": "r1", "token": "t", "fence": 4, "leaseMs": 30000,
                    "traceparent": TP1}
        s = self.stub(ok({}))
        s.route = _router(acquire=[ok(acquired)], abort=[ok(RELEASED)])
        boom = RuntimeError("boom")

        def handler(work: baton.Work) -> None:
            raise boom

        with self.assertRaises(RuntimeError):
            self.client(s.url).run("L", handler, request_id="r1")
        self.assertTrue(any(p.endswith("/abort") for p in s.paths))
        [span] = fake.work_spans()
        self.assertEqual(span.attributes, {"baton.lcid": "L", "baton.request_id": "r1", "baton.fence": 4})
        self.assertEqual([l.context.span_id for l in span.links], [0x00f067aa0ba902b7])
        self.assertEqual(span.exceptions, [boom])
        self.assertEqual(span.status.status_code, "ERROR")
        self.assertTrue(span.ended)

    def test_the_claim_poller_runs_handlers_in_work_spans(self) -> None:
        fake = self.with_otel()
        nxt = {"status": "NEXT", "lcid": "o-1", "token": "t", "fence": 12, "leaseMs": 30000,
               "request": {"requestId": "r1", "attempt": 2, "traceparent": TP1}}
        s = self.stub(ok({}))
        s.route = _router(claims=[ok(nxt), (204, "application/json", b"", {})], complete=[ok(RELEASED)])
        stop = threading.Event()
        current: List[Any] = []

        def handler(work: baton.Work) -> None:
            current.append(fake.get_current_span())
            stop.set()

        self.assertEqual(self.client(s.url).run_claims(handler, stop=stop), baton.ClaimReport(claims=1, handled=1))
        [span] = fake.work_spans()
        self.assertEqual(current, [span])
        self.assertEqual(span.attributes, {"baton.lcid": "o-1", "baton.request_id": "r1", "baton.fence": 12})
        self.assertEqual(len(span.links), 1)

    def test_lock_all_runs_its_handler_in_a_work_span(self) -> None:
        fake = self.with_otel()
        s = self.stub(ok({}))

        def route(path: str) -> Reply:
            lcid = path.split("/")[3]
            if path.endswith("/acquire"):
                return ok({"status": "ACQUIRED", "lcid": lcid, "requestId": "w", "token": "t", "fence": 1,
                           "leaseMs": 30000, "traceparent": TP1})
            return ok(dict(RELEASED, lcid=lcid))

        s.route = route
        current: List[Any] = []
        self.client(s.url).lock_all(["B", "A"], lambda work: current.append(fake.get_current_span()))
        [span] = fake.work_spans()
        self.assertEqual(current, [span])
        self.assertEqual(span.attributes, {"baton.lcids": ["A", "B"], "baton.fences": [1, 1]})
        self.assertEqual(len(span.links), 2)

    def test_the_holder_works_without_opentelemetry(self) -> None:
        self.without_otel()
        acquired = {"status": "ACQUIRED", "lcid": "L", "requestId": "r1", "token": "t", "fence": 4, "leaseMs": 30000,
                    "traceparent": TP1}
        s = self.stub(ok({}))
        s.route = _router(acquire=[ok(acquired)], complete=[ok(RELEASED)])
        seen: List[Any] = []
        report = self.client(s.url).run("L", lambda work: seen.append(work.request) or "done", request_id="r1")
        self.assertEqual(report.handled, ["r1"])
        self.assertEqual(seen[0].traceparent, TP1)
        self.assertNotIn("traceparent", s.headers[0])
        self.assertEqual(json.loads(s.bodies[1] or b""), {"token": "t", "requestId": "r1", "result": "done"})
        self.assertIsNone(_tracing._trace())



# ---------------------------------------------------------------------- the rules all clients follow
# (clients/README.md, "The rules they all follow"), one class per rule, against the local stub.

NO_WORK: Reply = (204, "application/json", b"", {})
HTML_502: Reply = (502, "text/html", b"<html>Bad Gateway</html>", {})


def acquired(rid: str = "r", lcid: str = "L", lease_ms: int = 30000, **extra: Any) -> Dict[str, Any]:
    body = {"status": "ACQUIRED", "lcid": lcid, "requestId": rid, "token": "t", "fence": 5, "leaseMs": lease_ms,
            "expiresAt": "x"}
    body.update(extra)
    return body


def handed(*rids: str, lcid: str = "L", fence: int = 6) -> Dict[str, Any]:
    return {"status": "NEXT", "lcid": lcid, "token": "t", "fence": fence, "leaseMs": 30000, "expiresAt": "x",
            "request": {"requestId": rids[0]}, "requests": [{"requestId": r} for r in rids]}


def body_of(s: Stub, ending: str) -> List[Dict[str, Any]]:
    """The JSON bodies of every call whose path ends with ``ending``, in order."""
    return [json.loads(b or b"{}") for p, b in zip(list(s.paths), list(s.bodies)) if p.split("?")[0].endswith(ending)]


@contextlib.contextmanager
def warnings_of_baton() -> Iterator[List[str]]:
    """Every warning the client logs meanwhile (assertLogs cannot assert that there is none on 3.9)."""
    lines: List[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    keep = Keep(logging.WARNING)
    logger = logging.getLogger("baton")
    logger.addHandler(keep)
    try:
        yield lines
    finally:
        logger.removeHandler(keep)


class RunReportTest(StubCase):
    """What run reports (handled_own), and on_submit."""

    def test_on_submit_is_called_once_before_the_handler_with_the_acquire_answer(self) -> None:
        s = self.stub(ok({}))
        s.route = _router(acquire=[ok(acquired("r"))], complete=[ok(RELEASED)])
        events: List[Any] = []

        def handler(work: baton.Work) -> None:
            events.append(("handler", work.request_id))

        report = self.client(s.url).run("L", handler, request_id="r",
                                        on_submit=lambda *a: events.append(("submit", a[0], a[1], type(a[2]).__name__)))
        self.assertEqual(events, [("submit", "L", "r", "Acquired"), ("handler", "r")])
        self.assertEqual((report.status, report.request_id, report.handled, report.handled_own),
                         ("RELEASED", "r", ["r"], True))

    def test_on_submit_is_called_for_a_queued_request_which_run_reports_with_its_position(self) -> None:
        s = self.stub(ok(QUEUED, 202))
        seen: List[Any] = []
        report = self.client(s.url).run("L", lambda work: None, request_id="r",
                                        on_submit=lambda *a: seen.append(a))
        self.assertEqual(len(seen), 1)
        self.assertEqual(seen[0][:2], ("L", "r"))
        self.assertIsInstance(seen[0][2], Queued)
        self.assertEqual((report.status, report.position, report.handled, report.handled_own), ("QUEUED", 2, [], False))

    def test_released_before_own_request_is_not_handled_own(self) -> None:
        # The lock passes to a wait request queued ahead of r2: RELEASED, but r2 is not done.
        s = self.stub(ok({}))
        s.route = _router(acquire=[ok(handed("h1"))],
                          complete=[ok({"status": "RELEASED", "lcid": "L", "pending": 1, "passedTo": "w1"})])
        seen: List[Any] = []
        report = self.client(s.url).run("L", lambda work: seen.append(work.request_id), request_id="r2",
                                        on_submit=lambda lcid, rid, outcome: seen.append(type(outcome).__name__))
        self.assertEqual(seen, ["Next", "h1"])
        self.assertEqual((report.status, report.request_id, report.handled, report.handled_own),
                         ("RELEASED", "r2", ["h1"], False))
        assert report.released is not None
        self.assertEqual(report.released.passed_to, "w1")

    def test_an_on_submit_error_gives_the_lock_back_and_is_raised_with_the_report(self) -> None:
        s = self.stub(ok({}))
        s.route = _router(acquire=[ok(acquired("r"))], abort=[ok(RELEASED)])
        ran: List[str] = []

        def journal(lcid: str, rid: str, outcome: Any) -> None:
            raise ValueError("journal down")

        with self.assertRaises(ValueError) as caught:
            self.client(s.url).run("L", lambda work: ran.append("handler"), request_id="r", on_submit=journal)
        self.assertEqual(ran, [])
        self.assertEqual(body_of(s, "/abort"), [{"requestId": "r", "token": "t", "requeue": True, "reason": "journal down"}])
        self.assertEqual(caught.exception.report.status, "FAILED")  # type: ignore[attr-defined]


class DuplicateAfterOwnRetryTest(StubCase):
    def test_duplicate_after_own_retry_is_queued_and_calls_on_submit(self) -> None:
        for state in ("ACTIVE", "DONE"):
            with self.subTest(state=state):
                s = self.stub(problem(503, "BACKEND_UNAVAILABLE"), problem(409, "DUPLICATE_REQUEST", state=state, attempt=1))
                seen: List[Any] = []
                ran: List[str] = []
                report = self.client(s.url, retry_timeout=10).run("L", lambda work: ran.append("handler"),
                                                                  request_id="r", on_submit=lambda *a: seen.append(a))
                self.assertEqual(len(s.bodies), 2)
                self.assertEqual(seen, [("L", "r", None)])
                self.assertEqual(ran, [])
                self.assertEqual((report.status, report.request_id, report.position, report.handled_own),
                                 ("QUEUED", "r", None, False))

    def test_duplicate_on_a_first_send_is_raised_with_a_report(self) -> None:
        s = self.stub(problem(409, "DUPLICATE_REQUEST", state="DONE", attempt=1))
        seen: List[Any] = []
        with self.assertRaises(DuplicateRequestError) as caught:
            self.client(s.url).run("L", lambda work: None, request_id="r", on_submit=lambda *a: seen.append(a))
        self.assertEqual(caught.exception.attempts, 1)
        self.assertEqual(seen, [])
        report = caught.exception.report  # type: ignore[attr-defined]
        self.assertEqual((report.status, report.handled, report.handled_own), ("FAILED", [], False))

    def test_duplicate_after_retry_of_an_ended_request_is_raised(self) -> None:
        s = self.stub(problem(503, "BACKEND_UNAVAILABLE"), problem(409, "DUPLICATE_REQUEST", state="ABORTED", attempt=1))
        with self.assertRaises(DuplicateRequestError):
            self.client(s.url, retry_timeout=10).run("L", lambda work: None, request_id="r")


class FailedRunKeepsItsReportTest(StubCase):
    def test_a_handler_error_carries_what_was_handled(self) -> None:
        s = self.stub(ok({}))
        s.route = _router(acquire=[ok(handed("h1"))], complete=[ok(handed("r", fence=7))], abort=[ok(RELEASED)])

        def handler(work: baton.Work) -> None:
            if work.request_id == "r":
                raise RuntimeError("boom")

        with self.assertRaises(RuntimeError) as caught:
            self.client(s.url).run("L", handler, request_id="r")
        report = caught.exception.report  # type: ignore[attr-defined]
        self.assertEqual((report.status, report.lcid, report.request_id, report.handled, report.handled_own),
                         ("FAILED", "L", "r", ["h1"], False))
        self.assertEqual(body_of(s, "/abort"), [{"requestId": "r", "token": "t", "requeue": True, "reason": "boom"}])

    def test_a_call_failing_after_its_retries_carries_the_report(self) -> None:
        s = self.stub(ok({}))
        s.route = _router(acquire=[ok(handed("h1"))], complete=[ok(handed("h2", fence=7)), HTML_502])
        with self.assertRaises(UnexpectedResponseError) as caught:
            self.client(s.url).run("L", lambda work: None, request_id="r")
        self.assertEqual(caught.exception.report.handled, ["h1"])  # type: ignore[attr-defined]

    def test_lock_lost_by_the_service_is_told_apart_and_carries_the_report(self) -> None:
        s = self.stub(ok({}))
        s.route = _router(acquire=[ok(acquired("r", lease_ms=300))], heartbeat=[problem(409, "LOCK_LOST")])

        def handler(work: baton.Work) -> None:
            self.assertTrue(work.cancelled.wait(5))
            work.check()

        with self.assertLogs("baton", "WARNING") as logs, self.assertRaises(LockLostError) as caught:
            self.client(s.url).run("L", handler, request_id="r")
        self.assertFalse(caught.exception.by_client)
        self.assertEqual(caught.exception.status, 409)
        self.assertTrue(any("lock lost on L, the service answered LOCK_LOST" in line for line in logs.output), logs.output)
        self.assertEqual(caught.exception.report.handled, [])  # type: ignore[attr-defined]
        self.assertEqual(body_of(s, "/complete") + body_of(s, "/abort"), [])


class ClaimPollerTest(StubCase):
    def test_on_error_gets_failed_claims_and_handler_errors_and_the_poller_goes_on(self) -> None:
        s = self.stub(ok({}))
        s.route = _router(claims=[HTML_502, ok(handed("a", lcid="o-1")), ok(handed("b", lcid="o-2")), NO_WORK],
                          complete=[ok(RELEASED)], abort=[ok(RELEASED)])
        stop = threading.Event()
        errors: List[BaseException] = []

        def handler(work: baton.Work) -> None:
            if work.request_id == "a":
                raise RuntimeError("bad a")
            stop.set()  # b: the holder loop in hand runs to its end, then the poller stops

        report = self.client(s.url).run_claims(handler, stop=stop, on_error=errors.append)
        self.assertEqual(report, baton.ClaimReport(claims=2, handled=1, failed=2))
        self.assertEqual([type(e) for e in errors], [UnexpectedResponseError, RuntimeError])
        self.assertEqual(errors[1].report.lcid, "o-1")  # type: ignore[attr-defined]
        self.assertEqual(body_of(s, "/abort"), [{"requestId": "a", "token": "t", "requeue": True, "reason": "bad a"}])
        self.assertEqual(body_of(s, "/complete"), [{"token": "t", "requestId": "b"}])

    def test_the_default_on_error_is_a_warning(self) -> None:
        s = self.stub(ok({}))
        stop = threading.Event()
        answers = [HTML_502]

        def route(path: str) -> Reply:
            if answers:
                return answers.pop()
            stop.set()
            return NO_WORK

        s.route = route
        with self.assertLogs("baton", "WARNING") as logs:
            report = self.client(s.url).run_claims(lambda work: None, stop=stop)
        self.assertEqual(report, baton.ClaimReport(failed=1))
        self.assertTrue(any("claim poller" in line and "502" in line for line in logs.output), logs.output)

    def test_on_claim_sees_each_claim_before_its_work(self) -> None:
        s = self.stub(ok({}))
        s.route = _router(claims=[ok(handed("a", lcid="o-1")), NO_WORK], complete=[ok(RELEASED)])
        stop = threading.Event()
        events: List[Any] = []

        def handler(work: baton.Work) -> None:
            events.append(("work", work.request_id))
            stop.set()

        report = self.client(s.url).run_claims(handler, stop=stop,
                                               on_claim=lambda nxt: events.append(("claim", nxt.lcid, nxt.request.request_id)))
        self.assertEqual(events, [("claim", "o-1", "a"), ("work", "a")])
        self.assertEqual(report, baton.ClaimReport(claims=1, handled=1))

    def _stopped_in_flight(self, route: Callable[[str], Reply], arrived: threading.Event) -> float:
        s = self.stub(ok({}))
        s.route = route
        stop = threading.Event()
        c = self.client(s.url, retry_timeout=30)
        result: List[Any] = []
        t = threading.Thread(target=lambda: result.append(c.run_claims(lambda work: None, stop=stop)), daemon=True)
        t.start()
        self.assertTrue(arrived.wait(5))
        stopped_at = time.monotonic()
        stop.set()
        t.join(10)
        self.assertFalse(t.is_alive())
        self.assertEqual(result, [baton.ClaimReport()], "a claim cut off is neither work nor a failure")
        return time.monotonic() - stopped_at

    def test_stopping_ends_a_claim_in_flight_at_once_retries_included(self) -> None:
        arrived = threading.Event()
        busy = problem(503, "BACKEND_UNAVAILABLE")
        busy[3]["Retry-After"] = "3"  # each retry would wait 3 s, the call 30 s

        def route(path: str) -> Reply:
            arrived.set()
            return busy

        self.assertLess(self._stopped_in_flight(route, arrived), 0.5)

    def test_stopping_cuts_off_a_claim_whose_answer_has_not_come(self) -> None:
        arrived, answer = threading.Event(), threading.Event()
        self.addCleanup(answer.set)

        def route(path: str) -> Reply:
            arrived.set()
            answer.wait(10)  # the service does not answer (an outage): a 10 s read timeout
            return NO_WORK

        self.assertLess(self._stopped_in_flight(route, arrived), 0.5)


def _long_poll(s: Stub, answers: List[Reply], hold: float = 0.0) -> Callable[[], Reply]:
    """The answers of successive wait acquires, each held ``hold`` seconds (a long-poll)."""
    def answer() -> Reply:
        time.sleep(hold)
        return answers.pop(0) if len(answers) > 1 else answers[0]
    return answer


class WaitTurnTest(StubCase):
    def test_acquired_and_the_turn_carry_the_attempt(self) -> None:
        self.assertEqual(parse_outcome(acquired(attempt=3)).attempt, 3)  # type: ignore[union-attr]
        self.assertEqual(parse_outcome(acquired()).attempt, 1, "1 from a service older than v1.2")  # type: ignore[union-attr]
        s = self.stub(ok({}))
        s.route = _router(acquire=[ok(acquired("w", attempt=2))], complete=[ok(RELEASED)])
        turn = self.client(s.url).await_turn("L", "w")
        self.assertEqual(turn.attempt, 2)
        turn.complete()

    def test_the_lease_counts_from_the_first_attempt_of_the_call(self) -> None:
        s = self.stub(problem(503, "BACKEND_UNAVAILABLE"), ok(acquired("r")))
        outcome = self.client(s.url, retry_timeout=10).acquire("L", "r")
        self.assertEqual(len(s.times), 2)
        self.assertLess(outcome.sent_at, s.times[0], "the first attempt's send, not the answered one's")

    def test_a_turn_picked_up_late_is_renewed_before_it_is_returned(self) -> None:
        s = self.stub(ok({}))
        pick_up = _long_poll(s, [ok(acquired("w", lease_ms=900))], hold=0.45)  # half the lease passes
        s.route = lambda path: pick_up() if path.endswith("/acquire") else _router(
            heartbeat=[ok(acquired("w", lease_ms=900))], complete=[ok(RELEASED)])(path)
        turn = self.client(s.url).await_turn("L", "w", lease_ms=900)
        returned = time.monotonic()
        self.assertEqual([p.rsplit("/", 1)[-1] for p in s.paths][:2], ["acquire", "heartbeat"])
        self.assertGreater(turn.deadline - returned, 0.75, "a turn is returned with (nearly) its whole lease")
        self.assertIsInstance(turn.complete(), Released)

    def test_a_turn_answered_at_once_is_not_renewed(self) -> None:
        s = self.stub(ok({}))
        s.route = _router(acquire=[ok(acquired("w"))], complete=[ok(RELEASED)])
        turn = self.client(s.url).await_turn("L", "w")
        turn.complete()
        self.assertEqual([p.rsplit("/", 1)[-1] for p in s.paths], ["acquire", "complete"])

    def test_a_turn_lost_at_pick_up_is_lock_lost_and_not_withdrawn(self) -> None:
        s = self.stub(ok({}))
        pick_up = _long_poll(s, [ok(acquired("w", lease_ms=900))], hold=0.45)
        s.route = lambda path: pick_up() if path.endswith("/acquire") else problem(409, "LOCK_LOST")
        with self.assertRaises(LockLostError) as caught:
            self.client(s.url).await_turn("L", "w", lease_ms=900)
        self.assertFalse(caught.exception.by_client)
        self.assertEqual([p.rsplit("/", 1)[-1] for p in s.paths], ["acquire", "heartbeat"])


HELD = {"lcid": "L", "held": True, "fence": 3, "activeRequestId": "x", "leaseRemainingMs": 900, "queueLength": 1}
STRANDED = {"lcid": "L", "held": False, "fence": 3, "leaseRemainingMs": 0, "queueLength": 2}


class WaitKeepsItsPlaceTest(StubCase):
    """await_turn withdraws only when the caller gives up; lock_all gives up on any failure."""

    def setUp(self) -> None:
        # A long-poll's retries run until retry_timeout + its waitMs + 5 s: shorter here.
        for name, value in (("baton.wait.LONG_POLL_MAX_MS", 200), ("baton.calls._LONG_POLL_SLACK", 0.1)):
            patcher = mock.patch(name, value)
            patcher.start()
            self.addCleanup(patcher.stop)

    def test_await_turn_keeps_its_place_after_a_503_past_the_retry_deadline(self) -> None:
        s = self.stub(ok({}))
        s.route = _router(acquire=[ok(QUEUED, 202), problem(503, "BACKEND_UNAVAILABLE")], L=[ok(HELD)],
                          abort=[ok(RELEASED)])
        with self.assertRaises(BackendUnavailableError):
            self.client(s.url, retry_timeout=0.5).await_turn("L", "w")
        self.assertEqual(body_of(s, "/abort"), [], "not withdrawn")

    def test_await_turn_keeps_its_place_after_an_unexpected_answer(self) -> None:
        s = self.stub(ok({}))
        s.route = _router(acquire=[ok(QUEUED, 202), HTML_502], L=[ok(HELD)], abort=[ok(RELEASED)])
        with self.assertRaises(UnexpectedResponseError):
            self.client(s.url).await_turn("L", "w")
        self.assertEqual(body_of(s, "/abort"), [])

    def test_await_turn_with_the_same_request_id_waits_on(self) -> None:
        s = self.stub(ok({}))
        s.route = _router(acquire=[ok(QUEUED, 202), HTML_502, ok(acquired("w"))], L=[ok(HELD)], complete=[ok(RELEASED)])
        c = self.client(s.url)
        with self.assertRaises(UnexpectedResponseError):
            c.await_turn("L", "w", payload={"p": 1})
        c.await_turn("L", "w", payload={"p": 1}).complete()
        self.assertEqual({b["requestId"] for b in body_of(s, "/acquire")}, {"w"})

    def test_await_turn_withdraws_on_its_timeout(self) -> None:
        s = self.stub(ok({}))
        s.route = _router(acquire=[ok(QUEUED, 202)], L=[ok(HELD)], abort=[ok(RELEASED)])
        with self.assertRaises(baton.BatonTimeoutError):
            self.client(s.url).await_turn("L", "w", timeout=0.3)
        self.assertEqual(body_of(s, "/abort"), [{"requestId": "w", "reason": "the waiter gave up"}])

    def test_await_turn_withdraws_when_interrupted(self) -> None:
        s = self.stub(ok({}))
        s.route = _router(acquire=[ok(QUEUED, 202)], L=[ok(HELD)], abort=[ok(RELEASED)])
        c = self.client(s.url)
        real, calls = c.acquire, []

        def acquire(*args: Any, **kwargs: Any) -> Any:
            calls.append(args)
            if len(calls) > 1:
                raise KeyboardInterrupt  # the caller pressed Ctrl-C during the second long-poll
            return real(*args, **kwargs)

        c.acquire = acquire  # type: ignore[method-assign]
        with self.assertRaises(KeyboardInterrupt):
            c.await_turn("L", "w")
        self.assertEqual(body_of(s, "/abort"), [{"requestId": "w", "reason": "the waiter gave up"}])

    def test_lock_all_gives_up_as_a_whole_on_a_503_past_the_retry_deadline(self) -> None:
        s = self.stub(ok({}))

        def route(path: str) -> Reply:
            lcid, action = path.split("/")[3], path.rsplit("/", 1)[-1]
            if action == "acquire":
                return ok(acquired("x", lcid=lcid)) if lcid == "A" else problem(503, "BACKEND_UNAVAILABLE")
            if action == "heartbeat":
                return ok(acquired("x", lcid=lcid))
            return ok(dict(RELEASED, lcid=lcid))

        s.route = route
        with self.assertRaises(BackendUnavailableError):
            self.client(s.url, retry_timeout=0.5).lock_all(["B", "A"], lambda work: None)
        aborts = [(p.split("/")[3], json.loads(b or b"{}")) for p, b in zip(s.paths, s.bodies) if p.endswith("/abort")]
        self.assertEqual([(lcid, "token" in body) for lcid, body in aborts], [("B", False), ("A", True)],
                         "B withdrawn, A's turn aborted")


class StrandedQueueWarningTest(StubCase):
    def _wait(self, views: List[Reply]) -> List[str]:
        s = self.stub(ok({}))
        s.route = _router(acquire=[ok(QUEUED, 202)] * 4 + [ok(acquired("w"))], L=views, complete=[ok(RELEASED)])
        with warnings_of_baton() as lines:
            self.client(s.url).await_turn("L", "w").complete()
        self.assertEqual(len(body_of(s, "/acquire")), 5)
        return lines

    def test_a_stranded_queue_is_warned_once_per_wait(self) -> None:
        lines = self._wait([ok(STRANDED)])
        self.assertEqual(len(lines), 1, lines)
        self.assertIn("L has 2 request(s) queued and no holder", lines[0])
        self.assertIn("claims-and-dead-letters.md#who-rescues-what", lines[0])

    def test_a_holder_seen_in_between_is_no_stranded_queue(self) -> None:
        self.assertEqual(self._wait([ok(STRANDED), ok(HELD), ok(STRANDED), ok(HELD)]), [])


class RetryWarningTest(StubCase):
    def setUp(self) -> None:
        patcher = mock.patch("baton._retries.backoff_delay", lambda attempt, retry_after=None: 0.001)
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_one_warning_after_the_third_failed_attempt_never_the_key(self) -> None:
        busy = problem(503, "BACKEND_UNAVAILABLE")
        s = self.stub(busy, busy, busy, busy, busy, ok(QUEUED, 202))
        with warnings_of_baton() as lines:
            self.client(s.url, api_key="secret-key-42").acquire("L", "r")
        self.assertEqual(len(s.bodies), 6)
        self.assertEqual(len(lines), 1, lines)
        port = s.url.rsplit(":", 1)[1]
        for part in ("POST /v1/locks/L/acquire", f"127.0.0.1:{port}", "failed 3 times", "BACKEND_UNAVAILABLE",
                     "until its deadline"):
            self.assertIn(part, lines[0])
        self.assertNotIn("secret", lines[0])

    def test_two_failed_attempts_are_not_warned(self) -> None:
        busy = problem(503, "BACKEND_UNAVAILABLE")
        s = self.stub(busy, busy, ok(QUEUED, 202))
        with warnings_of_baton() as lines:
            self.client(s.url).acquire("L", "r")
        self.assertEqual(lines, [])

    def test_a_transport_error_names_host_and_port(self) -> None:
        s = self.stub(ok({}))
        url, port = s.url, int(s.url.rsplit(":", 1)[1])
        s.close()
        with warnings_of_baton() as lines, self.assertRaises(TransportError) as caught:
            self.client(url, retry_timeout=0.5).lock("L")
        self.assertTrue(str(caught.exception).startswith(f"connection refused: 127.0.0.1:{port}"), str(caught.exception))
        self.assertEqual((caught.exception.host, caught.exception.port), ("127.0.0.1", port))
        self.assertEqual(len(lines), 1, lines)
        self.assertIn(f"connection refused: 127.0.0.1:{port}", lines[0])


class OneWayImportsTest(unittest.TestCase):
    # clients/README.md, "How each client is built": no part imports one to its right.
    ORDER = {"_version": 0, "errors": 1, "outcomes": 1, "_tracing": 1, "_http": 2, "_retries": 3, "calls": 4,
             "holder": 5, "wait": 6, "claims": 7, "client": 8, "__init__": 9}

    def test_parts_import_one_way(self) -> None:
        import ast
        folder = os.path.dirname(baton.__file__)
        found = sorted(f[:-3] for f in os.listdir(folder) if f.endswith(".py"))
        self.assertEqual(found, sorted(self.ORDER), "every module has its place")
        for name in found:
            with open(os.path.join(folder, name + ".py")) as file:
                tree = ast.parse(file.read())
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.level == 1:
                    targets = [node.module] if node.module else [a.name for a in node.names]
                    for target in targets:
                        self.assertLess(self.ORDER[target], self.ORDER[name], f"{name} imports {target}")
                elif isinstance(node, (ast.Import, ast.ImportFrom)):
                    modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                    self.assertFalse(any(m.split(".")[0] == "baton" for m in modules), f"{name}: {modules}")


class FirstExampleTest(StubCase):
    """Who rescues what: the README's first example runs a claim poller next to run."""

    README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")

    def test_the_readme_first_example_runs_a_claim_poller_next_to_run(self) -> None:
        import io
        import re
        with open(self.README) as file:
            text = file.read()
        example = re.search(r"```python\n(.*?)```", text, re.S)
        assert example is not None
        self.assertLess(text.index(example.group(0)), text.index("## "), "it is the first thing in the README")
        self.assertIn("claims-and-dead-letters.md#who-rescues-what", text[:text.index("## ")])
        code = example.group(1)
        self.assertLessEqual(len(code.strip().splitlines()), 16)
        claimed = threading.Event()
        s = self.stub(ok({}))
        routes = _router(acquire=[ok(acquired("charge-7", lcid="order-42"))], complete=[ok(RELEASED)])

        def route(path: str) -> Reply:
            if path.endswith("/claims"):
                claimed.set()
                return NO_WORK
            return routes(path)

        s.route = route
        writes: List[Any] = []
        db = types.SimpleNamespace(apply=lambda payload, fence: writes.append((payload, fence)))
        namespace: Dict[str, Any] = {"db": db}
        with contextlib.redirect_stdout(io.StringIO()) as out:
            exec(compile(code.replace("http://localhost:8080", s.url), "README.md", "exec"), namespace)
        self.addCleanup(namespace["client"].close)
        self.addCleanup(namespace["stop"].set)
        self.assertTrue(claimed.wait(5), "the poller claims")
        self.assertEqual(writes, [({"amount": 5}, 5)])
        self.assertEqual(out.getvalue().split(), ["RELEASED", "True"])
        self.assertEqual(body_of(s, "/claims")[0], {"lcidPrefix": "order-"})

    def test_run_and_lock_all_say_who_does_a_request_nobody_holds(self) -> None:
        docs = [" ".join((d or "").split()) for d in (Client.run.__doc__, Client.lock_all.__doc__, baton.RunReport.__doc__)]
        for doc in docs:
            self.assertIn("claim poller", doc)
            self.assertNotIn("the service tries it again", doc)
        self.assertIn("RELEASED does not mean this caller's request was done", docs[0])
        self.assertIn("RELEASED does **not** mean the caller's own request was done", docs[2])
        self.assertIn("Run a claim poller when ``lock_all`` and ``run`` share lcids", docs[1])


if __name__ == "__main__":
    unittest.main()
