"""custom_tasks/normalize.py: one normaliser that knows the writing system (issue 35)."""

from __future__ import annotations

import unicodedata

import pytest

from custom_tasks.letter_forms import FAMILIES, KEPT
from custom_tasks.normalize import normalize_text

CEDILLA = "Şcoala de fetiţe îşi ţine porţile deschise"  # what a pre-2007 keyboard types
COMMA = "Școala de fetițe își ține porțile deschise"  # the standard's comma below


def test_romanian_cedilla_and_comma_below_are_one_text() -> None:
    assert CEDILLA != COMMA
    assert normalize_text(CEDILLA) == normalize_text(COMMA) == "școala de fetițe își ține porțile deschise"
    # upper case of both forms, and decomposed input (s + combining cedilla / comma below)
    assert normalize_text("ŞŢ") == normalize_text("ȘȚ") == normalize_text("s\u0327t\u0327") == \
        normalize_text("S\u0326T\u0326") == "șț"


def test_snowball_romanian_agrees_on_the_form_kept() -> None:
    """The form kept (comma below) is the one PyStemmer's Romanian stemmer outputs for either input."""
    Stemmer = pytest.importorskip("Stemmer")
    stem = Stemmer.Stemmer("romanian").stemWord
    assert stem("fetiţele") == stem("fetițele") == stem(normalize_text("fetiţele"))
    assert "ț" in stem("fetiţele")


def test_nfkc_and_case_folding() -> None:
    assert normalize_text("ﬁle ＡＢＣ Straße ΣΊΣΥΦΟΣ") == "file abc strasse σίσυφοσ"
    assert normalize_text("e\u0301") == normalize_text("\u00e9")


def test_turkish_dotted_capital_i_loses_the_stray_dot_but_dotless_i_stays() -> None:
    assert "İstanbul".casefold() != "istanbul"  # Unicode's folding leaves i + U+0307
    assert normalize_text("İSTANBUL") == normalize_text("istanbul") == "istanbul"
    assert normalize_text("sık") != normalize_text("sik")  # two Turkish words: kept apart by default
    assert normalize_text("sık", fold_accents=True) == normalize_text("sik", fold_accents=True)
    assert normalize_text("ş") == normalize_text("ș")  # Turkish ş: only re-encoded, same on both sides


def test_arabic_persian_letters_apostrophes_and_soft_hyphen() -> None:
    assert normalize_text("كتابي") == normalize_text("کتابی")
    assert normalize_text("كتـــاب") == normalize_text("كتاب")
    assert normalize_text("пам\u02bcять") == normalize_text("пам'ять") == normalize_text("пам\u2019ять")
    assert normalize_text("infor\u00admation") == "information"


def test_accent_folding_is_optional() -> None:
    assert normalize_text("Fată Ștefan Ωραία ёлка łódź") == "fată ștefan ωραία ёлка łódź"
    assert normalize_text("Fată Ștefan Ωραία ёлка łódź", fold_accents=True) == "fata stefan ωραια елка lodz"


def test_accent_folding_drops_diacritics_in_every_script_but_keeps_spelling_marks() -> None:
    """Unicode's Diacritic marks go in every script (nukta, hamza, Thai tone marks); vowel signs, viramas and the
    kana voicing marks are spelling and stay."""
    assert normalize_text("ज़रूर", fold_accents=True) == "जरूर"  # nukta: "z" typed as "j"
    assert normalize_text("ज़रूर") == "ज़रूर"
    assert normalize_text("أحمد إلى آخر مسؤول", fold_accents=True) == "احمد الى اخر مسوول"
    assert normalize_text("ไม่", fold_accents=True) == "ไม"  # mai ek, a tone mark
    for text in ("हिन्दी", "ภาษาไทย", "がくせい", "ガッコウ"):  # vowel signs, virama, dakuten: letters, not accents
        assert normalize_text(text, fold_accents=True) == unicodedata.normalize("NFKC", text)


def test_arabic_tashkeel_and_hebrew_points_are_dropped_always() -> None:
    """Vowel points are optional in both scripts: a vowelled copy is the same text (without fold_accents)."""
    assert normalize_text("كَتَبَ الوَلَدُ الدَّرْسَ") == normalize_text("كتب الولد الدرس")
    assert normalize_text("مُحَمَّدٌ") == normalize_text("محمد")
    assert normalize_text("هٰذا") == normalize_text("هذا")  # superscript alef
    assert normalize_text("شָׁלוֹם עוֹלָם"[1:]) == normalize_text("לום עולם")
    assert normalize_text("אֶת־הַבַּיִת") == "את־הבית"  # the maqaf (punctuation) stays
    assert normalize_text("أ") == "أ"  # hamza is part of the letter, kept unless accents are folded


def test_traditional_chinese_is_compared_as_simplified_but_japanese_is_not() -> None:
    assert normalize_text("臺灣的電腦軟體與漢字") == normalize_text("台湾的电脑软体与汉字") == "台湾的电脑软体与汉字"
    assert normalize_text("汉字简体") == "汉字简体"  # Simplified text is left as it is
    assert normalize_text("機械の学習") == "機械の学習"  # kana: Japanese, whose 機 is not Traditional for 机


def test_idempotent() -> None:
    for text in (CEDILLA, COMMA, "İSTANBUL ﬁ Straße", "كتـاب", "Ωραία"):
        for fold in (False, True):
            once = normalize_text(text, fold_accents=fold)
            assert normalize_text(once, fold_accents=fold) == once


def test_every_form_validate_tells_apart_is_one_form_to_the_normaliser() -> None:
    """letter_forms.FAMILIES (validate's mixed_letter_forms) and normalize_text agree: letter_forms.KEPT is kept."""
    for family, forms in FAMILIES.items():
        kept = forms[KEPT[family]]
        for other in (chars for form, chars in forms.items() if form != KEPT[family]):
            assert other != kept and normalize_text(other) == normalize_text(kept) == kept.casefold()
