"""Prediction-powered verdicts in `stats` and `check` (issue 47): a small task whose pool an LLM graded (simulated
grades, written as `labels judge` writes them) and a random sample of whose questions people judged whole
(`labels plan --order sample`, then grades merged into the task's labels). The printed figures equal `ppi_mean` /
`ppi_paired_difference` on arrays built here independently (pytrec_eval on the stored rankings), and `check` prints
the same line for the pair."""

from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from runners.cli import app
from runners.config.benchmark import BenchmarkConfig
from runners.execution.run import run_benchmark
from runners.statistics.prediction_powered import ppi_mean, ppi_paired_difference
from tests.conftest import REPO, TINY_YAML, write_benchmark

pytrec_eval = pytest.importorskip("pytrec_eval")
TASK = "TinyKBRetrieval"
flat = lambda out: " ".join(out.split())  # noqa: E731  (rich wraps long lines)


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    from custom_tasks.llm_labels import judged_document_text, llm_labels_path, text_sha
    from runners.config.label_policy import current_judge
    from runners.config.task_lookup import task_config_for
    from runners.labels.pool.judged import ranked_ids, stored_rankings, task_collection

    base = tmp_path_factory.mktemp("ppi")
    shutil.copytree(REPO / "tests" / "fixtures" / "kb_tiny", base / "kb_tiny")
    yaml_path = base / "configs" / "tasks" / "kb_tiny.yaml"
    yaml_path.parent.mkdir(parents=True)
    yaml_path.write_text(TINY_YAML.read_text().replace("../fixtures/kb_tiny", "../../kb_tiny"))
    path = write_benchmark(base, [str(yaml_path)], judge={"endpoint": "http://127.0.0.1:9/v1", "model": "sim-judge"},
                           labels={"use_llm": "prediction_powered"})
    cfg = BenchmarkConfig.from_file(path)
    run_benchmark(cfg, show_progress=False)
    names = [m.results_name for m in cfg.models]
    collection = task_collection(cfg.tasks[0], cfg, llm=False)
    qrels = collection.qrels["test"]
    rankings = {m: stored_rankings(cfg.results_path, m, TASK)[0] for m in names}
    pool = sorted({(q, d) for r in rankings.values() for q in qrels for d in ranked_ids(r.get(q, {}))[:10]
                   if d not in qrels[q]})
    # SIMULATED judge grades (not a model): seeded, so the LLM and the people disagree on some pairs
    rng = np.random.default_rng(3)
    llm = {p: int(rng.choice([0, 0, 0, 1, 2])) for p in pool}
    human = {p: (g if rng.random() < 0.7 else int(rng.integers(0, 3))) for p, g in llm.items()}
    tcfg = task_config_for(cfg.tasks[0], cfg)
    judge = current_judge(cfg, tcfg)
    rows = [{"split": "test", "query_id": q, "doc_id": d, "judge": judge, "source": "llm:sim-judge", "grade": g,
             "query_hash": text_sha(collection.queries[q]),
             "doc_hash": text_sha(judged_document_text(collection.corpus[d]))} for (q, d), g in llm.items()]
    llm_labels_path(yaml_path).write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = CliRunner().invoke(app, ["labels", "plan", "-c", str(path), "--order", "sample", "--questions", "6",
                                 "--raters", "ana", "--overlap", "0", "--stratify", "source"])
    assert r.exit_code == 0, r.output
    assert "random sample: 6 of" in flat(r.output) and "every pair of each sampled question" in flat(r.output)
    plan = json.loads((base / "labels" / TASK / "plan.json").read_text())
    assert plan["order"] == "sample" and len(plan["sample"]["questions"]) == 6
    sampled = plan["sample"]["questions"]
    planned = [tuple(k) for k in plan["raters"]["ana"]]
    assert {q for _, q, _ in planned} <= set(sampled)
    assert [sampled.index(q) for _, q, _ in planned] == sorted(sampled.index(q) for _, q, _ in planned)
    # people judge every planned pair of the first 5 sampled questions (the app's order), merged into the labels
    done = sampled[:5]
    with open(base / "kb_tiny" / "qrels" / "test.tsv", "a") as f:
        for _, q, d in planned:
            if q in done:
                f.write(f"{q}\t{d}\t{human[(q, d)]}\n")
    return path, cfg, rankings, qrels, llm, human, done, {(q, d) for _, q, d in planned}


def _metric(rankings, qrels, queries):
    ev = pytrec_eval.RelevanceEvaluator({q: {d: int(g) for d, g in qrels[q].items()} for q in queries},
                                        {"ndcg_cut.10"})
    got = ev.evaluate({q: {d: float(s) for d, s in rankings[q].items()} for q in queries if rankings.get(q)})
    return np.array([got.get(q, {}).get("ndcg_cut_10", 0.0) for q in queries])


def test_stats_prints_ppi_mean_of_the_same_arrays_and_check_the_same_line(judged):
    path, cfg, rankings, qrels, llm, human, done, planned = judged
    before = {q: {d: g for d, g in docs.items()} for q, docs in qrels.items()}  # the labels before the people
    after = {q: dict(docs) for q, docs in before.items()}
    for q, d in planned:
        if q in done:
            after[q][d] = human[(q, d)]
    predicted = {q: dict(docs) for q, docs in before.items()}
    for (q, d), g in llm.items():
        predicted[q][d] = g
    others = sorted(q for q in qrels if q not in done)
    y = {m: _metric(r, after, done) for m, r in rankings.items()}
    yhat = {m: _metric(r, predicted, done + others) for m, r in rankings.items()}
    kw = {"method": "auto", "resamples": 2000, "seed": 0}
    means = {m: ppi_mean(y[m], yhat[m][:5], yhat[m][5:], **kw) for m in rankings}
    a, b = list(rankings)
    diff = ppi_paired_difference(y[a], y[b], yhat[a][:5], yhat[b][:5], yhat[a][5:], yhat[b][5:], **kw)
    assert diff.n_labelled == 5 and diff.n_unlabelled == len(qrels) - 5

    stats = CliRunner().invoke(app, ["stats", "-c", str(path), "-m", "ndcg_at_10", "--resamples", "200"])
    assert stats.exit_code == 0, stats.output
    out = flat(stats.output)
    assert "prediction-powered (labels.use_llm: prediction_powered): llm:sim-judge grades on the pool, corrected " \
           "on 5 of the 6 questions of the random sample" in out, out
    from runners.statistics.per_query import label_of

    labels = {m: label_of(cfg.results_path, m) for m in rankings}
    for m, e in means.items():
        line = (f"{labels[m]}: nDCG@10 {e.estimate:.4f} [{e.low:.4f}, {e.high:.4f}] (lam {e.lam:.2f}, "
                f"{e.method}); LLM-only {e.llm_only[0]:.4f} [{e.llm_only[1]:.4f}, {e.llm_only[2]:.4f}]; human-only "
                f"{e.human_only[0]:.4f} [{e.human_only[1]:.4f}, {e.human_only[2]:.4f}] (n=5)")
        assert line in out, (line, out[out.find("prediction-powered ("):])
    pair = re.search(rf"{re.escape(labels[a])} - {re.escape(labels[b])}: (\S+) \[(\S+), (\S+)\]: ([^;]+);", out)
    assert pair, out
    assert [float(x.rstrip(",")) for x in pair.groups()[:3]] == pytest.approx(
        [diff.estimate, diff.low, diff.high], abs=5e-5)
    verdict = pair.group(4)
    assert verdict == (f"{labels[a]} beats {labels[b]}" if diff.low > 0 else f"{labels[b]} beats {labels[a]}"
                       if diff.high < 0 else verdict)
    assert ("open:" in verdict or "tied:" in verdict) == (diff.low <= 0 <= diff.high)
    as_json = json.loads(CliRunner().invoke(app, ["stats", "-c", str(path), "--resamples", "200", "--format",
                                                  "json"]).output)
    got = as_json["prediction_powered"][TASK]
    assert got["judged"] == 5 and got["pairs"][0]["estimate"] == pytest.approx(diff.estimate, abs=1e-12)
    check = CliRunner().invoke(app, ["check", "-c", str(path), "--baseline", labels[b], "--candidate", labels[a],
                                     "--resamples", "200"])
    assert check.exit_code in (0, 1), check.output
    assert pair.group(0) in flat(check.output)  # one verdict: the same characters
    assert "labels.use_llm: prediction_powered" in flat(check.output)
    from runners.analysis.report import build_report, render

    md = flat(render(build_report(BenchmarkConfig.from_file(path), with_public=False), "md").replace("\\", ""))
    assert "labels.use_llm: prediction_powered" in md and pair.group(4) in md
    assert f"{diff.estimate:+.4f} [{diff.low:+.4f}, {diff.high:+.4f}]" in md


def test_without_a_sample_stats_says_what_to_do(judged, tmp_path):
    path, *_ = judged
    plan = path.parent / "labels" / TASK / "plan.json"
    kept = plan.read_text()
    plan.unlink()
    try:
        out = flat(CliRunner().invoke(app, ["stats", "-c", str(path), "--resamples", "200"]).output)
        assert "no verdicts yet: no random sample of questions planned: `private-mteb labels plan" in out
    finally:
        plan.write_text(kept)


def test_without_the_judges_grades_stats_says_what_to_do(judged):
    from custom_tasks.llm_labels import llm_labels_path

    path, cfg, *_ = judged
    grades = llm_labels_path(path.parent / "configs" / "tasks" / "kb_tiny.yaml")
    kept = grades.read_text()
    grades.unlink()
    try:
        out = flat(CliRunner().invoke(app, ["stats", "-c", str(path), "--resamples", "200"]).output)
        assert "no verdicts yet: no grades of llm:sim-judge" in out and "labels judge -c CONFIG" in out
    finally:
        grades.write_text(kept)


def test_the_sample_is_seeded_and_stratified():
    from runners.labels.pool.question_sample import allocate, draw_sample

    qs = [f"q{i}" for i in range(30)]
    strata = {q: "a" if i < 20 else "b" for i, q in enumerate(qs)}
    first, share = draw_sample(qs, 9, 4, strata)
    assert share == {"a": 6, "b": 3} and draw_sample(qs, 9, 4, strata)[0] == first
    assert sum(strata[q] == "b" for q in first) == 3 and len(set(first)) == 9
    assert draw_sample(qs, 9, 5, strata)[0] != first
    assert allocate({"a": 1, "b": 99}, 10) == {"a": 1, "b": 9}  # every stratum represented
    assert allocate({"a": 3, "b": 4}, 50) == {"a": 3, "b": 4}


def test_the_sample_plan_deals_whole_questions_in_the_drawn_order():
    from runners.labels.judging.plan import make_sample_plan

    keys = [("test", q, d) for q in ("q9", "q2", "q5", "q1") for d in ("a", "b", "c")[: 1 + int(q[1]) % 3]]
    share = make_sample_plan(keys, ["ana", "bo"], overlap=0.25)  # the first of 4 questions to both
    for r, ks in share.items():
        assert ks == [k for k in keys if k in set(ks)]  # the drawn order kept
        for q in {k[1] for k in ks}:
            assert [k for k in ks if k[1] == q] == [k for k in keys if k[1] == q]  # a question whole, to one rater
    assert {k[1] for k in share["ana"]} & {k[1] for k in share["bo"]} == {"q9"}
    assert sorted(set(share["ana"]) | set(share["bo"])) == sorted(keys)
