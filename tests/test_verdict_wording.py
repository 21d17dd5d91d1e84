"""Issue 36, daily loop: verdicts a reader can act on. Two identical candidates print no "nan"; no bound is
"-0.000"; one p-value format in stats, experiments and the report; the power line names the pair it is for
(and does not move when a worse candidate joins the set); check's lines carry the two means."""

from __future__ import annotations

import numpy as np
import pandas as pd
from typer.testing import CliRunner

from conftest import TINY_YAML
from fake_results import scores, write_config, write_model
from runners.statistics import intervals as stats
from runners.statistics import power
from runners.analysis.gate.gate import regression_check
from runners.cli import app

runner = CliRunner()
TINY = "TinyKBRetrieval"


def test_no_negative_zero_and_no_nan_in_the_number_formats():
    assert stats.format_number(-0.0002) == "0.000" and stats.format_number(-0.0002, signed=True) == "+0.000"
    assert stats.format_score(-0.00001) == "0.0000"
    assert stats.format_diff(-0.0001, -0.0004, 0.0002) == "+0.000 [+0.000, +0.000]"
    assert stats.format_number(float("nan")) == "n/a" and stats.format_p(float("nan")) == "p=n/a"
    assert stats.format_number(-0.0126, signed=True) == "-0.013"


def test_gate_bound_just_below_zero_is_printed_as_zero():
    rng = np.random.default_rng(0)
    a = {f"q{i}": float(v) for i, v in enumerate(rng.random(30))}
    b = dict(a)
    for k in list(a)[:3]:
        b[k] = a[k] - 0.004
    b["q3"], b["q4"] = a["q3"] + 0.004, a["q4"] + 0.0015
    g = regression_check(a, b, "ndcg_at_10", n_resamples=2000)
    assert -0.0005 < g.bound < 0  # the case: a bound that rounds to zero from below
    assert "-0.000" not in g.reason and "at least 0.000 (95% one-sided bound)" in g.reason, g.reason


def test_check_line_carries_both_means_as_stats_prints_them():
    a = scores(0.7, 1, n=10, spread=0.1)
    b = {q: v - 0.2 for q, v in a.items()}
    g = regression_check(a, b, "ndcg_at_10", n_resamples=500)
    want = f"{stats.format_score(stats.mean_score(a))} → {stats.format_score(stats.mean_score(b))}"
    assert g.reason.startswith(f"FAIL: nDCG@10 {want}, dropped by 0.200"), g.reason
    assert (g.mean_baseline, g.mean_candidate) == (stats.mean_score(a), stats.mean_score(b))


def _identical_project(tmp_path):
    results = tmp_path / "results"
    same = scores(0.6, 1)
    write_model(results, "acme/one", TINY, same, "One")
    write_model(results, "acme/two", TINY, dict(same), "Two")
    write_model(results, "acme/three", TINY, scores(0.3, 3), "Three")
    return write_config(tmp_path / "bench.yaml", results, [str(TINY_YAML)],
                        [{"name": "acme/one", "label": "One"}, {"name": "acme/two", "label": "Two"},
                         {"name": "acme/three", "label": "Three"}])


def test_identical_candidates_print_no_nan(tmp_path):
    path = _identical_project(tmp_path)
    out = runner.invoke(app, ["stats", "-c", str(path), "-m", "ndcg_at_10"], terminal_width=400)
    assert out.exit_code == 0, out.output
    text = " ".join(out.output.split())
    assert "nan" not in text.lower() and "-0.000" not in text, text
    assert "no difference between One and Two on nDCG@10: identical on every one of the 10 queries" in text, text
    assert "the runner-up Two scores the same on every query: the two are identical on this test set" in text, text
    assert "One and Two (the best and the runner-up) score the same on every query" in text, text
    md = runner.invoke(app, ["stats", "-c", str(path), "-m", "ndcg_at_10", "--format", "markdown"],
                       terminal_width=400)
    assert md.exit_code == 0 and "nan" not in md.output.lower() and "| n/a" in md.output, md.output


def test_power_line_names_its_pair_and_ignores_a_worse_newcomer():
    rng = np.random.default_rng(5)
    ids = [f"q{i}" for i in range(60)]
    a = dict(zip(ids, rng.random(60)))
    b = {q: min(1.0, v + rng.normal(0.05, 0.1)) for q, v in a.items()}
    c = {q: v * 0.3 for q, v in a.items()}  # far worse, with a wide spread of differences
    _, two = power.power_line(stats.align_scores({"A": a, "B": b}), "ndcg_at_10")
    _, three = power.power_line(stats.align_scores({"A": a, "B": b, "C": c}), "ndcg_at_10")
    assert "between B and A (the best and the runner-up)" in two, two
    assert three == two
    d = np.array([b[q] - a[q] for q in ids])
    mdd = power.min_detectable_difference(d)  # the pair's own SD of differences
    assert f"smaller than {mdd:.3f} nDCG@10 between B and A" in two


def test_one_p_value_format_in_experiments_and_report():
    from runners.analysis.cost.experiments_table import format_experiment_table
    from runners.analysis.page import text

    for p in (0.0004, 0.004, 0.034, 0.5):
        assert text.p_value(p) == stats.format_p(p)
    df = pd.DataFrame([{"task": "T", "metric": "ndcg_at_10", "kind": "hybrid", "candidate": "X", "mean": 0.5,
                        "ci_low": 0.4, "ci_high": 0.6, "base": "Y", "diff": 0.1, "diff_ci_low": 0.05,
                        "diff_ci_high": 0.15, "p_holm": 0.0004, "significant": True}])
    table = format_experiment_table(df)
    assert "p<0.001 Holm *" in table and "p_holm=0.000" not in table, table


def test_shown_label_says_the_settings_the_label_does_not():
    from runners.results.variants import shown_label

    assert shown_label("MiniLM", "sentence-transformers/all-MiniLM-L6-v2@msl128") == "MiniLM (max_seq_length 128)"
    assert shown_label("all-MiniLM-L6-v2@msl128", "sentence-transformers/all-MiniLM-L6-v2@msl128") == \
        "all-MiniLM-L6-v2@msl128"  # the default label says it already
    assert shown_label("MiniLM +bm25 w0.5", "private-mteb/all-MiniLM-L6-v2@msl4+bm25-w0.5") == \
        "MiniLM +bm25 w0.5 (max_seq_length 4)"  # a hybrid built on the variant
    assert shown_label("M chunk=128/32", "acme/m@msl4@onnx-int8@chunk128-32") == \
        "M chunk=128/32 (max_seq_length 4, onnx int8)"
    assert shown_label("BM25", "mteb/baseline-bm25s") == "BM25"
    assert shown_label("one@x", "acme/one@x") == "one@x"  # an '@' of the model's own name is no setting


def test_a_label_swapped_to_its_variant_says_so_in_check_stats_and_history(tmp_path):
    """The config keeps the label `One` when its model gets `max_seq_length: 128` (as the gate needs: a label
    names a candidate across settings); check, stats and history print which setting ran."""
    import shutil

    from runners.analysis.gate.history import record_run
    from runners.analysis.gate.history_timeline import build_timelines, format_timelines

    results, history = tmp_path / "results", tmp_path / "history"
    write_model(results, "acme/one", TINY, scores(0.8, 1, spread=0.05), "One")
    record_run(history, results, [{"name": "acme/one", "label": "One", "task": TINY, "status": "ran"}],
               n_resamples=200)
    base = tmp_path / "base"
    shutil.copytree(results, base)
    write_model(results, "acme/one@msl128", TINY, scores(0.4, 1, spread=0.05), "One")
    records, _ = record_run(history, results, [{"name": "acme/one@msl128", "label": "One", "task": TINY,
                                                "status": "ran"}], n_resamples=200)
    path = write_config(tmp_path / "bench.yaml", results, [str(TINY_YAML)],
                        [{"name": "acme/one", "label": "One", "max_seq_length": 128}])
    path.write_text(path.read_text() + f"history: {history}\n")
    out = runner.invoke(app, ["check", "--baseline", str(base), "-c", str(path), "--resamples", "500"],
                        terminal_width=400)
    assert out.exit_code == 1, out.output
    assert f"{TINY}: One -> One (max_seq_length 128): FAIL: nDCG@10 " in out.output, out.output
    out = runner.invoke(app, ["stats", "-c", str(path), "-m", "ndcg_at_10"], terminal_width=400)
    assert out.exit_code == 0 and "│ One (max_seq_length 128) │" in out.output, out.output
    from runners.results.history_store import HistoryStore

    (tl,) = build_timelines(HistoryStore(history).read().records, n_resamples=200)
    assert [s.shown for s in tl.steps] == ["One", "One (max_seq_length 128)"]
    lines = format_timelines([tl])
    assert any(line.endswith("; as One (max_seq_length 128)") for line in lines), lines
    from runners.analysis.report import build_report, render
    from runners.config.benchmark import BenchmarkConfig

    md = render(build_report(BenchmarkConfig.from_file(path), with_public=False), "md")
    rows = [line for line in md.replace("\\", "").splitlines() if line.startswith("| 20")]  # over time: a row a record
    assert len(rows) == 2 and "| One |" in rows[0] and "| One (max_seq_length 128) |" in rows[1], rows


def test_growth_trend_and_cost_sentence_print_no_negative_zero():
    from runners.analysis.cost.growth_curve import per_doubling

    text = per_doubling(-0.00001, -0.00003, 0.00001, "nDCG@10")
    assert "-0.0000" not in text and text.startswith("+0.0000 nDCG@10 per doubling"), text
