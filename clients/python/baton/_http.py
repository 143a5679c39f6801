"""A small keep-alive connection pool over http.client, safe to use from several threads.

http.client connections are not thread-safe, so each call takes an idle connection out of the
pool (or opens one), uses it alone and puts it back if the server keeps it open. A connection
that failed in any way is closed, never reused: after a timeout an answer may still arrive on it
and would be read as the answer of the next call.
"""
from __future__ import annotations

import http.client
import threading
import urllib.parse
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple, Union

Connection = Union[http.client.HTTPConnection, http.client.HTTPSConnection]

# A server may close an idle keep-alive connection at any moment; the first use of such a
# connection then fails before any answer. That is not an outage: try once more on a new one.
_STALE = (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError, ConnectionAbortedError)


@dataclass
class Response:
    status: int
    headers: Dict[str, str]  # lower-case names
    body: bytes


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
                timeout: float) -> Response:
        """One HTTP exchange; raises OSError / http.client.HTTPException when there is no answer."""
        while True:
            conn, reused = self._take(timeout)
            try:
                conn.request(method, self.prefix + path, body=body, headers=headers)
                answer = conn.getresponse()
                data = answer.read()
            except _STALE:
                conn.close()
                if reused:
                    continue  # a stale keep-alive connection, not an answer: a fresh one decides
                raise
            except BaseException:
                conn.close()
                raise
            names = {k.lower(): v for k, v in answer.getheaders()}
            if answer.will_close:
                conn.close()
            else:
                self._give_back(conn)
            return Response(answer.status, names, data)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
