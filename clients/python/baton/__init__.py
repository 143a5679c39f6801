"""Baton client: per-entity FIFO locks with handoff, over HTTP (protocol v1.2).

    from baton import Client
    client = Client("http://localhost:8080", api_key="...")
    report = client.run("order-42", lambda work: db.write(work.payload, fence=work.fence),
                        payload={"amount": 5})

Run a claim poller (``client.run_claims``) next to ``run``: see the README.
"""
from __future__ import annotations

from ._version import __version__
from .client import Client, backoff_delay, new_request_id
from .errors import *  # noqa: F401,F403
from .errors import __all__ as _errors_all
from .holder import Work
from .outcomes import (Acquired, ClaimReport, DeadLetter, Item, LockView, Next, Outcome, Queued, Released,
                       RequestView, RunReport)
from .wait import LockAllWork, Turn

__all__ = ["Client", "new_request_id", "backoff_delay", "Work", "Turn", "LockAllWork", "Acquired", "Queued",
           "Next", "Released", "Outcome", "Item", "LockView", "RequestView", "DeadLetter", "RunReport",
           "ClaimReport", "__version__"] + list(_errors_all)
