"""A bounded, retrying client for an OpenAI-compatible chat-completions endpoint (the LLM judge).

The HTTP is remote/openai_http.py's, shared with the embedding endpoint (no proxy, no redirect: the request goes
to the configured endpoint and nowhere else; an answer over 1 MiB is not read; the key from
PRIVATE_MTEB_JUDGE_API_KEY only), a thread pool of `max_concurrency` workers.

One retry policy for every answer that did not bring a grade: a transport failure (timeout, a connection refused,
reset or dropped mid-body, a body shorter than its Content-Length), a 408/429/5xx, a body that is not JSON, JSON
without `choices[0].message.content`, and text that is not `##final score: N` on the scale are all asked again with
exponential backoff (a numeric Retry-After is honoured up to 30 s), at most `max_retries` times; then the pair is
unrateable and counted, never guessed. Only an answer asking again cannot change is not retried: an HTTP 4xx
(refused request, wrong path, a redirect).

The first pair is asked alone: an endpoint that is unreachable or refuses the request stops the command there with
one line, before the pool; so does one whose answers to that pair were, every time, not chat-completions JSON
(whatever the judge graded before: a server that answers an HTML page is no judge), or not in the format unless
the judge has graded pairs before (``check_format=False``: a re-run of the pairs left unrateable asks every one of
them). `stats.chat_answers` counts the answers that were chat-completions JSON: a run with none is no judgment. No error body is kept (a server may echo the prompt, i.e. the user's text);
the first few refused answers are kept in memory for `labels judge --show-refused`, never stored.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, TypeVar

from custom_tasks.errors import ConfigError

from ...config.judge import JudgeOptions
from ...config.judge_prompt import parse_answer
from ...execution.remote.openai_http import ClientStats as _HttpStats
from ...execution.remote.openai_http import Fatal as _Fatal
from ...execution.remote.openai_http import JsonPoster
from ...execution.remote.openai_http import Retry as _Retry
from ...execution.remote.openai_http import backoff

#: an API key for servers started with one (vLLM --api-key, llama-server --api-key); never read from a config file
API_KEY_ENV = "PRIVATE_MTEB_JUDGE_API_KEY"
#: a grade is a few bytes: an answer larger than this is not read into memory
MAX_ANSWER_BYTES = 1 << 20
#: a refused answer is kept (for --show-refused) up to this many characters
REFUSED_CHARS = 300
#: failure kinds of an answer that came back but was not a chat-completions answer, or not in the format
NOT_CHAT_JSON = ("not json", "no content")
MALFORMED = "malformed"


_Opts = TypeVar("_Opts")


def configured(opts: _Opts | None, section: str, config: Any) -> _Opts:
    """The config's ``section`` (`judge:`, `generator:`), or one line (exit 2) when it names none: nothing is sent to
    any model unless a config names one. Said the same way by the judge, the writer and their commands."""
    if opts is None:
        raise ConfigError(config, f"no `{section}:` in this config: nothing is sent to any model unless a config "
                                  f"names one, e.g. {section}: {{endpoint: http://127.0.0.1:8080/v1, model: NAME}}")
    return opts


@dataclass
class Outcome:
    """One prompt's result: its parsed answer (the judge's grade, the writer's question; None: none came), requests
    made, and the failure kinds met on the way."""

    grade: Any
    requests: int
    failures: list[str] = field(default_factory=list)


@dataclass
class Refused:
    """One answer that brought no grade: which prompt, why, and the start of what came back (never stored)."""

    index: int
    kind: str
    answer: str


@dataclass
class ClientStats(_HttpStats):
    refused: list[Refused] = field(default_factory=list)
    chat_answers: int = 0  # answers that were chat-completions JSON (with choices[0].message.content)


class ChatJudge:
    """Grades prompts through one endpoint; thread-safe counters of requests and failures.

    ``keep_refused``: how many refused answers (out-of-format text, a body that is not chat-completions JSON) to
    keep in ``stats.refused`` for the user to read; 0 keeps none. A subclass reads another answer (``_parse``) for
    another config section (``SECTION``: what its one-line errors name): writer_client.py."""

    SECTION = "judge"
    #: what a well-formed answer is, for the one line that stops a command whose first answers never were
    FORMAT = "'##final score: N' on the task's scale"

    def __init__(self, opts: JudgeOptions, grades: Mapping[int, str], config: Any = None,
                 sleep: Callable[[float], None] = time.sleep, keep_refused: int = 0) -> None:
        self.opts, self.grades, self.config, self.sleep = opts, dict(grades), config, sleep
        self.keep_refused = keep_refused
        self.stats = ClientStats()
        self.http = JsonPoster(getattr(opts, "api_key_env", None) or API_KEY_ENV, MAX_ANSWER_BYTES,
                               fix=f"{self.SECTION}.endpoint", check=f"{self.SECTION}.endpoint and {self.SECTION}.model",
                               stats=self.stats)
        self._lock = self.http.lock

    def _where(self) -> str:
        return f"{self.SECTION} endpoint {self.opts.chat_url}"

    def _post(self, prompt: str) -> bytes:
        """The answer's body, whole; every transport failure is a `_Retry` (or `_Fatal` for a 4xx)."""
        body = {"model": self.opts.model, "messages": [{"role": "user", "content": prompt}],
                "temperature": self.opts.temperature, "max_tokens": self.opts.max_tokens, "stream": False}
        return self.http.post_raw(self.opts.chat_url, body, self.opts.timeout_s)

    def _parse(self, content: str) -> Any:
        """The answer's value (here: a grade on the scale), None when it is out of format."""
        return parse_answer(content, self.grades)

    def _ask(self, prompt: str) -> Any:
        """One request: the parsed answer, or a `_Retry` saying why there is none."""
        raw = self._post(prompt)
        text = raw.decode("utf-8", errors="replace")
        try:
            doc = json.loads(raw)
        except ValueError:
            raise _Retry("not json", answer=text) from None
        try:
            content = doc["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            content = None
        if not isinstance(content, str):
            raise _Retry("no content", answer=text)
        with self._lock:
            self.stats.chat_answers += 1
        grade = self._parse(content)
        if grade is None:
            raise _Retry(MALFORMED, answer=content)
        return grade

    def grade(self, prompt: str, first: bool = False, index: int = 0) -> Outcome:
        """Ask until a well-formed grade or the retries are spent. ``first``: an unreachable endpoint or a refused
        request stops everything (ConfigError) instead of making the pair unrateable."""
        out = Outcome(None, 0)
        for attempt in range(self.opts.max_retries + 1):
            out.requests += 1
            try:
                out.grade = self._ask(prompt)
                return out
            except _Retry as e:
                if first and e.stop:
                    raise ConfigError(self.config, f"{self._where()} {e.stop}") from None
                self._count(out, e.kind, index, e.answer)
                if attempt < self.opts.max_retries:
                    self.sleep(backoff(attempt, self.opts.backoff_s, e.wait))
            except _Fatal as e:
                if first:
                    raise ConfigError(self.config, f"{self._where()} {e}") from None
                self._count(out, e.kind, index, None)
                return out
        return out

    def _count(self, out: Outcome, kind: str, index: int, answer: str | None) -> None:
        out.failures.append(kind)
        with self._lock:
            self.stats.failures[kind] = self.stats.failures.get(kind, 0) + 1
            if answer is not None and len(self.stats.refused) < self.keep_refused:
                self.stats.refused.append(Refused(index, kind, answer[:REFUSED_CHARS]))

    def grade_all(self, prompts: Sequence[str], on_done: Callable[[int, Outcome], None],
                  check_format: bool = True) -> None:
        """Grade every prompt: the first alone (it decides whether the endpoint works at all), then the rest with
        at most `max_concurrency` requests in flight. ``on_done(index, outcome)`` is called as each finishes.

        ``check_format``: stop when every answer to the first prompt was not chat-completions JSON, or not in the
        format (a server or model that cannot do this); False when the judge has graded pairs before, so that a
        pair it cannot grade is that pair's problem and the others are still asked."""
        if not prompts:
            return
        first = self.grade(prompts[0], first=True)
        if first.grade is None and first.failures:
            self._check_first(first, check_format)
        on_done(0, first)
        with ThreadPoolExecutor(max_workers=self.opts.max_concurrency) as pool:
            futures = {pool.submit(self.grade, p, False, i): i for i, p in enumerate(prompts[1:], 1)}
            for fut in as_completed(futures):
                on_done(futures[fut], fut.result())

    def _check_first(self, first: Outcome, check_format: bool = True) -> None:
        """Stop when the first pair's answers were all of a kind no other pair will fare better with: never
        chat-completions JSON (always), or never in the format (`check_format`: a judge that never graded)."""
        if all(k in NOT_CHAT_JSON for k in first.failures):
            raise ConfigError(self.config, self.not_chat_json(first.requests))
        see = " (see them: --show-refused 3)" if not self.keep_refused else ""
        if check_format and all(k in NOT_CHAT_JSON or k == MALFORMED for k in first.failures):
            raise ConfigError(self.config, f"{self._where()}: the first {first.requests} answer(s) were not "
                                           f"{self.FORMAT}{see}: check {self.SECTION}.model and "
                                           f"{self.SECTION}.prompt")

    def not_chat_json(self, requests: int) -> str:
        """The one line of an endpoint none of whose `requests` answers was chat-completions JSON."""
        see = " (see them: --show-refused 3)" if not self.keep_refused else ""
        return (f"{self._where()} did not answer chat-completions JSON (choices[0].message.content) {requests} "
                f"time(s){see}: is it an OpenAI-compatible server (llama-server, vLLM, Ollama, TGI)?")
