"""Ids with whitespace or control characters, and JSON nested too deep, are input errors at file:line (issue 20.8, 20.9).

TREC qrels and run files separate fields by whitespace, and ids are printed in terminals: an id holding a space,
tab, line break, NBSP, escape or zero-width character is refused when the collection is read (every reader,
the in-memory and the disk-store corpus path), not by `export` after a run. A row nested 100,000 levels deep
is a `file:line` error, not `internal error: RecursionError`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from custom_tasks.errors import CollectionError
from custom_tasks.readers._io import MAX_JSON_DEPTH, loads_json, TooDeep
from custom_tasks.sources import load_collection

BAD = {"space": "d 1", "tab": "d\t1", "newline": "d\n1", "nbsp": "d\xa01", "escape": "d\x1b[2J1", "zero-width": "d\u200b1"}


def _jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _collection(tmp_path: Path, fmt: str, doc_id: str = "d2", query_id: str = "q1") -> tuple[dict, Path, int]:
    """A valid two-document collection in ``fmt``; returns (source, file holding the changed id, its line)."""
    docs = [{"_id": "d1", "title": "VPN", "text": "Connect to the VPN."},
            {"_id": doc_id, "title": "Password", "text": "Reset a password."}]
    queries = [{"_id": query_id, "text": "how do I reset my password"}]
    changed = doc_id != "d2"
    if fmt == "beir":
        kb = tmp_path / "kb"
        (kb / "qrels").mkdir(parents=True)
        _jsonl(kb / "corpus.jsonl", docs)
        _jsonl(kb / "queries.jsonl", queries)
        (kb / "qrels" / "test.tsv").write_text(f"query-id\tcorpus-id\tscore\n{json.dumps(query_id)[1:-1]}\td1\t1\n")
        return {"format": "beir", "path": "kb"}, kb / ("corpus.jsonl" if changed else "queries.jsonl"), 2 if changed else 1
    if fmt == "tables-csv":
        pd.DataFrame(docs).to_csv(tmp_path / "corpus.csv", index=False)
        pd.DataFrame(queries).to_csv(tmp_path / "queries.csv", index=False)
        (tmp_path / "qrels.csv").write_text("query-id,corpus-id,score\nq1,d1,1\n")
        src = {"format": "tables", "corpus": "corpus.csv", "queries": "queries.csv", "qrels": "qrels.csv"}
        return src, tmp_path / ("corpus.csv" if changed else "queries.csv"), 3 if changed else 2
    if fmt == "tables-parquet":
        pd.DataFrame(docs).to_parquet(tmp_path / "corpus.parquet")
        pd.DataFrame(queries).to_parquet(tmp_path / "queries.parquet")
        (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
        src = {"format": "tables", "corpus": "corpus.parquet", "queries": "queries.parquet", "qrels": "qrels.tsv"}
        return src, tmp_path / ("corpus.parquet" if changed else "queries.parquet"), 2 if changed else 1
    if fmt == "trec":
        _jsonl(tmp_path / "corpus.jsonl", docs)
        _jsonl(tmp_path / "queries.jsonl", queries)
        (tmp_path / "qrels.trec").write_text("q1 0 d1 1\n")
        src = {"format": "trec", "corpus": "corpus.jsonl", "queries": "queries.jsonl", "qrels": "qrels.trec"}
        return src, tmp_path / ("corpus.jsonl" if changed else "queries.jsonl"), 2 if changed else 1
    assert fmt == "evalset"
    _jsonl(tmp_path / "corpus.jsonl", docs)
    _jsonl(tmp_path / "evalset.jsonl", [{"query_id": query_id, "query": "reset password", "relevant": ["d1"]}])
    src = {"format": "evalset", "corpus": "corpus.jsonl", "evalset": "evalset.jsonl"}
    return src, tmp_path / ("corpus.jsonl" if changed else "evalset.jsonl"), 2 if changed else 1


FORMATS = ["beir", "tables-csv", "tables-parquet", "trec", "evalset"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_good_collection_reads(tmp_path, fmt):
    src, _, _ = _collection(tmp_path, fmt)
    assert set(load_collection(src, tmp_path, "T").corpus) == {"d1", "d2"}


def _where(path: Path, line: int) -> str:
    return f"{path.name}:{line}: " if path.suffix != ".parquet" else f"{path.name}: row {line}: "


@pytest.mark.parametrize("kind", list(BAD))
@pytest.mark.parametrize("fmt", FORMATS)
def test_document_id_with_whitespace_or_control_character_is_refused(tmp_path, fmt, kind):
    if kind == "newline" and fmt == "tables-csv":
        pytest.skip("covered by JSONL and Parquet: a CSV record with a quoted line break starts on its line too")
    src, path, line = _collection(tmp_path, fmt, doc_id=BAD[kind])
    with pytest.raises(CollectionError) as e:
        load_collection(src, tmp_path, "T")
    msg = str(e.value)
    assert _where(path, line) in msg and "document id" in msg, msg
    assert ("whitespace" if kind in ("space", "tab", "newline", "nbsp") else
            "invisible format character (U+200B ZERO WIDTH SPACE)" if kind == "zero-width" else "control character") in msg
    assert "\x1b" not in msg and "\n" not in msg  # the id is shown escaped


@pytest.mark.parametrize("ch, name", [("\u200b", "U+200B ZERO WIDTH SPACE"), ("\u200d", "U+200D ZERO WIDTH JOINER"),
                                      ("\ufeff", "U+FEFF ZERO WIDTH NO-BREAK SPACE"), ("\u00ad", "U+00AD SOFT HYPHEN"),
                                      ("\u202e", "U+202E RIGHT-TO-LEFT OVERRIDE"), ("\u2060", "U+2060 WORD JOINER")])
def test_invisible_format_characters_are_refused_by_their_unicode_name(tmp_path, ch, name):
    """Category Cf is not a control character: the message names the character as Unicode does (issue 29)."""
    for fmt in ("trec", "tables-parquet"):
        (tmp_path / fmt).mkdir()
        src, path, line = _collection(tmp_path / fmt, fmt, doc_id=f"d{ch}1")
        with pytest.raises(CollectionError) as e:
            load_collection(src, tmp_path / fmt, "T")
        msg = str(e.value)
        assert _where(path, line) in msg and f"contains an invisible format character ({name})" in msg, msg
        assert "a control character" not in msg and ch not in msg


@pytest.mark.parametrize("fmt", FORMATS)
def test_query_id_with_a_tab_is_refused(tmp_path, fmt):
    src, path, line = _collection(tmp_path, fmt, query_id="q\t1")
    with pytest.raises(CollectionError) as e:
        load_collection(src, tmp_path, "T")
    assert _where(path, line) in str(e.value) and "query id 'q\\t1' contains whitespace" in str(e.value)


def test_disk_store_corpus_refuses_the_same_ids(tmp_path, monkeypatch):
    monkeypatch.setenv("PRIVATE_MTEB_STORE_MIN_DOCS", "0")  # every corpus goes to the disk store
    monkeypatch.setenv("PRIVATE_MTEB_CORPUS_CACHE", str(tmp_path / "store"))
    src, path, line = _collection(tmp_path, "trec", doc_id="d\xa01")
    with pytest.raises(CollectionError, match=rf"{path.name}:{line}: document id 'd\\xa01' contains whitespace"):
        load_collection(src, tmp_path, "T")


def test_outer_whitespace_is_still_trimmed(tmp_path):
    src, _, _ = _collection(tmp_path, "trec", doc_id=" d3 ")
    assert set(load_collection(src, tmp_path, "T").corpus) == {"d1", "d3"}


# ---------------------------------------------------------------- deep JSON
@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 100_000])
def test_deeply_nested_json_row_is_a_file_line_error(tmp_path, depth):
    src, _, _ = _collection(tmp_path, "trec")
    corpus = tmp_path / "corpus.jsonl"
    bomb = '{"_id": "d3", "title": "x", "text": "y", "meta": ' + "[" * depth + "]" * depth + "}"
    corpus.write_text(corpus.read_text() + bomb + "\n")
    with pytest.raises(CollectionError) as e:
        load_collection(src, tmp_path, "T")
    assert f"corpus.jsonl:3: JSON nested more than {MAX_JSON_DEPTH} levels deep" in str(e.value)


def test_nesting_up_to_the_limit_reads_and_evalset_cells_never_recurse(tmp_path):
    assert loads_json("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH) is not None
    with pytest.raises(TooDeep):
        loads_json("[" * 100_000 + "]" * 100_000)
    _jsonl(tmp_path / "corpus.jsonl", [{"_id": "d1", "title": "", "text": "VPN"}])
    (tmp_path / "e.csv").write_text("query,relevant\nvpn?," + '"' + "[" * 100_000 + '"\n')
    with pytest.raises(CollectionError, match=r"e.csv:2: "):  # read as text: an unknown document, at its line
        load_collection({"format": "evalset", "corpus": "corpus.jsonl", "evalset": "e.csv"}, tmp_path, "T")


def test_names_and_labels_name_invisible_characters_too():
    """Task, split and model names (path_names) say what the character is, not "control character"."""
    from custom_tasks.path_names import check_display, name_problem

    assert name_problem("kb\u200bv2") == "it contains the invisible format character U+200B ZERO WIDTH SPACE"
    assert name_problem("kb\x1bv2") == "it contains the control character \\x1b"
    with pytest.raises(ValueError, match="contains the invisible format character U\\+202E RIGHT-TO-LEFT OVERRIDE"):
        check_display("BM25\u202e", "label")
