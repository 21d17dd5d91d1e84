"""Issue 37's walk: building a config's candidates and their identities visits each room once, in order.

The walk is traced as benchmarks/bench_candidate_walk.py traces it (every first-party call under sys.setprofile,
rooms ranked in the import order tests/test_layout.py enforces); only the candidate walk is run here (nothing
is encoded). A return to a room the walk had left for a lower one fails, naming the move.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
from pathlib import Path

from runners.config import experiment_entries
from runners.config.benchmark import BenchmarkConfig
from runners.config.experiments import plan_experiments

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_candidate_walk", ROOT / "benchmarks" / "bench_candidate_walk.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_candidate_walk", module)
    spec.loader.exec_module(module)
    return module


def _import_rooms() -> None:
    """Import every module the walk may reach first: a class body run by a first import is a call the profiler
    sees, and the benchmark traces the walk after a cold and a warm run have imported them."""
    import runners

    for info in pkgutil.walk_packages(runners.__path__, "runners."):
        if info.name.startswith(("runners.config", "runners.results", "runners.search", "runners.execution")):
            try:
                importlib.import_module(info.name)
            except ImportError:  # an optional extra (ray, ...) not installed: the walk does not reach it
                pass


def test_the_candidate_walk_climbs_back_into_no_room(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    bench = _bench()
    _import_rooms()
    cfg = BenchmarkConfig.from_file(bench._config(tmp_path))
    from runners.execution.tasks import load_task

    tasks = [load_task(t, cfg) for t in cfg.tasks]
    figures = bench.walk_figures(bench.trace(bench._candidate_walk, cfg, tasks, cfg.keep_top_k, cfg.cache_path))
    assert figures["climbs"] == 0, figures["climb_moves"]
    assert figures["room_visits"] == figures["rooms"], figures["stay_sequence"]  # each room once
    # the measure can fail: a walk that goes back up into a room it had left is counted
    back = bench.walk_figures(["runners/execution/run.py", "runners/config/benchmark.py", "custom_tasks/config.py",
                               "runners/config/benchmark.py"])
    assert back["climbs"] == 1 and back["climb_moves"] == {"custom_tasks -> runners/config": 1}


def test_experiment_entries_are_validated_once(tmp_path: Path, monkeypatch) -> None:
    """Reading the file validates the entries (with line numbers); planning reuses what that made."""
    cfg = BenchmarkConfig.from_file(_bench()._config(tmp_path))
    calls = []
    real = experiment_entries._ADAPTER.validate_python
    monkeypatch.setattr(experiment_entries, "_ADAPTER", type("Counting", (), {
        "validate_python": staticmethod(lambda raw: calls.append(raw) or real(raw))})())
    planned = plan_experiments(cfg)
    assert planned and calls == []
    changed = cfg.model_copy(update={"experiments": [{"type": "hybrid", "dense": "acme/m", "fusion": "rrf", "k": [7]}]})
    assert [p.name for p in plan_experiments(changed)] == ["private-mteb/m+bm25-rrf7"] and len(calls) == 1
    assert plan_experiments(changed) and len(calls) == 1  # once per process for the same entries


def test_a_bad_entry_built_in_code_is_still_one_config_error(tmp_path: Path) -> None:
    import pytest
    from custom_tasks.errors import ConfigError

    cfg = BenchmarkConfig(tasks=["x"], models=[{"name": "bm25"}], experiments=[{"type": "hybrid", "dense": "bm25"}])
    with pytest.raises(ConfigError, match="must be a dense model"):
        plan_experiments(cfg)
