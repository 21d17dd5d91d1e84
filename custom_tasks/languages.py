"""Language codes of a task: mteb's own tables, read without `import mteb`, and the nearest valid code for a typo.

mteb's BM25 takes its stemmer and stop words from the task's ``eval_langs`` (``languages:`` of the task YAML), so
a code it does not know silently means "no stemming", and a task with several languages falls back to English.
Every entry must therefore be an ISO 639-3 language + ISO 15924 script code that mteb accepts (``ron-Latn``);
anything else (``ro``, ``Romanian``, ``ro-RO``, ``rum``) is refused with the nearest valid code.

The tables are the JSON files shipped in ``mteb/languages/`` (the ones ``mteb.languages.check_language_code`` and
``language_label`` read), found with ``importlib.util.find_spec`` so that reading a task YAML stays free of mteb's
import cost (tests/test_startup_imports.py). tests/test_languages.py checks the answers against mteb itself.
"""

from __future__ import annotations

import ast
import difflib
import importlib.util
import json
import re
from functools import cache
from pathlib import Path

#: ISO 639-2/B (bibliographic) codes that differ from ISO 639-3 (ISO 639-2 lists exactly these 20)
_ISO639_2B = {"alb": "sqi", "arm": "hye", "baq": "eus", "bur": "mya", "chi": "zho", "cze": "ces", "dut": "nld",
              "fre": "fra", "geo": "kat", "ger": "deu", "gre": "ell", "ice": "isl", "mac": "mkd", "mao": "mri",
              "may": "msa", "per": "fas", "rum": "ron", "slo": "slk", "tib": "bod", "wel": "cym"}


#: short script names for the ones whose ISO name reads awkwardly in parentheses (as mteb's language_label)
_SCRIPT_ALIASES = {"Hans": "Simplified", "Hant": "Traditional", "Jpan": "Japanese", "Kore": "Korean"}


@cache
def _mteb_languages_dir() -> Path:
    spec = importlib.util.find_spec("mteb")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("mteb is not installed: language codes cannot be checked")
    return Path(next(iter(spec.submodule_search_locations))) / "languages"


@cache
def _table(name: str) -> dict[str, str]:
    with open(_mteb_languages_dir() / name, encoding="utf-8") as f:
        return json.load(f)


def iso_to_language() -> dict[str, str]:
    """ISO 639-3 code -> English name (mteb.languages.ISO_TO_LANGUAGE)."""
    return _table("iso_639_3_to_language.json")


def iso_to_script() -> dict[str, str]:
    """ISO 15924 code -> script name (mteb.languages.ISO_TO_SCRIPT)."""
    return _table("iso_15924_to_script.json")


def default_scripts() -> dict[str, str]:
    """ISO 639-3 code -> the script mteb's own tasks write it in (``ron`` -> ``Latn``)."""
    return _table("iso_639_3_to_default_script.json")


def iso1_to_iso3() -> dict[str, str]:
    """ISO 639-1 code -> ISO 639-3 code (``ro`` -> ``ron``)."""
    return _table("iso_639_1_to_3.json")


@cache
def programming_languages() -> frozenset[str]:
    """mteb.languages.PROGRAMMING_LANGS (``python-Code`` is valid), read from its source without importing it."""
    tree = ast.parse((_mteb_languages_dir() / "programming_languages.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "PROGRAMMING_LANGS" for t in targets) and node.value:
                return frozenset(ast.literal_eval(node.value))
    return frozenset()


def is_valid(code: str) -> bool:
    """``xxx-Xxxx`` with an ISO 639-3 language and an ISO 15924 script mteb knows (or ``<language>-Code``)."""
    if not isinstance(code, str) or code.count("-") != 1:
        return False
    lang, script = code.split("-")
    if script == "Code":
        return lang in programming_languages()
    return lang in iso_to_language() and script in iso_to_script()


def language_name(code: str) -> str:
    """``ron-Latn`` -> ``Romanian`` (mteb's ``language_label`` without the import): the name people read."""
    lang, _, script = code.partition("-")
    name = re.sub(r"\s*\(.*\)$", "", iso_to_language().get(lang, code))
    if script and default_scripts().get(lang, script) != script:
        return f"{name} ({_SCRIPT_ALIASES.get(script) or iso_to_script().get(script, script)})"
    return name


def with_script(iso3: str, script: str | None = None) -> str:
    """``ron`` -> ``ron-Latn``: the given script when mteb knows it, else the one mteb's tasks use, else Latn."""
    if script and script in iso_to_script():
        return f"{iso3}-{script}"
    return f"{iso3}-{default_scripts().get(iso3, 'Latn')}"


@cache
def _names() -> dict[str, str]:
    """lower-case English name (and the name without its parenthesis) -> ISO 639-3; languages mteb's tasks use
    win over the other codes of the same name."""
    out: dict[str, str] = {}
    used = default_scripts()
    for iso3, name in sorted(iso_to_language().items(), key=lambda kv: kv[0] not in used):
        for key in (name.lower(), re.sub(r"\s*\(.*\)$", "", name).lower()):
            out.setdefault(key, iso3)
    return out


def _iso3_of(word: str) -> str | None:
    """The ISO 639-3 code a language part stands for: 639-3, 639-1, 639-2/B, or an English name."""
    low = word.strip().lower()
    if low in iso_to_language():
        return low
    if low in iso1_to_iso3():
        return iso1_to_iso3()[low]
    if low in _ISO639_2B:
        return _ISO639_2B[low]
    names = _names()
    if low in names:
        return names[low]
    words = [n for n in names if re.search(rf"\b{re.escape(low)}\b", n) and names[n] in default_scripts()]
    return names[min(words, key=len)] if len(low) > 3 and words else None


def suggest(code: str) -> str | None:
    """The valid code nearest to ``code`` (``ro`` / ``Romanian`` / ``ro-RO`` / ``rum`` / ``RON-latn`` -> ``ron-Latn``),
    None when nothing is close."""
    text = str(code).strip()
    parts = [p for p in re.split(r"[-_\s]+", text) if p]
    if not parts:
        return None
    scripts = [p.title() for p in parts[1:] if len(p) == 4 and p.title() in iso_to_script()]
    iso3 = _iso3_of(parts[0]) or _iso3_of(text)
    if iso3 == "zho" and not scripts and any(p.upper() in {"TW", "HK", "MO"} for p in parts[1:]):
        scripts = ["Hant"]  # Chinese as written in Taiwan, Hong Kong and Macau
    if iso3:
        return with_script(iso3, scripts[0] if scripts else None)
    valid = [with_script(i) for i in default_scripts()]
    near = difflib.get_close_matches(text, valid, n=1, cutoff=0.75)
    if near:
        return near[0]
    name = difflib.get_close_matches(text.lower(), list(_names()), n=1, cutoff=0.8)
    return with_script(_names()[name[0]]) if name else None


def problem(code: object) -> str | None:
    """What is wrong with one ``languages:`` entry (None when it is valid), with the nearest valid code."""
    if not isinstance(code, str):
        return f"`{code}` is not a language code (write e.g. ron-Latn)"
    if is_valid(code):
        return None
    near = suggest(code)
    if near:
        return f"`{code}`: did you mean `{near}`?"
    return f"`{code}` is not an ISO 639-3 language + script code such as ron-Latn or eng-Latn"


def check_languages(codes: list[str]) -> list[str]:
    """The ``languages:`` list if every entry is valid; ValueError with one line saying each problem otherwise."""
    if not codes:
        raise ValueError("languages is empty: list the language(s) of the texts, e.g. [ron-Latn]")
    found = [p for p in (problem(c) for c in codes) if p]
    if found:
        raise ValueError("languages: " + "; ".join(found) + " (ISO 639-3 language + ISO 15924 script, as mteb names "
                         "them: BM25 takes its stemmer and stop words from it)")
    twice = sorted({c for c in codes if codes.count(c) > 1})
    if twice:
        raise ValueError(f"languages lists {', '.join(twice)} twice")
    return codes
