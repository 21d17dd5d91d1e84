"""A latency figure belongs to the setting it timed (issue 28): a record is keyed by the candidate's run
fingerprint, and a changed setting's old milliseconds are withheld as stale, never shown as current."""

from __future__ import annotations

import json

import yaml
from typer.testing import CliRunner

from conftest import TINY_YAML, write_benchmark
from runners.analysis.cost.cost import STALE, load_latency
from runners.cli import app
from runners.config.benchmark import BenchmarkConfig
from runners.execution.candidates.experiment_candidates import clear_shared
from runners.execution.measure.latency import LatencyOptions, measure
from runners.execution.run import candidates_for, run_benchmark
from runners.execution.tasks import load_task
from runners.results.store import find_run, read_identity

runner = CliRunner()
FAST = LatencyOptions(queries=4, repeats=1, warmup=1, encode_sample=4)


def _sleepy(name: str, ms: float) -> dict:
    return {"name": name, "kind": "retriever", "factory": "tests.sleepy:make_sleepy",
            "factory_kwargs": {"sleep_ms": ms}, "label": name.split("/")[1]}


def _stats(path) -> dict:
    out = runner.invoke(app, ["stats", "-c", str(path), "--resamples", "200", "-m", "ndcg_at_10", "--format", "json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


def test_a_changed_setting_never_shows_the_old_p50(tmp_path) -> None:
    clear_shared()
    path = write_benchmark(tmp_path, [str(TINY_YAML)], models=[_sleepy("toy/fast", 5), _sleepy("toy/steady", 20)])
    cfg = BenchmarkConfig.from_file(path)
    assert all(r.status == "ran" for r in run_benchmark(cfg, show_progress=False))
    tasks = [load_task(t) for t in cfg.tasks]
    measure(cfg, candidates_for(cfg), tasks, FAST)
    rec = load_latency(cfg.results_path, "toy/fast", "TinyKBRetrieval")
    folder = find_run(cfg.results_path, "toy/fast", "TinyKBRetrieval")
    assert rec["fingerprint"] == read_identity(folder)["fingerprint"] and "stale" not in rec
    before = _stats(path)
    shown = {r["candidate"]: r for r in before["tasks"][0]["intervals"] if r["subset"] == "all"}
    old = shown["fast"]["p50_ms"]
    assert old is not None and old < shown["steady"]["p50_ms"]  # 5 ms vs 20 ms, shown as current

    doc = yaml.safe_load(path.read_text())  # the setting changes: 5 ms -> 40 ms; `run` re-runs it
    doc["models"][0]["factory_kwargs"]["sleep_ms"] = 40
    path.write_text(yaml.safe_dump(doc))
    clear_shared()
    cfg = BenchmarkConfig.from_file(path)
    ran = {r.label: r.status for r in run_benchmark(cfg, show_progress=False)}
    assert ran == {"fast": "ran", "steady": "skipped"}, ran

    stale = load_latency(cfg.results_path, "toy/fast", "TinyKBRetrieval")
    assert stale["stale"] == STALE
    after = _stats(path)
    rows = {r["candidate"]: r for r in after["tasks"][0]["intervals"] if r["subset"] == "all"}
    assert rows["fast"]["p50_ms"] is None and rows["steady"]["p50_ms"] is not None
    decision = after["decisions"][0]
    assert decision["candidate"] != "fast" and decision.get("p50_ms") != old  # never named from the old figure
    assert f"{old:.2f}" not in decision["sentence"] and "fast (p50" not in decision["sentence"]
    assert any(line.startswith("fast: stale") for line in decision["not_timed"]), decision
    text = runner.invoke(app, ["stats", "-c", str(path), "--resamples", "200", "-m", "ndcg_at_10"]).output
    assert "fast: stale: timed for another setting" in " ".join(text.split())

    measure(cfg, candidates_for(cfg), tasks, FAST)  # measured again: current, and the new setting's figure
    again = load_latency(cfg.results_path, "toy/fast", "TinyKBRetrieval")
    assert "stale" not in again and again["raw_latency_ms"]["p50"] >= 40.0  # as timed: never under the sleep
    assert again["latency_ms"]["p50"] >= 40.0 - again["pass"]["overhead_ms"]["subtracted"]  # less the pass's own
