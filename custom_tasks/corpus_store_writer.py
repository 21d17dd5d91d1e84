"""Writes a ``CorpusStore`` folder streaming, with duplicate-id detection in constant Python memory.

Rows go to the Arrow stream in batches; each batch's id hashes (packed with the row number) are appended to
``index.u64``, which is sorted in place at the end as a file-backed memmap, so neither the ids nor a dict of
them is ever held. Equal hashes are confirmed on the real ids: the first duplicate is exact, never a guess.
Everything is written into a temporary sibling folder that is renamed into place only when complete.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .corpus_store import FORMAT_VERSION, SCHEMA, SORT_SEGMENT, CorpusStore, hash_ids

BATCH_ROWS = 8192
GROUP_CHUNK = 1 << 18  # sorted hashes compared this many at a time (bounded temporaries)
_MASK = (1 << 64) - 1


class InvalidText(ValueError):
    """A value that cannot be stored as UTF-8 (a lone surrogate from a JSON escape); ``row`` says which."""

    def __init__(self, row: int) -> None:
        super().__init__(row)
        self.row = row


class StoreWriter:
    """Append (loc, id, title, text) rows; ``first_duplicate`` then ``commit`` (or ``discard``)."""

    def __init__(self, folder: Path, max_rows: int) -> None:
        self.folder = Path(folder)
        self.folder.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = self.folder.with_name(f"{self.folder.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}")
        self.tmp.mkdir()
        self.row_bits = max(1, int(max_rows).bit_length())
        self.rows = 0
        self._sink = pa.OSFile(str(self.tmp / "corpus.arrow"), "wb")
        self._writer = pa.ipc.new_stream(self._sink, SCHEMA)
        self._index = open(self.tmp / "index.u64", "wb")
        self._locs = open(self.tmp / "locs.i64", "wb")
        self._keys = open(self.tmp / "keys.u64", "wb")
        self._buf: tuple[list[str], list[str], list[str], list[int], list[int]] = ([], [], [], [], [])
        self._closed = False
        self._index_sorted = False

    def add(self, loc: int, doc_id: str, title: str, text: str, key_hash: int = 0) -> None:
        """One document; ``key_hash``: any 64-bit hash whose equal values ``key_groups`` returns (e.g. of the text)."""
        ids, titles, texts, locs, keys = self._buf
        ids.append(doc_id)
        titles.append(title)
        texts.append(text)
        locs.append(loc)
        keys.append(key_hash & _MASK)
        if len(ids) >= BATCH_ROWS:
            self._flush()

    def _flush(self) -> None:
        ids, titles, texts, locs, keys = self._buf
        if not ids:
            return
        if self.rows + len(ids) >= 1 << self.row_bits:
            raise RuntimeError("more rows than the store was sized for")  # max_rows counts lines: cannot happen
        try:
            cols = [pa.array(v, type=pa.string()) for v in (ids, titles, texts)]
        except (pa.ArrowException, UnicodeEncodeError):
            bad = next(k for k, row in enumerate(zip(ids, titles, texts)) if not _encodable(row))
            raise InvalidText(locs[bad]) from None
        self._writer.write_batch(pa.RecordBatch.from_arrays(cols, schema=SCHEMA))
        rows = np.arange(self.rows, self.rows + len(ids), dtype=np.uint64)
        shift = np.uint64(self.row_bits)
        packed = ((hash_ids(cols[0]) >> shift) << shift) | rows
        self._index.write(packed.tobytes())
        self._keys.write((((np.asarray(keys, dtype=np.uint64) >> shift) << shift) | rows).tobytes())
        self._locs.write(np.asarray(locs, dtype=np.int64).tobytes())
        self.rows += len(ids)
        self._buf = ([], [], [], [], [])

    def close(self) -> None:
        """Finish the files (also before reporting an error: duplicates are looked up in them)."""
        if self._closed:
            return
        self._flush()
        self._writer.close()
        self._sink.close()
        self._index.close()
        self._keys.close()
        self._locs.close()
        self._closed = True

    def table(self) -> pa.Table:
        """What has been written so far, memory-mapped (after ``close``)."""
        self.close()
        return pa.ipc.open_stream(pa.memory_map(str(self.tmp / "corpus.arrow"))).read_all()

    def loc(self, row: int) -> int:
        return int(np.memmap(self.tmp / "locs.i64", dtype=np.int64, mode="r")[row])

    def _groups(self, name: str) -> Iterator[list[int]]:
        """Sort a packed file in place (file-backed, no copy); yield the sorted rows of each equal-hash run."""
        self.close()
        if not self.rows:
            return
        packed = np.memmap(self.tmp / name, dtype=np.uint64, mode="r+")
        packed.sort()
        packed.flush()
        self._index_sorted |= name == "index.u64"
        shift, mask = np.uint64(self.row_bits), (1 << self.row_bits) - 1

        def equal_pairs() -> Iterator[int]:  # p where entries p and p+1 share the hash, in chunks
            for lo in range(0, self.rows - 1, GROUP_CHUNK):
                hi = min(lo + GROUP_CHUNK, self.rows - 1)
                prefix = packed[lo:hi + 1] >> shift
                yield from (np.flatnonzero(prefix[1:] == prefix[:-1]) + lo).tolist()

        start = prev = -2
        for p in equal_pairs():
            if p != prev + 1:
                if start >= 0:
                    yield sorted(int(v) & mask for v in packed[start:prev + 2])
                start = p
            prev = p
        if start >= 0:
            yield sorted(int(v) & mask for v in packed[start:prev + 2])

    def key_groups(self) -> Iterator[list[int]]:
        """Rows whose ``key_hash`` high bits are equal, a run at a time (candidates: confirm them)."""
        return self._groups("keys.u64")

    def first_duplicate(self) -> tuple[int, int, str] | None:
        """(loc of the first occurrence, loc of the earliest repeat, id) among the rows so far, or None.

        Equal hashes are confirmed on the real ids, so the answer is exact; the index is sorted in place.
        """
        best: tuple[int, int, str] | None = None  # (repeat row, first row, id)
        ids = None
        for rows in self._groups("index.u64"):
            ids = ids if ids is not None else self.table().column("id")
            first: dict[str, int] = {}
            for row in rows:
                doc_id = ids[row].as_py()
                if doc_id in first and (best is None or row < best[0]):
                    best = (row, first[doc_id], doc_id)
                first.setdefault(doc_id, row)
        if best is None:
            return None
        return self.loc(best[1]), self.loc(best[0]), best[2]

    def commit(self, meta: dict[str, Any]) -> CorpusStore:
        """Write ``order.npy`` and ``meta.json``, then move the folder into place atomically."""
        self.close()
        if not self._index_sorted:
            for _ in self._groups("index.u64"):
                pass
        table = self.table()
        order = np.lib.format.open_memmap(self.tmp / "order.npy", mode="w+", shape=(self.rows,),
                                          dtype=np.uint32 if self.rows < 2**32 else np.int64)
        for lo in range(0, self.rows, SORT_SEGMENT):  # id order per segment: bounded memory, merged when read
            seg = pc.sort_indices(table.slice(lo, SORT_SEGMENT).column("id")).to_numpy()
            order[lo:lo + len(seg)] = seg
            order[lo:lo + len(seg)] += lo
            del seg
        order.flush()
        del table, order
        (self.tmp / "locs.i64").unlink()
        (self.tmp / "keys.u64").unlink()
        meta = {**meta, "version": FORMAT_VERSION, "rows": self.rows, "row_bits": self.row_bits,
                "arrow_bytes": (self.tmp / "corpus.arrow").stat().st_size}
        (self.tmp / "meta.json").write_text(json.dumps(meta, ensure_ascii=False), encoding="utf-8")
        existing = CorpusStore.open_valid(self.folder)
        if existing is not None:  # another process committed the same corpus meanwhile: use theirs
            self.discard()
            return existing
        if self.folder.exists():  # an incomplete or damaged folder: replace it
            old = self.folder.with_name(f"{self.folder.name}.old-{uuid.uuid4().hex[:8]}")
            try:
                self.folder.rename(old)
                shutil.rmtree(old, ignore_errors=True)
            except OSError:
                pass
        try:
            self.tmp.rename(self.folder)
        except OSError:  # another process committed the same corpus first: use theirs
            self.discard()
            existing = CorpusStore.open_valid(self.folder)
            if existing is None:
                raise
            return existing
        return CorpusStore(self.folder)

    def discard(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - the folder is removed whatever state the writer is in
            pass
        shutil.rmtree(self.tmp, ignore_errors=True)


def _encodable(row: tuple[str, ...]) -> bool:
    try:
        for v in row:
            v.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
