"""A worker process for sigkill_mid_handler: holds LCID for REQUEST_ID with a 1500 ms lease,
prints "IN_HANDLER <fence>" from inside its handler and then blocks until it is killed.

    python3 -m tests.killable_worker LCID REQUEST_ID    (BATON_URL, BATON_API_KEY from the environment)
"""
from __future__ import annotations

import os
import sys
import threading

from baton import Client, Work


def main() -> None:
    lcid, request_id = sys.argv[1], sys.argv[2]
    client = Client(os.environ["BATON_URL"], api_key=os.environ.get("BATON_API_KEY"))

    def handler(work: Work) -> None:
        print(f"IN_HANDLER {work.fence} {work.request.attempt}", flush=True)
        threading.Event().wait()  # until SIGKILL

    client.run(lcid, handler, request_id=request_id, lease_ms=1500)
    print("RETURNED", flush=True)


if __name__ == "__main__":
    main()
