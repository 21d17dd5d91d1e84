"""Benchmark: BM25's tokenizers on public Chinese, Thai and Japanese retrieval data, private-mteb beside independent BM25s.

Reading-comprehension data turned into retrieval as a team would: the paragraphs are the corpus, the questions the
queries, each question's own paragraph relevance 2. XQuAD (google-deepmind/xquad, CC BY-SA 4.0: 240 Wikipedia
paragraphs and 1,190 questions, professionally translated) in Chinese, Thai, Hindi and Arabic; KorQuAD 1.0's dev set
for Korean (korquad/korquad.github.io, CC BY-ND 2.0 KR: 964 Wikipedia paragraphs, 5,774 questions); JSQuAD (JGLUE's validation set,
yahoojapan/JGLUE, CC BY-SA 4.0: 1,145 Japanese Wikipedia paragraphs with their article titles, 4,442 questions). For
each tokenizer choice of `bm25:` (words, mteb's single characters, character n-grams, the language's segmenter when
its extra is installed):

* **private-mteb**: a task folder (BEIR files + task.yaml with that `bm25:` block) run by `run_benchmark` with
  `name: bm25`, the way `private-mteb run` scores it (mteb's BM25Search, its evaluation); nDCG@10 read back from
  the stored per-query scores, and each choice compared with the default question by question;
* **bm25s**: the same tokens (the tokenizer functions of custom_tasks/bm25_tokens.py, bm25s' words, or the
  characters written out here) and stop words given to bm25s directly, lucene k1 = 1.5, b = 0.75;
* **rank_bm25**: the same tokens in rank_bm25's BM25Okapi (another implementation; its idf is Robertson's with a
  floor, not Lucene's, so its figures differ a little), nDCG@10 by pytrec_eval.

The data is in no package registry, so it is not downloaded here: put `xquad.zh.json`, `xquad.th.json`,
`xquad.hi.json` and `xquad.ar.json` of github.com/google-deepmind/xquad, KorQuAD's `dataset/KorQuAD_v1.0_dev.json`
(as `korquad-v1.0-dev.json`) and JGLUE's `datasets/jsquad-v1.3/valid-v1.3.json` (as `jsquad-valid-v1.3.json`)
in the cache folder (default ~/.cache/private-mteb/bench/xquad, or --data); nothing of it enters the repository.
rank_bm25 is installed for the benchmark only (`pip install rank_bm25`); jieba, pythainlp and janome are the extras
zh, th and ja.

    python benchmarks/bench_tokenizers.py [--data DIR] [--languages zh th ja hi ar ko]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "private-mteb" / "bench" / "xquad"
#: each language measured: its file (SQuAD format) and the task's language
LANGUAGES = {"zh": ("xquad.zh.json", "zho-Hans"), "th": ("xquad.th.json", "tha-Thai"),
             "ja": ("jsquad-valid-v1.3.json", "jpn-Jpan"), "hi": ("xquad.hi.json", "hin-Deva"),
             "ar": ("xquad.ar.json", "ara-Arab"), "ko": ("korquad-v1.0-dev.json", "kor-Hang")}
#: the bm25: blocks compared
CHOICES = [("words", {"tokenizer": "words", "marks": False}), ("words + marks", {"tokenizer": "words", "marks": True}),
           ("characters", {"tokenizer": "characters"}),
           ("char_ngrams n=2", {"tokenizer": "char_ngrams", "n": 2}),
           ("char_ngrams n=3", {"tokenizer": "char_ngrams", "n": 3}), ("segmenter", {"tokenizer": "segmenter"})]


def load_squad(path: Path) -> tuple[dict, dict, dict]:
    """(corpus, queries, qrels) of one SQuAD-format file: paragraphs ({title, text}: JSQuAD writes its article title
    before the paragraph, `title [SEP] text`; XQuAD's paragraphs have none), questions, each question's paragraph at
    grade 2."""
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    corpus, queries, qrels = {}, {}, {}
    for a, article in enumerate(data):
        for p, para in enumerate(article["paragraphs"]):
            did = f"p{a}_{p}"
            title, _, text = para["context"].rpartition(" [SEP] ")
            corpus[did] = {"title": title, "text": text}
            for qa in para["qas"]:
                queries[qa["id"]] = qa["question"]
                qrels[qa["id"]] = {did: 2}
    return corpus, queries, qrels


def write_task(folder: Path, name: str, language: str, corpus: dict, queries: dict, qrels: dict, bm25: dict) -> Path:
    import yaml

    data = folder / "data"
    (data / "qrels").mkdir(parents=True, exist_ok=True)
    with open(data / "corpus.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps({"_id": d, **doc}, ensure_ascii=False) + "\n" for d, doc in corpus.items())
    with open(data / "queries.jsonl", "w", encoding="utf-8") as f:
        f.writelines(json.dumps({"_id": q, "text": t}, ensure_ascii=False) + "\n" for q, t in queries.items())
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{q}\t{d}\t{g}\n" for q, docs in qrels.items() for d, g in docs.items()), encoding="utf-8")
    cfg = {"name": name, "description": "Reading-comprehension paragraphs and questions as retrieval (benchmark).",
           "source": {"format": "beir", "path": "data"}, "languages": [language], "license": "cc-by-sa-4.0",
           "bm25": bm25}
    path = folder / "task.yaml"
    path.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    return path


def private_mteb(task_yaml: Path, folder: Path, name: str) -> tuple[dict[str, float], str]:
    """Per-query nDCG@10 of `private-mteb run` (name: bm25) on the task, and the analyzer line it stored."""
    import yaml

    from runners.config.benchmark import BenchmarkConfig
    from runners.execution.run import run_benchmark
    from runners.results.store import find_run

    bench = folder / "bench.yaml"
    bench.write_text(yaml.safe_dump({"name": "tok", "tasks": [str(task_yaml)], "models": [{"name": "bm25"}],
                                     "results_dir": str(folder / "results")}))
    cfg = BenchmarkConfig.from_file(bench)
    record = run_benchmark(cfg, show_progress=False)[0]
    if record.status != "ran":
        raise SystemExit(f"{name}: BM25 did not run: {record.reason}")
    stored = json.loads((find_run(cfg.results_path, "mteb/baseline-bm25s", name) / "per_query_test.json").read_text())
    return stored["subsets"]["default"]["ndcg_at_10"], stored["bm25_analyzer"]["description"]


def paired(default: dict[str, float], other: dict[str, float]) -> str:
    """The other choice against the default, question by question: mean difference, paired t-test and Wilcoxon."""
    import numpy as np
    from scipy import stats

    qids = sorted(default)
    a, b = np.array([default[q] for q in qids]), np.array([other[q] for q in qids])
    if np.allclose(a, b):
        return "the same scores"
    return (f"{(b - a).mean():+.4f} (better on {(b > a).sum()}, worse on {(b < a).sum()} questions; paired t-test "
            f"p = {stats.ttest_rel(b, a).pvalue:.2g}, Wilcoxon p = {stats.wilcoxon(b, a).pvalue:.2g})")


def tokens_of(analyzer, texts: list[str]) -> list[list[str]]:
    """The analyzer's tokens of each text, made outside mteb: bm25s' word pattern, the characters (NFKC, lower-cased,
    spaces dropped, as mteb's character tokens are defined), or the n-gram / segmenter function."""
    import bm25s

    texts = analyzer.prepare(texts)
    if analyzer.tokenizer == "words":  # bm25s' pattern, or the one keeping each word's combining marks
        from custom_tasks.bm25_tokens import BM25S_WORDS, marked_words_pattern

        out = bm25s.tokenize(texts, lower=analyzer.lowercase, stopwords=None, return_ids=False, show_progress=False,
                             token_pattern=marked_words_pattern() if analyzer.marks else BM25S_WORDS)
        if analyzer.stemmer:  # PyStemmer on each word (no stop-word list here: the 90% rule reads stemmed terms)
            import Stemmer

            stem = Stemmer.Stemmer(analyzer.stemmer).stemWord
            return [[stem(w) for w in t] for t in out]
        return [list(t) for t in out]
    if analyzer.tokenizer == "characters":
        return [list(unicodedata.normalize("NFKC", t).lower().replace(" ", "")) for t in texts]
    fn = analyzer.token_function()
    return [fn(t) for t in texts]


def independent(analyzer, corpus: dict, queries: dict, qrels: dict) -> tuple[float, float]:
    """nDCG@10 of bm25s (lucene) and of rank_bm25 (Okapi) on the analyzer's tokens and stop words."""
    import bm25s
    import numpy as np
    import pytrec_eval

    try:
        from rank_bm25 import BM25Okapi
    except ImportError:  # installed for the benchmark only: its column is left empty without it
        BM25Okapi = None

    ids, qids = list(corpus), list(queries)
    docs = tokens_of(analyzer, ["\n".join([corpus[d]["title"], corpus[d]["text"]]) for d in ids])
    if analyzer.stopwords:
        stops = analyzer.stopword_set()
    else:  # mteb's rule without a list: the terms in >= 90% of the documents
        df: dict[str, int] = {}
        for row in docs:
            for t in set(row):
                df[t] = df.get(t, 0) + 1
        stops = {t for t, n in df.items() if n / len(docs) >= analyzer.stopword_frequency}
    docs = [[t for t in row if t not in stops] for row in docs]
    qtok = [[t for t in row if t not in stops] for row in tokens_of(analyzer, [queries[q] for q in qids])]
    vocab: dict[str, int] = {}  # ids in order of first occurrence, as mteb numbers them (float32 sums alike)
    for row in docs:
        for t in row:
            vocab.setdefault(t, len(vocab))
    retriever = bm25s.BM25(k1=1.5, b=0.75, delta=0.5, method="lucene")
    retriever.index(bm25s.tokenization.Tokenized(ids=[[vocab[t] for t in row] for row in docs], vocab=vocab),
                    show_progress=False)
    okapi = BM25Okapi(docs, k1=1.5, b=0.75) if BM25Okapi is not None else None
    runs: tuple[dict, dict] = ({}, {})
    for q, row in zip(qids, qtok):
        known = [vocab[t] for t in row if t in vocab]
        if known:
            d, s = retriever.retrieve(bm25s.tokenization.Tokenized(ids=[known], vocab=vocab), k=len(ids),
                                      show_progress=False)
            runs[0][q] = {ids[int(i)]: float(v) for i, v in zip(d[0], s[0])}
        else:  # nothing to match: every document scores 0, as bm25s returns them (ties ordered by pytrec_eval)
            runs[0][q] = dict.fromkeys(ids, 0.0)
        if okapi is not None:
            scores = okapi.get_scores(row)
            runs[1][q] = {ids[i]: float(scores[i]) for i in np.argsort(-scores)[:1000]}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"})
    means = []
    for run in runs:
        if not run:
            means.append(float("nan"))
            continue
        per = evaluator.evaluate(run)
        means.append(sum(per[q]["ndcg_cut_10"] for q in qids) / len(qids))
    return means[0], means[1]


#: the smoke run's paragraphs (generated here, nothing public): each question a phrase of its own paragraph
SMOKE = {"xquad.zh.json": [("公司的年假从入职第一年开始计算，每年十五天。", "年假每年有多少天"),
                           ("报销差旅费用需要在出差结束后三十天内提交发票。", "差旅费用什么时候提交发票"),
                           ("新员工的电脑由信息技术部门在入职当天配置好。", "新员工的电脑由谁配置"),
                           ("办公室的门禁卡丢失后请立即联系行政部门补办。", "门禁卡丢失了怎么办")],
         "xquad.th.json": [("พนักงานใหม่ได้รับคอมพิวเตอร์จากฝ่ายไอทีในวันแรกของการทำงาน", "คอมพิวเตอร์ของพนักงานใหม่"),
                           ("การเบิกค่าเดินทางต้องส่งใบเสร็จภายในสามสิบวัน", "ส่งใบเสร็จค่าเดินทาง"),
                           ("วันลาพักร้อนมีสิบห้าวันต่อปี", "วันลาพักร้อนต่อปี")]}


def write_smoke(folder: Path) -> Path:
    """Tiny SQuAD-format files in ``folder`` for --smoke."""
    for file, rows in SMOKE.items():
        paragraphs = [{"context": c, "qas": [{"id": f"q{i}", "question": q}]} for i, (c, q) in enumerate(rows)]
        (folder / file).write_text(json.dumps({"data": [{"paragraphs": paragraphs}]}, ensure_ascii=False),
                                   encoding="utf-8")
    return folder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=CACHE, help="folder holding the files (see above)")
    parser.add_argument("--languages", nargs="+", default=list(LANGUAGES), choices=list(LANGUAGES))
    parser.add_argument("--smoke", action="store_true",
                        help="the whole path on a tiny generated Chinese and Thai set (tests/test_benchmarks_smoke.py)")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.smoke:
        args.data, args.languages = write_smoke(Path(tempfile.mkdtemp(prefix="bench-tokenizers-"))), ["zh", "th"]
    missing = [LANGUAGES[lang][0] for lang in args.languages if not (args.data / LANGUAGES[lang][0]).is_file()]
    if missing:
        print(f"{args.data}: no {', '.join(missing)}: copy the xquad.<lang>.json files from the public XQuAD "
              "repository (github.com/google-deepmind/xquad), datasets/jsquad-v1.3/valid-v1.3.json of JGLUE "
              "(github.com/yahoojapan/JGLUE) as jsquad-valid-v1.3.json (all CC BY-SA 4.0) and "
              "dataset/KorQuAD_v1.0_dev.json of github.com/korquad/korquad.github.io (CC BY-ND 2.0 KR) as "
              "korquad-v1.0-dev.json into that folder, or pass --data DIR")
        return 2
    from custom_tasks.bm25_analyzer import BM25Settings, resolve_analyzer

    print(f"{'language':<9} {'tokenizer':<17} {'private-mteb':>12} {'bm25s':>8} {'rank_bm25':>9}  analyzer (as run names it)")
    for lang in args.languages:
        file, language = LANGUAGES[lang]
        corpus, queries, qrels = load_squad(args.data / file)
        per_query: dict[str, dict[str, float]] = {}
        for label, block in [("default (no bm25:)", None), *CHOICES]:
            try:
                analyzer = resolve_analyzer([language], BM25Settings(**block) if block else None)
            except ValueError as e:  # a segmenter's extra not installed
                print(f"{lang:<9} {label:<17} {'':>12} {'':>8} {'':>9}  skipped: {e}")
                continue
            with tempfile.TemporaryDirectory() as tmp:
                name = f"{ {'ja': 'JSQuAD', 'ko': 'KorQuAD'}.get(lang, 'XQuAD')}{lang.upper()}"
                task = write_task(Path(tmp), name, language, corpus, queries, qrels, block or {})
                per_query[label], line = private_mteb(task, Path(tmp), name)
            ours = sum(per_query[label].values()) / len(per_query[label])
            b, r = independent(analyzer, corpus, queries, qrels)
            print(f"{lang:<9} {label:<17} {ours:>12.4f} {b:>8.4f} {r:>9.4f}  {line}", flush=True)
        default = per_query.pop("default (no bm25:)")
        for label, scores in per_query.items():
            print(f"{lang:<9} {label:<17} against the default: {paired(default, scores)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
