"""Which languages a collection's documents and questions are written in, for `private-mteb init`.

A task's ``languages:`` choose BM25's stemmer and stop words (mteb's BM25 reads them), so `init` must not write
English for a Romanian collection. Each text is identified by py3langid (a maintained fork of langid.py: a naive
Bayes model over byte n-grams, 97 languages, shipped inside the package, offline, deterministic, numpy only; see
the commit that added it for why not lingua or langdetect), the codes are turned into mteb's ISO 639-3 + script
codes (custom_tasks/languages.py), and the shares are counted over texts: "documents: Romanian 97%, English 3%".
A language is declared when it holds at least ``MIN_SHARE`` of the documents or of the questions, so one mistaken
short question never adds a language; the declared list is ordered by the documents' shares (BM25 indexes them).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from .languages import default_scripts, iso1_to_iso3, iso_to_language, is_valid, language_name, with_script

#: a language is declared when it holds at least this share of the documents or of the questions
MIN_SHARE = 0.10
#: texts read per side (evenly spread over the collection: a large corpus costs no more than this)
MAX_TEXTS = 2000
#: ids kept per language as examples
EXAMPLES = 5
#: characters of each text read (the model's confidence no longer changes after a few hundred)
MAX_CHARS = 1000
#: ISO 639-3's codes for "no linguistic content", "undetermined", "multiple", "uncoded": not a language to declare
_NOT_LANGUAGES = {"zxx", "und", "mul", "mis"}
#: scripts Unicode names by the first word of a letter's name, as ISO 15924 codes
_SCRIPTS = {"LATIN": "Latn", "CYRILLIC": "Cyrl", "GREEK": "Grek", "ARABIC": "Arab", "HEBREW": "Hebr",
            "ARMENIAN": "Armn", "GEORGIAN": "Geor", "DEVANAGARI": "Deva", "BENGALI": "Beng", "THAI": "Thai"}
#: scripts a language may be written in either of (Serbian, Uzbek, Kazakh, Azerbaijani, Kurdish ...): the text's
#: own letters decide between them rather than mteb's default
_EITHER = {"Latn", "Cyrl", "Arab"}


@dataclass
class LanguageShares:
    """What the texts of one side (documents or questions) are written in: mteb code -> number of texts."""

    side: str
    counts: Counter = field(default_factory=Counter)
    #: texts without letters (ids, numbers): not counted
    skipped: int = 0
    #: code -> the ids of the first few texts identified as it (what a lint finding shows)
    examples: dict[str, list[str]] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def shares(self) -> list[tuple[str, float]]:
        """(code, share) by share, largest first; ties by code (a stable order)."""
        total = self.total or 1
        return sorted(((c, n / total) for c, n in self.counts.items()), key=lambda cs: (-cs[1], cs[0]))

    def line(self, top: int = 3) -> str:
        """'documents: Romanian 97%, English 3%' (at most ``top`` languages; the rest as 'other')."""
        if not self.total:
            return f"{self.side}: no text to identify"
        shown = self.shares()
        parts = [f"{language_name(c)} {_percent(s)}" for c, s in shown[:top]]
        rest = sum(s for _, s in shown[top:])
        if rest:
            parts.append(f"other {_percent(rest)}")
        return f"{self.side}: " + ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {"texts": self.total, "shares": {c: round(s, 4) for c, s in self.shares()}}


def _percent(share: float) -> str:
    return "<1%" if 0 < share < 0.005 else f"{share:.0%}"


@cache
def _identifier() -> Any:
    """py3langid's model (loaded once: about a second and a half)."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def _script(text: str) -> str | None:
    """The ISO 15924 code of most of the text's letters (None without letters)."""
    found: Counter = Counter()
    for ch in text:
        if ch.isalpha():
            found[unicodedata.name(ch, "?").split(" ")[0]] += 1
    if not found:
        return None
    return _SCRIPTS.get(found.most_common(1)[0][0], "")


def mteb_code(label: str, text: str) -> str | None:
    """py3langid's label (ISO 639-1 or 639-3) of ``text`` as mteb's code (``ro`` -> ``ron-Latn``); None for none."""
    iso3 = iso1_to_iso3().get(label) or (label if label in iso_to_language() else None)
    if iso3 is None or iso3 in _NOT_LANGUAGES:
        return None
    default, script = default_scripts().get(iso3), _script(text)
    if default and not (default in _EITHER and script in _EITHER):
        script = default
    code = with_script(iso3, script or None)
    return code if is_valid(code) else None


def _spread(texts: Sequence[Any], limit: int) -> Iterable[Any]:
    """At most ``limit`` texts, evenly spaced (deterministic, and the whole collection is seen)."""
    if len(texts) <= limit:
        return texts
    step = len(texts) / limit
    return (texts[int(i * step)] for i in range(limit))


def identify(texts: Sequence[str], side: str, limit: int = MAX_TEXTS,
             ids: Sequence[str] | None = None) -> LanguageShares:
    """The languages of ``texts`` (one vote per text); ``ids``: the texts' ids, for the examples."""
    out = LanguageShares(side)
    ident = _identifier()
    keys = list(ids) if ids is not None else [str(i) for i in range(len(texts))]
    for key, text in _spread(list(zip(keys, texts)), limit):
        text = text[:MAX_CHARS]
        if not any(ch.isalpha() for ch in text):
            out.skipped += 1
            continue
        code = mteb_code(ident.classify(text)[0], text)
        if code is None:
            out.skipped += 1
        else:
            out.counts[code] += 1
            if len(out.examples.setdefault(code, [])) < EXAMPLES:
                out.examples[code].append(key)
    return out


def _folds(documents: LanguageShares, questions: LanguageShares) -> dict[str, str]:
    """code -> the code it is declared as: each ISO 639-3 macro-language's codes (zho, cmn, wuu, yue ...; ara, arb,
    ary ...) fold into the one holding most documents, then most questions (custom_tasks/macro_languages.py)."""
    from .macro_languages import family

    groups: dict[str, list[str]] = {}
    for code in sorted(set(documents.counts) | set(questions.counts)):
        groups.setdefault(family(code.split("-")[0]), []).append(code)
    out = {}
    for codes in groups.values():
        head = max(codes, key=lambda c: (documents.counts[c], questions.counts[c], -codes.index(c)))
        out.update({c: head for c in codes})
    return out


def _folded_shares(shares: LanguageShares, folds: dict[str, str]) -> dict[str, float]:
    counts: Counter = Counter()
    for code, n in shares.counts.items():
        counts[folds.get(code, code)] += n
    total = sum(counts.values()) or 1
    return {c: n / total for c, n in counts.items()}


def declared(documents: LanguageShares, questions: LanguageShares, min_share: float = MIN_SHARE) -> list[str]:
    """The languages to write: dialects folded into their macro-language's main code, then those with
    ``min_share`` of the documents or of the questions, ordered by the documents' shares (then the questions');
    [] when nothing could be identified."""
    folds = _folds(documents, questions)
    doc, qry = _folded_shares(documents, folds), _folded_shares(questions, folds)
    chosen = {c for c, s in (*doc.items(), *qry.items()) if s >= min_share}
    return sorted(chosen, key=lambda c: (-doc.get(c, 0.0), -qry.get(c, 0.0), c))


def _counted(documents: LanguageShares, questions: LanguageShares, codes: list[str]) -> str:
    """'120 questions' / '3 documents and 20 questions' labelled as any of ``codes``."""
    parts = [f"{n:,} {side.side if n != 1 else side.side.rstrip('s')}" for side in (documents, questions)
             if (n := sum(side.counts[c] for c in codes))]
    return " and ".join(parts)


def fold_line(documents: LanguageShares, questions: LanguageShares, languages: list[str]) -> str:
    """One line saying what was folded into a declared language and what was left out as too rare ('' when
    nothing was): 'zho-Hans: 240 documents and 1,050 questions; 120 questions labelled wuu-Hans folded into
    Chinese (one macro-language for BM25)'."""
    folds = _folds(documents, questions)
    parts = []
    for head in languages:
        others = sorted(c for c, h in folds.items() if h == head and c != head)
        if others:
            from .macro_languages import family

            label = ", ".join(f"{_counted(documents, questions, [c])} labelled {c}" for c in others)
            parts.append(f"{head}: {_counted(documents, questions, [head])}; {label} folded into "
                         f"{language_name(family(head.split('-')[0]))} (one macro-language for BM25)")
    left = sorted({h for h in folds.values() if h not in languages})
    if left and languages:
        rare = ", ".join(f"{_counted(documents, questions, [c for c, h in folds.items() if h == code])} labelled "
                         f"{code}" for code in left)
        parts.append(f"left out (under {MIN_SHARE:.0%} of documents and of questions): {rare}")
    return "; ".join(parts)


@dataclass
class DetectedLanguages:
    """What init found and writes: the shares of each side and the declared codes."""

    documents: LanguageShares
    questions: LanguageShares
    languages: list[str]

    def lines(self) -> list[str]:
        """'documents: Romanian 97%, English 3% → languages: [ron-Latn]', the questions' line, and what was folded
        into the declared languages or left out."""
        written = f"languages: [{', '.join(self.languages)}]" if self.languages else "languages: not identified"
        folded = fold_line(self.documents, self.questions, self.languages)
        return [f"{self.documents.line()} → {written}", self.questions.line(), *([folded] if folded else [])]

    def to_dict(self) -> dict[str, Any]:
        return {"languages": self.languages, "documents": self.documents.to_dict(),
                "questions": self.questions.to_dict(),
                "folded": fold_line(self.documents, self.questions, self.languages) or None}


def detect_languages(corpus: Mapping[str, dict[str, str]], queries: Mapping[str, str]) -> DetectedLanguages:
    """Identify a collection's documents (title and text) and questions and declare the languages; of a large
    corpus only the ``MAX_TEXTS`` documents read are loaded (a corpus store reads them lazily)."""
    doc_ids = list(_spread(list(corpus), MAX_TEXTS))
    docs = identify([" ".join(filter(None, (corpus[d].get("title"), corpus[d].get("text")))) for d in doc_ids],
                    "documents", ids=doc_ids)
    qs = identify(list(queries.values()), "questions", ids=list(queries))
    return DetectedLanguages(docs, qs, declared(docs, qs))
