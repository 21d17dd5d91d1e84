"""Every validation error asserted by its message (file and line in the string), and every warning kind."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from custom_tasks.errors import CollectionError
from custom_tasks.sources import load_collection
from custom_tasks.validate import summarize

FIX = Path(__file__).resolve().parent / "fixtures"
BAD = FIX / "bad"
QRELS_HEADER = "query-id\tcorpus-id\tscore\n"


def beir(tmp_path: Path, **files: str | bytes | Path) -> Path:
    """A copy of beir_mini with some files replaced (text, bytes, or a fixture path); '/' as '__'."""
    root = tmp_path / "kb"
    shutil.copytree(FIX / "beir_mini", root)
    for name, content in files.items():
        target = root / name.replace("__", "/").replace("_jsonl", ".jsonl").replace("_tsv", ".tsv")
        if isinstance(content, Path):
            shutil.copy(content, target)
        elif isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return root


def load_beir(root: Path, **extra):
    return load_collection({"format": "beir", "path": str(root), **extra}, root.parent, "T")


def error_of(fn, *args, **kwargs) -> str:
    with pytest.raises(CollectionError) as e:
        fn(*args, **kwargs)
    return str(e.value)


# --- errors: files and encodings -----------------------------------------------------------------

def test_missing_file(tmp_path):
    root = beir(tmp_path)
    (root / "queries.jsonl").unlink()
    assert error_of(load_beir, root).endswith("kb/queries.jsonl: queries file not found")


def test_missing_folder_and_missing_split_file(tmp_path):
    assert error_of(load_beir, tmp_path / "nope").endswith("nope: BEIR folder not found")
    msg = error_of(load_beir, beir(tmp_path), splits=["train"])
    assert msg.endswith("kb/qrels/train.tsv: qrels file not found")


def test_wrong_encoding_names_line_and_suggests_encoding_key(tmp_path):
    root = beir(tmp_path, corpus_jsonl=BAD / "corpus_latin1.jsonl")
    msg = error_of(load_beir, root)
    assert "corpus.jsonl:3: byte 0xe9 is not valid utf-8" in msg
    assert "encoding: latin-1" in msg
    c = load_beir(root, encoding="latin-1")
    assert "café" in c.corpus["d3"]["text"]


def test_unknown_encoding_name(tmp_path):
    assert "unknown encoding 'utf-9'" in error_of(load_beir, beir(tmp_path), encoding="utf-9")


def test_malformed_json_line(tmp_path):
    msg = error_of(load_beir, beir(tmp_path, corpus_jsonl=BAD / "corpus_bad_json.jsonl"))
    assert "corpus.jsonl:2: malformed JSON" in msg
    msg = error_of(load_beir, beir(tmp_path / "b", queries_jsonl='{"_id": "q1", "text": "a"}\n\n["q2"]\n'))
    assert "queries.jsonl:3: expected a JSON object per line, got list" in msg


def test_empty_files(tmp_path):
    assert error_of(load_beir, beir(tmp_path, corpus_jsonl="")).endswith("corpus.jsonl: corpus file is empty")
    assert error_of(load_beir, beir(tmp_path / "b", queries_jsonl="\n  \n")).endswith(
        "queries.jsonl: queries file is empty")
    (tmp_path / "docs.csv").write_text("_id,text\n")
    (tmp_path / "q.csv").write_text("_id,text\nq,x\n")
    src = {"format": "tables", "corpus": "docs.csv", "queries": "q.csv", "qrels": "r.tsv"}
    assert error_of(load_collection, src, tmp_path, "T").endswith("docs.csv: corpus file is empty (no rows below "
                                                                  "the header)")


def test_missing_column_lists_columns_found(tmp_path):
    (tmp_path / "docs.csv").write_text("id,body\nd1,hello\n")
    src = {"format": "tables", "corpus": "docs.csv", "queries": "q.csv", "qrels": "r.tsv"}
    msg = error_of(load_collection, src, tmp_path, "T")
    assert "docs.csv:1: missing column '_id' (columns found: id, body)" in msg and "columns:" in msg
    (tmp_path / "docs.tsv").write_text("_id,text\nd1,hello\n")
    msg = error_of(load_collection, {**src, "corpus": "docs.tsv"}, tmp_path, "T")
    assert "docs.tsv:1: missing column '_id' (columns found: _id,text)" in msg and "comma-separated" in msg


def test_missing_field_in_jsonl_row(tmp_path):
    root = beir(tmp_path, corpus_jsonl='{"_id": "d1", "text": "a"}\n{"_id": "d2", "body": "b"}\n')
    assert "corpus.jsonl:2: missing field 'text' (fields found: _id, body)" in error_of(load_beir, root)


def test_missing_tag_column(tmp_path):
    shutil.copytree(FIX / "tables_mini", tmp_path, dirs_exist_ok=True)
    src = {"format": "tables", "corpus": "docs.csv", "queries": "questions.tsv", "qrels": "labels.jsonl",
           "tag_columns": ["teem"],
           "columns": {"doc_id": "doc", "text": "body", "query_id": "qid", "query": "question"}}
    msg = error_of(load_collection, src, tmp_path, "T")
    assert "questions.tsv:1: missing column 'teem' (columns found: qid, question, team, source)" in msg
    assert "tag_columns:" in msg


def test_csv_wrong_field_count_after_multiline_cell(tmp_path):
    shutil.copytree(FIX / "trec_mini", tmp_path, dirs_exist_ok=True)
    with open(tmp_path / "corpus.csv", "a") as f:
        f.write("5,Extra,too,many\n")
    src = {"format": "trec", "corpus": "corpus.csv", "queries": "queries.tsv", "qrels": "qrels.test.txt"}
    msg = error_of(load_collection, src, tmp_path, "T")
    assert "corpus.csv:7: found 4 fields but the header has 3 (_id, title, text)" in msg


# --- errors: ids, text, labels -------------------------------------------------------------------

def test_duplicate_document_id_names_first_occurrence(tmp_path):
    msg = error_of(load_beir, beir(tmp_path, corpus_jsonl=BAD / "corpus_dup_id.jsonl"))
    assert "corpus.jsonl:6: duplicate document id 'd2' (first at line 2)" in msg


def test_duplicate_query_id_in_csv_after_multiline_cell(tmp_path):
    shutil.copytree(FIX / "trec_mini", tmp_path, dirs_exist_ok=True)
    (tmp_path / "queries.csv").write_text('_id,text\n10,"a question\nover two lines"\n11,b\n10,again\n')
    src = {"format": "trec", "corpus": "corpus.csv", "queries": "queries.csv", "qrels": "qrels.test.txt"}
    assert "queries.csv:5: duplicate query id '10' (first at line 2)" in error_of(load_collection, src, tmp_path, "T")


def test_duplicate_id_in_parquet_names_rows(tmp_path):
    pd.DataFrame({"_id": ["a", "b", "a"], "text": ["x", "y", "z"]}).to_parquet(tmp_path / "c.parquet")
    src = {"format": "tables", "corpus": "c.parquet", "queries": "q.csv", "qrels": "r.tsv"}
    msg = error_of(load_collection, src, tmp_path, "T")
    assert "c.parquet: row 3: duplicate document id 'a' (first at row 1)" in msg


@pytest.mark.parametrize("part, content, expected", [
    ("corpus_jsonl", '{"_id": "", "text": "ok"}\n', "corpus.jsonl:1: empty document id"),
    ("queries_jsonl", '{"_id": "q1", "text": "ok"}\n{"_id": "q2", "text": ""}\n',
     "queries.jsonl:2: query 'q2' has empty text"),
    ("queries_jsonl", '{"_id": "q1", "text": "ok"}\n{"_id": null, "text": "x"}\n', "queries.jsonl:2: empty query id"),
])
def test_empty_text_and_ids(tmp_path, part, content, expected):
    assert expected in error_of(load_beir, beir(tmp_path, **{part: content}))


def test_title_only_documents_are_kept_with_a_counted_warning(tmp_path):
    """mteb embeds title + text, so BEIR's title-only documents are scoreable: keep them, count them."""
    corpus = ('{"_id": "d1", "text": "Install the VPN client."}\n'
              '{"_id": "d2", "title": "Password reset", "text": ""}\n'
              '{"_id": "d3", "title": "Printer setup"}\n'
              '{"_id": "d4", "title": "Printer setup", "text": null}\n'
              '{"_id": 101, "text": "Numeric ids in JSON are read as strings."}\n')
    c = load_beir(beir(tmp_path, corpus_jsonl=corpus))
    assert c.corpus["d2"] == {"title": "Password reset", "text": ""}
    assert c.corpus["d3"] == {"title": "Printer setup", "text": ""}
    assert kinds(c)["title_only_document"] == [("d2",), ("d3",), ("d4",)]
    msgs = [w.message for w in c.warnings if w.kind == "title_only_document"]
    assert msgs[0].endswith("corpus.jsonl:2: document 'd2' has a title but empty text: mteb embeds the title alone")
    # two title-only documents are duplicates by title, not every empty text a duplicate of the first
    assert kinds(c)["duplicate_doc_text"] == [("d4",)]
    s = summarize(c)["warnings"]["title_only_document"]
    assert s["count"] == 3 and "title alone" in s["explanation"]


def test_title_only_documents_in_csv_and_parquet(tmp_path):
    shutil.copytree(FIX / "trec_mini", tmp_path, dirs_exist_ok=True)
    (tmp_path / "c.csv").write_text("_id,title,text\n1,VPN,\n2,,Reset your password\n3,Printers,Add one\n"
                                   "4,Wifi,x\n5,Email,y\n")
    src = {"format": "trec", "corpus": "c.csv", "queries": "queries.tsv", "qrels": "qrels.test.txt"}
    c = load_collection(src, tmp_path, "T")
    assert c.corpus["1"] == {"title": "VPN", "text": ""} and kinds(c)["title_only_document"] == [("1",)]
    (tmp_path / "c.csv").write_text("_id,title,text\n1,,\n2,,Reset your password\n3,Printers,Add one\n4,Wifi,x\n")
    c = load_collection(src, tmp_path, "T")  # an empty document: kept, a warning (tests/test_problems_at_once.py)
    assert c.corpus["1"] == {"title": "", "text": ""} and kinds(c)["empty_document"] == [("1",)]
    pd.DataFrame({"_id": ["1", "2", "3", "4", "5"], "title": ["VPN", None, "P", "W", "E"],
                  "text": [None, "Reset", "a", "b", "c"]}).to_parquet(tmp_path / "c.parquet")
    c = load_collection({**src, "corpus": "c.parquet"}, tmp_path, "T")
    assert c.corpus["1"]["text"] == "" and c.corpus["2"]["title"] == ""


def test_jsonl_corpus_where_no_row_has_the_text_field_is_a_mapping_error(tmp_path):
    corpus = '{"_id": "d1", "title": "A", "body": "x"}\n{"_id": "d2", "title": "B", "body": "y"}\n'
    msg = error_of(load_beir, beir(tmp_path, corpus_jsonl=corpus))
    assert "corpus.jsonl:1: missing field 'text' (fields found: _id, title, body)" in msg


@pytest.mark.parametrize("part, content, expected", [
    ("corpus_jsonl", '{"_id": "d1", "text": "ok"}\n{"_id": "d2", "text": 42}\n',
     "corpus.jsonl:2: document 'd2': field 'text' is a number (42), not a string"),
    ("corpus_jsonl", '{"_id": "d1", "text": ["a", "b"]}\n',
     "corpus.jsonl:1: document 'd1': field 'text' is a list (['a', 'b']), not a string"),
    ("corpus_jsonl", '{"_id": "d1", "text": {"en": "a"}}\n',
     "corpus.jsonl:1: document 'd1': field 'text' is an object ({'en': 'a'}), not a string"),
    ("corpus_jsonl", '{"_id": "d1", "title": 7, "text": "ok"}\n',
     "corpus.jsonl:1: document 'd1': field 'title' is a number (7), not a string"),
    ("corpus_jsonl", '{"_id": "d1", "title": true, "text": "x"}\n',
     "corpus.jsonl:1: document 'd1': field 'title' is a boolean (True), not a string"),
    ("queries_jsonl", '{"_id": "q1", "text": "ok"}\n{"_id": "q2", "text": 3.5}\n',
     "queries.jsonl:2: query 'q2': field 'text' is a number (3.5), not a string"),
])
def test_non_string_text_is_an_error_not_str_of_it(tmp_path, part, content, expected):
    assert expected in error_of(load_beir, beir(tmp_path, **{part: content}))


def test_non_string_text_in_parquet_and_evalset_numbers_in_csv_are_fine(tmp_path):
    shutil.copytree(FIX / "trec_mini", tmp_path, dirs_exist_ok=True)
    pd.DataFrame({"_id": ["1", "2"], "text": [10, 20]}).to_parquet(tmp_path / "c.parquet")
    src = {"format": "trec", "corpus": "c.parquet", "queries": "queries.tsv", "qrels": "qrels.test.txt"}
    assert "c.parquet: row 1: document '1': field 'text' is a number (10), not a string" in error_of(
        load_collection, src, tmp_path, "T")
    msg = error_of(evalset, tmp_path, '{"query_id": "a", "query": 12, "relevant": "d1"}\n')
    assert "evalset.jsonl:1: query 'a': field 'query' is a number (12), not a string" in msg
    # CSV/TSV cells are strings: a numeric-looking text is just text
    (tmp_path / "q.csv").write_text("_id,text\n10,2024\n11,what is 42\n12,c\n")
    c = load_collection({**src, "corpus": "corpus.csv", "queries": "q.csv"}, tmp_path, "T")
    assert c.queries["10"] == "2024"


@pytest.mark.parametrize("qrels, expected", [
    (BAD / "qrels_unknown_doc.tsv", "qrels/test.tsv:4: label for unknown document 'd99' (not in the corpus)"),
    (QRELS_HEADER + "q1\td1\t1\nq9\td1\t1\n", "qrels/test.tsv:3: label for unknown query 'q9'"),
    (BAD / "qrels_bad_grade.tsv", "qrels/test.tsv:3: grade 'high' is not an integer"),
    (QRELS_HEADER + "q1\td1\t1.5\n", "qrels/test.tsv:2: grade '1.5' is not an integer"),
    (QRELS_HEADER + "q1\td1\t-1\n", "qrels/test.tsv:2: grade -1 is negative"),
    (QRELS_HEADER + "q1\td1\t1\nq1\td1\t2\n",
     "qrels/test.tsv:3: query 'q1' / document 'd1' judged twice in split 'test' with different grades 1 and 2 "
     "(first at line 2)"),
])
def test_label_errors(tmp_path, qrels, expected):
    assert expected in error_of(load_beir, beir(tmp_path, qrels__test_tsv=qrels))


def test_float_grades_that_are_whole_numbers_are_fine(tmp_path):
    c = load_beir(beir(tmp_path, qrels__test_tsv=QRELS_HEADER + "q1\td1\t2.0\n"))
    assert c.qrels["test"] == {"q1": {"d1": 2}}


def test_split_with_no_labels(tmp_path):
    msg = error_of(load_beir, beir(tmp_path, qrels__dev_tsv=QRELS_HEADER))
    assert msg.endswith("kb/qrels/dev.tsv: split 'dev' has no labels (splits with labels: test)")
    shutil.copytree(FIX / "tables_mini", tmp_path / "t")
    src = {"format": "tables", "corpus": "docs.csv", "queries": "questions.tsv", "qrels": "labels.jsonl",
           "split_column": "split", "splits": ["train"],
           "columns": {"doc_id": "doc", "text": "body", "query_id": "qid", "query": "question",
                       "qrels_query_id": "q", "qrels_doc_id": "d", "grade": "rel"}}
    msg = error_of(load_collection, src, tmp_path / "t", "T")
    assert msg.endswith("labels.jsonl: split 'train' has no labels (splits with labels: dev, test)")


def test_trec_qrels_errors(tmp_path):
    shutil.copytree(FIX / "trec_mini", tmp_path, dirs_exist_ok=True)
    (tmp_path / "bad.txt").write_text("10 0 1 2\n\n10 1 3\n")
    src = {"format": "trec", "corpus": "corpus.csv", "queries": "queries.tsv", "qrels": "bad.txt"}
    msg = error_of(load_collection, src, tmp_path, "T")
    assert "bad.txt:3: expected 4 fields 'query-id iteration doc-id grade', found 3" in msg
    (tmp_path / "bad.txt").write_text("10 0 1 x\n")
    assert "bad.txt:1: grade 'x' is not an integer" in error_of(load_collection, src, tmp_path, "T")


def test_unknown_format_and_unreadable_extension(tmp_path):
    msg = error_of(load_collection, {"format": "msmarco", "path": "x"}, tmp_path, "T")
    assert "unknown format 'msmarco'" in msg
    (tmp_path / "docs.xlsx").write_text("x")
    src = {"format": "tables", "corpus": "docs.xlsx", "queries": "q.csv", "qrels": "r.tsv"}
    assert "docs.xlsx: cannot tell the format of corpus file from its extension '.xlsx'" in error_of(
        load_collection, src, tmp_path, "T")


# --- errors: evalset ------------------------------------------------------------------------------

def evalset(tmp_path: Path, rows: str, **extra):
    shutil.copy(FIX / "evalset_mini" / "corpus.jsonl", tmp_path / "corpus.jsonl")
    (tmp_path / "evalset.jsonl").write_text(rows)
    return load_collection({"format": "evalset", "corpus": "corpus.jsonl", "evalset": "evalset.jsonl", **extra},
                           tmp_path, "E")


def test_evidence_not_in_document_text(tmp_path):
    rows = ('{"query_id": "a", "query": "vpn", "relevant": {"d1": 2}}\n'
            '{"query_id": "b", "query": "pw", "relevant": {"d2": 2}, "evidence": {"d2": "reset the router"}}\n')
    msg = error_of(evalset, tmp_path, rows)
    assert "evalset.jsonl:2: evidence 'reset the router' for document 'd2' of query 'b' is not found verbatim" in msg


@pytest.mark.parametrize("row, expected", [
    ('{"query_id": "a", "query": "q", "relevant": {"d2": 2}, "evidence": {"d2": [5, 999]}}',
     "evalset.jsonl:1: evidence span [5, 999] for document 'd2' of query 'a' is outside its text"),
    ('{"query_id": "a", "query": "q", "relevant": {"d2": 2}, "evidence": {"d1": "Install"}}',
     "evalset.jsonl:1: evidence names document 'd1', which is not among the relevant documents of query 'a'"),
    ('{"query_id": "a", "query": "q", "relevant": "d1:2; d77"}',
     "evalset.jsonl:1: label for unknown document 'd77'"),
    ('{"query_id": "a", "query": "q", "relevant": "d1:high"}', "evalset.jsonl:1: grade 'high' is not an integer"),
    ('{"query_id": "a", "query": "q", "relevant": {"d1": 1}}\n{"query_id": "a", "query": "r", "relevant": "d2"}',
     "evalset.jsonl:2: duplicate query id 'a' (first at line 1)"),
    ('{"query_id": "a", "relevant": "d1"}', "evalset.jsonl:1: missing field 'query'"),
])
def test_evalset_row_errors(tmp_path, row, expected):
    assert expected in error_of(evalset, tmp_path, row + "\n")


# --- warnings -----------------------------------------------------------------------------------

def kinds(c) -> dict[str, list[tuple[str, ...]]]:
    out: dict[str, list] = {}
    for w in c.warnings:
        out.setdefault(w.kind, []).append(w.ids)
    return out


def test_warnings_each_kind(tmp_path):
    long_text = " ".join(["word"] * 450)
    corpus = ('{"_id": "d1", "text": "Install the VPN client."}\n'
              '{"_id": "d2", "text": "Install  the VPN client."}\n'
              f'{{"_id": "q3", "text": "{long_text}"}}\n')
    queries = ('{"_id": "q1", "text": "vpn?"}\n{"_id": "q2", "text": "vpn?"}\n'
               '{"_id": "q3", "text": "self"}\n{"_id": "q4", "text": "never judged"}\n')
    qrels = QRELS_HEADER + "q1\td1\t2\nq2\td2\t0\nq2\td1\t0\nq3\tq3\t1\nq3\tq3\t1\n"
    root = beir(tmp_path, corpus_jsonl=corpus, queries_jsonl=queries, qrels__test_tsv=qrels)
    (root / "qrels" / "dev.tsv").unlink()
    c = load_beir(root)
    assert kinds(c) == {
        "duplicate_judgment": [("q3",)],
        "no_positive_label": [("q2",)],
        "unlabeled_query": [("q4",)],
        "query_id_equals_doc_id": [("q3",)],
        "duplicate_doc_text": [("d2",)],
        "long_document": [("q3",)],
        "duplicate_query_text": [("q2",)],
    }
    msgs = {w.kind: w.message for w in c.warnings}
    assert "can never score" in msgs["no_positive_label"]
    assert "mteb drops" in msgs["unlabeled_query"]
    assert "BEIR/mteb silently drop such hits" in msgs["query_id_equals_doc_id"]
    assert "private-mteb keeps them" in msgs["query_id_equals_doc_id"]
    assert "about 585 tokens (an estimate" in msgs["long_document"]
    assert "same text as 'd1'" in msgs["duplicate_doc_text"]
    assert "qrels/test.tsv:6: query 'q3' / document 'q3' judged twice" in msgs["duplicate_judgment"]
    s = summarize(c)
    assert s["warnings"]["no_positive_label"]["count"] == 1
    assert s["warnings"]["no_positive_label"]["examples"] == ["q2"]
    assert s["documents"] == 3 and s["queries"] == 4


def test_summary_caps_examples_at_three(tmp_path):
    queries = "".join(f'{{"_id": "q{i}", "text": "t{i}"}}\n' for i in range(1, 7))
    root = beir(tmp_path, queries_jsonl=queries, qrels__test_tsv=QRELS_HEADER + "q1\td1\t1\n")
    (root / "qrels" / "dev.tsv").unlink()
    w = summarize(load_beir(root))["warnings"]["unlabeled_query"]
    assert w["count"] == 5 and w["examples"] == ["q2", "q3", "q4"]
