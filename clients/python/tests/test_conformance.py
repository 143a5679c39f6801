"""The conformance scenarios of clients/conformance/scenarios.md, one test per id, against the
real packaged service and redis-server that clients/conformance/harness starts (run them with
`clients/conformance/run python`). Skipped when BATON_URL is not set."""
from __future__ import annotations

import collections
import os
import signal
import subprocess
import sys
import threading
import time
import unittest
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional, Tuple

from baton import (Acquired, ClaimReport, Client, LockAllWork, LockLostError, Next, NotFoundError, Queued,
                   UnexpectedResponseError, Work)

URL = os.environ.get("BATON_URL")
KEY = os.environ.get("BATON_API_KEY")
HARNESS = os.environ.get("BATON_HARNESS")
HARNESS_DIR = os.environ.get("BATON_HARNESS_DIR")
RUN = "py-" + uuid.uuid4().hex[:10]
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def harness(*args: str) -> "subprocess.Popen[bytes]":
    """Starts a disruption in the background (it blocks until done)."""
    assert HARNESS and HARNESS_DIR
    return subprocess.Popen([HARNESS, args[0], HARNESS_DIR, *args[1:]])


def until(predicate: Any, timeout: float, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return bool(predicate())


def state_of(c: Client, lcid: str, request_id: str) -> Optional[str]:
    try:
        return c.request(lcid, request_id).state
    except NotFoundError:
        return None


class Thread(threading.Thread):
    """A thread that keeps what its target returned or raised."""

    def __init__(self, target: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(daemon=True)
        self._fn, self._args, self._kwargs = target, args, kwargs
        self.result: Any = None
        self.error: Optional[BaseException] = None

    def run(self) -> None:
        try:
            self.result = self._fn(*self._args, **self._kwargs)
        except BaseException as error:  # noqa: BLE001 - reported by the test
            self.error = error

    def outcome(self, timeout: float = 60) -> Any:
        self.join(timeout)
        if self.is_alive():
            raise AssertionError("thread did not finish")
        if self.error is not None:
            raise self.error
        return self.result


@unittest.skipUnless(URL, "BATON_URL not set: run through clients/conformance/run python")
class ConformanceTest(unittest.TestCase):
    def setUp(self) -> None:
        self.prefix = f"{RUN}-{self._testMethodName[5:]}-"

    def lcid(self, name: str = "L") -> str:
        return self.prefix + name

    def client(self, **options: Any) -> Client:
        assert URL
        c = Client(URL, api_key=KEY, **options)
        self.addCleanup(c.close)
        return c

    def assertDone(self, c: Client, lcid: str, request_id: str, timeout: float = 15) -> Any:
        view = c.await_result(lcid, request_id, timeout=timeout)
        self.assertEqual(view.state, "DONE", f"{request_id}: {view}")
        return view

    # ------------------------------------------------------------------ fifo_handoff

    def test_fifo_handoff(self) -> None:
        h1, h2, h3 = self.client(), self.client(), self.client()
        L = self.lcid()
        seen: List[Tuple[str, int]] = []
        entered, release = threading.Event(), threading.Event()
        others = []

        def handler(work: Work) -> Any:
            seen.append((work.request_id, work.fence))
            entered.set()
            if work.request_id == "r1":
                self.assertTrue(release.wait(20))
            return {"by": "h1", "rid": work.request_id}

        def never(work: Work) -> None:
            others.append(work.request_id)

        t = Thread(h1.run, L, handler, request_id="r1")
        t.start()
        self.assertTrue(entered.wait(10))
        for c, rid in ((h2, "r2"), (h2, "r3"), (h3, "r4"), (h3, "r5")):
            report = c.run(L, never, request_id=rid)
            self.assertEqual(report.status, "QUEUED")
        release.set()
        report = t.outcome()
        self.assertEqual(report.status, "RELEASED")
        self.assertEqual(report.handled, ["r1", "r2", "r3", "r4", "r5"])
        self.assertEqual([rid for rid, _ in seen], ["r1", "r2", "r3", "r4", "r5"])
        fences = [f for _, f in seen]
        self.assertEqual(fences, sorted(set(fences)), "fences strictly increase")
        self.assertEqual(others, [])
        for rid in ("r1", "r2", "r3", "r4", "r5"):
            self.assertEqual(self.assertDone(h1, L, rid).result, {"by": "h1", "rid": rid})

    # ------------------------------------------------------------------ long_handler_keeps_lock

    def test_long_handler_keeps_lock(self) -> None:
        c, viewer = self.client(), self.client()
        L = self.lcid()
        views = []

        def handler(work: Work) -> str:
            end = time.monotonic() + 3.0
            while time.monotonic() < end:
                views.append(viewer.lock(L))
                time.sleep(0.2)
            work.check()
            return "ok"

        report = c.run(L, handler, request_id="r1", lease_ms=1000)
        self.assertEqual(report.handled, ["r1"])
        self.assertGreater(len(views), 5)
        self.assertTrue(all(v.held for v in views), views)
        self.assertEqual(len({v.fence for v in views}), 1)
        view = self.assertDone(c, L, "r1")
        self.assertEqual(view.attempt, 1)

    # ------------------------------------------------------------------ throwing_handler_requeues

    def test_throwing_handler_requeues(self) -> None:
        h1, other, h2 = self.client(), self.client(), self.client()
        L = self.lcid()
        entered, queued = threading.Event(), threading.Event()
        fence1: List[int] = []
        message = "boom-" + uuid.uuid4().hex[:6]

        def failing(work: Work) -> None:
            fence1.append(work.fence)
            entered.set()
            self.assertTrue(queued.wait(10))
            raise RuntimeError(message)

        t = Thread(h1.run, L, failing, request_id="r1")
        t.start()
        self.assertTrue(entered.wait(10))
        self.assertIsInstance(other.acquire(L, "r2"), Queued)
        queued.set()
        with self.assertRaises(RuntimeError) as caught:
            t.outcome()
        self.assertEqual(str(caught.exception), message)
        view = h2.request(L, "r1")
        self.assertEqual((view.state, view.position, view.attempt, view.reason), ("QUEUED", 1, 2, message))

        seen: List[Tuple[str, int, int]] = []

        def handler(work: Work) -> None:
            seen.append((work.request_id, work.request.attempt, work.fence))

        report = h2.run(L, handler, request_id="r3")
        self.assertEqual(report.status, "RELEASED")
        self.assertEqual([(r, a) for r, a, _ in seen], [("r1", 2), ("r2", 1), ("r3", 1)])
        self.assertGreater(seen[0][2], fence1[0])
        for rid in ("r1", "r2", "r3"):
            self.assertDone(h2, L, rid)

    # ------------------------------------------------------------------ sigkill_mid_handler

    def test_sigkill_mid_handler(self) -> None:
        c = self.client()
        L = self.lcid()
        worker = subprocess.Popen([sys.executable, "-m", "tests.killable_worker", L, "victim"], cwd=HERE,
                                  stdout=subprocess.PIPE, text=True)
        self.addCleanup(lambda: worker.poll() is None and worker.kill())
        line = worker.stdout.readline() if worker.stdout else ""
        self.assertTrue(line.startswith("IN_HANDLER"), line)
        killed_fence = int(line.split()[1])
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(10)
        if worker.stdout:
            worker.stdout.close()
        self.assertTrue(until(lambda: not c.lock(L).held, 10), "the killed worker's lease ran out")
        seen: List[Tuple[str, int, int]] = []

        def handler(work: Work) -> None:
            seen.append((work.request_id, work.request.attempt, work.fence))

        report = c.run(L, handler, request_id="own")
        self.assertEqual(report.handled, ["victim", "own"])
        self.assertEqual([(r, a) for r, a, _ in seen], [("victim", 2), ("own", 1)])
        self.assertGreater(seen[0][2], killed_fence)
        self.assertDone(c, L, "victim")
        self.assertDone(c, L, "own")

    # ------------------------------------------------------------------ disruptions

    def _run_through(self, disruption: Tuple[str, ...]) -> None:
        lcids = [self.lcid(x) for x in "abc"]
        clients = {L: self.client() for L in lcids}
        runs: Dict[Tuple[str, str], int] = collections.Counter()
        mutex = threading.Lock()

        def handler(work: Work) -> None:
            with mutex:
                runs[(work.lcid, work.request_id)] += 1
            time.sleep(0.05)

        def submitter(L: str, i: int) -> Any:
            return clients[L].run(L, handler, request_id=f"r{i}", lease_ms=10000)

        threads = []
        disrupt: Optional["subprocess.Popen[bytes]"] = None
        for i in range(10):
            for L in lcids:
                t = Thread(submitter, L, i)
                t.start()
                threads.append((L, f"r{i}", t))
            if i == 2:
                disrupt = harness(*disruption)
            time.sleep(0.25)
        assert disrupt is not None
        self.assertEqual(disrupt.wait(120), 0)
        for L, rid, t in threads:
            t.outcome(120)  # no error reaches the caller
        viewer = self.client()
        for L, rid, _ in threads:
            self.assertDone(viewer, L, rid, timeout=30)
        for L, rid, _ in threads:
            self.assertEqual(runs[(L, rid)], 1, f"handler runs of {L}/{rid}")

    def test_redis_stop_mid_run(self) -> None:
        self._run_through(("redis-stop", "3"))

    def test_service_restart_mid_run(self) -> None:
        self._run_through(("service-restart",))

    # ------------------------------------------------------------------ lock_lost_cancels_handler

    def test_lock_lost_cancels_handler(self) -> None:
        c = self.client()
        L = self.lcid()
        entered = threading.Event()
        timing: Dict[str, float] = {}

        def handler(work: Work) -> None:
            entered.set()
            if work.cancelled.wait(10):
                timing["cancelled"] = time.monotonic()
            work.check()

        t = Thread(c.run, L, handler, request_id="r1", lease_ms=1000)
        t.start()
        self.assertTrue(entered.wait(10))
        time.sleep(0.1)
        timing["paused"] = time.monotonic()
        pause = harness("redis-pause", "3")
        with self.assertRaises(LockLostError):
            t.outcome(30)
        self.assertIn("cancelled", timing)
        self.assertLess(timing["cancelled"] - timing["paused"], 2.0, "cancelled within about a lease")
        self.assertEqual(pause.wait(30), 0)
        self.assertNotEqual(c.request(L, "r1").state, "DONE")
        seen: List[Tuple[str, int]] = []

        def second(work: Work) -> None:
            seen.append((work.request_id, work.request.attempt))

        until(lambda: not c.lock(L).held, 10)
        self.client().run(L, second, request_id="r2")
        self.assertEqual(seen, [("r1", 2), ("r2", 1)])

    # ------------------------------------------------------------------ batch_take_8

    def test_batch_take_8(self) -> None:
        c, other = self.client(), self.client()
        L = self.lcid()
        entered, release = threading.Event(), threading.Event()
        batches: List[Tuple[List[str], int]] = []

        def handler(work: Work) -> Any:
            batches.append(([i.request_id for i in work.requests], work.fence))
            entered.set()
            if work.request_id == "r0":
                self.assertTrue(release.wait(20))
            if len(work.requests) == 1:
                return {"one": work.request_id}
            return {i.request_id: {"n": i.request_id} for i in work.requests}

        t = Thread(c.run, L, handler, request_id="r0", take=8)
        t.start()
        self.assertTrue(entered.wait(10))
        for i in range(1, 21):
            self.assertIsInstance(other.acquire(L, f"r{i}"), Queued)
        release.set()
        report = t.outcome()
        self.assertEqual([len(b) for b, _ in batches], [1, 8, 8, 4])
        self.assertEqual([r for b, _ in batches for r in b], [f"r{i}" for i in range(21)])
        fences = [f for _, f in batches]
        self.assertEqual(fences, sorted(set(fences)))
        self.assertEqual(report.handled, [f"r{i}" for i in range(21)])
        self.assertEqual(self.assertDone(c, L, "r0").result, {"one": "r0"})
        for i in range(1, 21):
            self.assertEqual(self.assertDone(c, L, f"r{i}").result, {"n": f"r{i}"})

    # ------------------------------------------------------------------ wait_turn_and_result

    def test_wait_turn_and_result(self) -> None:
        w1c, w2c, third = self.client(), self.client(), self.client()
        L = self.lcid()
        w1 = w1c.await_turn(L, "w1", timeout=10)
        got: Dict[str, Any] = {}

        def w2_side() -> Any:
            turn = w2c.await_turn(L, "w2", timeout=30)
            got["at"] = time.monotonic()
            got["fence"] = turn.fence
            return turn.complete({"answer": 42})

        t2 = Thread(w2_side)
        t2.start()
        self.assertTrue(until(lambda: state_of(w1c, L, "w2") == "QUEUED", 10))
        t3 = Thread(third.await_result, L, "w2", timeout=30)
        t3.start()
        time.sleep(0.5)
        self.assertNotIn("at", got, "W2 got its turn before W1 completed")
        completed_at = time.monotonic()
        released = w1.complete({"w1": True})
        self.assertEqual(released.status, "RELEASED")
        self.assertEqual(getattr(released, "passed_to", None), "w2")
        t2.outcome(30)
        self.assertGreater(got["at"], completed_at)
        self.assertGreater(got["fence"], w1.fence)
        view = t3.outcome(30)
        self.assertEqual((view.state, view.result), ("DONE", {"answer": 42}))

    # ------------------------------------------------------------------ claim_poller_rescues_orphan

    def test_claim_poller_rescues_orphan(self) -> None:
        raw = self.client()
        L = self.lcid()
        first = raw.acquire(L, "o1", lease_ms=1000)
        self.assertIsInstance(first, Acquired)
        self.assertIsInstance(raw.acquire(L, "o2"), Queued)

        class Counting(Client):
            empty = 0

            def claim(self, **kwargs: Any) -> Optional[Next]:
                answer = super().claim(**kwargs)
                if answer is None:
                    Counting.empty += 1
                return answer

        poller = Counting(URL or "", api_key=KEY)
        self.addCleanup(poller.close)
        seen: List[Tuple[str, int]] = []
        stop = threading.Event()

        def handler(work: Work) -> None:
            seen.append((work.request_id, work.request.attempt))

        errors: List[BaseException] = []
        t = Thread(poller.run_claims, handler, lcid_prefix=self.prefix, lease_ms=5000, stop=stop, on_error=errors.append)
        t.start()
        try:
            self.assertTrue(until(lambda: len(seen) >= 2, 10), seen)
            empty_before = Counting.empty
            self.assertGreaterEqual(empty_before, 1, "the poller saw a 204 before the lease ran out")
            self.assertTrue(until(lambda: Counting.empty > empty_before, 5), "it keeps polling after work")
        finally:
            stop.set()
        report = t.outcome(15)
        self.assertGreaterEqual(report.claims, 1)
        self.assertEqual((report.handled, report.failed), (2, 0))
        self.assertEqual(errors, [])
        self.assertEqual(seen, [("o1", 2), ("o2", 1)])
        self.assertDone(raw, L, "o1")
        self.assertDone(raw, L, "o2")

    # ------------------------------------------------------------------ lock_all_crossed_no_deadlock

    def test_lock_all_crossed_no_deadlock(self) -> None:
        A, B = self.lcid("A"), self.lcid("B")
        in_use: Dict[str, bool] = {A: False, B: False}
        last_fence: Dict[str, int] = {A: 0, B: 0}
        mutex = threading.Lock()
        problems: List[str] = []

        def handler(work: LockAllWork) -> None:
            with mutex:
                if set(work.fences) != {A, B}:
                    problems.append(f"fences {work.fences}")
                for L in (A, B):
                    if in_use[L]:
                        problems.append(f"overlap on {L}")
                    in_use[L] = True
                    if work.fences[L] <= last_fence[L]:
                        problems.append(f"fence did not rise on {L}")
                    last_fence[L] = work.fences[L]
            time.sleep(0.001)
            with mutex:
                for L in (A, B):
                    in_use[L] = False

        def caller(order: List[str]) -> int:
            c = self.client()
            for _ in range(200):
                c.lock_all(order, handler, timeout=30)
            return 200

        start = time.monotonic()
        t1, t2 = Thread(caller, [A, B]), Thread(caller, [B, A])
        t1.start()
        t2.start()
        self.assertEqual(t1.outcome(120), 200)
        self.assertEqual(t2.outcome(120), 200)
        self.assertLess(time.monotonic() - start, 120)
        self.assertEqual(problems, [])

    # ------------------------------------------------------------------ requeued_request_rescued_by_poller

    def test_requeued_request_rescued_by_poller(self) -> None:
        holder, poller, viewer = self.client(), self.client(), self.client()
        L = self.lcid()
        runs: List[Tuple[str, int]] = []
        errors: List[BaseException] = []

        def handler(work: Work) -> Any:
            runs.append((work.request_id, work.request.attempt))
            if work.request.attempt == 1:
                raise RuntimeError("fails on its first attempt")
            return {"attempt": work.request.attempt}

        # Started first, as the README's first example does; this scenario's own lcid prefix.
        stop = threading.Event()
        t = Thread(poller.run_claims, handler, lcid_prefix=self.prefix, stop=stop, on_error=errors.append)
        t.start()
        try:
            with self.assertRaises(RuntimeError) as caught:
                holder.run(L, handler, request_id="r1")
            report = caught.exception.report  # type: ignore[attr-defined]
            self.assertEqual((report.handled, report.handled_own), ([], False))
            view = self.assertDone(viewer, L, "r1", timeout=10)
            self.assertEqual((view.attempt, view.result), (2, {"attempt": 2}))
        finally:
            stop.set()
        self.assertEqual(t.outcome(15), ClaimReport(claims=1, handled=1, failed=0))
        self.assertEqual(runs, [("r1", 1), ("r1", 2)])
        self.assertEqual(errors, [])

    # ------------------------------------------------------------------ released_before_own_request

    def test_released_before_own_request(self) -> None:
        raw, runner, viewer = self.client(), self.client(), self.client()
        L = self.lcid()
        first = raw.acquire(L, "r0", lease_ms=30000)
        assert isinstance(first, Acquired)
        self.assertIsInstance(raw.acquire(L, "h1"), Queued)
        self.assertIsInstance(raw.acquire(L, "w1", mode="wait"), Queued)
        raw.abort(L, first.token, "r0")  # no requeue: no holder, h1 at the head
        events: List[Any] = []

        def on_submit(lcid: str, request_id: str, outcome: Any) -> None:
            events.append(("submit", lcid, request_id, outcome.status))

        def handler(work: Work) -> None:
            events.append(("handler", work.request_id))

        report = runner.run(L, handler, request_id="r2", on_submit=on_submit)
        self.assertEqual(events, [("submit", L, "r2", "NEXT"), ("handler", "h1")])
        self.assertEqual((report.status, report.request_id, report.handled, report.handled_own),
                         ("RELEASED", "r2", ["h1"], False))
        assert report.released is not None
        self.assertEqual(report.released.passed_to, "w1")
        self.assertEqual(viewer.request(L, "r2").state, "QUEUED")

    # ------------------------------------------------------------------ turn_after_long_wait_is_live

    def test_turn_after_long_wait_is_live(self) -> None:
        w1c, w2c, viewer = self.client(), self.client(), self.client()
        L = self.lcid()
        w1 = w1c.await_turn(L, "w1", timeout=10)

        def hold_w1() -> Any:
            time.sleep(3.0)  # W1 holds its turn 3000 ms: three times W2's lease
            return w1.complete({"w1": True})

        t1 = Thread(hold_w1)
        t1.start()
        turn = w2c.await_turn(L, "w2", lease_ms=1000, timeout=30)
        self.assertEqual(turn.attempt, 1)
        self.assertGreater(turn.fence, w1.fence)
        end = time.monotonic() + 1.5  # works 1500 ms on it: the heartbeats keep it
        while time.monotonic() < end:
            turn.check()
            time.sleep(0.1)
        self.assertEqual(turn.complete({"w2": "done"}).status, "RELEASED")
        self.assertEqual(self.assertDone(viewer, L, "w2").result, {"w2": "done"})
        self.assertEqual(t1.outcome(10).passed_to, "w2")

    # ------------------------------------------------------------------ trace context (client-specific)

    def test_trace_context_comes_back_on_next(self) -> None:
        c = self.client()
        L = self.lcid()
        tp1 = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        tp2 = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
        first = c.acquire(L, "r1", traceparent=tp1)
        assert isinstance(first, Acquired)
        self.assertEqual((first.traceparent, first.tracestate), (tp1, None))
        self.assertIsInstance(c.acquire(L, "r2", traceparent=tp2, tracestate="vendor=x"), Queued)
        self.assertIsInstance(c.acquire(L, "r2", traceparent=tp1), Queued)  # a repeat changes nothing
        self.assertIsInstance(c.acquire(L, "r3"), Queued)
        self.assertIsInstance(c.acquire(L, "r4", traceparent="not-a-traceparent"), Queued)
        view = c.request(L, "r2")
        self.assertEqual((view.traceparent, view.tracestate), (tp2, "vendor=x"))
        self.assertIsNone(c.request(L, "r3").traceparent)
        nxt = c.complete(L, first.token, "r1", take=8)
        assert isinstance(nxt, Next)
        self.assertEqual([(i.request_id, i.traceparent, i.tracestate) for i in nxt.requests],
                         [("r2", tp2, "vendor=x"), ("r3", None, None), ("r4", None, None)])
        self.assertEqual((nxt.request.traceparent, nxt.request.tracestate), (tp2, "vendor=x"))
        self.assertEqual(c.hold(nxt, lambda work: None).handled, ["r2", "r3", "r4"])

    # ------------------------------------------------------------------ proxy_502_is_typed_error

    def test_proxy_502_is_typed_error(self) -> None:
        hits: List[str] = []
        body = b"<html><head><title>502 Bad Gateway</title></head><body>Bad Gateway</body></html>"

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _reply(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                hits.append(self.path)
                self.send_response(502)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _reply

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        c = Client(f"http://127.0.0.1:{server.server_address[1]}", api_key="k")
        self.addCleanup(c.close)
        with self.assertRaises(UnexpectedResponseError) as caught:
            c.acquire(self.lcid(), "r1")
        self.assertEqual(caught.exception.status, 502)
        self.assertIn("Bad Gateway", caught.exception.body)
        self.assertEqual(len(hits), 1, "not retried")


if __name__ == "__main__":
    unittest.main()
