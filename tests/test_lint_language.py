"""Lint says when a task's `languages:` is not the language of its documents (issue 35: a task YAML written before
init read the texts says eng-Latn, and BM25 then scores a Romanian collection with English's analyzer)."""

from __future__ import annotations

from custom_tasks.config import TaskConfig
from runners.labels.lint.lint import LintReport
from runners.labels.lint.lint_language import MIN_DOCUMENTS, attach, language_mismatch
from custom_tasks.sources import load_collection
from tests.conftest import REPO
from tests.romanian_fixture import romanian_collection, write_romanian_collection


def _collection(tmp_path, **kw):
    folder = write_romanian_collection(tmp_path / "ro", **kw)
    return load_collection({"format": "beir", "path": str(folder)}, tmp_path, "RoKB")


def test_english_declared_for_romanian_documents_is_a_finding(tmp_path):
    collection = _collection(tmp_path)
    found = language_mismatch(collection, ["eng-Latn"])
    assert found is not None and found.check == "languages_differ" and found.count == 96
    assert "languages: [eng-Latn] but the documents are Romanian (documents: Romanian 100%" in found.summary
    assert "set `languages: [ron-Latn]`" in found.action and found.examples[0] == "doc000"
    report = attach(LintReport("RoKB", "r", 96, 72), collection, ["eng-Latn"])
    assert report.one_line().startswith("lint RoKB: languages differ: 96")


def test_the_right_language_or_a_mixed_list_is_no_finding(tmp_path):
    collection = _collection(tmp_path, english_docs=10)
    for languages in (["ron-Latn"], ["ron-Latn", "eng-Latn"], ["eng-Latn", "ron-Latn"]):
        assert language_mismatch(collection, languages) is None, languages
    assert attach(LintReport("RoKB", "r", 1, 1), collection, None).findings == []


def test_too_few_documents_or_no_majority_is_no_finding(tmp_path):
    few = _collection(tmp_path, n_docs=MIN_DOCUMENTS - 1, n_queries=5)
    assert language_mismatch(few, ["eng-Latn"]) is None
    mixed = _collection(tmp_path / "mixed", n_docs=30, n_queries=5, english_docs=30)  # half and half: no majority
    assert len(mixed.corpus) == len(romanian_collection(n_docs=30, n_queries=5, english_docs=30).corpus) == 60
    assert language_mismatch(mixed, ["deu-Latn"]) is None
    assert language_mismatch(_collection(tmp_path / "more", n_docs=30, n_queries=5, english_docs=31),
                             ["deu-Latn"]).summary.startswith("languages: [deu-Latn] but the documents are English")


def test_an_english_collection_declared_english_is_no_finding():
    cfg = TaskConfig.from_file(REPO / "configs" / "tasks" / "northwind-kb.yaml")
    collection = load_collection(cfg.source, cfg.base_dir, cfg.name)
    assert language_mismatch(collection, cfg.languages) is None
