"""Ray messages and connection bounds that need no cluster (runners/execution/distributed/ray_connect.py); Ray never starts here.

The same on a real cluster, inside a network namespace: tests/test_ray.py (slow).
"""

from __future__ import annotations

import socket
import sys
import time

import pytest

from custom_tasks.errors import ConfigError
from runners.execution.distributed import ray_connect
from runners.results.store import EnvironmentFault
from tests.conftest import TINY_YAML, write_benchmark

LOADS: list[str] = []


def counting_encoder():  # a `factory:` that records that a model was loaded
    from runners.execution.encoding.synthetic import SyntheticEncoder

    LOADS.append("loaded")
    return SyntheticEncoder(dim=8)


def test_ray_not_installed_is_said_before_any_model_loads(tmp_path, monkeypatch):
    from runners.config.benchmark import BenchmarkConfig
    from runners.execution.run import run_benchmark

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    cfg = BenchmarkConfig.from_file(write_benchmark(tmp_path, [str(TINY_YAML)], models=[
        {"name": "test/counting", "revision": "1", "factory": "tests.test_ray_connect:counting_encoder"}],
        encode={"engine": "ray", "address": "127.0.0.1:1"}))
    LOADS.clear()
    with pytest.raises(ConfigError) as err:
        run_benchmark(cfg, show_progress=False)
    assert LOADS == []
    line = str(err.value)
    assert line.startswith(str(cfg.path)) and "not installed" in line and "pip install 'private-mteb[ray]'" in line
    assert "<input>" not in line and "\n" not in line


def test_address_forms_are_parsed_or_rejected_in_one_line():
    assert ray_connect._host_port("10.0.0.5:6379", "x", None) == ("10.0.0.5", 6379)
    assert ray_connect._host_port("ray://head.example:10001", "x", None) == ("head.example", 10001)
    assert ray_connect._host_port("[::1]:6379", "x", None) == ("::1", 6379)
    with pytest.raises(ConfigError, match="encode.address 'headnode' is not host:port, ray://host:port or auto"):
        ray_connect._host_port("headnode", "headnode", "b.yaml")


def test_auto_without_a_cluster_advises_encode_address(monkeypatch):
    pytest.importorskip("ray", reason="ray is not installed (pip install 'private-mteb[ray]')")
    import ray._private.services as services

    def none_running(addr):
        raise ConnectionError("Could not find any running Ray instance. Please specify ... `--address` flag")

    monkeypatch.setattr(services, "canonicalize_bootstrap_address_or_die", none_running)
    with pytest.raises(EnvironmentFault) as err:
        ray_connect._resolve("auto", "configs/benchmarks/b.yaml")
    line = str(err.value)
    assert line.startswith("configs/benchmarks/b.yaml: encode.address 'auto': no Ray cluster")
    assert "set encode.address in the config" in line and "--address" not in line and "RAY_ADDRESS" not in line


def test_refused_port_fails_at_once_naming_the_address():
    with socket.socket() as s:  # a free port, then closed: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.monotonic()
    with pytest.raises(EnvironmentFault, match=rf"b.yaml: encode.address '127.0.0.1:{port}': cannot reach "):
        ray_connect._probe("127.0.0.1", port, time.monotonic() + 5, f"127.0.0.1:{port}", 5, "b.yaml")
    assert time.monotonic() - t0 < 2


def test_a_host_that_never_answers_fails_within_the_timeout():
    """A listener whose accept queue is full drops new SYNs, as a firewalled host does: the connect times out."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    port = server.getsockname()[1]
    fillers = []
    try:
        for _ in range(4):  # fill the accept queue (never accepted)
            c = socket.socket()
            c.setblocking(False)
            c.connect_ex(("127.0.0.1", port))
            fillers.append(c)
        time.sleep(0.2)
        t0 = time.monotonic()
        with pytest.raises(EnvironmentFault, match=r"no answer from 127.0.0.1:\d+ within 1.5 s \(encode.connect_"):
            ray_connect._probe("127.0.0.1", port, time.monotonic() + 1.5, f"ray://127.0.0.1:{port}", 1.5, None)
        assert 1.3 < time.monotonic() - t0 < 3
    finally:
        for c in fillers:
            c.close()
        server.close()


class _SlowRay:
    """A stand-in for `ray` whose init hangs the way Ray's retries do."""

    def __init__(self, seconds: float, error: BaseException | None = None) -> None:
        self.seconds, self.error = seconds, error

    def is_initialized(self) -> bool:
        return False

    def init(self, **kwargs) -> None:
        time.sleep(self.seconds)
        if self.error:
            raise self.error


def test_ray_init_is_bounded_by_what_is_left_of_the_timeout():
    t0 = time.monotonic()
    with pytest.raises(EnvironmentFault, match=r"'10.1.2.3:6379': the port answers, but Ray did not connect within 1 s"):
        ray_connect._init_within(_SlowRay(30), "10.1.2.3:6379", time.monotonic() + 1, "10.1.2.3:6379", 1, None)
    assert time.monotonic() - t0 < 2
    with pytest.raises(EnvironmentFault, match=r"'ray://h:1': Ray could not connect: version mismatch$"):
        ray_connect._init_within(_SlowRay(0, RuntimeError("version mismatch\ndetails")), "ray://h:1",
                                 time.monotonic() + 5, "ray://h:1", 5, None)


def test_connect_timeout_is_a_positive_config_field(tmp_path):
    from runners.config.benchmark import BenchmarkConfig

    from runners.config.benchmark import EncodeOptions

    assert EncodeOptions().connect_timeout == 30
    with pytest.raises(Exception, match="connect_timeout"):
        BenchmarkConfig.from_file(write_benchmark(tmp_path, [str(TINY_YAML)], encode={"connect_timeout": 0}))


def _run_cli(tmp_path, monkeypatch, address):
    from typer.testing import CliRunner

    from runners.cli import app

    monkeypatch.chdir(tmp_path)
    path = write_benchmark(tmp_path, [str(TINY_YAML)], models=[
        {"name": "test/counting", "revision": "1", "factory": "tests.test_ray_connect:counting_encoder"}],
        encode={"engine": "ray", "address": address, "connect_timeout": 5})
    LOADS.clear()
    return CliRunner().invoke(app, ["run", "-c", str(path)], terminal_width=400)


def test_run_without_ray_prints_its_error_alone(tmp_path, monkeypatch):
    """Issue 36: the progress line and the lint line came before the one-line error (three lines for one)."""
    monkeypatch.setitem(sys.modules, "ray", None)
    out = _run_cli(tmp_path, monkeypatch, "127.0.0.1:1")
    assert out.exit_code == 2, out.output
    lines = [line for line in out.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "not installed" in lines[0], out.output
    assert LOADS == []


def test_run_with_an_unreachable_head_prints_its_error_alone(tmp_path, monkeypatch):
    pytest.importorskip("ray", reason="ray is not installed (pip install 'private-mteb[ray]')")
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = _run_cli(tmp_path, monkeypatch, f"127.0.0.1:{port}")
    assert out.exit_code == 2, out.output
    lines = [line for line in out.output.splitlines() if line.strip()]
    assert len(lines) == 1 and f"encode.address '127.0.0.1:{port}': cannot reach" in lines[0], out.output
    assert LOADS == []
