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

from runners.execution.embedding_cache import EmbeddingStore, text_key
from runners.execution.vector_store import VectorStore

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
    from runners.execution.embedding_cache import text_key
    from runners.execution.vector_store import VectorStore
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
    from runners.results.store import clean_leftovers

    clean_leftovers(tmp_path / "results", tmp_path)  # a killed writer's temp file: its pid is dead
    assert not list(tmp_path.glob("*.tmp"))
