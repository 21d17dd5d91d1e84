"""mteb's BM25 baseline with the task's analyzer (custom_tasks/bm25_analyzer.py): same index, same scoring.

mteb's `BM25Search` picks its stemmer and stop words from the task's languages when it indexes; it cannot be told
"no stemmer" for an English task, a Romanian stemmer for a task of several languages, or case kept. This subclass
indexes with the analyzer the task resolves to (mteb's own choice when the task has no `bm25:` block, so such a
task scores exactly as mteb's BM25) and keeps everything else mteb's: its tokenizer class, bm25s' BM25 with
mteb's k1/b/delta/method, and its `search`. The model is made through mteb's registry entry for
`mteb/baseline-bm25s` (its loader kwargs, requirements check and ModelMeta), only the loader is this class.
"""

from __future__ import annotations

from typing import Any

from mteb.models.model_implementations.bm25 import BM25Search, BM25Tokenizer

from custom_tasks.bm25_analyzer import Analyzer, resolve_analyzer
from custom_tasks.errors import ConfigError
from custom_tasks.mteb_private import tasks_registry

from ...config.model_spec import BM25_NAME


def task_languages(task_metadata: Any, hf_subset: str) -> list[str]:
    """The languages mteb reads for a subset (a multilingual task lists them per subset)."""
    langs = task_metadata.eval_langs
    return list(langs.get(hf_subset, []) if isinstance(langs, dict) else langs)


def analyzer_for(task_metadata: Any, hf_subset: str = "default") -> Analyzer:
    """The task's analyzer: a private task's languages and `bm25:` block, a public task's languages."""
    cls = tasks_registry().get(task_metadata.name)
    cfg = getattr(cls, "task_config", None)
    try:
        if cfg is not None:
            return resolve_analyzer(list(cfg.languages), cfg.bm25)
        return resolve_analyzer(task_languages(task_metadata, hf_subset))
    except ValueError as e:
        raise ConfigError(getattr(cfg, "path", None), str(e)) from None


def task_analyzer(task: Any) -> Analyzer:
    """`analyzer_for` of a task object (its first subset)."""
    subsets = getattr(task, "hf_subsets", None) or ["default"]
    return analyzer_for(task.metadata, subsets[0])


def uses_bm25(identity: dict[str, Any]) -> bool:
    """Whether a candidate's identity has BM25 in it: BM25 itself, a hybrid, or a reranking of either."""
    if identity.get("kind") == "bm25" or identity.get("experiment") == "hybrid":
        return True
    base = identity.get("base")
    return isinstance(base, dict) and uses_bm25(base)


class AnalyzerTokenizer(BM25Tokenizer):
    """mteb's BM25Tokenizer with every setting given instead of detected.

    With lower-casing and a bm25s list or none (mteb's own cases) mteb's code tokenizes; case kept or the task's own
    word list go through the same steps with bm25s' `lower` and `stopwords` arguments set. The two steps overridden
    are mteb private names, listed in custom_tasks/mteb_private.py (tests/test_mteb_private.py says when one moves). Texts pass the task's
    normaliser first when it asks for one (`normalize`, `fold_accents`). Character n-grams and segmenters
    (custom_tasks/bm25_tokens.py) are `text -> tokens` functions given to mteb's own custom-tokenizer path.
    """

    def __init__(self, analyzer: Analyzer) -> None:
        own = analyzer.token_function()  # char n-grams, a segmenter: mteb's custom-tokenizer path (bm25_tokens.py)
        super().__init__(language=None, freq_threshold=analyzer.stopword_frequency,
                         tokenizer=own or ("char" if analyzer.tokenizer == "characters" else None))
        self.analyzer = analyzer
        self.stopwords_key = analyzer.stopwords if isinstance(analyzer.stopwords, str) else None
        if analyzer.stemmer:
            import Stemmer

            self.stemmer = Stemmer.Stemmer(analyzer.stemmer)
        self._own_words = frozenset(analyzer.stopwords) if isinstance(analyzer.stopwords, tuple) else None

    def fit_transform(self, corpus_texts: list[str]) -> Any:
        return super().fit_transform(self.analyzer.prepare(corpus_texts))

    def transform(self, texts: list[str]) -> Any:
        return super().transform(self.analyzer.prepare(texts))

    def _mtebs_case(self) -> bool:
        return self.analyzer.lowercase and self._own_words is None and not self.analyzer.marks

    def _pattern(self) -> str:
        """bm25s' word pattern, or the one that keeps each word's combining marks (Analyzer.marks)."""
        from custom_tasks.bm25_tokens import BM25S_WORDS, marked_words_pattern

        return marked_words_pattern() if self.analyzer.marks else BM25S_WORDS

    def _fit_transform_bm25s(self, corpus_texts: list[str]) -> Any:
        if self._mtebs_case():
            return super()._fit_transform_bm25s(corpus_texts)
        import bm25s
        from bm25s.tokenization import Tokenized

        lower = self.analyzer.lowercase
        named = self._own_words if self._own_words is not None else self.analyzer.stopword_set()
        if named or self.freq_threshold == 0:  # mteb's fast path
            self._combined_stops, self._combined_list = named, list(named) or None
            return bm25s.tokenize(corpus_texts, lower=lower, stopwords=self._combined_list, stemmer=self.stemmer,
                                  token_pattern=self._pattern(), show_progress=False)
        raw = bm25s.tokenize(corpus_texts, lower=lower, stopwords=None, stemmer=self.stemmer,
                             token_pattern=self._pattern(), show_progress=False)
        id_to_token = {v: k for k, v in raw.vocab.items()}  # mteb's slow path: frequent terms of the corpus
        doc_freq: dict[str, int] = {}
        for doc_ids in raw.ids:
            for t in {id_to_token[i] for i in doc_ids}:
                doc_freq[t] = doc_freq.get(t, 0) + 1
        n = len(corpus_texts)
        stops = frozenset(t for t, df in doc_freq.items() if df / n >= self.freq_threshold)
        self._combined_stops, self._combined_list = stops, list(stops) or None
        stop_ids = frozenset(raw.vocab[t] for t in stops)
        return Tokenized(ids=[[i for i in ids if i not in stop_ids] for ids in raw.ids], vocab=raw.vocab)

    def _transform_bm25s(self, texts: list[str]) -> Any:
        if self._mtebs_case():
            return super()._transform_bm25s(texts)
        import bm25s

        return bm25s.tokenize(texts, lower=self.analyzer.lowercase, stopwords=self._combined_list,
                              stemmer=self.stemmer, token_pattern=self._pattern(), show_progress=False)


class AnalyzedBM25Search(BM25Search):
    """mteb's BM25Search indexing with the task's analyzer; `analyzers` keeps what each task used."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.analyzers: dict[str, Analyzer] = {}

    def index(self, corpus: Any, *, task_metadata: Any, hf_split: str, hf_subset: str, encode_kwargs: Any,
              num_proc: int | None = None, **kwargs: Any) -> None:
        """mteb's `index` (same corpus text, tokenizer class, BM25 parameters) with the task's analyzer."""
        import bm25s

        analyzer = analyzer_for(task_metadata, hf_subset)
        self.analyzers[task_metadata.name] = analyzer
        corpus_texts = ["\n".join([doc.get("title", ""), doc["text"]]) for doc in corpus]
        self._tokenizer = AnalyzerTokenizer(analyzer)
        encoded = self._tokenizer.fit_transform(corpus_texts)
        self.retriever = bm25s.BM25(k1=self.k1, b=self.b, delta=self.delta, method=self.method)
        self.retriever.index(encoded)
        self.corpus_idx_to_id = {i: row["id"] for i, row in enumerate(corpus)}


def _loader(model_name: str, **kwargs: Any) -> AnalyzedBM25Search:
    return AnalyzedBM25Search(**kwargs)


def bm25_search() -> AnalyzedBM25Search:
    """The BM25 candidate's model: mteb's registry entry (meta, loader kwargs, requirements) with this loader."""
    import mteb

    meta = mteb.get_model_meta(BM25_NAME)
    return meta.model_copy(update={"loader": _loader}).load_model()
