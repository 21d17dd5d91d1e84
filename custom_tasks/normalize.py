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
     stretching stroke with no letter value, is dropped. Which form a collection should *write* is another
     question, answered from its own counts by validate (custom_tasks/letter_forms.py).
   * Apostrophe letters: U+02BC (modifier letter apostrophe, Ukrainian's "пам'ять") and U+2019 (right single
     quotation mark) to the ASCII "'", so a word written with any of the three splits the same way.
   * Soft hyphen (U+00AD), an invisible hyphenation hint PDFs leave inside words, is dropped.

4. **Optional vowel points** (``VOWEL_POINTS``), dropped: Arabic tashkeel (harakat, tanwin, shadda, sukun:
   U+064B-U+0652, U+0656-U+065F, the superscript alef U+0670, the Quranic signs U+0610-U+061A and U+06D6-U+06ED)
   and Hebrew points and cantillation (U+0591-U+05C7, punctuation excepted). Both scripts are written without
   them in everyday text and read the same with or without, so a copy with vowel marks on every word is the same
   text. The hamza and madda marks (U+0653-U+0655) are parts of letters (أ إ آ) and are kept.
5. **Traditional Chinese as Simplified** (``simplified``): a text holding Han characters and no kana is converted
   with OpenCC's ``t2s`` table (the ``opencc`` package: its dictionaries ship in the wheel, nothing is
   downloaded), so the same paragraph typed in Traditional and in Simplified characters is one text. Simplified
   text is left as it is. Text with Hiragana or Katakana is Japanese, whose kanji are not Traditional Chinese
   (機 "machine" and 机 "desk" are two Japanese words), so it is never converted.

6. **Accent folding** (``fold_accents=True`` only), in every script: after NFD, every nonspacing mark (category
   Mn) that Unicode marks ``Diacritic`` is dropped ("ă" -> "a", "ά" -> "α", "ё" -> "е", Devanagari nukta
   "ज़" -> "ज", Arabic hamza "أ" -> "ا", Thai tone marks), as are the stroke and dotless letters that have no
   decomposition (ı ł ø đ ħ -> i l o d h). Marks that are spelling rather than accents stay: vowel signs (Devanagari
   "ु", Thai "ิ" are not ``Diacritic``), viramas (they make Indic conjuncts) and the kana voicing marks (が is not
   か). Lossy on purpose (Romanian "fată"/"fata", Turkish "sık"/"sik" become equal), so it is an option: what users
   who type without diacritics need, not a default.

Markup is not this module's concern: ``custom_tasks/markup.py`` removes tags where they are tags.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

#: what normalize_text does, as a number: part of a BM25 run's identity when the task asks for the normaliser
#: (custom_tasks/config.py), so a result made by an older normaliser is re-run, not reused. 2: vowel points,
#: Traditional Chinese, accent folding in every script.
VERSION = 2

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
_HEBREW_PUNCTUATION = {0x05BE, 0x05C0, 0x05C3, 0x05C6}  # maqaf, paseq, sof pasuq, nun hafukha: not points
#: optional vowel points of Arabic and Hebrew (step 4), as code points
VOWEL_POINTS: frozenset[int] = frozenset(
    [*range(0x064B, 0x0653), *range(0x0656, 0x0660), 0x0670, *range(0x0610, 0x061B), *range(0x06D6, 0x06DD),
     *range(0x06DF, 0x06E5), 0x06E7, 0x06E8, *range(0x06EA, 0x06EE)]
    + [cp for cp in range(0x0591, 0x05C8) if cp not in _HEBREW_PUNCTUATION])
_VARIANT_TABLE = str.maketrans({**VARIANTS, **{chr(cp): "" for cp in VOWEL_POINTS}})
#: letters with no Unicode decomposition that accent folding still takes to their base letter
_NO_DECOMPOSITION = str.maketrans({"\u0131": "i", "\u0142": "l", "\u00f8": "o", "\u0111": "d", "\u0127": "h"})
_COMBINING_DOT_ABOVE = "\u0307"
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]")
_KANA = re.compile("[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f]")
#: canonical combining classes of marks that are spelling, not accents: kana voicing (8), viramas (9)
_KEPT_CLASSES = (8, 9)
#: Arabic madda and hamza above / below: not Diacritic to Unicode, but the marks people who type without them leave out
_ARABIC_HAMZA = (0x0653, 0x0654, 0x0655)


def normalize_text(text: str, *, fold_accents: bool = False) -> str:
    """``text`` as compared: NFKC, case-folded, one form per variant letter, without optional vowel points,
    Traditional Chinese as Simplified, and without accents when asked (the module docstring says why each is safe)."""
    out = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    out = simplified(out.replace("i" + _COMBINING_DOT_ABOVE, "i").translate(_VARIANT_TABLE))
    if fold_accents:
        out = _fold_accents(out)
    return out


def simplified(text: str) -> str:
    """``text`` with Traditional Chinese characters as Simplified (OpenCC t2s), unless it holds kana (Japanese)."""
    if _HAN.search(text) is None or _KANA.search(text) is not None:
        return text
    return _t2s().convert(text)


@cache
def _t2s() -> object:
    """OpenCC's Traditional-to-Simplified converter (its dictionaries are inside the wheel)."""
    try:
        import opencc
    except ImportError as e:  # a base dependency: only a broken install gets here
        raise RuntimeError("the opencc package is missing (a dependency of private-mteb): pip install opencc") from e
    return opencc.OpenCC("t2s")


@cache
def _accent_table() -> dict[int, None]:
    """Every nonspacing mark Unicode marks Diacritic, except the spelling ones (``_KEPT_CLASSES``), and the Arabic
    hamza marks -> removed."""
    import regex

    marks = regex.findall(r"[\p{Mn}&&\p{Diacritic}]", "".join(map(chr, range(0x300, 0x20000))), flags=regex.V1)
    table: dict[int, None] = {ord(m): None for m in marks if unicodedata.combining(m) not in _KEPT_CLASSES}
    return table | dict.fromkeys(_ARABIC_HAMZA)


def _fold_accents(text: str) -> str:
    """Diacritic marks dropped in every script (NFD, then recomposed with NFC)."""
    decomposed = unicodedata.normalize("NFD", text.translate(_NO_DECOMPOSITION))
    return unicodedata.normalize("NFC", decomposed.translate(_accent_table()))
