"""Key lookup in the vector store: merged key indexes (vector_index.py) vs one search per shard.

Builds the same store of `--n` random keys twice, one `add` per shard of `--shard` keys (as a cold run
leaves one per 50k block): with merging off (fanout huge: every shard searched on its own, the lookup
before indexes) and with merging on (`--fanout`, merges done by `add` as in a run). Then times
`locate` of `--block`-key blocks (half present, half absent) on a fresh reader of each: sorted and
unique (as encode_block asks) and shuffled (as CachedEncoder asks). Only key lookup cost matters, so
vectors default to 8 dims (`--dim`). Prints median ms per block, units searched, key bytes copied into
the heap, build seconds, the speed-up and whether both answer the same.

    .venv/bin/python benchmarks/bench_vector_store.py                  # 2,000,000 keys, 40 shards
    .venv/bin/python benchmarks/bench_vector_store.py --n 5000000      # 100 shards
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from runners.execution.cache import vector_index# noqa: E402
from runners.execution.cache.vector_store import KEY_DTYPE, VectorStore  # noqa: E402


def random_keys(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(0, 256, (n, 16), dtype=np.uint8).view(KEY_DTYPE).reshape(-1)


def time_locate(store: VectorStore, blocks: list[np.ndarray]) -> tuple[float, list[np.ndarray]]:
    store.locate(blocks[0])  # warm: the maps' pages, the loose shards' key copies
    times, answers = [], []
    for block in blocks:
        t0 = time.perf_counter()
        shard_of, row_of = store.locate(block)
        times.append(time.perf_counter() - t0)
        answers.append(np.stack([np.where(shard_of >= 0, 1, 0), row_of]))  # positions differ by design; rows not
    return statistics.median(times) * 1000, answers


def build(folder: Path, args: argparse.Namespace, fanout: int) -> tuple[float, np.ndarray]:
    """The store of `args.n` random keys, one `add` per shard (merging as add does it); (seconds, keys)."""
    rng = np.random.default_rng(0)  # both stores hold the same keys in the same order of adds
    store, stored = VectorStore(folder, fanout=fanout), []
    t0 = time.perf_counter()
    for start in range(0, args.n, args.shard):
        keys = random_keys(rng, min(args.shard, args.n - start))
        store.add(keys, rng.standard_normal((len(keys), args.dim), dtype=np.float32))
        stored.append(keys)
    return time.perf_counter() - t0, np.concatenate(stored)


def heap_keys_mb(store: VectorStore) -> float:
    """Key bytes copied into the heap (loose shards); merged indexes are file-backed memory maps."""
    return sum(s._keys.nbytes for s in store._shards if s._keys is not None) / 2**20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2_000_000, help="vectors stored")
    ap.add_argument("--dim", type=int, default=8)
    ap.add_argument("--shard", type=int, default=50_000, help="keys per shard (one add each)")
    ap.add_argument("--block", type=int, default=50_000, help="keys per locate call")
    ap.add_argument("--blocks", type=int, default=10, help="locate calls timed (median reported)")
    ap.add_argument("--fanout", type=int, default=vector_index.FANOUT)
    ap.add_argument("--folder", type=Path, default=None, help="where to build (default: a temp folder)")
    ap.add_argument("--smoke", action="store_true", help="tiny size, seconds (CI runs this: tests/test_benchmarks_smoke.py)")
    args = ap.parse_args()
    if args.smoke:
        args.n, args.shard, args.block, args.blocks = 20_000, 2_000, 1_000, 2

    with tempfile.TemporaryDirectory(dir=args.folder) as tmp:
        results = {}
        for label, fanout in (("merging off", 10**9), ("merging on ", args.fanout)):
            folder = Path(tmp) / label.strip().replace(" ", "-")
            seconds, everything = build(folder, args, fanout)
            if not results:
                rng = np.random.default_rng(1)
                half = args.block // 2
                blocks = [np.unique(np.concatenate([everything[rng.choice(len(everything), half, replace=False)],
                                                    random_keys(rng, args.block - half)]))
                          for _ in range(args.blocks)]
                shuffled = [rng.permutation(b) for b in blocks]
                print(f"{args.n:,} vectors x {args.dim} dims, {len(list(folder.glob('shard-*.keys.npy'))):,} "
                      f"shards of {args.shard:,}; locate of {args.block:,}-key blocks (half present), "
                      f"median of {args.blocks}")
            del everything
            store = VectorStore(folder, fanout=fanout)  # a fresh reader, as a later run opens the cache
            ms, answers = time_locate(store, blocks)
            ms_shuffled, _ = time_locate(store, shuffled)
            results[label] = ms, answers
            what = "adds + merges" if fanout == args.fanout else "adds"
            print(f"  {label}: {ms:7.1f} ms/block sorted, {ms_shuffled:7.1f} unsorted   units {store.units:4d}   "
                  f"keys in heap {heap_keys_mb(store):5.1f} MB   build ({what}) {seconds:5.1f}s")
        (off, a), (on, b) = results.values()
        same = all(np.array_equal(x, y) for x, y in zip(a, b))
        print(f"  speed-up {off / on:.1f}x (fanout {args.fanout}); same answers: {same}")


if __name__ == "__main__":
    main()
