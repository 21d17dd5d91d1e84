"""Private collections become genuine mteb tasks: evaluate, aggregate, never stale."""

from __future__ import annotations

import json

import mteb
import numpy as np
import pytest
from mteb.abstasks.retrieval import AbsTaskRetrieval

import custom_tasks
from custom_tasks.errors import ConfigError
from tests.conftest import TINY_YAML


def test_get_task_returns_registered_mteb_retrieval_task():
    task = custom_tasks.get_task(TINY_YAML)
    assert isinstance(task, AbsTaskRetrieval)
    assert task.metadata.name == "TinyKBRetrieval"
    assert task.metadata.main_score == "ndcg_at_10"
    assert task.metadata.dataset["revision"] == task.collection.content_hash()
    # mteb's own registry knows it now (results loading / aggregation rely on this)
    assert mteb.get_task("TinyKBRetrieval").metadata.name == "TinyKBRetrieval"


def test_get_task_by_name_uses_configs_tasks():
    task = custom_tasks.get_task("NorthwindKBRetrieval")
    assert len(task.collection.corpus) >= 150 and len(task.collection.queries) >= 100


def test_changed_data_is_a_new_revision(tiny_copy):
    before = custom_tasks.get_task(tiny_copy).metadata.dataset["revision"]
    qrels = tiny_copy.parent / "kb_tiny" / "qrels" / "test.tsv"
    qrels.write_text(qrels.read_text().replace("q2\tpwd\t2", "q2\tpwd\t1"))
    after = custom_tasks.get_task(tiny_copy).metadata.dataset["revision"]
    assert before != after


def test_bad_license_is_one_line_config_error(tiny_copy):
    tiny_copy.write_text(tiny_copy.read_text().replace("cc0-1.0", "proprietary"))
    with pytest.raises(ConfigError, match=r"kb_tiny.yaml: license 'proprietary' is not one mteb accepts"):
        custom_tasks.get_task(tiny_copy)


def test_unknown_key_in_task_yaml(tiny_copy):
    tiny_copy.write_text(tiny_copy.read_text() + "lables: human\n")
    with pytest.raises(ConfigError, match=r"kb_tiny.yaml: unknown key 'lables'"):
        custom_tasks.get_task(tiny_copy)


def test_mteb_evaluate_end_to_end_with_offline_minilm(minilm, tmp_path):
    task = custom_tasks.get_task(TINY_YAML)
    res = mteb.evaluate(minilm, task, cache=mteb.ResultCache(tmp_path), encode_kwargs={"batch_size": 16},
                        show_progress_bar=False)
    scores = res.task_results[0].scores["test"][0]
    assert 0.5 < scores["ndcg_at_10"] <= 1.0
    # per-query numbers kept by the task average exactly to mteb's aggregates
    per_query = task.per_query[("test", "default")]
    for metric in ["ndcg_at_10", "mrr_at_10", "map_at_10", "recall_at_100", "precision_at_1", "ndcg_at_1"]:
        assert len(per_query[metric]) == 10
        assert np.mean(list(per_query[metric].values())) == pytest.approx(scores[metric], abs=1e-5)
    # results land under the registry name and revision, as public results do
    path = tmp_path / "results" / "sentence-transformers__all-MiniLM-L6-v2" / \
        "8b3219a92973c328a8e22fadcfa821b5dc75636a" / "TinyKBRetrieval.json"
    data = json.loads(path.read_text())
    assert data["dataset_revision"] == task.metadata.dataset["revision"]

    # mteb's loaders and aggregation work on it (no KeyError for an unregistered task)
    loaded = mteb.ResultCache(tmp_path).load_results(tasks=["TinyKBRetrieval"])
    agg = loaded.get_aggregated_scores()
    assert agg["sentence-transformers/all-MiniLM-L6-v2"]["Mean(Task)"] == pytest.approx(scores["ndcg_at_10"])
    bench = mteb.Benchmark(name="private", tasks=[task])
    bench_results = mteb.ResultCache(tmp_path).load_results(tasks=bench)
    assert len(list(bench_results)) == 1


def test_register_all_makes_results_loadable_in_a_fresh_registry():
    names = custom_tasks.register_all()
    assert "NorthwindKBRetrieval" in names
    assert mteb.get_task("NorthwindKBRetrieval").metadata.type == "Retrieval"
