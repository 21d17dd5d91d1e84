"""`private-mteb init DATA_DIR`: detected format and columns, commented YAML, validation, no silent overwrite.

Every test runs from a temporary project folder outside the repository.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from custom_tasks.config import TaskConfig
from custom_tasks.sources import load_collection
from runners.cli import app
from runners.config.benchmark import BenchmarkConfig
from runners.config.task_lookup import task_config_for
from tests.conftest import REPO

runner = CliRunner()
FIX = REPO / "tests" / "fixtures"


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    return tmp_path


def _evalset(project: Path) -> Path:
    """A small evalset: spreadsheet columns named the way people name them."""
    kb = project / "data" / "support_kb"
    kb.mkdir()
    shutil.copy(FIX / "evalset_mini" / "corpus.jsonl", kb / "corpus.jsonl")
    (kb / "evalset.csv").write_text("ID,Question,Relevant Docs,Topic\n"
                                    "a1,How do I connect to the VPN?,d1:2; d3:0,it\n"
                                    "a2,I forgot my password,d2 | d1:1,accounts\n")
    return kb


def test_init_beir_writes_commented_relative_yaml_and_validates(project):
    shutil.copytree(FIX / "beir_mini", project / "data" / "beir_mini")
    res = runner.invoke(app, ["init", "data/beir_mini"])
    assert res.exit_code == 0, res.output
    task_yaml, bench_yaml = project / "configs/tasks/beir-mini.yaml", project / "configs/benchmarks/beir-mini.yaml"
    assert "detected format: beir" in res.output
    assert "ok BeirMiniRetrieval: 5 documents; dev: 1 queries, 1 labels, test: 3 queries, 4 labels" in res.output
    text = task_yaml.read_text()
    assert "# the BEIR folder" in text and "labels: human" in text and text.count("#") >= 10
    raw = yaml.safe_load(text)
    assert raw["source"] == {"format": "beir", "path": "../../data/beir_mini", "tag_fields": ["topic"]}
    assert raw["splits"] == ["test"]
    bench = BenchmarkConfig.from_file(bench_yaml)
    assert [m.name for m in bench.models] == ["sentence-transformers/all-MiniLM-L6-v2", "bm25"]
    assert bench.tasks == ["BeirMiniRetrieval"]
    # the project moves: paths relative to the YAML keep working, from any working directory
    moved = project.parent / (project.name + "-moved")
    shutil.copytree(project, moved)
    cfg = task_config_for("BeirMiniRetrieval", BenchmarkConfig.from_file(moved / "configs/benchmarks/beir-mini.yaml"))
    assert cfg.path == (moved / "configs/tasks/beir-mini.yaml").resolve()
    assert len(load_collection(cfg.source, cfg.base_dir, cfg.name).corpus) == 5


def test_init_evalset_detects_columns_tags_and_reads_labels(project):
    kb = _evalset(project)
    res = runner.invoke(app, ["init", str(kb), "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["format"] == "evalset" and out["task"] == "SupportKbRetrieval"
    assert out["columns"] == {"doc_id": "_id", "title": "title", "text": "text", "query": "Question",
                              "relevant": "Relevant Docs", "query_id": "ID"}
    assert out["counts"]["queries"] == {"test": 2} and out["counts"]["labels"] == {"test": 4}
    cfg = TaskConfig.from_file(out["task_yaml"])
    assert cfg.source["tag_columns"] == ["Topic"] and cfg.source["corpus"] == "../../data/support_kb/corpus.jsonl"
    c = load_collection(cfg.source, cfg.base_dir, cfg.name)
    assert c.qrels == {"test": {"a1": {"d1": 2, "d3": 0}, "a2": {"d2": 1, "d1": 1}}}
    assert c.query_tags["a2"] == {"Topic": "accounts"}
    # the detected tag column turns on the breakdowns of `stats` and `report` (issue 19.10)
    bench = BenchmarkConfig.from_file(out["benchmark_yaml"])
    assert bench.stats.tags == ["Topic"]
    assert "stats:" in Path(out["benchmark_yaml"]).read_text()


def test_init_without_tag_columns_writes_no_stats_block(project):
    kb = project / "data" / "plain"
    kb.mkdir()
    shutil.copy(FIX / "evalset_mini" / "corpus.jsonl", kb / "corpus.jsonl")
    (kb / "evalset.csv").write_text("ID,Question,Relevant Docs\na1,How do I connect to the VPN?,d1\n")
    res = runner.invoke(app, ["init", str(kb), "--format", "json"])
    assert res.exit_code == 0, res.output
    bench = json.loads(res.output)["benchmark_yaml"]
    assert "stats:" not in Path(bench).read_text() and BenchmarkConfig.from_file(bench).stats.tags == []


def test_init_refuses_to_overwrite_without_force(project):
    kb = _evalset(project)
    assert runner.invoke(app, ["init", str(kb)]).exit_code == 0
    task_yaml = project / "configs/tasks/support-kb.yaml"
    task_yaml.write_text(task_yaml.read_text() + "# my edit\n")
    res = runner.invoke(app, ["init", str(kb)])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1
    assert "support-kb.yaml: already exists" in res.output and "--force" in res.output
    assert task_yaml.read_text().endswith("# my edit\n")
    assert runner.invoke(app, ["init", str(kb), "--force"]).exit_code == 0
    assert not task_yaml.read_text().endswith("# my edit\n")


@pytest.mark.parametrize("folder, fmt, docs", [("tables_mini", "tables", 3), ("trec_mini", "trec", 4),
                                               ("evalset_mini", "evalset", 5)])
def test_init_detects_other_formats(project, folder, fmt, docs):
    data = project / "data" / folder
    shutil.copytree(FIX / folder, data)
    if folder == "evalset_mini":
        (data / "evalset.jsonl").unlink()  # keep one evalset: the CSV with its split column
    res = runner.invoke(app, ["init", str(data), "--project", str(project), "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["format"] == fmt and out["counts"]["documents"] == docs and "test" in out["counts"]["queries"]


def test_data_outside_the_project_gets_an_absolute_path(project):
    res = runner.invoke(app, ["init", str(FIX / "beir_mini"), "--name", "Mini", "--stem", "mini"])
    assert res.exit_code == 0, res.output
    raw = yaml.safe_load((project / "configs/tasks/mini.yaml").read_text())
    assert raw["name"] == "Mini"
    assert raw["source"]["path"] == (FIX / "beir_mini").resolve().as_posix()


@pytest.mark.parametrize("setup, needle", [
    (lambda d: None, "cannot find a corpus table"),
    (lambda d: (d / "corpus.jsonl").write_text('{"_id": "d1", "text": "x"}\n'), "no questions with labels"),
])
def test_undetectable_folder_is_one_line(project, setup, needle):
    d = project / "data" / "odd"
    d.mkdir()
    setup(d)
    res = runner.invoke(app, ["init", str(d)])
    assert res.exit_code == 2 and needle in res.output and len(res.output.strip().splitlines()) == 1
    assert not (project / "configs").exists()


@pytest.mark.parametrize("stem", ["../../escape", "/tmp/escape", "..", "a\x00b"])
def test_init_stem_that_is_not_one_file_name_is_refused(project, stem):
    kb = _evalset(project)
    res = runner.invoke(app, ["init", str(kb), "--stem", stem])
    assert res.exit_code == 2 and "--stem" in res.output and "cannot name a file" in res.output, res.output
    assert not (project.parent / "escape.yaml").exists() and not Path("/tmp/escape.yaml").exists()
    assert not list(project.rglob("*.yaml"))


def test_init_on_a_corpus_with_a_nesting_bomb_is_one_line(project):
    kb = _evalset(project)
    corpus = kb / "corpus.jsonl"
    corpus.write_text('{"_id": "x", "text": ' + "[" * 100_000 + "]" * 100_000 + "}\n" + corpus.read_text())
    res = runner.invoke(app, ["init", str(kb)])
    assert res.exit_code == 2 and "internal error" not in res.output, res.output  # was RecursionError
    lines = res.output.strip().splitlines()
    assert "corpus.jsonl:1: JSON nested more than 100 levels deep" in lines[0] and "Recursion" not in res.output
    assert len(lines) == 2 and lines[1].startswith("wrote DRAFT")  # a failed validation says what it wrote


# ------------------------------------------------------------------ issue 29: what teams export
def _export(project: Path, corpus_cols=("id", "body"), reversed_grades=True, bad_label=False, alt_ids=False) -> Path:
    """corpus as a JSON array, queries as ';' CSV, labels as a JSON array with 'query number' and 1 = best."""
    d = project / "data" / "export"
    d.mkdir()
    cid, ctext = corpus_cols
    docs = [{cid: f"D{i}", "title": f"Doc {i}", ctext: f"text of doc {i}", **({"alt": f"A{i}"} if alt_ids else {})}
            for i in range(6)]
    (d / "corpus.json").write_text(json.dumps(docs, indent=2))
    (d / "queries.csv").write_text("query number;question\n1;\"about doc 1; really\"\n2;about doc 2\n")
    labels = [{"query number": 1, "doc": "D1", "relevance": 1}, {"query number": 1, "doc": "D3", "relevance": 3},
              {"query number": 2, "doc": "D2", "relevance": 2}, {"query number": 2, "doc": "D9" if bad_label else "D4",
                                                                 "relevance": 4}]
    (d / "qrels.json").write_text(json.dumps(labels))
    return d


def test_init_reads_json_arrays_semicolon_csv_and_names_query_number(project):
    d = _export(project)
    res = runner.invoke(app, ["init", str(d)])
    assert res.exit_code == 0, res.output
    raw = yaml.safe_load((project / "configs/tasks/export.yaml").read_text())
    assert raw["source"]["columns"]["query_id"] == "query number" and raw["source"]["columns"]["text"] == "body"
    c = load_collection(raw["source"], project / "configs/tasks", "T")
    assert c.queries["1"] == "about doc 1; really" and c.qrels["test"]["1"] == {"D1": 1, "D3": 3}
    assert "your grades are 1, 2, 3, 4 (no 0)" in res.output
    assert "# grades_map: {1: 2, 2: 1, 3: 0, 4: 0}" in (project / "configs/tasks/export.yaml").read_text()


def test_init_parquet_export(project):
    d = project / "data" / "pq"
    d.mkdir()
    import pandas as pd

    pd.DataFrame({"docno": ["a", "b"], "abstract": ["x y", "z"]}).to_parquet(d / "corpus.parquet")
    pd.DataFrame({"qid": ["q1"], "query": ["x?"]}).to_parquet(d / "queries.parquet")
    pd.DataFrame({"qid": ["q1"], "docno": ["a"], "rel": [1]}).to_parquet(d / "qrels.parquet")
    res = runner.invoke(app, ["init", str(d)])
    assert res.exit_code == 0 and "doc_id=docno" in res.output and "text=abstract" in res.output, res.output


def test_unknown_columns_name_what_was_found_write_a_draft_and_the_next_init_keeps_the_fill_in(project):
    # unknown names: the text is told from its values (issue 36), but two columns of unique ids tie for doc_id
    d = _export(project, corpus_cols=("ref", "payload"), alt_ids=True)
    res = runner.invoke(app, ["init", str(d)])
    assert res.exit_code == 2, res.output
    assert "doc_id in corpus.json (equally likely: ref, alt; columns found: ref, title, payload, alt)" in res.output
    assert "text in corpus.json" not in res.output and "wrote DRAFT" in res.output
    task = project / "configs/tasks/export.yaml"
    text = task.read_text()
    assert text.startswith("# DRAFT written by `private-mteb init` (columns to fill in)")
    assert 'doc_id: "?"' in text and "FILL IN: document id column; columns in corpus.json: ref, title, payload, alt" in text
    assert (project / "configs/benchmarks/export.yaml").read_text().startswith("# DRAFT")
    task.write_text(text.replace('doc_id: "?"', "doc_id: ref").replace('text: "?"', "text: payload")
                    .replace("# grades_map:", "grades_map:"))
    again = runner.invoke(app, ["init", str(d)])  # no --force needed: a draft is replaced
    assert again.exit_code == 0, again.output
    final = task.read_text()
    assert not final.startswith("# DRAFT") and "doc_id: ref" in final
    raw = yaml.safe_load(final)
    assert raw["source"]["grades_map"] == {1: 2, 2: 1, 3: 0, 4: 0}
    c = load_collection(raw["source"], task.parent, "T")
    assert c.qrels["test"]["1"] == {"D1": 2, "D3": 0} and c.qrels["test"]["2"] == {"D2": 1, "D4": 0}
    third = runner.invoke(app, ["init", str(d)])  # a validated file is never overwritten silently
    assert third.exit_code == 2 and "already exists" in third.output


def test_failed_validation_writes_a_draft_and_says_so(project):
    d = _export(project, bad_label=True)
    res = runner.invoke(app, ["init", str(d)])
    assert res.exit_code == 2 and "qrels.json:1: label for unknown document 'D9'" in res.output, res.output
    assert "wrote DRAFT" in res.output and "(validation failed)" in res.output
    assert (project / "configs/tasks/export.yaml").read_text().startswith("# DRAFT written by `private-mteb init` "
                                                                          "(validation failed)")
    (d / "qrels.json").write_text((d / "qrels.json").read_text().replace("D9", "D4"))
    res = runner.invoke(app, ["init", str(d)])
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("value, needle", [({1: -1}, "1 maps to -1"), ({}, "non-empty mapping"),
                                           ("1:2", "non-empty mapping"), ({1: 1.5}, "whole numbers")])
def test_grades_map_is_validated(project, value, needle):
    d = _export(project)
    src = {"format": "tables", "corpus": str(d / "corpus.json"), "queries": str(d / "queries.csv"),
           "qrels": str(d / "qrels.json"), "grades_map": value,
           "columns": {"doc_id": "id", "text": "body", "query_id": "query number", "query": "question",
                       "qrels_query_id": "query number", "qrels_doc_id": "doc", "grade": "relevance"}}
    with pytest.raises(Exception) as e:
        load_collection(src, project, "T")
    assert "grades_map" in str(e.value) and needle in str(e.value)


def test_grades_map_changes_the_revision_and_an_unmapped_grade_is_an_error(project):
    d = _export(project)
    src = {"format": "tables", "corpus": str(d / "corpus.json"), "queries": str(d / "queries.csv"),
           "qrels": str(d / "qrels.json"),
           "columns": {"doc_id": "id", "text": "body", "query_id": "query number", "query": "question",
                       "qrels_query_id": "query number", "qrels_doc_id": "doc", "grade": "relevance"}}
    plain = load_collection(src, project, "T").content_hash()
    mapped = load_collection({**src, "grades_map": {1: 2, 2: 1, 3: 0, 4: 0}}, project, "T").content_hash()
    assert plain != mapped
    with pytest.raises(Exception, match=r"qrels.json:1: grade 4 is not in the source's grades_map \(its grades: 1, 2\)"):
        load_collection({**src, "grades_map": {1: 1, 2: 0}}, project, "T")


def test_grades_map_maps_given_grades_not_an_evalsets_default_grade(project):
    """`default_grade:` is already on private-mteb's scale; only grades written in the export are mapped."""
    d = project / "data" / "ev"
    d.mkdir()
    (d / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "text": f"t{i}"}) + "\n" for i in range(3)))
    (d / "evalset.csv").write_text("query,relevant\nvpn?,d1:1; d2\n")
    src = {"format": "evalset", "corpus": str(d / "corpus.jsonl"), "evalset": str(d / "evalset.csv"),
           "grades_map": {1: 2, 2: 1}}
    c = load_collection(src, project, "T")
    assert list(c.qrels["test"].values()) == [{"d1": 2, "d2": 1}]
