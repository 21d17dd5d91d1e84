"""The disk-backed corpus (issue #13): same documents, warnings, errors and content hash as the dict path."""

from __future__ import annotations

import hashlib
import json
import pickle
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from custom_tasks.corpus_store import CorpusStore, hash_id, hash_ids
from custom_tasks.errors import CollectionError
from custom_tasks.readers import stored_corpus
from custom_tasks.sources import load_collection
from custom_tasks.stats import describe
from custom_tasks.task import collection_to_split_data
from custom_tasks.validate import format_summary

FIX = Path(__file__).resolve().parent / "fixtures"
SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "scifact"


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "corpus-cache"
    monkeypatch.setenv("PRIVATE_MTEB_CORPUS_CACHE", str(folder))
    return folder


def _load(src: dict, base: Path, monkeypatch, stored: bool):
    monkeypatch.setenv("PRIVATE_MTEB_STORE_MIN_DOCS", "0" if stored else "1000000000")
    return load_collection(src, base, "Mini")


def _write_beir(folder: Path, docs: list[dict], qrels: list[tuple[str, str, int]] | None = None) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs))
    qrels = qrels or [("q1", docs[0]["_id"], 1)]
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": f"question {q}"}) + "\n"
                                                  for q in sorted({q for q, _, _ in qrels})))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n"
                                               + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in qrels))
    return folder


def _tricky_docs(n: int = 20_000) -> list[dict]:
    """Several Arrow batches; unicode, quotes, title-only, duplicate texts and long documents."""
    docs = [{"_id": f"d{i}", "title": f"T{i % 7}" if i % 3 else "", "text": f"text \"{i % 9001}\" é ☃ {i}"}
            for i in range(n)]
    docs[5]["text"] = ""  # title-only (its title is "T5")
    docs[n // 2]["text"] = docs[3]["text"]  # duplicate text, in another batch when n > 16k
    docs[n * 3 // 5]["text"] = "word " * 600  # long
    docs[n * 3 // 5 + 1]["text"] = "word  " * 600  # long and the same words as the one before
    docs.append({"_id": "10", "title": "", "text": "numeric-looking id \\ backslash \n newline"})
    return docs


def test_hash_ids_vectorised_equals_per_id():
    ids = ["d1", "", "é☃x", "a" * 300, "d10", "ü"]
    assert hash_ids(pa.array(ids)).tolist() == [hash_id(i) for i in ids]
    sliced = pa.array(["x", "y", "z"]).slice(1)
    assert hash_ids(sliced).tolist() == [hash_id("y"), hash_id("z")]


def test_store_equals_dict_path_docs_warnings_stats_and_content_hash(tmp_path, cache, monkeypatch):
    data = _write_beir(tmp_path / "kb", _tricky_docs(), [("q1", "d1", 2), ("q2", "10", 1), ("d7", "d8", 1)])
    src = {"format": "beir", "path": "kb"}
    plain = _load(src, tmp_path, monkeypatch, stored=False)
    stored = _load(src, tmp_path, monkeypatch, stored=True)
    assert isinstance(plain.corpus, dict) and isinstance(stored.corpus, CorpusStore)
    assert list(stored.corpus) == list(plain.corpus)  # file order
    assert dict(stored.corpus.items()) == plain.corpus
    assert stored.corpus["10"] == plain.corpus["10"] and "d19999" in stored.corpus and "nope" not in stored.corpus
    assert stored.corpus.get("nope") is None
    assert [w.message for w in stored.warnings] == [w.message for w in plain.warnings]
    kinds = {w.kind for w in plain.warnings}
    assert {"title_only_document", "duplicate_doc_text", "long_document", "query_id_equals_doc_id"} <= kinds
    assert format_summary(stored) == format_summary(plain)
    assert describe(stored) == describe(plain)
    assert stored.content_hash() == plain.content_hash()  # the mteb dataset revision stored in results
    assert (stored.corpus.folder / "content_hashes.json").is_file()
    assert stored.content_hash() == plain.content_hash()  # remembered, same value
    for c in (plain, stored):
        c.qrels["test"]["q1"]["d2"] = 1
    assert stored.content_hash() == plain.content_hash()  # other labels: computed again, still equal
    assert len(json.loads((stored.corpus.folder / "content_hashes.json").read_text())) == 2
    a, b = collection_to_split_data(plain, ["test"]), collection_to_split_data(stored, ["test"])
    assert a["test"]["corpus"].to_dict() == b["test"]["corpus"].to_dict()
    assert a["test"]["corpus"].features == b["test"]["corpus"].features
    assert b["test"]["relevant_docs"] == a["test"]["relevant_docs"]
    assert data.exists()


@pytest.mark.skipif(not SCIFACT.is_dir(), reason="needs ../shared/datasets/scifact")
def test_scifact_content_hash_is_the_same_either_way(cache, monkeypatch):
    src = {"format": "beir", "path": str(SCIFACT), "splits": ["test"]}
    plain = _load(src, SCIFACT, monkeypatch, stored=False)
    stored = _load(src, SCIFACT, monkeypatch, stored=True)
    assert stored.content_hash() == plain.content_hash()
    assert len(stored.corpus) == len(plain.corpus) == 5183


def test_store_is_reused_without_reading_the_file_and_corrupt_one_rebuilt(tmp_path, cache, monkeypatch):
    _write_beir(tmp_path / "kb", _tricky_docs(3000))
    src = {"format": "beir", "path": "kb"}
    first = _load(src, tmp_path, monkeypatch, stored=True)
    folder, first_hash = first.corpus.folder, first.content_hash()
    assert folder.parent == cache and sorted(p.name for p in folder.iterdir()) == [
        "content_hashes.json", "corpus.arrow", "index.u64", "meta.json", "order.npy"]
    built = stored_corpus._build
    monkeypatch.setattr(stored_corpus, "_build", lambda *a, **k: pytest.fail("rebuilt a complete store"))
    again = _load(src, tmp_path, monkeypatch, stored=True)
    assert again.corpus.folder == folder and [w.message for w in again.warnings] == [
        w.message for w in first.warnings]
    assert again.content_hash() == first_hash
    del first, again  # their memory maps of the file truncated next
    with open(folder / "corpus.arrow", "r+b") as f:  # a half-written or damaged cache
        f.truncate(1000)
    monkeypatch.setattr(stored_corpus, "_build", built)
    rebuilt = _load(src, tmp_path, monkeypatch, stored=True)
    assert rebuilt.content_hash() == first_hash
    assert sorted(p.name for p in cache.iterdir()) == [folder.name]  # no temporary folders left behind


def test_changed_file_gets_a_new_store(tmp_path, cache, monkeypatch):
    data = _write_beir(tmp_path / "kb", _tricky_docs(50))
    src = {"format": "beir", "path": "kb"}
    before = _load(src, tmp_path, monkeypatch, stored=True)
    docs = _tricky_docs(50)
    docs[1]["text"] = "changed"
    (data / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs) + "\n")
    after = _load(src, tmp_path, monkeypatch, stored=True)
    assert after.corpus["d1"]["text"] == "changed" and after.content_hash() != before.content_hash()
    assert [p.name for p in cache.iterdir()] == [after.corpus.folder.name]  # the outdated store is removed
    assert pickle.loads(pickle.dumps(after.corpus)).folder == after.corpus.folder  # pickled as its folder
    assert len(pickle.dumps(after.corpus)) < 500


def _error(src: dict, base: Path, monkeypatch, stored: bool) -> str:
    with pytest.raises(CollectionError) as e:
        _load(src, base, monkeypatch, stored=stored)
    return str(e.value)


@pytest.mark.parametrize("case", ["duplicate", "duplicate_then_other_error", "other_error_then_duplicate",
                                  "duplicate_with_empty_text", "empty_id"])
def test_errors_are_the_same_as_the_dict_path(tmp_path, cache, monkeypatch, case):
    docs = _tricky_docs(20_000)
    if case.startswith("duplicate"):
        docs[15_000]["_id"] = "d2"
    if case == "duplicate_then_other_error":
        docs[17_000]["text"], docs[17_000]["title"] = "", ""
    if case == "other_error_then_duplicate":
        docs[9_000]["text"], docs[9_000]["title"] = "", ""
        docs[15_000]["_id"] = "d2"
    if case == "duplicate_with_empty_text":
        docs[15_000]["text"], docs[15_000]["title"] = "", ""
    if case == "empty_id":
        docs[16_000]["_id"] = " "
    _write_beir(tmp_path / "kb", docs)
    src = {"format": "beir", "path": "kb"}
    expected = _error(src, tmp_path, monkeypatch, stored=False)
    assert _error(src, tmp_path, monkeypatch, stored=True) == expected
    if case.startswith("duplicate"):
        assert expected.splitlines()[0].endswith("corpus.jsonl:15001: duplicate document id 'd2' (first at line 3)")
    assert not cache.exists() or not any(cache.iterdir())  # nothing committed, no temporary folder left


def test_tables_and_parquet_corpora_through_the_store(tmp_path, cache, monkeypatch):
    import pandas as pd

    for name in ("tables_mini", "evalset_mini", "trec_mini"):
        shutil.copytree(FIX / name, tmp_path / name)
    pd.DataFrame({"doc": ["a", "b", "c"], "heading": ["", "B", None], "body": ["alpha", "", "gamma"]}).to_parquet(
        tmp_path / "docs.parquet")
    (tmp_path / "q.jsonl").write_text('{"qid": "x", "question": "alpha?"}\n')
    (tmp_path / "l.jsonl").write_text('{"q": "x", "d": "c", "rel": 1}\n')
    sources = [
        {"format": "tables", "corpus": "docs.parquet", "queries": "q.jsonl", "qrels": "l.jsonl",
         "columns": {"doc_id": "doc", "title": "heading", "text": "body", "query_id": "qid", "query": "question",
                     "qrels_query_id": "q", "qrels_doc_id": "d", "grade": "rel"}},
        {"format": "trec", "corpus": "trec_mini/corpus.csv", "queries": "trec_mini/queries.tsv",
         "qrels": {"test": "trec_mini/qrels.test.txt", "dev": "trec_mini/qrels.dev.txt"}},
    ]
    for src in sources:
        plain = _load(src, tmp_path, monkeypatch, stored=False)
        stored = _load(src, tmp_path, monkeypatch, stored=True)
        assert dict(stored.corpus.items()) == plain.corpus
        assert [w.message for w in stored.warnings] == [w.message for w in plain.warnings]
        assert stored.content_hash() == plain.content_hash()


def test_bulk_access_without_python_lists(tmp_path, cache, monkeypatch):
    from custom_tasks import corpus_store, corpus_store_writer

    for module in (corpus_store, corpus_store_writer):  # ids sorted in 7 segments, merged by the hash
        monkeypatch.setattr(module, "SORT_SEGMENT", 3000)
    docs = _tricky_docs(20_000)
    _write_beir(tmp_path / "kb", docs)
    store = _load({"format": "beir", "path": "kb"}, tmp_path, monkeypatch, stored=True).corpus
    assert store.ids_arrow().length() == len(docs) and store.ids_arrow()[12_345].as_py() == "d12345"
    sizes = [b.num_rows for b in store.batches(5000)]
    assert sizes == [5000, 5000, 5000, 5000, 1] and store.batches(5000).__next__().schema.names == [
        "id", "title", "text"]
    assert store.row(7) == ("d7", docs[7]["title"], docs[7]["text"])
    assert store.positions(["d3", "zz", "10"]).tolist() == [3, -1, 20_000]
    ds = store.dataset()
    assert len(ds) == len(docs) and ds[20_000]["id"] == "10"
    h1, h2 = hashlib.sha256(), hashlib.sha256()
    store.update_content_hash(h1)
    for d in sorted(docs, key=lambda d: d["_id"]):
        h2.update(json.dumps([d["_id"], d["title"], d["text"]], ensure_ascii=False).encode())
    assert h1.hexdigest() == h2.hexdigest()
    assert np.load(store.folder / "order.npy", mmap_mode="r").shape == (len(docs),)


def test_unwritable_cache_is_one_line_error(tmp_path, monkeypatch):
    _write_beir(tmp_path / "kb", _tricky_docs(10))
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("PRIVATE_MTEB_CORPUS_CACHE", str(blocker / "sub"))
    message = _error({"format": "beir", "path": "kb"}, tmp_path, monkeypatch, stored=True)
    assert "cannot write the corpus cache" in message and "PRIVATE_MTEB_CORPUS_CACHE" in message


def test_threshold_keeps_small_corpora_in_a_dict(tmp_path, cache, monkeypatch):
    monkeypatch.delenv("PRIVATE_MTEB_STORE_MIN_DOCS", raising=False)
    _write_beir(tmp_path / "kb", _tricky_docs(100))
    assert isinstance(load_collection({"format": "beir", "path": "kb"}, tmp_path, "Mini").corpus, dict)
    assert not cache.exists()


def test_document_length_statistics_equal_the_statistics_module(tmp_path, cache, monkeypatch):
    import statistics

    docs = _tricky_docs(1001)
    _write_beir(tmp_path / "kb", docs)
    for stored in (False, True):
        c = _load({"format": "beir", "path": "kb"}, tmp_path, monkeypatch, stored=stored)
        chars = [len(d["title"]) + len(d["text"]) for d in docs]
        words = [len(d["text"].split()) + len(d["title"].split()) for d in docs]
        got = describe(c)
        assert got["document chars mean"] == statistics.mean(chars)
        assert got["document chars median"] == float(statistics.median(chars))
        assert got["document chars max"] == max(chars)
        assert got["document words mean"] == statistics.mean(words)
        assert got["documents with title"] == sum(1 for d in docs if d["title"])


def test_a_large_corpus_keeps_the_first_warnings_of_each_kind_and_counts_the_rest(tmp_path, cache, monkeypatch):
    from custom_tasks import validate
    from custom_tasks.validate import summarize

    monkeypatch.setattr(stored_corpus, "KEPT_PER_KIND", 3)
    monkeypatch.setattr(validate, "KEPT_PER_KIND", 3)
    docs = _tricky_docs(20_000)
    for i in range(100, 20_000, 1000):  # 20 more title-only, 20 long, 20 repeating document 3's text
        docs[i]["text"], docs[i]["title"] = "", "Some title"
        docs[i + 1]["text"] = "long " * 700
        docs[i + 2]["text"] = docs[3]["text"]
    _write_beir(tmp_path / "kb", docs)
    plain = _load({"format": "beir", "path": "kb"}, tmp_path, monkeypatch, stored=False)
    stored = _load({"format": "beir", "path": "kb"}, tmp_path, monkeypatch, stored=True)
    assert stored.warning_counts() == plain.warning_counts()
    assert stored.warning_counts()["long_document"] > 20
    assert summarize(stored) == summarize(plain)  # counts and the first three examples of each kind
    assert format_summary(stored) == format_summary(plain)
    per_kind = {k: sum(1 for w in stored.warnings if w.kind == k) for k in stored.warning_counts()}
    assert max(per_kind.values()) <= 4  # three kept + one "... and N more" entry
    more = [w for w in stored.warnings if w.count > 1]
    assert {w.kind for w in more} == {"title_only_document", "long_document", "duplicate_doc_text"}
    assert len(json.loads((stored.corpus.folder / "meta.json").read_text())["doc_warnings"]) <= 6


def test_hash_collisions_are_confirmed_on_the_real_ids(tmp_path):
    from custom_tasks.corpus_store_writer import StoreWriter

    # 60 row bits leave 4 hash bits: every id shares its hash prefix with ~1/16 of the others
    w = StoreWriter(tmp_path / "s", max_rows=2**59)
    for i in range(3000):
        w.add(i + 1, f"id{i}", "", f"text {i}")
    assert w.first_duplicate() is None  # many equal prefixes, no equal ids
    store = w.commit({})
    assert store.row_bits == 60
    queries = [f"id{i}" for i in range(0, 3200, 7)]
    assert store.positions(queries).tolist() == [i if i < 3000 else -1 for i in range(0, 3200, 7)]
    assert store["id2999"]["text"] == "text 2999" and "id3000" not in store
    w = StoreWriter(tmp_path / "t", max_rows=2**59)
    for i in range(3000):
        w.add(i + 1, f"id{i % 2500}", "", "x")
    assert w.first_duplicate() == (1, 2501, "id0")
    w.discard()
