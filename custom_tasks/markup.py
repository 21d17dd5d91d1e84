"""Markup removed where it is markup, and only there (issue 36).

Exports mix plain text and HTML/XML: "<p>Aspirin <i>reduces</i> fever</p>" must compare equal to "Aspirin reduces
fever", but "queue depth is < 500 items and clears at > 200 items" holds no tag at all. A pattern such as
``<[^>]{0,200}>`` takes everything between a "<" and the next ">" for a tag and drops the words between them: two
different documents then hash alike and a question copied from that stretch is not seen as copied.

So the text is tokenised by the standard library's HTML parser (``html.parser``, the HTML5 tokenisation rules: a
"<" followed by a space or a digit is text, never a tag), and a token the parser reads as a tag is dropped only when
it is one in this text:

* an HTML element (``HTML_ELEMENTS``: what a browser would render as markup, not as text),
* or an XML-style tag: one with a closing ``</name>`` somewhere in the same text, written self-closing
  (``<name/>``), or with a quoted attribute value (``<sec id="s1">``),
* and always comments, ``<!DOCTYPE ...>``, ``<?xml ...?>`` and CDATA markers.

Anything else stays text, word for word ("if i<n and n>0" keeps its words). Character references (``&amp;``,
``&#233;``) become the characters a reader sees. Inline elements (``<b>``, ``<sub>``, JATS ``<italic>``) join what
they surround ("H<sub>2</sub>O" -> "H2O"); other tags separate words, as they do on a rendered page.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

#: HTML element names (WHATWG HTML living standard, plus the obsolete ones exports still carry)
HTML_ELEMENTS = frozenset("""
a abbr acronym address area article aside audio b base basefont bdi bdo big blink blockquote body br button canvas
caption center cite code col colgroup data datalist dd del details dfn dialog dir div dl dt em embed fieldset
figcaption figure font footer form frame frameset h1 h2 h3 h4 h5 h6 head header hgroup hr html i iframe img input ins
kbd label legend li link main map mark marquee math menu meta meter nav nobr noframes noscript object ol optgroup
option output p param picture pre progress q rp rt ruby s samp script search section select slot small source span
strike strong style sub summary sup svg table tbody td template textarea tfoot th thead time title tr track tt u ul
var video wbr
""".split())

#: elements a rendered page shows inline: they join the text around them instead of separating words
INLINE = frozenset("""
a abbr acronym b bdi bdo big cite code data dfn em font i ins del kbd mark nobr q s samp small span strike strong
sub sup time tt u var wbr italic bold sc underline monospace
""".split())


#: an attribute with a quoted value: name="..." or name='...'
_QUOTED_VALUE = re.compile(r"""[\w:.-]\s*=\s*["']""")


class _Tokens(HTMLParser):
    """Every token of one text, in order: ("text", s), ("tag", name, raw, quoted) or ("markup",)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tokens: list[tuple] = []
        self.closed: set[str] = set()

    def handle_data(self, data: str) -> None:
        self.tokens.append(("text", data))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        raw = self.get_starttag_text() or f"<{tag}>"
        self.tokens.append(("tag", tag, raw, bool(_QUOTED_VALUE.search(raw))))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tokens.append(("tag", tag, self.get_starttag_text() or f"<{tag}/>", True))

    def handle_endtag(self, tag: str) -> None:
        self.closed.add(tag)
        self.tokens.append(("tag", tag, f"</{tag}>", False))

    def handle_comment(self, data: str) -> None:
        self.tokens.append(("markup",))

    def handle_decl(self, decl: str) -> None:
        self.tokens.append(("markup",))

    def handle_pi(self, data: str) -> None:
        self.tokens.append(("markup",))

    def unknown_decl(self, data: str) -> None:
        self.tokens.append(("markup",))


def strip_markup(text: str) -> str:
    """``text`` as a reader of the rendered page sees it: tags that are tags removed, entities decoded, every
    other character kept (see the module docstring for what counts as a tag)."""
    if "<" not in text:
        return html.unescape(text) if "&" in text else text
    parser = _Tokens()
    parser.feed(text)
    parser.close()
    out: list[str] = []
    for token in parser.tokens:
        if token[0] == "text":
            out.append(token[1])
        elif token[0] == "markup":
            out.append(" ")
        else:
            _, name, raw, quoted = token
            if name in HTML_ELEMENTS or name in parser.closed or quoted:
                out.append("" if name in INLINE else " ")
            else:
                out.append(html.unescape(raw))
    return "".join(out)
