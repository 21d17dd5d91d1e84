"""The corpus row reader that the in-memory (``tables.load_corpus``) and the disk-store (``stored_corpus``) paths
share, so both check every document row identically."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ._io import Table, as_str


def corpus_rows(t: Table, doc_id: str, title: str, text: str) -> Iterator[tuple[int, Any, str, str]]:
    """(loc, raw id, title, text) of every corpus row, streamed, with the field checks every path shares.

    Title is optional, and text may be missing when a title is there: BEIR corpora hold title-only documents
    and mteb embeds them (title + text); a JSONL corpus where *no* row has the text field is a column-mapping
    mistake, not a corpus of titles (reported at the first row, as soon as a first row lacks the field).
    """
    t.require_columns([doc_id, text])
    text_seen = t.columns is not None
    first: tuple[int, dict[str, Any]] | None = None
    for loc, row in t.rows:
        first = first or (loc, row)
        if text in row:
            text_seen = True
        elif not text_seen:
            if not t.has_column(text):  # one more pass over the file, only when the first rows lack it
                t.get(*first, text)  # raises: missing field, naming the fields found
            text_seen = True
        did = t.get(loc, row, doc_id)
        title_s = as_str(t, loc, row.get(title), "document", did, title)
        if text not in row and not title_s.strip():
            t.get(loc, row, text)  # raises: no text and no title
        yield loc, did, title_s, as_str(t, loc, row.get(text), "document", did, text)
