"""Memory-mapped, append-only embedding store: millions of vectors without holding them in RAM.

Each shard is two `.npy` files: `shard-<id>.vec.npy` (float32, n x d) and `shard-<id>.keys.npy`
(sorted 16-byte keys + the row of each key). Both are written to a temp name, fsynced and renamed;
the keys file is renamed last and is the commit marker, so a run killed mid-write leaves either a
whole shard or nothing readable (an orphan `.vec.npy` is ignored and removed by `compact`). Vectors
are opened with `mmap_mode='r'`: lookups copy only the rows asked for; the page cache, not the
process heap, holds the rest. Old `.npz` shards are migrated on first open.

Lookups: a shard no merged index covers ("loose") is searched on its own, its sorted keys copied into
memory (16 bytes a key). Once `fanout` units of one size tier exist, `add` merges them into one merged
key index (vector_index.py: memory-mapped, vectors never rewritten), so a lookup searches O(fanout *
log n) units instead of every shard, and merged keys stay file-backed pages, not heap.

Precedence: a key stored in several shards resolves to the first shard in `_shards` (the shards in
name order at the first `refresh`, then in order of arrival), whatever indexes cover them. `_shards`
only grows, so locations from `locate` stay valid for `gather` after `refresh`, `add` and merges.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import numpy as np

from . import vector_index
from ...results.locks import FileLock
from ...results.store import env_faults, tmp_path_for
from .npy_files import room_for_files, save_npy
from .vector_index import MergedIndex, Source, accept, index_files, plan, remove_index, write_index

KEY_BYTES = 16
KEY_DTYPE = np.dtype(f"S{KEY_BYTES}")
INDEX_DTYPE = np.dtype([("key", KEY_DTYPE), ("row", "<i8")])
NOT_FOUND = np.iinfo(np.int64).max


def keys_array(keys: list[bytes] | np.ndarray) -> np.ndarray:
    """Raw 16-byte keys as an `S16` array (built from the bytes, so trailing NULs are kept)."""
    if isinstance(keys, np.ndarray):
        return keys.astype(KEY_DTYPE, copy=False)
    return np.frombuffer(b"".join(keys), dtype=KEY_DTYPE) if keys else np.zeros(0, KEY_DTYPE)


class _Shard:
    """One committed shard, memory-mapped; its sorted keys are copied into memory only while it is loose."""

    def __init__(self, stem: Path, position: int) -> None:
        self.stem = stem
        self.position = position  # in VectorStore._shards: the precedence of its copies of a key
        self.index: np.ndarray = np.load(f"{stem}.keys.npy", allow_pickle=False, mmap_mode="r")
        self.rows: np.ndarray = self.index["row"]  # read only at hits: file-backed pages, not the heap
        self.vectors: np.ndarray = np.load(f"{stem}.vec.npy", mmap_mode="r", allow_pickle=False)
        self._keys: np.ndarray | None = None
        if self.vectors.ndim != 2 or (len(self.rows) and self.rows.max() >= len(self.vectors)):
            raise ValueError(f"{stem}: keys and vectors disagree")

    @property
    def keys(self) -> np.ndarray:
        if self._keys is None:  # searchsorted needs them contiguous
            self._keys = np.ascontiguousarray(self.index["key"])
        return self._keys

    @property
    def size(self) -> int:
        return len(self.rows)

    def release(self) -> None:
        """Drop the in-memory key copy (an index covers this shard now)."""
        self._keys = None

    def source(self) -> Source:
        return Source(self.index["key"], 0, self.rows, [self.stem.name])

    def find(self, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(mask of query keys present, their rows in `vectors`)."""
        if not len(self.keys):
            return np.zeros(len(query), bool), np.zeros(0, np.int64)
        pos = np.searchsorted(self.keys, query)
        pos_c = np.minimum(pos, len(self.keys) - 1)
        hit = self.keys[pos_c] == query
        return hit, self.rows[pos_c[hit]]


class _EncodeLock(FileLock):
    """The encode flock, re-entrant within one VectorStore: a second flock of this process would wait for itself."""

    def __init__(self, store: VectorStore, blocking: bool = True) -> None:
        super().__init__(store.folder / "encode.lock", blocking)
        self.store, self.nested = store, False

    def acquire(self) -> bool:
        if self.store._lock_depth:
            self.nested = self.acquired = True
        elif not super().acquire():
            return False
        self.store._lock_depth += 1
        return True

    def release(self) -> None:
        if not self.acquired:
            return
        self.store._lock_depth -= 1
        if self.nested:
            self.nested = self.acquired = False
        else:
            super().release()


class VectorStore:
    """Append-only vectors for one (model, revision, variant); the interface of the old `.npz` store.

    `fanout`: units of one size tier merged into an index (default `vector_index.FANOUT`; huge = never)."""

    def __init__(self, folder: Path, fanout: int | None = None) -> None:
        self.folder = Path(folder)
        self.fanout = max(2, fanout or vector_index.FANOUT)
        self._lock_depth = 0
        self._reset()

    def _reset(self) -> None:
        self._shards: list[_Shard] = []
        self._position: dict[str, int] = {}  # shard name -> its place in _shards
        self._opened: dict[str, MergedIndex] = {}  # committed indexes seen on disk, by name
        self._indexes: list[MergedIndex] = []  # those searched (see vector_index.accept)
        self._loose: list[_Shard] = []  # shards no searched index covers, in _shards order
        self._loaded = False

    def _load(self) -> None:
        if not self._loaded:
            self.refresh()

    @property
    def units(self) -> int:
        """How many sorted key arrays a lookup searches (merged indexes + loose shards)."""
        self._load()
        return len(self._indexes) + len(self._loose)

    def refresh(self) -> None:
        """Open shards and indexes committed since the last look (by this or another process); migrate `.npz` ones."""
        self._loaded = True
        if not self.folder.is_dir():
            return
        for old in sorted(self.folder.glob("shard-*.npz")):
            self._migrate(old)
        # indexes listed before shards: every shard a listed index names is committed, so listed below
        names = sorted(p.name[: -len(".keys.npy")] for p in self.folder.glob("index-*.keys.npy"))
        for path in sorted(self.folder.glob("shard-*.keys.npy")):
            stem = path.with_name(path.name[: -len(".keys.npy")])
            if stem.name in self._position:
                continue
            try:
                self._open_shard(stem)
            except Exception:  # unreadable shard (should not happen: writes are atomic) -> ignore it
                continue
        self._opened = {n: ix for n, ix in self._opened.items() if n in names}  # merged away or compacted
        for name in names:
            if name not in self._opened:
                try:
                    self._opened[name] = MergedIndex(self.folder / name)
                except Exception:  # removed meanwhile (superseded): its shards stay loose until the next look
                    continue
        self._arrange()

    def _open_shard(self, stem: Path) -> None:
        room_for_files(2 * len(self._shards) + 2 * len(self._opened) + 2)
        shard = _Shard(stem, len(self._shards))
        self._shards.append(shard)
        self._position[stem.name] = shard.position
        self._loose.append(shard)

    def _arrange(self) -> None:
        """Choose the indexes to search; every shard none of them covers is loose."""
        self._indexes = accept(list(self._opened.values()), set(self._position))
        covered: set[str] = set()
        for ix in self._indexes:
            ix.bind(self._position)
            covered.update(ix.stems)
        self._loose = [s for s in self._shards if s.stem.name not in covered]
        for name in covered:
            self._shards[self._position[name]].release()

    def _migrate(self, old: Path) -> None:
        """An `.npz` shard of the earlier in-memory store becomes a memory-mapped one (then is removed)."""
        try:
            with np.load(old) as data:
                keys = [bytes(k).ljust(KEY_BYTES, b"\x00") for k in data["keys"].tolist()]
                vectors = np.asarray(data["vectors"], dtype=np.float32)
        except Exception:
            return
        with env_faults(old), FileLock(self.folder / "migrate.lock"):
            if old.exists():  # another process may have migrated it while we waited
                self._write(keys_array(keys), vectors, old.stem)
                old.unlink(missing_ok=True)

    def lock(self, blocking: bool = True) -> FileLock:
        """The lock held while encoding what is missing (so two runs never encode the same texts) and while
        merging indexes; re-entrant within this object."""
        return _EncodeLock(self, blocking)

    def __len__(self) -> int:
        self._load()
        return len(self._unique_keys())

    def _unique_keys(self) -> np.ndarray:
        self._load()
        parts = [ix.keys() for ix in self._indexes] + [s.keys for s in self._loose]
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, KEY_DTYPE)

    @property
    def dim(self) -> int | None:
        self._load()
        return next((s.vectors.shape[1] for s in self._shards if s.size), None)

    def locate(self, keys: list[bytes] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each key: the shard number holding it (-1 = missing) and its row there.

        A key in several shards: the first of them in `_shards` (module docstring)."""
        self._load()
        query = keys_array(keys)
        if len(query) > 1 and self._shards and not (query[1:] >= query[:-1]).all():
            order = np.argsort(query, kind="stable")  # searched in order: ~3x faster per unit (cache locality)
            shard_of, row_of = np.empty(len(query), np.int64), np.empty(len(query), np.int64)
            shard_of[order], row_of[order] = self.locate(query[order])
            return shard_of, row_of
        best = np.full(len(query), NOT_FOUND, np.int64)
        row_of = np.zeros(len(query), np.int64)
        for ix in self._indexes:
            hit, where, rows = ix.find(query)
            at = np.flatnonzero(hit)
            win = where < best[at]
            best[at[win]], row_of[at[win]] = where[win], rows[win]
        for shard in self._loose:  # in _shards order: a key found in an earlier shard is not searched again
            todo = np.flatnonzero(best > shard.position)
            if not len(todo):
                break
            hit, rows = shard.find(query[todo])
            best[todo[hit]], row_of[todo[hit]] = shard.position, rows
        best[best == NOT_FOUND] = -1
        return best, row_of

    def gather(self, shard_of: np.ndarray, row_of: np.ndarray) -> np.ndarray:
        """The vectors at the given locations (all must be found), copied out of the memory maps in order."""
        out = np.empty((len(shard_of), self.dim or 0), np.float32)
        for s_id in np.unique(shard_of):
            sel = np.flatnonzero(shard_of == s_id)
            rows = row_of[sel]
            order = np.argsort(rows, kind="stable")  # read each memory map front to back
            out[sel[order]] = self._shards[int(s_id)].vectors[rows[order]]
        return out

    def get(self, keys: list[bytes] | np.ndarray) -> np.ndarray:
        """Vectors of keys that are all present (KeyError otherwise)."""
        shard_of, row_of = self.locate(keys)
        if (shard_of < 0).any():
            raise KeyError(f"{int((shard_of < 0).sum())} key(s) not in {self.folder}")
        return self.gather(shard_of, row_of)

    def lookup(self, keys: list[bytes]) -> tuple[list[int], list[int], list[np.ndarray]]:
        """Indices found, indices missing, and the found vectors (in order of `found`)."""
        shard_of, row_of = self.locate(keys)
        found = np.flatnonzero(shard_of >= 0)
        vectors = self.gather(shard_of[found], row_of[found]) if len(found) else []
        return found.tolist(), np.flatnonzero(shard_of < 0).tolist(), list(vectors)

    def missing(self, keys: list[bytes] | np.ndarray) -> np.ndarray:
        """Positions of keys not stored yet."""
        return np.flatnonzero(self.locate(keys)[0] < 0)

    def add(self, keys: list[bytes] | np.ndarray, vectors: np.ndarray) -> None:
        """Persist new vectors as one shard (vectors, then the keys file as the commit marker); then merge
        indexes if a size tier is full (under the encode lock: the caller's, else only if it is free)."""
        self._load()
        karr = keys_array(keys)
        if not len(karr):
            return
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(karr):
            raise ValueError(f"{len(karr)} keys but vectors of shape {vectors.shape}")
        self._open_shard(self._write(karr, vectors, f"shard-{uuid.uuid4().hex}"))
        if self._due() is not None:
            with self.lock(blocking=False) as lock:
                if lock.acquired:  # else another process holds it: it (or a later add) merges
                    self.merge()

    def _units(self) -> list[MergedIndex | _Shard]:
        """What a merge may take: the searched indexes and loose shards still on disk (not compacted away)."""
        return [*self._indexes, *(s for s in self._loose if os.path.exists(f"{s.stem}.keys.npy"))]

    def _due(self) -> list[int] | None:
        return plan([u.size for u in self._units()], self.fanout)

    def merge(self) -> int:
        """Merge units while a size tier holds `fanout` of them (takes the encode lock); returns how many
        indexes were written. Indexes superseded or left by a killed merge are removed."""
        written = 0
        with env_faults(self.folder), self.lock():
            self.refresh()
            self._drop_unused_indexes()
            while (due := self._due()) is not None:
                units = [self._units()[i] for i in due]
                name = write_index(self.folder, [u.source() for u in units])
                self._opened[name] = MergedIndex(self.folder / name)
                for unit in units:  # only after the commit: a crash before leaves them in use
                    if isinstance(unit, MergedIndex):
                        remove_index(unit.base)
                        self._opened.pop(unit.name, None)
                self._arrange()
                written += 1
        return written

    def _drop_unused_indexes(self) -> None:
        """Under the lock (no merge runs elsewhere): remove index files not searched (orphans, superseded)."""
        used = {ix.name for ix in self._indexes}
        for name in index_files(self.folder):
            if name not in used:
                self._opened.pop(name, None)
                remove_index(self.folder / name)

    def _write(self, karr: np.ndarray, vectors: np.ndarray, name: str) -> Path:
        stem = self.folder / name
        index = np.empty(len(karr), INDEX_DTYPE)
        order = np.argsort(karr, kind="stable")
        index["key"], index["row"] = karr[order], order
        with env_faults(stem.with_name(name + ".keys.npy")):
            self.folder.mkdir(parents=True, exist_ok=True)
            save_npy(stem.with_name(name + ".vec.npy"), vectors)
            save_npy(stem.with_name(name + ".keys.npy"), index)
        return stem

    def compact(self, block_rows: int = 262_144) -> int:
        """Merge every shard into one (duplicates dropped, first copy wins); returns the shard count before.

        Streams block by block into a memory-mapped temp file, so memory stays bounded; takes the
        encode lock, so no run adds shards meanwhile. Readers that opened old shards keep their maps
        (unlinked files stay readable until closed) and see the new shard on `refresh`.
        """
        with env_faults(self.folder), self.lock():
            self._reset()
            self.refresh()
            before = len(self._shards)
            if before <= 1 or not self.dim:
                self._drop_unused_indexes()
                return before
            keys = self._unique_keys()
            shard_of, row_of = self.locate(keys)
            name = f"shard-{uuid.uuid4().hex}"
            final = self.folder / f"{name}.vec.npy"
            tmp = tmp_path_for(final)
            try:
                out = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float32, shape=(len(keys), self.dim))
                for start in range(0, len(keys), block_rows):
                    sl = slice(start, start + block_rows)
                    out[sl] = self.gather(shard_of[sl], row_of[sl])
                out.flush()
                del out
                with open(tmp, "rb+") as f:
                    os.fsync(f.fileno())
                os.replace(tmp, final)
            except BaseException:
                tmp.unlink(missing_ok=True)
                raise
            index = np.empty(len(keys), INDEX_DTYPE)
            index["key"], index["row"] = keys, np.arange(len(keys))
            save_npy(self.folder / f"{name}.keys.npy", index)  # commit: from here both copies are valid
            for ix_name in index_files(self.folder):  # they point into the shards removed next
                remove_index(self.folder / ix_name)
            old = [s.stem for s in self._shards]
            for stem in old:  # keys file first: a crash here leaves whole shards or orphan vectors
                Path(f"{stem}.keys.npy").unlink(missing_ok=True)
                Path(f"{stem}.vec.npy").unlink(missing_ok=True)
            for orphan in self.folder.glob("shard-*.vec.npy"):
                if not orphan.with_name(orphan.name[: -len(".vec.npy")] + ".keys.npy").exists():
                    orphan.unlink(missing_ok=True)
            self._reset()
            self.refresh()
            return before
