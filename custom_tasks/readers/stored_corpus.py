"""A large corpus validated straight into a ``CorpusStore`` (streaming), or the cached store reused.

Same checks and the same one-line errors as ``CollectionBuilder.add_doc`` (shared code in ``validate``), but
no per-document Python object survives a row: duplicate ids are found from sorted 64-bit hashes on disk
(confirmed on the real ids), duplicate texts likewise, and the per-document warnings are computed while
streaming and kept in the store's ``meta.json``, so a later run neither rereads the file nor rescans the corpus.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa

from ..collection import CollectionWarning
from ..corpus_store import FORMAT_VERSION, CorpusStore, cache_root
from ..corpus_store_writer import InvalidText, StoreWriter
from ..errors import CollectionError
from ..letter_forms import FormCounts
from ..validate import (EMPTY_KEY, KEPT_PER_KIND, LONG_DOC_TOKENS, CollectionBuilder, check_doc_text, checked_id,
                        doc_key_and_tokens, duplicate_doc_warning, empty_doc_warning, long_doc_warning, more_warnings,
                        place, title_only_warning, warning_lines)
from ._io import Table, count_rows_upper_bound, display_path
from .corpus_rows import corpus_rows


def store_folder(t: Table, columns: tuple[str, str, str]) -> Path:
    """Cache folder of this file + column mapping: ``<stem>-<path key>-<state key>``.

    The state key (size, mtime, columns, encoding, format version) changes when the file does; folders of
    the same path with another state are outdated and removed once a new one is committed (``_prune``).
    """
    st = t.path.stat()
    path_key = hashlib.sha256(str(t.path.resolve()).encode()).hexdigest()[:10]
    state = json.dumps([st.st_size, st.st_mtime_ns, t.kind, t.encoding, *columns, FORMAT_VERSION])
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in t.path.stem)[:40]
    return cache_root() / f"{safe}-{path_key}-{hashlib.sha256(state.encode()).hexdigest()[:12]}"


def _prune(folder: Path) -> None:
    """Remove committed stores of the same source file in an older state (never temporary folders)."""
    prefix = folder.name.rsplit("-", 1)[0] + "-"
    for old in folder.parent.glob(prefix + "*"):
        if old != folder and old.is_dir() and "." not in old.name[len(prefix):]:
            shutil.rmtree(old, ignore_errors=True)


def load_corpus_stored(b: CollectionBuilder, t: Table, doc_id: str, title: str, text: str) -> None:
    """Validate ``t`` into its store (or reuse a complete one) and hand it to the builder."""
    folder = store_folder(t, (doc_id, title, text))
    store = CorpusStore.open_valid(folder)
    if store is None:
        try:
            store = _build(t, folder, doc_id, title, text)
            _prune(folder)
        except OSError as e:
            raise CollectionError(display_path(folder), f"cannot write the corpus cache ({e.strerror or e}): "
                                  f"set PRIVATE_MTEB_CORPUS_CACHE to a writable folder with free space") from None
    b.use_stored_corpus(store, *_meta_warnings(t, store.meta))
    b.letter_forms.load("documents", store.meta.get("letter_forms"), lambda loc: place(t, loc))


def _meta_warnings(t: Table, meta: dict[str, Any]) -> tuple[list[CollectionWarning], list[CollectionWarning]]:
    """(title-only and empty, per-document) warnings of a store's meta, as ``use_stored_corpus`` takes them."""
    warnings: list[CollectionWarning] = [title_only_warning(t, loc, did) for loc, did in meta["title_only"]]
    warnings += [empty_doc_warning(t, loc, did) for loc, did in meta.get("empty", [])]
    if meta.get("empty_more"):
        warnings.append(more_warnings("empty_document", meta["empty_more"]))
    if meta.get("title_only_more"):
        warnings.append(more_warnings("title_only_document", meta["title_only_more"]))
    doc_warnings = [_doc_warning(t, w) for w in meta["doc_warnings"]]
    doc_warnings += [more_warnings(kind, n) for kind, n in meta.get("doc_warnings_more", {}).items() if n]
    return warnings, doc_warnings


def _doc_warning(t: Table, entry: list[Any]) -> CollectionWarning:
    """A stored duplicate/long entry as its warning; its last field, when there, is the row's line (``at``)."""
    if entry[0] == "dup":
        return duplicate_doc_warning(entry[1], entry[2], entry[3], place(t, entry[4]) if len(entry) > 4 else "")
    return long_doc_warning(entry[1], entry[2], place(t, entry[3]) if len(entry) > 3 else "")


def _build(t: Table, folder: Path, doc_id: str, title: str, text: str) -> CorpusStore:
    writer = StoreWriter(folder, count_rows_upper_bound(t.path))
    committed = False
    try:
        forms = FormCounts()
        title_only, empty, long_docs = _stream(t, writer, doc_id, title, text, forms)
        dup = writer.first_duplicate()
        if dup is not None:
            if t.log is None:
                raise _duplicate_error(t, dup)
            t.log.add(_duplicate_error(t, dup))
        dups = _duplicate_texts(writer)
        entries = sorted([(row, 0, ["dup", *rest, writer.loc(row)]) for row, rest in dups.kept]
                         + [(row, 1, ["long", did, n, writer.loc(row)]) for row, did, n in long_docs.kept])
        meta = {"source": str(t.path), "title_only": title_only.kept, "title_only_more": title_only.more,
                "empty": empty.kept, "empty_more": empty.more,
                "doc_warnings": [e for _, _, e in entries],
                "doc_warnings_more": {"duplicate_doc_text": dups.more, "long_document": long_docs.more},
                "letter_forms": forms.to_meta("documents")}
        if t.log is not None:
            if t.log.errors:  # the warnings come with the errors, as on the in-memory path
                skipped = place(t, dup[1]) if dup is not None else None  # a repeated id's row is skipped
                found = [w for ws in _meta_warnings(t, meta) for w in ws if getattr(w, "at", "") != skipped]
                t.log.warnings = (sum(w.count for w in found), warning_lines(found))
            t.log.check()  # a corpus with a bad row is never committed: its cached store would hide the row
        store = writer.commit(meta)
        committed = True
        return store
    finally:
        if not committed:
            writer.discard()


class _Earliest:
    """The first ``KEPT_PER_KIND`` findings by their first field (row or line), and how many more there were."""

    def __init__(self) -> None:
        self.kept: list[Any] = []
        self.total = 0

    def add(self, item: Any) -> None:
        self.total += 1
        self.kept.append(item)
        if len(self.kept) >= 2 * KEPT_PER_KIND:  # bounded: trim to the earliest now and then
            self.kept = sorted(self.kept)[:KEPT_PER_KIND]

    def finish(self) -> _Earliest:
        self.kept = sorted(self.kept)[:KEPT_PER_KIND]
        return self

    @property
    def more(self) -> int:
        return self.total - len(self.kept)


def _stream(t: Table, writer: StoreWriter, doc_id: str, title: str, text: str,
            forms: FormCounts) -> tuple[_Earliest, _Earliest, _Earliest]:
    """Every row into the writer; the checks of ``add_doc`` in its order (a repeated id wins over later errors).

    (title-only, empty, long) documents found, and the letter forms they write counted into ``forms`` (by line);
    with a problem log on ``t`` a bad row is recorded and skipped."""
    title_only, empty, long_docs = _Earliest(), _Earliest(), _Earliest()
    row = 0
    try:
        for loc, raw_id, title_s, text_s in corpus_rows(t, doc_id, title, text):
            try:  # a row's problem: recorded and the row skipped with a problem log (t.record), else raised
                did = checked_id(t, loc, raw_id, "document")
                key, n = doc_key_and_tokens(title_s, text_s)
                writer.add(loc, did, title_s, text_s, hash(key))
                warning = check_doc_text(t, loc, did, title_s, text_s)
                if warning is not None:
                    (empty if warning.kind == "empty_document" else title_only).add((loc, did))
                if n > LONG_DOC_TOKENS:
                    long_docs.add((row, did, n))
                forms.add("documents", title_s, lambda: loc)
                forms.add("documents", text_s, lambda: loc)
                row += 1
            except CollectionError as e:
                t.record(e)
    except InvalidText as e:
        raise t.error(e.row, "a document holds a lone UTF-16 surrogate (an escape such as \\ud800 without its "
                             "pair), which is not valid text: fix the export") from None
    except CollectionError:
        dup = writer.first_duplicate()  # the old reader stopped at the first repeated id if it came earlier
        if dup is not None:
            raise _duplicate_error(t, dup) from None
        raise
    return title_only.finish(), empty.finish(), long_docs.finish()


def _duplicate_error(t: Table, dup: tuple[int, int, str]) -> CollectionError:
    first_loc, loc, did = dup
    return t.error(loc, f"duplicate document id {did!r} (first at {t.where(first_loc)})")


def _duplicate_texts(writer: StoreWriter) -> _Earliest:
    """(row, [id, 'text' or 'title', first id]) of documents repeating an earlier one's text (confirmed)."""
    out = _Earliest()
    table: pa.Table | None = None
    for rows in writer.key_groups():
        table = table if table is not None else writer.table()
        first: dict[tuple[str, str], str] = {}
        for row in rows:
            doc = table.slice(row, 1).to_pylist()[0]
            key, _ = doc_key_and_tokens(doc["title"], doc["text"])
            if key == EMPTY_KEY:  # reported as empty documents, not as copies of each other
                continue
            if key in first:
                out.add((row, [doc["id"], key[0], first[key]]))
            else:
                first[key] = doc["id"]
    return out.finish()
