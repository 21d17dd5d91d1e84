"""Issue 28: one candidate set everywhere. `stats`, the report, `labels judged`, `inspect`, `experiments` and
`check -c` compare the config's models AND experiment candidates; a best sentence names the set it compared."""

from __future__ import annotations

import json

import yaml
from typer.testing import CliRunner

from conftest import TINY_YAML
from fake_results import scores, write_model
from runners.cli import app

runner = CliRunner()
TINY = "TinyKBRetrieval"


def hybrid_project(tmp_path):
    """models acme/one (dense) and bm25, one hybrid experiment of the two that beats both of its parts."""
    from runners.config.benchmark import BenchmarkConfig
    from runners.config.experiments import plan_experiments

    path = tmp_path / "bench.yaml"
    results = tmp_path / "results"
    path.write_text(yaml.safe_dump({
        "name": "t", "tasks": [str(TINY_YAML)], "results_dir": str(results), "stats": {"resamples": 500},
        "models": [{"name": "acme/one", "label": "One"}, {"name": "bm25", "label": "BM25"}],
        "experiments": [{"type": "hybrid", "dense": "acme/one", "fusion": "rrf", "k": [60]}]}))
    (plan,) = plan_experiments(BenchmarkConfig.from_file(path))
    write_model(results, "acme/one", TINY, scores(0.55, 1), "One")
    write_model(results, "mteb/baseline-bm25s", TINY, scores(0.5, 2), "BM25")
    write_model(results, plan.name, TINY, scores(0.95, 3, spread=0.04), plan.label)
    return path, plan


def test_stats_best_sentence_names_the_hybrid_and_the_set(tmp_path):
    path, plan = hybrid_project(tmp_path)
    out = runner.invoke(app, ["stats", "-c", str(path), "-m", "ndcg_at_10"])
    assert out.exit_code == 0, out.output
    best = next(line for line in out.output.splitlines() if line.startswith("best:"))
    assert f"best by nDCG@10 among the 3 candidates of bench.yaml: {plan.label} at" in best, best
    assert "detectably better than the runner-up One" in best, best
    doc = json.loads(runner.invoke(app, ["stats", "-c", str(path), "-m", "ndcg_at_10", "--format", "json"]).output)
    assert doc["candidates"]["names"] == ["acme/one", "mteb/baseline-bm25s", plan.name]
    assert plan.label in doc["tasks"][0]["best"]


def test_models_narrows_the_set_and_the_output_says_so(tmp_path):
    path, plan = hybrid_project(tmp_path)
    out = runner.invoke(app, ["stats", "-c", str(path), "-m", "ndcg_at_10", "--models", "One,BM25"])
    assert out.exit_code == 0, out.output
    assert "compared: 2 of the 3 candidates of bench.yaml (--models)" in out.output
    best = next(line for line in out.output.splitlines() if line.startswith("best:"))
    assert "among the 2 candidates chosen with --models (3 in bench.yaml): One" in best, best
    every = runner.invoke(app, ["stats", "-c", str(path), "-m", "ndcg_at_10", "--models", f"One,BM25,{plan.label}"])
    assert "compared:" not in every.output and "among the 3 candidates of bench.yaml" in every.output
    exp = runner.invoke(app, ["experiments", "-c", str(path), "--models", "One,BM25", "-m", "ndcg_at_10"])
    assert exp.exit_code == 0 and "compared: 2 of the 3 candidates of bench.yaml (--models)" in exp.output, exp.output


def test_report_summary_names_the_same_best_and_set(tmp_path):
    from runners.analysis.report import build_report, render
    from runners.config.benchmark import BenchmarkConfig

    path, plan = hybrid_project(tmp_path)
    md = render(build_report(BenchmarkConfig.from_file(path), with_public=False), "md")
    assert f"among the 3 candidates of bench.yaml with results, the best is {plan.label}" in md


def test_check_with_a_config_checks_its_candidates_only(tmp_path):
    import shutil

    path, plan = hybrid_project(tmp_path)
    results = tmp_path / "results"
    write_model(results, "acme/other-project", TINY, scores(0.7, 9), "Other")
    base = tmp_path / "base"
    shutil.copytree(results, base)
    write_model(results, "acme/other-project", TINY, scores(0.1, 9), "Other")  # another config's model dropped
    out = runner.invoke(app, ["check", "--baseline", str(base), "-c", str(path), "--resamples", "200"])
    assert out.exit_code == 0, out.output
    assert f"{plan.label} -> {plan.label}: PASS" in out.output and "Other" not in out.output


def test_inspect_and_labels_judged_default_to_the_configs_candidates(tmp_path):
    from runners.results.store import atomic_write_json, find_run

    path, plan = hybrid_project(tmp_path)
    results = tmp_path / "results"
    write_model(results, "acme/other-project", TINY, scores(0.7, 9), "Other")
    for name in ("acme/one", "mteb/baseline-bm25s", plan.name, "acme/other-project"):
        atomic_write_json(find_run(results, name, TINY) / "rankings_test.json.gz",
                          {"top_k": 100, "subsets": {"default": {"q1": {"d1": 1.0}}}}, compress=True)
    doc = json.loads(runner.invoke(app, ["inspect", "query", "q1", "-c", str(path), "--format", "json"]).output)
    assert [c["label"] for c in doc["candidates"]] == ["One", "BM25", plan.label]
    judged = json.loads(runner.invoke(app, ["labels", "judged", "-c", str(path), "--format", "json"]).output)
    assert {r["candidate"] for r in judged["tasks"][0]["rows"]} == {"One", "BM25", plan.label}
    narrowed = runner.invoke(app, ["labels", "judged", "-c", str(path), "--models", "One"])
    assert narrowed.exit_code == 0 and "compared: 1 of the 3 candidates of bench.yaml (--models)" in narrowed.output


def test_check_follows_a_candidate_changed_under_its_label(tmp_path):
    """MiniLM-like `acme/one` set to max_seq_length: 4 is filed as acme/one@msl4 under the same label; the old
    setting's (unchanged) results stay in the folder. check -c compares the label's baseline with the config's
    current candidate and fails on its drop; before, it compared the stale results (PASS, all tied) or, by
    config names, skipped the changed candidate. Its best line is stats' best sentence."""
    import re
    import shutil

    path = tmp_path / "bench.yaml"
    results = tmp_path / "results"
    path.write_text(yaml.safe_dump({
        "name": "t", "tasks": [str(TINY_YAML)], "results_dir": str(results), "stats": {"resamples": 500},
        "models": [{"name": "acme/one", "label": "One", "max_seq_length": 4}, {"name": "bm25", "label": "BM25"}]}))
    write_model(results, "acme/one", TINY, scores(0.9, 1, spread=0.05), "One")
    write_model(results, "mteb/baseline-bm25s", TINY, scores(0.5, 2), "BM25")
    base = tmp_path / "base"
    shutil.copytree(results, base)
    write_model(results, "acme/one@msl4", TINY, scores(0.3, 1, spread=0.05), "One")
    out = runner.invoke(app, ["check", "--baseline", str(base), "-c", str(path), "--resamples", "500"],
                        terminal_width=400)
    assert out.exit_code == 1, out.output
    text = " ".join(out.output.split())
    bound = re.search(r"One -> One \(max_seq_length 4\): FAIL: nDCG@10 0\.9010 → 0\.3010, dropped by \S+ \(> allowed 0\.010\), at least (\S+) "
                      r"\(95% one-sided", text)
    assert bound and float(bound.group(1)) > 0, text
    assert "BM25 -> BM25: PASS" in text, text
    stats = runner.invoke(app, ["stats", "-c", str(path), "-m", "ndcg_at_10"], terminal_width=400)
    best = next(line for line in stats.output.splitlines() if line.startswith("best:"))[len("best: "):].strip()
    assert f"{TINY}: {best}" in text, (best, text)
    assert best.startswith("best by nDCG@10 among the 2 candidates of bench.yaml: BM25 at"), best
