"""`private-mteb init` reads the texts and writes the languages they are in (issue 35: never silently English)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from custom_tasks.bm25_analyzer import resolve_analyzer
from custom_tasks.config import TaskConfig
from custom_tasks.language_detect import LanguageShares, declared, identify, mteb_code
from runners.cli import app
from tests.conftest import REPO
from tests.romanian_fixture import write_romanian_collection

runner = CliRunner()


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    return tmp_path


def _languages(project: Path, stem: str) -> tuple[list[str], str]:
    text = (project / "configs" / "tasks" / f"{stem}.yaml").read_text(encoding="utf-8")
    line = next(ln for ln in text.splitlines() if ln.startswith("languages:"))
    return yaml.safe_load(text)["languages"], line


def test_init_writes_romanian_for_a_romanian_collection_and_says_what_it_found(project):
    write_romanian_collection(project / "data" / "ro_kb", query_letters="cedilla")  # ş ţ questions: still Romanian
    res = runner.invoke(app, ["init", "data/ro_kb"])
    assert res.exit_code == 0, res.output
    assert "documents: Romanian 100% → languages: [ron-Latn]" in res.output
    assert "BM25's analyzer: stemmer romanian (PyStemmer), no stop-word list" in res.output
    assert "questions: Romanian 9" in res.output
    codes, line = _languages(project, "ro-kb")
    assert codes == ["ron-Latn"] and "# detected (documents: Romanian 100%" in line


def test_a_mixed_corpus_declares_both_languages_in_order_of_their_share(project):
    write_romanian_collection(project / "data" / "mixed", fmt="tables", english_docs=40)
    res = runner.invoke(app, ["init", "data/mixed", "--format", "json"])
    assert res.exit_code == 0, res.output
    found = json.loads(res.output)["languages"]
    assert found["languages"] == ["ron-Latn", "eng-Latn"]
    assert found["documents"]["texts"] == 136
    assert found["documents"]["shares"]["eng-Latn"] == pytest.approx(40 / 136, abs=0.01)
    assert _languages(project, "mixed")[0] == ["ron-Latn", "eng-Latn"]
    assert "several languages (eng, ron): mteb's BM25 uses English's analyzer" in json.loads(res.output)["bm25"]
    task_yaml = project / "configs" / "tasks" / "mixed.yaml"  # the task chooses: the offered block, uncommented
    text = task_yaml.read_text(encoding="utf-8")
    assert "\n# bm25: {stemmer: romanian, stopwords: none}\n" in text
    task_yaml.write_text(text.replace("# bm25: {", "bm25: {"), encoding="utf-8")
    cfg = TaskConfig.from_file(task_yaml)
    chosen = resolve_analyzer(cfg.languages, cfg.bm25)
    assert (chosen.stemmer, chosen.stopwords, chosen.note) == ("romanian", None, "")


def test_an_english_collection_is_detected_english_not_assumed(project):
    shutil.copytree(REPO / "data" / "demo_kb", project / "data" / "demo_kb")
    res = runner.invoke(app, ["init", "data/demo_kb"])
    assert res.exit_code == 0, res.output
    assert "documents: English 100% → languages: [eng-Latn]" in res.output
    codes, line = _languages(project, "demo-kb")
    assert codes == ["eng-Latn"] and "# detected (documents: English 100%" in line


def test_a_draft_says_its_languages_are_not_detected_yet(project):
    kb = project / "data" / "odd"
    kb.mkdir()
    # two columns of unique ids: init cannot tell which is the document id (issue 36 tells the rest from the values)
    (kb / "corpus.csv").write_text("key,alt,body\nd1,a1,Factura se aprobă în trei zile.\n", encoding="utf-8")
    (kb / "queries.csv").write_text("number,question\nq1,Cum aprob factura?\n", encoding="utf-8")
    (kb / "qrels.csv").write_text("number,key,grade\nq1,d1,2\n", encoding="utf-8")
    res = runner.invoke(app, ["init", "data/odd"])
    assert res.exit_code == 2
    assert "NOT DETECTED YET (draft)" in _languages(project, "odd")[1]


def test_codes_and_scripts_are_mtebs():
    assert mteb_code("ro", "Factura a fost aprobată") == "ron-Latn"
    assert mteb_code("sr", "Ovo je tekst na srpskom") == "srp-Latn"  # the letters decide between Latin and Cyrillic
    assert mteb_code("sr", "Ово је текст на српском") == "srp-Cyrl"
    assert mteb_code("zh", "这是一个关于文件的中文句子") == "zho-Hans"
    assert mteb_code("zxx", "1234") is None
    found = identify(["Factura a fost aprobată de contabil în aceeași zi.", "The invoice was approved the same day.",
                      "12345", "Dies ist ein deutscher Text über Rechnungen und Verträge."], "documents")
    assert dict(found.counts) == {"ron-Latn": 1, "eng-Latn": 1, "deu-Latn": 1} and found.skipped == 1


def test_one_stray_question_adds_no_language():
    docs = LanguageShares("documents")
    docs.counts.update({"ron-Latn": 97, "eng-Latn": 3})
    questions = LanguageShares("questions")
    questions.counts.update({"ron-Latn": 69, "lat-Latn": 2, "eng-Latn": 9})
    assert declared(docs, questions) == ["ron-Latn", "eng-Latn"]  # English: 11% of the questions
    questions.counts["eng-Latn"] = 1
    assert declared(docs, questions) == ["ron-Latn"]
    assert docs.line() == "documents: Romanian 97%, English 3%"
