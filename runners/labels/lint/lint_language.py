"""Lint: a task whose `languages:` is not the language its documents are written in.

`languages:` chooses BM25's stemmer and stop words (mteb's BM25 reads it), and task YAML written before `init` read
the texts says `[eng-Latn]` whatever they are: BM25 then scores a Romanian collection with English's analyzer, and
nothing says so. This check identifies the documents (custom_tasks/language_detect.py) and reports when the language
most of them are written in is not declared. It is deliberately narrow: it speaks only when at least
``MIN_DOCUMENTS`` documents were identified and one language holds a majority of them, so short or mixed texts that
the identifier could mistake for a neighbouring language never raise it.
"""

from __future__ import annotations

from collections.abc import Sequence

from custom_tasks.collection import Collection
from custom_tasks.language_detect import detect_languages
from custom_tasks.languages import language_name
from custom_tasks.macro_languages import family

from .lint import Finding, LintReport

#: fewer identified documents than this: no finding (too little text to contradict what the task says)
MIN_DOCUMENTS = 20
#: the documents' main language must hold more than this share to be called their language
MAJORITY = 0.5


def language_mismatch(collection: Collection, languages: Sequence[str]) -> Finding | None:
    """A finding when most documents are in a language `languages:` does not list (None otherwise)."""
    found = detect_languages(collection.corpus, collection.queries)
    shares = found.documents.shares()
    if found.documents.total < MIN_DOCUMENTS or not shares or shares[0][1] <= MAJORITY:
        return None
    main = shares[0][0]
    if family(main.split("-")[0]) in {family(code.split("-")[0]) for code in languages}:
        return None  # one macro-language: cmn-Hans declared, zho-Hans found (custom_tasks/macro_languages.py)
    said = f"[{', '.join(languages)}]"
    return Finding(
        "languages_differ",
        f"languages: {said} but the documents are {language_name(main)} ({found.documents.line(top=2)}; "
        f"{found.questions.line(top=2)}): BM25 uses the stemmer and stop words of the declared language",
        found.documents.counts[main], found.documents.examples.get(main, []),
        f"set `languages: [{', '.join(found.languages)}]` in the task YAML if that is right (docs/collections.md: "
        "Languages); the next run re-runs BM25 with that language's analyzer",
        [found.to_dict()])


def attach(report: LintReport, collection: Collection, languages: Sequence[str] | None) -> LintReport:
    """Add the finding to a lint report (as truncation.attach adds its own), when the task says its languages."""
    finding = language_mismatch(collection, languages) if languages else None
    if finding is not None:
        report.findings.append(finding)
    return report
