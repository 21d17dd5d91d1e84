"""A bounded, retrying client for an OpenAI-compatible chat-completions endpoint (the LLM judge).

urllib from the standard library (no proxy, no redirect: the request goes to the configured endpoint and nowhere
else; an answer over 1 MiB is not read), a thread pool of `max_concurrency` workers. A malformed answer, a timeout, a 429 or a 5xx is asked again with
exponential backoff (a numeric Retry-After is honoured up to 30 s), at most `max_retries` times; then the pair is
unrateable and counted, never guessed. The first request is made alone: an endpoint that is unreachable, refuses
the request or does not answer chat-completions JSON stops the command there with one line, before the pool.
No error body is kept (a server may echo the prompt, i.e. the user's text).
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from custom_tasks.errors import ConfigError

from ...config.judge import JudgeOptions
from ...config.judge_prompt import parse_answer

#: an API key for servers started with one (vLLM --api-key, llama-server --api-key); never read from a config file
API_KEY_ENV = "PRIVATE_MTEB_JUDGE_API_KEY"
_RETRY_STATUS = {429, 500, 502, 503, 504}
#: a grade is a few bytes: an answer larger than this is not read into memory
MAX_ANSWER_BYTES = 1 << 20
_MAX_WAIT_S = 30.0


class _Retry(Exception):
    """A failure worth asking again: the kind is what the counts show."""

    def __init__(self, kind: str, wait: float | None = None) -> None:
        super().__init__(kind)
        self.kind, self.wait = kind, wait


class _Fatal(Exception):
    """A failure asking again cannot fix (unreachable, refused, not chat-completions JSON)."""


@dataclass
class Outcome:
    """One pair's result: its grade (None: unrateable), requests made, and the failure kinds met on the way."""

    grade: int | None
    requests: int
    failures: list[str] = field(default_factory=list)


@dataclass
class ClientStats:
    requests: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    in_flight: int = 0
    max_in_flight: int = 0


class ChatJudge:
    """Grades prompts through one endpoint; thread-safe counters of requests and failures."""

    def __init__(self, opts: JudgeOptions, grades: Mapping[int, str], config: Any = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.opts, self.grades, self.config, self.sleep = opts, dict(grades), config, sleep
        self.stats = ClientStats()
        self._lock = threading.Lock()
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())

    def _where(self) -> str:
        return f"judge endpoint {self.opts.chat_url}"

    def _post(self, prompt: str) -> Any:
        body = json.dumps({"model": self.opts.model, "messages": [{"role": "user", "content": prompt}],
                           "temperature": self.opts.temperature, "max_tokens": self.opts.max_tokens,
                           "stream": False}).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if os.environ.get(API_KEY_ENV):
            headers["Authorization"] = f"Bearer {os.environ[API_KEY_ENV]}"
        request = urllib.request.Request(self.opts.chat_url, data=body, headers=headers, method="POST")
        with self._lock:
            self.stats.requests += 1
            self.stats.in_flight += 1
            self.stats.max_in_flight = max(self.stats.max_in_flight, self.stats.in_flight)
        try:
            with self._opener.open(request, timeout=self.opts.timeout_s) as resp:
                raw = resp.read(MAX_ANSWER_BYTES + 1)
        except urllib.error.HTTPError as e:
            e.close()
            if e.code in _RETRY_STATUS:
                raise _Retry(f"http {e.code}", _retry_after(e.headers.get("Retry-After"))) from None
            raise _Fatal(f"answered HTTP {e.code} {e.reason}: check judge.endpoint and judge.model") from None
        except (TimeoutError, socket.timeout):
            raise _Retry("timeout") from None
        except urllib.error.URLError as e:
            if isinstance(e.reason, (TimeoutError, socket.timeout)):
                raise _Retry("timeout") from None
            why = getattr(e.reason, "strerror", None) or str(e.reason)
            raise _Fatal(f"is unreachable ({why}): start the server or fix judge.endpoint") from None
        except (ConnectionError, OSError) as e:
            raise _Retry(f"connection ({type(e).__name__})") from None
        finally:
            with self._lock:
                self.stats.in_flight -= 1
        if len(raw) > MAX_ANSWER_BYTES:
            raise _Retry("oversized answer")
        try:
            doc = json.loads(raw)
            return doc["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise _Fatal("did not answer chat-completions JSON (choices[0].message.content): is it an "
                         "OpenAI-compatible server (llama-server, vLLM, Ollama, TGI)?") from None

    def grade(self, prompt: str, first: bool = False) -> Outcome:
        """Ask until a well-formed grade or the retries are spent. ``first``: a fatal failure stops everything."""
        out = Outcome(None, 0)
        for attempt in range(self.opts.max_retries + 1):
            out.requests += 1
            try:
                content = self._post(prompt)
            except _Retry as e:
                self._count(out, e.kind)
                if attempt < self.opts.max_retries:
                    self.sleep(min(_MAX_WAIT_S, max(e.wait or 0.0, self.opts.backoff_s * 2 ** attempt)))
                continue
            except _Fatal as e:
                if first:
                    raise ConfigError(self.config, f"{self._where()} {e}") from None
                self._count(out, "refused")
                return out
            grade = parse_answer(content, self.grades)
            if grade is not None:
                out.grade = grade
                return out
            self._count(out, "malformed")
            if attempt < self.opts.max_retries:
                self.sleep(self.opts.backoff_s * 2 ** attempt)
        return out

    def _count(self, out: Outcome, kind: str) -> None:
        out.failures.append(kind)
        with self._lock:
            self.stats.failures[kind] = self.stats.failures.get(kind, 0) + 1

    def grade_all(self, prompts: Sequence[str], on_done: Callable[[int, Outcome], None]) -> None:
        """Grade every prompt: the first alone (it decides whether the endpoint works at all), then the rest with
        at most `max_concurrency` requests in flight. ``on_done(index, outcome)`` is called as each finishes."""
        if not prompts:
            return
        first = self.grade(prompts[0], first=True)
        if first.grade is None and not any(k.startswith(("http", "timeout", "connection")) for k in first.failures):
            raise ConfigError(self.config, f"{self._where()}: the first {first.requests} answer(s) were not "
                                           "'##final score: N' on the task's scale: check judge.model and "
                                           "judge.prompt")
        on_done(0, first)
        with ThreadPoolExecutor(max_workers=self.opts.max_concurrency) as pool:
            futures = {pool.submit(self.grade, p): i for i, p in enumerate(prompts[1:], 1)}
            for fut in as_completed(futures):
                on_done(futures[fut], fut.result())


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """The request goes to the configured endpoint only: a redirect is an HTTP error, never followed."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _retry_after(value: str | None) -> float | None:
    try:
        return min(_MAX_WAIT_S, max(0.0, float(value))) if value is not None else None
    except ValueError:
        return None
