#!/usr/bin/env python3
"""A Baton worker using only Python's standard library (urllib).

It submits requests for some lcids and runs the holder loop of protocol v1: work on what it is
given (ACQUIRED: its own request, NEXT: the request in the body), passing the fence to the
database, heartbeating during long work, then completing, which hands it the next queued
request. QUEUED means another holder will do the work. On LOCK_LOST it stops (the request is
redelivered); on QUEUE_FULL and 503 it waits Retry-After and retries the same call, which is
safe because every call is idempotent by requestId and token.

With --take N (protocol v1.1 batch handoff) a holder is handed up to N queued requests at once,
under one fence, and finishes them with one complete (`completed`): fewer round trips on a hot
lcid.

With --mode wait (protocol v1.1) it is a service that can do only its own kind of request (a
payment service, say, next to a stock service on the same orders): each request is submitted as
`wait`, keeps its place in the lcid's FIFO queue, and this worker long-polls for its turn
(`waitMs`), does it and completes it. Another service's holder is never handed its requests.

With --claims it is a claim worker: a continuous claim poller that does orphaned work (requests
whose holder aborted or died) of the lcids that start with --lcid-prefix. It claims; on work it
runs the holder loop and claims again at once; on 204 it waits 200 ms to 1 s (jitter) and claims
again, until SIGTERM or --claim-seconds. It never drains until 204 and stops: work becomes
claimable after the call that orphaned it (a lease runs out; an abort's index hint lands a few
milliseconds after the abort answered), so a drain that stops at the first 204 leaves work behind.

  python3 worker.py --url http://localhost:8080 --lcids order-1,order-2 --count 20 --name py
  python3 worker.py --take 8 ...                     (batch handoff)
  python3 worker.py --mode wait --name payment ...   (the requestIds are NAME-N)
  python3 worker.py --claims --lcid-prefix order- --name orders-claims
  (--key KEY when authentication is on; --db FILE is the simulated database)
"""
import argparse
import json
import os
import random
import signal
import threading
import time
import urllib.error
import urllib.request


class LockLost(Exception):
    pass


class Baton:
    def __init__(self, url, key=None):
        self.url = url.rstrip("/")
        self.key = key

    def call(self, method, path, body=None, timeout=10):
        """One call, retried through 429 and 503 as their Retry-After says."""
        while True:
            data = None if body is None else json.dumps(body).encode()
            request = urllib.request.Request(self.url + path, data=data, method=method)
            request.add_header("Content-Type", "application/json")
            if self.key:
                request.add_header("Authorization", "Bearer " + self.key)
            try:
                with urllib.request.urlopen(request, timeout=timeout) as response:
                    text = response.read()
                    return response.status, (json.loads(text) if text else None)
            except urllib.error.HTTPError as error:
                problem = json.loads(error.read() or b"{}")
                if error.code in (429, 503):
                    time.sleep(float(error.headers.get("Retry-After", "1")))
                    continue
                if problem.get("code") == "LOCK_LOST":
                    raise LockLost(problem.get("detail"))
                return error.code, problem
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(0.5)  # Baton unreachable: the same call again is safe

    def acquire(self, lcid, request_id, payload, lease_ms, take=1):
        return self.call("POST", f"/v1/locks/{lcid}/acquire",
                         {"requestId": request_id, "payload": payload, "leaseMs": lease_ms, "take": take})[1]

    def wait_turn(self, lcid, request_id, payload, lease_ms, wait_ms=25000):
        """v1.1: a wait request's acquire held until its turn (200 ACQUIRED: picked up) or waitMs
        (202 QUEUED: ask again). The same call each time; read timeout above waitMs."""
        body = {"requestId": request_id, "payload": payload, "leaseMs": lease_ms, "mode": "wait", "waitMs": wait_ms}
        while True:
            status, answer = self.call("POST", f"/v1/locks/{lcid}/acquire", body, timeout=wait_ms / 1000 + 10)
            if status != 202:
                return answer

    def heartbeat(self, lcid, token):
        return self.call("POST", f"/v1/locks/{lcid}/heartbeat", {"token": token})[1]

    def complete(self, lcid, token, request_id, result=None):
        return self.call("POST", f"/v1/locks/{lcid}/complete",
                         {"token": token, "requestId": request_id, "result": result})[1]

    def complete_batch(self, lcid, token, results, take):
        """v1.1 batch handoff: finishes every request of the batch ({requestId: result}) at once and
        takes up to `take` more."""
        completed = [{"requestId": rid, "result": result} for rid, result in results.items()]
        return self.call("POST", f"/v1/locks/{lcid}/complete",
                         {"token": token, "completed": completed, "take": take})[1]

    def claim(self, lease_ms, take=1, lcid_prefix=None):
        body = {"leaseMs": lease_ms, "take": take}
        if lcid_prefix:
            body["lcidPrefix"] = lcid_prefix
        status, answer = self.call("POST", "/v1/claims", body)
        return answer if status == 200 else None


class Database:
    """The simulated database: an append-only file of writes, each with its fence.

    A real database keeps the highest fence it has seen per entity and refuses a lower one:
    that is what turns away a holder whose lease ran out.
    """

    def __init__(self, path):
        self.path = path

    def write(self, lcid, request_id, fence, worker, batch=1):
        line = json.dumps({"lcid": lcid, "requestId": request_id, "fence": fence, "worker": worker,
                           "batch": batch}) + "\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode())
        finally:
            os.close(fd)


def work(baton, db, lcid, token, request, fence, lease_ms, name, batch=1):
    """The work on one request: long work heartbeats so that the lease never runs out."""
    payload = request.get("payload") or {}
    duration = payload.get("workMs", 5) / 1000.0
    deadline = time.time() + duration
    while time.time() < deadline:
        time.sleep(min(lease_ms / 3000.0, max(0.0, deadline - time.time())))
        if time.time() < deadline:
            baton.heartbeat(lcid, token)
    db.write(lcid, request["requestId"], fence, name, batch)


def holder_loop(baton, db, lcid, own, answer, lease_ms, name, take=1):
    """protocol.md: while ACQUIRED or NEXT, work, then complete (which hands over the next one, or
    with take > 1 the next batch: every request of it shares the answer's fence)."""
    try:
        while answer and answer.get("status") in ("ACQUIRED", "NEXT"):
            batch = [own] if answer["status"] == "ACQUIRED" else answer.get("requests", [answer["request"]])
            for request in batch:
                work(baton, db, lcid, answer["token"], request, answer["fence"], lease_ms, name, len(batch))
            if take == 1:
                answer = baton.complete(lcid, answer["token"], batch[0]["requestId"], {"by": name})
            else:
                answer = baton.complete_batch(lcid, answer["token"], {r["requestId"]: {"by": name} for r in batch},
                                              take)
    except LockLost as lost:
        print(f"{name}: lock lost on {lcid} ({lost}); the request will be redelivered")


def wait_mode(baton, db, args):
    """Submit (waitMs 0: QUEUED or ACQUIRED at once), then wait for the turn, work, complete."""
    lcids = args.lcids.split(",")
    for i in range(args.count):
        lcid = random.choice(lcids)
        request_id = f"{args.name}-{i}"
        payload = {"workMs": 1500 if i % 10 == 9 else random.randint(1, 10), "n": i}
        sent_at = time.time()
        status, answer = baton.call("POST", f"/v1/locks/{lcid}/acquire",
                                    {"requestId": request_id, "payload": payload, "leaseMs": args.lease_ms,
                                     "mode": "wait"})
        if status not in (200, 202):
            print(f"{args.name}: {request_id} refused: {answer}")
            continue
        with open(args.submitted, "a") as out:
            out.write(json.dumps({"lcid": lcid, "requestId": request_id, "sentAt": sent_at,
                                  "ackedAt": time.time()}) + "\n")
        if status == 202:
            answer = baton.wait_turn(lcid, request_id, payload, args.lease_ms)
        if answer.get("status") != "ACQUIRED":
            print(f"{args.name}: {request_id} did not get its turn: {answer}")
            continue
        try:
            work(baton, db, lcid, answer["token"], {"requestId": request_id, "payload": payload}, answer["fence"],
                 args.lease_ms, args.name)
            done = baton.complete(lcid, answer["token"], request_id, {"by": args.name})
            if done.get("status") != "RELEASED":
                print(f"{args.name}: unexpected answer to a wait holder's complete: {done}")
        except LockLost as lost:
            print(f"{args.name}: lock lost on {lcid} ({lost}); the request goes back to the queue")
    print(f"{args.name}: submitted {args.count} (wait mode)")


def claim_poller(baton, db, args):
    """The continuous claim poller: claim; on work do it and claim again at once; on 204 wait with
    jitter and claim again. Stops on SIGTERM (after the work in hand) or after --claim-seconds."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    deadline = time.time() + args.claim_seconds if args.claim_seconds else None
    claimed = 0
    while not stop.is_set() and (deadline is None or time.time() < deadline):
        answer = baton.claim(args.lease_ms, args.take, args.lcid_prefix)
        if answer is None:
            stop.wait(random.uniform(0.2, 1.0))
            continue
        claimed += 1
        holder_loop(baton, db, answer["lcid"], None, answer, args.lease_ms, args.name, args.take)
    print(f"{args.name}: claimed work on {claimed} lcids")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", default="http://localhost:8080")
    parser.add_argument("--key")
    parser.add_argument("--lcids", default="order-1")
    parser.add_argument("--count", type=int, default=10)
    parser.add_argument("--name", default="py")
    parser.add_argument("--lease-ms", type=int, default=2000)
    parser.add_argument("--db", default="processed.jsonl")
    parser.add_argument("--submitted", default="submitted.jsonl")
    parser.add_argument("--mode", choices=["handoff", "wait"], default="handoff")
    parser.add_argument("--take", type=int, default=1, help="batch handoff: requests per NEXT, 1 to 100")
    parser.add_argument("--claims", action="store_true", help="be a continuous claim poller, submit nothing")
    parser.add_argument("--lcid-prefix", help="claims: only lcids that start with this")
    parser.add_argument("--claim-seconds", type=float, default=0, help="claims: stop after this long (0: on SIGTERM)")
    args = parser.parse_args()
    baton, db = Baton(args.url, args.key), Database(args.db)
    if args.claims:
        claim_poller(baton, db, args)
        return
    if args.mode == "wait":
        wait_mode(baton, db, args)
        return
    lcids = args.lcids.split(",")
    for i in range(args.count):
        lcid = random.choice(lcids)
        request_id = f"{args.name}-{i}"
        # Every tenth request is long work that needs heartbeats.
        payload = {"workMs": 1500 if i % 10 == 9 else random.randint(1, 10), "n": i}
        own = {"requestId": request_id, "payload": payload}
        sent_at = time.time()
        answer = baton.acquire(lcid, request_id, payload, args.lease_ms, args.take)
        if answer is None or "status" not in answer:
            print(f"{args.name}: {request_id} refused: {answer}")
            continue
        with open(args.submitted, "a") as out:
            out.write(json.dumps({"lcid": lcid, "requestId": request_id, "sentAt": sent_at,
                                  "ackedAt": time.time()}) + "\n")
        holder_loop(baton, db, lcid, own, answer, args.lease_ms, args.name, args.take)
    # Work this submitter leaves orphaned (a lock it lost) is done by the claim workers (--claims).
    print(f"{args.name}: submitted {args.count}")


if __name__ == "__main__":
    main()
