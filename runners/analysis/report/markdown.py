"""Report -> GitHub-flavoured Markdown for a pull-request comment: the same sentences and tables, no figures."""

from __future__ import annotations

from .blocks import Figure, Paragraph, Report, Section, Table


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _table(t: Table) -> list[str]:
    out = [f"*{_cell(t.caption)}*", ""] if t.caption else []
    out.append("| " + " | ".join(_cell(h) for h in t.header) + " |")
    out.append("|" + "|".join("---" for _ in t.header) + "|")
    for i, row in enumerate(t.rows):
        cells = [_cell(c) for c in row]
        if i in t.marked:
            cells = [f"**{c}**" if c else c for c in cells]
        out.append("| " + " | ".join(cells) + " |")
    return out + [""]


def _section(s: Section, level: int, number: str = "") -> list[str]:
    out = [f"{'#' * level} {number} {s.title}".replace("  ", " "), ""]
    for b in s.blocks:
        if isinstance(b, Paragraph):
            out += [f"**{b.text}**" if b.kind == "verdict" else f"_{b.text}_" if b.kind == "note" else b.text, ""]
        elif isinstance(b, Table):
            out += _table(b)
        elif isinstance(b, Figure):
            out += [f"_Figure (in the HTML report): {b.caption}_", ""]
    for sub in s.subsections:
        out += _section(sub, level + 1)
    return out


def render_markdown(report: Report) -> str:
    lines = [f"# {report.title}", "", f"_{report.subtitle}_", ""]
    for i, s in enumerate(report.sections, 1):
        lines += _section(s, 2, f"{i}.")
    return "\n".join(lines).rstrip() + "\n"
