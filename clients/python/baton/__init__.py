"""Baton client: per-entity FIFO locks with handoff, over HTTP (protocol v1.1).

    from baton import Client
    client = Client("http://localhost:8080", api_key="...")
    report = client.run("order-42", lambda work: db.write(work.payload, fence=work.fence),
                        payload={"amount": 5})
"""
from __future__ import annotations

__version__ = "1.1.0"

from .client import Client, backoff_delay, new_request_id  # noqa: E402
from .errors import *  # noqa: E402,F401,F403
from .errors import __all__ as _errors_all  # noqa: E402
from .holder import LockAllWork, Turn, Work  # noqa: E402
from .outcomes import (Acquired, DeadLetter, Item, LockView, Next, Outcome, Queued, Released,  # noqa: E402
                       RequestView, RunReport)

__all__ = ["Client", "new_request_id", "backoff_delay", "Work", "Turn", "LockAllWork", "Acquired", "Queued",
           "Next", "Released", "Outcome", "Item", "LockView", "RequestView", "DeadLetter", "RunReport",
           "__version__"] + list(_errors_all)
