"""Run identity: after any change of data, task settings, encode settings or local weights, `run` gives the score
a fresh run in an empty folder gives; differently configured runs never overwrite each other."""

from __future__ import annotations

import json
import time
from pathlib import Path

import mteb
import numpy as np
import pytest

from runners.config.benchmark import BenchmarkConfig
from runners.results import fingerprints as identity_mod
from runners.execution.run import run_benchmark
from runners.results.store import task_result_path
from tests.conftest import write_benchmark
from tests.identity_encoder import DIM

TASK = "TinyKBRetrieval"


def np_model(**factory_kwargs) -> dict:
    return {"name": "test/np", "factory": "tests.identity_encoder:NumpyEncoder", "revision": "r1",
            "factory_kwargs": factory_kwargs}


def cfg_for(tmp_path: Path, task_yaml: Path, models: list[dict], out: str = "results", **extra) -> BenchmarkConfig:
    folder = tmp_path / out
    folder.mkdir(exist_ok=True)
    return BenchmarkConfig.from_file(write_benchmark(folder, [str(task_yaml)], models=models, **extra))


def fresh_score(tmp_path: Path, task_yaml: Path, models: list[dict], **extra) -> float:
    """The score a run into an empty results folder (and an empty embedding cache) gives."""
    folder = tmp_path / f"fresh-{time.monotonic_ns()}"
    rec = run_benchmark(cfg_for(folder.parent, task_yaml, models, out=folder.name, **extra), show_progress=False)
    return rec[0].scores["ndcg_at_10"]


def add_to_yaml(task_yaml: Path, line: str) -> None:
    task_yaml.write_text(task_yaml.read_text() + line + "\n")


def test_ignore_identical_ids_change_is_not_reported_as_cached(tmp_path, tiny_copy):
    corpus = tiny_copy.parent / "kb_tiny" / "corpus.jsonl"  # a document whose id is q2 and text is q2's text
    corpus.write_text(corpus.read_text() + json.dumps({"_id": "q2", "title": "", "text": "I forgot my password"}) + "\n")
    cfg = cfg_for(tmp_path, tiny_copy, [np_model()])
    first = run_benchmark(cfg, show_progress=False)[0]
    add_to_yaml(tiny_copy, "ignore_identical_ids: true")
    second = run_benchmark(cfg, show_progress=False)[0]
    assert second.status == "ran" and "task.ignore_identical_ids" in second.reason
    assert second.scores["ndcg_at_10"] == pytest.approx(fresh_score(tmp_path, tiny_copy, [np_model()]), abs=1e-9)
    assert second.scores["ndcg_at_10"] != pytest.approx(first.scores["ndcg_at_10"], abs=1e-6)
    assert run_benchmark(cfg, show_progress=False)[0].status == "skipped"


def test_main_score_change_rewrites_the_main_score(tmp_path, tiny_copy):
    cfg = cfg_for(tmp_path, tiny_copy, [np_model()])
    run_benchmark(cfg, show_progress=False)
    add_to_yaml(tiny_copy, "main_score: recall_at_10")
    assert run_benchmark(cfg, show_progress=False)[0].status == "ran"
    data = json.loads(task_result_path(cfg.results_path, "test/np", "r1", TASK).read_text())
    scores = data["scores"]["test"][0]
    assert scores["main_score"] == scores["recall_at_10"] != scores["ndcg_at_10"]


def test_encode_settings_get_their_own_results_and_never_overwrite(tmp_path, tiny_copy):
    default = run_benchmark(cfg_for(tmp_path, tiny_copy, [np_model()]), show_progress=False)[0]
    short = cfg_for(tmp_path, tiny_copy, [np_model()], encode={"max_seq_length": 2})
    second = run_benchmark(short, show_progress=False)[0]
    assert second.status == "ran" and second.candidate == "test/np@msl2" and second.label == "np@msl2"
    assert second.scores["ndcg_at_10"] == pytest.approx(
        fresh_score(tmp_path, tiny_copy, [np_model()], encode={"max_seq_length": 2}), abs=1e-9)
    assert second.scores["ndcg_at_10"] != pytest.approx(default.scores["ndcg_at_10"], abs=1e-6)
    # both stay on disk, loadable by mteb: the variant as an experiment of the model (issue 30); the default untouched
    results = short.results_path
    assert task_result_path(results, "test/np", "r1", TASK).exists()
    variant = task_result_path(results, "test/np@msl2", "r1", TASK)
    assert variant == results / "results" / "test__np" / "r1" / "experiments" / "max_seq_length_2" / f"{TASK}.json"
    assert variant.exists()
    loaded = mteb.ResultCache(results).load_results(tasks=[TASK], load_experiments="match_name")
    assert {(m.model_name, m.experiment_name) for m in loaded.model_results} == {("test/np", None),
                                                                                 ("test/np", "max_seq_length_2")}
    again = run_benchmark(cfg_for(tmp_path, tiny_copy, [np_model()]), show_progress=False)[0]
    assert again.status == "skipped" and again.scores == default.scores
    # a per-model max_seq_length equal to the benchmark default is the same run
    same = cfg_for(tmp_path, tiny_copy, [{**np_model(), "max_seq_length": 2}])
    assert run_benchmark(same, show_progress=False)[0].status == "skipped"


def test_two_entries_writing_the_same_results_are_rejected(tmp_path, tiny_copy):
    from custom_tasks.errors import ConfigError

    with pytest.raises(ConfigError, match="overwrite each other"):
        cfg_for(tmp_path, tiny_copy, [{**np_model(), "label": "a"}, {**np_model(weights="x"), "label": "b"}])


def _model_dir(tmp_path: Path, matrix: np.ndarray) -> Path:
    folder = tmp_path / "my-model"
    folder.mkdir(exist_ok=True)
    np.save(folder / "weights.npy", matrix)
    (folder / "config.json").write_text('{"dim": 16}')
    return folder


def test_retrained_local_model_is_rerun_and_not_served_from_the_embedding_cache(tmp_path, tiny_copy):
    folder = _model_dir(tmp_path, np.eye(DIM))
    model = {**np_model(), "path": str(folder)}  # the factory receives `path:` and reads weights.npy there
    cfg = cfg_for(tmp_path, tiny_copy, [model])
    first = run_benchmark(cfg, show_progress=False)[0]
    rng = np.random.default_rng(0)
    np.save(folder / "weights.npy", np.outer(rng.standard_normal(DIM), rng.standard_normal(DIM)))  # retrained in place
    second = run_benchmark(cfg, show_progress=False)[0]
    assert second.status == "ran" and second.reason == "changed: candidate.weights"
    assert second.encoded > 0 and second.reused == 0  # old vectors are not reused
    expected = fresh_score(tmp_path, tiny_copy, [model])
    assert second.scores["ndcg_at_10"] == pytest.approx(expected, abs=1e-9)
    assert second.scores["ndcg_at_10"] != pytest.approx(first.scores["ndcg_at_10"], abs=1e-3)
    forced = run_benchmark(cfg, force=True, show_progress=False)[0]
    assert forced.scores["ndcg_at_10"] == pytest.approx(expected, abs=1e-9) and forced.encoded == 0
    # a config file change (not the weights) is part of the identity too
    (folder / "config.json").write_text('{"dim": 16, "pooling": "mean"}')
    assert run_benchmark(cfg, show_progress=False)[0].status == "ran"


def test_unchanged_local_model_is_not_read_again(tmp_path, monkeypatch):
    folder = _model_dir(tmp_path, np.eye(DIM))
    memo = tmp_path / "memo"
    first = identity_mod.weights_fingerprint([str(folder)], memo)
    identity_mod._MEMO.clear()  # a new process: only the memo file remains

    def no_reading(path):
        raise AssertionError(f"{path} was read again")

    monkeypatch.setattr(identity_mod, "file_digest", no_reading)
    t0 = time.perf_counter()
    assert identity_mod.weights_fingerprint([str(folder)], memo) == first
    assert time.perf_counter() - t0 < 0.5
    monkeypatch.undo()
    np.save(folder / "weights.npy", 2 * np.eye(DIM))
    assert identity_mod.weights_fingerprint([str(folder)], memo) != first


def test_changed_data_is_rerun(tmp_path, tiny_copy):
    cfg = cfg_for(tmp_path, tiny_copy, [np_model()])
    run_benchmark(cfg, show_progress=False)
    qrels = tiny_copy.parent / "kb_tiny" / "qrels" / "test.tsv"
    qrels.write_text(qrels.read_text().replace("q9\tprinter\t2", "q9\twifi\t2"))
    second = run_benchmark(cfg, show_progress=False)[0]
    assert second.status == "ran"
    assert second.scores["ndcg_at_10"] == pytest.approx(fresh_score(tmp_path, tiny_copy, [np_model()]), abs=1e-9)


def test_a_sidecar_left_by_a_crashed_differently_configured_run_is_not_trusted(tmp_path, tiny_copy):
    """identity.json vouches for the digests of the TaskResult and sidecars, not only for a fingerprint."""
    cfg = cfg_for(tmp_path, tiny_copy, [np_model()])
    run_benchmark(cfg, show_progress=False)
    pq = next(cfg.results_path.rglob("per_query_test.json"))
    data = json.loads(pq.read_text())
    data["subsets"]["default"]["ndcg_at_10"]["q1"] = 0.0  # as if another run's sidecar had replaced it
    pq.write_text(json.dumps(data))
    assert run_benchmark(cfg, show_progress=False)[0].status == "ran"


def test_experiment_parameters_are_part_of_the_identity(tmp_path, tiny_copy):
    exp = [{"type": "hybrid", "dense": "test/np", "fusion": "rrf", "k": [60]}]
    cfg = cfg_for(tmp_path, tiny_copy, [np_model()], experiments=exp)
    assert [r.status for r in run_benchmark(cfg, show_progress=False)] == ["ran", "ran"]
    assert [r.status for r in run_benchmark(cfg, show_progress=False)] == ["skipped", "skipped"]
    folder = _model_dir(tmp_path, np.eye(DIM))
    model = {**np_model(weights=str(folder / "weights.npy"))}
    cfg2 = cfg_for(tmp_path, tiny_copy, [model], experiments=exp)
    assert [r.status for r in run_benchmark(cfg2, show_progress=False)] == ["ran", "ran"]  # base weights differ


def test_encode_max_seq_length_leaves_bm25_alone(tmp_path, tiny_copy):
    """`encode: {max_seq_length: N}` is for encoders: BM25 keeps its identity, name and cached result."""
    plain = write_benchmark(tmp_path, [str(tiny_copy)], models=[{"name": "bm25"}])
    first = run_benchmark(BenchmarkConfig.from_file(plain), show_progress=False)
    short = write_benchmark(tmp_path, [str(tiny_copy)], models=[{"name": "bm25"}], encode={"max_seq_length": 16})
    again = run_benchmark(BenchmarkConfig.from_file(short), show_progress=False)
    assert [r.status for r in first] == ["ran"] and [r.status for r in again] == ["skipped"]
    assert again[0].candidate == first[0].candidate


def test_changed_factory_kwargs_never_reuse_the_other_settings_vectors(tmp_path, tiny_copy):
    """A factory model whose kwargs change (here: another weights file) encodes again into its own cache."""
    rng = np.random.default_rng(1)
    paths = []
    for name in ("a.npy", "b.npy"):
        np.save(tmp_path / name, np.outer(rng.standard_normal(DIM), rng.standard_normal(DIM)) + np.eye(DIM))
        paths.append(str(tmp_path / name))
    first = run_benchmark(cfg_for(tmp_path, tiny_copy, [np_model(weights=paths[0])]), show_progress=False)[0]
    second = run_benchmark(cfg_for(tmp_path, tiny_copy, [np_model(weights=paths[1])]), show_progress=False)[0]
    assert first.encoded > 0 and second.status == "ran" and second.encoded == first.encoded and second.reused == 0
    assert second.scores["ndcg_at_10"] == pytest.approx(fresh_score(tmp_path, tiny_copy, [np_model(weights=paths[1])]),
                                                        abs=1e-9)
    again = run_benchmark(cfg_for(tmp_path, tiny_copy, [np_model(weights=paths[0])]), force=True, show_progress=False)[0]
    assert again.encoded == 0  # its own vectors are still there
