"""`labels judge` against a fake OpenAI-compatible server on 127.0.0.1 (tests/fake_judge.py), issue 32.

The server grades by a rule the test knows (the human grade where there is one, with injected disagreement), and
injects malformed answers, 429s and slow answers for chosen pairs: retries, unrateable pairs, the concurrency
bound, the cache, that no human grade is overwritten, and that no text is stored.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from custom_tasks.config import TaskConfig
from custom_tasks.llm_labels import judged_document_text, llm_labels_path, read_llm_labels
from custom_tasks.sources import load_collection
from fake_judge import FakeJudge
from runners.cli import app

runner = CliRunner()
DISAGREE = ("q1", "vpn-win")  # human grade 1; the judge says 0


@pytest.fixture
def tiny(tiny_copy: Path):
    cfg = TaskConfig.from_file(tiny_copy)
    return tiny_copy, load_collection(cfg.source, cfg.base_dir, cfg.name)


def truth_rule(collection):
    """The judge's rule: the human grade where there is one (but DISAGREE), 1 for the same-topic pages, else 0."""
    table = {}
    for qid, q in collection.queries.items():
        for doc_id, doc in collection.corpus.items():
            grade = collection.qrels["test"].get(qid, {}).get(doc_id, 0)
            table[(q, judged_document_text(doc))] = 0 if (qid, doc_id) == DISAGREE else grade
    return lambda q, p: table[(q, p)]


def pair_texts(collection, qid, doc_id):
    return collection.queries[qid], judged_document_text(collection.corpus[doc_id])


def write_pool(tmp_path: Path, collection) -> Path:
    rows = [{"query_id": q, "doc_id": d, "split": "test"} for q in sorted(collection.queries)
            for d in sorted(collection.corpus) if d not in collection.qrels["test"].get(q, {})]
    path = tmp_path / "pool.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def bench(tmp_path: Path, task_yaml: Path, url: str, **judge) -> Path:
    cfg = {"name": "j", "tasks": [str(task_yaml)], "models": [{"name": "bm25"}],
           "results_dir": str(tmp_path / "results"),
           "judge": {"endpoint": url, "model": "fake-judge-1", "max_retries": 2, "backoff_s": 0.0,
                     "timeout_s": 5.0, "max_concurrency": 4, **judge}}
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def judge(cfg: Path, pool: Path, *extra: str) -> dict:
    r = runner.invoke(app, ["labels", "judge", "-c", str(cfg), "--pool", str(pool), "--format", "json", *extra])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_retries_unrateable_and_counts(tiny, tmp_path, served) -> None:
    task_yaml, c = tiny
    pool = write_pool(tmp_path, c)
    first = json.loads(pool.read_text().splitlines()[0])
    # four pairs (none the first one asked) with trouble: recovers after 1 malformed / 2 x 429 / a timeout;
    # one is malformed every time
    once, limited, slow, never = (pair_texts(c, "q5", d) for d in ("pwd", "vpn-mac", "wifi", "mfa"))
    assert first["query_id"] != "q5"
    fake = FakeJudge(rule=truth_rule(c),
                     malformed=lambda q, p: {once: 1, never: 99}.get((q, p), 0),
                     rate_limited=lambda q, p: 2 if (q, p) == limited else 0,
                     slow_s=lambda q, p: 2.0 if (q, p) == slow else 0.0)
    cfg = bench(tmp_path, task_yaml, served(fake), timeout_s=0.5)
    rep = judge(cfg, pool, "--also-judged")
    n = 10 * 12  # every pair: the pool's 108 and the 12 human-graded ones
    assert (rep["pairs"], rep["asked"], rep["cached"]) == (n, n, 0)
    assert (rep["graded"], rep["unrateable"]) == (n - 1, 1)
    assert rep["failures"] == {"malformed": 1 + 3, "http 429": 2, "timeout": 1}
    assert rep["requests"] == fake.requests == n + 1 + 2 + 1 + 2  # the unrateable pair: 3 requests, 2 retries
    rows = {(r["query_id"], r["doc_id"]): r for r in read_llm_labels(llm_labels_path(task_yaml))}
    assert len(rows) == n
    assert rows[("q5", "mfa")]["grade"] is None and rows[("q5", "mfa")]["unrateable"] == ["malformed"]
    rule = truth_rule(c)
    assert all(r["grade"] == rule(*pair_texts(c, *k)) for k, r in rows.items() if k != ("q5", "mfa"))
    assert {r["source"] for r in rows.values()} == {"llm:fake-judge-1"}
    # the prompt carries the task's grade scale; parameters as configured
    body = fake.bodies[0]
    assert (body["model"], body["temperature"]) == ("fake-judge-1", 0.0)
    assert "2 = answers the question" in body["messages"][0]["content"]


def test_concurrency_is_bounded(tiny, tmp_path, served) -> None:
    task_yaml, c = tiny
    fake = FakeJudge(rule=truth_rule(c), delay_s=0.03)
    rep = judge(bench(tmp_path, task_yaml, served(fake), max_concurrency=3), write_pool(tmp_path, c))
    assert fake.max_in_flight == 3 and rep["max_in_flight"] == 3  # reached, never exceeded


def test_a_rerun_asks_nothing_and_a_changed_document_is_asked_again(tiny, tmp_path, served) -> None:
    task_yaml, c = tiny
    fake = FakeJudge(rule=lambda q, p: 1)
    cfg, pool = bench(tmp_path, task_yaml, served(fake)), write_pool(tmp_path, c)
    first = judge(cfg, pool)
    assert first["asked"] == 108 and fake.requests == 108
    again = judge(cfg, pool)
    assert (again["asked"], again["cached"], again["requests"]) == (0, 108, 0) and fake.requests == 108
    corpus = task_yaml.parent / "kb_tiny" / "corpus.jsonl"
    docs = [json.loads(line) for line in corpus.read_text().splitlines()]
    docs[0]["text"] += " Updated."  # vpn-mac: its 9 unjudged pairs are judged again, nothing else
    corpus.write_text("".join(json.dumps(d) + "\n" for d in docs))
    third = judge(cfg, pool)
    assert (third["asked"], third["requests"]) == (9, 9)
    # a new prompt parameter is another judge: everything is asked again
    other = bench(tmp_path, task_yaml, served(FakeJudge(rule=lambda q, p: 1)), temperature=0.5)
    assert judge(other, pool)["asked"] == 108


def test_no_human_grade_is_overwritten_and_no_text_is_stored(tiny, tmp_path, served) -> None:
    from runners.labels.pool.judged import task_collection
    from runners.config.benchmark import BenchmarkConfig

    task_yaml, c = tiny
    cfg = bench(tmp_path, task_yaml, served(FakeJudge(rule=truth_rule(c))))
    qrels_file = task_yaml.parent / "kb_tiny" / "qrels" / "test.tsv"
    before = qrels_file.read_bytes()
    r = runner.invoke(app, ["labels", "judge", "-c", str(cfg), "--pool", str(write_pool(tmp_path, c)),
                            "--also-judged"])
    assert r.exit_code == 0, r.output
    assert "human grades only" in r.output
    assert qrels_file.read_bytes() == before
    stored = llm_labels_path(task_yaml).read_text()
    texts = [*c.queries.values(), *(d["text"] for d in c.corpus.values()), *(d["title"] for d in c.corpus.values())]
    assert not [t for t in texts if t and t in stored]
    assert json.loads(next(l for l in stored.splitlines() if '"q1"' in l and '"vpn-win"' in l))["grade"] == 0
    # use_llm: false (default) scores human grades only; fill_unjudged adds the rest, never replacing a human grade
    b = BenchmarkConfig.from_file(cfg)
    assert task_collection(str(task_yaml), b).qrels == c.qrels
    data = yaml.safe_load(cfg.read_text())
    data["labels"] = {"use_llm": "fill_unjudged"}
    cfg.write_text(yaml.safe_dump(data))
    merged = task_collection(str(task_yaml), BenchmarkConfig.from_file(cfg))
    assert merged.qrels["test"]["q1"]["vpn-win"] == 1  # the human's, not the judge's 0
    assert all(merged.qrels["test"][q][d] == g for q, docs in c.qrels["test"].items() for d, g in docs.items())
    assert sum(len(d) for d in merged.qrels["test"].values()) == 120
    assert merged.content_hash() != c.content_hash()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("case", ["unreachable", "garbage", "never_well_formed", "not_found", "redirect"])
def test_a_broken_endpoint_is_one_line_exit_2(case, tiny, tmp_path, served) -> None:
    task_yaml, c = tiny
    if case == "unreachable":
        url = f"http://127.0.0.1:{_free_port()}/v1"
    elif case == "not_found":
        url = served(FakeJudge()).replace("/v1", "/nothing")
    elif case == "redirect":  # never followed: the texts go to the configured endpoint only
        elsewhere = FakeJudge()
        other = served(elsewhere)
        url = served(FakeJudge(redirect_to=other + "/chat/completions"))
    else:
        url = served(FakeJudge(garbage=case == "garbage", malformed=lambda q, p: 99))
    r = runner.invoke(app, ["labels", "judge", "-c", str(bench(tmp_path, task_yaml, url)),
                            "--pool", str(write_pool(tmp_path, c))])
    assert r.exit_code == 2, r.output
    err = [line for line in r.output.splitlines() if line.startswith("error:")]
    assert len(err) == 1 and "Traceback" not in r.output and "judge endpoint" in err[0]
    assert {"unreachable": "unreachable", "garbage": "chat-completions JSON", "not_found": "HTTP 404",
            "never_well_formed": "##final score", "redirect": "HTTP 302"}[case] in r.output
    if case == "redirect":
        assert elsewhere.requests == elsewhere.gets == 0
    assert not llm_labels_path(task_yaml).exists()


def test_config_without_a_judge_sends_nothing(tiny, tmp_path) -> None:
    task_yaml, c = tiny
    cfg = tmp_path / "b.yaml"
    cfg.write_text(yaml.safe_dump({"name": "b", "tasks": [str(task_yaml)], "models": [{"name": "bm25"}]}))
    r = runner.invoke(app, ["labels", "judge", "-c", str(cfg), "--pool", str(write_pool(tmp_path, c))])
    assert r.exit_code == 2 and "no `judge:`" in r.output
    bad = yaml.safe_load(cfg.read_text())
    bad["judge"] = {"endpoint": "http://127.0.0.1:1/v1", "modle": "x"}
    bad["labels"] = {"use_llm": "fill_unjudged"}
    cfg.write_text(yaml.safe_dump(bad))
    r = runner.invoke(app, ["labels", "judge", "-c", str(cfg)])
    assert r.exit_code == 2 and "did you mean 'model'" in r.output


def test_family_guard_names_the_judges_family() -> None:
    from runners.labels.notes.generator_guard import judge_warnings

    lines = judge_warnings("T", "Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-72B",
                           [("Qwen/Qwen3-Embedding-0.6B", "qwen3"), ("BAAI/bge-m3", "bge")])
    assert len(lines) == 2 and "qwen3 is of the family of the judge" in lines[0] and "own family" in lines[1]
    assert judge_warnings("T", None, None, [("Qwen/x", "x")]) == []


def test_prompt_parsing_is_strict() -> None:
    from runners.config.judge_prompt import DEFAULT_GRADES, parse_answer, render, UMBRELA

    assert parse_answer("##final score: 2", DEFAULT_GRADES) == 2
    assert parse_answer("  ##Final score: 0\n", DEFAULT_GRADES) == 0
    for bad in ("##final score: 3", "final score: 2", "##final score: 2 because", "2", "", None, "##final score: -1"):
        assert parse_answer(bad, DEFAULT_GRADES) is None, bad
    four = {3: "exact answer", 2: "answer", 1: "related", 0: "off-topic"}  # a task's own `grades:`
    assert parse_answer("##final score: 3", four) == 3
    assert "3 = exact answer\n2 = answer\n1 = related\n0 = off-topic" in render(UMBRELA, "q", "p", four)
    text = render(UMBRELA, "what is {passage}?", "a {query} b", DEFAULT_GRADES)
    assert "Query: what is {passage}?\nPassage: a {query} b\n" in text  # texts are never expanded


@pytest.mark.slow  # a real run (BM25) twice: mteb's import alone takes ~30 s on a shared CPU
def test_run_with_llm_grades_records_them_and_stores_no_text(tiny, tmp_path, served) -> None:
    task_yaml, c = tiny
    cfg = bench(tmp_path, task_yaml, served(FakeJudge(rule=truth_rule(c))))
    data = yaml.safe_load(cfg.read_text())
    data["history"] = str(tmp_path / "history")
    data["judge"]["model"] = "mteb/fake-judge"  # of the family of mteb's BM25 (mteb/baseline-bm25s)
    cfg.write_text(yaml.safe_dump(data))
    judge(cfg, write_pool(tmp_path, c), "--also-judged")
    assert runner.invoke(app, ["run", "-c", str(cfg)]).exit_code == 0
    data["labels"] = {"use_llm": "fill_unjudged"}
    cfg.write_text(yaml.safe_dump(data))
    r = runner.invoke(app, ["run", "-c", str(cfg)])
    assert r.exit_code == 0, r.output
    identities = [json.loads(p.read_text()) for p in (tmp_path / "results").rglob("identity.json")]
    by_labels = {json.dumps(i["task"].get("labels"), sort_keys=True): i["task"]["dataset_revision"] for i in identities}
    assert len(by_labels) == 2  # human only (no record) and human + LLM, each its own data revision
    used = next(i["task"]["labels"] for i in identities if "labels" in i["task"])
    assert used == {"use_llm": "fill_unjudged", "human": 12, "llm": 108, "judges": ["llm:mteb/fake-judge"]}
    stats = runner.invoke(app, ["stats", "-c", str(cfg), "--resamples", "200"])
    assert stats.exit_code == 0, stats.output
    assert "labels: human grades + llm:mteb/fake-judge grades of the pairs no human graded" in stats.output
    assert "is of the family of the judge mteb/fake-judge" in stats.output
    assert len(set(by_labels.values())) == 2
    texts = [*c.queries.values(), *(d["text"] for d in c.corpus.values())]
    for folder in (tmp_path / "results", tmp_path / "history"):
        for p in folder.rglob("*"):
            if p.is_file() and p.suffix in (".json", ".jsonl", ".csv"):
                body = p.read_text(errors="replace")
                assert not [t for t in texts if t in body], p


def test_a_pool_csv_from_labels_pool_is_read_back_exactly(tiny_copy, tmp_path, served) -> None:
    """`labels pool` quotes a cell that starts like a formula ('-wifi' -> "'-wifi"); the judge reads the id back."""
    from runners.labels.pool.pool import write_pool as write_pool_files

    data = tiny_copy.parent / "kb_tiny"
    for name in ("corpus.jsonl", "qrels/test.tsv"):
        f = data / name
        f.write_text(f.read_text().replace('"wifi"', '"-wifi"').replace("\twifi\t", "\t-wifi\t"))
    cfg = TaskConfig.from_file(tiny_copy)
    c = load_collection(cfg.source, cfg.base_dir, cfg.name)
    assert "-wifi" in c.corpus
    rows = [{"query_id": "q1", "doc_id": "-wifi", "split": "test", "query": "", "title": "", "document": "",
             "grade": ""}]
    csv_path, _ = write_pool_files(rows, tmp_path / "pool.csv")
    assert "'-wifi" in csv_path.read_text()
    rep = judge(bench(tmp_path, tiny_copy, served(FakeJudge(rule=lambda q, p: 0))), csv_path)
    assert rep["graded"] == 1
    assert [r["doc_id"] for r in read_llm_labels(llm_labels_path(tiny_copy))] == ["-wifi"]
