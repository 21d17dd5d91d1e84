"""Corpus-growth curve: nested subsets keep every labelled document, fraction 1.0 equals the plain run
exactly with nothing encoded again, and on a collection built for it the curve falls with size."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from typer.testing import CliRunner

from custom_tasks.errors import ConfigError
from runners.analysis.cost.experiments_table import experiment_table
from runners.analysis.cost.growth_curve import format_growth, growth_curve
from runners.analysis.report import build_report, render
from runners.analysis.page.blocks import Figure
from runners.cli import app
from runners.config.benchmark import BenchmarkConfig
from runners.config.experiments import growth_entries, plan_experiments
from runners.execution.measure.distractors import load_distractors
from runners.execution.measure.growth import nested_subsets, run_growth
from runners.execution.run import run_benchmark
from runners.results.store import load_per_query, read_json
from tests.conftest import REPO, write_benchmark
from tests.growth_fixture import write_distractor_corpus, write_growth_task

BOW = {"name": "test/bow", "factory": "tests.growth_fixture:make_encoder", "revision": "r1"}


def test_subsets_are_nested_and_keep_every_labelled_document():
    ids = [f"d{i}" for i in range(100)]
    labelled = {"d3", "d50", "d99"}
    subs = nested_subsets(ids, labelled, [0.1, 0.5, 1.0], repeats=2, seed=0)
    assert [(f, r) for f, r, _ in subs] == [(0.1, 0), (0.5, 0), (1.0, 0), (0.1, 1), (0.5, 1)]
    by = {(f, r): s for f, r, s in subs}
    for r in (0, 1):
        assert labelled <= set(by[(0.1, r)]) <= set(by[(0.5, r)]) <= set(ids)
        assert len(by[(0.1, r)]) == 10 and len(by[(0.5, r)]) == 50
    assert by[(0.1, 0)] != by[(0.1, 1)]  # repeats draw other distractors
    assert by[(1.0, 0)] == ids  # the corpus' own order
    assert nested_subsets(ids, labelled, [0.1, 1.0], 2, 0) == nested_subsets(ids, labelled, [0.1, 1.0], 2, 0)
    # a fraction below the labelled share keeps the labelled documents only
    assert set(nested_subsets(ids, set(ids[:30]), [0.1, 1.0], 1, 0)[0][2]) == set(ids[:30])


def test_growth_entry_is_validated_and_plans_no_candidate(tmp_path):
    bad = write_benchmark(tmp_path, ["T"], experiments=[{"type": "growth", "model": "m", "fractions": [0.5]}])
    with pytest.raises(ConfigError, match=r"experiments\[0\] \(growth\): .*must include 1.0"):
        growth_entries(BenchmarkConfig.from_file(bad))
    ok = BenchmarkConfig.from_file(write_benchmark(tmp_path, ["T"], experiments=[
        {"type": "growth", "model": "m", "fractions": [1.0, 0.25], "repeats": 2}]))
    assert growth_entries(ok)[0].fractions == [0.25, 1.0] and plan_experiments(ok) == []


def test_curve_equals_plain_run_at_full_corpus_and_falls_with_size(tmp_path):
    task_yaml = write_growth_task(tmp_path)
    cfg = BenchmarkConfig.from_file(write_benchmark(
        tmp_path, [str(task_yaml)], models=[BOW], stats={"metrics": ["ndcg_at_10", "recall_at_10"]},
        experiments=[{"type": "growth", "model": "test/bow", "fractions": [0.1, 0.25, 0.5, 1.0], "repeats": 3}]))
    run_benchmark(cfg, show_progress=False)
    records = run_growth(cfg)
    assert [(r.status, r.encoded) for r in records] == [("ran", 0)]  # every vector from the plain run's cache
    data = read_json(records[0].path)
    assert "topic" not in records[0].path.read_text()  # ids and numbers only, never text
    full = next(p for p in data["points"] if p["fraction"] == 1.0)
    for metric in ("ndcg_at_10", "recall_at_10"):
        plain = load_per_query(cfg.results_path, "test/bow", "GrowthKBRetrieval", metric)
        assert pd.Series(full["per_query"][metric]).sort_index().equals(plain.rename(None))  # exactly
    curve = growth_curve(data, "ndcg_at_10", n_resamples=500)
    means = curve.points["mean"].to_numpy()
    assert list(curve.points["n_docs"]) == [42, 105, 210, 420]
    assert means[0] > means[-1] + 0.05 and all(np.diff(means) <= 0.01)  # monotone in expectation
    assert curve.slope_per_doubling < 0 and curve.slope_ci[1] < 0
    ext = curve.extrapolated.set_index("multiple")
    assert ext.loc[10.0, "mean"] < ext.loc[2.0, "mean"] < means[-1]
    assert ext.loc[2.0, "ci_low"] <= ext.loc[2.0, "mean"] <= ext.loc[2.0, "ci_high"]
    text = format_growth(curve)
    assert "per doubling" in text and "extrapolated at 10x (4200 docs)" in text
    # stored curves are reused
    assert [r.status for r in run_growth(cfg)] == ["skipped"]


def test_clipped_fractions_fit_no_trend():
    record = {"model": "m", "task": "T", "n_corpus": 10, "n_labelled": 9, "points": [
        {"fraction": f, "repeat": 0, "n_docs": n, "per_query": {"ndcg_at_10": {"q1": s, "q2": s}}}
        for f, n, s in [(0.5, 9, 0.8), (1.0, 10, 0.7)]]}
    curve = growth_curve(record, n_resamples=100)
    assert math.isnan(curve.slope_per_doubling) and curve.extrapolated["mean"].isna().all()
    assert any("clipped" in n for n in curve.notes)


def _distractor_cfg(tmp_path, fractions, **entry):
    task_yaml = write_growth_task(tmp_path, n_distractors=100)
    write_distractor_corpus(tmp_path)
    return BenchmarkConfig.from_file(write_benchmark(
        tmp_path, [str(task_yaml)], models=[BOW], stats={"metrics": ["ndcg_at_10"], "resamples": 500},
        experiments=[{"type": "growth", "model": "test/bow", "fractions": fractions, "repeats": 2,
                      "distractors": "distractors.jsonl", **entry}]))


def test_distractors_extend_the_curve_beyond_the_corpus(tmp_path):
    cfg = _distractor_cfg(tmp_path, [0.25, 0.5, 1.0, 2.0, 3.0])
    run_benchmark(cfg, show_progress=False)
    first = run_growth(cfg)
    # the distractor texts some repeat used were encoded once, through the model's embedding cache
    extra = list(load_distractors(tmp_path / "distractors.jsonl", {}, None).docs)
    used = {d for _, _, ids in nested_subsets([f"c{i}" for i in range(120)], set(), [1.0, 3.0], 2, 0, extra)
            for d in ids if d in extra}
    assert first[0].status == "ran" and first[0].encoded == len(used) > 240
    assert [(r.status, r.encoded) for r in run_growth(cfg, force=True)] == [("ran", 0)]  # then none
    data = read_json(first[0].path)
    assert data["n_distractors"] == 300 and data["params"]["distractors"]["path"] == "distractors.jsonl"
    assert sorted({(p["fraction"], p["n_docs"]) for p in data["points"]}) == [
        (0.25, 30), (0.5, 60), (1.0, 120), (2.0, 240), (3.0, 360)]
    assert sorted((p["fraction"], p["repeat"]) for p in data["points"] if p["fraction"] > 1) == [
        (2.0, 0), (2.0, 1), (3.0, 0), (3.0, 1)]  # repeats draw other distractors beyond 1.0 too
    full = next(p for p in data["points"] if p["fraction"] == 1.0)
    plain = load_per_query(cfg.results_path, "test/bow", "GrowthKBRetrieval", "ndcg_at_10")
    assert pd.Series(full["per_query"]["ndcg_at_10"]).sort_index().equals(plain.rename(None))  # exactly
    curve = growth_curve(data, "ndcg_at_10", n_resamples=300)
    means = curve.points.set_index("fraction")["mean"]
    assert means[3.0] < means[1.0] - 0.02  # measured beyond the corpus, and it keeps falling
    ext = curve.extrapolated.set_index("multiple")
    assert bool(ext.loc[2.0, "measured_range"]) and not bool(ext.loc[10.0, "measured_range"])
    text = format_growth(curve)
    assert "fitted at 2x (240 docs)" in text and "extrapolated at 10x (1200 docs)" in text
    assert "distractors.jsonl (300 available)" in text
    # the experiments table and command show the curve from the stored record (nothing recomputed)
    df = experiment_table(cfg.results_path, cfg)
    g = df[df.kind == "growth"]
    assert list(zip(g.fraction, g.point)) == [(0.25, "measured"), (0.5, "measured"), (1.0, "measured"),
                                              (2.0, "measured"), (3.0, "measured"), (2.0, "fitted"),
                                              (10.0, "extrapolated")]
    assert np.allclose(g[g.point == "measured"]["mean"], curve.points["mean"])
    assert (g.ci_low <= g["mean"]).all() and (g["mean"] <= g.ci_high).all() and (g.slope_per_doubling < 0).all()
    out = CliRunner().invoke(app, ["experiments", "-c", str(cfg.path)])
    assert out.exit_code == 0, out.output
    assert "bow growth: metric per corpus size, trend -" in out.output
    assert "beyond 1x: the corpus plus documents of distractors.jsonl" in out.output
    assert re.search(r"10x +1200 docs  0\.\d{4} \[0\.\d{4}, 0\.\d{4}\] extrapolated", out.output)
    out = CliRunner().invoke(app, ["growth", "-c", str(cfg.path)])
    assert out.exit_code == 0 and "stored" in out.output and "fitted at 2x (240 docs)" in out.output, out.output
    # the report's experiments section: a growth figure (inline SVG, nothing fetched) and the same numbers
    report = build_report(cfg, with_public=False)
    html, md = render(report, "html"), render(report, "md")
    sec = next(s for s in report.sections if s.key == "experiments").subsections[0]
    assert any(isinstance(b, Figure) and "corpus grows" in b.caption for b in sec.blocks)
    assert "<svg" in html and "<script" not in html.lower() and "http://" not in html and "https://" not in html
    ten = g[g.fraction == 10.0].iloc[0]
    md = _unescaped(md)  # report.md escapes brackets and backticks (user text may hold Markdown)
    assert f"| bow growth | 10x | 1,200 | {ten['mean']:.4f} [{ten.ci_low:.4f}, {ten.ci_high:.4f}] | extrapolated |" in md
    assert "per doubling of the corpus" in md and "documents of distractors.jsonl" in md


def _unescaped(md: str) -> str:
    """report.md as read: the backslash escapes of runners/analysis/markdown_text.py removed."""
    return re.sub(r"\\([\\`*_\[\]|~$#+=.)-])", r"\1", md)


def test_distractor_subsets_are_nested_beyond_the_corpus():
    ids = [f"c{i}" for i in range(10)]
    extra = [f"distractor:x{i}" for i in range(30)]
    subs = {(f, r): s for f, r, s in nested_subsets(ids, {"c1"}, [0.5, 1.0, 1.5, 3.0], 2, 0, extra)}
    for r in (0, 1):
        assert set(ids) < set(subs[(1.5, r)]) < set(subs[(3.0, r)])
        assert len(subs[(1.5, r)]) == 15 and len(subs[(3.0, r)]) == 30
        assert subs[(3.0, r)][:10] == ids  # the corpus first, in its own order
    assert subs[(1.5, 0)] != subs[(1.5, 1)]
    with pytest.raises(ValueError, match="needs 40 distractor documents, only 30"):
        nested_subsets(ids, set(), [1.0, 5.0], 1, 0, extra)


def test_report_says_when_a_growth_curve_is_missing(tmp_path):
    cfg = _distractor_cfg(tmp_path, [1.0, 2.0])
    run_benchmark(cfg, show_progress=False)  # the plain run only: no `private-mteb growth` yet
    md = _unescaped(render(build_report(cfg, with_public=False), "md"))
    assert "No stored corpus-growth curve for GrowthKBRetrieval on this data: run `private-mteb growth -c bench.yaml`" in md
    assert experiment_table(cfg.results_path, cfg).kind.eq("model").all()


def test_distractor_config_errors_name_the_file(tmp_path):
    bad = write_benchmark(tmp_path, ["T"], experiments=[{"type": "growth", "model": "m", "fractions": [1.0, 2.0]}])
    with pytest.raises(ConfigError, match=r"bench\.yaml.*experiments\[0\] \(growth\): fractions \[2\.0\] above 1\.0 "
                                          r"need 'distractors:'"):
        growth_entries(BenchmarkConfig.from_file(bad))
    cfg = _distractor_cfg(tmp_path, [1.0, 4.0])  # 120 documents + 360 distractors: the file has 300
    with pytest.raises(ConfigError, match=r"bench\.yaml.*fraction 4 needs 360 distractor documents .* has 300: "
                                          r"use fractions up to 3\.5"):
        run_growth(cfg)
    cfg = _distractor_cfg(tmp_path, [1.0, 2.0], distractors="nowhere.jsonl")
    with pytest.raises(ConfigError, match=r"bench\.yaml.*nowhere\.jsonl not found"):
        run_growth(cfg)
    cfg = _distractor_cfg(tmp_path, [1.0, 2.0], distractors="growth_kb.yaml")
    with pytest.raises(ConfigError, match=r"distractors names the task itself"):
        run_growth(cfg)
    # the command: one line naming the file, exit 2, no traceback
    out = CliRunner().invoke(app, ["growth", "-c", str(_distractor_cfg(tmp_path, [1.0, 4.0]).path)])
    assert out.exit_code == 2 and "Traceback" not in out.output, out.output
    assert re.fullmatch(r"error: .*bench\.yaml: experiments\[0\] \(growth\): fraction 4 needs 360 .*\n", out.output)


def test_distractor_ids_are_prefixed_and_clashes_rejected(tmp_path):
    path = write_distractor_corpus(tmp_path, n_docs=3)
    found = load_distractors(path, {"d0": {}, "d1": {}}, tmp_path / "bench.yaml")
    assert list(found.docs) == ["distractor:d0", "distractor:d1", "distractor:d2"]  # corpus ids d0, d1 kept apart
    with pytest.raises(ConfigError, match=r"bench\.yaml.*corpus ids \['distractor:d1'\] clash"):
        load_distractors(path, {"distractor:d1": {}}, tmp_path / "bench.yaml")
    # a task YAML names another collection: its documents are the distractors, its labels are ignored
    other = write_growth_task(tmp_path / "other", n_queries=5, n_distractors=7)
    assert len(load_distractors(other, {}, None).docs) == 12


def test_distractors_are_read_once_per_run(tmp_path, monkeypatch):
    from runners.execution.measure import distractors as mod

    reads = []
    real = mod._read_docs
    monkeypatch.setattr(mod, "_read_docs", lambda p: reads.append(p) or real(p))
    path = write_distractor_corpus(tmp_path, n_docs=3)
    seen: dict = {}  # one growth run: every (entry, task) shares one read
    first = load_distractors(path, {}, None, seen)
    assert load_distractors(path, {"c": {}}, None, seen) == first and len(reads) == 1
    with pytest.raises(ConfigError, match="clash"):  # the id-clash check still runs on a shared read
        load_distractors(path, {"distractor:d0": {}}, None, seen)
    write_distractor_corpus(tmp_path, n_docs=4)  # edited before the next run: read again
    again = load_distractors(path, {}, None, {})
    assert len(again.docs) == 4 and again.content_hash != first.content_hash and len(reads) == 2


def test_growth_demo_config_has_enough_distractors():
    from custom_tasks.task import get_task
    from runners.config.experiments import distractors_path
    from runners.execution.measure.growth import extra_needed

    cfg = BenchmarkConfig.from_file(REPO / "configs/benchmarks/growth-demo.yaml")
    (entry,) = growth_entries(cfg)
    corpus = get_task(cfg.tasks[0]).collection.corpus
    found = load_distractors(distractors_path(cfg, entry), corpus, cfg.path)
    assert extra_needed(entry.fractions[-1], len(corpus)) <= len(found.docs) == 400


def test_stored_growth_matches_the_entry_and_takes_the_newest(tmp_path):
    import os

    from runners.results.growth_store import growth_path, stored_growth
    from runners.results.store import atomic_write_json

    base = {"fractions": [1.0, 2.0], "repeats": 1, "seed": 0, "metrics": ["ndcg_at_10"], "v": 2}
    old = {**base, "distractors": {"path": "d.jsonl", "hash": "aaa"}}
    new = {**base, "distractors": {"path": "d.jsonl", "hash": "bbb"}}  # the file changed: computed again
    other = {**base, "distractors": {"path": "e.jsonl", "hash": "ccc"}}
    for i, params in enumerate([old, new, other]):
        p = growth_path(tmp_path, "org/m", "r1", "T", "ds1", params)
        atomic_write_json(p, {"params": params, "n": i})
        os.utime(p, (1000 + i, 1000 + i))
    match = {"fractions": [1.0, 2.0], "repeats": 1, "seed": 0, "distractors": {"path": "d.jsonl"}}
    assert stored_growth(tmp_path, "org/m", "T", match)["n"] == 1
    assert stored_growth(tmp_path, "org/m", "T", match, "ds1")["n"] == 1
    assert stored_growth(tmp_path, "org/m", "T", match, "ds2") is None  # another data revision: not current
    assert stored_growth(tmp_path, "org/m", "T", {**match, "distractors": None}) is None
    assert stored_growth(tmp_path, "org/m", "T", {**match, "distractors": {"path": "e.jsonl"}})["n"] == 2
