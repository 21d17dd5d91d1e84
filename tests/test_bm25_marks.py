"""BM25's word tokens keep each word's combining marks where the script writes words with them (Devanagari vowel
signs and viramas, Arabic and Hebrew points, ...): Python's `\\w` leaves the marks out, so bm25s' `\\w\\w+` (mteb's
word tokens) cut a Hindi word at every vowel sign, and on XQuAD's Hindi BM25 fell to 0.747 (0.955 with the marks kept,
docs/candidates.md). On text without combining marks the tokens are bm25s' own, so other languages keep their scores
and their identities."""

from __future__ import annotations

import json
import random
import re
import unicodedata
from pathlib import Path

import pytest

from custom_tasks.bm25_analyzer import BM25Settings, resolve_analyzer, token_identity
from custom_tasks.bm25_tokens import BM25S_WORDS, marked_words, marked_words_pattern
from tests.bm25_reference import bm25s_rankings, write_beir

HINDI = "भारत की राजधानी नई दिल्ली है और हिन्दी यहाँ की मुख्य भाषा है।"


def test_a_hindi_word_keeps_its_vowel_signs_and_viramas():
    # mteb's word tokens: fragments between the marks, 5 tokens for 13 words, 8 of them gone
    assert re.findall(BM25S_WORDS, HINDI) == ["रत", "जध", "नई", "और", "यह"]
    words = [w for w in HINDI.rstrip("।").split() if len(w) > 1]  # spaces are the word boundaries here
    assert marked_words(HINDI) == words
    assert all(any(unicodedata.category(c).startswith("M") for c in w) for w in ("राजधानी", "हिन्दी", "दिल्ली"))


def test_without_combining_marks_the_tokens_are_bm25s_own():
    """Texts in Latin, Greek, Cyrillic, CJK, with digits, underscores, apostrophes and composed accents: the marked
    pattern gives exactly bm25s' tokens, so tasks in those languages score and hash as before."""
    rng = random.Random(0)
    alphabet = "abcdeéèñçşțßøαβγδжзийк中文한국あ0123456789_ '-.,;:!?\n\t()[]/\\\"@#"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80))) for _ in range(2000)]
    demo = Path(__file__).resolve().parents[1] / "data" / "demo_kb" / "corpus.jsonl"
    texts += [json.loads(line)["text"] for line in demo.read_text(encoding="utf-8").splitlines()]
    pattern = re.compile(marked_words_pattern())
    for t in texts:
        assert pattern.findall(t) == re.findall(BM25S_WORDS, t), t


def test_the_marked_scripts_default_to_words_with_their_marks():
    hindi = resolve_analyzer(["hin-Deva"])
    assert hindi.tokenizer == "words" and hindi.marks and "word tokens with their combining marks" in hindi.describe()
    assert "Devanagari" in hindi.note and "marks: false restores them" in hindi.note
    assert resolve_analyzer(["ara-Arab"]).marks and resolve_analyzer(["tam-Taml"]).marks
    assert token_identity(["hin-Deva"], None) == {"tokenizer": "words", "marks": True}
    # a Latin-script, Cyrillic or Greek task: bm25s' words as before, the identity unchanged (no token part)
    for code in ("eng-Latn", "ron-Latn", "rus-Cyrl", "ell-Grek"):
        assert not resolve_analyzer([code]).marks and token_identity([code], None) is None
    off = BM25Settings(marks=False)
    assert not resolve_analyzer(["hin-Deva"], off).marks and token_identity(["hin-Deva"], off) is None
    on = BM25Settings(marks=True)
    assert resolve_analyzer(["eng-Latn"], on).marks and token_identity(["eng-Latn"], on)["marks"]
    with pytest.raises(ValueError, match="marks is a setting of word tokens"):
        BM25Settings(tokenizer="char_ngrams", marks=True)
    with pytest.raises(ValueError, match="marks is a setting of word tokens"):
        resolve_analyzer(["zho-Hans"], BM25Settings(marks=True))  # Chinese gets character n-grams


def _hindi_collection(folder: Path, bm25: dict | None) -> tuple[dict, dict, dict, Path]:
    import yaml

    rng = random.Random(7)
    stems = ["राजधानी", "दिल्ली", "हिन्दी", "भाषा", "मुख्य", "किताब", "विद्यालय", "शिक्षक", "पुस्तकालय", "संगीत", "कविता",
             "इतिहास", "विज्ञान", "प्रयोग", "सरकार", "चुनाव", "मौसम", "बारिश", "नदी", "पहाड़", "जंगल", "खेती", "किसान",
             "बाज़ार"]
    corpus, queries, qrels = {}, {}, {}
    for i in range(30):
        own = rng.sample(stems, 5)
        corpus[f"d{i}"] = {"title": "", "text": " ".join(own) + " के बारे में जानकारी।"}
        queries[f"q{i}"] = f"{own[1]} और {own[3]} क्या है?"
        qrels[f"q{i}"] = {f"d{i}": 2}
    write_beir(folder, corpus, queries, qrels)
    cfg = {"name": "HiTok", "description": "t", "source": {"format": "beir", "path": "data"},
           "languages": ["hin-Deva"], "license": "cc0-1.0", **({"bm25": bm25} if bm25 else {})}
    (folder / "task.yaml").write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    return corpus, queries, qrels, folder / "task.yaml"


def test_on_hindi_the_marked_words_score_as_bm25s_on_them_and_beat_mtebs_cut_words(tmp_path):
    import pytrec_eval
    import Stemmer

    from runners.config.benchmark import BenchmarkConfig
    from runners.execution.run import run_benchmark
    from tests.conftest import write_benchmark
    from tests.test_bm25_analyzer import stored

    means = {}
    for label, block in (("default", None), ("cut", {"marks": False})):
        folder = tmp_path / label
        folder.mkdir()
        corpus, queries, qrels, task_yaml = _hindi_collection(folder, block)
        cfg = BenchmarkConfig.from_file(write_benchmark(folder, [str(task_yaml)], models=[{"name": "bm25"}]))
        record = run_benchmark(cfg, show_progress=False)[0]
        assert record.status == "ran", record.reason
        ours, rankings, per_query = stored(cfg, "HiTok")
        means[label] = sum(ours.values()) / len(ours)
        if label == "default":
            default, default_rankings = ours, rankings
            assert per_query["bm25_analyzer"]["marks"] is True
    assert means["default"] > means["cut"] + 0.1, means
    # independent: bm25s on the marked tokens, PyStemmer's hindi, the 90% rule on the stemmed terms (no Hindi list)
    stem = Stemmer.Stemmer("hindi").stemWord
    ids, qids = list(corpus), list(queries)
    docs = [[stem(w) for w in marked_words("\n" + corpus[d]["text"])] for d in ids]
    df: dict[str, int] = {}
    for row in docs:
        for t in set(row):
            df[t] = df.get(t, 0) + 1
    stops = {t for t, n in df.items() if n / len(docs) >= 0.9}
    expected = bm25s_rankings({d: [t for t in row if t not in stops] for d, row in zip(ids, docs)},
                              {q: [t for w in marked_words(queries[q]) if (t := stem(w)) not in stops] for q in qids})
    want = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(expected)
    for q in qids:
        assert default[q] == pytest.approx(want[q]["ndcg_cut_10"], abs=1e-9), q
        for doc, score in default_rankings[q].items():
            assert score == pytest.approx(expected[q][doc], abs=1e-6), (q, doc)
