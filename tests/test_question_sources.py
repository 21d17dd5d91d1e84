"""Issue 38: added questions as a first-class subset. Awaiting judgment is counted by `run` and `stats`, not scored;
reviews verify, edit, reject and grade generated questions; unverified ones are left out unless the task says
`questions: {use_unverified: true}`; `stats`, `check` and the report give the verdict per source and warn when the
generated questions crown another candidate; `stats` gives the traffic-weighted mean beside the plain mean."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from conftest import write_benchmark
from custom_tasks.config import TaskConfig
from custom_tasks.errors import CollectionError
from custom_tasks.readers.question_reviews import reviews_path
from custom_tasks.sources import load_collection
from runners.labels.notes.question_notes import weighted_means
from runners.cli import app
from runners.labels.questions.added_store import append_questions
from runners.results.store import find_run, read_json

runner = CliRunner()
DOCS = ["vpn-mac", "vpn-win", "pwd", "mfa", "leave-us", "leave-uk", "expense", "oncall", "deploy", "printer", "wifi",
        "laptop"]
LOG = {"L1": ("vpn-win", 0.25), "L2": ("pwd", 0.25), "L3": ("mfa", 0.25), "L4": ("printer", 0.25 / 3),
       "L5": ("wifi", 0.25 / 3), "L6": ("laptop", 0.25 / 3)}


def _row(qid, text, relevant=None, source="log", provenance=None, **tags):
    return {"query_id": qid, "query": text, "relevant": relevant or {}, "tags": {"source": source, **tags},
            "provenance": provenance or {}}


def _added_rows() -> list[dict]:
    rows = [_row(q, f"log question {q}", {d: 2}, stratum="s1" if w > 0.1 else "s2", weight=w)
            for q, (d, w) in LOG.items()]
    rows += [_row("A1", "awaiting one"), _row("A2", "awaiting two", {"pwd": None})]
    gen = "llm:acme/writer-1"
    rows += [_row(f"G{i}", f"generated {i}", {doc: None}, source=gen, provenance={"source_doc": doc}, verified=False)
             for i, doc in enumerate(["expense", "deploy", "oncall", "leave-uk"], 1)]
    return rows


def _reviews(path: Path) -> None:
    lines = [{"query_id": "G2", "action": "reject", "rater": "ana", "time": "t1"},  # changed their mind below
             {"query_id": "G2", "action": "accept", "grade": 2, "rater": "ana", "time": "t2"},
             {"query_id": "G3", "action": "reject", "rater": "ana", "time": "t3"},
             {"query_id": "G4", "action": "edit", "text": "UK parental leave length", "grade": 2, "rater": "bo",
              "time": "t4"}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def _load(task_yaml: Path):
    cfg = TaskConfig.from_file(task_yaml)
    return load_collection(cfg.source, cfg.base_dir, cfg.name)


@pytest.fixture
def task(tiny_copy) -> Path:
    added = append_questions(tiny_copy, _added_rows())
    _reviews(reviews_path(added))
    return tiny_copy


def test_reviews_apply_latest_first_and_unverified_questions_are_left_out(task):
    c = _load(task)
    assert reviews_path(task.parent / "x.jsonl").name == "x.reviews.jsonl"
    assert c.qrels["test"]["G2"] == {"deploy": 2}  # accepted (the later review) and its passage graded
    assert c.queries["G4"] == "UK parental leave length" and c.qrels["test"]["G4"] == {"leave-uk": 2}
    assert c.query_tags["G4"]["verified"] == "true"
    assert "G3" not in c.queries and "G1" not in c.queries  # rejected; unverified
    assert c.added.rejected == {"generated": 1} and c.added.unverified == {"generated": 1}
    assert c.added.awaiting == ["A1", "A2"]
    assert c.query_tags["q1"]["source"] == "human"

    data = yaml.safe_load(task.read_text())
    data["questions"] = {"use_unverified": True}
    task.write_text(yaml.safe_dump(data))
    c2 = _load(task)
    assert "G1" in c2.queries and c2.added.unverified == {} and "G1" in c2.added.awaiting  # pending grade
    assert c2.content_hash() != c.content_hash()


def test_a_bad_review_is_one_line_with_its_place(task):
    added = task.parent / "kb_tiny.added_questions.jsonl"
    with reviews_path(added).open("a") as f:
        f.write(json.dumps({"query_id": "G1", "action": "approve"}) + "\n")
    with pytest.raises(CollectionError) as e:
        _load(task)
    assert str(e.value).endswith("kb_tiny.added_questions.reviews.jsonl:5: action 'approve' of question 'G1' is not "
                                 "one of accept, edit, reject")


def test_a_review_changes_the_data_revision(task):
    before = _load(task).content_hash()
    with reviews_path(task.parent / "kb_tiny.added_questions.jsonl").open("a") as f:
        f.write(json.dumps({"query_id": "G1", "action": "accept"}) + "\n")
    assert _load(task).content_hash() != before


def test_traffic_weighted_mean_is_the_weighted_average_over_weighted_questions():
    per_query = {"A": {"a": 1.0, "b": 0.0, "c": 0.5, "d": float("nan")}, "B": {"x": 1.0}}
    tags = {"a": {"weight": "0.75"}, "b": {"weight": 0.25}, "c": {}, "d": {"weight": 1}}
    rows = weighted_means(per_query, tags)
    assert rows == [{"candidate": "A", "n": 2, "weighted": 0.75, "plain": 0.5}]


def _trec(path: Path, winner_on: set[str], c, second: set[str] = frozenset()) -> Path:
    """A run that ranks each scored question's graded document first when its source is in `winner_on` (second
    for the ids in `second`), last otherwise."""
    lines = []
    for split in c.qrels.values():
        for q, docs in split.items():
            good = max(docs, key=docs.get)
            kind = c.query_tags[q]["source"].split(":")[0]
            others = [d for d in DOCS if d != good]
            order = ([others[0], good, *others[1:]] if q in second else [good, *others]) if kind in winner_on \
                else [*others, good]
            lines += [f"{q} Q0 {d} {i} {100 - i} run" for i, d in enumerate(order, 1)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_run_stats_check_and_report_count_sources_and_give_the_verdict_per_source(task, tmp_path):
    c = _load(task)
    real = _trec(tmp_path / "real.run", {"human", "log"}, c, second={"L4", "L5", "L6"})
    gen = _trec(tmp_path / "gen.run", {"llm"}, c)
    bench = write_benchmark(tmp_path, [str(task)], models=[
        {"name": "real-search", "kind": "run", "path": str(real), "label": "Real"},
        {"name": "gen-search", "kind": "run", "path": str(gen), "label": "Gen"}])
    r = runner.invoke(app, ["run", "-c", str(bench)])
    assert r.exit_code == 0, r.output
    assert "TinyKBRetrieval: 2 questions await judgment (log 2; not scored): grade them with `labels pool` / " \
           "`labels serve`" in r.output
    assert "scored questions by source: human 6, log 6, generated 6" in r.output  # q4 q6 q8 q10 (llm), G2, G4

    r = runner.invoke(app, ["stats", "-c", str(bench), "--resamples", "200"])
    assert r.exit_code == 0, r.output
    out = " ".join(r.output.split())
    assert "2 questions await judgment" in out
    assert "left out: 1 generated unverified" in out and "1 rejected in review (generated 1)" in out
    assert "on source=log: best by nDCG@10" in out and "on source=human:" in out
    log_line = next(x for x in r.output.splitlines() if "on source=log:" in x)
    assert "Real at" in log_line
    assert "warning: TinyKBRetrieval: the generated questions make Gen the best, the real ones Real" in out
    results = tmp_path / "results"
    scores = read_json(find_run(results, "real-search", "TinyKBRetrieval") / "per_query_test.json")
    ndcg = scores["subsets"]["default"]["ndcg_at_10"]
    assert set(ndcg) == set(c.qrels["test"])  # awaiting questions are not scored (as 0 or otherwise)
    w = [LOG[q][1] for q in LOG]
    s = [ndcg[q] for q in LOG]
    assert s[3] == pytest.approx(1 / math.log2(3))  # second place: the weighting matters
    expect = f"Real {np.average(s, weights=w):.4f} (plain {np.mean(s):.4f})"
    assert "traffic-weighted nDCG@10 over the 6 questions with a traffic weight:" in out and expect in out, out

    r = runner.invoke(app, ["stats", "-c", str(bench), "--resamples", "200", "--format", "json"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)["questions"]["TinyKBRetrieval"]
    assert doc["scored_by_source"] == {"human": 6, "log": 6, "generated": 6} and doc["awaiting_judgment"] == 2
    assert doc["left_out"] == {"unverified": {"generated": 1}, "rejected": {"generated": 1}}
    real_row = next(x for x in doc["traffic_weighted"]["candidates"] if x["candidate"] == "Real")
    assert real_row["weighted"] == pytest.approx(np.average(s, weights=w)) and real_row["n"] == 6

    shutil.copytree(results, tmp_path / "baseline")
    r = runner.invoke(app, ["check", "-c", str(bench), "--baseline", str(tmp_path / "baseline")])
    assert r.exit_code == 0, r.output
    assert "the generated questions make Gen the best" in " ".join(r.output.split())

    md = tmp_path / "report.md"
    r = runner.invoke(app, ["report", "-c", str(bench), "-o", str(md), "--no-public"])
    assert r.exit_code == 0, r.output
    text = " ".join(md.read_text().split())
    assert "Questions" in text and "Scored questions by source: human 6, log 6, generated 6." in text
    assert "Warning: the generated questions make Gen the best, the real ones Real" in text
    assert "Traffic-weighted nDCG@10" in text


def test_a_source_too_small_for_a_verdict_is_said_not_silently_left_out():
    """A source with one question has no interval or verdict, but the reader must see why its questions are in
    'all' and in no source row (e.g. a second generator's single accepted question)."""
    from runners.labels.notes.generator_guard import source_verdict_lines
    from runners.statistics.stats_report import report_from_scores

    rng = np.random.default_rng(0)
    qids = [f"q{i}" for i in range(21)]
    scores = {m: dict(zip(qids, rng.random(len(qids)).round(3))) for m in ("A", "B")}
    tags = {q: {"source": "human" if i < 10 else "log" if i < 20 else "llm:other"} for i, q in enumerate(qids)}
    rep = report_from_scores("T", "ndcg_at_10", scores, n_resamples=200, selected=(["source"], tags))
    lines = source_verdict_lines(rep, "the 2 candidates")
    assert any("on source=human:" in ln for ln in lines) and any("on source=log:" in ln for ln in lines)
    small = [ln for ln in lines if "source=llm:other" in ln]
    assert len(small) == 1 and "1 question" in small[0] and "too few" in small[0], lines
