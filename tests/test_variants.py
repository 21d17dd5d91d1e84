"""A model's variants are mteb experiments of the model (issue 30): `results/<model>/<revision>/experiments/<name>/`
with `experiment_kwargs` naming the setting, found by mteb's own `ResultCache.load_results`; composed systems stay
models of their own; folders of the earlier layout are migrated once, with one line."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import mteb
import pytest

from conftest import MINILM, TINY_YAML, write_benchmark
from runners.config.benchmark import BenchmarkConfig
from runners.config.model_spec import BACKENDS
from runners.execution.run import run_benchmark
from runners.results.store import result_folder, task_result_path
from runners.results.variants import BACKEND_TAGS, experiment_name, variant_of

TASK = "TinyKBRetrieval"
NP = {"name": "test/np", "factory": "tests.identity_encoder:NumpyEncoder", "revision": "r1"}


@pytest.mark.parametrize("kwargs", [{"max_seq_length": 128}, {"backend": "onnx", "precision": "int8"},
                                    {"model_kwargs": "0a1b2c3d", "max_seq_length": 64, "backend": "openvino",
                                     "precision": "bf16"}])
def test_experiment_folder_is_mtebs_name(kwargs: dict) -> None:
    meta = mteb.models.ModelMeta.model_construct(name="org/m", revision="r", experiment_kwargs=kwargs)
    assert experiment_name(kwargs) == meta.experiment_name


def test_every_backend_tag_the_config_writes_is_a_variant() -> None:
    tags = {tag.lstrip("@"): pair for pair, tag in BACKENDS.items() if tag}
    assert tags == BACKEND_TAGS
    assert variant_of("org/m@msl128@kw0a1b2c3d@onnx-int8") == (
        "org/m", {"max_seq_length": 128, "model_kwargs": "0a1b2c3d", "backend": "onnx", "precision": "int8"})
    assert variant_of("org/m") is None and variant_of("org/m@v2") is None  # an '@' of the name itself
    assert variant_of("private-mteb/all-MiniLM-L6-v2+bm25-rrf60") is None  # composed: a model of its own


def _run(tmp_path: Path, models: list[dict], **extra) -> BenchmarkConfig:
    cfg = BenchmarkConfig.from_file(write_benchmark(tmp_path, [str(TINY_YAML)], models=models, **extra))
    run_benchmark(cfg, show_progress=False)
    return cfg


def test_a_variant_is_found_by_mteb_as_an_experiment_of_its_model(tmp_path: Path) -> None:
    cfg = _run(tmp_path, [NP, {**NP, "label": "np short", "max_seq_length": 2}])
    results = cfg.results_path
    folder = result_folder(results, "test/np@msl2", "r1")
    assert folder == results / "results" / "test__np" / "r1" / "experiments" / "max_seq_length_2"
    meta = json.loads((folder / "model_meta.json").read_text())
    assert meta["name"] == "test/np" and meta["experiment_kwargs"] == {"max_seq_length": 2}
    cache = mteb.ResultCache(results)
    plain = cache.load_results(models=["test/np"], tasks=[TASK], include_remote=False)
    assert [(m.model_name, m.experiment_name) for m in plain.model_results] == [("test/np", None)]
    exp = cache.load_results(models=["test/np"], tasks=[TASK], include_remote=False, load_experiments="match_kwargs",
                             experiment_kwargs={"max_seq_length": 2})
    assert [(m.model_name, m.experiment_name) for m in exp.model_results] == [("test/np", "max_seq_length_2")]
    stored = json.loads(task_result_path(results, "test/np@msl2", "r1", TASK).read_text())
    assert exp.model_results[0].task_results[0].get_score() == pytest.approx(stored["scores"]["test"][0]["main_score"])


def test_results_of_the_earlier_layout_are_migrated_once_and_not_rerun(tmp_path: Path) -> None:
    models = [NP, {**NP, "label": "np short", "max_seq_length": 2}]
    cfg = _run(tmp_path, models)
    results = cfg.results_path / "results"
    new = result_folder(cfg.results_path, "test/np@msl2", "r1")
    old = results / "test__np@msl2" / "r1"  # what an earlier private-mteb wrote
    old.parent.mkdir()
    shutil.move(new, old)
    meta = json.loads((old / "model_meta.json").read_text())
    (old / "model_meta.json").write_text(json.dumps({**meta, "name": "test/np@msl2", "experiment_kwargs": None}))
    # before any run, readers find the old folder where it is
    assert task_result_path(cfg.results_path, "test/np@msl2", "r1", TASK) == old / f"{TASK}.json"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = run_benchmark(cfg, show_progress=False)
    lines = [str(w.message) for w in caught if "experiments layout" in str(w.message)]
    assert len(lines) == 1 and "moved 1 variant result folder" in lines[0]
    assert [r.status for r in records] == ["skipped", "skipped"]  # moved, not re-computed
    assert not old.parent.exists() and (new / f"{TASK}.json").exists()
    assert json.loads((new / "model_meta.json").read_text())["experiment_kwargs"] == {"max_seq_length": 2}
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        run_benchmark(cfg, show_progress=False)
    assert not [w for w in again if "experiments layout" in str(w.message)]  # once


def test_composed_systems_stay_models_of_their_own(tmp_path: Path) -> None:
    cfg = _run(tmp_path, [{"name": "bm25", "label": "BM25"}, NP],
               experiments=[{"type": "hybrid", "dense": "test/np", "fusion": "rrf", "k": [60]}])
    metas = [json.loads(p.read_text()) for p in (cfg.results_path / "results").rglob("model_meta.json")]
    hybrid = [m for m in metas if m["name"].startswith("private-mteb/") and "+bm25" in m["name"]]
    assert len(hybrid) == 1, [m["name"] for m in metas]
    assert hybrid[0]["adapted_from"] == "test/np" and not hybrid[0].get("experiment_kwargs")  # names its dense part
    assert not list((cfg.results_path / "results").rglob("experiments"))




@pytest.mark.slow
@pytest.mark.skipif(__import__("importlib").util.find_spec("onnxruntime") is None,
                    reason="onnxruntime not installed (pip install 'private-mteb[onnx]')")
def test_minilm_int8_is_found_as_an_experiment_of_minilm(tmp_path: Path, monkeypatch) -> None:
    """The issue's check, with mteb's own API: MiniLM's onnx int8 run is an experiment of MiniLM, not a model."""
    monkeypatch.setenv("PRIVATE_MTEB_EXPORT_CACHE", str(tmp_path / "exported"))
    cfg = _run(tmp_path, [{"name": MINILM, "label": "MiniLM"},
                          {"name": MINILM, "label": "MiniLM int8", "backend": "onnx", "precision": "int8"}])
    cache = mteb.ResultCache(cfg.results_path)
    int8 = cache.load_results(models=[MINILM], tasks=[TASK], include_remote=False, load_experiments="match_kwargs",
                              experiment_kwargs={"backend": "onnx", "precision": "int8"})
    assert [(m.model_name, m.experiment_name) for m in int8.model_results] == [(MINILM, "backend_onnx__precision_int8")]
    every = cache.load_results(models=[MINILM], tasks=[TASK], include_remote=False, load_experiments="match_name")
    assert {m.experiment_name for m in every.model_results} == {None, "backend_onnx__precision_int8"}
    assert {m.model_name for m in every.model_results} == {MINILM}  # one model, two settings: never another model


def test_one_model_at_two_settings_is_two_candidates_of_the_config(tmp_path: Path) -> None:
    """`stats`/`check`/`report` read the config's candidates: two entries of one model with different settings
    (fp32 vs int8, two max_seq_length) are two candidates, not "the same candidate twice" (failed before)."""
    from typer.testing import CliRunner

    from runners.cli import app

    cfg = _run(tmp_path, [NP, {**NP, "label": "np short", "max_seq_length": 2}])
    out = CliRunner().invoke(app, ["stats", "-c", str(cfg.path), "--resamples", "200", "-m", "ndcg_at_10"])
    assert out.exit_code == 0, out.output
    assert "np short" in out.output and "among the 2 candidates" in out.output
    gate = CliRunner().invoke(app, ["check", "-c", str(cfg.path), "--baseline", "test/np", "--candidate",
                                    "test/np@msl2", "--resamples", "200"])
    assert gate.exit_code in (0, 1) and "np -> np short" in gate.output, gate.output


# ---------------------------------------------------------------- chunking and ANN settings (issue 30)
CHUNK = {"chunking": "chars", "chunk_size": 40, "overlap": 8, "aggregate": "max"}
HNSW = {"ann": "hnsw", "M": 16, "ef_search": 64}
SEARCH = [{"type": "chunk", "model": "test/np", "unit": "chars", "sizes": [40], "overlap": 8},
          {"type": "ann", "model": "test/np", "index": "hnsw", "M": 16, "ef_search": [64]}]


def test_every_chunk_and_index_tag_the_config_writes_is_a_variant() -> None:
    from runners.search.chunking import Chunker
    from runners.search.params import IndexParams
    from runners.results.variants import legacy_name

    cases = {Chunker(128, 32).tag: {"chunking": "tokens", "chunk_size": 128, "overlap": 32, "aggregate": "max"},
             Chunker(800, 100, "chars", "first").tag: {"chunking": "chars", "chunk_size": 800, "overlap": 100,
                                                       "aggregate": "max", "title": "first"},
             IndexParams("hnsw", M=16, ef_search=64).tag: HNSW,
             IndexParams("hnsw", M=8, ef_construction=100, ef_search=4).tag:
                 {"ann": "hnsw", "M": 8, "ef_construction": 100, "ef_search": 4},
             IndexParams("ivf", nlist=64, nprobe=8).tag: {"ann": "ivf", "nlist": 64, "nprobe": 8},
             IndexParams("flat").tag: {"ann": "flat"}}
    for tag, kwargs in cases.items():
        prefix = "chunk" if "chunking" in kwargs else ""
        assert variant_of(f"org/m@msl128@{prefix}{tag}") == ("org/m", {"max_seq_length": 128, **kwargs}), tag
        assert legacy_name(f"org/m@msl128@{prefix}{tag}") == f"private-mteb/m@msl128-{prefix}{tag}"
        meta = mteb.models.ModelMeta.model_construct(name="org/m", revision="r", experiment_kwargs=kwargs)
        assert experiment_name(kwargs) == meta.experiment_name
    assert legacy_name("org/m@msl128") == "org/m@msl128" and legacy_name("org/m@flatx") == "org/m@flatx"


def test_chunk_and_ann_settings_are_found_by_mteb_as_experiments_of_the_model(tmp_path: Path) -> None:
    cfg = _run(tmp_path, [NP], experiments=SEARCH)
    cache = mteb.ResultCache(cfg.results_path)
    for kwargs in (CHUNK, HNSW):
        exp = cache.load_results(models=["test/np"], tasks=[TASK], include_remote=False,
                                 load_experiments="match_kwargs", experiment_kwargs=kwargs)
        assert [(m.model_name, m.experiment_name) for m in exp.model_results] == [("test/np", experiment_name(kwargs))]
    every = cache.load_results(models=["test/np"], tasks=[TASK], include_remote=False, load_experiments="match_name")
    assert len(every.model_results) == 3 and {m.model_name for m in every.model_results} == {"test/np"}
    meta = json.loads((result_folder(cfg.results_path, "test/np@chunk40c-8", "r1") / "model_meta.json").read_text())
    assert meta["name"] == "test/np" and meta["experiment_kwargs"] == CHUNK and meta["adapted_from"] is None
    assert not list((cfg.results_path / "results").glob("private-mteb__*"))  # no model of its own any more


def _to_earlier_naming(cfg: BenchmarkConfig, new: str) -> str:
    """Put a run back where, and as, the earlier private-mteb wrote it: `private-mteb/<model>-<tag>`."""
    from runners.results.migrate import _renamed_sidecars
    from runners.results.store import SIDE, model_dir_name
    from runners.results.variants import legacy_name

    old, res = legacy_name(new), cfg.results_path
    runs_new, runs_old = (res / SIDE / "runs" / model_dir_name(n) for n in (new, old))
    for folder in runs_new.glob("*/*/*"):
        _renamed_sidecars(folder, new, old)
    shutil.move(runs_new, runs_old)
    folder, target = result_folder(res, new, "r1"), res / "results" / model_dir_name(old) / "r1"
    meta = json.loads((folder / "model_meta.json").read_text())
    (folder / "model_meta.json").write_text(json.dumps({**meta, "name": old, "experiment_kwargs": None,
                                                        "adapted_from": "test/np"}))
    target.parent.mkdir(parents=True)
    shutil.move(folder, target)
    return old


def _commands_show_the_labels(cfg: BenchmarkConfig) -> list[str]:
    """`stats` and `experiments` rows of the chunking and ANN candidates, by their labels (unchanged by the move)."""
    from typer.testing import CliRunner

    from runners.cli import app

    rows = []
    for argv in (["stats", "-c", str(cfg.path), "--resamples", "200", "-m", "ndcg_at_10"],
                 ["experiments", "-c", str(cfg.path)]):
        out = CliRunner().invoke(app, argv)
        assert out.exit_code == 0, out.output
        got = [line for line in out.output.splitlines() if "chunk=40c/8c" in line or "hnsw M16 ef64" in line]
        assert len(got) >= 2, out.output
        rows += got
    return rows


def test_chunk_and_ann_results_of_the_earlier_naming_are_read_then_migrated_once(tmp_path: Path) -> None:
    from runners.results.store import load_per_query

    cfg = _run(tmp_path, [NP], experiments=SEARCH)
    names = ["test/np@chunk40c-8", "test/np@hnsw-M16-ef64"]
    scores = {n: load_per_query(cfg.results_path, n, TASK) for n in names}
    olds = [_to_earlier_naming(cfg, n) for n in names]
    assert olds == ["private-mteb/np-chunk40c-8", "private-mteb/np-hnsw-M16-ef64"]
    assert not list((cfg.results_path / "results").rglob("experiments/*"))
    for n in names:  # before any run, readers find them where they are, under the new name
        assert load_per_query(cfg.results_path, n, TASK).equals(scores[n])
    shown = _commands_show_the_labels(cfg)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        records = run_benchmark(cfg, show_progress=False)
    lines = [str(w.message) for w in caught if "chunking/ANN" in str(w.message)]
    assert len(lines) == 1 and "moved 2 chunking/ANN result folder(s)" in lines[0], lines
    assert [r.status for r in records] == ["skipped"] * 3  # moved and still complete: nothing re-computed
    assert not list((cfg.results_path / "results").glob("private-mteb__*"))
    exp = mteb.ResultCache(cfg.results_path).load_results(models=["test/np"], tasks=[TASK], include_remote=False,
                                                          load_experiments="match_kwargs", experiment_kwargs=HNSW)
    assert [m.experiment_name for m in exp.model_results] == [experiment_name(HNSW)]
    for n in names:
        assert load_per_query(cfg.results_path, n, TASK).equals(scores[n])
    assert _commands_show_the_labels(cfg) == shown  # the same rows, read from the new place
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        run_benchmark(cfg, show_progress=False)
    assert not [w for w in again if "chunking/ANN" in str(w.message)]  # once


def test_a_composed_system_over_a_chunk_or_ann_setting_stays_a_model_of_its_own(tmp_path: Path) -> None:
    """A rerank of the chunked (or ANN) first stage is a system of its own, named after the setting it reorders."""
    from runners.config.experiments import plan_experiments

    rerank = [{"type": "rerank", "first": label, "reranker": "cross-encoder/x", "depth": [5]}
              for label in ("np chunk=40c/8c", "np hnsw M16 ef64")]
    cfg = BenchmarkConfig.from_file(write_benchmark(tmp_path, [str(TINY_YAML)], models=[NP],
                                                    experiments=[*SEARCH, *rerank]))
    plans = plan_experiments(cfg)
    assert [p.name for p in plans if p.kind in ("chunk", "ann")] == ["test/np@chunk40c-8", "test/np@hnsw-M16-ef64"]
    firsts = [(p.name, p.params["first"]) for p in plans if p.kind == "rerank"]
    assert firsts == [("private-mteb/np@chunk40c-8+rerank-x-d5", "test/np@chunk40c-8"),
                      ("private-mteb/np@hnsw-M16-ef64+rerank-x-d5", "test/np@hnsw-M16-ef64")]
    assert all(variant_of(name) is None for name, _ in firsts)  # not an experiment: a model of its own
    assert result_folder(cfg.results_path, firsts[0][0], "r1") == \
        cfg.results_path / "results" / "private-mteb__np@chunk40c-8+rerank-x-d5" / "r1"
