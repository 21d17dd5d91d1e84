"""Report -> one self-contained HTML file: inline CSS and SVG, no script, no external reference.

A Content-Security-Policy forbids every fetch, so even a future edit that slipped in an external URL
could not make the page phone home when someone opens the attachment.
"""

from __future__ import annotations

from html import escape

from .blocks import Figure, Paragraph, Report, Section, Table

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:"

CSS = """
:root { --fg:#1f2328; --muted:#59636e; --line:#d1d9e0; --bg:#ffffff; --soft:#f6f8fa; --mark:#fff8c5; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.5 -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif;
       color:var(--fg); background:var(--bg); }
header { padding:20px 32px 12px; border-bottom:1px solid var(--line); background:var(--soft); }
header h1 { margin:0 0 4px; font-size:22px; }
header p { margin:0; color:var(--muted); }
nav { padding:8px 32px; border-bottom:1px solid var(--line); font-size:13px; }
nav a { margin-right:14px; color:#0969da; text-decoration:none; }
main { max-width:1180px; padding:8px 32px 40px; }
section { margin-top:22px; }
h2 { font-size:18px; border-bottom:1px solid var(--line); padding-bottom:4px; }
h3 { font-size:15px; margin:18px 0 6px; }
p.verdict { font-size:15px; padding:8px 12px; background:var(--soft); border-left:4px solid #0969da; }
p.note { color:var(--muted); font-size:13px; }
table { border-collapse:collapse; margin:8px 0 14px; font-size:12.5px; font-variant-numeric:tabular-nums; }
th, td { border:1px solid var(--line); padding:4px 8px; text-align:left; vertical-align:top; }
th { background:var(--soft); }
tr:nth-child(even) td { background:#fbfcfd; }
tr.baseline td { background:var(--mark); font-weight:600; }
caption { caption-side:top; text-align:left; color:var(--muted); padding:2px 0; font-size:12px; }
figure { margin:10px 0 16px; }
figure svg { max-width:100%; height:auto; }
figcaption { color:var(--muted); font-size:12px; }
.table-wrap { overflow-x:auto; }
"""


def _table(t: Table) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in t.header)
    rows = []
    for i, row in enumerate(t.rows):
        cls = ' class="baseline"' if i in t.marked else ""
        # dir="auto": a cell of Arabic or Hebrew text (a question with --show-text) reads right to left
        rows.append(f"<tr{cls}>" + "".join(f"<td dir=\"auto\">{escape(c)}</td>" for c in row) + "</tr>")
    cap = f"<caption>{escape(t.caption)}</caption>" if t.caption else ""
    return f'<div class="table-wrap"><table>{cap}<thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'


def _block(b: object) -> str:
    if isinstance(b, Paragraph):
        return f'<p class="{escape(b.kind)}">{escape(b.text)}</p>'
    if isinstance(b, Table):
        return _table(b)
    if isinstance(b, Figure):
        return (f'<figure role="img" aria-label="{escape(b.alt or b.caption)}">{b.svg}'
                f"<figcaption>{escape(b.caption)}</figcaption></figure>")
    raise TypeError(f"unknown block {type(b).__name__}")


def _section(s: Section, level: int, number: str = "") -> str:
    title = f"{number} {s.title}".strip()
    inner = "".join(_block(b) for b in s.blocks)
    inner += "".join(_section(sub, level + 1) for sub in s.subsections)
    return f'<section id="{escape(s.key)}" data-section="{escape(s.key)}"><h{level}>{escape(title)}</h{level}>{inner}</section>'


def render_html(report: Report) -> str:
    """The whole page as one string."""
    nav = "".join(f'<a href="#{escape(s.key)}">{i}. {escape(s.title)}</a>' for i, s in enumerate(report.sections, 1))
    body = "".join(_section(s, 2, f"{i}.") for i, s in enumerate(report.sections, 1))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(report.title)}</title><style>{CSS}</style></head><body>"
            f"<header><h1>{escape(report.title)}</h1><p>{escape(report.subtitle)}</p></header>"
            f"<nav>{nav}</nav><main>{body}</main></body></html>\n")
