"""The corpus row reader that the in-memory (``tables.load_corpus``) and the disk-store (``stored_corpus``) paths
share, so both check every document row identically."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..errors import CollectionError
from ._io import Table, as_str


def corpus_rows(t: Table, doc_id: str, title: str, text: str) -> Iterator[tuple[int, Any, str, str]]:
    """(loc, raw id, title, text) of every corpus row, streamed, with the field checks every path shares.

    Title is optional, and text may be missing: BEIR corpora hold title-only documents and mteb embeds them
    (title + text); a row whose text is empty and has no title is an empty document (a warning, see validate),
    one without the text field at all and no title is malformed (an error). A JSONL corpus where
    *no* row has the text field is a column-mapping mistake, not a corpus of titles (reported at the first
    row, as soon as a first row lacks the field).
    """
    t.require_columns([doc_id, text])
    text_seen = t.columns is not None
    first: tuple[int, dict[str, Any]] | None = None
    for loc, row in t.rows:
        t.mapping_check(loc, row, [doc_id], first is None)
        first = first or (loc, row)
        if text in row:
            text_seen = True
        elif not text_seen:
            if not t.has_column(text):  # one more pass over the file, only when the first rows lack it
                t.get(*first, text)  # raises (a mapping error, never per row): missing field, naming those found
            text_seen = True
        try:  # with a problem log: this row's problem is recorded, the row skipped (t.record)
            did = t.get(loc, row, doc_id)
            title_s = as_str(t, loc, row.get(title), "document", did, title)
            if text not in row and not title_s.strip():
                t.get(loc, row, text)  # raises: a row without the text field and no title is malformed
            item = (loc, did, title_s, as_str(t, loc, row.get(text), "document", did, text))
        except CollectionError as e:
            t.record(e)
            continue
        yield item
