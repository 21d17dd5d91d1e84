"""BM25's tokens for scripts written without spaces: character n-grams and the word segmenters (optional extras).

mteb's BM25 splits Chinese, Japanese, Thai, ... into single characters (`tokenizer: characters`); a single character
of Chinese carries little meaning, and a word of Thai is a run of letters none of which means anything alone. Two
other ways are offered here, both plain `text -> list[str]` functions handed to mteb's own `BM25Tokenizer` (its
custom-tokenizer path: the same stop words, 90% rule and bm25s index as mteb's character tokens):

* ``char_ngrams`` (no extra): each run of a script written without spaces (`NO_SPACE`: Han, Hiragana, Katakana,
  Hangul, Thai, Lao, Khmer, Myanmar, Tibetan) gives its characters and every n-gram up to `n` (n = 2: unigrams and
  bigrams, the CJK bigram analyzer of Lucene/Elasticsearch); every other run of letters and digits (a Latin word, a
  number) is one token, as bm25s' words; punctuation and spaces are dropped.
* ``segmenter`` (an extra): a dictionary word segmenter, where a well-kept one installs offline from PyPI with its
  dictionary inside the package (no download at run time): jieba for Chinese, PyThaiNLP's newmm for Thai, Janome
  (its IPADIC inside) for Japanese. Its name, version and dictionary are part of the run identity (`segmenter_id`);
  a missing package is one line naming the extra to install.

Nothing here imports mteb; a segmenter's package is imported only when its tokens are made.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

#: the scripts written without spaces between words (Unicode blocks; CJK punctuation U+3000-303F left out except
#: the iteration marks 々 and 〇): Han, Hiragana, Katakana, Hangul, Thai, Lao, Khmer, Myanmar, Tibetan
NO_SPACE = ("\u3005\u3007\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
            "\U00020000-\U0003134f\uac00-\ud7af\u1100-\u11ff\u3130-\u318f"  # Han, kana; Hangul syllables and jamo
            "\u0e00-\u0e7f\u0e80-\u0eff\u1780-\u17ff\u19e0-\u19ff"  # Thai, Lao, Khmer
            "\u1000-\u109f\uaa60-\uaa7f\ua9e0-\ua9ff\u0f00-\u0fff")  # Myanmar, Tibetan
#: a run of such characters, or a run of other letters/digits (`\w` less those characters and `_`)
_RUNS = re.compile(f"([{NO_SPACE}]+)|([^\\W_{NO_SPACE}]+)")
#: the largest n accepted (a 6-gram of Chinese is already a phrase)
MAX_N = 6


def char_ngrams(text: str, n: int = 2, lowercase: bool = True) -> list[str]:
    """The text's tokens: every 1..n-gram inside each no-space run, each other word whole.

    >>> char_ngrams("用Python处理数据。", 2)
    ['用', 'python', '处', '理', '数', '据', '处理', '理数', '数据']
    """
    text = unicodedata.normalize("NFKC", text)
    if lowercase:
        text = text.lower()
    out: list[str] = []
    for run, word in _RUNS.findall(text):
        if word:
            out.append(word)
            continue
        for size in range(1, min(n, len(run)) + 1):
            out.extend(run[i:i + size] for i in range(len(run) - size + 1))
    return out


#: bm25s' word pattern (mteb's word tokens): a run of two or more `\w` characters
BM25S_WORDS = r"(?u)\b\w\w+\b"


@lru_cache(maxsize=1)
def marked_words_pattern() -> str:
    """bm25s' word pattern with each word's combining marks kept inside it: a `\w` character, then one or more `\w`
    characters or marks (Unicode categories Mn, Mc, Me). Python's `\w` leaves the marks out, so bm25s' `\w\w+`
    cuts हिन्दी (Hindi) at every vowel sign and virama: "भारत की राजधानी नई दिल्ली" gives ['रत', 'जध', 'नई'], the rest
    lost. On text without combining marks the two patterns give the same tokens."""
    ranges: list[str] = []
    start = prev = -2
    for cp in range(0x110000):
        if unicodedata.category(chr(cp)).startswith("M"):
            if cp != prev + 1:
                if start >= 0:
                    ranges.append(_range(start, prev))
                start = cp
            prev = cp
    ranges.append(_range(start, prev))
    return "(?u)\\w[\\w" + "".join(ranges) + "]+"


def _range(a: int, b: int) -> str:
    return f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}"


def marked_words(text: str, lowercase: bool = True) -> list[str]:
    """The word tokens of `marked_words_pattern` (what bm25s makes of them before stop words and stemming).

    >>> marked_words("भारत की राजधानी नई दिल्ली")
    ['भारत', 'की', 'राजधानी', 'नई', 'दिल्ली']
    """
    return _marked().findall(text.lower() if lowercase else text)


@lru_cache(maxsize=1)
def _marked() -> re.Pattern[str]:
    return re.compile(marked_words_pattern())


@dataclass(frozen=True)
class Segmenter:
    """A word segmenter offered as `bm25: {tokenizer: segmenter, segmenter: NAME}`."""

    name: str  # what `segmenter:` takes
    package: str  # the distribution whose version is part of the identity
    extra: str  # `pip install 'private-mteb[EXTRA]'`
    dictionary: str  # what it segments with (inside the package)
    languages: tuple[str, ...]  # ISO 639-3 codes it is the default segmenter of


SEGMENTERS: dict[str, Segmenter] = {s.name: s for s in (
    Segmenter("jieba", "jieba", "zh", "jieba's dict.txt, Simplified Chinese", ("zho", "cmn", "wuu", "yue")),
    Segmenter("newmm", "pythainlp", "th", "PyThaiNLP's Thai word list", ("tha",)),
    Segmenter("janome", "janome", "ja", "Janome's IPADIC", ("jpn",)),
)}


def default_segmenter(language: str) -> str | None:
    """The segmenter offered for a language (ISO 639-3), or None."""
    return next((s.name for s in SEGMENTERS.values() if language in s.languages), None)


def segmenter_id(name: str) -> str:
    """'jieba 0.42.1', 'newmm (pythainlp 5.4.0)': the installed version, read without importing it; a missing package: one line naming the
    extra. Raises ValueError (the config's loader turns it into one line naming the file)."""
    from importlib.metadata import PackageNotFoundError, version

    seg = SEGMENTERS[name]
    try:
        return f"{name} {version(seg.package)}" if name == seg.package else f"{name} ({seg.package} {version(seg.package)})"
    except PackageNotFoundError:
        raise ValueError(f"bm25: the {name} segmenter needs the {seg.package} package: pip install "
                         f"'private-mteb[{seg.extra}]' (or tokenizer: char_ngrams, which needs nothing)") from None


def segment(name: str, lowercase: bool = True) -> Callable[[str], list[str]]:
    """`text -> tokens` with the named segmenter: its words, lower-cased, without spaces and punctuation."""
    cut = _cutter(name)

    def tokens(text: str) -> list[str]:
        text = unicodedata.normalize("NFKC", text)
        words = cut(text.lower() if lowercase else text)
        return [w for w in (w.strip() for w in words) if w and any(c.isalnum() for c in w)]

    return tokens


@lru_cache(maxsize=None)
def _cutter(name: str) -> Callable[[str], list[str]]:
    """The segmenter's own cut function, imported once (its dictionary loads on the first call)."""
    segmenter_id(name)  # a missing package: the one line
    if name == "jieba":
        import logging

        import jieba

        jieba.setLogLevel(logging.WARNING)  # its "Building prefix dict" lines go to stderr otherwise
        return lambda t: jieba.lcut(t, HMM=True)
    if name == "newmm":
        from pythainlp.tokenize import word_tokenize

        return lambda t: word_tokenize(t, engine="newmm", keep_whitespace=False)
    from janome.tokenizer import Tokenizer

    janome = Tokenizer(wakati=True)
    return lambda t: list(janome.tokenize(t))
