"""`compare`: public cells read back from the JSON files, aggregates equal mteb's, correlation equals scipy's.

Private results are a fixture written in mteb's ResultCache layout for two private tasks registered here; public
results are ../shared/public-results (tests that need it skip without it) or the shipped snapshot.
"""

from __future__ import annotations

import json
import math
import socket
from pathlib import Path

import pandas as pd
import pytest
from scipy.stats import kendalltau, spearmanr

from custom_tasks.collection import Collection
from custom_tasks.config import TaskConfig
from custom_tasks.task import task_from_collection
from runners.analysis.compare.compare import (
    BORDA, PRIVATE_FLAG, PRIVATE_MEAN, PRIVATE_RANK, PUBLIC_FLAG, PUBLIC_MEAN, PUBLIC_RANK,
    build_comparison, compare_table, describe_agreement, to_csv, to_json, to_markdown,
)
from runners.analysis.compare.compare_plot import plot_comparison
from runners.analysis.compare.public import SNAPSHOT_PATH, FolderSource, MtebCacheSource, PublicSourceError, SnapshotSource

REPO = Path(__file__).resolve().parents[1]
PUBLIC = REPO.parent / "shared" / "public-results"
needs_public = pytest.mark.skipif(not (PUBLIC / "results").is_dir(), reason="../shared/public-results not present")

MINILM, BM25 = "sentence-transformers/all-MiniLM-L6-v2", "mteb/baseline-bm25s"
MINILM_REV = "8b3219a92973c328a8e22fadcfa821b5dc75636a"
TASK_A, TASK_B = "CompareFixtureA", "CompareFixtureB"
# model -> (revision, {task: nDCG@10}); gte-small lacks B, acme models are local (no public entry of their own)
PRIVATE = {
    MINILM: (MINILM_REV, {TASK_A: 0.81, TASK_B: 0.70}),
    BM25: ("0_3_0", {TASK_A: 0.73, TASK_B: 0.75}),
    "BAAI/bge-small-en-v1.5": ("5c38ec7c405ec4b44b94cc5a9bb96e735b38267a", {TASK_A: 0.84, TASK_B: 0.78}),
    "intfloat/e5-small-v2": ("dca8b1a9dae0d4575df2bf423a5edb485a431236", {TASK_A: 0.83, TASK_B: 0.74}),
    "thenlper/gte-small": ("17e1f347d17fe144873b1201da91788898c639cd", {TASK_A: 0.80}),
    "sentence-transformers/all-mpnet-base-v2": ("9a3225965996d404b775526de6dbfe85d3368642", {TASK_A: 0.79, TASK_B: 0.72}),
    "acme/minilm-ft": ("local", {TASK_A: 0.86, TASK_B: 0.77}),
    "acme/no-public": ("local", {TASK_A: 0.50, TASK_B: 0.40}),
}
V2 = ["ArguAna", "CQADupstackGamingRetrieval", "CQADupstackUnixRetrieval", "ClimateFEVERHardNegatives",
      "FEVERHardNegatives", "FiQA2018", "HotpotQAHardNegatives", "SCIDOCS", "TRECCOVID", "Touche2020Retrieval.v3"]


def _register_private_tasks() -> None:
    for name in (TASK_A, TASK_B):
        coll = Collection(name=name, corpus={"d1": {"title": "", "text": "vpn setup"}}, queries={"q1": "vpn?"},
                          qrels={"test": {"q1": {"d1": 1}}})
        cfg = TaskConfig(name=name, description="compare fixture", source={"format": "beir", "path": "."})
        task_from_collection(coll, cfg)


def write_result(root: Path, model: str, revision: str, task: str, score: float, mteb_version: str = "2.26.24",
                 split: str = "test") -> None:
    folder = root / "results" / model.replace("/", "__") / revision
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model_meta.json").write_text(json.dumps({"name": model, "revision": revision}))
    result = {"dataset_revision": "fixture", "task_name": task, "mteb_version": mteb_version, "evaluation_time": 1.0,
              "kg_co2_emissions": None, "scores": {split: [{"hf_subset": "default", "languages": ["eng-Latn"],
                                                            "main_score": score, "ndcg_at_10": score}]}}
    (folder / f"{task}.json").write_text(json.dumps(result))


@pytest.fixture(scope="module")
def private_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _register_private_tasks()
    root = tmp_path_factory.mktemp("private")
    for model, (rev, scores) in PRIVATE.items():
        for task, score in scores.items():
            write_result(root, model, rev, task, score)
    (root / "private-mteb").mkdir()
    (root / "private-mteb" / "candidates.json").write_text(json.dumps(
        {"acme/minilm-ft": {"label": "ft", "public_name": MINILM}, BM25: {"public_name": "bm25"}}))
    return root


@pytest.fixture(scope="module")
def comp_v2(private_dir: Path):
    return build_comparison(private_dir, FolderSource(PUBLIC), "MTEB(eng, v2)")


def read_main_score(model: str, revision: str, task: str) -> float:
    """The leaderboard number straight from the JSON: main score, eval split, default subset (any file format)."""
    import mteb

    meta = mteb.get_task(task).metadata
    data = json.loads((PUBLIC / "results" / model.replace("/", "__") / revision / f"{task}.json").read_text())
    split = meta.eval_splits[0]
    if "scores" in data:
        entry = next(e for e in data["scores"][split] if e.get("hf_subset", "default") == "default")
        return float(entry.get("main_score", entry.get(meta.main_score)))
    return float(data[split][meta.main_score])  # files written before mteb 1.11


# --- snapshot -------------------------------------------------------------------------------------------


def test_snapshot_loads_offline_with_minilm_scifact(monkeypatch: pytest.MonkeyPatch) -> None:
    import mteb

    def no_network(*args, **kwargs):
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    raw = json.loads(SNAPSHOT_PATH.read_text())
    assert raw["source"]["commit"] == "f4cc6c8b"
    assert raw["models"][MINILM]["tasks"]["SciFact"]["scores"]["test"]["default"] == 0.64508
    res = SnapshotSource().load([mteb.get_task("SciFact")], [MINILM])
    [tr] = [tr for mr in res for tr in mr.task_results]
    assert tr.get_score() == pytest.approx(0.64508, abs=1e-12)
    assert {MINILM, BM25, "sentence-transformers/all-mpnet-base-v2", "BAAI/bge-small-en-v1.5"} <= set(raw["models"])
    for bench in ("MTEB(eng, v2)", "BEIR", "NanoBEIR"):
        assert raw["benchmarks"][bench]


def test_snapshot_comparison_without_public_folder(private_dir: Path) -> None:
    comp = build_comparison(private_dir, None, "BEIR")  # default source = shipped snapshot
    assert "snapshot" in comp.source
    assert comp.table.loc[MINILM, "SciFact"] == pytest.approx(0.64508)
    assert comp.private_tasks == [TASK_A, TASK_B]


@needs_public
def test_snapshot_regenerates_from_public_results(tmp_path: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("mps", REPO / "benchmarks" / "make_public_snapshot.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = tmp_path / "snap.json"
    assert mod.main(["--source", str(PUBLIC), "--out", str(out)]) == 0
    assert json.loads(out.read_text())["models"] == json.loads(SNAPSHOT_PATH.read_text())["models"]


# --- public cells ---------------------------------------------------------------------------------------


@needs_public
def test_every_public_cell_equals_the_json_file(comp_v2) -> None:
    t, revs = comp_v2.table, comp_v2.revisions.set_index(["model", "task"])["revision"]
    assert comp_v2.public_tasks == V2
    checked = 0
    for model in t.index:
        public_model = t.at[model, "public_name"]
        for task in V2:
            value = t.at[model, task]
            if pd.isna(value):  # missing: no file for this task in any revision folder
                if isinstance(public_model, str):
                    folder = PUBLIC / "results" / public_model.replace("/", "__")
                    assert not list(folder.glob(f"*/{task}.json")), (model, task)
                continue
            assert value == read_main_score(public_model, revs[(model, task)], task), (model, task)
            checked += 1
    assert checked > 150


@needs_public
def test_missing_is_nan_not_zero_and_flagged(comp_v2) -> None:
    t = comp_v2.table
    assert math.isnan(t.at["thenlper/gte-small", TASK_B])
    assert t.at["thenlper/gte-small", PRIVATE_FLAG]
    assert t.at["thenlper/gte-small", PRIVATE_MEAN] == pytest.approx(0.80)  # over the task it has
    assert not t.at[MINILM, PRIVATE_FLAG] and not t.at[MINILM, PUBLIC_FLAG]
    assert t[PRIVATE_MEAN].ne(0).all() and t[TASK_A].ne(0).all()  # public 0.0 exist (jina Touche v3): real scores
    # acme/no-public has no public entry: NaN everywhere public, no public rank, not flagged (nothing to average)
    row = t.loc["acme/no-public"]
    assert row[V2].isna().all() and math.isnan(row[PUBLIC_MEAN]) and pd.isna(row[PUBLIC_RANK])
    # a public model with only 2 of 10 MTEB(eng, v2) retrieval tasks: mean over those 2, flagged
    mq = "sentence-transformers/multi-qa-MiniLM-L6-cos-v1"
    assert t.loc[mq, V2].notna().sum() == 2 and t.at[mq, PUBLIC_FLAG]
    assert t.at[mq, PUBLIC_MEAN] == pytest.approx(t.loc[mq, V2].dropna().mean())
    assert math.isnan(t.at[mq, TASK_A])
    md = to_markdown(comp_v2)
    assert "—" in md and "*" in md and "mean over the tasks the model has" in md


# --- aggregates equal mteb's --------------------------------------------------------------------------------


@needs_public
def test_public_means_and_borda_equal_mteb_benchmark_table(tmp_path: Path) -> None:
    import mteb
    from mteb.benchmarks.benchmark import Benchmark

    comp = build_comparison(tmp_path, FolderSource(PUBLIC), "MTEB(eng, v2)")  # no private results
    tasks = [t for t in mteb.get_benchmark("MTEB(eng, v2)").tasks if t.metadata.type == "Retrieval"]
    bench = Benchmark(name="v2-retrieval", tasks=tasks)
    results = mteb.ResultCache(PUBLIC).load_results(tasks=bench)
    ref = bench._create_summary_table(results._to_results_df(bench.tasks)).df.to_pandas().set_index("Model")
    assert len(ref) >= 30
    t = comp.table.loc[ref.index]
    complete = ref["Mean (Task)"].notna()
    # same mteb mean; the pivot's column order (load order) moves the float sum by at most an ulp
    assert t.loc[complete, PUBLIC_MEAN].to_numpy() == pytest.approx(ref.loc[complete, "Mean (Task)"].to_numpy(), rel=1e-12)
    assert not t.loc[complete, PUBLIC_FLAG].any() and t.loc[~complete, PUBLIC_FLAG].all()
    assert (t[PUBLIC_RANK] == ref["Rank (Borda)"]).all()
    assert (t[BORDA] == ref["Rank (Borda)"]).all()


@needs_public
def test_private_and_overall_aggregates_equal_mteb_on_same_frame(comp_v2) -> None:
    import polars as pl
    from mteb.benchmarks._create_table import _create_summary_table
    from mteb.benchmarks.benchmark import BenchmarkAggregation as A

    long = comp_v2.long_frame
    aggs = (A.MEAN_TASK, A.PUBLIC_PRIVATE)
    ref = _create_summary_table(long, aggregations=aggs).df.to_pandas().set_index("Model")
    ref_priv = _create_summary_table(long.filter(~pl.col("is_public")), aggregations=aggs).df.to_pandas().set_index("Model")
    t = comp_v2.table.loc[ref.index]  # mteb drops models outside its registry; compare the ones it keeps
    assert {MINILM, BM25} <= set(ref.index)
    assert (t[BORDA] == ref["Rank (Borda)"]).all()
    ok = ~t[PRIVATE_FLAG] & ref["Mean (Private)"].notna()
    assert ok.sum() >= 5
    assert (t.loc[ok, PRIVATE_MEAN] == ref.loc[ok, "Mean (Private)"]).all()
    assert (t.loc[ref_priv.index, PRIVATE_RANK] == ref_priv["Rank (Borda)"]).all()
    both = ~t[PUBLIC_FLAG] & ref["Mean (Public)"].notna()
    assert t.loc[both, PUBLIC_MEAN].to_numpy() == pytest.approx(ref.loc[both, "Mean (Public)"].to_numpy(), rel=1e-12)


# --- correlation ----------------------------------------------------------------------------------------


@needs_public
def test_agreement_equals_scipy(comp_v2) -> None:
    a, t = comp_v2.agreement, comp_v2.table
    ok = t[t[PRIVATE_MEAN].notna() & t[PUBLIC_MEAN].notna() & ~t[PRIVATE_FLAG] & ~t[PUBLIC_FLAG]]
    assert sorted(a.models) == sorted(ok.index) and a.n == len(ok) >= 5
    assert "thenlper/gte-small" in a.excluded and "acme/no-public" not in a.models
    k, s = kendalltau(ok[PUBLIC_MEAN], ok[PRIVATE_MEAN]), spearmanr(ok[PUBLIC_MEAN], ok[PRIVATE_MEAN])
    assert a.kendall_tau == pytest.approx(k.statistic) and a.kendall_p == pytest.approx(k.pvalue)
    assert a.spearman_rho == pytest.approx(s.statistic) and a.spearman_p == pytest.approx(s.pvalue)
    assert f"Kendall tau {k.statistic:.2f}" in a.sentence and f"over {a.n} models" in a.sentence


@pytest.mark.parametrize(("tau", "n", "words"), [
    (0.75, 8, "agrees strongly"), (0.5, 8, "agrees moderately"), (0.21, 7, "agrees weakly"),
    (0.05, 8, "no clear relation"), (-0.1, 8, "no clear relation"), (-0.45, 8, "disagrees moderately"),
    (-0.9, 8, "disagrees strongly"), (0.9, 2, "too few"), (None, 0, "too few"),
])
def test_agreement_sentence_bands(tau: float | None, n: int, words: str) -> None:
    text = describe_agreement(tau, n)
    assert words in text and ("choose on your own data" in text or "confirm on your own data" in text)


# --- revisions and names --------------------------------------------------------------------------------


@needs_public
def test_revision_per_task_as_leaderboard_on_multi_revision_model(comp_v2) -> None:
    revs = comp_v2.revisions.set_index(["model", "task"])["revision"]
    e5 = "intfloat/e5-small-v2"  # main revision folder + 'external' folder
    assert revs[(e5, "ArguAna")] == "dca8b1a9dae0d4575df2bf423a5edb485a431236"
    assert revs[(e5, "FiQA2018")] == "external"  # only the external folder has it
    assert comp_v2.table.at[e5, "public_revision"] == "dca8b1a9da ×9, external ×1"
    assert "join_revisions" in " ".join(comp_v2.notes)


def test_revision_conflicts_resolved_like_join_revisions(tmp_path: Path, private_dir: Path) -> None:
    pub = tmp_path / "pub"
    write_result(pub, MINILM, MINILM_REV, "SciFact", 0.64508, mteb_version="1.12.75")  # registry's main revision
    write_result(pub, MINILM, "external", "SciFact", 0.99, mteb_version="2.0.0")
    write_result(pub, MINILM, "0123456789abcdef0123456789abcdef01234567", "SciFact", 0.98, mteb_version="2.1.0")
    local = "acme/local-only"  # not in mteb's registry: newest mteb version among real revisions wins
    write_result(pub, local, "aaaa", "SciFact", 0.5, mteb_version="1.20.0")
    write_result(pub, local, "bbbb", "SciFact", 0.6, mteb_version="2.5.0")
    write_result(pub, local, "external", "SciFact", 0.7, mteb_version=None)
    comp = build_comparison(private_dir, FolderSource(pub), ["SciFact"], models=[MINILM, local])
    revs = comp.revisions.set_index(["model", "task"])["revision"]
    assert revs[(MINILM, "SciFact")] == MINILM_REV and comp.table.at[MINILM, "SciFact"] == 0.64508
    assert revs[(local, "SciFact")] == "bbbb" and comp.table.at[local, "SciFact"] == 0.6


@needs_public
def test_public_name_from_candidates_and_override(comp_v2, private_dir: Path) -> None:
    t = comp_v2.table
    assert t.at["acme/minilm-ft", "public_name"] == MINILM
    assert t.loc["acme/minilm-ft", V2].equals(t.loc[MINILM, V2])
    assert t.at["acme/minilm-ft", PUBLIC_RANK] == t.at[MINILM, PUBLIC_RANK]  # stand-in does not shift the board
    assert t.at[BM25, "public_name"] == BM25  # 'bm25' is not a public entry: matched by its own name
    df = compare_table(private_dir, FolderSource(PUBLIC), ["SciFact"], models=["acme/no-public"],
                       public_names={"acme/no-public": "BAAI/bge-small-en-v1.5"})
    assert list(df.index) == ["acme/no-public"]
    rev = "5c38ec7c405ec4b44b94cc5a9bb96e735b38267a"
    assert df.at["acme/no-public", "SciFact"] == read_main_score("BAAI/bge-small-en-v1.5", rev, "SciFact")
    assert df.attrs["private_tasks"] == [TASK_A, TASK_B]


# --- outputs --------------------------------------------------------------------------------------------


def test_formats_plot_and_cli(private_dir: Path, tmp_path: Path) -> None:
    import typer
    from typer.testing import CliRunner

    from runners.cli.compare_command import compare

    comp = build_comparison(private_dir, None, [TASK_A, "SciFact", "NFCorpus"])
    assert comp.private_tasks == [TASK_A] and comp.public_tasks == ["SciFact", "NFCorpus"]
    data = json.loads(to_json(comp))
    assert data["rows"][0]["model"] == "acme/minilm-ft" and data["agreement"]["n"] == comp.agreement.n
    assert "SciFact rank" in to_csv(comp).splitlines()[0]
    png = plot_comparison(comp, tmp_path / "p.png")
    assert png.read_bytes()[:4] == b"\x89PNG"

    app = typer.Typer()
    app.command("compare")(compare)
    app.command("other")(lambda: None)
    runner = CliRunner()
    res = runner.invoke(app, ["compare", "--results", str(private_dir), "--tasks", "SciFact", "--format", "csv",
                              "--plot", str(tmp_path / "c.png")])
    assert res.exit_code == 0, res.output
    assert "SciFact" in res.stdout.splitlines()[0] and (tmp_path / "c.png").exists()
    res = runner.invoke(app, ["compare", "--results", str(private_dir), "--private-only", "--brief"])
    assert res.exit_code == 0 and "agreement" in res.stdout and "acme/minilm-ft" in res.stdout
    res = runner.invoke(app, ["compare", "--results", str(private_dir), "--public", str(tmp_path / "nope")])
    assert res.exit_code == 2


def test_mteb_cache_fails_fast_and_clearly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import mteb

    monkeypatch.setenv("MTEB_CACHE", str(tmp_path / "cache"))
    with pytest.raises(PublicSourceError, match="--download"):
        MtebCacheSource().load([mteb.get_task("SciFact")])
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(PublicSourceError, match="HF_HUB_OFFLINE"):
        MtebCacheSource(download=True).load([mteb.get_task("SciFact")])
    assert not (tmp_path / "cache").exists()  # nothing created, nothing downloaded


def test_public_rank_is_the_board_rank_when_only_some_models_are_shown(private_dir: Path) -> None:
    """The report asks for its own candidates only; their public rank must still be the leaderboard's (issue 19.6)."""
    board = build_comparison(private_dir, SnapshotSource(), "MTEB(eng, v2)")
    mine = build_comparison(private_dir, SnapshotSource(), "MTEB(eng, v2)", models=[MINILM, BM25],
                            include_public_only=False)
    assert {MINILM, BM25} <= set(mine.table.index) and len(mine.table) < len(board.table)
    for model in (MINILM, BM25):
        assert mine.table.loc[model, PUBLIC_RANK] == board.table.loc[model, PUBLIC_RANK]
    assert mine.table[PUBLIC_RANK].max() > 2  # not the rank among the two shown
    assert mine.public_board_size == board.public_board_size > 2
