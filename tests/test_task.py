"""Private collections become genuine mteb tasks: evaluate, aggregate, never stale."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import typing
from pathlib import Path

import mteb
import numpy as np
import pytest
import yaml
from mteb.abstasks.retrieval import AbsTaskRetrieval

import custom_tasks
from custom_tasks.bm25_analyzer import BM25Settings
from custom_tasks.config import ANNOTATIONS, TaskConfig, resolve_task_config
from custom_tasks.errors import ConfigError
from custom_tasks.mteb_names import DEFAULT_K_VALUES, DOMAINS, LICENSES, retrieval_score_names
from tests.conftest import REPO, TINY_YAML

#: keys of an mteb scores entry that are not scores
SCORE_META = {"hf_subset", "languages", "main_score", "mteb_version"}


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
    with pytest.raises(ConfigError, match=r"kb_tiny.yaml:8: license 'proprietary' is not one mteb accepts"):
        custom_tasks.get_task(tiny_copy)


def test_unknown_key_in_task_yaml(tiny_copy):
    tiny_copy.write_text(tiny_copy.read_text() + "lables: human\n")
    with pytest.raises(ConfigError, match=r"kb_tiny.yaml:\d+: unknown key 'lables' \(did you mean 'labels'\?\)"):
        custom_tasks.get_task(tiny_copy)


def test_mteb_evaluate_end_to_end_with_offline_minilm(minilm, tmp_path):
    task = custom_tasks.get_task(TINY_YAML)
    res = mteb.evaluate(minilm, task, cache=mteb.ResultCache(tmp_path), encode_kwargs={"batch_size": 16},
                        show_progress_bar=False)
    scores = res.task_results[0].scores["test"][0]
    assert 0.5 < scores["ndcg_at_10"] <= 1.0
    # the names TaskConfig accepts as main_score are exactly the scores mteb reports
    assert set(retrieval_score_names(task.k_values)) == set(scores) - SCORE_META
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


# --- what `run` would reject late is rejected when the task YAML is read -----------------------------

def edit_yaml(path: Path, **changes: object) -> Path:
    data = yaml.safe_load(path.read_text())
    data.update(changes)
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize("changes, expected", [
    ({"main_score": "ndcg_at_11"}, "main_score 'ndcg_at_11' is not a score mteb reports for k_values "
                                   "[1, 3, 5, 10, 20, 100, 1000] (closest: 'ndcg_at_10'"),
    ({"main_score": "ndgc_at_10"}, "main_score 'ndgc_at_10' is not a score mteb reports for k_values"),
    ({"main_score": "NDCG@10"}, "(closest: 'ndcg_at_10'"),
    ({"main_score": "recal_at_100"}, "(closest: 'recall_at_100'"),
    ({"k_values": [1, 5]}, "main_score 'ndcg_at_10' is not a score mteb reports for k_values [1, 5] "
                           "(closest: 'ndcg_at_5'"),
    ({"k_values": [1, 10], "main_score": "recall_at_100"}, "(closest: 'recall_at_10'"),
    ({"k_values": [5, 10]}, "k_values [5, 10] must include 1: mteb always reports accuracy"),
    ({"k_values": [1, 0, 10]}, "k_values [1, 0, 10] must be distinct whole numbers >= 1"),
    ({"k_values": [1, 10, 10]}, "k_values [1, 10, 10] must be distinct whole numbers >= 1"),
    ({"splits": []}, "splits is empty"),
    ({"splits": ["test", "test"]}, "splits ['test', 'test'] lists a split twice"),
    ({"prompts": {"query": " "}}, "prompts.query is empty"),
    ({"prompts": {"passage": "x"}}, "prompts keys must be 'query' and/or 'document', got ['passage']"),
    ({"license": "cc-by-4"}, "license 'cc-by-4' is not one mteb accepts: use an id such as cc-by-4.0 or "
                             "apache-2.0, a URL, or 'not specified' (closest: 'cc-by-4.0')"),
    ({"domains": ["Enginering"]}, "domains: 'Enginering' is not an mteb domain (closest: 'Engineering')"),
    ({"date": ["2020-01-01", "2999-01-01"]}, "date '2999-01-01' is not a date in the past as YYYY-MM-DD"),
    ({"date": ["2020-01-01", "last year"]}, "date 'last year' is not a date in the past"),
    ({"reference": "our wiki"}, "reference 'our wiki' is not a URL"),
])
def test_settings_mteb_would_reject_are_one_line_config_errors_at_load(tiny_copy, changes, expected):
    edit_yaml(tiny_copy, **changes)
    with pytest.raises(ConfigError) as e:
        resolve_task_config(tiny_copy)  # what `tasks validate` reads, before any data or model
    msg = str(e.value)
    assert re.match(rf"{re.escape(str(tiny_copy))}:\d+: ", msg) and "\n" not in msg and "Value error" not in msg
    assert expected in msg


@pytest.mark.parametrize("changes", [
    {"main_score": "mrr_at_10"}, {"main_score": "recall_at_1000"}, {"main_score": "accuracy"},
    {"main_score": "hit_rate_at_5"}, {"main_score": "nauc_ndcg_at_10_max"}, {"main_score": "nauc_mrr_at_1_diff1"},
    {"k_values": [10, 1, 7], "main_score": "ndcg_at_7"}, {"license": "https://example.com/licence"},
    {"domains": ["Engineering", "Written"], "reference": "https://wiki.example.com/kb"},
])
def test_valid_settings_load(tiny_copy, changes):
    cfg = resolve_task_config(edit_yaml(tiny_copy, **changes))
    if "k_values" in changes:
        assert cfg.k_values == [1, 7, 10] and cfg.effective_k_values == (1, 7, 10)


def test_unquoted_yaml_dates_are_read_as_dates(tiny_copy):
    tiny_copy.write_text(tiny_copy.read_text() + "date: [2026-11-01, 2026-12-01]\n")
    assert resolve_task_config(tiny_copy).date == ("2026-11-01", "2026-12-01")


def test_task_config_checks_do_not_import_mteb():
    """`tasks validate` / `tasks list` read every task YAML: that must not cost `import mteb` (seconds)."""
    code = ("import sys; from custom_tasks.config import TaskConfig; "
            f"TaskConfig.from_file({str(TINY_YAML)!r}); print('mteb' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "False"


def test_static_mteb_vocabularies_match_mteb():
    """mteb_names.py copies mteb's lists so config loading stays fast; an mteb upgrade that changes one fails here."""
    from mteb.abstasks.task_metadata import AnnotatorType, TaskDomain
    from mteb.types import Licenses

    assert tuple(AbsTaskRetrieval.k_values) == DEFAULT_K_VALUES
    assert set(LICENSES) == set(typing.get_args(Licenses))
    assert set(DOMAINS) == set(typing.get_args(TaskDomain))
    assert set(ANNOTATIONS.values()) <= set(typing.get_args(AnnotatorType))


def test_custom_k_values_reach_mteb_and_every_accepted_name_is_reported(tiny_copy, tmp_path):
    """With k_values [1, 2, 7] mteb reports exactly the names TaskConfig accepts, and main_score is one of them."""
    edit_yaml(tiny_copy, k_values=[7, 1, 2], main_score="ndcg_at_7")
    task = custom_tasks.get_task(tiny_copy)
    assert tuple(task.k_values) == (1, 2, 7)
    model = mteb.get_model("mteb/baseline-random-encoder")
    res = mteb.evaluate(model, task, cache=mteb.ResultCache(tmp_path / "cache"), show_progress_bar=False)
    scores = res.task_results[0].scores["test"][0]
    assert set(retrieval_score_names((1, 2, 7))) == set(scores) - SCORE_META
    assert scores["main_score"] == scores["ndcg_at_7"]
    assert set(task.per_query[("test", "default")]) >= {"ndcg_at_7", "mrr_at_2", "recall_at_1"}


# --- settings fingerprint ------------------------------------------------------------------------

#: TaskConfig fields that do not change a score for the same data (source changes the data: content hash)
NOT_SCORING = {"name", "description", "source", "domains", "license", "labels", "reference", "date",
               "path", "generated_by", "merge",  # merge: the merged grades change the data revision instead
               "questions",  # use_unverified: which questions are in the collection, so its revision
               "complete_labels"}  # changes what is said of unjudged pairs (notes), not a score
SCORING_CHANGES = {
    "splits": ["test", "dev"],
    "main_score": "mrr_at_10",
    "k_values": [1, 10, 50],
    "prompts": {"query": "Find the help-desk page that answers the question"},
    "ignore_identical_ids": True,
    "grades": {3: "perfect", 2: "good", 1: "fair", 0: "bad"},  # what a grade means (issue 31)
    "languages": ["deu-Latn"],  # mteb's BM25 takes its stemmer and stop words from them (issue 35)
    "bm25": BM25Settings.model_validate({"stemmer": "german"}),  # BM25's analyzer, key by key (issue 35)
}


def test_settings_fingerprint_changes_with_every_scoring_setting():
    base = TaskConfig.from_file(TINY_YAML)
    fp = base.settings_fingerprint()
    assert re.fullmatch(r"[0-9a-f]{16}", fp) and base.settings_fingerprint() == fp
    seen = {fp}
    for key, value in SCORING_CHANGES.items():
        other = base.model_copy(update={key: value}).settings_fingerprint()
        assert other not in seen, key
        seen.add(other)
    prompts = {"query": "Find the help-desk page"}
    with_query = base.model_copy(update={"prompts": prompts}).settings_fingerprint()
    with_doc = base.model_copy(update={"prompts": {"document": prompts["query"]}}).settings_fingerprint()
    assert with_query != with_doc
    # every field is classified: a new TaskConfig field must be put in the fingerprint or in NOT_SCORING
    assert set(TaskConfig.model_fields) == set(SCORING_CHANGES) | NOT_SCORING


def test_settings_fingerprint_ignores_metadata_order_and_spelt_out_defaults():
    base = TaskConfig.from_file(TINY_YAML)
    fp = base.settings_fingerprint()
    same = {
        "name": "Renamed", "description": "other words", "license": "mit", "labels": "llm", "domains": ["Web"],
        "languages": ["eng-Latn"], "reference": "https://example.com", "date": ("2020-01-01", "2020-02-01"),
        "k_values": list(DEFAULT_K_VALUES), "prompts": {},
    }
    for key, value in same.items():
        assert base.model_copy(update={key: value}).settings_fingerprint() == fp, key
    two = base.model_copy(update={"splits": ["test", "dev"], "prompts": {"query": "q", "document": "d"}})
    swapped = base.model_copy(update={"splits": ["dev", "test"], "prompts": {"document": "d", "query": "q"}})
    assert two.settings_fingerprint() == swapped.settings_fingerprint()


def test_title_only_documents_reach_mteb_and_are_scored(tiny_copy, tmp_path):
    """A title-only document is kept (with a warning) and mteb embeds and ranks it like any other."""
    corpus = tiny_copy.parent / "kb_tiny" / "corpus.jsonl"
    lines = corpus.read_text().splitlines()
    first = json.loads(lines[0])
    lines[0] = json.dumps({"_id": first["_id"], "title": first["title"]})
    corpus.write_text("\n".join(lines) + "\n")
    task = custom_tasks.get_task(tiny_copy)
    assert task.collection.corpus[first["_id"]]["text"] == ""
    assert task.collection.warning_counts()["title_only_document"] == 1
    model = mteb.get_model("mteb/baseline-random-encoder")
    res = mteb.evaluate(model, task, cache=mteb.ResultCache(tmp_path / "cache"), show_progress_bar=False)
    assert 0.0 <= res.task_results[0].scores["test"][0]["ndcg_at_10"] <= 1.0
    assert all(first["_id"] in docs for docs in task.rankings[("test", "default")].values())
