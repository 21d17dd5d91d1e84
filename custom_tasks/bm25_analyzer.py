"""BM25's analyzer: how a task's text becomes the terms BM25 counts (stemmer, stop words, case, tokens).

mteb's BM25 baseline (`mteb/baseline-bm25s`, mteb.models.model_implementations.bm25) picks them from the
task's `languages:`: one language (ISO 639-3 part of the codes) -> its row of mteb's table (bm25s stop-word list,
PyStemmer stemmer, character tokens for CJK/Thai/...); several languages, or none -> English's row; a language
mteb has no row for -> no stemmer and no list. Without a list, mteb drops the terms found in at least 90% of the
documents. A task's `bm25:` block overrides any of these, key by key; without the block a task scores exactly as
mteb's BM25 scores it, except where measurement chose other tokens (`MEASURED_DEFAULTS`: Chinese, Japanese, Thai,
Korean get character n-grams, bm25_tokens.py; the analyzer line says so, and the settings fingerprint holds it). The
analyzer is resolved here from mteb's own table (read at run time; only its stop-word keys are written here, checked
against it by a test, so that reading a task config never imports mteb), shown by `run`, stored with BM25's results
and named by `stats` and the report.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from .config_problems import did_you_mean

#: mteb's BM25Search(freq_threshold=0.9): without a stop-word list, terms in at least this share of documents go
MTEB_STOPWORD_FREQUENCY = 0.9
#: what an explicit "no stemmer" / "no stop words" is written as
NONE = "none"


def stemmer_names() -> list[str]:
    """PyStemmer's Snowball algorithms (`stemmer:` takes one of these)."""
    import Stemmer

    return sorted(Stemmer.algorithms())


#: the bm25s stop-word lists mteb's BM25 knows by key (the keys of its table; a test checks they are mteb's):
#: written here so that reading a task config never imports mteb
STOPWORD_KEYS = ("de", "en", "es", "fr", "it", "nl", "no", "pt", "ru", "sv", "zh")


class BM25Settings(BaseModel):
    """A task's `bm25:` block; each key left out keeps the language's default (mteb's choice)."""

    model_config = ConfigDict(extra="forbid")

    #: a PyStemmer algorithm (romanian, german, ...), or none
    stemmer: str | None = None
    #: a bm25s list key (en, de, fr, ...), none, or the words themselves
    stopwords: str | list[str] | None = None
    #: with no stop-word list: drop the terms found in at least this share of documents (0: keep every term)
    stopword_frequency: float | None = None
    #: words (bm25s' \\w\\w+ pattern), characters (mteb's choice for Chinese, Japanese, Thai, ...), char_ngrams (1..n
    #: characters of text without spaces, other words whole) or segmenter (a word segmenter, an extra: bm25_tokens.py)
    tokenizer: Literal["words", "characters", "char_ngrams", "segmenter"] | None = None
    #: char_ngrams: the longest n-gram (2: unigrams and bigrams)
    n: int | None = None
    #: segmenter: jieba (Chinese), newmm (Thai, PyThaiNLP), janome (Japanese); left out: the language's
    segmenter: str | None = None
    #: words: keep each word's combining marks inside it (left out: on where the language's script writes words with
    #: them, MARKED_SCRIPTS: Devanagari, Arabic, ...; false: bm25s' \\w\\w+ words, cut at every mark)
    marks: bool | None = None
    #: bm25s lower-cases every term (mteb's default)
    lowercase: bool | None = None
    #: text through custom_tasks/normalize.py first: NFKC, case folding, one form of variant letters (ş/ș, ţ/ț, ...)
    normalize: bool | None = None
    #: also drop accents on Latin, Greek and Cyrillic letters (normalize_text(fold_accents=True); implies normalize)
    fold_accents: bool | None = None

    @field_validator("stemmer", mode="before")
    @classmethod
    def _stemmer(cls, v: Any) -> Any:
        if v is None or v is False:  # `stemmer: null` / `false`: explicitly none
            return NONE
        if not isinstance(v, str):
            return v  # pydantic says what type it wants
        v = v.strip().lower()
        names = stemmer_names()
        if v != NONE and v not in names:
            raise ValueError(f"stemmer '{v}' is not a PyStemmer algorithm{did_you_mean(v, names)}; use one of "
                             f"{', '.join(names)}, or none")
        return v

    @field_validator("stopwords", mode="before")
    @classmethod
    def _stopwords(cls, v: Any) -> Any:
        if v is None or v is False:
            return NONE
        if isinstance(v, str):
            v = v.strip().lower()
            keys = list(STOPWORD_KEYS)
            if v != NONE and v not in keys:
                raise ValueError(f"stopwords '{v}' is not a bm25s list{did_you_mean(v, keys)}: use one of {', '.join(keys)}, "
                                 "none, or the words as a list")
            return v
        if isinstance(v, list):
            words = [str(w).strip() for w in v]
            if not all(words):
                raise ValueError("stopwords: the list holds an empty word")
            return words
        return v

    @field_validator("segmenter", mode="before")
    @classmethod
    def _segmenter(cls, v: Any) -> Any:
        from .bm25_tokens import SEGMENTERS

        if isinstance(v, str) and v.strip().lower() not in SEGMENTERS:
            names = list(SEGMENTERS)
            raise ValueError(f"segmenter '{v}' is not one of {', '.join(names)}{did_you_mean(v.strip().lower(), names)}")
        return v.strip().lower() if isinstance(v, str) else v

    @field_validator("n")
    @classmethod
    def _n(cls, v: int | None) -> int | None:
        from .bm25_tokens import MAX_N

        if v is not None and not 1 <= v <= MAX_N:
            raise ValueError(f"n {v}: char_ngrams takes n from 1 to {MAX_N} (2: unigrams and bigrams)")
        return v

    @field_validator("stopword_frequency")
    @classmethod
    def _frequency(cls, v: float | None) -> float | None:
        if v is not None and not 0 <= v <= 1:
            raise ValueError(f"stopword_frequency {v} must be a share of documents between 0 and 1 (0: off)")
        return v

    @model_validator(mode="after")
    def _case(self) -> BM25Settings:
        if self.lowercase is False and (self.normalize or self.fold_accents):
            raise ValueError("bm25: normalize/fold_accents fold case too: drop lowercase: false, or the normalisation")
        if self.n is not None and self.tokenizer != "char_ngrams":
            raise ValueError("bm25: n is the n-gram length of tokenizer: char_ngrams; add it, or drop n")
        if self.segmenter is not None and self.tokenizer != "segmenter":
            raise ValueError(f"bm25: segmenter {self.segmenter} needs tokenizer: segmenter; add it, or drop segmenter")
        if self.marks is not None and self.tokenizer not in (None, "words"):
            raise ValueError(f"bm25: marks is a setting of word tokens, not of {self.tokenizer}: drop marks")
        return self

    def written(self) -> dict[str, Any]:
        """The keys the task sets (what the run fingerprint holds: a task without the block keeps its hash)."""
        return self.model_dump(exclude_unset=True, exclude_none=True)  # `key: null` on a switch: the default


@dataclass(frozen=True)
class Analyzer:
    """The analyzer BM25 uses on one task, every setting resolved."""

    language: str  # the ISO 639-3 code whose defaults apply (mteb's choice)
    stemmer: str | None  # PyStemmer algorithm
    stopwords: str | tuple[str, ...] | None  # bm25s list key, or the task's own words
    stopword_frequency: float  # used only without a list
    tokenizer: str  # "words" | "characters" | "char_ngrams" | "segmenter"
    lowercase: bool
    normalize: bool = False  # normalize_text before tokenizing (NFKC, case folding, variant letters)
    fold_accents: bool = False
    note: str = ""  # why the default may not be what the task wants (several languages, no analyzer in mteb)
    n: int = 0  # char_ngrams: the longest n-gram
    segmenter: str = ""  # segmenter: its name and installed version ("jieba 0.42.1"; bm25_tokens.segmenter_id)
    marks: bool = False  # words: each word's combining marks kept inside it (bm25_tokens.marked_words_pattern)

    def record(self) -> dict[str, Any]:
        """JSON for the results' sidecar (and the run history): the settings and the one-line description."""
        out = asdict(self)
        if isinstance(self.stopwords, tuple):
            out["stopwords"] = list(self.stopwords)
        out["stopword_count"] = len(self.stopword_set())
        out["description"] = self.describe()
        return out

    def stopword_set(self) -> frozenset[str]:
        """The words of the list (empty without one)."""
        if isinstance(self.stopwords, tuple):
            return frozenset(self.stopwords)
        if self.stopwords:
            from .mteb_private import private

            return frozenset(private("bm25_stopwords")(self.stopwords))
        return frozenset()

    def prepare(self, texts: list[str]) -> list[str]:
        """The texts as BM25 tokenizes them: through the normaliser when the task asks for it."""
        if not (self.normalize or self.fold_accents):
            return texts
        from .normalize import normalize_text

        return [normalize_text(t, fold_accents=self.fold_accents) for t in texts]

    def describe(self) -> str:
        """One line: 'stemmer romanian (PyStemmer), no stop-word list: terms in 90% or more of the documents dropped, ...'."""
        parts = [f"stemmer {self.stemmer} (PyStemmer)" if self.stemmer else "no stemmer"]
        if isinstance(self.stopwords, tuple):
            parts.append(f"stop words: the task's {len(self.stopwords)} words")
        elif self.stopwords:
            parts.append(f"stop words {self.stopwords} (bm25s, {len(self.stopword_set())} words)")
        elif self.stopword_frequency > 0:
            parts.append(f"no stop-word list: terms in {self.stopword_frequency:.0%} or more of the documents dropped")
        else:
            parts.append("no stop words")
        parts.append("lowercase" if self.lowercase else "case kept")
        if self.normalize or self.fold_accents:
            parts.append("text normalised (NFKC, case folding, one form of variant letters)"
                         + (", accents folded" if self.fold_accents else ""))
        parts.append(self.tokens())
        return ", ".join(parts) + (f" ({self.note})" if self.note else "")

    def tokens(self) -> str:
        """The tokenizer in words: 'character 1- to 2-grams of text without spaces, other words whole'."""
        if self.tokenizer == "char_ngrams":
            grams = "single characters" if self.n == 1 else f"character 1- to {self.n}-grams"
            return f"{grams} of text without spaces, other words whole"
        if self.tokenizer == "segmenter":
            from .bm25_tokens import SEGMENTERS

            name = self.segmenter.split(" ")[0]
            return f"words of the {self.segmenter} segmenter ({SEGMENTERS[name].dictionary})"
        if self.tokenizer == "characters":
            return "character tokens"
        return "word tokens with their combining marks" if self.marks else "word tokens"

    def token_function(self) -> Callable[[str], list[str]] | None:
        """`text -> tokens` for mteb's BM25Tokenizer (its custom-tokenizer path), None for mteb's own tokenizers."""
        from functools import partial

        from . import bm25_tokens

        if self.tokenizer == "char_ngrams":
            return partial(bm25_tokens.char_ngrams, n=self.n, lowercase=self.lowercase)
        if self.tokenizer == "segmenter":
            return bm25_tokens.segment(self.segmenter.split(" ")[0], lowercase=self.lowercase)
        return None


def analyzer_language(languages: list[str]) -> tuple[str, str]:
    """(ISO 639-3 code, note): whose analyzer BM25 uses for a task's languages. Dialects fold into their
    macro-language (wuu, cmn -> Chinese) and a non-Latin script is never given English's analyzer
    (custom_tasks/macro_languages.py); several Latin-script languages, or none -> English, as mteb does."""
    from .macro_languages import choose_analyzer_language
    from .mteb_private import private

    return choose_analyzer_language(languages, private("bm25_languages"))


def _no_analyzer_note(language: str) -> str:
    """What to do about a language mteb's BM25 has no row for: PyStemmer's algorithm of that name, when there is one."""
    from .languages import language_name

    name = language_name(language)
    note = f"mteb's BM25 has no analyzer for '{language}' ({name}): no stemmer, no stop-word list"
    if name.lower() in stemmer_names():
        return note + f"; PyStemmer has one: bm25: {{stemmer: {name.lower()}}}"
    return note + "; set one with the task's bm25: block"


def resolve_analyzer(languages: list[str], settings: BM25Settings | None = None) -> Analyzer:
    """The analyzer BM25 uses for a task: mteb's defaults for its languages, then the `bm25:` block's keys."""
    from .mteb_private import private

    language, note = analyzer_language(languages)
    table = private("bm25_languages")
    if language not in table:
        note = _no_analyzer_note(language)
    words_key, stemmer, tokenizer = table.get(language, (None, None, None))
    chosen = settings.written() if settings is not None else {}
    if "stemmer" in chosen:
        stemmer = None if chosen["stemmer"] == NONE else chosen["stemmer"]
    stopwords: str | tuple[str, ...] | None = words_key
    if "stopwords" in chosen:
        value = chosen["stopwords"]
        stopwords = tuple(value) if isinstance(value, list) else (None if value == NONE else value)
    if {"stemmer", "stopwords"} & set(chosen):  # the block answers what the note asked
        note = ""
    tokens = _tokens(language, chosen, "characters" if tokenizer == "char" else "words")
    if tokens.get("note"):
        note = "; ".join(filter(None, [note, tokens.pop("note")]))
    analyzer = Analyzer(
        language=language,
        stemmer=stemmer,
        stopwords=stopwords,
        stopword_frequency=chosen.get("stopword_frequency", MTEB_STOPWORD_FREQUENCY),
        lowercase=chosen.get("lowercase", True),
        normalize=bool(chosen.get("normalize") or chosen.get("fold_accents")),
        fold_accents=bool(chosen.get("fold_accents")),
        note=note,
        **tokens,
    )
    if analyzer.tokenizer != "words" and (not analyzer.lowercase or isinstance(analyzer.stopwords, tuple)
                                          or analyzer.stemmer):
        raise ValueError(f"bm25: {analyzer.tokenizer} tokens (character tokens, n-grams, a segmenter's words) are "
                         "never stemmed, always lower-cased and take only a bm25s list key as stopwords: set "
                         "tokenizer: words, or drop stemmer/lowercase/the word list")
    return analyzer


#: the tokenizer chosen by measurement where it beats mteb's single characters (benchmarks/bench_tokenizers.py on
#: public data of the language; figures in docs/candidates.md): ISO 639-3 code -> (tokenizer, n)
MEASURED_DEFAULTS: dict[str, tuple[str, int]] = {"zho": ("char_ngrams", 2), "cmn": ("char_ngrams", 2),
                                                  "jpn": ("char_ngrams", 2), "tha": ("char_ngrams", 3),
                                                  "kor": ("char_ngrams", 2)}
#: the n of char_ngrams when the block leaves it out
DEFAULT_N = 2


def measured_default(language: str) -> tuple[str, int] | None:
    """(tokenizer, n) chosen by measurement for a language (ISO 639-3), where it is not mteb's choice."""
    return MEASURED_DEFAULTS.get(language)


def _tokens(language: str, chosen: dict[str, Any], mtebs: str, strict: bool = True) -> dict[str, Any]:
    """The Analyzer's tokenizer, n, segmenter (name + version) and, for a measured default, the note saying so.
    A segmenter whose package is missing: one line naming the extra (ValueError), or with `strict` off its name."""
    from .bm25_tokens import default_segmenter, segmenter_id
    from .languages import language_name
    from .macro_languages import marked_script

    measured = measured_default(language) if "tokenizer" not in chosen else None
    tokenizer = measured[0] if measured else chosen.get("tokenizer", mtebs)
    out: dict[str, Any] = {"tokenizer": tokenizer}
    if tokenizer == "words":
        marked = marked_script(language)
        out["marks"] = _marks(language, chosen)
        if marked and out["marks"] and "marks" not in chosen:
            out["note"] = (f"{marked}: words keep their combining marks (mteb's word tokens cut a word at each vowel "
                           "sign or point, docs/candidates.md); marks: false restores them")
    elif "marks" in chosen:
        raise ValueError(f"bm25: marks is a setting of word tokens; {language_name(language)} gets {tokenizer}: "
                         "drop marks, or set tokenizer: words")
    if tokenizer == "char_ngrams":  # n left out: the language's measured n (Thai 3), else 2
        own = MEASURED_DEFAULTS.get(language, ("", DEFAULT_N))
        out["n"] = chosen.get("n", own[1] if own[0] == "char_ngrams" else DEFAULT_N)
    if tokenizer == "segmenter":
        name = chosen.get("segmenter") or default_segmenter(language)
        if name is None:
            from .bm25_tokens import SEGMENTERS

            raise ValueError(f"bm25: no segmenter is known for '{language}' ({language_name(language)}): name one "
                             f"(segmenter: {'|'.join(SEGMENTERS)}), or use tokenizer: char_ngrams")
        try:
            out["segmenter"] = segmenter_id(name)
        except ValueError:
            if strict:
                raise
            out["segmenter"] = f"{name} (not installed)"  # `run` says the one line; lint and stats still read the task
    if measured:
        out["note"] = (f"{language_name(language)}: {tokenizer} chosen by measurement, mteb's BM25 uses single "
                       "characters; tokenizer: characters restores it")
    elif tokenizer == "characters" and "tokenizer" not in chosen:
        out["note"] = (f"{language_name(language)}: mteb's single characters, not measured here; char_ngrams beat "
                       "them on Chinese, Japanese, Thai and Korean (docs/candidates.md): bm25: {tokenizer: char_ngrams}")
    return out


def _marks(language: str, chosen: dict[str, Any]) -> bool:
    """Whether word tokens keep their combining marks: the block's `marks:`, else on for a marked script."""
    from .macro_languages import marked_script

    return bool(chosen.get("marks", marked_script(language) is not None))


def token_identity(languages: list[str], settings: BM25Settings | None) -> dict[str, Any] | None:
    """What the task's `bm25:` keys do not say about its tokens (a measured default, the segmenter's version), for
    the settings fingerprint; None where mteb's own tokenizer is used as written. Never imports mteb."""
    from .macro_languages import MTEB_BM25_LANGUAGES, choose_analyzer_language

    chosen = settings.written() if settings is not None else {}
    language, _ = choose_analyzer_language(languages, MTEB_BM25_LANGUAGES)  # mteb's table, written without mteb
    written = chosen.get("tokenizer")
    if written == "characters":
        return None
    if written == "words" or (written is None and measured_default(language) is None):
        # mteb's word tokens, or words with their marks (the default of a marked script: mteb's BM25 takes words for
        # every such language, MARKED_SCRIPTS; a written `marks:` is in the block's keys already)
        return {"tokenizer": "words", "marks": True} if _marks(language, chosen) else None
    out = _tokens(language, chosen, "", strict=False)
    out.pop("note", None)
    return out
