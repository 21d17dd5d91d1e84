"""The memory-mapped embedding store: lookups, crash safety, compaction, migration of `.npz` caches."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np

from runners.execution.cache.embedding_cache import EmbeddingStore, text_key
from runners.execution.cache.vector_store import VectorStore

ROOT = Path(__file__).resolve().parents[1]


def _keys(n: int, tag: str = "") -> list[bytes]:
    return [text_key("p", f"{tag}{i}") for i in range(n)]


def _vecs(n: int, seed: int = 0, dim: int = 8) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)


def test_lookup_returns_the_stored_vectors_from_memory_maps(tmp_path):
    store = VectorStore(tmp_path)
    keys, vecs = _keys(50), _vecs(50)
    store.add(keys[:30], vecs[:30])
    store.add(keys[30:], vecs[30:])
    found, missing, got = VectorStore(tmp_path).lookup(keys[::-1] + [text_key("p", "nope")])
    assert found == list(range(50)) and missing == [50]
    np.testing.assert_array_equal(np.stack(got), vecs[::-1])
    assert all(isinstance(s.vectors, np.memmap) for s in VectorStore(tmp_path)._load() or store._shards)
    assert len(store) == 50 and store.dim == 8
    # a key ending in NUL bytes survives the round trip
    odd = b"a" * 14 + b"\x00\x00"
    store.add([odd], _vecs(1, 5))
    np.testing.assert_array_equal(VectorStore(tmp_path).get([odd]), _vecs(1, 5))


def test_another_process_sees_new_shards_after_refresh(tmp_path):
    a, b = VectorStore(tmp_path), VectorStore(tmp_path)
    assert len(b) == 0
    a.add(_keys(3), _vecs(3))
    assert b.lookup(_keys(3))[1] == [0, 1, 2]
    b.refresh()
    assert b.lookup(_keys(3))[1] == []


def test_compaction_keeps_every_lookup_identical(tmp_path):
    store = VectorStore(tmp_path)
    keys, vecs = _keys(1000), _vecs(1000, 1)
    for start in range(0, 1000, 70):
        store.add(keys[start:start + 70], vecs[start:start + 70])
    store.add(keys[:10], vecs[:10])  # duplicates (same vectors, as a re-encode gives)
    query = keys[::-3] + _keys(5, "missing")
    before = store.lookup(query)
    assert store.compact(block_rows=128) == 16
    assert sorted(p.name.split(".")[0] for p in tmp_path.glob("shard-*")) == [
        p.name.split(".")[0] for p in tmp_path.glob("shard-*.keys.npy")] * 2
    for reader in (store, VectorStore(tmp_path)):
        after = reader.lookup(query)
        assert after[0] == before[0] and after[1] == before[1]
        np.testing.assert_array_equal(np.stack(after[2]), np.stack(before[2]))
        assert len(reader._shards) == 1 and len(reader) == 1000


def test_old_npz_shards_are_migrated(tmp_path):
    keys, vecs = _keys(20), _vecs(20, 2)
    karr = np.frombuffer(b"".join(keys), dtype="S16")
    np.savez(tmp_path / "shard-0123abcd.npz", keys=karr, vectors=vecs)
    found, missing, got = EmbeddingStore(tmp_path).lookup(keys)
    assert missing == [] and not list(tmp_path.glob("*.npz"))
    np.testing.assert_array_equal(np.stack(got), vecs)


WRITER = textwrap.dedent("""
    import sys, numpy as np
    from runners.execution.cache.embedding_cache import text_key
    from runners.execution.cache.vector_store import VectorStore
    store = VectorStore(sys.argv[1])
    vecs = np.ones((20000, 64), np.float32)
    for i in range(10_000):
        store.add([text_key("p", f"{i}-{j}") for j in range(20000)], vecs * i)
        print(i, flush=True)
""")


def test_a_writer_killed_mid_write_leaves_a_readable_store(tmp_path):
    """SIGKILL at arbitrary moments: every committed shard reads back whole, nothing half-written is seen."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for delay in (0.3, 0.7, 1.1):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)], stdout=subprocess.PIPE, env=env,
                                cwd=ROOT)
        assert proc.stdout is not None
        proc.stdout.readline()  # at least one shard committed
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        store = VectorStore(tmp_path)
        store.refresh()
        for shard in store._shards:
            first = float(shard.vectors[0, 0])
            assert np.all(np.asarray(shard.vectors) == first)  # a whole shard of one batch
            assert len(shard.keys) == len(shard.vectors) == 20000
        assert len(store._shards) >= 1
    store.compact()
    assert len(VectorStore(tmp_path)) == len(store)
    from runners.results.leftovers import clean_leftovers

    clean_leftovers(tmp_path / "results", tmp_path)  # a killed writer's temp file: its pid is dead
    assert not list(tmp_path.glob("*.tmp"))


# merged key indexes (vector_index.py)

def _brute_force(store: VectorStore, query: list[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """The lookup before indexes: the first shard in `_shards` order holding the key, its first row there."""
    where: dict[bytes, tuple[int, int]] = {}
    for pos, shard in enumerate(store._shards):
        index = np.load(f"{shard.stem}.keys.npy")
        for key, row in zip(index["key"].tolist(), index["row"].tolist()):
            where.setdefault(key.ljust(16, b"\x00"), (pos, row))
    found = [where.get(k, (-1, 0)) for k in query]
    return np.array([f[0] for f in found]), np.array([f[1] for f in found])


def _fill(store: VectorStore, adds: int, seed: int = 0) -> list[bytes]:
    """`adds` shards of 5..60 keys drawn from a pool (so keys repeat across and within shards), each add
    with its own vectors, so which copy wins shows."""
    rng = np.random.default_rng(seed)
    pool = _keys(1500, f"s{seed}-")
    for i in range(adds):
        batch = [pool[j] for j in rng.integers(0, len(pool), rng.integers(5, 60))]
        if i % 2:
            with store.lock():  # as encode_block / CachedEncoder add: the merge nests in the held lock
                store.add(batch, _vecs(len(batch), seed * 1000 + i))
        else:
            store.add(batch, _vecs(len(batch), seed * 1000 + i))
    return pool + _keys(50, "absent")


def _assert_locate_exact(store: VectorStore, query: list[bytes]) -> None:
    shard_of, row_of = store.locate(query)
    want_shard, want_row = _brute_force(store, query)
    np.testing.assert_array_equal(shard_of, want_shard)
    np.testing.assert_array_equal(row_of[shard_of >= 0], want_row[want_shard >= 0])
    found = shard_of >= 0
    want = np.stack([store._shards[s].vectors[r] for s, r in zip(want_shard[found], want_row[found])])
    np.testing.assert_array_equal(store.gather(shard_of[found], row_of[found]), want)


def test_merged_indexes_answer_as_a_search_of_every_shard(tmp_path):
    store = VectorStore(tmp_path, fanout=3)
    query = _fill(store, 40)
    assert len(list(tmp_path.glob("index-*.keys.npy"))) >= 1
    assert store.units <= 10 < len(store._shards) == 40
    assert all(isinstance(ix.hi, np.memmap) and isinstance(ix.lo, np.memmap) for ix in store._indexes)
    assert all(s._keys is None for s in store._shards if s not in store._loose)  # no heap copy
    for reader in (store, VectorStore(tmp_path, fanout=3)):  # writer: add order; reader: name order
        _assert_locate_exact(reader, query[::-1])
        assert reader.units == store.units
    plain = VectorStore(tmp_path, fanout=10**9)  # same files, indexes still used (merging is what fanout sets)
    assert len(plain) == len(store) == len(set(store._unique_keys().tolist()))
    few = VectorStore(tmp_path / "few", fanout=3)
    _fill(few, 2)
    assert not list((tmp_path / "few").glob("index-*")) and few.units == 2


def test_merging_off_keeps_one_unit_per_shard(tmp_path):
    store = VectorStore(tmp_path, fanout=10**9)
    query = _fill(store, 12, seed=1)
    assert store.units == 12 and not list(tmp_path.glob("index-*"))
    _assert_locate_exact(store, query)


CRASHING_MERGE = textwrap.dedent("""
    import os, sys, numpy as np
    from runners.execution.cache import vector_index, vector_store
    from runners.execution.cache.embedding_cache import text_key
    from runners.execution.cache.vector_store import VectorStore
    folder, where = sys.argv[1], sys.argv[2]
    if where == "before-commit":  # killed with locations + manifest renamed, keys still a temp file
        commit = vector_index._commit
        vector_index._commit = lambda tmp, final: (
            os._exit(0) if final.name.endswith(".keys.npy") else commit(tmp, final))
    else:  # killed after the new index is committed, before the indexes it replaces are removed
        vector_store.remove_index = lambda base: os._exit(0)
    store = VectorStore(folder, fanout=2)
    for i in range(8):
        store.add([text_key("p", f"{i}-{j}") for j in range(9)], np.full((9, 4), i, np.float32))
""")


def test_a_merge_killed_midway_leaves_a_correct_store(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for where in ("before-commit", "before-cleanup"):
        folder = tmp_path / where
        subprocess.run([sys.executable, "-c", CRASHING_MERGE, str(folder), where], env=env, cwd=ROOT, check=True)
        store = VectorStore(folder, fanout=2)
        store.refresh()
        n = len(store._shards)
        assert n in (2, 4)  # the crash came in the merge of the 2nd (a temp keys file) or 4th add (two levels)
        keys = [text_key("p", f"{i}-{j}") for i in range(n) for j in range(9)]
        np.testing.assert_array_equal(store.get(keys)[:, 0], np.repeat(np.arange(n), 9))
        _assert_locate_exact(store, keys + _keys(5, "absent"))
        committed = list(folder.glob("index-*.keys.npy"))
        if where == "before-commit":
            assert not committed and list(folder.glob("index-*.loc.npy")) and list(folder.glob(".index-*.tmp"))
            assert store.units == n
        else:
            assert len(committed) == 3 and store.units == 1  # the new index wins over the two it merged
        for tag in ("more", "more2"):  # the next merge removes what the crash left
            store.add(_keys(9, tag), _vecs(9, dim=4))
        assert {p.name.split(".")[0] for p in folder.glob("index-*")} == {ix.name for ix in store._indexes}
        _assert_locate_exact(VectorStore(folder, fanout=2), keys + _keys(9, "more") + _keys(9, "more2"))


def test_refresh_sees_another_process_merge(tmp_path):
    a, b = VectorStore(tmp_path, fanout=3), VectorStore(tmp_path, fanout=3)
    keys = _keys(300)
    for start in range(0, 60, 20):
        a.add(keys[start:start + 20], _vecs(20, start))
    assert b.units == 1  # a merged its 3 shards
    for start in range(60, 300, 20):
        a.add(keys[start:start + 20], _vecs(20, start))
    old = b._indexes[0].name
    b.refresh()
    assert b.units == a.units < 4 and old not in {ix.name for ix in b._indexes}
    assert not (tmp_path / f"{old}.keys.npy").exists()  # superseded, removed after the new one committed
    want = np.concatenate([_vecs(20, s) for s in range(0, 300, 20)])
    np.testing.assert_array_equal(b.get(keys), want)
    _assert_locate_exact(b, keys)


def test_compaction_after_merges_removes_the_indexes(tmp_path):
    store = VectorStore(tmp_path, fanout=3)
    query = _fill(store, 20, seed=2)
    before = VectorStore(tmp_path).lookup(query)  # name order, as compact keeps (the writer's is add order)
    assert list(tmp_path.glob("index-*"))
    assert store.compact(block_rows=100) == 20
    assert not list(tmp_path.glob("index-*")) and len(list(tmp_path.glob("shard-*.keys.npy"))) == 1
    for reader in (store, VectorStore(tmp_path, fanout=3)):
        after = reader.lookup(query)
        assert after[:2] == before[:2] and reader.units == 1
        np.testing.assert_array_equal(np.stack(after[2]), np.stack(before[2]))


def test_keys_sharing_their_first_bytes_are_told_apart(tmp_path):
    """Merged indexes search the first 8 bytes, then the last 8 within a run of equal first halves."""
    rng = np.random.default_rng(3)
    prefixes = [b"\x00" * 8, b"samehead", b"\xff" * 8]
    pool = [p + bytes(rng.integers(0, 4, 8, dtype=np.uint8)) for p in prefixes for _ in range(40)]
    pool += [b"a" * 14 + b"\x00\x00", b"a" * 15 + b"\x00", b"\x00" * 16, b"\xff" * 16]
    store = VectorStore(tmp_path, fanout=2)
    for i in range(24):
        batch = [pool[j] for j in rng.integers(0, len(pool), 30)]
        store.add(batch, _vecs(len(batch), 100 + i))
    assert store.units < 8 and store._indexes
    absent = [p + bytes([9] * 8) for p in prefixes] + [b"samehea" + bytes(9)]
    for reader in (store, VectorStore(tmp_path)):
        _assert_locate_exact(reader, pool + absent)
        _assert_locate_exact(reader, (pool + absent)[::-1])


def test_many_shards_raise_a_low_open_file_limit(tmp_path):
    """Every shard keeps memory maps (an open file each): a store of more shards than the soft limit allows opens."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(f"""
        import resource, sys
        import numpy as np
        sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
        from runners.execution.cache.vector_store import VectorStore
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
        store = VectorStore({str(tmp_path)!r}, fanout=10**6)  # no merging: every shard stays open on its own
        rng = np.random.default_rng(0)
        for i in range(60):
            store.add([bytes([i]) * 16], rng.random((1, 4), dtype=np.float32))
        fresh = VectorStore({str(tmp_path)!r}, fanout=10**6)
        assert len(fresh.get([bytes([i]) * 16 for i in range(60)])) == 60
        print(resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout.strip()) > 64
