"""Number formatting shared by every section, so the HTML and Markdown twins read the same."""

from __future__ import annotations

import math
from typing import Any

from ...statistics.intervals import format_diff, format_number, format_p, format_score


def missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def num(v: Any, digits: int = 4) -> str:
    """A score as `run` and `stats` print it (stats.format_score) at the default 4 digits."""
    if missing(v):
        return "—"
    return format_score(v) if digits == 4 else format_number(v, digits)


def ci(mean: float, lo: float, hi: float, digits: int = 4) -> str:
    return f"{num(mean, digits)} [{num(lo, digits)}, {num(hi, digits)}]"


def signed_ci(diff: float, lo: float, hi: float, digits: int = 3) -> str:
    return format_diff(diff, lo, hi, digits)


def p_value(p: Any) -> str:
    """The p-value as every command prints it (stats.format_p: one format for stats, check and the report)."""
    return format_p(None if missing(p) else float(p))


def sentence(text: str) -> str:
    """Capitalise the first letter and end with a full stop (stats returns lower-case clauses)."""
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."
