"""A fake OpenAI-compatible `/v1/embeddings` server on 127.0.0.1 for the endpoint client's logic (tests only).

Not a model: a text's vector is a fixed pseudo-random function of (seed, text), so a changed `seed` is "another
model behind the same URL". Behaviours a test can inject: HTTP 429 / 500 answers before a good one (per request
count), a delay per request (to see concurrency), garbage (not JSON), a required API key, a maximum input
length (`max_words`: longer texts truncated, as a sentence-transformers server does at its max_seq_length, or
`refuse_words`: refused with HTTP 413, as TEI does), every request failing after the first N (`fail_after`). It
records each request's batch size, the other fields of its body (`fields`), the Authorization headers seen and the
most requests in flight at once. The real-server
test (tests/test_endpoint_server.py) runs Infinity instead.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np


def fake_vector(seed: int, text: str, dim: int = 16) -> np.ndarray:
    """The fake model's vector of a text (unit length)."""
    rng = np.random.default_rng(int(hashlib.sha256(f"{seed}|{text}".encode()).hexdigest()[:12], 16))
    v = rng.normal(size=dim)
    return v / np.linalg.norm(v)


@dataclass
class FakeEmbeddings:
    seed: int = 0
    model: str = "fake-embed-1"
    dim: int = 16
    fail_first: int = 0  # the first N requests answer `fail_status`
    fail_status: int = 429
    retry_after: str | None = "0"
    delay_s: float = 0.0
    garbage: bool = False
    api_key: str | None = None  # when set, requests without `Authorization: Bearer <key>` get 401
    max_words: int | None = None  # texts cut to their first N words before they are embedded
    refuse_words: int | None = None  # a text of more than N words: HTTP 413
    fail_after: int | None = None  # requests after the first N answer `fail_status`
    fields: list[dict] = field(default_factory=list)
    requests: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    batch_sizes: list[int] = field(default_factory=list)
    auth_seen: list[str | None] = field(default_factory=list)
    inputs: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, body: dict, auth: str | None) -> tuple[int, bytes, dict[str, str]]:
        with self._lock:
            self.requests += 1
            n = self.requests
            self.auth_seen.append(auth)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            time.sleep(self.delay_s)
            if self.api_key is not None and auth != f"Bearer {self.api_key}":
                return 401, b'{"error": "unauthorized"}', {}
            if n <= self.fail_first or (self.fail_after is not None and n > self.fail_after):
                return self.fail_status, b'{"error": "busy"}', ({"Retry-After": self.retry_after}
                                                                 if self.retry_after is not None else {})
            if self.garbage:
                return 200, b"<html>It works!</html>", {"Content-Type": "text/html"}
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            if self.refuse_words is not None and any(len(t.split()) > self.refuse_words for t in texts):
                return 413, b'{"error": "input too long"}', {}
            with self._lock:
                self.batch_sizes.append(len(texts))
                self.inputs += texts
                self.fields.append({k: v for k, v in body.items() if k != "input"})
            if self.max_words is not None:
                texts = [" ".join(t.split()[:self.max_words]) for t in texts]
            data = [{"object": "embedding", "index": i, "embedding": fake_vector(self.seed, t, self.dim).tolist()}
                    for i, t in enumerate(texts)]
            doc = {"object": "list", "model": self.model, "data": data[::-1],  # out of order: `index` decides
                   "usage": {"prompt_tokens": 0, "total_tokens": 0}}
            return 200, json.dumps(doc).encode(), {"Content-Type": "application/json"}
        finally:
            with self._lock:
                self.in_flight -= 1

    def start(self, port: int = 0) -> tuple[ThreadingHTTPServer, str]:
        """Serve on 127.0.0.1 (default: a free port) in a daemon thread; returns the server and its /v1 URL."""
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path.rstrip("/") != "/v1/embeddings":
                    status, data, headers = 404, b'{"error": "not found"}', {}
                else:
                    status, data, headers = fake.answer(body, self.headers.get("Authorization"))
                try:
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: object) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server, f"http://127.0.0.1:{server.server_address[1]}/v1"
