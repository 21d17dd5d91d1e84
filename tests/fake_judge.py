"""A fake OpenAI-compatible chat-completions server on 127.0.0.1: a deterministic stand-in for an LLM judge.

It reads the query and the passage back out of the prompt (the `Query: ... / Passage: ...` lines of the UMBRELA
prompt) and answers `##final score: N` by a rule. Behaviours a test can inject per pair: malformed answers, HTTP
429s, slow answers, garbage (not chat-completions JSON), and `faults`: per attempt, a body cut short of its
Content-Length, a connection dropped mid-body, an HTML page, JSON without `choices`, or a connection closed before
any answer. It counts requests and the most in flight at once.

With ``reply`` set it is a question writer instead (`questions generate`): the answer to each prompt is
``reply(prompt, attempt)``, so a test plants copied, duplicate or out-of-format answers per passage.

Not a model: the README's agreement demo uses it, labelled as a stand-in for the user's own server
(`python tests/fake_judge.py --port 8099` serves the word-overlap rule below).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_PAIR = re.compile(r"Query: (.*?)\nPassage: (.*?)\n\nSplit this problem", re.DOTALL)
_WORD = re.compile(r"\w+")
_CUT = "X-Fake-Cut"  # internal: how the handler breaks this answer off

Rule = Callable[[str, str], int]
Count = Callable[[str, str], int]


def overlap_rule(query: str, passage: str) -> int:
    """2 when most of the question's longer words are in the passage, 1 when some are, else 0; a stable tenth of
    the pairs answered one grade off (the injected disagreement)."""
    words = {w for w in _WORD.findall(query.lower()) if len(w) > 3}
    seen = set(_WORD.findall(passage.lower()))
    share = len(words & seen) / len(words) if words else 0.0
    grade = 2 if share >= 0.5 else 1 if share >= 0.25 else 0
    if int(hashlib.sha256((query + passage).encode()).hexdigest(), 16) % 10 == 0:
        grade = 1 if grade != 1 else 0
    return grade


@dataclass
class FakeJudge:
    """The server's behaviour and what it saw; ``start()`` serves it on a free loopback port."""

    rule: Rule = overlap_rule
    malformed: Count = lambda q, p: 0  # malformed answers to give this pair before a good one
    rate_limited: Count = lambda q, p: 0  # 429s to give this pair first
    slow_s: Callable[[str, str], float] = lambda q, p: 0.0  # delay of this pair's first answer
    delay_s: float = 0.0  # every answer waits this long (to see concurrency)
    garbage: bool = False  # answer HTML instead of JSON
    malformed_text: str = "The passage seems relevant, I would say 2."  # what a malformed answer says
    #: this pair's faults, one per attempt before the normal answers: "cut" (a 200 whose body stops half-way
    #: short of its Content-Length, connection closed), "drop" (no Content-Length, half the body, connection
    #: closed), "html" (a 200 HTML page), "nochoices" (200 JSON without `choices`), "reset" (closed, no answer),
    #: "malformed" (an out-of-format answer)
    faults: Callable[[str, str], tuple[str, ...]] = lambda q, p: ()
    redirect_to: str | None = None  # answer 302 to this URL
    #: a writer, not a judge: the answer's text for (prompt, attempt at this prompt, 0-based)
    reply: Callable[[str, int], str] | None = None
    gets: int = 0  # GET requests (a followed redirect arrives as one)
    requests: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    attempts: dict[tuple[str, str], int] = field(default_factory=dict)
    bodies: list[dict] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, body: dict) -> tuple[int, bytes, dict[str, str]]:
        prompt = body["messages"][-1]["content"]
        m = _PAIR.search(prompt)
        query, passage = (m.group(1), m.group(2)) if m else ("", prompt if self.reply else "")
        with self._lock:
            self.requests += 1
            self.bodies.append(body)
            n = self.attempts.get((query, passage), 0)
            self.attempts[(query, passage)] = n + 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.redirect_to:
                return 302, b"", {"Location": self.redirect_to}
            if self.garbage:
                return 200, b"<html>It works!</html>", {"Content-Type": "text/html"}
            if self.reply is not None:
                return self._chat(body, self.reply(prompt, n))
            time.sleep(self.delay_s + (self.slow_s(query, passage) if n == 0 else 0.0))
            faults = self.faults(query, passage)
            if n < len(faults):
                return self._fault(faults[n], body)
            n -= len(faults)
            limited = self.rate_limited(query, passage)
            if n < limited:
                return 429, b'{"error": "rate limited"}', {"Retry-After": "0"}
            if n - limited < self.malformed(query, passage):
                return self._chat(body, self.malformed_text)
            return self._chat(body, f"##final score: {self.rule(query, passage)}")
        finally:
            with self._lock:
                self.in_flight -= 1

    @staticmethod
    def _chat(body: dict, content: str) -> tuple[int, bytes, dict[str, str]]:
        doc = {"id": "fake", "object": "chat.completion", "model": body.get("model"),
               "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}]}
        return 200, json.dumps(doc).encode(), {"Content-Type": "application/json"}

    def _fault(self, kind: str, body: dict) -> tuple[int, bytes, dict[str, str]]:
        if kind == "malformed":
            return self._chat(body, self.malformed_text)
        if kind == "html":
            return 200, b"<html>It works!</html>", {"Content-Type": "text/html"}
        if kind == "nochoices":
            return 200, b'{"object": "chat.completion", "result": "2"}', {"Content-Type": "application/json"}
        _, data, headers = self._chat(body, "##final score: 2")
        return 200, data, {**headers, _CUT: kind}  # "cut", "drop", "reset": done by the handler

    def start(self, port: int = 0) -> tuple[ThreadingHTTPServer, str]:
        """Serve on 127.0.0.1 (default: a free port) in a daemon thread; returns the server and its /v1 URL."""
        judge = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/") != "/v1/chat/completions":
                    status, data, headers = 404, b'{"error": "not found"}', {}
                else:
                    status, data, headers = judge.answer(body)
                cut = headers.pop(_CUT, None)
                try:
                    if cut == "reset":
                        self._close()
                        return
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    if cut != "drop":
                        self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data[:len(data) // 2] if cut else data)
                    if cut:
                        self._close()
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and left

            def _close(self) -> None:
                """Close the connection now, mid-answer: the client sees what was sent, then the end."""
                self.close_connection = True
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                with judge._lock:
                    judge.gets += 1
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


def rule_writer(prompt: str, attempt: int = 0) -> str:
    """The stand-in question writer of `python tests/fake_judge.py --writer` (docs/generate.md; not a model): from
    the prompt's `Passage: ...`, a fifth of the passages (by a hash of the text) answered with the passage's first
    ten words and a question mark (the copied wording LLM generators are known for), a tenth with one fixed
    question (near-duplicates), the rest "what does the knowledge base say about A and B" with the passage's two
    longest words."""
    passage = prompt.rsplit("Passage:", 1)[-1].strip()
    words = _WORD.findall(passage)
    h = int(hashlib.sha256(passage.encode()).hexdigest(), 16) % 10
    if h < 2:
        return " ".join(words[:10]) + "?"
    if h == 2:
        return "Where can I find the policy on this?"
    longest = sorted(dict.fromkeys(w.lower() for w in words if len(w) > 3), key=lambda w: (-len(w), w))[:2]
    return f"what does the knowledge base say about {' and '.join(longest) or 'this'}"


def main() -> None:
    parser = argparse.ArgumentParser(description="a stand-in LLM judge on 127.0.0.1 (word-overlap rule)")
    parser.add_argument("--port", type=int, default=8099)
    parser.add_argument("--answer", help="answer every pair with this text instead of a grade (out of format: what "
                                         "a small model that cannot follow the format does; docs/llm-judge.md)")
    parser.add_argument("--writer", action="store_true", help="write questions (`questions generate`) by "
                                                               "rule_writer's rule instead of grading")
    args = parser.parse_args()
    judge = FakeJudge() if args.answer is None else FakeJudge(malformed=lambda q, p: 1 << 30, malformed_text=args.answer)
    if args.writer:
        judge = FakeJudge(reply=rule_writer)
    server, url = judge.start(args.port)
    print(f"fake {'writer' if args.writer else 'judge'} (a stand-in, not a model) on {url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.shutdown()


if __name__ == "__main__":
    main()
