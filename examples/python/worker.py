#!/usr/bin/env python3
"""A Baton worker on the official Python client (clients/python, standard library only).

It submits requests for some lcids with Client.run, which runs the holder loop: work on what it
is given (its own request, or the queued ones it is handed), passing the fence to the database,
then complete, which hands it the next queued request. The client heartbeats in the background
during long work, retries every call through 429, 503 and connection errors with the same body
(safe: every call is idempotent by requestId and token), and cancels the work when the lock is
lost (the request is redelivered). QUEUED means another holder will do the work. Each request is
journaled (--submitted) from run's on_submit, the moment Baton acknowledged it as stored.

Work that nobody holds (a lock this worker lost, a handler that failed) is done by claim workers:
run one (--claims) for the same lcids, as examples/e2e does.

With --take N (protocol v1.1 batch handoff) a holder is handed up to N queued requests at once,
under one fence, and finishes them with one complete: fewer round trips on a hot lcid.

With --mode wait (protocol v1.1) it is a service that can do only its own kind of request (a
payment service, say, next to a stock service on the same orders): each request is submitted as
`wait`, keeps its place in the lcid's FIFO queue, and this worker long-polls for its turn
(Client.await_turn), does it and completes it. Another service's holder is never handed its
requests. If waiting fails (Baton unreachable past the retry deadline), the request keeps its
place and the worker waits again with the same requestId.

With --claims it is a claim worker: the client's continuous claim poller (Client.run_claims) does
orphaned work (requests whose holder aborted or died) of the lcids that start with --lcid-prefix.
It claims; on work it runs the holder loop and claims again at once; on 204 it waits 200 ms to
1 s (jitter) and claims again, until SIGTERM or --claim-seconds. It never drains until 204 and
stops: work becomes claimable after the call that orphaned it, so such a drain leaves work behind.

  python3 worker.py --url http://localhost:8080 --lcids order-1,order-2 --count 20 --name py
  python3 worker.py --take 8 ...                     (batch handoff)
  python3 worker.py --mode wait --name payment ...   (the requestIds are NAME-N)
  python3 worker.py --claims --lcid-prefix order- --name orders-claims
  (--key KEY when authentication is on; --db FILE is the simulated database)
"""
import argparse
import json
import logging
import os
import random
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python"))

from baton import (BackendUnavailableError, Client, InternalServerError, LockLostError, ProblemError,  # noqa: E402
                   Released, TransportError, UnexpectedResponseError)

# A worker outlives outages: one call keeps retrying for two minutes before it gives up.
RETRY_SECONDS = 120


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


def do_request(db, lcid, request_id, payload, fence, name, cancelled, check, batch=1):
    """The work on one request: `workMs` of it (the client heartbeats meanwhile), then the write."""
    duration = (payload or {}).get("workMs", 5) / 1000.0
    if cancelled.wait(duration):
        check()  # the lock is gone: raise, never write
    db.write(lcid, request_id, fence, name, batch)


def handler_for(db, name):
    """The handler of the holder loop: one request, or a batch (then a result per requestId)."""
    def handler(work):
        for item in work.requests:
            do_request(db, work.lcid, item.request_id, item.payload, work.fence, name, work.cancelled, work.check,
                       len(work.requests))
        if len(work.requests) == 1:
            return {"by": name}
        return {item.request_id: {"by": name} for item in work.requests}
    return handler


def journal(path, sent_at):
    """run's on_submit: records the request the moment Baton acknowledged it as stored."""
    def submitted(lcid, request_id, outcome):
        with open(path, "a") as out:
            out.write(json.dumps({"lcid": lcid, "requestId": request_id, "sentAt": sent_at,
                                  "ackedAt": time.time()}) + "\n")
    return submitted


def wait_mode(client, db, args):
    """Submit (QUEUED or ACQUIRED at once), then await the turn, work, complete."""
    lcids = args.lcids.split(",")
    for i in range(args.count):
        lcid = random.choice(lcids)
        request_id = f"{args.name}-{i}"
        payload = {"workMs": 1500 if i % 10 == 9 else random.randint(1, 10), "n": i}
        sent_at = time.time()
        try:
            client.acquire(lcid, request_id, payload, lease_ms=args.lease_ms, mode="wait")
        except ProblemError as refused:
            print(f"{args.name}: {request_id} refused: {refused}")
            continue
        with open(args.submitted, "a") as out:
            out.write(json.dumps({"lcid": lcid, "requestId": request_id, "sentAt": sent_at,
                                  "ackedAt": time.time()}) + "\n")
        turn = await_turn(client, args, lcid, request_id, payload)
        if turn is None:
            continue
        if turn.attempt > 1:
            print(f"{args.name}: {request_id} is redone (attempt {turn.attempt})")
        try:
            do_request(db, lcid, request_id, payload, turn.fence, args.name, turn.cancelled, turn.check)
            done = turn.complete({"by": args.name})
            if not isinstance(done, Released):
                print(f"{args.name}: unexpected answer to a wait holder's complete: {done}")
        except LockLostError as lost:
            print(f"{args.name}: lock lost on {lcid} ({lost}); the request goes back to the queue")
    print(f"{args.name}: submitted {args.count} (wait mode)")


def await_turn(client, args, lcid, request_id, payload):
    """The turn of a submitted wait request. A failure of the wait itself leaves the request in its
    place (the client withdraws only when the caller gives up): wait again for the same one."""
    while True:
        try:
            # Repeats the same acquire as long-polls; an ACQUIRED repeat is the same grant.
            return client.await_turn(lcid, request_id, payload, lease_ms=args.lease_ms)
        except (TransportError, BackendUnavailableError, InternalServerError, UnexpectedResponseError) as error:
            print(f"{args.name}: waiting for {request_id} failed ({error}); waiting again in its place")
        except ProblemError as error:
            print(f"{args.name}: {request_id} did not get its turn: {error}")
            return None


def claim_poller(client, db, args):
    """The client's continuous claim poller, until SIGTERM (after the work in hand) or --claim-seconds."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    if args.claim_seconds:
        timer = threading.Timer(args.claim_seconds, stop.set)
        timer.daemon = True
        timer.start()
    # A failed claim or a failed handler is logged by the client (on_error's default) and polling goes on.
    report = client.run_claims(handler_for(db, args.name), lcid_prefix=args.lcid_prefix, lease_ms=args.lease_ms,
                               take=args.take, stop=stop)
    print(f"{args.name}: claimed work {report.claims} times, handled {report.handled} requests, "
          f"{report.failed} failures")


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
    # The client logs lost locks and failed claimed work as warnings: show them.
    logging.basicConfig(level=logging.WARNING, format=f"{args.name}: %(message)s")
    client, db = Client(args.url, api_key=args.key, retry_timeout=RETRY_SECONDS), Database(args.db)
    if args.claims:
        claim_poller(client, db, args)
        return
    if args.mode == "wait":
        wait_mode(client, db, args)
        return
    handler = handler_for(db, args.name)
    lcids = args.lcids.split(",")
    for i in range(args.count):
        lcid = random.choice(lcids)
        request_id = f"{args.name}-{i}"
        # Every tenth request is long work that needs heartbeats.
        payload = {"workMs": 1500 if i % 10 == 9 else random.randint(1, 10), "n": i}
        try:
            client.run(lcid, handler, request_id=request_id, payload=payload, lease_ms=args.lease_ms, take=args.take,
                       on_submit=journal(args.submitted, time.time()))
        except LockLostError as lost:
            who = "this client's lease deadline passed" if lost.by_client else "Baton answered LOCK_LOST"
            print(f"{args.name}: lock lost on {lcid} ({who}: {lost}); handled before: {lost.report.handled}; "
                  f"the request will be redelivered")
        except ProblemError as error:
            print(f"{args.name}: {request_id} failed: {error}")
    # Work this submitter leaves orphaned (a lock it lost) is done by the claim workers (--claims).
    print(f"{args.name}: submitted {args.count}")


if __name__ == "__main__":
    main()
