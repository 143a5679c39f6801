"""Unit tests of transport behaviour against a tiny local HTTP stub (never a stub of Baton's
logic): retries, backoff, Retry-After, deadlines, non-JSON bodies, keep-alive, outcome parsing."""
from __future__ import annotations

import json
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, List, Optional, Tuple

import baton
from baton import (BackendUnavailableError, BatchMismatchError, Client, DuplicateRequestError, InvalidRequestError,
                   LockLostError, Next, Queued, QueueFullError, Released, TransportError, UnexpectedResponseError)
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


class Stub:
    """A local HTTP server answering from a script of replies (the last one repeats)."""

    def __init__(self, replies: List[Reply]) -> None:
        self.replies = list(replies)
        self.bodies: List[Optional[bytes]] = []
        self.paths: List[str] = []
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

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
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

        with self.assertRaises(LockLostError):
            self.client(s.url).run("L", handler, request_id="r")
        self.assertLess(cancelled_after[0], 1.2)
        self.assertTrue(any(p.endswith("/heartbeat") for p in s.paths))
        self.assertFalse(any(p.endswith("/complete") or p.endswith("/abort") for p in s.paths),
                         "never completes or aborts for a lost lock")


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

    def test_version(self) -> None:
        self.assertEqual(baton.__version__, "1.1.0")


if __name__ == "__main__":
    unittest.main()
