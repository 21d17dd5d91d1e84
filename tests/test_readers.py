"""Each reader on small hand-written fixtures (CSV/TSV/JSONL, Parquet written into tmp_path), plus SciFact."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pandas as pd
import pytest

from custom_tasks.errors import CollectionError, ConfigError
from custom_tasks.query_ids import ContentIds
from custom_tasks.sources import load_collection, parse_source
from custom_tasks.validate import format_summary, summarize

REPO = Path(__file__).resolve().parents[1]
FIX = Path(__file__).resolve().parent / "fixtures"


# --- beir ---------------------------------------------------------------------------------------

def test_beir_reads_corpus_queries_and_all_splits():
    c = load_collection({"format": "beir", "path": "beir_mini", "tag_fields": ["topic"]}, FIX, "Mini")
    assert c.name == "Mini"
    assert set(c.corpus) == {"d1", "d2", "d3", "d4", "101"}  # numeric JSON id -> "101"
    assert c.corpus["d3"] == {"title": "", "text": "Printers on floor 3 need the new driver."}
    assert c.corpus["101"]["title"] == ""  # null title -> ""
    assert c.queries["q1"] == "How do I connect to the VPN?"
    assert c.splits == ["dev", "test"]
    assert c.qrels["test"] == {"q1": {"d1": 2}, "q2": {"d2": 1}, "q3": {"d4": 2, "101": 1}}
    assert c.qrels["dev"] == {"q4": {"d3": 1}}
    assert c.query_tags == {"q1": {"topic": "network"}, "q2": {"topic": "accounts"}, "q3": {"topic": "finance"}}
    assert c.warnings == []


def test_beir_splits_restrict_without_unlabeled_warnings_for_left_out_splits():
    c = load_collection({"format": "beir", "path": "beir_mini", "splits": ["test"]}, FIX, "Mini")
    assert c.splits == ["test"]
    assert c.query_tags == {}
    assert c.warnings == []  # q4 is labelled in dev, which was left out on purpose


def test_beir_relative_path_resolves_against_base_dir(tmp_path):
    shutil.copytree(FIX / "beir_mini", tmp_path / "data" / "kb")
    c = load_collection({"format": "beir", "path": "data/kb"}, tmp_path, "Mini")
    assert len(c.corpus) == 5


# --- trec ---------------------------------------------------------------------------------------

def test_trec_with_csv_corpus_tsv_queries_and_split_mapping():
    src = {"format": "trec", "corpus": "trec_mini/corpus.csv", "queries": "trec_mini/queries.tsv",
           "qrels": {"test": "trec_mini/qrels.test.txt", "dev": "trec_mini/qrels.dev.txt"}}
    c = load_collection(src, FIX, "Trec")
    assert set(c.corpus) == {"1", "2", "3", "4"}  # numeric CSV ids stay strings, never "1.0"
    assert c.corpus["1"]["text"] == "Install the VPN client, then sign in with your company account."
    assert c.corpus["2"]["title"] == ""
    assert c.corpus["3"]["text"].endswith('the "universal" package.')  # multi-line quoted cell
    assert c.qrels == {"test": {"10": {"1": 2, "2": 0}, "11": {"2": 1}}, "dev": {"12": {"3": 1}}}


def test_trec_single_qrels_file_uses_split_key_and_columns_override(tmp_path):
    (tmp_path / "docs.jsonl").write_text('{"id": "a", "body": "alpha text"}\n{"id": "b", "body": "beta text"}\n')
    (tmp_path / "q.jsonl").write_text('{"qid": "x", "q": "alpha?"}\n')
    (tmp_path / "run.qrels").write_text("x 0 a 1\nx Q0 b 0\n")
    src = {"format": "trec", "corpus": "docs.jsonl", "queries": "q.jsonl", "qrels": "run.qrels", "split": "dev",
           "columns": {"doc_id": "id", "text": "body", "query_id": "qid", "query": "q"}}
    c = load_collection(src, tmp_path, "T")
    assert c.qrels == {"dev": {"x": {"a": 1, "b": 0}}}
    assert c.corpus["a"] == {"title": "", "text": "alpha text"}


# --- tables -------------------------------------------------------------------------------------

TABLES = {"format": "tables", "corpus": "tables_mini/docs.csv", "queries": "tables_mini/questions.tsv",
          "qrels": "tables_mini/labels.jsonl", "split_column": "split", "tag_columns": ["team", "source"],
          "columns": {"doc_id": "doc", "title": "heading", "text": "body", "query_id": "qid", "query": "question",
                      "qrels_query_id": "q", "qrels_doc_id": "d", "grade": "rel"}}


def test_tables_custom_columns_split_column_and_tags():
    c = load_collection(TABLES, FIX, "Tables")
    assert c.corpus["kb1"] == {"title": "VPN setup",
                               "text": "Install the VPN client and sign in with your company account."}
    assert c.corpus["kb3"]["title"] == ""
    assert c.qrels == {"test": {"A": {"kb1": 2}, "B": {"kb2": 1, "kb1": 0}}, "dev": {"C": {"kb3": 1}}}
    assert c.query_tags == {"A": {"team": "it", "source": "human"}, "B": {"team": "it", "source": "llm"},
                            "C": {"team": "facilities"}}


def test_tables_parquet_everywhere_with_numeric_ids(tmp_path):
    pd.DataFrame({"_id": [1, 2, 3], "title": ["One", None, "Three"],
                  "text": ["first doc", "second doc", "third doc"]}).to_parquet(tmp_path / "corpus.parquet")
    pd.DataFrame({"_id": [10, 11], "text": ["first?", "second?"]}).to_parquet(tmp_path / "queries.parquet")
    pd.DataFrame({"query-id": [10, 11, 11], "corpus-id": [1.0, 2.0, 3.0],
                  "score": [2.0, 1.0, 0.0]}).to_parquet(tmp_path / "qrels.parquet")
    src = {"format": "tables", "corpus": "corpus.parquet", "queries": "queries.parquet", "qrels": "qrels.parquet"}
    c = load_collection(src, tmp_path, "P")
    assert set(c.corpus) == {"1", "2", "3"}
    assert c.corpus["2"]["title"] == ""
    assert c.qrels == {"test": {"10": {"1": 2}, "11": {"2": 1, "3": 0}}}


def test_tables_tsv_qrels_mapping_and_splits_filter(tmp_path):
    shutil.copytree(FIX / "tables_mini", tmp_path, dirs_exist_ok=True)
    (tmp_path / "t.csv").write_text("q,d,rel\nA,kb1,2\n")
    (tmp_path / "d.tsv").write_text("q\td\trel\nC\tkb3\t1\n")
    src = {**TABLES, "corpus": "docs.csv", "queries": "questions.tsv", "qrels": {"test": "t.csv", "dev": "d.tsv"},
           "splits": ["dev"]}
    del src["split_column"]
    c = load_collection(src, tmp_path, "T")
    assert c.qrels == {"dev": {"C": {"kb3": 1}}}


# --- evalset ------------------------------------------------------------------------------------

def test_evalset_jsonl_relevant_forms_tags_and_evidence_spans():
    c = load_collection({"format": "evalset", "corpus": "evalset_mini/corpus.jsonl",
                         "evalset": "evalset_mini/evalset.jsonl"}, FIX, "E")
    assert c.qrels == {"test": {"e1": {"d1": 2, "d3": 0}, "e2": {"d2": 1}, "e3": {"d4": 2, "101": 1}}}
    assert c.query_tags == {"e1": {"source": "human", "topic": "it"}, "e2": {"source": "llm"}}
    spans = c.spans["test"]
    assert spans["e1"]["d1"] == [(0, 22)]
    assert c.corpus["d2"]["text"][slice(*spans["e2"]["d2"][0])] == "your password"
    d4 = c.corpus["d4"]["text"]
    assert [d4[s:e] for s, e in spans["e3"]["d4"]] == ["Submit expense reports", "the 5th"]


def test_evalset_csv_generates_ids_reads_split_column_and_grades():
    src = {"format": "evalset", "corpus": "evalset_mini/corpus.jsonl", "evalset": "evalset_mini/evalset.csv",
           "split_column": "split", "tag_columns": ["topic"], "default_grade": 2,
           "columns": {"relevant": "relevant docs", "query": "question"}}
    c = load_collection(src, FIX, "E")
    # no query_id column: ids from the question text (custom_tasks/query_ids.py), not row numbers
    q1, q2, q3, q4 = (ContentIds().next_id(t) for t in ("How do I connect to the VPN?", "I forgot my password",
                                                          "When are expense reports due?", "printer driver"))
    assert c.queries[q1] == "How do I connect to the VPN?" and c.queries[q4] == "printer driver"
    assert c.qrels == {"test": {q1: {"d1": 2, "d3": 0}, q2: {"d2": 2, "d1": 1}, q4: {"d3": 2}},
                       "dev": {q3: {"d4": 2, "101": 2}}}
    assert c.query_tags[q2] == {"topic": "accounts"} and q4 not in c.query_tags


def test_evalset_parquet_with_list_and_map_columns(tmp_path):
    shutil.copy(FIX / "evalset_mini" / "corpus.jsonl", tmp_path / "corpus.jsonl")
    pd.DataFrame({"query_id": ["a", "b"], "query": ["vpn?", "password?"],
                  "relevant": [["d1", "d3"], ["d2"]], "topic": ["it", "accounts"]}).to_parquet(tmp_path / "e.parquet")
    c = load_collection({"format": "evalset", "corpus": "corpus.jsonl", "evalset": "e.parquet",
                         "tag_columns": ["topic"], "split": "dev"}, tmp_path, "E")
    assert c.qrels == {"dev": {"a": {"d1": 1, "d3": 1}, "b": {"d2": 1}}}
    assert c.query_tags == {"a": {"topic": "it"}, "b": {"topic": "accounts"}}
    # dict columns become Parquet structs: keys missing in a row read back as None and are skipped
    pd.DataFrame({"query": ["vpn?", "password?"], "relevant": [{"d1": 2, "d3": 1}, {"d2": 1}],
                  "tags": [{"source": "human"}, {"source": "llm"}],
                  "evidence": [{"d1": "VPN client"}, {"d2": "password"}]}).to_parquet(tmp_path / "m.parquet")
    c = load_collection({"format": "evalset", "corpus": "corpus.jsonl", "evalset": "m.parquet"}, tmp_path, "E")
    q1, q2 = ContentIds().next_id("vpn?"), ContentIds().next_id("password?")
    assert c.qrels == {"test": {q1: {"d1": 2, "d3": 1}, q2: {"d2": 1}}}
    assert c.query_tags == {q1: {"source": "human"}, q2: {"source": "llm"}}
    assert c.spans == {"test": {q1: {"d1": [(12, 22)]}, q2: {"d2": [(11, 19)]}}}


def test_demo_kb_evalset_loads_when_present():
    demo = REPO / "data" / "demo_kb"
    if not (demo / "evalset.jsonl").exists() or not (demo / "corpus.jsonl").exists():
        pytest.skip("data/demo_kb not written yet")
    c = load_collection({"format": "evalset", "corpus": "corpus.jsonl", "evalset": "evalset.jsonl"}, demo, "DemoKB")
    assert c.qrels["test"] and c.spans.get("test")
    for qid, docs in c.spans["test"].items():
        for doc_id, spans in docs.items():
            for s, e in spans:
                assert 0 <= s < e <= len(c.corpus[doc_id]["text"])


# --- SciFact ------------------------------------------------------------------------------------

def test_scifact_beir_loads_fast():
    if not (REPO.parent / "shared" / "datasets" / "scifact").is_dir():
        pytest.skip("../shared/datasets/scifact is absent")
    t0 = time.perf_counter()
    c = load_collection({"format": "beir", "path": "../shared/datasets/scifact"}, REPO, "SciFact")
    elapsed = time.perf_counter() - t0
    assert len(c.corpus) == 5183
    assert len(c.qrels["test"]) == 300
    assert sum(len(d) for d in c.qrels["test"].values()) == 339
    assert elapsed < 2.0, f"SciFact took {elapsed:.2f}s"
    s = summarize(c)
    assert s["splits"]["test"] == {"queries": 300, "judgments": 339}


# --- source config ------------------------------------------------------------------------------

@pytest.mark.parametrize("source, expected", [
    ({"format": "beir", "path": "x", "colums": {}}, "unknown key 'colums' for format beir"),
    ({"format": "trec", "corpus": "c", "queries": "q"}, "missing key 'qrels'"),
    ({"format": "evalset", "corpus": "c"}, "missing key 'evalset'"),
    ({"path": "x"}, "missing key 'format'"),
    ({"format": "csv", "path": "x"}, "unknown format 'csv' (known formats: beir, trec, tables, evalset, judgments)"),
    ({"format": "tables", "corpus": "c", "queries": "q", "qrels": "r", "columns": {"doc": "id"}},
     "unknown key 'columns.doc'"),
    ({"format": "trec", "corpus": "c", "queries": "q", "qrels": 3},
     "key 'qrels': must be a file path or a non-empty {split: file} mapping"),
    ({"format": "evalset", "corpus": "c", "evalset": "e", "default_grade": -1}, "key 'default_grade'"),
])
def test_source_config_errors_name_the_key(source, expected):
    with pytest.raises(ConfigError) as e:
        parse_source(source, "Demo")
    assert expected in str(e.value)
    assert str(e.value).startswith("source of task 'Demo': ")
    with pytest.raises(CollectionError):
        load_collection(source, FIX, "Demo")


def test_format_summary_lists_counts_and_examples(tmp_path):
    shutil.copytree(FIX / "beir_mini", tmp_path / "kb")
    (tmp_path / "kb" / "qrels" / "dev.tsv").unlink()
    c = load_collection({"format": "beir", "path": "kb"}, tmp_path, "Mini")
    text = format_summary(c)
    assert "Mini: 5 documents, 4 queries (test: 3 queries / 4 judgments)" in text
    assert "unlabeled_query x1" in text and "e.g. q4" in text
    assert "no warnings" in format_summary(load_collection({"format": "beir", "path": "beir_mini"}, FIX, "M"))
