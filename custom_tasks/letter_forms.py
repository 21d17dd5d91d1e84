"""The `mixed_letter_forms` warning of `tasks validate`: documents and questions that write the same letters two ways.

Romanian ș ț (comma below, the standard) and ş ţ (cedilla, what older keyboards and OCR type) are one letter each
to a reader, and so are Arabic ي ك and Persian ی ک (what Arabic and Persian keyboards type); ``normalize_text``
(custom_tasks/normalize.py) folds them for lint. But a model's tokenizer and BM25 without normalisation see two
different words: when the documents write "ședință" and the questions "şedinţă", every question loses its best
matches. Nothing in a score says why, so validation says it, with the counts of each form on each side and the first
line that uses it.

The advice follows the collection, not a fixed form: retype the letters of the forms the collection uses least as
the form it mostly uses, with both counts (an Arabic collection with a few Persian yeh is told to retype those few,
never its thousands of Arabic letters). The task's own languages come first: the families their letters belong to
lead, each language's own form is shown first and named when it is not the one the counts favour
(``for_languages``, called where the task's ``languages:`` are known).

Counting is one regular-expression search per text (no match: nothing else is done), so it costs nothing on text
without these letters.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .collection import CollectionWarning

#: family -> its forms -> the characters (both cases) of each form (names as stored in a disk store's meta.json)
FAMILIES: dict[str, dict[str, str]] = {
    "Romanian ș ț": {"comma below (ș ț)": "șțȘȚ", "cedilla (ş ţ)": "şţŞŢ"},
    "Arabic-script yeh and kaf": {"Persian (ی ک)": "یک", "Arabic (ي ك)": "يك"},
}
#: the form normalize_text keeps for each family (what lint compares): a choice of the normaliser, not advice
KEPT: dict[str, str] = {"Romanian ș ț": "comma below (ș ț)", "Arabic-script yeh and kaf": "Persian (ی ک)"}
_ARABIC = ("ara arb arz ary arq aeb apc apd acm afb ajp ars acq ayl ayp abv acw aec ayn shu ssh pga aao auz adf ayh "
           "acx")
#: form -> the languages (ISO 639-3, macro-language and its members) whose standard spelling it is
OWN_LANGUAGES: dict[str, frozenset[str]] = {
    "comma below (ș ț)": frozenset({"ron", "mol"}),
    "cedilla (ş ţ)": frozenset({"tur", "gag", "aze", "azj", "azb", "tuk", "crh", "tat", "kaa"}),
    "Arabic (ي ك)": frozenset(_ARABIC.split()),
    "Persian (ی ک)": frozenset({"fas", "pes", "prs", "urd", "pus", "pbt", "pbu", "pst", "ckb", "bal", "glk", "mzn"}),
}
_FORM_OF = {ch: (family, form) for family, forms in FAMILIES.items() for form, chars in forms.items()
            for ch in chars}
#: any letter of a family, or a combining cedilla / comma below that NFC may compose into one
_ANY = re.compile("[" + "".join(_FORM_OF) + "\u0326\u0327]")

SIDES = ("documents", "questions")


@dataclass
class LetterFormWarning(CollectionWarning):
    """One family written in more than one form: its counts kept, so the message can be said again for the task's
    languages (``for_languages``)."""

    family: str = ""
    counts: dict[tuple[str, str], int] = field(default_factory=dict)  # (side, form) -> letters
    first: dict[tuple[str, str], Any] = field(default_factory=dict)  # (side, form) -> first file:line
    uncounted: frozenset[str] = frozenset()

    def total(self, form: str) -> int:
        return sum(self.counts.get((side, form), 0) for side in SIDES)

    def own_form(self, languages: Sequence[str]) -> str | None:
        """The family's form that the first of ``languages`` writing one of its forms writes (None: no such one)."""
        for code in languages:
            for form in FAMILIES[self.family]:
                if code.split("-")[0] in OWN_LANGUAGES.get(form, ()):
                    return form
        return None

    def render(self, languages: Sequence[str] = ()) -> str:
        """The message: each side's counts (the task language's form first, then the most used), then the advice."""
        own = self.own_form(languages)
        forms = sorted(FAMILIES[self.family], key=lambda f: (f != own, -self.total(f), f))
        parts = []
        for side in SIDES:
            shown = [f"{form} x{self.counts[(side, form)]:,} (first at {self.first[(side, form)]})"
                     for form in forms if (side, form) in self.counts]
            if side in self.uncounted:
                shown = ["not counted (a corpus in the disk store)"]
            parts.append(f"{side}: " + (", ".join(shown) if shown else "none"))
        # a tie goes to the task language's form, then to the one the normaliser keeps (Romanian's standard)
        majority = max(forms, key=lambda f: (self.total(f), f == own, f == KEPT[self.family]))
        others = [f for f in forms if f != majority and self.total(f)]
        all_letters = sum(self.total(f) for f in forms)
        rest = sum(self.total(f) for f in others)
        strict = all(self.total(f) < self.total(majority) for f in others)
        most = f"mostly writes {majority}" if strict else f"writes {majority} as often as another form"
        advice = (f"the collection {most} ({self.total(majority):,} of {all_letters:,} letters): "
                  f"retype the {rest:,} {' and '.join(others)} letter{'s' if rest != 1 else ''} as {majority}")
        if self.uncounted:
            advice += f" (by the {' and '.join(sorted(set(SIDES) - self.uncounted))} alone)"
        if own is not None and own != majority:
            advice += f" (the task's language normally writes {own}: retype the other way if that is what you want)"
        return f"{self.family}: {'; '.join(parts)}; {advice} (lint already compares them as one)"


def for_languages(warnings: list[CollectionWarning], languages: Sequence[str]) -> list[CollectionWarning]:
    """``warnings`` with the letter-form ones said for the task's ``languages``: the families those languages write
    first, each message with the language's own form first (the other warnings keep their order)."""
    mine = [w for w in warnings if isinstance(w, LetterFormWarning)]
    if not mine:
        return warnings
    for w in mine:
        w.message = w.render(languages)
    mine.sort(key=lambda w: w.own_form(languages) is None)
    at = next(i for i, w in enumerate(warnings) if isinstance(w, LetterFormWarning))
    rest = [w for w in warnings if not isinstance(w, LetterFormWarning)]
    return rest[:at] + mine + rest[at:]


@dataclass
class FormCounts:
    """Per side, per (family, form): how many letters, and where the first one was (e.g. ``corpus.jsonl:3``)."""

    counts: dict[tuple[str, str, str], int] = field(default_factory=dict)
    first: dict[tuple[str, str, str], Any] = field(default_factory=dict)
    #: sides whose texts were not seen (a corpus validated into the disk store skips this count)
    uncounted: set[str] = field(default_factory=set)

    def add(self, side: str, text: str, where: Callable[[], Any]) -> None:
        """Count the variant letters of one text (``where()``: its ``file:line``, asked only when one is found; the
        disk store keeps a line number instead, made a ``file:line`` by ``load``)."""
        if not text or _ANY.search(text) is None:
            return
        at = where()
        for ch in unicodedata.normalize("NFC", text):
            found = _FORM_OF.get(ch)
            if found is not None:
                key = (side, *found)
                self.counts[key] = self.counts.get(key, 0) + 1
                self.first.setdefault(key, at)

    def to_meta(self, side: str) -> list[list[Any]]:
        """One side's counts as JSON for the disk store's meta.json: [family, form, count, first line]."""
        return [[fam, form, n, self.first[(sd, fam, form)]] for (sd, fam, form), n in self.counts.items() if sd == side]

    def load(self, side: str, entries: list[list[Any]] | None, where: Callable[[int], str]) -> None:
        """A side counted earlier (``to_meta``) when the disk store is reused; None (a store written before this
        count existed): the side stays uncounted."""
        if entries is None:
            self.uncounted.add(side)
            return
        self.uncounted.discard(side)
        for family, form, n, line in entries:
            self.counts[(side, family, form)] = n
            self.first[(side, family, form)] = where(line)

    def warnings(self, languages: Sequence[str] = ()) -> list[CollectionWarning]:
        """One ``mixed_letter_forms`` warning per family written in more than one form across both sides, the most
        used family first (``for_languages`` puts the task languages' families first)."""
        out = []
        for family in FAMILIES:
            counts = {(sd, form): n for (sd, fam, form), n in self.counts.items() if fam == family}
            if len({form for _, form in counts}) < 2:
                continue
            w = LetterFormWarning("mixed_letter_forms", "", family=family, counts=counts,
                                  first={(sd, form): self.first[(sd, family, form)] for sd, form in counts},
                                  uncounted=frozenset(self.uncounted))
            out.append(w)
        out.sort(key=lambda w: -sum(w.counts.values()))
        return for_languages(out, languages) if out else out
