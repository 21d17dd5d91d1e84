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


def control_char(value: str) -> str | None:
    """The first control character of ``value`` (Unicode categories Cc and Cf), shown escaped; None if none."""
    for ch in value:
        if unicodedata.category(ch) in ("Cc", "Cf"):
            return ascii(ch)[1:-1]
    return None


def name_problem(value: str, slashes: bool = False) -> str | None:
    """Why ``value`` cannot be one file or folder name (None when it can).

    ``slashes=True`` for model names, whose '/' become '__' (org/name -> org__name).
    """
    if not value.strip():
        return "it is empty"
    bad = control_char(value)
    if bad:
        return f"it contains the control character {bad}"
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
        raise ValueError(f"{what} {ascii(value)[:60]} contains the control character {bad}")
    return value
