"""Languages as BM25's analyzer sees them: ISO 639-3 macro-languages, and the scripts written without spaces.

ISO 639-3 gives Mandarin (cmn), Wu (wuu) and Cantonese (yue) codes of their own and groups them, with 16 others,
under the macro-language Chinese (zho); Standard (arb), Moroccan (ary) and Egyptian (arz) Arabic likewise under
Arabic (ara). A language identifier splits one Chinese collection into zho and wuu (py3langid labels about one
Mandarin question in ten as Wu); mteb's BM25 then sees "several languages" and takes English's analyzer: word
tokens, one per clause of Chinese text, and nDCG@10 falls from 0.95 to 0.12. For an analyzer they are one language.

The membership is SIL's ISO 639-3 macro-language table (iso-639-3-macrolanguages.tab) as the iso639-lang package
ships it (``iso639/data/iso-639_macro.json``), read as a file, without importing the package (reading a task YAML
stays cheap, tests/test_startup_imports.py). An individual language is folded into its macro-language only where
mteb's BM25 has no analyzer of its own for it: ``cmn`` and ``arb`` have rows there, ``srp`` (Serbian) and ``ind``
(Indonesian) too, and keep them; ``wuu``, ``yue``, ``arz``, ``ary`` have none and take Chinese's and Arabic's.

Several languages after that folding: mteb takes English's analyzer. That is kept where every language is written
in the Latin script (English's stemmer misreads Romanian, it does not break it), but never for a non-Latin one:
a script written without spaces (Han, kana, Thai, Lao, Khmer, Myanmar) comes first, word tokens there make one
token of a clause; then another non-Latin script; the first listed wins (`init` lists by share of documents).
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Container, Sequence
from functools import cache
from pathlib import Path

#: ISO 15924 scripts written without spaces between words: a `\w+` "word" there is a clause or a sentence
NO_SPACE_SCRIPTS = frozenset({"Hani", "Hans", "Hant", "Jpan", "Hira", "Kana", "Hrkt", "Thai", "Laoo", "Khmr", "Mymr"})
#: what people call those scripts (the warning names them)
NO_SPACE_NAMES = {"Hani": "Han", "Hans": "Han", "Hant": "Han", "Jpan": "Japanese", "Hira": "Hiragana",
                  "Kana": "Katakana", "Hrkt": "kana", "Thai": "Thai", "Laoo": "Lao", "Khmr": "Khmer",
                  "Mymr": "Myanmar"}
#: ISO 15924 scripts that write words with combining marks (vowel signs, viramas, Arabic and Hebrew vowel points:
#: Unicode Mn/Mc), where mteb's BM25 takes word tokens: Python's `\\w` leaves the marks out, so bm25s' `\\w\\w+`
#: cuts such a word at every mark (custom_tasks/bm25_tokens.py, marked_words_pattern)
MARKED_SCRIPTS = {"Deva": "Devanagari", "Beng": "Bengali", "Guru": "Gurmukhi", "Gujr": "Gujarati", "Orya": "Odia",
                  "Taml": "Tamil", "Telu": "Telugu", "Knda": "Kannada", "Mlym": "Malayalam", "Sinh": "Sinhala",
                  "Arab": "Arabic", "Hebr": "Hebrew", "Syrc": "Syriac", "Thaa": "Thaana"}
ENGLISH = "eng"
#: the languages mteb's BM25 has an analyzer for (the keys of mteb.models.model_implementations.bm25._ISO3_TO_LANG),
#: written here so that a task's settings fingerprint never imports mteb; tests/test_macro_languages.py checks them
MTEB_BM25_LANGUAGES = frozenset({
    "ara", "arb", "bod", "cat", "cmn", "dan", "deu", "ell", "eng", "epo", "est", "eus", "fin", "fra", "gle", "hin",
    "hun", "hye", "ind", "ita", "jpn", "khm", "kor", "lao", "lit", "mya", "nep", "nld", "nno", "nob", "nor", "por",
    "ron", "rus", "spa", "srp", "swe", "tam", "tha", "tur", "yid", "zho"})


@cache
def _macro_table() -> dict[str, dict]:
    """iso639-lang's copy of SIL's table: {"macro": {zho: [cmn, wuu, ...]}, "individual": {wuu: zho, ...}}."""
    spec = importlib.util.find_spec("iso639")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("iso639-lang is not installed (pip install iso639-lang): macro-languages cannot be read")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "iso-639_macro.json"
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def macro_of(iso3: str) -> str | None:
    """The macro-language an individual language belongs to (``wuu`` -> ``zho``), None when it belongs to none."""
    return _macro_table()["individual"].get(iso3)


def family(iso3: str) -> str:
    """The macro-language of a code, or the code itself: ``cmn``, ``wuu`` and ``zho`` are all ``zho``."""
    return macro_of(iso3) or iso3


def members(iso3: str) -> list[str]:
    """Every ISO 639-3 code of the code's macro-language, the macro-language first (``cmn`` -> zho, cdo, cjy, cmn,
    ...); a language outside any macro-language is alone."""
    macro = family(iso3)
    return [macro, *_macro_table()["macro"].get(macro, [])]


def analyzer_code(iso3: str, rows: Container[str]) -> str:
    """The code whose analyzer a language takes: its own when mteb has one (``cmn``, ``srp``), else its
    macro-language's when that has one (``wuu`` -> ``zho``), else its own (mteb then has none)."""
    if iso3 in rows:
        return iso3
    macro = macro_of(iso3)
    return macro if macro and macro in rows else iso3


def script_of(code: str) -> str:
    """The ISO 15924 part of ``zho-Hans``; the script mteb's tasks write the language in when the code has none."""
    lang, _, script = code.partition("-")
    if script:
        return script
    from .languages import default_scripts

    return default_scripts().get(lang, "Latn")


def marked_script(code: str) -> str | None:
    """The name of the code's script when its words carry combining marks (``hin`` -> Devanagari), else None."""
    return MARKED_SCRIPTS.get(script_of(code))


def no_space_script(code: str) -> str | None:
    """The name of the code's script when it is written without spaces (``zho-Hans`` -> Han), else None."""
    return NO_SPACE_NAMES.get(script_of(code))


def choose_analyzer_language(languages: Sequence[str], rows: Container[str]) -> tuple[str, str]:
    """(ISO 639-3 code whose analyzer BM25 uses, note) for a task's languages; ``rows``: the codes mteb's BM25 has
    an analyzer for. One language once dialects are folded: it; several all in the Latin script: English, as mteb;
    several with a non-Latin script: the first listed written without spaces, else the first non-Latin one."""
    listed: dict[str, list[str]] = {}  # macro-language -> the task's codes in it, in the order listed
    for code in languages:
        listed.setdefault(family(code.split("-")[0]), []).append(code)
    order: list[str] = []
    first_code: dict[str, str] = {}
    for codes in listed.values():  # one analyzer per macro-language: the first listed member mteb has one for
        own = [c for c in codes if c.split("-")[0] in rows]
        chosen = own[0].split("-")[0] if own else analyzer_code(codes[0].split("-")[0], rows)
        order.append(chosen)
        first_code[chosen] = own[0] if own else codes[0]
    if not order:
        return ENGLISH, "no languages: mteb's BM25 uses English's analyzer"
    raw = sorted({code.split("-")[0] for code in languages})
    if len(order) == 1:
        folded = [c for c in raw if c != order[0]]
        return order[0], (f"{', '.join(folded)} read as {order[0]}: one language for BM25 (ISO 639-3 macro-language)"
                          if folded else "")
    names = ", ".join(sorted(order))
    spaceless = [c for c in order if no_space_script(first_code[c])]
    other = [c for c in order if script_of(first_code[c]) != "Latn"]
    if spaceless or other:
        chosen = (spaceless or other)[0]
        why = (f"{no_space_script(first_code[chosen])} is written without spaces" if spaceless
               else f"{script_of(first_code[chosen])} is not the Latin script")
        return chosen, (f"several languages ({names}): {chosen}'s analyzer, the first listed whose script English's "
                        f"cannot read ({why}); choose another with the task's bm25: block")
    return ENGLISH, (f"several languages ({names}): mteb's BM25 uses English's analyzer; "
                     "choose another with the task's bm25: block")


def mteb_choice(languages: Sequence[str]) -> str:
    """What mteb's BM25 itself takes for these languages: the one ISO 639-3 code, else English."""
    codes = {code.split("-")[0] for code in languages}
    return next(iter(codes)) if len(codes) == 1 else ENGLISH


def folded_analyzer_language(languages: Sequence[str]) -> str | None:
    """The analyzer's language when it is not mteb's own choice (a dialect folded, a non-Latin script kept from
    English), else None: what a task's settings fingerprint adds, so a result scored before is scored again.
    A single language outside any macro-language is decided without reading mteb's table."""
    codes = {code.split("-")[0] for code in languages}
    if len(codes) == 1 and macro_of(next(iter(codes))) is None:
        return None
    chosen = choose_analyzer_language(list(languages), MTEB_BM25_LANGUAGES)[0]
    return chosen if chosen != mteb_choice(languages) else None


def word_tokens_warning(languages: Sequence[str], tokenizer: str, where: object) -> str:
    """One line when BM25 would cut text in a script written without spaces into word tokens (each "word" a whole
    clause: a question matches a document only where a clause is repeated verbatim), with the fix; '' otherwise.
    A warning, not a refusal: text segmented beforehand (spaces between words) is right with word tokens."""
    scripts = sorted({name for code in languages if (name := no_space_script(code))})
    if tokenizer != "words" or not scripts:
        return ""
    return (f"BM25 uses word tokens on {'/'.join(scripts)} text ({', '.join(languages)}), a script written without "
            f"spaces: each token is a whole clause and lexical matching collapses; set `bm25: {{tokenizer: "
            f"char_ngrams}}` in {where} (character n-grams: measured best on Chinese, Japanese and Thai; keep words "
            f"only for text already segmented with spaces)")
