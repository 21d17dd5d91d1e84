"""A matplotlib figure -> an SVG string fit to paste into an HTML page: no namespace URLs, no metadata.

Why post-process: matplotlib's SVG carries an XML prolog, a DOCTYPE, RDF metadata and xmlns attributes,
all of them http(s) URLs. Inline SVG in HTML5 needs none of them, and a report that must make no network
request (and that tests assert has no http(s) reference) should not carry them. Ids get a per-figure
prefix so several figures in one page never share a clip path or marker id.
"""

from __future__ import annotations

import io
import re

from matplotlib import rc_context
from matplotlib.figure import Figure

from ..plot_text import LITERAL_TEXT

_ID = re.compile(r'\bid="([^"]+)"')


def figure_svg(fig: Figure, key: str) -> str:
    """Render `fig` as inline SVG; `key` makes ids unique and the output deterministic."""
    buf = io.StringIO()
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": key, **LITERAL_TEXT}):
        fig.savefig(buf, format="svg", bbox_inches="tight", pad_inches=0.08, metadata={"Date": None})
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    svg = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg)
    svg = svg.replace("xlink:href=", "href=")
    prefix = re.sub(r"[^A-Za-z0-9_-]", "-", key)
    for ident in set(_ID.findall(svg)):
        new = f"{prefix}-{ident}"
        svg = (svg.replace(f'id="{ident}"', f'id="{new}"').replace(f'"#{ident}"', f'"#{new}"')
               .replace(f"url(#{ident})", f"url(#{new})"))
    return svg.strip()


def new_figure(width: float, height: float) -> Figure:
    """A figure on the Agg canvas (no display, no pyplot state shared between reports)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig
