"""`labels status` on a real run: today's difference is mteb's stored per-query nDCG@10, and the CLI's verdicts
follow the bounds (issue 39)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from runners.config.task_lookup import task_config_for
from runners.labels.pool.judged import ranked_ids, stored_rankings, task_collection
from runners.labels.raters.ratings import judging_dir
from runners.labels.verdicts.label_status import label_status
from runners.statistics.per_query import load_score_map
from runners.labels.pool.verdict_bounds import ndcg
from runners.cli import app
from runners.config.benchmark import BenchmarkConfig
from runners.execution.run import run_benchmark
from tests.conftest import write_benchmark

TASK = "TinyKBRetrieval"


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    import shutil

    from tests.conftest import REPO, TINY_YAML

    base = tmp_path_factory.mktemp("status-ran")
    shutil.copytree(REPO / "tests" / "fixtures" / "kb_tiny", base / "kb_tiny")
    yaml_path = base / "kb_tiny.yaml"
    yaml_path.write_text(TINY_YAML.read_text().replace("../fixtures/kb_tiny", "kb_tiny"))
    path = write_benchmark(base, [str(yaml_path)])
    cfg = BenchmarkConfig.from_file(path)
    run_benchmark(cfg, show_progress=False)
    return cfg, path


def test_ndcg_and_difference_now_equal_the_stored_per_query_scores(ran):
    cfg, _ = ran
    qrels = task_collection(cfg.tasks[0], cfg).qrels["test"]
    names = [m.results_name for m in cfg.models]
    stored = {}
    for m in names:
        rankings, _ = stored_rankings(cfg.results_path, m, TASK)
        stored[m] = load_score_map(cfg.results_path, m, TASK)
        for q in qrels:  # every evaluated query, scored from the stored top-k as mteb scored it
            assert ndcg(ranked_ids(rankings.get(q, {})), qrels[q], 10) == pytest.approx(stored[m][q], abs=1e-12)
    st = label_status(cfg, names)
    (pb,) = st.pairs
    mean = sum(stored[pb.a][q] - stored[pb.b][q] for q in qrels) / len(qrels)
    assert pb.now == pytest.approx(mean, abs=1e-12)
    assert pb.low <= pb.now <= pb.high and pb.unjudged > 0 and st.pool >= pb.unjudged


def test_cli_prints_the_bounds_and_a_verdict_that_follows_them(ran):
    _, path = ran
    r = CliRunner().invoke(app, ["labels", "status", "-c", str(path), "--format", "json"])
    assert r.exit_code == 0, r.output
    body = json.loads(r.output)
    (p,) = body["pairs"]
    assert p["lowest"] <= p["difference"] <= p["highest"]
    settled = p["lowest"] > 0 or p["highest"] < 0
    assert p["verdict"] == ("settled" if settled else "open")
    # the estimate of the judgments still needed: 0 when settled, else a count within the unjudged pairs
    n = p["judgments_to_settle"]
    assert (n == 0) if settled else (n is None or 0 < n <= body["unjudged_in_pool"]), p
    if not settled and n is not None:
        assert f"about {n:,} more judgment" in p["sentence"], p
    assert p["sentence"].removeprefix("worst case: ").startswith(p["verdict"] + ":")
    r = CliRunner().invoke(app, ["labels", "status", "-c", str(path)])
    assert r.exit_code == 0 and p["sentence"] in " ".join(r.output.split()), r.output
    r = CliRunner().invoke(app, ["labels", "status", "-c", str(path), "--models", "MiniLM"])
    assert r.exit_code == 2 and "at least two" in r.output


def test_plan_in_the_decisive_order(ran, tmp_path):
    """`labels plan --order decisive`: each rater's share in the decisive order, pairs that can move a difference
    first; the same seed gives the same plan; --order decisive without a config is one line."""
    from runners.labels.pool.decisive_order import decisive_order

    cfg, path = ran
    args = ["labels", "plan", "-c", str(path), "--raters", "ana", "--overlap", "0", "--labels-dir", str(tmp_path),
            "--order", "decisive", "--seed", "5"]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    assert "pairs can move a difference between the candidates (first)" in " ".join(r.output.split())
    body = json.loads((tmp_path / TASK / "plan.json").read_text())
    assert body["order"] == "decisive"
    qrels = task_collection(cfg.tasks[0], cfg, llm=False).qrels["test"]
    rankings = {m.results_name: stored_rankings(cfg.results_path, m.results_name, TASK)[0] for m in cfg.models}
    expected = [["test", w.query_id, w.doc_id] for w in decisive_order(rankings, qrels, 10, seed=5)]
    assert body["raters"]["ana"] == expected
    # the judging app serves ana's share in that order (not the rater's random one)
    from runners.config.task_lookup import task_config_for
    from runners.labels.judging.items import items_from_keys
    from runners.labels.judging.server import open_session

    collection = task_collection(cfg.tasks[0], cfg, llm=False)
    keys = [tuple(k) for k in expected]
    started = open_session(task_config_for(cfg.tasks[0], cfg), collection, items_from_keys(keys[::-1], collection),
                           "ana", tmp_path / TASK)
    assert [it.key for it in started.session.items] == keys
    started.session.close()
    first = (tmp_path / TASK / "plan.json").read_text()
    assert CliRunner().invoke(app, args).exit_code == 0 and (tmp_path / TASK / "plan.json").read_text() == first
    r = CliRunner().invoke(app, ["labels", "plan", "-t", TASK, "--pool", str(tmp_path / "none.jsonl"), "--raters",
                                 "ana", "--order", "decisive"])
    assert r.exit_code == 2 and "give -c CONFIG" in " ".join(r.output.split())


def test_stats_and_check_print_the_same_unjudged_mark(ran):
    """One verdict: `stats` (candidates in the config's order) and `check` (baseline BM25 first) print the same
    line for the pair, with each candidate's unjudged places in its top-10 and the bounds `labels status` gives."""
    from runners.labels.pool.judged import stored_rankings
    from runners.labels.notes.unjudged_mark import unjudged_in_top

    cfg, path = ran
    flat = lambda out: " ".join(out.split())  # noqa: E731  (rich wraps long lines)
    stats = CliRunner().invoke(app, ["stats", "-c", str(path), "-m", "ndcg_at_10", "--resamples", "200"])
    assert stats.exit_code == 0, stats.output
    check = CliRunner().invoke(app, ["check", "-c", str(path), "--baseline", "BM25", "--candidate", "MiniLM",
                                     "--resamples", "200"])
    assert check.exit_code in (0, 1), check.output
    import re

    mark = re.findall(r"unjudged: .*?(?:would settle it\)|\(the difference stays in [^)]*\)|leaves the tie)",
                      flat(stats.output))
    assert len(mark) == 1, stats.output
    line = mark[0]
    as_json = CliRunner().invoke(app, ["stats", "-c", str(path), "-m", "ndcg_at_10", "--resamples", "200",
                                       "--format", "json"])
    assert json.loads(as_json.output)["unjudged"] == {TASK: [line]}
    assert line in flat(check.output), (line, check.output)
    st = json.loads(CliRunner().invoke(app, ["labels", "status", "-c", str(path), "--format", "json"]).output)
    (p,) = st["pairs"]
    assert (": settled, " in line) == (p["verdict"] == "settled")
    qrels = task_collection(cfg.tasks[0], cfg).qrels["test"]
    for m in cfg.models:
        assert f" {unjudged_in_top(stored_rankings(cfg.results_path, m.results_name, TASK)[0], qrels):,} " in line


def test_status_prints_how_likely_each_verdict_holds_and_how_many_more_questions(ran, monkeypatch):
    """With LLM grades on the pool (here: the human grade where there is one, else 0) the status gives each verdict's
    probability of holding (confidence_stop.py) and the random questions that would likely resolve it (PPI++)."""
    import runners.labels.verdicts.confidence_stop as cs
    from runners.labels.verdicts.confidence_stop import likely_percent
    import runners.labels.verdicts.label_status as ls

    cfg, path = ran
    human = task_collection(cfg.tasks[0], cfg, llm=False).qrels["test"]
    names = [m.results_name for m in cfg.models]
    tops = {n: stored_rankings(cfg.results_path, n, TASK)[0] for n in names}
    llm = {(q, d): human[q].get(d, 0) for q in human for r in tops.values() for d in ranked_ids(r.get(q, {}))[:10]}
    judged = sum(1 for q, d in llm if d in human[q])
    monkeypatch.setattr(ls, "config_llm_grades", lambda bench, entry, split: llm)
    monkeypatch.setattr(cs, "MIN_CALIBRATION", min(judged, 30))
    before = label_status(cfg, names)  # the task's own labels only: not a sample of the pool, nothing calibrated
    assert before.confidence.pairs == [] and "judged from the pool" in before.confidence.calibrated.why
    task_cfg = task_config_for(cfg.tasks[0], cfg)
    folder = judging_dir(task_cfg)  # people judged the pooled pairs in the app: the raters' file says so
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ana.jsonl").write_text("".join(json.dumps(
        {"task": task_cfg.name, "split": "test", "query_id": q, "doc_id": d, "grade": human[q][d], "status": "graded",
         "rater": "ana", "time": "2026-12-06T00:00:00Z"}) + "\n" for q, d in sorted(llm) if d in human[q]))
    st = label_status(cfg, names)
    (pb,) = st.pairs
    pc = st.confidence.of(pb.a, pb.b)
    assert pc is not None and 0.5 <= pc.probability <= 1.0
    assert "likely to hold" in st.sentence(pb) or pb.verdict != "open"
    assert (pb.a, pb.b) in st.resolve.counts or "random sample" in st.resolve.basis
    r = CliRunner().invoke(app, ["labels", "status", "-c", str(path), "--format", "json"])
    (p,) = json.loads(r.output)["pairs"]
    assert p["probability_holds"] == pytest.approx(pc.probability, abs=1e-12)
    assert p["questions_to_resolve"] == st.resolve.count(pb.a, pb.b)
    r = CliRunner().invoke(app, ["labels", "status", "-c", str(path)])
    assert likely_percent(pc.probability) in r.output, r.output  # the table and the sentences round alike
    together = " ".join(r.output.split())
    assert f"likely to hold all together (together: at least {st.confidence.together:.0%}" in together or \
        st.confidence.together > 0.99, together  # the stop asks the verdicts together (one pair here: its own)
    n = st.resolve.count(pb.a, pb.b)
    if (pb.a, pb.b) in st.resolve.counts:
        assert ("never" if n is None else f"~{n:,}") in r.output
