"""`questions generate` against a fake OpenAI-compatible writer on 127.0.0.1 (tests/fake_judge.py with `reply`),
issue 38.

The writer answers each passage by a table the test knows, with planted faults: a question copying its passage, one
duplicating a task question, two passages answered with the same question, an out-of-format first answer. Only the
clean questions may be stored, unverified, with their source passage pending; a generator of a candidate's or the
production LLM's family is refused before anything is sent.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from custom_tasks.config import TaskConfig
from custom_tasks.sources import load_collection
from fake_judge import FakeJudge
from runners.cli import app

runner = CliRunner()
_PASSAGE = re.compile(r"Passage: (.*)\Z", re.DOTALL)

#: the writer's answers by document id: CLEAN ones a person might type, and the planted faults
CLEAN = {
    "vpn-mac": "set up remote access on my apple computer",
    "mfa": "are hardware security keys supported for login",
    "leave-us": "how many weeks off do new parents get",
    "expense": "what is the cap on food costs when abroad for work",
    "oncall": "when can a new engineer start doing pager duty",
    "deploy": "who signs off on a release to prod",
    "printer": "third floor printing software needed",
    "wifi": "which wireless network for office guests",
    "laptop": "my notebook computer got stolen, write to jane.doe@northwind.example",  # personal data: redacted
}
PLANTED = {
    "vpn-win": "Download NorthGate from the Software Center, then connect to the eu-west gateway?",  # copied wording
    "pwd": "I FORGOT my password!",  # the task's q2 ("I forgot my password"), case and punctuation aside
    "leave-uk": "How many weeks off do new parents get?",  # the same question as leave-us's
}
MALFORMED_FIRST = {"mfa"}  # answered out of format once (two questions on two lines), then well


def writer(collection):
    by_text = {}
    for doc_id, doc in collection.corpus.items():
        text = f"{doc['title']} {doc['text']}".strip() if doc.get("title") else doc["text"]
        by_text[text] = doc_id

    def reply(prompt: str, attempt: int) -> str:
        doc_id = by_text[_PASSAGE.search(prompt).group(1)]
        if doc_id in MALFORMED_FIRST and attempt == 0:
            return "Here are two questions:\n1. keys?\n2. sms?"
        return {**CLEAN, **PLANTED}[doc_id]

    return reply


@pytest.fixture
def tiny(tiny_copy: Path):
    cfg = TaskConfig.from_file(tiny_copy)
    return tiny_copy, load_collection(cfg.source, cfg.base_dir, cfg.name)


def bench(tmp_path: Path, task_yaml: Path, url: str, models: list[dict] | None = None, **extra) -> Path:
    cfg = {"name": "g", "tasks": [str(task_yaml)], "models": models or [{"name": "bm25"}],
           "results_dir": str(tmp_path / "results"), "cache_dir": str(tmp_path / "cache"),
           "generator": {"endpoint": url, "model": "fake-writer-1", "max_retries": 2, "backoff_s": 0.0,
                         "timeout_s": 5.0, "max_concurrency": 3}, **extra}
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def added_file(task_yaml: Path) -> list[dict]:
    cfg = TaskConfig.from_file(task_yaml)
    path = Path(cfg.base_dir) / cfg.source["added_questions"]
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_only_clean_questions_are_kept_unverified_with_their_passage_pending(tmp_path, tiny) -> None:
    task_yaml, collection = tiny
    fake = FakeJudge(reply=writer(collection))
    server, url = fake.start()
    try:
        r = runner.invoke(app, ["questions", "generate", "-c", str(bench(tmp_path, task_yaml, url)), "-n", "12",
                                "--clusters", "4"])
    finally:
        server.shutdown()
    assert r.exit_code == 0, r.output
    out = " ".join(r.output.split())
    assert "kept 9 of 12" in out
    assert "copied wording: 1" in out and "near-duplicate of an existing question: 1" in out
    assert "near-duplicate of another generated question: 1" in out
    assert "questions asked in English (task languages: eng-Latn)" in out  # the default language is shown
    rows = added_file(task_yaml)
    by_doc = {r["provenance"]["source_doc"]: r for r in rows}
    # exactly one of the two passages answered with the same question keeps it; the copied and the duplicate of
    # a task question are gone
    assert len(rows) == 9 and len({"leave-us", "leave-uk"} & set(by_doc)) == 1
    assert not {"vpn-win", "pwd"} & set(by_doc)
    assert set(by_doc) - {"leave-uk"} <= set(CLEAN)
    assert "personal data replaced in the kept questions: email x1" in out and "jane.doe" not in r.output
    assert by_doc["laptop"]["query"] == "my notebook computer got stolen, write to [EMAIL]"
    for doc_id, row in by_doc.items():
        want = CLEAN["leave-us"] if doc_id in ("leave-us", "leave-uk") else CLEAN[doc_id]
        assert row["query"] == want if doc_id != "laptop" else "jane.doe" not in row["query"]
        assert row["relevant"] == {doc_id: None}  # the source passage, grade pending
        assert row["tags"] == {"source": "llm:fake-writer-1", "verified": False}
        assert row["provenance"]["generator"] == "fake-writer-1" and row["provenance"]["clusters"] == 4
    assert sum(n for (_, p), n in fake.attempts.items() if "authenticator" in p) == 2  # out of format: asked again
    # the file loads: the questions await review (unverified: not in the scored collection), and with
    # use_unverified they are questions awaiting judgment (no qrels: never scored as 0)
    cfg = TaskConfig.from_file(task_yaml)
    loaded = load_collection(cfg.source, cfg.base_dir, cfg.name)
    ids = {r["query_id"] for r in rows}
    assert not ids & set(loaded.queries)
    assert loaded.added is not None and sum(loaded.added.unverified.values()) == 9
    both = load_collection({**cfg.source, "use_unverified": True}, cfg.base_dir, cfg.name)
    assert ids <= set(both.queries) and not ids & set(both.qrels.get("test", {}))


def test_a_rerun_draws_new_passages_and_never_rewrites_stored_questions(tmp_path, tiny) -> None:
    from runners.config.benchmark import BenchmarkConfig
    from runners.labels.questions.generate import generate_questions

    task_yaml, collection = tiny
    server, url = FakeJudge(reply=writer(collection)).start()
    vectors = lambda texts: np.stack([np.eye(3)[hash(t) % 3] for t in texts])  # noqa: E731 - three fixed topics
    try:
        cfg = BenchmarkConfig.from_file(bench(tmp_path, task_yaml, url))
        first = generate_questions(cfg, TaskConfig.from_file(task_yaml), 5, seed=1, vectors=vectors)
        before = first.path.read_bytes()
        second = generate_questions(cfg, TaskConfig.from_file(task_yaml), 5, seed=1, vectors=vectors)
    finally:
        server.shutdown()
    assert second.path.read_bytes().startswith(before)  # appended, never rewritten
    rows = added_file(task_yaml)
    docs = [r["provenance"]["source_doc"] for r in rows]
    assert len(docs) == len(set(docs)) == first.kept + second.kept  # a passage never asked twice


def test_copied_wording_uses_the_lints_rule() -> None:
    from runners.labels.questions.question_filters import COPIED, DUP_GENERATED, Candidate, filter_questions

    passage = "Meals while travelling are reimbursed up to 60 EUR per day; receipts are required above 25 EUR."
    v = filter_questions([Candidate("a", "meals while travelling are reimbursed up to 60 EUR per day?", passage),
                          Candidate("b", "how much can I spend on food on a trip", passage),
                          Candidate("c", "How much can I spend on food on a trip??", passage)], {})
    assert v.kept == ["b"] and v.dropped == {"a": COPIED, "c": DUP_GENERATED} and v.copied["a"] == 11  # the whole question


def test_same_family_generator_is_refused_before_anything_is_sent(tmp_path, tiny) -> None:
    task_yaml, collection = tiny
    fake = FakeJudge(reply=writer(collection))
    server, url = fake.start()
    try:
        qwen = [{"name": "bm25"}, {"name": "Qwen/Qwen3-Embedding-0.6B", "label": "qwen3"}]
        cfg = bench(tmp_path, task_yaml, url, models=qwen)
        data = yaml.safe_load(cfg.read_text())
        data["generator"]["model"] = "qwen2.5:7b-instruct"  # an Ollama name of the candidate's family
        cfg.write_text(yaml.safe_dump(data))
        r = runner.invoke(app, ["questions", "generate", "-c", str(cfg), "-n", "3"])
        assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
        assert "candidate Qwen/Qwen3-Embedding-0.6B" in r.output and "--allow-same-family" in r.output
        # production_llm: the product's LLM counts too, whatever the candidates are
        data.update(models=[{"name": "bm25"}], production_llm="Qwen/Qwen2.5-72B-Instruct")
        cfg.write_text(yaml.safe_dump(data))
        r = runner.invoke(app, ["questions", "generate", "-c", str(cfg), "-n", "3"])
        assert r.exit_code == 2 and "production_llm Qwen/Qwen2.5-72B-Instruct" in r.output, r.output
        assert fake.requests == 0 and "added_questions" not in task_yaml.read_text()
        r = runner.invoke(app, ["questions", "generate", "-c", str(cfg), "-n", "3", "--allow-same-family",
                                "the only model licensed here"])
    finally:
        server.shutdown()
    assert r.exit_code == 0, r.output
    assert "written anyway" in " ".join(r.output.split())
    rows = added_file(task_yaml)
    assert rows and all(r["provenance"]["same_family_override"] == {
        "reason": "the only model licensed here", "family_of": ["production_llm Qwen/Qwen2.5-72B-Instruct"]}
        for r in rows)


def test_no_generator_and_a_dead_endpoint_are_one_line(tmp_path, tiny) -> None:
    task_yaml, _ = tiny
    cfg = bench(tmp_path, task_yaml, "http://127.0.0.1:9/v1")
    data = yaml.safe_load(cfg.read_text())
    r = runner.invoke(app, ["questions", "generate", "-c", str(cfg), "-n", "2", "--clusters", "1"])
    assert r.exit_code == 2 and "generator endpoint" in r.output and "unreachable" in r.output, r.output
    del data["generator"]
    cfg.write_text(yaml.safe_dump(data))
    r = runner.invoke(app, ["questions", "generate", "-c", str(cfg)])
    assert r.exit_code == 2 and "no `generator:`" in r.output and len(r.output.strip().splitlines()) == 1


def test_parse_question_is_strict() -> None:
    from runners.config.generator import parse_question

    assert parse_question('  "How do I reset my password?"\n') == "How do I reset my password?"
    assert parse_question("Question: where is the printer driver") == "where is the printer driver"
    for bad in ("", "one\ntwo", "x" * 301, None, '""'):
        assert parse_question(bad) is None, bad


def test_passages_are_dealt_across_clusters() -> None:
    from runners.labels.questions.passages import draw_passages

    labels = np.array([0, 0, 0, 0, 1, 1, 2])
    draws = draw_passages([f"d{i}" for i in range(7)], labels, 3, seed=0)
    assert sorted(d.cluster for d in draws) == [0, 1, 2]  # one per topic before any topic gets a second
    assert draws == draw_passages([f"d{i}" for i in range(7)], labels, 3, seed=0)


def test_generated_questions_reach_the_question_mode_and_an_accepted_one_is_scored(tmp_path, tiny) -> None:
    """The judging app's question mode (runners/labels/judging/question_*.py) lists the kept questions with their source
    passage; an acceptance with a grade makes one a scored question graded on that passage, a rejection drops one."""
    from custom_tasks.readers.question_reviews import reviews_path
    from runners.config.benchmark import BenchmarkConfig
    from runners.labels.judging.question_items import added_path, source_without_added, unverified_questions
    from runners.labels.judging.question_session import QuestionSession
    from runners.labels.questions.generate import generate_questions

    task_yaml, collection = tiny
    server, url = FakeJudge(reply=writer(collection)).start()
    try:
        report = generate_questions(BenchmarkConfig.from_file(bench(tmp_path, task_yaml, url)),
                                    TaskConfig.from_file(task_yaml), 12, clusters=4)
    finally:
        server.shutdown()
    cfg = TaskConfig.from_file(task_yaml)
    items, warnings = unverified_questions(added_path(cfg), load_collection(source_without_added(cfg), cfg.base_dir,
                                                                            cfg.name))
    assert not warnings and sorted(it.query_id for it in items) == sorted(report.query_ids) and len(items) == 9
    by_doc = {it.doc_id: it for it in items}
    assert by_doc["oncall"].text == collection.corpus["oncall"]["text"] and by_doc["oncall"].query == CLEAN["oncall"]
    session = QuestionSession.open(cfg, "ana", items, reviews_path(added_path(cfg)))
    try:
        session.review(items.index(by_doc["oncall"]), "accept", None, 2)
        session.review(items.index(by_doc["wifi"]), "reject", None, None)
    finally:
        session.close()
    loaded = load_collection(cfg.source, cfg.base_dir, cfg.name)
    oncall, wifi = by_doc["oncall"].query_id, by_doc["wifi"].query_id
    assert loaded.qrels["test"][oncall] == {"oncall": 2} and loaded.queries[oncall] == CLEAN["oncall"]
    assert wifi not in loaded.queries and sum(loaded.added.unverified.values()) == 7
