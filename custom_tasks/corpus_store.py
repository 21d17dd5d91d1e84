"""A read-only corpus on disk, so a large corpus costs no Python object per document (issue #13).

A dict of ``doc_id -> {"title", "text"}`` costs about 1 KB of anonymous memory per document. Above
``wants_store``'s threshold the readers write the corpus once, streaming, into a folder under the corpus
cache (``$PRIVATE_MTEB_CORPUS_CACHE``, default ``~/.cache/private-mteb/corpora``) keyed by the source
file's path, size and mtime; later runs open it memory-mapped (file-backed pages, not anonymous memory).

API: ``CorpusStore`` is a read-only ``Mapping[str, dict[str, str]]``, exactly what ``Collection.corpus``
promises either way, plus bulk access that never builds a Python object per document:

    len(store); "d1" in store; store["d1"] -> {"title": ..., "text": ...}
    for doc_id in store: ...               # file order, one batch of Python ids at a time
    store.items() / store.values()         # streamed batch by batch, no per-id lookup
    store.ids_arrow() -> pa.ChunkedArray   # every id, zero-copy, file order
    store.batches(rows=None)               # Iterator[pa.RecordBatch] of id, title, text in file order
    store.dataset() -> datasets.Dataset    # memory-mapped id, title, text: what mteb is handed
    store.row(i) -> (id, title, text);  store.position(doc_id) -> row or None
    store.positions(ids) -> np.ndarray     # rows of many ids at once, -1 where absent
    store.update_content_hash(h)           # feeds sha256 exactly as the dict path does (sorted ids)

Folder: ``corpus.arrow`` (an Arrow IPC stream, which ``datasets.Dataset.from_file`` maps directly),
``index.u64`` (sorted: 64-bit id hash in the high bits, row in the low ``row_bits``), ``order.npy``
(rows in id order, for the content hash) and ``meta.json``, written last: its presence commits the folder.
The writer is ``corpus_store_writer.py``.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import os
from collections.abc import ItemsView, Iterable, Iterator, Mapping, ValuesView
from itertools import islice
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

FORMAT_VERSION = 1
CACHE_ENV = "PRIVATE_MTEB_CORPUS_CACHE"
SCHEMA = pa.schema([("id", pa.string()), ("title", pa.string()), ("text", pa.string())])
HASH_CHUNK = 16_384  # documents per step of the content hash (bounded Python objects)
SORT_SEGMENT = 1 << 18  # order.npy sorts ids within segments of this many rows; the hash merges them

_FNV_OFFSET, _FNV_PRIME, _MASK = 0xCBF29CE484222325, 0x100000001B3, (1 << 64) - 1


def cache_root() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "private-mteb" / "corpora").expanduser()


def _mix(z: int) -> int:
    """splitmix64's finaliser: spreads FNV's bits so the high bits (the ones kept) depend on every byte."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def hash_id(doc_id: str) -> int:
    """64-bit FNV-1a + finaliser of the UTF-8 id: stable across processes (unlike ``hash``)."""
    h = _FNV_OFFSET
    for b in doc_id.encode("utf-8", "surrogatepass"):
        h = ((h ^ b) * _FNV_PRIME) & _MASK
    return _mix(h)


def hash_ids(ids: pa.Array) -> np.ndarray:
    """``hash_id`` of every id of an Arrow string array, vectorised (one numpy step per byte position)."""
    ids = pa.array(ids, type=pa.string()) if not isinstance(ids, pa.Array) else ids
    n = len(ids)
    bufs = ids.buffers()
    offs = np.frombuffer(bufs[1], dtype=np.int32)[ids.offset: ids.offset + n + 1].astype(np.int64)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(1, np.uint8)
    starts, lengths = offs[:-1], offs[1:] - offs[:-1]
    h = np.full(n, _FNV_OFFSET, dtype=np.uint64)
    prime = np.uint64(_FNV_PRIME)
    for j in range(int(lengths.max(initial=0))):
        act = np.flatnonzero(lengths > j)
        h[act] = (h[act] ^ data[starts[act] + j]) * prime
    with np.errstate(over="ignore"):
        h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return h ^ (h >> np.uint64(31))


class CorpusStore(Mapping[str, dict[str, str]]):
    """The memory-mapped corpus of one committed store folder (see the module docstring)."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.meta: dict[str, Any] = json.loads((self.folder / "meta.json").read_text(encoding="utf-8"))
        self._table = pa.ipc.open_stream(pa.memory_map(str(self.folder / "corpus.arrow"))).read_all()
        self._batches = [b for b in self._table.to_batches() if b.num_rows]
        self._starts = np.cumsum([0] + [b.num_rows for b in self._batches])
        self._n = int(self._starts[-1])
        self.row_bits = int(self.meta["row_bits"])
        self._index = (np.memmap(self.folder / "index.u64", dtype=np.uint64, mode="r") if self._n
                       else np.zeros(0, np.uint64))
        self._order = np.load(self.folder / "order.npy", mmap_mode="r")  # mapped now: survives a later prune
        self._dataset: Any = None

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its folder (a worker process maps the same files), never as the data."""
        return (CorpusStore, (self.folder,))

    @classmethod
    def open_valid(cls, folder: Path) -> CorpusStore | None:
        """The store in ``folder`` if it is complete and matches this version; else None."""
        try:
            meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
            if meta.get("version") != FORMAT_VERSION:
                return None
            if (folder / "corpus.arrow").stat().st_size != meta["arrow_bytes"]:
                return None
            if (folder / "index.u64").stat().st_size != 8 * meta["rows"]:
                return None
            store = cls(folder)
            return store if len(store) == meta["rows"] else None
        except (OSError, ValueError, KeyError, TypeError, pa.ArrowException):
            return None

    # --- Mapping --------------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[str]:
        for b in self._batches:
            yield from b.column(0).to_pylist()

    def __contains__(self, doc_id: object) -> bool:
        return isinstance(doc_id, str) and self.position(doc_id) is not None

    def __getitem__(self, doc_id: str) -> dict[str, str]:
        row = self.position(doc_id) if isinstance(doc_id, str) else None
        if row is None:
            raise KeyError(doc_id)
        _, title, text = self.row(row)
        return {"title": title, "text": text}

    def items(self) -> ItemsView[str, dict[str, str]]:
        return _Items(self)

    def values(self) -> ValuesView[dict[str, str]]:
        return _Values(self)

    def __repr__(self) -> str:
        return f"CorpusStore({str(self.folder)!r}, {self._n} documents)"

    # --- bulk access ----------------------------------------------------------------------------
    def ids_arrow(self) -> pa.ChunkedArray:
        return self._table.column("id")

    def batches(self, rows: int | None = None) -> Iterator[pa.RecordBatch]:
        """Record batches (id, title, text) in file order; ``rows``: at most that many per batch."""
        if rows is None:
            yield from self._batches
            return
        for start in range(0, self._n, rows):
            yield self._table.slice(start, rows).combine_chunks().to_batches()[0]

    def dataset(self) -> Any:
        """A ``datasets.Dataset`` over the same memory-mapped file (no copy, no Python rows)."""
        if self._dataset is None:
            from datasets import Dataset

            self._dataset = Dataset.from_file(str(self.folder / "corpus.arrow"))
        return self._dataset

    def row(self, i: int) -> tuple[str, str, str]:
        if not 0 <= i < self._n:
            raise IndexError(i)
        batch, j = self._locate(i)
        return batch.column(0)[j].as_py(), batch.column(1)[j].as_py(), batch.column(2)[j].as_py()

    def _locate(self, i: int) -> tuple[pa.RecordBatch, int]:
        """The batch holding row ``i`` and the row's place in it."""
        b = int(np.searchsorted(self._starts, i, side="right")) - 1
        return self._batches[b], i - int(self._starts[b])

    def _id_at(self, i: int) -> str:
        batch, j = self._locate(i)
        return batch.column(0)[j].as_py()

    def _candidates(self, h: int) -> Iterator[int]:
        """Rows whose id hash has the same high bits as ``h`` (usually one, confirmed by the caller)."""
        lo_key = (h >> self.row_bits) << self.row_bits
        hi_key = lo_key | ((1 << self.row_bits) - 1)
        lo = int(np.searchsorted(self._index, np.uint64(lo_key), side="left"))
        hi = int(np.searchsorted(self._index, np.uint64(hi_key), side="right"))
        mask = (1 << self.row_bits) - 1
        for k in range(lo, hi):
            yield int(self._index[k]) & mask

    def position(self, doc_id: str) -> int | None:
        """The row of ``doc_id`` (file order), or None."""
        for row in self._candidates(hash_id(doc_id)):
            if self._id_at(row) == doc_id:
                return row
        return None

    def positions(self, ids: Iterable[str]) -> np.ndarray:
        """Rows of many ids at once (int64, -1 where an id is absent): hashed, searched and confirmed in bulk."""
        ids = list(ids)
        out = np.full(len(ids), -1, dtype=np.int64)
        if not ids or not self._n:
            return out
        shift, mask = np.uint64(self.row_bits), np.uint64((1 << self.row_bits) - 1)
        lo_keys = (hash_ids(pa.array(ids, type=pa.string())) >> shift) << shift
        lo = np.searchsorted(self._index, lo_keys, side="left")
        hi = np.searchsorted(self._index, lo_keys | mask, side="right")
        single = np.flatnonzero(hi - lo == 1)  # the usual case: one candidate row, confirmed on its id
        if len(single):
            rows = (np.asarray(self._index[lo[single]]) & mask).astype(np.int64)
            (found,) = self._take(rows, columns=(0,))  # the ids only: titles and texts are not needed here
            same = np.fromiter((a == ids[k] for a, k in zip(found, single.tolist())), dtype=bool, count=len(single))
            out[single[same]] = rows[same]
        for k in np.flatnonzero(hi - lo > 1).tolist():  # a shared hash prefix: check each candidate
            row = self.position(ids[k])
            if row is not None:
                out[k] = row
        return out

    def content_hash_with(self, tail: bytes) -> str:
        """``Collection.content_hash``: sha256(documents, then ``tail``)[:16], remembered per digest of ``tail``.

        The store's documents never change (a changed file is another folder), so the result for the same
        queries and qrels is read back from ``content_hashes.json`` instead of hashing every document again.
        """
        key = hashlib.sha256(tail).hexdigest()
        path = self.folder / "content_hashes.json"
        try:
            known = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            known = {}
        if not isinstance(known, dict):
            known = {}
        if isinstance(known.get(key), str):
            return known[key]
        h = hashlib.sha256()
        self.update_content_hash(h)
        h.update(tail)
        value = h.hexdigest()[:16]
        known = {k: v for k, v in list(known.items())[-15:]}  # the last few query/label versions
        known[key] = value
        tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
        try:
            tmp.write_text(json.dumps(known), encoding="utf-8")
            os.replace(tmp, path)
        except OSError:  # a read-only cache still answers, just without remembering
            tmp.unlink(missing_ok=True)
        return value

    def update_content_hash(self, h: Any) -> None:
        """Feed ``h`` every document in sorted-id order, byte for byte as ``Collection.content_hash``'s dict loop.

        That loop hashes ``json.dumps([id, title, text], ensure_ascii=False)`` per document; for three strings
        this is ``[`` + the three JSON strings joined by ``, `` + ``]``. ``order.npy`` holds the rows sorted per
        segment (Arrow's byte order of UTF-8 is Python's code-point order); segments are merged here.
        """
        order = self._order
        bounds = [(lo, min(lo + SORT_SEGMENT, self._n)) for lo in range(0, self._n, SORT_SEGMENT)]
        chunk = max(1024, HASH_CHUNK // max(1, len(bounds)))
        streams = [self._sorted_docs(order, lo, hi, chunk) for lo, hi in bounds]
        docs = streams[0] if len(streams) == 1 else heapq.merge(*streams, key=itemgetter(0))
        enc = encode_basestring
        while part := list(islice(docs, HASH_CHUNK)):
            h.update("".join([f"[{enc(i)}, {enc(t)}, {enc(x)}]" for i, t, x in part]).encode())

    def _sorted_docs(self, order: np.ndarray, lo: int, hi: int, chunk: int) -> Iterator[tuple[str, str, str]]:
        for start in range(lo, hi, chunk):
            yield from zip(*self._take(np.asarray(order[start:min(start + chunk, hi)], dtype=np.int64)))

    def _take(self, rows: np.ndarray, columns: tuple[int, ...] = (0, 1, 2)) -> list[list[str]]:
        """Lists of the given columns (0 id, 1 title, 2 text) of the given rows in their order, batch by batch."""
        which = np.searchsorted(self._starts, rows, side="right") - 1
        out: list[list[Any]] = [[None] * len(rows) for _ in columns]
        for b in np.unique(which).tolist():
            at = np.flatnonzero(which == b)
            taken = pa.array(rows[at] - self._starts[b])
            for col, c in zip(out, columns):
                for pos, value in zip(at.tolist(), self._batches[b].column(c).take(taken).to_pylist()):
                    col[pos] = value
        return out


class _Items(ItemsView):
    _mapping: CorpusStore

    def __iter__(self) -> Iterator[tuple[str, dict[str, str]]]:
        for b in self._mapping.batches():
            ids, titles, texts = (b.column(c).to_pylist() for c in range(3))
            for doc_id, title, text in zip(ids, titles, texts):
                yield doc_id, {"title": title, "text": text}


class _Values(ValuesView):
    _mapping: CorpusStore

    def __iter__(self) -> Iterator[dict[str, str]]:
        for _, doc in _Items(self._mapping):
            yield doc
