#!/usr/bin/env python3
"""Checks what the example workers did: every submitted request processed exactly once, fences
rising per lcid in processing order (equal within one batch), each submitter's requests on an lcid processed in the order
it submitted them, and across submitters: a request Baton had acknowledged before another was
sent to the same lcid was processed before it (FIFO). Waits up to 60 s for Baton to report every
request DONE. With --own-work (wait mode) every request must have been done by its submitter."""
import json
import sys
import time
import urllib.request
from collections import defaultdict

url, key, submitted_path, processed_path = sys.argv[1:5]
own_work = "--own-work" in sys.argv[5:]


def state(lcid, request_id):
    request = urllib.request.Request(f"{url}/v1/locks/{lcid}/requests/{request_id}")
    request.add_header("Authorization", "Bearer " + key)
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())["state"]


submitted = [json.loads(line) for line in open(submitted_path)]
deadline = time.time() + 60
pending = list(submitted)
while pending and time.time() < deadline:
    pending = [s for s in pending if state(s["lcid"], s["requestId"]) != "DONE"]
    if pending:
        time.sleep(1)
problems = [f"not DONE: {s}" for s in pending]

processed = [json.loads(line) for line in open(processed_path)]
count = defaultdict(int)
for p in processed:
    count[p["requestId"]] += 1
for s in submitted:
    if count[s["requestId"]] != 1:
        problems.append(f"{s['requestId']} processed {count[s['requestId']]} times")
last_fence = {}
order = defaultdict(list)
for p in processed:
    # The requests of one batch (batch handoff) share its fence; anything else needs a higher one.
    last = last_fence.get(p["lcid"], 0)
    if p["fence"] < last or (p["fence"] == last and p.get("batch", 1) < 2):
        problems.append(f"fence did not rise on {p['lcid']} at {p['requestId']}")
    last_fence[p["lcid"]] = p["fence"]
    submitter, n = p["requestId"].rsplit("-", 1)
    order[(p["lcid"], submitter)].append(int(n))
for (lcid, submitter), numbers in order.items():
    if numbers != sorted(numbers):
        problems.append(f"{submitter}'s requests on {lcid} out of order: {numbers}")

fence_of = {p["requestId"]: p["fence"] for p in processed}
by_lcid = defaultdict(list)
for s in submitted:
    by_lcid[s["lcid"]].append(s)
for lcid, requests in by_lcid.items():
    for first in requests:
        for later in requests:
            if first["ackedAt"] < later["sentAt"] and first["requestId"] in fence_of \
                    and later["requestId"] in fence_of and fence_of[first["requestId"]] > fence_of[later["requestId"]]:
                problems.append(f"{later['requestId']} was sent after {first['requestId']} was queued on {lcid} "
                                f"but processed before it")

workers = sorted({p["worker"] for p in processed})
handoffs = sum(1 for p in processed if not p["requestId"].startswith(p["worker"] + "-"))
print(f"e2e: {len(submitted)} submitted, {len(processed)} processed by {workers}, "
      f"{len(last_fence)} lcids, {handoffs} processed by another worker's holder, {len(problems)} problems")
if own_work and handoffs:
    problems.append(f"{handoffs} wait-mode requests were done by another service")
for problem in problems[:20]:
    print("  " + problem)
sys.exit(1 if problems else 0)
