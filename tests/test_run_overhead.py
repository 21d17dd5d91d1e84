"""What a run does besides encoding stays proportionate at scale (issue 36: a 1M-document run spent 85 s per
million documents outside encoding where the previous release spent 52 s).

Profiling a 200k-document run (benchmarks/bench_scale.py; docs/scale.md has the figures) found three costs added
since that release: the searched corpus ids read from the `datasets` Column one formatted row at a time (15.9 s
per 200k documents on a loaded machine), the rankings sidecar (now every ranked document plus the corpus ids)
compressed at gzip's slowest level (7.0 s for 17.7 MB), and a context manager entered twice per corpus row by
the problem log. Each test below fails with the code before the fix; the benchmark measures the sum.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import datasets
import pytest

from custom_tasks.task import corpus_ids
from runners.results.store import atomic_write_json, read_json


class _Task:
    """The part of a task `corpus_ids` reads: mteb's split data with a `datasets` corpus."""

    def __init__(self, corpus: datasets.Dataset) -> None:
        self.dataset = {"default": {"test": {"corpus": corpus}}}


def test_corpus_ids_read_the_column_at_once_not_row_by_row(monkeypatch: pytest.MonkeyPatch) -> None:
    ids = [f"d{i}" for i in (5, 3, 10, 1)]
    corpus = datasets.Dataset.from_dict({"id": ids, "text": ["x"] * 4}).select([3, 0, 2, 1])  # an indices mapping too

    def row_by_row(self: object) -> None:
        raise AssertionError("corpus ids iterated row by row (one formatted row per document)")

    monkeypatch.setattr(datasets.arrow_dataset.Column, "__iter__", row_by_row)
    assert corpus_ids(_Task(corpus), "test", "default") == sorted(ids)


def test_corpus_ids_of_a_plain_list_corpus() -> None:
    """Tasks laid out with plain lists (public mteb tasks after their own loading) read the same."""
    assert corpus_ids(_Task({"id": [3, 1, 2]}), "test", "default") == ["1", "2", "3"]  # type: ignore[arg-type]


def test_compressed_sidecars_use_gzip_fastest_level_and_read_back(tmp_path: Path) -> None:
    obj = {"subsets": {"default": {f"q{q}": {f"d{d}": d / 7 for d in range(200)} for q in range(50)}}}
    path = tmp_path / "rankings_test.json.gz"
    atomic_write_json(path, obj, compress=True)
    raw = path.read_bytes()
    assert raw[:2] == b"\x1f\x8b" and raw[8] == 4  # XFL 4: "compressor used fastest algorithm" (RFC 1952)
    assert raw[4:8] == b"\0\0\0\0"  # mtime 0: the same rankings give the same bytes (and digest)
    assert read_json(path) == obj == json.loads(gzip.decompress(raw))
    atomic_write_json(tmp_path / "again.json.gz", obj, compress=True)
    assert (tmp_path / "again.json.gz").read_bytes() == raw


def test_a_corpus_row_enters_no_context_manager(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The corpus's per-row loops (in-memory and disk store) catch a row's problem with try/except: a context
    manager per row cost ~2 s per million rows twice over. A bad row is still recorded and skipped."""
    from custom_tasks.errors import ProblemLog
    from custom_tasks.readers import _io
    from custom_tasks.readers.corpus_rows import corpus_rows

    path = tmp_path / "corpus.jsonl"
    path.write_text('{"_id": "a", "text": "one"}\n{"text": "no id"}\n{"_id": "c", "text": "three"}\n')
    calls = []
    monkeypatch.setattr(_io.Table, "checking", lambda self: calls.append(1) or pytest.fail("checking() per row"))
    log = ProblemLog()
    table = _io.read_table(path, "utf-8", "corpus", log=log)
    rows = list(corpus_rows(table, "_id", "title", "text"))
    assert [r[1] for r in rows] == ["a", "c"] and not calls
    assert len(log.errors) == 1 and "corpus.jsonl:2: missing field '_id'" in str(log.errors[0])


def test_a_retriever_reads_the_corpus_in_slices_not_row_by_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """`kind: retriever` indexes the corpus from Arrow slices: iterating or indexing a Column per row is refused."""
    from runners.search.retriever import corpus_rows

    corpus = datasets.Dataset.from_dict({"id": ["a", "b", "c"], "title": ["T", None, ""], "text": ["x", "y", None]})

    def row_by_row(*args: object) -> None:
        raise AssertionError("corpus read one formatted row at a time")

    monkeypatch.setattr(datasets.arrow_dataset.Column, "__iter__", row_by_row)
    monkeypatch.setattr(datasets.arrow_dataset.Column, "__getitem__", row_by_row)
    monkeypatch.setattr("runners.search.retriever.ROWS_PER_READ", 2)  # two slices, the last one short
    assert list(corpus_rows(corpus)) == [("a", "T", "x"), ("b", "", "y"), ("c", "", "")]
    no_title = corpus.remove_columns("title")
    assert [r[1] for r in corpus_rows(no_title)] == ["", "", ""]
