"""Every problem of a collection in one pass (issue 29): errors of every file at once, warnings that do not stop.

Before, reading stopped at the first problem: an empty document, then a second one, then a label for a removed
document took three fix-and-rerun rounds. Now empty documents are warnings that name their ids (the collection
loads and runs), and every row error of every file is reported together, each at its `file:line`, the first
20 shown and the rest counted per file, by `tasks validate` and `run` alike.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from custom_tasks.errors import MAX_PROBLEMS_SHOWN, CollectionError, CollectionProblems
from custom_tasks.sources import load_collection
from custom_tasks.validate import summarize
from runners.cli import app

runner = CliRunner()
DOCS = [{"_id": f"d{i}", "title": f"Doc {i}", "text": f"Text of document {i} about topic {i}."} for i in range(1, 9)]
QUERIES = [{"_id": f"q{i}", "text": f"question about topic {i}"} for i in range(1, 5)]
QRELS = "query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\td{i}\t2\n" for i in range(1, 5))


def _jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def _kb(tmp_path: Path, docs: list[dict] = DOCS, queries: list[dict] = QUERIES, qrels: str = QRELS,
        raw_corpus: str | None = None) -> Path:
    kb = tmp_path / "kb"
    (kb / "qrels").mkdir(parents=True)
    (kb / "corpus.jsonl").write_text(raw_corpus if raw_corpus is not None else _jsonl(docs))
    (kb / "queries.jsonl").write_text(_jsonl(queries))
    (kb / "qrels" / "test.tsv").write_text(qrels)
    (tmp_path / "task.yaml").write_text("name: KB\ndescription: d\nsource: {format: beir, path: kb}\n")
    return kb


def _empty_two(docs: list[dict]) -> list[dict]:
    out = [dict(d) for d in docs]
    out[2] = {"_id": "d3", "title": "", "text": ""}
    out[5] = {"_id": "d6", "text": "   "}
    return out


@pytest.mark.parametrize("store", [False, True])
def test_empty_documents_are_warnings_with_their_ids_and_the_collection_loads(tmp_path, monkeypatch, store):
    if store:  # the disk-store corpus path reports them the same way
        monkeypatch.setenv("PRIVATE_MTEB_STORE_MIN_DOCS", "0")
        monkeypatch.setenv("PRIVATE_MTEB_CORPUS_CACHE", str(tmp_path / "cache"))
    kb = _kb(tmp_path, docs=_empty_two(DOCS))
    c = load_collection({"format": "beir", "path": str(kb)}, tmp_path, "KB")
    assert len(c.corpus) == 8 and c.corpus["d3"]["text"] == "" and c.corpus["d6"]["text"].strip() == ""
    w = summarize(c)["warnings"]
    assert w["empty_document"]["count"] == 2 and w["empty_document"]["examples"] == ["d3", "d6"]
    assert "can ever retrieve" in w["empty_document"]["explanation"]
    assert "duplicate_doc_text" not in w  # two empty documents are not "copies" of each other
    msgs = [x.message for x in c.warnings if x.kind == "empty_document"]
    assert msgs[0].endswith("corpus.jsonl:3: document 'd3' has neither text nor a title: it is kept, but no model "
                            "can retrieve it")


def _three_rounds(tmp_path: Path) -> Path:
    """The issue's case plus one problem of each kind in each file."""
    lines = _jsonl(_empty_two(DOCS)).splitlines()
    lines[7] = '{"_id": "d8", "text": '  # malformed JSON (d8 has no label: no knock-on error)
    lines.append(json.dumps({"_id": "d4", "text": "again"}))  # line 9: duplicate id
    queries = QUERIES + [{"_id": "q5", "text": ""}]  # line 5: empty query
    qrels = QRELS + "q1\td99\t1\nq2\td5\tx\nq9\td1\t1\n"  # lines 6-8: removed document, bad grade, unknown query
    return _kb(tmp_path, queries=queries, qrels=qrels, raw_corpus="\n".join(lines) + "\n")


def test_every_error_of_every_file_in_one_pass(tmp_path):
    kb = _three_rounds(tmp_path)
    with pytest.raises(CollectionProblems) as e:
        load_collection({"format": "beir", "path": str(kb)}, tmp_path, "KB")
    msg = str(e.value)
    wanted = ["corpus.jsonl:8: malformed JSON", "corpus.jsonl:9: duplicate document id 'd4' (first at line 4)",
              "queries.jsonl:5: query 'q5' has empty text",
              "test.tsv:6: label for unknown document 'd99'", "test.tsv:7: grade 'x' is not an integer",
              "test.tsv:8: label for unknown query 'q9'"]
    for w in wanted:
        assert w in msg, msg
    assert msg.splitlines()[0].startswith("6 problem(s) in the collection (")
    assert len(e.value.errors) == 6 and sorted(e.value.per_file().values()) == [1, 2, 3]
    assert not any("d3" in str(x) for x in e.value.errors)  # the empty documents are warnings, not errors
    assert isinstance(e.value, CollectionError)  # every caller that reads one CollectionError still works


def test_more_than_twenty_problems_show_twenty_and_count_the_rest_per_file(tmp_path):
    qrels = QRELS + "".join(f"q1\tgone{i}\t1\n" for i in range(30))
    docs = DOCS + [{"_id": "d1", "text": "dup"}] * 3
    kb = _kb(tmp_path, docs=docs, qrels=qrels)
    with pytest.raises(CollectionProblems) as e:
        load_collection({"format": "beir", "path": str(kb)}, tmp_path, "KB")
    lines = str(e.value).splitlines()
    assert len(e.value.errors) == 33 and len(lines) == 1 + MAX_PROBLEMS_SHOWN + 1
    assert re.fullmatch(r"\.\.\. and 13 more problem\(s\) \(.*test\.tsv: 13\)", lines[-1]), lines[-1]
    assert all(re.search(r"(corpus\.jsonl|test\.tsv):\d+: ", ln) for ln in lines[1:-1])


def test_other_formats_collect_too(tmp_path):
    (tmp_path / "c.csv").write_text("_id,title,text\nd1,A,x\nd2,B\nd3,,\nd1,C,y\n")
    (tmp_path / "q.csv").write_text("_id,text\nq1,a\nq2,b\n")
    (tmp_path / "r.trec").write_text("q1 0 d1 1\nq2 0 d7 1\nq2 0 d3\n")
    src = {"format": "trec", "corpus": "c.csv", "queries": "q.csv", "qrels": "r.trec"}
    with pytest.raises(CollectionProblems) as e:
        load_collection(src, tmp_path, "T")
    msg = str(e.value)
    for w in ["c.csv:3: found 2 fields", "c.csv:5: duplicate document id 'd1'", "r.trec:2: label for unknown "
              "document 'd7'", "r.trec:3: expected 4 fields"]:
        assert w in msg, msg
    (tmp_path / "e.csv").write_text("query,relevant\nvpn?,d1:2; d8; d9\nempty?,\n")
    src = {"format": "evalset", "corpus": "c.csv", "evalset": "e.csv"}
    with pytest.raises(CollectionProblems) as e:
        load_collection(src, tmp_path, "T")
    assert "e.csv:2: label for unknown document 'd8'" in str(e.value) and "'d9'" in str(e.value)


def test_a_file_level_error_joins_the_row_problems_before_it(tmp_path):
    kb = _kb(tmp_path, docs=DOCS + [{"_id": "d1", "text": "dup"}])
    (kb / "queries.jsonl").write_text(_jsonl([{"id": "q1", "text": "no _id column"}]))
    with pytest.raises(CollectionProblems) as e:
        load_collection({"format": "beir", "path": str(kb)}, tmp_path, "KB")
    assert "corpus.jsonl:9: duplicate" in str(e.value) and "queries.jsonl:1: missing field '_id'" in str(e.value)


def test_tasks_validate_and_run_report_them_all(tmp_path):
    _three_rounds(tmp_path)
    out = runner.invoke(app, ["tasks", "validate", str(tmp_path / "task.yaml")])
    assert out.exit_code == 2 and "Traceback" not in out.output
    assert out.output.startswith("error: ") and out.output.count(": ") >= 6
    for where in ["corpus.jsonl:8:", "corpus.jsonl:9:", "queries.jsonl:5:", "test.tsv:6:", "test.tsv:7:", "test.tsv:8:"]:
        assert where in out.output, out.output
    js = runner.invoke(app, ["tasks", "validate", "--format", "json"], env={"PRIVATE_MTEB_TASKS_DIR": str(tmp_path)})
    entry = json.loads(js.output)["tasks"][0]
    assert entry["errors"] == 6 and not entry["ok"]
    bench = tmp_path / "bench.yaml"
    bench.write_text(yaml.safe_dump({"name": "b", "tasks": [str(tmp_path / "task.yaml")], "models": [{"name": "bm25"}],
                                     "results_dir": str(tmp_path / "results")}))
    run = runner.invoke(app, ["run", "-c", str(bench)])
    assert run.exit_code == 2 and "Traceback" not in run.output
    for where in ["corpus.jsonl:8:", "queries.jsonl:5:", "test.tsv:6:", "test.tsv:8:"]:
        assert where in run.output, run.output


def test_fixed_collection_with_two_empty_documents_validates_with_the_warning(tmp_path):
    _kb(tmp_path, docs=_empty_two(DOCS))
    out = runner.invoke(app, ["tasks", "validate", str(tmp_path / "task.yaml")])
    assert out.exit_code == 0, out.output
    assert "warning empty_document x2" in out.output and re.search(r"d3 at \S*:3, d6 at \S*:6", out.output)


def test_warnings_come_with_the_errors_each_at_its_file_line(tmp_path):
    """Issue 36: the two empty documents were shown only after the errors were fixed (two rounds), and a warning
    named ids ('e.g. d9') where the errors name `file:line`. Now both come in one round, each with its place."""
    _three_rounds(tmp_path)
    out = runner.invoke(app, ["tasks", "validate", str(tmp_path / "task.yaml")])
    assert out.exit_code == 2 and "Traceback" not in out.output
    text = " ".join(out.output.split())  # rich may wrap the long lines
    assert "test.tsv:8: label for unknown query 'q9'" in text  # the errors, as before
    assert "and 2 warning(s)" in text and "warning empty_document x2" in text, out.output
    assert re.search(r"d3 at \S*corpus\.jsonl:3, d6 at \S*corpus\.jsonl:6", text), out.output
    assert "unlabeled_query" not in text  # label-based warnings wait for the labels to read cleanly
    js = runner.invoke(app, ["tasks", "validate", "--format", "json"], env={"PRIVATE_MTEB_TASKS_DIR": str(tmp_path)})
    entry = json.loads(js.output)["tasks"][0]
    assert entry["errors"] == 6 and entry["warnings"] == 2 and len(entry["problems"]) == 7  # header + 6
    assert entry["warning_lines"][0].startswith("warning empty_document x2")


@pytest.mark.parametrize("store", [False, True])
def test_every_warning_names_the_line_of_its_first_id(tmp_path, monkeypatch, store):
    if store:  # the disk-store corpus keeps the line of its duplicate and long documents too
        monkeypatch.setenv("PRIVATE_MTEB_STORE_MIN_DOCS", "0")
        monkeypatch.setenv("PRIVATE_MTEB_CORPUS_CACHE", str(tmp_path / "cache"))
    docs = [dict(d) for d in DOCS]
    docs[4]["text"] = docs[1]["text"]  # d5 (line 5) repeats d2
    docs[6]["text"] = "word " * 600  # d7 (line 7) is long
    queries = QUERIES + [{"_id": "q5", "text": "question about topic 1"}]  # line 5: unlabeled, same text as q1
    kb = _kb(tmp_path, docs=docs, queries=queries)
    c = load_collection({"format": "beir", "path": str(kb)}, tmp_path, "KB")
    w = summarize(c)["warnings"]
    at = {k: v["at"][0].rsplit("/", 1)[-1] for k, v in w.items()}
    assert at == {"duplicate_doc_text": "corpus.jsonl:5", "long_document": "corpus.jsonl:7",
                  "unlabeled_query": "queries.jsonl:5", "duplicate_query_text": "queries.jsonl:5"}, w
    out = runner.invoke(app, ["tasks", "validate", str(tmp_path / "task.yaml")])
    assert out.exit_code == 0 and re.search(r"e\.g\. d5 at \S*corpus\.jsonl:5\)", out.output), out.output
