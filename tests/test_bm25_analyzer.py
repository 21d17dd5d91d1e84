"""BM25's analyzer (custom_tasks/bm25_analyzer.py, runners/execution/candidates/bm25.py): a task's `bm25:` block
sets stemmer, stop words, case and tokens; without it BM25 scores exactly as mteb's own BM25; with it, per query,
exactly as bm25s + PyStemmer following mteb's recipe computed here independently; an analyzer change re-runs."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
import yaml

from custom_tasks.bm25_analyzer import MTEB_STOPWORD_FREQUENCY, STOPWORD_KEYS, BM25Settings, resolve_analyzer
from custom_tasks.config import TaskConfig
from custom_tasks.errors import ConfigError
from runners.config.benchmark import BenchmarkConfig
from runners.execution.run import run_benchmark
from runners.results.store import find_run
from tests.conftest import write_benchmark

BM25 = "mteb/baseline-bm25s"
# Romanian nouns in four inflected forms: only a Romanian stemmer maps them to one term
NOUNS = [("factură", "factura", "facturile", "facturilor"), ("contract", "contractul", "contractele", "contractelor"),
         ("cerere", "cererea", "cererile", "cererilor"), ("parolă", "parola", "parolele", "parolelor"),
         ("imprimantă", "imprimanta", "imprimantele", "imprimantelor"), ("plată", "plata", "plățile", "plăților"),
         ("laptop", "laptopul", "laptopurile", "laptopurilor"), ("comandă", "comanda", "comenzile", "comenzilor"),
         ("licență", "licența", "licențele", "licențelor"), ("raport", "raportul", "rapoartele", "rapoartelor"),
         ("ședință", "ședința", "ședințele", "ședințelor"), ("angajat", "angajatul", "angajații", "angajaților")]
VERBS = ["aprobarea", "trimiterea", "anularea", "verificarea", "arhivarea", "modificarea"]
FILLER = ["se", "face", "în", "portalul", "intern", "de", "către", "echipa", "și", "apoi", "pentru", "toate", "cu",
          "departamentul", "financiar", "până", "la", "sfârșitul", "lunii", "Șeful", "primește", "notificare"]


def plain_letters(text: str) -> str:
    """The text typed without diacritics (ă â î ș ț -> a a i s t), as on a keyboard without Romanian letters."""
    import unicodedata

    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c))


def romanian(seed: int = 7, n_docs: int = 48, plain_queries: bool = False) -> tuple[dict, dict, dict]:
    """A small Romanian collection from a fixed seed: each document an action on two objects; each question the
    same objects in other inflected forms (corpus, queries, qrels); `plain_queries`: typed without diacritics."""
    rng = random.Random(seed)
    corpus, queries, qrels = {}, {}, {}
    for i in range(n_docs):
        a, b = rng.sample(range(len(NOUNS)), 2)
        verb = rng.choice(VERBS)
        words = [verb.capitalize(), rng.choice(NOUNS[a][2:]), "și", rng.choice(NOUNS[b][1:3])]
        words += rng.sample(FILLER, 8)
        corpus[f"d{i}"] = {"title": f"Procedura {i}" if i % 3 else "", "text": " ".join(words) + "."}
        if i % 2 == 0:
            q = f"q{i}"
            queries[q] = f"Cum fac {verb} pentru {NOUNS[a][0]} {NOUNS[b][3]}?"
            queries[q] = plain_letters(queries[q]) if plain_queries else queries[q]
            qrels[q] = {f"d{i}": 2}
    return corpus, queries, qrels


def write_task(folder: Path, languages: list[str], bm25: dict | None = None, name: str = "RoBM25",
               plain_queries: bool = False) -> Path:
    corpus, queries, qrels = romanian(plain_queries=plain_queries)
    data = folder / "data"
    (data / "qrels").mkdir(parents=True, exist_ok=True)
    with open(data / "corpus.jsonl", "w", encoding="utf-8") as f:
        for did, doc in corpus.items():
            f.write(json.dumps({"_id": did, **doc}, ensure_ascii=False) + "\n")
    with open(data / "queries.jsonl", "w", encoding="utf-8") as f:
        for qid, text in queries.items():
            f.write(json.dumps({"_id": qid, "text": text}, ensure_ascii=False) + "\n")
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{q}\t{d}\t{g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    cfg = {"name": name, "description": "Generated Romanian procedures (test).", "source": {"format": "beir",
           "path": "data"}, "languages": languages, "license": "cc0-1.0"}
    if bm25 is not None:
        cfg["bm25"] = bm25
    path = folder / "task.yaml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    return path


def independent(corpus: dict, queries: dict, stemmer: str | None, words: list[str] | None, lower: bool = True,
                freq: float = 0.9, prepare=lambda t: t) -> dict[str, dict[str, float]]:
    """mteb's BM25 recipe with bm25s and PyStemmer only: title + newline + text, bm25s' tokenizer, the named list or
    else the terms in >= `freq` of the documents dropped, BM25 lucene k1=1.5 b=0.75, top 1000 per query."""
    import bm25s
    import Stemmer
    from bm25s.tokenization import Tokenized

    stem = Stemmer.Stemmer(stemmer) if stemmer else None
    ids = list(corpus)
    texts = [prepare("\n".join([corpus[d].get("title", ""), corpus[d]["text"]])) for d in ids]
    if words:
        stops = list(words)
        tokens = bm25s.tokenize(texts, lower=lower, stopwords=stops, stemmer=stem, show_progress=False)
    else:
        raw = bm25s.tokenize(texts, lower=lower, stopwords=None, stemmer=stem, show_progress=False)
        inv = {v: k for k, v in raw.vocab.items()}
        df: dict[str, int] = {}
        for row in raw.ids:
            for t in {inv[i] for i in row}:
                df[t] = df.get(t, 0) + 1
        stops = [t for t, n in df.items() if n / len(texts) >= freq]
        drop = {raw.vocab[t] for t in stops}
        tokens = Tokenized(ids=[[i for i in row if i not in drop] for row in raw.ids], vocab=raw.vocab)
    retriever = bm25s.BM25(k1=1.5, b=0.75, delta=0.5, method="lucene")
    retriever.index(tokens, show_progress=False)
    qids = list(queries)
    q_tokens = bm25s.tokenize([prepare(queries[q]) for q in qids], lower=lower, stopwords=stops or None, stemmer=stem,
                              show_progress=False)
    docs, scores = retriever.retrieve(q_tokens, k=min(1000, len(ids)), show_progress=False)
    return {q: {ids[int(d)]: float(s) for d, s in zip(docs[i], scores[i])} for i, q in enumerate(qids)}


def ndcg10(run: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]]) -> dict[str, float]:
    import pytrec_eval

    ev = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"})
    return {q: s["ndcg_cut_10"] for q, s in ev.evaluate(run).items()}


def run_bm25(folder: Path, task_yaml: Path):
    cfg = BenchmarkConfig.from_file(write_benchmark(folder, [str(task_yaml)], models=[{"name": "bm25"}]))
    return cfg, run_benchmark(cfg, show_progress=False)[0]


def stored(cfg: BenchmarkConfig, task: str = "RoBM25") -> tuple[dict[str, float], dict[str, dict[str, float]], dict]:
    folder = find_run(cfg.results_path, BM25, task)
    per_query = json.loads((folder / "per_query_test.json").read_text())
    import gzip

    ranks = json.loads(gzip.decompress((folder / "rankings_test.json.gz").read_bytes()))
    return per_query["subsets"]["default"]["ndcg_at_10"], ranks["subsets"]["default"], per_query


@pytest.mark.parametrize("languages, bm25, stemmer, words, lower", [
    # a mixed corpus: mteb would take English's analyzer; the block chooses the Romanian stemmer (fails on main:
    # no bm25: key) and no stop-word list (terms in 90% or more of the documents dropped, as mteb does)
    (["ron-Latn", "eng-Latn"], {"stemmer": "romanian", "stopwords": "none"}, "romanian", None, True),
    # German's stemmer and the task's own stop words, case kept
    (["ron-Latn"], {"stemmer": "german", "stopwords": ["și", "de", "se", "în"], "lowercase": False}, "german",
     ["și", "de", "se", "în"], False),
    # no block: mteb's default for Romanian (its stemmer, no list)
    (["ron-Latn"], None, "romanian", None, True),
])
def test_bm25_equals_independent_bm25s_pystemmer_per_query(tmp_path, languages, bm25, stemmer, words, lower):
    task_yaml = write_task(tmp_path, languages, bm25)
    cfg, record = run_bm25(tmp_path, task_yaml)
    assert record.status == "ran", record.reason
    corpus, queries, qrels = romanian()
    expected = independent(corpus, queries, stemmer, words, lower)
    ours, rankings, per_query = stored(cfg)
    want = ndcg10(expected, qrels)
    assert set(ours) == set(want)
    for q in want:
        assert ours[q] == pytest.approx(want[q], abs=1e-9), q
        for doc, score in rankings[q].items():
            assert score == pytest.approx(expected[q][doc], abs=1e-6), (q, doc)  # stored as float32 by bm25s
    if stemmer == "romanian":
        assert np.mean(list(ours.values())) > 0.3  # the collection is searchable with its language's stemmer
    analyzer = per_query["bm25_analyzer"]
    assert analyzer["stemmer"] == stemmer and analyzer["lowercase"] is lower


def test_the_romanian_stemmer_changes_the_score(tmp_path):
    """The generated collection is one where the analyzer matters: without a stemmer nDCG@10 drops."""
    corpus, queries, qrels = romanian()
    with_stem = np.mean(list(ndcg10(independent(corpus, queries, "romanian", None), qrels).values()))
    without = np.mean(list(ndcg10(independent(corpus, queries, None, None), qrels).values()))
    assert with_stem > without + 0.05


@pytest.mark.parametrize("languages, bm25", [(["eng-Latn"], None), (["ron-Latn"], None),
                                             (["ron-Latn", "eng-Latn"], None), (["pol-Latn"], None),
                                             (["kor-Hang"], {"tokenizer": "characters"}),
                                             (["zho-Hans"], {"tokenizer": "characters"})])
def test_without_a_block_the_analyzer_is_mtebs(tmp_path, languages, bm25):
    """A task without `bm25:` gets exactly mteb's BM25Search results (same documents, same scores); Chinese, Japanese,
    Thai, Korean, whose default tokenizer is chosen by measurement (test_bm25_tokens.py), get them with `tokenizer:
    characters`."""
    import mteb

    from custom_tasks.task import get_task
    from runners.execution.candidates.bm25 import bm25_search

    task = get_task(write_task(tmp_path, languages, bm25))
    task.load_data()
    split = task.dataset["default"]["test"]
    kwargs = {"task_metadata": task.metadata, "hf_split": "test", "hf_subset": "default", "encode_kwargs": {}}
    out = []
    for model in (mteb.get_model(BM25), bm25_search()):
        model.index(split["corpus"], **kwargs)
        out.append(model.search(split["queries"], top_k=100, **kwargs))
    assert out[0] == out[1]


def test_defaults_follow_mteb_per_language():
    from mteb.models.model_implementations.bm25 import BM25Search
    import inspect

    assert inspect.signature(BM25Search).parameters["freq_threshold"].default == MTEB_STOPWORD_FREQUENCY
    from custom_tasks.mteb_private import private

    assert sorted({row[0] for row in private("bm25_languages").values() if row[0]}) == sorted(STOPWORD_KEYS)
    ro = resolve_analyzer(["ron-Latn"])
    assert (ro.stemmer, ro.stopwords, ro.tokenizer, ro.note) == ("romanian", None, "words", "")
    assert ro.describe().startswith("stemmer romanian (PyStemmer), no stop-word list: terms in 90% or more of the documents")
    de = resolve_analyzer(["deu-Latn"])
    assert (de.stemmer, de.stopwords) == ("german", "de") and "stop words de (bm25s, " in de.describe()
    mixed = resolve_analyzer(["ron-Latn", "eng-Latn"])
    assert (mixed.stemmer, mixed.stopwords) == ("english", "en") and "several languages (eng, ron)" in mixed.note
    unknown = resolve_analyzer(["pol-Latn"])
    assert unknown.stemmer is None and unknown.note == ("mteb's BM25 has no analyzer for 'pol' (Polish): no stemmer, "
                                                        "no stop-word list; PyStemmer has one: bm25: {stemmer: polish}")
    assert "several languages" in resolve_analyzer(["ron-Latn", "eng-Latn"], BM25Settings(lowercase=False)).note
    chosen = resolve_analyzer(["ron-Latn", "eng-Latn"], BM25Settings(stemmer="romanian"))
    assert (chosen.stemmer, chosen.stopwords, chosen.note) == ("romanian", "en", "")
    assert resolve_analyzer(["kor-Hang"], BM25Settings(tokenizer="characters")).tokenizer == "characters"
    assert resolve_analyzer(["khm-Khmr"]).tokenizer == "characters"  # mteb's choice where nothing was measured
    from custom_tasks.bm25_analyzer import MEASURED_DEFAULTS  # where measurement replaced mteb's single characters

    assert MEASURED_DEFAULTS and all(private("bm25_languages")[code][2] == "char" for code in MEASURED_DEFAULTS)
    assert resolve_analyzer(["zho-Hans"], BM25Settings(tokenizer="characters")).tokenizer == "characters"
    nulls = BM25Settings.model_validate({"stemmer": None, "stopword_frequency": None, "lowercase": None})
    assert nulls.written() == {"stemmer": "none"}  # `stemmer: null` is no stemmer; a null switch is the default
    assert resolve_analyzer(["ron-Latn"], nulls).stopword_frequency == MTEB_STOPWORD_FREQUENCY
    with pytest.raises(ValueError, match="character tokens"):
        resolve_analyzer(["zho-Hans"], BM25Settings(stemmer="english"))


def test_a_misspelt_setting_is_one_line_with_the_nearest_value(tmp_path):
    task_yaml = write_task(tmp_path, ["ron-Latn"], {"stemmer": "romanain"})
    with pytest.raises(ConfigError) as err:
        TaskConfig.from_file(task_yaml)
    text = str(err.value)
    assert "task.yaml" in text and "stemmer 'romanain' is not a PyStemmer algorithm (did you mean 'romanian'?)" in text
    task_yaml = write_task(tmp_path, ["ron-Latn"], {"stopwords": "ro"})
    with pytest.raises(ConfigError, match="stopwords 'ro' is not a bm25s list"):
        TaskConfig.from_file(task_yaml)


def test_fingerprint_keeps_tasks_without_the_block_and_follows_every_setting(tmp_path):
    plain = TaskConfig.from_file(write_task(tmp_path, ["ron-Latn"]))
    assert "bm25" not in plain.model_dump(exclude_none=True)
    prints = {plain.settings_fingerprint()}
    for block in ({"stemmer": "german"}, {"stemmer": "none"}, {"stopwords": "en"}, {"stopwords": ["și"]},
                  {"stopword_frequency": 0.5}, {"lowercase": False}, {"tokenizer": "characters"},
                  {"normalize": True}, {"fold_accents": True}):
        prints.add(TaskConfig.from_file(write_task(tmp_path, ["ron-Latn"], block)).settings_fingerprint())
    assert len(prints) == 10
    a = TaskConfig.from_file(write_task(tmp_path, ["ron-Latn"], {"stopwords": ["și", "de"]})).settings_fingerprint()
    b = TaskConfig.from_file(write_task(tmp_path, ["ron-Latn"], {"stopwords": ["de", "și"]})).settings_fingerprint()
    assert a == b  # a word list is a set


def test_a_new_normaliser_is_a_new_fingerprint_only_where_the_task_uses_it(tmp_path, monkeypatch):
    """What normalize_text does is part of the identity of a BM25 run that asks for it (issue 46): a result made by
    an older normaliser is re-run, not reused. A task that does not ask keeps its fingerprint."""
    import custom_tasks.normalize as normalize

    blocks = (None, {"stemmer": "german"}, {"normalize": True}, {"fold_accents": True})
    before = [TaskConfig.from_file(write_task(tmp_path, ["ron-Latn"], b)).settings_fingerprint() for b in blocks]
    monkeypatch.setattr(normalize, "VERSION", normalize.VERSION + 1)
    after = [TaskConfig.from_file(write_task(tmp_path, ["ron-Latn"], b)).settings_fingerprint() for b in blocks]
    assert before[:2] == after[:2] and before[2] != after[2] and before[3] != after[3]


def test_changing_the_stemmer_re_runs_and_stores_what_a_fresh_run_stores(tmp_path):
    task_yaml = write_task(tmp_path, ["ron-Latn"])
    cfg, first = run_bm25(tmp_path, task_yaml)
    assert run_benchmark(cfg, show_progress=False)[0].status == "skipped"
    write_task(tmp_path, ["ron-Latn"], {"stemmer": "none"})
    second = run_benchmark(cfg, show_progress=False)[0]
    assert second.status == "ran" and "task.settings" in second.reason
    fresh_dir = tmp_path / "fresh"
    fresh_dir.mkdir()
    _, fresh = run_bm25(fresh_dir, task_yaml)
    assert second.scores["ndcg_at_10"] == fresh.scores["ndcg_at_10"] != first.scores["ndcg_at_10"]
    assert stored(cfg)[2]["bm25_analyzer"]["stemmer"] is None


def test_run_names_the_analyzer_and_a_bad_combination_is_one_line(tmp_path):
    from typer.testing import CliRunner

    from runners.cli import app

    bench = write_benchmark(tmp_path, [str(write_task(tmp_path, ["ron-Latn"]))], models=[{"name": "bm25"}])
    out = CliRunner().invoke(app, ["run", "-c", str(bench)])
    assert out.exit_code == 0, out.output
    assert ("BM25 analyzer for RoBM25 (ron-Latn): stemmer romanian (PyStemmer), no stop-word list: terms in 90% or "
            "more of the documents dropped, lowercase, word tokens") in out.output
    named = ("stemmer romanian (PyStemmer), no stop-word list: terms in 90% or more of the documents dropped, "
             "lowercase, word tokens")
    stats = CliRunner().invoke(app, ["stats", "-c", str(bench), "--resamples", "200"])
    assert stats.exit_code == 0 and f"BM25 analyzer: {named}" in stats.output, stats.output
    doc = json.loads(CliRunner().invoke(app, ["stats", "-c", str(bench), "--resamples", "200", "--format",
                                              "json"]).output)
    assert doc["bm25_analyzers"]["RoBM25"]["BM25"]["stemmer"] == "romanian"
    md = tmp_path / "report.md"
    rep = CliRunner().invoke(app, ["report", "-c", str(bench), "-o", str(md), "--no-public"])
    assert rep.exit_code == 0, rep.output
    assert f"| RoBM25 | ron-Latn | 24 | 48 | {named} |" in md.read_text(encoding="utf-8")
    write_task(tmp_path, ["zho-Hans"], {"stemmer": "english"})
    bad = CliRunner().invoke(app, ["run", "-c", str(bench)])
    assert bad.exit_code == 2 and "task.yaml" in bad.output and "character tokens" in bad.output
    assert "Traceback" not in bad.output


def test_folded_accents_find_questions_typed_without_diacritics(tmp_path):
    """Questions typed without ă ș ț: mteb's Romanian analyzer misses their words, `fold_accents` (the shared
    normaliser before bm25s) finds them; per query equal to bm25s + PyStemmer on the normalised texts."""
    from custom_tasks.normalize import normalize_text

    task_yaml = write_task(tmp_path, ["ron-Latn"], {"fold_accents": True}, plain_queries=True)
    cfg, record = run_bm25(tmp_path, task_yaml)
    corpus, queries, qrels = romanian(plain_queries=True)
    expected = independent(corpus, queries, "romanian", None, prepare=lambda t: normalize_text(t, fold_accents=True))
    ours, _, per_query = stored(cfg)
    want = ndcg10(expected, qrels)
    assert all(ours[q] == pytest.approx(want[q], abs=1e-9) for q in want)
    default = ndcg10(independent(corpus, queries, "romanian", None), qrels)
    assert np.mean(list(ours.values())) > np.mean(list(default.values())) + 0.05
    assert per_query["bm25_analyzer"]["fold_accents"] is True
    assert "text normalised (NFKC, case folding, one form of variant letters), accents folded" in \
        per_query["bm25_analyzer"]["description"]
    with pytest.raises(ConfigError, match="fold case too"):
        TaskConfig.from_file(write_task(tmp_path, ["ron-Latn"], {"normalize": True, "lowercase": False}))


def test_a_hybrid_uses_and_records_the_tasks_analyzer(tmp_path):
    """BM25 inside a hybrid indexes with the task's analyzer too, and its results record it; the dense model's
    do not."""
    from runners.execution.candidates.bm25 import AnalyzedBM25Search
    from runners.execution.candidates.experiment_candidates import candidates_from_experiments

    task_yaml = write_task(tmp_path, ["ron-Latn", "eng-Latn"], {"stemmer": "romanian", "stopwords": "none"})
    dense = {"name": "test/np", "factory": "tests.identity_encoder:NumpyEncoder", "revision": "r1"}
    cfg = BenchmarkConfig.from_file(write_benchmark(tmp_path, [str(task_yaml)], models=[dense], experiments=[
        {"type": "hybrid", "dense": "test/np", "fusion": "rrf", "k": [60]}]))
    [hybrid] = candidates_from_experiments(cfg)
    assert any(isinstance(m, AnalyzedBM25Search) for m in hybrid.load().wrapped_models)
    records = run_benchmark(cfg, show_progress=False)
    assert [r.status for r in records] == ["ran", "ran"]
    metas = {r.candidate: json.loads((find_run(cfg.results_path, r.candidate, "RoBM25") / "per_query_test.json")
                                     .read_text()) for r in records}
    assert "bm25_analyzer" not in metas["test/np"]
    assert metas[hybrid.name]["bm25_analyzer"]["stemmer"] == "romanian"
    assert metas[hybrid.name]["bm25_analyzer"]["stopwords"] is None
