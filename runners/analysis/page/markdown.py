"""Report -> GitHub-flavoured Markdown for a pull-request comment: the same sentences and tables, no figures.

Every string of the report is plain text (blocks.py), and much of it comes from files nobody on the team
controls (labels, tag values, model and task names). `md_text` (../markdown_text.py) makes any string literal
Markdown: HTML
special characters are encoded (no raw HTML element, no remote image), Markdown punctuation is
backslash-escaped (no link, image, emphasis, code span, table cell break or `$` math), line breaks are
folded, and a paragraph cannot open a list, quote, heading or rule. Only the renderer adds markup: the
headings, bold verdicts and baseline rows, italic notes and captions, the table grid.
"""

from __future__ import annotations

from ..markdown_text import md_text
from .blocks import Figure, Paragraph, Report, Section, Table


def _heading(text: str) -> str:
    return md_text(text).replace("#", "\\#")  # a trailing `#` would close the heading


def _table(t: Table) -> list[str]:
    out = [f"*{md_text(t.caption)}*", ""] if t.caption else []
    out.append("| " + " | ".join(md_text(h) for h in t.header) + " |")
    out.append("|" + "|".join("---" for _ in t.header) + "|")
    for i, row in enumerate(t.rows):
        cells = [md_text(c) for c in row]
        if i in t.marked:
            cells = [f"**{c}**" if c else c for c in cells]
        out.append("| " + " | ".join(cells) + " |")
    return out + [""]


def _paragraph(b: Paragraph) -> str:
    text = md_text(b.text, block_start=b.kind == "text")
    return f"**{text}**" if b.kind == "verdict" else f"_{text}_" if b.kind == "note" else text


def _section(s: Section, level: int, number: str = "") -> list[str]:
    out = [f"{'#' * level} {number} {_heading(s.title)}".replace("  ", " "), ""]
    for b in s.blocks:
        if isinstance(b, Paragraph):
            out += [_paragraph(b), ""]
        elif isinstance(b, Table):
            out += _table(b)
        elif isinstance(b, Figure):
            out += [f"_Figure (in the HTML report): {md_text(b.caption)}_", ""]
    for sub in s.subsections:
        out += _section(sub, level + 1)
    return out


def render_markdown(report: Report) -> str:
    lines = [f"# {_heading(report.title)}", "", f"_{md_text(report.subtitle)}_", ""]
    for i, s in enumerate(report.sections, 1):
        lines += _section(s, 2, f"{i}.")
    return "\n".join(lines).rstrip() + "\n"
