"""Languages as BM25's analyzer sees them (issue 46): dialects fold into their macro-language, a non-Latin script is
never given English's analyzer, and word tokens on a script written without spaces are said in one line.

The failing case of the issue: a Chinese collection whose questions py3langid labels Wu Chinese past 10% used to be
written ``languages: [zho-Hans, wuu-Hans]``; two languages meant English's analyzer, whitespace tokens on Chinese."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from chinese_fixture import chinese_collection, write_chinese_collection
from conftest import write_benchmark
from custom_tasks.bm25_analyzer import resolve_analyzer
from custom_tasks.config import TaskConfig
from custom_tasks.language_detect import MIN_SHARE, identify
from custom_tasks.macro_languages import (MTEB_BM25_LANGUAGES, family, folded_analyzer_language, members,
                                          word_tokens_warning)
from runners.cli import app

runner = CliRunner()


def test_the_written_analyzer_languages_are_mtebs():
    from mteb.models.model_implementations.bm25 import _ISO3_TO_LANG

    assert MTEB_BM25_LANGUAGES == frozenset(_ISO3_TO_LANG)


def test_macro_languages_come_from_iso_639_3():
    assert family("wuu") == family("cmn") == family("yue") == family("zho") == "zho"
    assert family("ary") == family("arz") == family("arb") == "ara"
    assert family("ron") == "ron" and members("ron") == ["ron"]
    assert {"cmn", "wuu", "yue"} <= set(members("cmn")) and members("cmn")[0] == "zho"


@pytest.mark.parametrize("languages, language, tokenizer", [
    (["zho-Hans", "wuu-Hans"], "zho", "char_ngrams"),   # the case: one language, Chinese's analyzer
    (["wuu-Hans"], "zho", "char_ngrams"),               # mteb has no Wu analyzer: Chinese's, not none
    (["yue-Hant"], "zho", "char_ngrams"),
    (["cmn-Hans", "zho-Hans"], "cmn", "char_ngrams"),   # mteb has both: the first listed
    (["arz-Arab"], "ara", "words"),                    # Egyptian Arabic: Arabic's stemmer
    (["ara-Arab", "ary-Arab"], "ara", "words"),
    (["srp-Cyrl", "hrv-Latn"], "srp", "words"),        # Serbo-Croatian: Serbian's stemmer for both
    (["eng-Latn", "jpn-Jpan"], "jpn", "char_ngrams"),   # a script without spaces comes first
    (["ara-Arab", "eng-Latn"], "ara", "words"),        # a non-Latin script is not given English's
    (["ron-Latn", "eng-Latn"], "eng", "words"),        # Latin only: English, as mteb
    (["ron-Latn"], "ron", "words"),
])
def test_the_analyzer_follows_macro_language_and_script(languages, language, tokenizer):
    chosen = resolve_analyzer(languages)
    assert (chosen.language, chosen.tokenizer) == (language, tokenizer), chosen.note


def test_a_choice_other_than_mtebs_is_part_of_the_settings_fingerprint():
    assert folded_analyzer_language(["zho-Hans", "wuu-Hans"]) == "zho"
    assert folded_analyzer_language(["ara-Arab", "eng-Latn"]) == "ara"
    assert folded_analyzer_language(["ron-Latn", "eng-Latn"]) is None  # mteb's own choice: the old hash stays
    assert folded_analyzer_language(["cmn-Hans"]) is None and folded_analyzer_language(["ron-Latn"]) is None


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    return tmp_path


def test_a_chinese_collection_with_wu_labelled_questions_keeps_the_chinese_analyzer(project):
    col = chinese_collection(n_queries=1170, wu_share=0.3)
    wu = identify(list(col.queries.values()), "questions").counts["wuu-Hans"]
    assert wu / 1170 >= MIN_SHARE  # the case that used to declare [zho-Hans, wuu-Hans]
    write_chinese_collection(project / "data" / "zh_kb", n_queries=1170, wu_share=0.3)
    res = runner.invoke(app, ["init", "data/zh_kb", "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["languages"]["languages"] == ["zho-Hans"]
    assert f"{wu} questions labelled wuu-Hans" in out["languages"]["folded"]
    assert "folded into Chinese" in out["languages"]["folded"]
    assert "character 1- to 2-grams" in out["bm25"] and "English" not in out["bm25"]
    cfg = TaskConfig.from_file(project / "configs" / "tasks" / "zh-kb.yaml")
    assert cfg.languages == ["zho-Hans"] and resolve_analyzer(cfg.languages, cfg.bm25).tokenizer == "char_ngrams"


def test_init_says_the_fold_in_one_line(project):
    write_chinese_collection(project / "data" / "zh_kb", n_queries=300, wu_share=0.3)
    res = runner.invoke(app, ["init", "data/zh_kb"])
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.output.splitlines() if "folded into Chinese" in ln]
    assert len(lines) == 1 and lines[0].startswith("zho-Hans: 240 documents and ")


def _chinese_task(tmp_path: Path, bm25: dict | None) -> Path:
    data = write_chinese_collection(tmp_path / "zh", n_queries=60)
    task = {"name": "ZhKB", "description": "Chinese office procedures (test fixture).",
            "source": {"format": "beir", "path": "zh"}, "splits": ["test"], "license": "cc0-1.0",
            "labels": "human", "languages": ["zho-Hans"], **({"bm25": bm25} if bm25 else {})}
    path = tmp_path / "zh.yaml"
    path.write_text(yaml.safe_dump(task, allow_unicode=True), encoding="utf-8")
    assert data.is_dir()
    return path


def test_word_tokens_on_han_text_are_warned_with_the_fix(tmp_path):
    assert word_tokens_warning(["zho-Hans"], "characters", "t.yaml") == ""
    assert word_tokens_warning(["ron-Latn"], "words", "t.yaml") == ""
    task = _chinese_task(tmp_path, {"tokenizer": "words"})
    cfg = write_benchmark(tmp_path, [str(task)], models=[{"name": "bm25", "label": "BM25"}])
    res = runner.invoke(app, ["run", "--config", str(cfg)], terminal_width=400)
    assert res.exit_code == 0, res.output
    warned = [ln for ln in res.output.splitlines() if ln.startswith("warning:")]
    assert len(warned) == 1 and "Han text" in warned[0] and "bm25: {tokenizer: char_ngrams}" in warned[0]
    assert str(task) in warned[0]
    as_json = runner.invoke(app, ["run", "--config", str(cfg), "--format", "json"], terminal_width=400)
    assert as_json.exit_code == 0 and json.loads(as_json.stdout)  # stdout: the document alone
    assert "bm25: {tokenizer: char_ngrams}" in as_json.stderr
    checked = runner.invoke(app, ["tasks", "validate", str(task)], terminal_width=400)
    assert checked.exit_code == 0 and "bm25: {tokenizer: char_ngrams}" in checked.output, checked.output


def test_the_default_analyzer_on_han_text_is_not_warned(tmp_path):
    task = _chinese_task(tmp_path, None)
    checked = runner.invoke(app, ["tasks", "validate", str(task), "--format", "json"])
    assert checked.exit_code == 0, checked.output
    assert "bm25_tokens" not in json.loads(checked.output)["tasks"][0]


def test_lint_reads_a_macro_language_code_as_the_language_found():
    """Chinese documents declared cmn-Hans (mteb's Mandarin) are not a language mismatch; declared English they are."""
    from custom_tasks.collection import Collection
    from runners.labels.lint.lint_language import language_mismatch

    col = chinese_collection(n_queries=100)
    coll = Collection(name="ZhLint", corpus=col.corpus, queries=col.queries, qrels={"test": col.qrels})
    assert language_mismatch(coll, ["cmn-Hans"]) is None and language_mismatch(coll, ["zho-Hant"]) is None
    assert language_mismatch(coll, ["eng-Latn"]).check == "languages_differ"


def test_declared_folds_arabic_dialects_and_names_what_it_left_out():
    """py3langid labels Arabic text ar, ary (Moroccan) or arz (Egyptian): one language for BM25, the main code kept;
    a language under 10% of both sides is named as left out, in the same one line."""
    from collections import Counter

    from custom_tasks.language_detect import DetectedLanguages, LanguageShares, declared

    docs = LanguageShares("documents", Counter({"ara-Arab": 200, "arz-Arab": 40}))
    qs = LanguageShares("questions", Counter({"ara-Arab": 1000, "ary-Arab": 150, "eng-Latn": 20}))
    assert declared(docs, qs) == ["ara-Arab"]  # arz holds 17% of the documents, ary 13% of the questions: folded
    found = DetectedLanguages(docs, qs, declared(docs, qs))
    (line,) = [ln for ln in found.lines() if "folded" in ln]
    assert line.startswith("ara-Arab: 200 documents and 1,000 questions; 150 questions labelled ary-Arab, "
                           "40 documents labelled arz-Arab folded into Arabic")
    assert line.endswith("left out (under 10% of documents and of questions): 20 questions labelled eng-Latn")
    assert resolve_analyzer(found.languages).stemmer == "arabic"
