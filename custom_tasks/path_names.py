"""Names from configs that become file or folder names: what makes one unsafe.

A model name becomes one folder (``org/name`` -> ``org__name``, as mteb names it), a revision, a task
name and a split name each one more; results, per-query files, rankings, embedding shards, locks and
growth curves are all written below them. A value that is ``..``, holds a path separator (an absolute
``/srv/x`` or ``../../x``), a NUL or another control character, or is longer than a file name may be,
would write outside ``results_dir`` / ``cache_dir`` or fail half-way through a run: such values are
refused when the config is read (one line naming the file and line), and the functions that build
paths refuse them again (runners/results/store.py), so code-built configs cannot slip past.
"""

from __future__ import annotations

import unicodedata

#: file names may be 255 bytes; suffixes (".json", ".lock", temp names) need the rest
MAX_NAME_BYTES = 200


def char_name(ch: str) -> str:
    """``U+200B ZERO WIDTH SPACE``: a character by its code point and Unicode name (C0/C1 controls have
    no name in the Unicode database: their code point alone)."""
    name = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X} {name}" if name else f"U+{ord(ch):04X}"


def describe_char(ch: str) -> str:
    """What an unsafe character is, in words a user can search for.

    Format characters (Cf: zero-width space, joiners, bidi marks, soft hyphen) are invisible, not control
    codes a terminal acts on, so they are named as such, with their Unicode name; control codes (Cc) are
    shown escaped (``\\x1b``), as a terminal-safe echo of what is in the file."""
    if unicodedata.category(ch) == "Cf":
        return f"the invisible format character {char_name(ch)}"
    return f"the control character {ascii(ch)[1:-1]}"


def control_char(value: str) -> str | None:
    """The first control (Cc) or invisible format (Cf) character of ``value``, described by ``describe_char``;
    None if none."""
    for ch in value:
        if unicodedata.category(ch) in ("Cc", "Cf"):
            return describe_char(ch)
    return None


def name_problem(value: str, slashes: bool = False) -> str | None:
    """Why ``value`` cannot be one file or folder name (None when it can).

    ``slashes=True`` for model names, whose '/' become '__' (org/name -> org__name).
    """
    if not value.strip():
        return "it is empty"
    bad = control_char(value)
    if bad:
        return f"it contains {bad}"
    if "\\" in value:
        return "it contains '\\'"
    if "/" in value and not slashes:
        return "it contains '/' (it names one folder)"
    if value.strip() in (".", ".."):
        return f"'{value.strip()}' names a parent or current folder"
    size = len(value.encode("utf-8"))
    if size > MAX_NAME_BYTES:
        return f"it is {size} bytes long (at most {MAX_NAME_BYTES})"
    return None


def check_name(value: str, what: str, slashes: bool = False) -> str:
    """``value`` unchanged when it can name a folder, else ValueError (pydantic reports it with its key)."""
    problem = name_problem(value, slashes)
    if problem:
        shown = value if len(value) <= 60 else value[:57] + "..."
        raise ValueError(f"{what} {ascii(shown) if control_char(shown) else repr(shown)} cannot name a "
                         f"folder: {problem}; use letters, digits, '.', '_' and '-'")
    return value


def check_display(value: str, what: str) -> str:
    """Labels and public names are shown, never used as paths: only control characters are refused."""
    bad = control_char(value)
    if bad:
        raise ValueError(f"{what} {ascii(value)[:60]} contains {bad}")
    return value
