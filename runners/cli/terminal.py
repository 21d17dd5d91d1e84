"""The one console writer of the command line: user text is printed as text, never as instructions.

Ids, paths, titles, snippets, tag values, model names and error messages come from files nobody on the
team controls. Printed through `SafeConsole` they reach the terminal literally:

* no emoji codes (`data/qrels/test.tsv:100:` stays `:100:`, not 💯) and no markup (`[bold]`, `[/]`):
  styling is only ever given as `rich.text.Text` styles or `style=`, never parsed from a string;
* control characters are shown, not obeyed: ESC, CR, BEL, the other C0 and C1 codes, DEL and the
  Unicode bidirectional overrides become visible escapes (`\\x1b`, `\\r`, `\\u202e`) via `visible()`,
  so a title cannot set the window title, clear the screen or write the clipboard (OSC 52);
  newline and tab are kept;
* not on a terminal (a pipe, a file, CI logs) lines are never wrapped: tables keep their rows on one line
  (`WIDE` columns) so `stats | grep` and log readers see whole rows.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Optional

from rich.console import Console, ConsoleDimensions, ConsoleOptions, RenderableType
from rich.cells import cell_len
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

#: the width assumed when the output is not a terminal: no wrapping in practice
WIDE = 10_000

#: C0 controls but newline and tab, DEL, C1 controls, bidi embeddings/overrides/isolates
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\r": "\\r", "\x1b": "\\x1b", "\x00": "\\x00"}


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    return _NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


def visible(text: str) -> str:
    """`text` with every control character a terminal would act on replaced by a visible escape.

    `"\\x1b]0;PWNED\\x07"` -> `"\\\\x1b]0;PWNED\\\\x07"`; newline and tab are kept. For display only
    (a backslash in the input is not doubled): files keep the original text."""
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text


class SafeConsole(Console):
    """A rich Console that treats every string as literal text (see the module docstring).

    `print("a:100: [b]x[/]")` prints exactly that. Strings and `Text` objects alike pass `visible()`:
    strings before layout (so tables stay aligned), everything again segment by segment before output."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.update(emoji=False, markup=False)
        kwargs.setdefault("highlight", False)
        super().__init__(**kwargs)

    @property
    def size(self) -> ConsoleDimensions:
        size = super().size
        if self._width is None and not self.is_terminal:
            return ConsoleDimensions(WIDE, size.height)
        return size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size

    def render_str(self, text: str, *, style: Any = "", justify: Any = None, overflow: Any = None,
                   emoji: Optional[bool] = None, markup: Optional[bool] = None, highlight: Optional[bool] = None,
                   highlighter: Any = None) -> Text:
        """Every string (printed, a table cell, a title) becomes plain Text: no emoji, no markup."""
        return super().render_str(visible(text), style=style, justify=justify, overflow=overflow, emoji=False,
                                  markup=False, highlight=highlight, highlighter=highlighter)

    def render(self, renderable: RenderableType, options: Optional[ConsoleOptions] = None) -> Iterable[Segment]:
        """The last line of defence: Text objects built from raw user text are escaped here too (a table
        cell measured before its escapes were added wraps instead of losing text)."""
        if isinstance(renderable, Text) and _UNSAFE.search(renderable.plain):
            renderable = _visible_text(renderable, self)
        elif isinstance(renderable, Table) and isinstance(renderable.title, str) and not self.is_terminal:
            # piped: a table is at least as wide as its title, so the title is not wrapped either
            renderable.min_width = max(renderable.min_width or 0, cell_len(visible(renderable.title)))
        for seg in super().render(renderable, options):
            if seg.control is None and _UNSAFE.search(seg.text):
                yield Segment(visible(seg.text), seg.style)
            else:
                yield seg


def _visible_text(text: Text, console: Console) -> Text:
    """A copy of `text` with `visible()` applied, styles and layout settings kept."""
    out = Text(justify=text.justify, overflow=text.overflow, no_wrap=text.no_wrap, end=text.end,
               tab_size=text.tab_size)
    for seg in text.render(console, end=""):
        out.append(visible(seg.text), seg.style)
    return out


def styled(*parts: str | tuple[str, str]) -> Text:
    """`Text.assemble` whose plain parts are user text shown literally: `styled(("error:", "bold red"), " ", msg)`."""
    return Text.assemble(*[(visible(p), "") if isinstance(p, str) else (visible(p[0]), p[1]) for p in parts])
