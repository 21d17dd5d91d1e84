"""SciFact, registered by a YAML file alone, reproduces the public MTEB figures (slow: minutes)."""

from __future__ import annotations

import json

import mteb
import pytest

from runners.config.benchmark import BenchmarkConfig
from runners.execution.run import run_benchmark
from runners.results.store import load_per_query, task_result_path
from tests.conftest import MINILM, REPO, SHARED, write_benchmark

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (SHARED / "datasets" / "scifact").is_dir(), reason="../shared is absent")]

SCIFACT_YAML = REPO / "tests" / "configs" / "scifact.yaml"
REVISION = "8b3219a92973c328a8e22fadcfa821b5dc75636a"
# the published figures (../shared/README.md); also read from the public JSON below
PUBLIC = {"ndcg_at_10": 0.64508, "mrr_at_10": 0.60472, "map_at_10": 0.59593, "recall_at_100": 0.92500}


@pytest.fixture(scope="module")
def scifact_run(tmp_path_factory):
    """One real evaluation (runner -> mteb.evaluate) shared by the tests of this module."""
    tmp = tmp_path_factory.mktemp("scifact")
    cfg = BenchmarkConfig.from_file(write_benchmark(tmp, [str(SCIFACT_YAML)], models=[{"name": MINILM}],
                                                    encode={"batch_size": 32}))
    records = run_benchmark(cfg, show_progress=False)
    return tmp / "results", records[0]


def _public_scores() -> dict:
    folder = SHARED / "public-results" / "results" / "sentence-transformers__all-MiniLM-L6-v2"
    for path in sorted(folder.glob("*/SciFact.json")):
        data = json.loads(path.read_text())
        return data["scores"]["test"][0]
    pytest.skip("no public SciFact result for MiniLM")


def test_reproduces_public_mteb_scores(scifact_run):
    results, record = scifact_run
    public = _public_scores()
    data = json.loads(task_result_path(results, MINILM, REVISION, "SciFactLocal").read_text())
    ours = data["scores"]["test"][0]
    for metric, value in PUBLIC.items():
        assert ours[metric] == pytest.approx(value, abs=1e-4), metric
        assert ours[metric] == pytest.approx(public[metric], abs=1e-4), metric


def test_per_query_means_equal_mteb_aggregates(scifact_run):
    results, record = scifact_run
    agg = json.loads(task_result_path(results, MINILM, REVISION, "SciFactLocal").read_text())["scores"]["test"][0]
    for metric in ["ndcg_at_10", "mrr_at_10", "map_at_10", "recall_at_100", "precision_at_10", "ndcg_at_1000"]:
        pq = load_per_query(results, MINILM, "SciFactLocal", metric)
        assert len(pq) == 300
        assert pq.mean() == pytest.approx(agg[metric], abs=1e-5), metric


def test_results_load_and_aggregate_with_mteb(scifact_run):
    results, _ = scifact_run
    loaded = mteb.ResultCache(results).load_results(tasks=["SciFactLocal"])
    assert loaded.get_aggregated_scores()[MINILM]["Mean(Task)"] == pytest.approx(PUBLIC["ndcg_at_10"], abs=1e-4)
