"""Merged key indexes over many shards, so a lookup costs O(log n) per index, not one search per shard.

An index `index-<id>` is three files, each written to a temp name, fsynced and renamed, in this order:
`.loc.npy` (per key: ordinal of its shard in the manifest, u4, and its row there, i8), `.shards.json`
(the manifest: the covered shard names) and `.keys.npy` (the sorted keys as a (2, n) uint64 array: the
first and the last 8 bytes read big-endian, so the order is the bytes' order and searchsorted compares
integers, ~3x faster than 16-byte strings), the commit marker. A
merge killed at any moment leaves the units it merged intact and at worst orphan files, which the next
merge removes. Indexes are opened with `mmap_mode='r'`: searchsorted runs on the memory maps, so their
keys are file-backed pages, not heap. Vectors are never rewritten: an index only points into shards.

Every copy of a duplicated key is kept (duplicates are rare), so which copy wins is decided at lookup
from the store's shard order (`find`), exactly as when each shard was searched on its own.

Merge policy (size-tiered, Bentley-Saxe): a unit (an index or a shard no index covers) of n keys is
in tier floor(log_fanout(n)); `fanout` units in one tier are merged into one. With shards of similar
size this keeps fewer than `fanout` units per tier: O(fanout * log n) units in all.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import NamedTuple, Sequence

import numpy as np

from ...results.store import tmp_path_for

FANOUT = 8  # units of one size tier merged at once
BLOCK = 1 << 16  # keys taken per source per step of a merge: heap stays ~ fanout * BLOCK * 28 bytes
KEY_DTYPE = np.dtype("S16")
LOC_DTYPE = np.dtype([("shard", "<u4"), ("row", "<i8")])
PARTS = ("loc.npy", "shards.json", "keys.npy")  # write order; removal goes the other way


class Source(NamedTuple):
    """One unit to merge: sorted S16 keys (sliceable), the manifest ordinal of each key's shard (an int:
    all in one), rows."""
    keys: np.ndarray | _Joined
    shard: np.ndarray | int
    rows: np.ndarray
    stems: list[str]


def split(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """S16 keys -> (first 8 bytes, last 8 bytes) as native uint64, ordered as the bytes are."""
    halves = np.ascontiguousarray(keys, KEY_DTYPE).view(">u8").reshape(-1, 2)
    return halves[:, 0].astype(np.uint64), halves[:, 1].astype(np.uint64)


def join(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    return np.stack([hi, lo], axis=1).astype(">u8").view(KEY_DTYPE).reshape(-1)


class _Joined:
    """An index's keys read as S16 slices (what a merge takes from each source)."""

    def __init__(self, hi: np.ndarray, lo: np.ndarray) -> None:
        self.hi, self.lo = hi, lo

    def __len__(self) -> int:
        return len(self.hi)

    def __getitem__(self, sl: slice) -> np.ndarray:
        return join(self.hi[sl], self.lo[sl])


class MergedIndex:
    """A committed index, memory-mapped; `bind` maps its manifest to a store's shard positions."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.name = base.name
        keys = np.load(f"{base}.keys.npy", mmap_mode="r", allow_pickle=False)
        self.loc: np.ndarray = np.load(f"{base}.loc.npy", mmap_mode="r", allow_pickle=False)
        self.stems: list[str] = json.loads(Path(f"{base}.shards.json").read_text())["shards"]
        if keys.dtype != np.uint64 or keys.shape != (2, len(self.loc)) or self.loc.dtype != LOC_DTYPE:
            raise ValueError(f"{base}: keys and locations disagree")
        self.hi: np.ndarray = keys[0]
        self.lo: np.ndarray = keys[1]
        self.pos_map = np.zeros(0, np.int64)

    @property
    def size(self) -> int:
        return len(self.hi)

    def keys(self) -> np.ndarray:
        """All keys as S16, in memory (tests and `compact` only)."""
        return join(self.hi, self.lo)

    def bind(self, position: dict[str, int]) -> None:
        self.pos_map = np.array([position[s] for s in self.stems], np.int64)

    def source(self) -> Source:
        return Source(_Joined(self.hi, self.lo), self.loc["shard"], self.loc["row"], self.stems)

    def find(self, query: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(mask of query keys present, store position of the winning shard of each, its row there).

        The winner of a duplicated key is the copy in the lowest store position (then the first in index
        order, which keeps a shard's own order): what a search shard by shard in store order returns."""
        n, (qhi, qlo) = self.size, split(query)
        at = np.searchsorted(self.hi, qhi)
        multi = (at + 1 < n) & (self.hi[np.minimum(at + 1, n - 1)] == qhi)  # first 8 bytes shared: rare
        if multi.any():
            m = np.flatnonzero(multi)
            at[m] = self._bisect_lo(at[m], np.searchsorted(self.hi, qhi[m], side="right"), qlo[m])
        at = np.minimum(at, n - 1)
        hit = (self.hi[at] == qhi) & (self.lo[at] == qlo)
        at, multi, qhi, qlo = at[hit], multi[hit], qhi[hit], qlo[hit]
        loc = self.loc[at]
        where, rows = self.pos_map[loc["shard"]], loc["row"].astype(np.int64)
        dup = np.flatnonzero(multi)
        dup = dup[self._same(at[dup] + 1, qhi[dup], qlo[dup])]
        if len(dup):
            where[dup], rows[dup] = self._winners(at[dup], qhi[dup], qlo[dup])
        return hit, where, rows

    def _same(self, at: np.ndarray, qhi: np.ndarray, qlo: np.ndarray) -> np.ndarray:
        """Whether the key at each position (may be past the end) is the query key."""
        c = np.minimum(at, self.size - 1)
        return (at < self.size) & (self.hi[c] == qhi) & (self.lo[c] == qlo)

    def _bisect_lo(self, left: np.ndarray, right: np.ndarray, qlo: np.ndarray) -> np.ndarray:
        """Leftmost position in [left, right) (a run of equal first halves) whose last half is >= qlo."""
        while (active := left < right).any():
            mid = (left + right) // 2
            less = self.lo[np.minimum(mid, self.size - 1)] < qlo
            left, right = np.where(active & less, mid + 1, left), np.where(active & ~less, mid, right)
        return left

    def _winners(self, lo: np.ndarray, qhi: np.ndarray, qlo: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For runs of equal keys starting at `lo`: the store position and row of each run's winner."""
        end = lo + 1
        while (more := self._same(end, qhi, qlo)).any():  # runs are as long as the copies of a key: short
            end = end + more
        lens = end - lo
        starts = np.cumsum(lens) - lens
        loc = self.loc[np.arange(lens.sum()) + np.repeat(lo - starts, lens)]
        where = self.pos_map[loc["shard"]]
        order = np.lexsort((where, np.repeat(np.arange(len(lo)), lens)))  # stable: index order breaks ties
        first = order[starts]
        return where[first], loc["row"][first].astype(np.int64)


def tier(size: int, fanout: int) -> int:
    t = 0
    while size >= fanout:
        size //= fanout
        t += 1
    return t


def plan(sizes: Sequence[int], fanout: int) -> list[int] | None:
    """Positions (in `sizes`) of the units to merge next: all of the lowest tier holding `fanout`; None if none."""
    tiers: dict[int, list[int]] = {}
    for i, n in enumerate(sizes):
        if n:
            tiers.setdefault(tier(n, fanout), []).append(i)
    return next((tiers[t] for t in sorted(tiers) if len(tiers[t]) >= fanout), None)


def accept(indexes: Sequence[MergedIndex], known: set[str]) -> list[MergedIndex]:
    """The indexes to search: those covering more shards first (name breaks ties), skipping any that
    overlaps one taken (e.g. the inputs of a merge whose old files are not deleted yet) or that names
    a shard this store has not opened (gone after `compact`)."""
    taken: list[MergedIndex] = []
    covered: set[str] = set()
    for ix in sorted(indexes, key=lambda i: (-len(i.stems), i.name)):
        stems = set(ix.stems)
        if stems <= known and not stems & covered:
            taken.append(ix)
            covered |= stems
    return taken


def _commit(tmp: Path, final: Path) -> None:
    with open(tmp, "rb+") as f:
        os.fsync(f.fileno())
    os.replace(tmp, final)


def write_index(folder: Path, sources: Sequence[Source], block: int = BLOCK) -> str:
    """Merge sorted `sources` into a new committed index (streamed block by block); returns its name."""
    offsets = np.cumsum([0] + [len(s.stems) for s in sources])
    stems = [stem for s in sources for stem in s.stems]
    total = sum(len(s.keys) for s in sources)
    name = f"index-{uuid.uuid4().hex}"
    final = {part: folder / f"{name}.{part}" for part in PARTS}
    tmp = {part: tmp_path_for(path) for part, path in final.items()}
    try:
        keys_out = np.lib.format.open_memmap(tmp["keys.npy"], mode="w+", dtype=np.uint64, shape=(2, total))
        loc_out = np.lib.format.open_memmap(tmp["loc.npy"], mode="w+", dtype=LOC_DTYPE, shape=(total,))
        ptr, done = [0] * len(sources), 0
        while done < total:
            ends = [min(p + block, len(s.keys)) for p, s in zip(ptr, sources)]
            tails = [s.keys[e - 1:e] for s, e in zip(sources, ends) if e < len(s.keys)]
            if tails:  # keys up to the smallest last key taken from a source with more left are final
                cut = np.sort(np.concatenate(tails))[:1]
                ends = [p + int(np.searchsorted(s.keys[p:e], cut, side="right")[0])
                        for p, e, s in zip(ptr, ends, sources)]
            keys = np.concatenate([np.asarray(s.keys[p:e]) for p, e, s in zip(ptr, ends, sources)])
            shard = np.concatenate([np.asarray(s.shard[p:e] if isinstance(s.shard, np.ndarray)
                                               else np.full(e - p, s.shard), np.int64) + off
                                    for p, e, s, off in zip(ptr, ends, sources, offsets)])
            rows = np.concatenate([np.asarray(s.rows[p:e], np.int64) for p, e, s in zip(ptr, ends, sources)])
            order = np.argsort(keys, kind="stable")  # timsort: merges the sorted runs; stable: a source's
            # own order of equal keys is kept (lexsort on the uint64 halves: ~4x slower here)
            sl = slice(done, done + len(order))
            keys_out[0, sl], keys_out[1, sl] = split(keys[order])
            loc_out["shard"][sl], loc_out["row"][sl] = shard[order], rows[order]
            done, ptr = done + len(order), ends
        keys_out.flush()
        loc_out.flush()
        del keys_out, loc_out
        _commit(tmp["loc.npy"], final["loc.npy"])
        with open(tmp["shards.json"], "w") as f:
            json.dump({"shards": stems, "keys": total}, f)
        _commit(tmp["shards.json"], final["shards.json"])
        _commit(tmp["keys.npy"], final["keys.npy"])  # the commit: from here the index is valid
    except BaseException:
        for path in tmp.values():
            path.unlink(missing_ok=True)
        remove_index(folder / name)
        raise
    return name


def remove_index(base: Path) -> None:
    """Delete an index, commit marker first (a crash midway leaves orphans, never a broken index)."""
    for part in reversed(PARTS):
        Path(f"{base}.{part}").unlink(missing_ok=True)


def index_files(folder: Path) -> dict[str, list[Path]]:
    """Every index file in `folder` (committed or orphan), by index name."""
    found: dict[str, list[Path]] = {}
    for path in folder.glob("index-*"):
        found.setdefault(path.name.split(".", 1)[0], []).append(path)
    return found
