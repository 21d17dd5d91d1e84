"""The `mixed_letter_forms` warning of `tasks validate`: documents and questions that write the same letters two ways.

Romanian ș ț (comma below, the standard) and ş ţ (cedilla, what older keyboards and OCR type) are one letter each
to a reader, and ``normalize_text`` (custom_tasks/normalize.py) folds them for lint. But a model's tokenizer and
BM25 without normalisation see two different words: when the documents write "ședință" and the questions
"şedinţă", every question loses its best matches. Nothing in a score says why, so validation says it, with the
counts of each form on each side and the first line that uses it.

Counting is one regular-expression search per text (no match: nothing else is done), so it costs nothing on text
without these letters.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .collection import CollectionWarning

#: family -> its forms -> the characters (both cases) of each form; the first form is the one normalize_text keeps
FAMILIES: dict[str, dict[str, str]] = {
    "Romanian ș ț": {"comma below (ș ț)": "șțȘȚ", "cedilla (ş ţ)": "şţŞŢ"},
    "Arabic-script yeh and kaf": {"Persian (ی ک)": "یک", "Arabic (ي ك)": "يك"},
}
_FORM_OF = {ch: (family, form) for family, forms in FAMILIES.items() for form, chars in forms.items()
            for ch in chars}
#: any letter of a family, or a combining cedilla / comma below that NFC may compose into one
_ANY = re.compile("[" + "".join(_FORM_OF) + "\u0326\u0327]")

SIDES = ("documents", "questions")


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

    def warnings(self) -> list[CollectionWarning]:
        """One ``mixed_letter_forms`` warning per family written in more than one form across both sides."""
        out = []
        for family, forms in FAMILIES.items():
            used = {form for (_, fam, form) in self.counts if fam == family}
            if len(used) < 2:
                continue
            parts = []
            for side in SIDES:
                shown = [f"{form} x{self.counts[(side, family, form)]:,} (first at {self.first[(side, family, form)]})"
                         for form in forms if (side, family, form) in self.counts]
                if side in self.uncounted:
                    shown = ["not counted (a corpus in the disk store)"]
                parts.append(f"{side}: " + (", ".join(shown) if shown else "none"))
            out.append(CollectionWarning("mixed_letter_forms", f"{family}: {'; '.join(parts)}; retype the other "
                                         f"form as {next(iter(forms))} (lint already compares them as one)"))
        return out
