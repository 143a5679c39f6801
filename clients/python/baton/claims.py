"""The continuous claim poller (docs/claims-and-dead-letters.md): claim; on work run the holder
loop on that lcid and claim again at once; on 204 sleep a random 200 ms to 1 s; until stopped.
It never stops at the first 204: work becomes claimable later than the call that orphaned it.

It is what does a request nobody holds (a handler threw, a holder died, an operator retried, a
``handoff`` request queued behind a ``wait`` turn), so every deployment that uses ``run`` runs
one for its kind of lcids.

Built on the calls and the holder loop (``holder.py``).
"""
from __future__ import annotations

import logging
import random
import threading
from typing import Any, Callable, List, Optional

from ._http import Cancel
from ._retries import Cancelled
from .calls import Calls
from .errors import BatonError
from .holder import Handler, _attach, _hold, _reason
from .outcomes import ClaimReport, Next, RunReport

__all__ = ["run_claims", "OnError", "OnClaim"]

log = logging.getLogger("baton")

OnError = Callable[[BaseException], Any]
OnClaim = Callable[[Next], Any]


def _log_error(error: BaseException) -> None:
    report = getattr(error, "report", None)
    where = f" on {report.lcid}" if report is not None else ""
    log.warning("baton: claim poller%s: %s: %s", where, type(error).__name__, error)


def run_claims(calls: Calls, handler: Handler, *, lcid_prefix: Optional[str] = None, lease_ms: Optional[int] = None,
               take: Optional[int] = None, stop: Optional[threading.Event] = None,
               on_error: Optional[OnError] = None, on_claim: Optional[OnClaim] = None) -> ClaimReport:
    """``Client.run_claims``: polls until ``stop`` is set, then returns what it did."""
    stop = stop or threading.Event()
    report_error = on_error or _log_error
    claims = handled = failed = 0
    cancel = Cancel()
    finished = threading.Event()
    watcher = threading.Thread(target=_watch, args=(stop, finished, cancel), name="baton-claims-stop", daemon=True)
    watcher.start()

    def failure(error: BaseException) -> None:
        nonlocal failed
        failed += 1
        try:
            report_error(error)
        except Exception as broken:  # noqa: BLE001 - the poller goes on whatever on_error does
            log.warning("baton: claim poller: on_error raised %s: %s (for %s)", type(broken).__name__, broken, error)

    try:
        while not stop.is_set():
            try:
                outcome = _claim(calls, cancel, lease_ms=lease_ms, take=take, lcid_prefix=lcid_prefix)
            except Cancelled:
                break
            except Exception as error:  # noqa: BLE001 - a failed claim: reported, and the poller goes on
                failure(error)
                stop.wait(random.uniform(0.2, 1.0))
                continue
            if outcome is None:
                stop.wait(random.uniform(0.2, 1.0))
                continue
            claims += 1
            done: List[str] = []
            try:
                if on_claim is not None:
                    on_claim(outcome)
            except Exception as error:  # noqa: BLE001 - the claim is given back, as a handler's error would
                _give_back(calls, outcome, _reason(error))
                failure(error)
                continue
            try:
                _hold(calls, outcome.lcid, outcome, None, handler, take, done)
            except Exception as error:  # noqa: BLE001 - the request was requeued or comes back after its lease
                _attach(error, RunReport("FAILED", outcome.lcid, outcome.request.request_id, handled=list(done)))
                failure(error)
            finally:
                handled += len(done)
    except BaseException as error:
        _attach(error, ClaimReport(claims, handled, failed))  # type: ignore[arg-type]
        raise
    finally:
        finished.set()
    return ClaimReport(claims, handled, failed)


def _watch(stop: threading.Event, finished: threading.Event, cancel: Cancel) -> None:
    """Fires ``cancel`` the moment ``stop`` is set, so that a claim in flight ends at once, its
    retries included. Ends by itself within a second after the poller ended otherwise."""
    while not finished.is_set():
        if stop.wait(1.0):
            cancel.fire()
            return


def _claim(calls: Calls, cancel: Cancel, **options: Any) -> Optional[Next]:
    """One claim, with its retries, ended at once by ``cancel``.

    The claim runs on a thread of its own, so that even an attempt that cannot be cut off (a
    connect to an address that does not answer) does not hold the poller: on ``cancel`` it returns
    at once, and the claim, if it still gets work, gives that work back.
    """
    settled = threading.Event()
    mutex = threading.Lock()
    box: List[Any] = []  # [("work", outcome)] or [("error", exception)]
    abandoned = False

    def claim() -> None:
        try:
            got = calls.claim(_cancel=cancel, **options)
            result: Any = ("work", got)
        except BaseException as error:  # noqa: BLE001 - handed to the poller's thread
            result = ("error", error)
        with mutex:
            if not abandoned:
                box.append(result)
                settled.set()
                return
        if result[0] == "work" and result[1] is not None:
            _give_back(calls, result[1], "the claim poller was stopped")

    forget = cancel.on_fire(settled.set)
    threading.Thread(target=claim, name="baton-claim", daemon=True).start()
    try:
        settled.wait()
    finally:
        forget()
    with mutex:
        if not box:
            abandoned = True
            raise Cancelled("claim")
    kind, value = box[0]
    if kind == "error":
        raise value
    return value  # type: ignore[no-any-return]


def _give_back(calls: Calls, outcome: Next, reason: str) -> None:
    """Puts claimed work back at the head of its lcid at once (rather than after its lease)."""
    try:
        calls.abort(outcome.lcid, outcome.token, outcome.request.request_id, requeue=True, reason=reason)
    except BatonError as failure:
        log.warning("baton: giving back the claim of %s failed: %s", outcome.lcid, failure)
