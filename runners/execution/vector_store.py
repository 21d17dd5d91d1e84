"""Memory-mapped, append-only embedding store: millions of vectors without holding them in RAM.

Each shard is two `.npy` files: `shard-<id>.vec.npy` (float32, n x d) and `shard-<id>.keys.npy`
(sorted 16-byte keys + the row of each key). Both are written to a temp name, fsynced and renamed;
the keys file is renamed last and is the commit marker, so a run killed mid-write leaves either a
whole shard or nothing readable (an orphan `.vec.npy` is ignored and removed by `compact`). Vectors
are opened with `mmap_mode='r'`: lookups copy only the rows asked for; the page cache, not the
process heap, holds the rest. The index is a sorted key array per shard (`np.searchsorted`), 16 bytes
a vector in memory (the rows stay in the memory-mapped keys file) instead of a Python dict's ~150. Old `.npz` shards are migrated on first open.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import numpy as np

from ..results.locks import FileLock
from ..results.store import env_faults, tmp_path_for

KEY_BYTES = 16
KEY_DTYPE = np.dtype(f"S{KEY_BYTES}")
INDEX_DTYPE = np.dtype([("key", KEY_DTYPE), ("row", "<i8")])


def keys_array(keys: list[bytes] | np.ndarray) -> np.ndarray:
    """Raw 16-byte keys as an `S16` array (built from the bytes, so trailing NULs are kept)."""
    if isinstance(keys, np.ndarray):
        return keys.astype(KEY_DTYPE, copy=False)
    return np.frombuffer(b"".join(keys), dtype=KEY_DTYPE) if keys else np.zeros(0, KEY_DTYPE)


def _save_atomic(path: Path, array: np.ndarray) -> None:
    """np.save to a temp name, fsync, rename: readers see the whole file or none."""
    tmp = tmp_path_for(path)
    try:
        with open(tmp, "wb") as f:
            np.save(f, array, allow_pickle=False)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class _Shard:
    """One committed shard: its sorted keys in memory (16 bytes each), rows and vectors memory-mapped."""

    def __init__(self, stem: Path) -> None:
        self.stem = stem
        index = np.load(f"{stem}.keys.npy", allow_pickle=False, mmap_mode="r")
        self.keys: np.ndarray = np.ascontiguousarray(index["key"])  # searchsorted needs them contiguous
        self.rows: np.ndarray = index["row"]  # read only at hits: file-backed pages, not the heap
        self.vectors: np.ndarray = np.load(f"{stem}.vec.npy", mmap_mode="r", allow_pickle=False)
        if self.vectors.ndim != 2 or (len(self.rows) and self.rows.max() >= len(self.vectors)):
            raise ValueError(f"{stem}: keys and vectors disagree")

    def find(self, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(mask of query keys present, their rows in `vectors`)."""
        if not len(self.keys):
            return np.zeros(len(query), bool), np.zeros(0, np.int64)
        pos = np.searchsorted(self.keys, query)
        pos_c = np.minimum(pos, len(self.keys) - 1)
        hit = self.keys[pos_c] == query
        return hit, self.rows[pos_c[hit]]


class VectorStore:
    """Append-only vectors for one (model, revision, variant); the interface of the old `.npz` store."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self._shards: list[_Shard] = []
        self._seen: set[str] = set()
        self._loaded = False

    def _load(self) -> None:
        if not self._loaded:
            self.refresh()

    def refresh(self) -> None:
        """Open shards committed since the last look (by this or another process); migrate `.npz` ones."""
        self._loaded = True
        if not self.folder.is_dir():
            return
        for old in sorted(self.folder.glob("shard-*.npz")):
            self._migrate(old)
        for path in sorted(self.folder.glob("shard-*.keys.npy")):
            stem = path.with_name(path.name[: -len(".keys.npy")])
            if stem.name in self._seen:
                continue
            try:
                shard = _Shard(stem)
            except Exception:  # unreadable shard (should not happen: writes are atomic) -> ignore it
                continue
            self._seen.add(stem.name)
            self._shards.append(shard)

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

    def lock(self) -> FileLock:
        """The lock held while encoding what is missing (so two runs never encode the same texts)."""
        return FileLock(self.folder / "encode.lock")

    def __len__(self) -> int:
        self._load()
        return len(self._unique_keys())

    def _unique_keys(self) -> np.ndarray:
        self._load()
        if not self._shards:
            return np.zeros(0, KEY_DTYPE)
        return np.unique(np.concatenate([s.keys for s in self._shards]))

    @property
    def dim(self) -> int | None:
        self._load()
        return next((s.vectors.shape[1] for s in self._shards if len(s.keys)), None)

    def locate(self, keys: list[bytes] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each key: the shard number holding it (-1 = missing) and its row there."""
        self._load()
        query = keys_array(keys)
        shard_of = np.full(len(query), -1, np.int64)
        row_of = np.zeros(len(query), np.int64)
        for s_id, shard in enumerate(self._shards):
            todo = np.flatnonzero(shard_of < 0)
            if not len(todo):
                break
            hit, rows = shard.find(query[todo])
            shard_of[todo[hit]] = s_id
            row_of[todo[hit]] = rows
        return shard_of, row_of

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
        """Persist new vectors as one shard (vectors, then the keys file as the commit marker)."""
        self._load()
        karr = keys_array(keys)
        if not len(karr):
            return
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(karr):
            raise ValueError(f"{len(karr)} keys but vectors of shape {vectors.shape}")
        stem = self._write(karr, vectors, f"shard-{uuid.uuid4().hex}")
        self._seen.add(stem.name)
        self._shards.append(_Shard(stem))

    def _write(self, karr: np.ndarray, vectors: np.ndarray, name: str) -> Path:
        stem = self.folder / name
        index = np.empty(len(karr), INDEX_DTYPE)
        order = np.argsort(karr, kind="stable")
        index["key"], index["row"] = karr[order], order
        with env_faults(stem.with_name(name + ".keys.npy")):
            self.folder.mkdir(parents=True, exist_ok=True)
            _save_atomic(stem.with_name(name + ".vec.npy"), vectors)
            _save_atomic(stem.with_name(name + ".keys.npy"), index)
        return stem

    def compact(self, block_rows: int = 262_144) -> int:
        """Merge every shard into one (duplicates dropped, first copy wins); returns the shard count before.

        Streams block by block into a memory-mapped temp file, so memory stays bounded; takes the
        encode lock, so no run adds shards meanwhile. Readers that opened old shards keep their maps
        (unlinked files stay readable until closed) and see the new shard on `refresh`.
        """
        with env_faults(self.folder), self.lock():
            self._shards, self._seen, self._loaded = [], set(), False
            self.refresh()
            before = len(self._shards)
            if before <= 1 or not self.dim:
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
            _save_atomic(self.folder / f"{name}.keys.npy", index)  # commit: from here both copies are valid
            old = [s.stem for s in self._shards]
            for stem in old:  # keys file first: a crash here leaves whole shards or orphan vectors
                Path(f"{stem}.keys.npy").unlink(missing_ok=True)
                Path(f"{stem}.vec.npy").unlink(missing_ok=True)
            for orphan in self.folder.glob("shard-*.vec.npy"):
                if not orphan.with_name(orphan.name[: -len(".vec.npy")] + ".keys.npy").exists():
                    orphan.unlink(missing_ok=True)
            self._shards, self._seen, self._loaded = [], set(), False
            self.refresh()
            return before
