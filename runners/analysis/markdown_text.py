"""User text as literal Markdown: for report.md and every `--format markdown` a person pastes into a pull request.

HTML special characters are encoded (no raw HTML element, no remote image), Markdown punctuation is
backslash-escaped (no link, image, emphasis, code span, table cell break or `$` math), line breaks are
folded, and with `block_start` the text cannot open a list, quote, heading or rule.
"""

from __future__ import annotations

import re

_HTML = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
_INLINE = re.compile(r"([\\`*_\[\]|~$])")
_BLOCK_START = re.compile(r"^([-+=#]|\d+(?=[.)]))")


def md_text(text: str, block_start: bool = False) -> str:
    """`text` as literal Markdown inline content; `block_start`: it begins a paragraph (see the docstring)."""
    text = " ".join(str(text).splitlines()).translate(_HTML)
    text = _INLINE.sub(r"\\\1", text)
    if block_start:
        text = text.lstrip()
        m = _BLOCK_START.match(text)
        if m:
            text = (m.group() + "\\" + text[m.end():]) if m.group()[0].isdigit() else "\\" + text
    return text
