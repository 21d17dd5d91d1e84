"""A candidate that fails to load or crashes is reported and skipped; the others still run; exit 2."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from runners.cli import app
from runners.execution.encoding.synthetic import make_encoder
from tests.conftest import TINY_YAML, write_benchmark

runner = CliRunner()
SYN = {"name": "synthetic/hash", "factory": "runners.execution.encoding.synthetic:make_encoder", "revision": "1",
       "factory_kwargs": {"dim": 32}}
BROKEN = {"name": "acme/broken", "factory": "tests.test_run_robust:broken_factory", "revision": "1"}
CRASHY = {"name": "acme/crashy", "factory": "tests.test_run_robust:crashy_factory", "revision": "1"}


def broken_factory(**kwargs):
    raise RuntimeError("weights not found\nsecond line")


def crashy_factory(**kwargs):
    enc = make_encoder(dim=16)

    def encode(*args, **kw):
        raise ValueError("CUDA out of memory (simulated)")

    enc.encode = encode
    return enc


def test_failing_candidates_are_skipped_and_exit_2(tmp_path):
    from runners.config.benchmark import BenchmarkConfig
    from runners.execution.run import run_benchmark

    bench = write_benchmark(tmp_path, [str(TINY_YAML)], models=[BROKEN, CRASHY, {"name": "bm25"}, SYN])
    records = run_benchmark(BenchmarkConfig.from_file(bench), show_progress=False)
    by = {r.candidate: r for r in records}
    assert by["acme/broken"].status == "failed" and "weights not found" in by["acme/broken"].reason
    assert "\n" not in by["acme/broken"].reason and "load" in by["acme/broken"].reason
    assert by["acme/crashy"].status == "failed" and "out of memory" in by["acme/crashy"].reason
    assert by["mteb/baseline-bm25s"].status == "ran" and by["synthetic/hash"].status == "ran"

    result = runner.invoke(app, ["run", "-c", str(bench), "--force"])
    out = result.output
    assert result.exit_code == 2, out
    assert "Traceback" not in out
    assert "failed: broken on TinyKBRetrieval" in out and "weights not found" in out
    assert "failed: crashy on TinyKBRetrieval" in out
    assert "done: BM25 on TinyKBRetrieval (encoded" in out
    assert "2 of 4 run(s) failed" in out


def test_run_prints_encoded_and_reused_counts(tmp_path):
    bench = write_benchmark(tmp_path, [str(TINY_YAML)], models=[SYN])
    result = runner.invoke(app, ["run", "-c", str(bench)])
    assert result.exit_code == 0, result.output
    assert "done: hash on TinyKBRetrieval (encoded 22, reused 0)" in result.output
    again = runner.invoke(app, ["run", "-c", str(bench), "--force"])
    assert again.exit_code == 0, again.output
    assert "done: hash on TinyKBRetrieval (encoded 0, reused 22)" in again.output


def test_run_json_is_one_document(tmp_path):
    bench = write_benchmark(tmp_path, [str(TINY_YAML)], models=[BROKEN, {"name": "bm25"}])
    result = runner.invoke(app, ["run", "-c", str(bench), "--format", "json"])
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    status = {r["candidate"]: r["status"] for r in doc["records"]}
    assert status == {"acme/broken": "failed", "mteb/baseline-bm25s": "ran"}
    assert doc["passed"] is False and doc["failed"] == 1


def test_numpy_short_write_is_a_disk_full_fault_that_stops_the_run():
    """numpy reports a full disk as '<n> requested and <m> written' without an errno: still the environment's fault."""
    from runners.execution.run import _fatal
    from runners.results.store import environment_fault

    for short in (OSError("94848 requested and 15328 written"),
                  OSError("Not enough free space to write 30720000 bytes after offset 128")):  # np.save, large
        assert _fatal(short) and "disk is full" in str(environment_fault(short, "/r/cache"))
    assert not _fatal(OSError("something else")) and environment_fault(OSError("x written"), "/r") is None
