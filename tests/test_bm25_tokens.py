"""BM25's tokens for scripts without spaces (custom_tasks/bm25_tokens.py): character n-grams, the segmenters, their
place in the analyzer line and the run identity, and a Chinese collection on which n-grams beat word tokens."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
import yaml

from custom_tasks.bm25_analyzer import BM25Settings, resolve_analyzer
from custom_tasks.bm25_tokens import char_ngrams, segment
from custom_tasks.config import TaskConfig
from tests.bm25_reference import bm25s_rankings, write_beir
from tests.conftest import write_benchmark


def test_char_ngrams_of_chinese_thai_japanese_and_latin_words():
    assert char_ngrams("用Python处理数据。", 2) == ["用", "python", "处", "理", "数", "据", "处理", "理数", "数据"]
    assert char_ngrams("我爱北京", 3) == ["我", "爱", "北", "京", "我爱", "爱北", "北京", "我爱北", "爱北京"]
    assert char_ngrams("ภาษาไทย 2024", 2) == ["ภ", "า", "ษ", "า", "ไ", "ท", "ย", "ภา", "าษ", "ษา", "าไ", "ไท", "ทย",
                                              "2024"]
    # kana and kanji are one run; full-width letters are NFKC-folded into a Latin word; punctuation goes
    assert char_ngrams("ＡＩの研究、", 2) == ["ai", "の", "研", "究", "の研", "研究"]
    assert char_ngrams("한국어", 1) == ["한", "국", "어"]  # n = 1: the characters alone
    assert char_ngrams("Ünïcode words_here", 2) == ["ünïcode", "words", "here"]


def test_segmenters_cut_words():
    pytest.importorskip("jieba")
    assert segment("jieba")("我们在北京大学学习。") == ["我们", "在", "北京大学", "学习"]


def test_thai_segmenter_cuts_words():
    pytest.importorskip("pythainlp")
    assert segment("newmm")("ภาษาไทยเขียนติดกัน") == ["ภาษาไทย", "เขียน", "ติดกัน"]


def test_japanese_segmenter_cuts_words():
    pytest.importorskip("janome")
    assert segment("janome")("東京大学で勉強します。") == ["東京大学", "で", "勉強", "し", "ます"]


def test_defaults_and_the_analyzer_line():
    zh = resolve_analyzer(["zho-Hans"])
    assert (zh.tokenizer, zh.n) == ("char_ngrams", 2)
    assert "character 1- to 2-grams of text without spaces" in zh.describe()
    assert "chosen by measurement, mteb's BM25 uses single characters" in zh.describe()
    assert (resolve_analyzer(["tha-Thai"]).tokenizer, resolve_analyzer(["tha-Thai"]).n) == ("char_ngrams", 3)
    assert resolve_analyzer(["tha-Thai"], BM25Settings(tokenizer="char_ngrams")).n == 3  # n left out: Thai's
    assert resolve_analyzer(["kor-Hang"], BM25Settings(tokenizer="char_ngrams")).n == 2
    assert (resolve_analyzer(["jpn-Jpan"]).tokenizer, resolve_analyzer(["jpn-Jpan"]).n) == ("char_ngrams", 2)
    ko = resolve_analyzer(["kor-Hang"])  # measured on KorQuAD: 0.9431 against mteb's characters' 0.8253
    assert (ko.tokenizer, ko.n) == ("char_ngrams", 2) and "Korean: char_ngrams chosen by measurement" in ko.describe()
    km = resolve_analyzer(["khm-Khmr"])  # no public Khmer data measured: mteb's choice, said
    assert km.tokenizer == "characters" and "not measured here" in km.describe()
    back = resolve_analyzer(["zho-Hans"], BM25Settings(tokenizer="characters"))
    assert back.tokenizer == "characters" and "measurement" not in back.describe()
    assert resolve_analyzer(["ron-Latn"]).tokenizer == "words"


def _task(folder: Path, bm25: dict | None, languages: list[str] | None = None) -> TaskConfig:
    cfg = {"name": "ZhTok", "description": "t", "source": {"format": "beir", "path": "data"},
           "languages": languages or ["zho-Hans"], "license": "cc0-1.0", **({"bm25": bm25} if bm25 else {})}
    path = folder / "task.yaml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    return TaskConfig.from_file(path)


def test_identity_follows_every_tokenizer_setting(tmp_path, monkeypatch):
    prints = {json.dumps(b): _task(tmp_path, b).settings_fingerprint() for b in (
        None, {"tokenizer": "characters"}, {"tokenizer": "char_ngrams", "n": 3}, {"tokenizer": "words"})}
    assert len(set(prints.values())) == 4
    # the measured default is part of the identity although no key is written: results stored with mteb's
    # characters before it (same languages, no block) are not reused
    from custom_tasks.bm25_analyzer import token_identity

    assert token_identity(["zho-Hans"], None) == {"tokenizer": "char_ngrams", "n": 2}
    assert token_identity(["kor-Hang"], None) == {"tokenizer": "char_ngrams", "n": 2}
    assert token_identity(["khm-Khmr"], None) is None and token_identity(["ron-Latn"], None) is None
    pytest.importorskip("jieba")
    seg = _task(tmp_path, {"tokenizer": "segmenter"})
    before = seg.settings_fingerprint()
    import importlib.metadata

    real = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version", lambda p: "9.9" if p == "jieba" else real(p))
    assert seg.settings_fingerprint() != before  # another jieba (another dictionary): another identity
    assert "jieba 9.9" in resolve_analyzer(seg.languages, seg.bm25).describe()


def test_a_missing_extra_is_one_line(tmp_path, monkeypatch):
    import importlib.metadata

    from typer.testing import CliRunner

    from runners.cli import app

    def missing(p: str) -> str:
        if p == "jieba":
            raise importlib.metadata.PackageNotFoundError(p)
        return real(p)

    real = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version", missing)
    with pytest.raises(ValueError, match=r"^bm25: the jieba segmenter needs the jieba package: pip install "
                                         r"'private-mteb\[zh\]'"):
        resolve_analyzer(["zho-Hans"], BM25Settings(tokenizer="segmenter"))
    _, _, task_yaml = chinese_task(tmp_path, {"tokenizer": "segmenter"})
    bench = write_benchmark(tmp_path, [str(task_yaml)], models=[{"name": "bm25"}])
    out = CliRunner().invoke(app, ["run", "-c", str(bench)])
    assert out.exit_code == 2 and "task.yaml" in out.output and "private-mteb[zh]" in out.output, out.output
    assert "Traceback" not in out.output


def test_settings_are_checked_with_one_line():
    with pytest.raises(ValueError, match="did you mean 'jieba'"):
        BM25Settings(tokenizer="segmenter", segmenter="jeiba")
    with pytest.raises(ValueError, match="n is the n-gram length of tokenizer: char_ngrams"):
        BM25Settings(n=2)
    with pytest.raises(ValueError, match="n 9: char_ngrams takes n from 1 to 6"):
        BM25Settings(tokenizer="char_ngrams", n=9)
    with pytest.raises(ValueError, match="no segmenter is known for 'kor'"):
        resolve_analyzer(["kor-Hang"], BM25Settings(tokenizer="segmenter"))


#: 12 characters; every "word" an ordered pair of them, so single characters are shared by most documents and only
#: pairs tell documents apart (as in Chinese, where a character alone means little)
CHARS = "电脑打印机账户密码网络邮"


def chinese(seed: int = 3, n_docs: int = 40) -> tuple[dict, dict, dict]:
    rng = random.Random(seed)
    words = [a + b for a in CHARS for b in CHARS if a != b]
    corpus, queries, qrels = {}, {}, {}
    for i in range(n_docs):
        own = rng.sample(words, 4)
        corpus[f"d{i}"] = {"title": "", "text": "，".join(own) + "的问题已经处理。"}
        queries[f"q{i}"] = f"怎么{own[2]}{own[0]}？"
        qrels[f"q{i}"] = {f"d{i}": 2}
    return corpus, queries, qrels


def chinese_task(folder: Path, bm25: dict | None) -> tuple[dict, dict, Path]:
    corpus, queries, qrels = chinese()
    write_beir(folder, corpus, queries, qrels)
    _task(folder, bm25)
    return corpus, qrels, folder / "task.yaml"


def test_on_chinese_char_ngrams_beat_words_and_characters_and_equal_bm25s(tmp_path):
    import pytrec_eval

    from runners.config.benchmark import BenchmarkConfig
    from runners.execution.run import run_benchmark
    from tests.test_bm25_analyzer import stored

    means = {}
    for label, block in (("words", {"tokenizer": "words"}), ("characters", {"tokenizer": "characters"}),
                         ("default", None)):
        folder = tmp_path / label
        folder.mkdir()
        corpus, qrels, task_yaml = chinese_task(folder, block)
        cfg = BenchmarkConfig.from_file(write_benchmark(folder, [str(task_yaml)], models=[{"name": "bm25"}]))
        record = run_benchmark(cfg, show_progress=False)[0]
        assert record.status == "ran", record.reason
        ours, rankings, per_query = stored(cfg, "ZhTok")
        means[label] = sum(ours.values()) / len(ours)
    assert per_query["bm25_analyzer"]["tokenizer"] == "char_ngrams" and per_query["bm25_analyzer"]["n"] == 2
    assert means["default"] > means["characters"] + 0.1 and means["default"] > means["words"] + 0.5, means
    # the default's scores are bm25s' on the same tokens (Chinese stop words of bm25s' zh list removed)
    stops = set(resolve_analyzer(["zho-Hans"]).stopword_set())
    ids, qids = list(corpus), list(chinese()[1])
    expected = bm25s_rankings(
        {d: [t for t in char_ngrams("\n" + corpus[d]["text"]) if t not in stops] for d in ids},
        {q: [t for t in char_ngrams(chinese()[1][q]) if t not in stops] for q in qids})
    want = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(expected)
    for q in qids:
        assert ours[q] == pytest.approx(want[q]["ndcg_cut_10"], abs=1e-9), q
        for doc, score in rankings[q].items():
            assert score == pytest.approx(expected[q][doc], abs=1e-6), (q, doc)
