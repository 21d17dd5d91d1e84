"""One text normaliser that knows the writing system: what lint, BM25 (when asked) and the checks between questions
and documents compare, so two spellings a reader takes for the same text compare equal.

``normalize_text`` applies, in order:

1. **Unicode NFKC**: compatibility forms to their plain letters (ligatures "ﬁ" -> "fi", full-width "Ａ" -> "A",
   superscripts), and decomposed input ("s" + combining cedilla) composed, so a character typed two ways is one.
2. **Case folding** (``str.casefold``, Unicode's full folding: "ß" -> "ss", Greek final sigma -> sigma), then NFKC
   again, since folding can leave a sequence that is not normalised.
3. **Variant letters of one writing system**, mapped to one form (``VARIANTS``). Each pair is the *same letter*
   encoded two ways by keyboards, OCR and older fonts; no orthography contrasts the two, so merging them can never
   make two different words equal:

   * Romanian ş ţ (cedilla, U+015F U+0163, what pre-2007 keyboards and fonts type) and ș ț (comma below, U+0219
     U+021B, the Romanian standard SR 13011), both cases: folded to comma below, the standard form and the one
     Snowball's Romanian stemmer (PyStemmer) itself outputs for either input. Turkish and Gagauz write the cedilla
     forms and never the comma forms, so their text is only re-encoded, consistently on both sides of a comparison.
   * Turkish capital dotted İ (U+0130): Unicode folds it to "i" + combining dot above (U+0307), which matches
     neither "i" nor anything a user types; the stray dot is dropped ("İstanbul" -> "istanbul"). Dotless ı is
     *not* merged with i here: "sık" and "sik" are different Turkish words (see ``fold_accents``).
   * Arabic and Persian yeh (ي U+064A / ی U+06CC) and kaf (ك U+0643 / ک U+06A9): the same letters typed on Arabic
     vs Persian keyboards (Lucene's PersianNormalizer folds them the same way); the tatweel (U+0640), a
     stretching stroke with no letter value, is dropped.
   * Apostrophe letters: U+02BC (modifier letter apostrophe, Ukrainian's "пам'ять") and U+2019 (right single
     quotation mark) to the ASCII "'", so a word written with any of the three splits the same way.
   * Soft hyphen (U+00AD), an invisible hyphenation hint PDFs leave inside words, is dropped.

4. **Accent folding** (``fold_accents=True`` only): combining marks on Latin, Greek and Cyrillic letters are
   dropped ("ă" -> "a", "ά" -> "α", "ё" -> "е"), as are the stroke and dotless letters that have no decomposition
   (ı ł ø đ -> i l o d). Lossy on purpose (Romanian "fată"/"fata", Turkish "sık"/"sik" become equal), so it is an
   option: what users who type without diacritics need, not a default. Marks on other scripts (Devanagari vowel
   signs, Thai, Arabic, Hebrew points) are kept: there they are letters or vowels, not accents.

Markup is not this module's concern: ``custom_tasks/markup.py`` removes tags where they are tags.
"""

from __future__ import annotations

import unicodedata

#: one writing system's two encodings of the same letter -> the one form kept (lower case: applied after folding)
VARIANTS: dict[str, str] = {
    "\u015f": "\u0219",  # ş s-cedilla -> ș s-comma-below (Romanian)
    "\u0163": "\u021b",  # ţ t-cedilla -> ț t-comma-below (Romanian)
    "\u064a": "\u06cc",  # ي Arabic yeh -> ی Farsi yeh
    "\u0643": "\u06a9",  # ك Arabic kaf -> ک keheh (Persian kaf)
    "\u0640": "",        # ـ tatweel (kashida): stretching, no letter value
    "\u02bc": "'",       # ʼ modifier letter apostrophe (Ukrainian)
    "\u2019": "'",       # ’ right single quotation mark used as an apostrophe
    "\u00ad": "",        # soft hyphen
}
_VARIANT_TABLE = str.maketrans(VARIANTS)
#: letters with no Unicode decomposition that accent folding still takes to their base letter
_NO_DECOMPOSITION = str.maketrans({"\u0131": "i", "\u0142": "l", "\u00f8": "o", "\u0111": "d", "\u0127": "h"})
_COMBINING_DOT_ABOVE = "\u0307"
_FOLDED_SCRIPTS = ("LATIN", "GREEK", "CYRILLIC")


def normalize_text(text: str, *, fold_accents: bool = False) -> str:
    """``text`` as compared: NFKC, case-folded, one form per variant letter, and without accents when asked
    (see the module docstring for each step and why it is safe)."""
    out = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    out = out.replace("i" + _COMBINING_DOT_ABOVE, "i").translate(_VARIANT_TABLE)
    if fold_accents:
        out = _fold_accents(out)
    return out


def _fold_accents(text: str) -> str:
    """Combining marks dropped after Latin, Greek and Cyrillic base letters only, then recomposed (NFC)."""
    decomposed = unicodedata.normalize("NFD", text.translate(_NO_DECOMPOSITION))
    kept: list[str] = []
    foldable = False
    for ch in decomposed:
        if unicodedata.combining(ch):
            if not foldable:
                kept.append(ch)
            continue
        foldable = unicodedata.name(ch, "").startswith(_FOLDED_SCRIPTS)
        kept.append(ch)
    return unicodedata.normalize("NFC", "".join(kept))

