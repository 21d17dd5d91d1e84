"""Run by tests/test_ray.py INSIDE a network namespace with NO Ray cluster: every address form fails in time.

Not collected on its own (no `test_` prefix): it needs RAY_NS_TEST, set by the outer test. Each case runs
`private-mteb run` in a fresh process (a Ray connection attempt left hanging must not outlive it) with
`encode.connect_timeout: 3`: it must exit 2 within seconds with one line naming the address, where Ray alone
retries `host:port` for ~14 minutes and `ray://` for ~40 s.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from tests.conftest import REPO, TINY_YAML, write_benchmark

pytestmark = pytest.mark.skipif(not os.environ.get("RAY_NS_TEST"), reason="needs the namespace tests/test_ray.py makes")
SYN = {"name": "synthetic/hash", "factory": "runners.execution.encoding.synthetic:make_encoder", "revision": "1",
       "factory_kwargs": {"dim": 16}}
TIMEOUT = 3


@pytest.fixture(scope="module")
def silent_port():
    """A port that accepts TCP connections and never says anything (not a Ray head)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(server.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    yield server.getsockname()[1]
    server.close()


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(tmp_path, address: str, **env: str) -> tuple[subprocess.CompletedProcess[str], float]:
    cfg = write_benchmark(tmp_path, [str(TINY_YAML)], models=[SYN],
                          encode={"engine": "ray", "address": address, "connect_timeout": TIMEOUT})
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "runners.cli", "run", "-c", str(cfg)], cwd=REPO, text=True,
                         capture_output=True, timeout=120, env={**os.environ, **env})
    return out, time.monotonic() - t0


def _one_line(out: subprocess.CompletedProcess[str], address: str) -> str:
    assert out.returncode == 2, out.stdout[-2000:] + out.stderr[-2000:]
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, out.stderr
    assert f"encode.address {address!r}" in lines[0] and "bench.yaml" in lines[0]
    assert "could not load" not in out.stdout + out.stderr
    return lines[0]


def _startup_seconds(tmp_path) -> float:
    """How long the same command takes to fail before connecting (a refused port): the baseline."""
    address = f"127.0.0.1:{_closed_port()}"
    out, seconds = _run(tmp_path / "base", address)
    assert "cannot reach" in _one_line(out, address)
    return seconds


@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_a_port_that_is_not_a_ray_head_fails_within_the_timeout(tmp_path, silent_port, scheme):
    (tmp_path / "base").mkdir()
    base = _startup_seconds(tmp_path)
    address = f"{scheme}127.0.0.1:{silent_port}"
    out, seconds = _run(tmp_path, address)
    line = _one_line(out, address)
    assert f"accepts connections but no Ray head answered within {TIMEOUT} s (encode.connect_timeout)" in line
    assert seconds < base + TIMEOUT + 15, (seconds, base)


def test_unreachable_host_and_auto_without_a_cluster(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    out, _ = _run(tmp_path / "a", "10.255.255.1:6379")  # only loopback here: no route to it
    assert "cannot reach 10.255.255.1:6379" in _one_line(out, "10.255.255.1:6379")
    empty = tmp_path / "raytmp"
    empty.mkdir()
    out, _ = _run(tmp_path / "b", "auto", RAY_TMPDIR=str(empty))
    line = _one_line(out, "auto")
    assert "no Ray cluster runs on this machine; set encode.address in the config" in line
    assert "--address" not in line and "RAY_ADDRESS" not in line
