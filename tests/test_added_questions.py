"""Added questions (issue 38): `append_questions` appends, atomically, never over the task's questions; the loader
reads them with the task's own; a question with no graded document awaits judgment (counted, not scored); the
added file is part of the data revision, so a re-run after an append never reports the figure of before."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import yaml

from conftest import write_benchmark
from custom_tasks.config import TaskConfig
from custom_tasks.errors import CollectionError
from custom_tasks.sources import load_collection
from runners.labels.questions.added_store import append_questions


def row(qid: str, text: str, relevant: dict | None = None, source: str = "log", **tags) -> dict:
    return {"query_id": qid, "query": text, "relevant": relevant or {}, "tags": {"source": source, **tags},
            "provenance": {"log_sha256": "ab" * 32}}


def load(task_yaml: Path):
    cfg = TaskConfig.from_file(task_yaml)
    return load_collection(cfg.source, cfg.base_dir, cfg.name)


def test_append_adds_the_file_to_the_yaml_keeping_its_comments_and_loads_with_the_task(tiny_copy):
    text = tiny_copy.read_text().replace("source:\n", "# the help-desk pages\nsource:  # a BEIR folder\n")
    tiny_copy.write_text(text)
    before = load(tiny_copy)
    path = append_questions(tiny_copy, [row("log-1", "vpn keeps dropping on mac", {"vpn-mac": 2}),
                                        row("log-2", "where is the printer on floor 3")])
    assert path == tiny_copy.parent / "kb_tiny.added_questions.jsonl"
    new_text = tiny_copy.read_text()
    assert "# the help-desk pages\nsource:  # a BEIR folder\n  added_questions: kb_tiny.added_questions.jsonl\n" \
        in new_text
    assert new_text.replace("  added_questions: kb_tiny.added_questions.jsonl\n", "") == text
    after = load(tiny_copy)
    assert set(after.queries) == set(before.queries) | {"log-1", "log-2"}
    assert after.qrels["test"]["log-1"] == {"vpn-mac": 2}
    assert "log-2" not in after.qrels["test"]  # awaiting judgment: pooled, not scored as 0
    assert after.added.awaiting == ["log-2"]
    assert after.query_tags["log-1"]["source"] == "log"
    assert after.content_hash() != before.content_hash()


def test_append_only_and_atomic_second_batch_keeps_the_first_bytes(tiny_copy):
    path = append_questions(tiny_copy, [row("log-1", "vpn on mac", {"vpn-mac": None})])
    first = path.read_bytes()
    yaml_once = tiny_copy.read_text()
    append_questions(tiny_copy, [row("log-2", "reset password", {"pwd": 2})])
    assert path.read_bytes().startswith(first) and len(path.read_bytes()) > len(first)
    assert tiny_copy.read_text() == yaml_once  # named once, not twice
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]
    c = load(tiny_copy)
    assert c.added.awaiting == ["log-1"]  # a null grade is pending
    assert c.qrels["test"]["log-2"] == {"pwd": 2}


@pytest.mark.parametrize("clash", ["q1", "log-1", "dup"])
def test_an_id_collision_is_one_line_and_nothing_is_written(tiny_copy, clash):
    path = append_questions(tiny_copy, [row("log-1", "vpn on mac")])
    before, yaml_before = path.read_bytes(), tiny_copy.read_text()
    rows = [row("dup", "a"), row("dup", "b")] if clash == "dup" else [row(clash, "another question")]
    with pytest.raises(CollectionError) as e:
        append_questions(tiny_copy, rows)
    assert "\n" not in str(e.value) and "already used by" in str(e.value) and "nothing was written" in str(e.value)
    assert path.read_bytes() == before and tiny_copy.read_text() == yaml_before


def test_bad_rows_are_refused_before_writing(tiny_copy):
    for bad, says in [(row("x", "q", {"no-such-doc": 2}), "not in the corpus"),
                      (row("x", " "), "no text"), ({**row("x", "q"), "tags": {}}, "needs 'tags'"),
                      (row("x", "q", {"pwd": -1}), "not a whole number")]:
        with pytest.raises(CollectionError, match=says):
            append_questions(tiny_copy, [bad])
    assert not (tiny_copy.parent / "kb_tiny.added_questions.jsonl").exists()
    assert "added_questions" not in tiny_copy.read_text()


def test_the_loader_refuses_an_added_id_of_the_task_with_its_line(tiny_copy):
    added = tiny_copy.parent / "extra.jsonl"
    added.write_text(json.dumps(row("log-1", "a")) + "\n" + json.dumps(row("q2", "b")) + "\n")
    data = yaml.safe_load(tiny_copy.read_text())
    data["source"]["added_questions"] = "extra.jsonl"
    tiny_copy.write_text(yaml.safe_dump(data))
    with pytest.raises(CollectionError) as e:
        load(tiny_copy)
    assert str(e.value).endswith("extra.jsonl:2: query id 'q2' is already a question of the task: give the added "
                                 "question another id")


def test_flow_style_source_gets_the_key_too(tiny_copy):
    data = yaml.safe_load(tiny_copy.read_text())
    text = tiny_copy.read_text().split("source:")[0] + "source: {format: beir, path: kb_tiny, tag_fields: [source]}\n" \
        + "splits: [test]  # one split\n"
    tiny_copy.write_text(text)
    append_questions(tiny_copy, [row("log-1", "vpn on mac", {"vpn-mac": 1})])
    assert "source: {added_questions: kb_tiny.added_questions.jsonl, format: beir" in tiny_copy.read_text()
    assert "# one split" in tiny_copy.read_text()
    assert load(tiny_copy).qrels["test"]["log-1"] == {"vpn-mac": 1}
    assert data["name"] == TaskConfig.from_file(tiny_copy).name


def _bm25(tmp_path: Path, task_yaml: Path, folder: str = "results"):
    from runners.config.benchmark import BenchmarkConfig
    from runners.execution.run import run_benchmark

    out = tmp_path / folder
    out.mkdir(exist_ok=True)
    cfg = BenchmarkConfig.from_file(write_benchmark(out, [str(task_yaml)], models=[{"name": "bm25"}]))
    return run_benchmark(cfg, show_progress=False)[0]


def test_a_rerun_after_an_append_scores_the_new_questions_not_the_stored_figure(tiny_copy, tmp_path):
    first = _bm25(tmp_path, tiny_copy)
    assert _bm25(tmp_path, tiny_copy).status == "skipped"  # unchanged: reused
    append_questions(tiny_copy, [row("log-1", "Keystone push approval for NorthGate", {"vpn-mac": 2}),
                                 row("log-2", "zzz unrelated words", {"pwd": 2})])
    again = _bm25(tmp_path, tiny_copy)
    fresh = _bm25(tmp_path, tiny_copy, folder=f"fresh-{time.monotonic_ns()}")
    assert again.status == "ran", again.reason
    assert again.scores["ndcg_at_10"] == pytest.approx(fresh.scores["ndcg_at_10"], abs=1e-12)
    assert again.scores["ndcg_at_10"] != pytest.approx(first.scores["ndcg_at_10"], abs=1e-9)
    append_questions(tiny_copy, [row("log-3", "awaiting one")])  # awaiting only: a new revision, same figure
    third = _bm25(tmp_path, tiny_copy)
    assert third.status == "ran" and third.scores["ndcg_at_10"] == pytest.approx(again.scores["ndcg_at_10"])


def test_questions_awaiting_judgment_are_ranked_by_run_pooled_and_scored_once_graded(tiny_copy, tmp_path):
    from typer.testing import CliRunner

    from runners.cli import app
    from runners.results.store import find_run, read_json

    append_questions(tiny_copy, [row("log-1", "Keystone push approval for NorthGate", {"vpn-mac": 2}),
                                 row("log-2", "reset a forgotten Keystone password")])
    _bm25(tmp_path, tiny_copy)
    bench = tmp_path / "results" / "bench.yaml"
    folder = find_run(tmp_path / "results" / "results", "mteb/baseline-bm25s", "TinyKBRetrieval")
    stored = read_json(folder / "rankings_test.json.gz")
    assert "log-2" not in stored["subsets"]["default"]  # never scored, never in judged@k
    assert "log-2" not in read_json(folder / "per_query_test.json")["subsets"]["default"]["ndcg_at_10"]
    ranked = stored["awaiting"]["default"]["log-2"]
    assert next(iter(ranked)) == "pwd"  # BM25's own ranking of it

    out = tmp_path / "pool.csv"
    r = CliRunner().invoke(app, ["labels", "pool", "-c", str(bench), "--depth", "3", "-o", str(out)])
    assert r.exit_code == 0, r.output
    assert "1 of them awaiting judgment" in r.output
    rows = [json.loads(x) for x in out.with_suffix(".jsonl").read_text().splitlines()]
    mine = sorted(x["doc_id"] for x in rows if x["query_id"] == "log-2")
    assert mine == sorted(list(ranked)[:3])
    for x in rows:
        x["grade"] = 2 if (x["query_id"], x["doc_id"]) == ("log-2", "pwd") else ""
    graded = tmp_path / "graded.jsonl"
    graded.write_text("".join(json.dumps(x) + "\n" for x in rows))
    r = CliRunner().invoke(app, ["labels", "import", str(graded), "-t", str(tiny_copy)])
    assert r.exit_code == 0, r.output
    c = load(tiny_copy)
    assert c.added.awaiting == [] and c.qrels["test"]["log-2"] == {"pwd": 2}
    again = _bm25(tmp_path, tiny_copy)
    assert again.status == "ran"
    per_query = read_json(find_run(tmp_path / "results" / "results", "mteb/baseline-bm25s", "TinyKBRetrieval")
                          / "per_query_test.json")["subsets"]["default"]["ndcg_at_10"]
    assert per_query["log-2"] == 1.0
