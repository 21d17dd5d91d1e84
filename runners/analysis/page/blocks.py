"""What a report is made of: sections holding paragraphs, tables and figures.

The HTML and the Markdown renderers walk the same blocks, so the two files can never disagree
about a number; only figures are HTML-only (the Markdown twin is meant for a PR comment).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union


@dataclass
class Paragraph:
    """Plain text (escaped when rendered); `kind` styles it: "text", "note", "verdict"."""

    text: str
    kind: str = "text"


@dataclass
class Table:
    """A header and rows of already formatted cells; `marked` rows are highlighted (the baseline)."""

    header: list[str]
    rows: list[list[str]]
    caption: str = ""
    marked: set[int] = field(default_factory=set)


@dataclass
class Figure:
    """An inline SVG (no external reference) with a caption; `alt` describes it for screen readers."""

    svg: str
    caption: str
    alt: str = ""


Block = Union[Paragraph, Table, Figure]


@dataclass
class Section:
    """One numbered part of the report; `key` is its stable HTML id (tests and links use it)."""

    key: str
    title: str
    blocks: list[Block] = field(default_factory=list)
    subsections: list[Section] = field(default_factory=list)


@dataclass
class Report:
    """The whole document, renderer-agnostic."""

    title: str
    subtitle: str
    sections: list[Section]
