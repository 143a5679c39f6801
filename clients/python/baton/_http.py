"""The transport: a keep-alive connection pool over http.client, authentication (an API key or a
token file read again as it is replaced) and a way to cut an exchange off from another thread.

http.client connections are not thread-safe, so each exchange takes an idle connection out of
the pool (or opens one), uses it alone and puts it back if the server keeps it open. A connection
that failed in any way is closed, never reused: after a timeout an answer may still arrive on it
and would be read as the answer of the next call.

This is the bottom part of the client: it imports no other part (clients/README.md, "How each
client is built").
"""
from __future__ import annotations

import http.client
import logging
import os
import socket
import threading
import time
import urllib.parse
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple, Union

from ._version import __version__

log = logging.getLogger("baton")

Connection = Union[http.client.HTTPConnection, http.client.HTTPSConnection]

# A server may close an idle keep-alive connection at any moment; the first use of such a
# connection then fails before any answer. That is not an outage: try once more on a new one.
_STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError, ConnectionAbortedError)


@dataclass
class Response:
    status: int
    headers: Dict[str, str]  # lower-case names
    body: bytes
    #: How many times the request was sent to get this answer (a stale keep-alive connection, or
    #: a 401 with a token file that changed since, each send it once more).
    sends: int = 1


class Cancel:
    """Ends a call at once from another thread: ``fire()`` wakes its backoff sleep, stops its
    retries and cuts off the exchange in flight (its socket is shut down, so a blocked read
    returns). Used by the claim poller, so that stopping it never waits out a retry deadline."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._hooks: List[Callable[[], None]] = []

    def is_set(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float) -> bool:
        """Sleeps ``timeout`` seconds, or less if fired; True if fired."""
        return self._event.wait(timeout)

    def fire(self) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            hooks, self._hooks = self._hooks, []
        for hook in hooks:
            try:
                hook()
            except Exception as error:  # noqa: BLE001 - one hook must not keep the others from running
                log.debug("baton: cancel hook failed: %s", error)

    def on_fire(self, hook: Callable[[], None]) -> Callable[[], None]:
        """Runs ``hook`` when fired (at once if it already was); returns what unregisters it."""
        with self._lock:
            if not self._event.is_set():
                self._hooks.append(hook)
                return lambda: self._forget(hook)
        hook()
        return lambda: None

    def _forget(self, hook: Callable[[], None]) -> None:
        with self._lock:
            if hook in self._hooks:
                self._hooks.remove(hook)


def _cut(conn: Connection) -> None:
    sock = conn.sock
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class Pool:
    def __init__(self, url: str, max_idle: int = 16) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {url!r}")
        self.scheme = parts.scheme
        self.host = parts.hostname
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.prefix = parts.path.rstrip("/")
        self.max_idle = max_idle
        self._idle: List[Connection] = []
        self._lock = threading.Lock()
        self._closed = False

    def _open(self, timeout: float) -> Connection:
        if self.scheme == "https":
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def _take(self, timeout: float) -> Tuple[Connection, bool]:
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            return self._open(timeout), False
        conn.timeout = timeout
        if conn.sock is not None:
            conn.sock.settimeout(timeout)
        return conn, True

    def _give_back(self, conn: Connection) -> None:
        with self._lock:
            if not self._closed and len(self._idle) < self.max_idle:
                self._idle.append(conn)
                return
        conn.close()

    def request(self, method: str, path: str, body: Optional[bytes], headers: Dict[str, str],
                timeout: float, cancel: Optional[Cancel] = None) -> Response:
        """One HTTP exchange; raises OSError / http.client.HTTPException when there is no answer."""
        sends = 0
        while True:
            conn, reused = self._take(timeout)
            forget = cancel.on_fire(lambda: _cut(conn)) if cancel is not None else None
            try:
                if cancel is not None and cancel.is_set():
                    raise ConnectionAbortedError("cancelled")
                sends += 1
                conn.request(method, self.prefix + path, body=body, headers=headers)
                answer = conn.getresponse()
                data = answer.read()
            except _STALE:
                conn.close()
                if reused and not (cancel is not None and cancel.is_set()):
                    continue  # a stale keep-alive connection, not an answer: a fresh one decides
                raise
            except BaseException:
                conn.close()
                raise
            finally:
                if forget is not None:
                    forget()
            names = {k.lower(): v for k, v in answer.getheaders()}
            if answer.will_close:
                conn.close()
            else:
                self._give_back(conn)
            return Response(answer.status, names, data, sends)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()


class TokenFile:
    """The bearer token in a file that is replaced before the token expires (a Kubernetes
    projected service-account token: hourly, by a symlink swap). Read once at construction, so a
    wrong path fails there, then again when the last read is older than ``refresh`` seconds."""

    def __init__(self, path: Union[str, "os.PathLike[str]"], refresh: float) -> None:
        self.path = os.fspath(path)
        self.refresh = refresh
        self._lock = threading.Lock()
        self._warned = False
        try:
            self._token = self._read()
        except (OSError, ValueError) as cause:
            raise ValueError(f"token_file {self.path!r} cannot be used: {_unreadable(cause)}") from cause
        self._read_at = time.monotonic()

    def _read(self) -> str:
        with open(self.path, "rb") as file:
            token = file.read().strip().decode("ascii", errors="replace")
        if not token:
            raise ValueError("it is empty")
        # http.client would put the whole header value, the token, into its error message.
        if not _visible(token):
            raise ValueError("it holds whitespace or characters other than visible ASCII")
        return token

    def token(self, renew: bool = False) -> str:
        """The token to send; ``renew`` reads the file whatever the interval (after a 401)."""
        with self._lock:
            if renew or time.monotonic() - self._read_at >= self.refresh:
                try:
                    self._token, self._read_at, self._warned = self._read(), time.monotonic(), False
                except (OSError, ValueError) as cause:
                    # Mid-swap, or the kubelet is late: the last token may well still be valid,
                    # and the server is the one to say it is not.
                    if not self._warned:
                        self._warned = True
                        log.warning("baton: token file %s cannot be read again (%s); sending the last token read",
                                    self.path, _unreadable(cause))
            return self._token


def _visible(text: str) -> bool:
    return all("!" <= c <= "~" for c in text)


def _unreadable(cause: BaseException) -> str:
    """Why a token file cannot be used, without its content."""
    if isinstance(cause, OSError):
        return cause.strerror or type(cause).__name__
    return str(cause)


class Transport:
    """The pool plus what every request carries: Accept, User-Agent and the Authorization of the
    moment (an API key, or a token file's current token, asked per send so that background
    heartbeats and claim pollers send a rotated token too)."""

    def __init__(self, url: str, api_key: Optional[str], token_file: Optional[Union[str, "os.PathLike[str]"]],
                 token_refresh: float, max_idle: int) -> None:
        if api_key and token_file is not None:
            raise ValueError("give api_key or token_file, not both")
        if token_refresh < 0:
            raise ValueError(f"token_refresh must be >= 0 seconds, not {token_refresh}")
        if api_key and not _visible(api_key):
            # Checked here, without showing it: http.client would name the whole header value.
            raise ValueError("api_key holds whitespace or characters other than visible ASCII")
        self.pool = Pool(url, max_idle)
        self.host, self.port = self.pool.host, self.pool.port
        self.headers = {"Accept": "application/json, application/problem+json",
                        "User-Agent": f"baton-python/{__version__}"}
        self._api_key = api_key or None
        self._token_file = None if token_file is None else TokenFile(token_file, token_refresh)

    def _authorization(self, renew: bool = False) -> Optional[str]:
        if self._token_file is not None:
            return f"Bearer {self._token_file.token(renew)}"
        return f"Bearer {self._api_key}" if self._api_key else None

    def exchange(self, method: str, path: str, body: Optional[bytes], headers: Dict[str, str],
                 timeout: float, cancel: Optional[Cancel] = None) -> Response:
        """One exchange with the current credentials; raises what Pool.request raises."""
        sent = dict(self.headers)
        sent.update(headers)
        authorization = self._authorization()
        if authorization is not None:
            sent["Authorization"] = authorization
        answer = self.pool.request(method, path, body, sent, timeout, cancel)
        # The token may have been rotated since it was read: a changed file earns one more send
        # at once, an unchanged one means the 401 is meant.
        if answer.status == 401 and self._token_file is not None:
            renewed = self._authorization(renew=True)
            if renewed != authorization and renewed is not None:
                sent["Authorization"] = renewed
                again = self.pool.request(method, path, body, sent, timeout, cancel)
                again.sends += answer.sends
                return again
        return answer

    def close(self) -> None:
        self.pool.close()
