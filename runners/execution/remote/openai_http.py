"""One bounded POST to an OpenAI-compatible server, shared by the LLM judge and the embedding endpoint.

urllib from the standard library: no proxy and no redirect (the request goes to the configured URL and nowhere
else), an answer over `max_bytes` is not read, an API key only from the environment variable the caller names
(never from a config file). Failures are sorted for the caller's bounded retry loop: a transport failure (timeout,
connection refused, reset or dropped mid-body, a body shorter than its Content-Length) or an HTTP 408/429/5xx is
`Retry` (with the server's numeric Retry-After, capped at 30 s; an unreachable host also carries the one line that
stops a command on its first request); any other HTTP status or a redirect is `Fatal` (asking again cannot fix
it). No error body is kept: a server may echo the request, i.e. the user's text. `backoff` is the wait before
attempt `n + 1`: exponential from `backoff_s`, at least the server's Retry-After, at most 30 s.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any

RETRY_STATUS = {408, 429, 500, 502, 503, 504}
MAX_WAIT_S = 30.0


class Retry(Exception):
    """A failure worth asking again; ``kind`` is what the counts show, ``answer`` the refused text (if any), and
    ``stop`` the message that ends the command when it happens on the first request (unreachable)."""

    def __init__(self, kind: str, wait: float | None = None, answer: str | None = None,
                 stop: str | None = None) -> None:
        super().__init__(kind)
        self.kind, self.wait, self.answer, self.stop = kind, wait, answer, stop


class Fatal(Exception):
    """A failure asking again cannot fix (the server refused the request: an HTTP 4xx or a redirect)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class ClientStats:
    requests: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    in_flight: int = 0
    max_in_flight: int = 0


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """The request goes to the configured endpoint only: a redirect is an HTTP error, never followed."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def retry_after(value: str | None) -> float | None:
    try:
        return min(MAX_WAIT_S, max(0.0, float(value))) if value is not None else None
    except ValueError:
        return None


def backoff(attempt: int, backoff_s: float, wait: float | None = None) -> float:
    """Seconds to wait after failed attempt `attempt` (0-based): backoff_s * 2**attempt, the server's wait if
    longer, never over MAX_WAIT_S."""
    return min(MAX_WAIT_S, max(wait or 0.0, backoff_s * 2 ** attempt))


class JsonPoster:
    """POSTs JSON to one server; thread-safe request / failure counts (`stats`, a `ClientStats` or a subclass).

    `fix` names the setting a user corrects when the server cannot be reached ("judge.endpoint"), `check` the ones
    to check when it refuses the request ("judge.endpoint and judge.model"): they end the one-line messages.
    """

    def __init__(self, api_key_env: str | None, max_bytes: int, fix: str, check: str,
                 stats: ClientStats | None = None) -> None:
        self.api_key_env, self.max_bytes, self.fix, self.check = api_key_env, max_bytes, fix, check
        self.stats = stats if stats is not None else ClientStats()
        self.lock = threading.Lock()
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), NoRedirect())

    def headers(self) -> dict[str, str]:
        out = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:
            out["Authorization"] = f"Bearer {key}"
        return out

    def post_raw(self, url: str, payload: dict[str, Any], timeout: float) -> bytes:
        """The answer's body, whole (at most `max_bytes`); every failure is a `Retry`, or `Fatal` for a 4xx."""
        request = urllib.request.Request(url, data=json.dumps(payload).encode("utf-8"), headers=self.headers(),
                                         method="POST")
        with self.lock:
            self.stats.requests += 1
            self.stats.in_flight += 1
            self.stats.max_in_flight = max(self.stats.max_in_flight, self.stats.in_flight)
        try:
            with self._opener.open(request, timeout=timeout) as resp:
                raw = resp.read(self.max_bytes + 1)
                short = resp.length  # bytes the Content-Length promised and the connection never brought
            if short and len(raw) <= self.max_bytes:
                raise Retry("connection (cut answer)")
            if len(raw) > self.max_bytes:
                raise Retry("oversized answer")
            return raw
        except urllib.error.HTTPError as e:
            e.close()
            if e.code in RETRY_STATUS:
                raise Retry(f"http {e.code}", retry_after(e.headers.get("Retry-After"))) from None
            raise Fatal(f"http {e.code}", f"answered HTTP {e.code} {e.reason}: check {self.check}") from None
        except (TimeoutError, socket.timeout):
            raise Retry("timeout") from None
        except urllib.error.URLError as e:
            if isinstance(e.reason, (TimeoutError, socket.timeout)):
                raise Retry("timeout") from None
            why = getattr(e.reason, "strerror", None) or str(e.reason)
            raise Retry(f"connection ({type(e.reason).__name__})",
                        stop=f"is unreachable ({why}): start the server or fix {self.fix}") from None
        except (http.client.HTTPException, OSError) as e:  # reset, dropped mid-body, a broken status line
            raise Retry(f"connection ({type(e).__name__})") from None
        finally:
            with self.lock:
                self.stats.in_flight -= 1

    def count(self, kind: str) -> None:
        with self.lock:
            self.stats.failures[kind] = self.stats.failures.get(kind, 0) + 1
