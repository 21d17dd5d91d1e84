"""Loading a corpus: the in-memory dict vs the disk-backed CorpusStore (cold build and warm reopen), side by side.

For each size, a synthetic BEIR folder (the documents of bench_scale.py) is loaded in fresh processes: the dict
path (store threshold raised), the store built from scratch (cold) and the store reopened from its cache (warm).
Each child loads the collection, computes its content hash (the mteb revision), builds mteb's split data and
streams every document once; a thread samples RssAnon every 5 ms (file-backed memory-mapped pages are not
anonymous memory). Prints seconds, peak RssAnon and whether the content hashes agree.

    .venv/bin/python benchmarks/bench_corpus_store.py --docs 200000 1000000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.bench_scale import doc_text  # noqa: E402  (the same synthetic documents)

CHILD = r"""
import json, sys, threading, time
peak = [0]
def rss_anon():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("RssAnon:"))
def sample():
    while True:
        peak[0] = max(peak[0], rss_anon())
        time.sleep(0.005)
threading.Thread(target=sample, daemon=True).start()
from custom_tasks.sources import load_collection
from custom_tasks.task import collection_to_split_data
t0 = time.perf_counter()
c = load_collection({"format": "beir", "path": sys.argv[1]}, "/", "Bench")
t1 = time.perf_counter()
revision = c.content_hash()
t2 = time.perf_counter()
collection_to_split_data(c, ["test"])
n = sum(1 for _ in c.corpus.items())
t3 = time.perf_counter()
time.sleep(0.05)
print(json.dumps({"docs": n, "kind": type(c.corpus).__name__, "load_s": t1 - t0, "hash_s": t2 - t1,
                  "rest_s": t3 - t2, "peak_mb": peak[0] / 1024, "revision": revision}))
"""


def make_corpus(folder: Path, n: int, n_queries: int = 500) -> Path:
    """A BEIR folder of ``n`` synthetic documents; query j is relevant to document j*7 (also tests/test_corpus_memory.py)."""
    (folder / "qrels").mkdir(parents=True)
    with open(folder / "corpus.jsonl", "w") as f:
        for i in range(n):
            f.write(json.dumps({"_id": f"d{i}", "title": "", "text": doc_text(i)}) + "\n")
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": f"q{j}", "text": f"question {j}"}) + "\n"
                                                  for j in range(n_queries)))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n"
                                               + "".join(f"q{j}\td{(j * 7) % n}\t1\n" for j in range(n_queries)))
    return folder


def run_child(folder: Path, cache: Path, min_docs: str, timeout: float | None = None) -> dict:
    """``CHILD`` on ``folder`` in a fresh process; its JSON line. A failed child raises with its stderr's tail."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "PRIVATE_MTEB_CORPUS_CACHE": str(cache),
           "PRIVATE_MTEB_STORE_MIN_DOCS": min_docs, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", CHILD, str(folder)], env=env, cwd=REPO, capture_output=True,
                         text=True, timeout=timeout)
    if out.returncode != 0:
        raise SystemExit(f"error: benchmark child failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, nargs="+", default=[200_000])
    ap.add_argument("--workdir", type=Path, default=None, help="where the synthetic data and cache go (tmp)")
    ap.add_argument("--smoke", action="store_true", help="tiny size, seconds (CI runs this: tests/test_benchmarks_smoke.py)")
    args = ap.parse_args()
    if args.smoke:
        args.docs = [1000]
    print(f"{'docs':>9} {'path':>11} {'load s':>7} {'hash s':>7} {'rest s':>7} {'peak RssAnon MB':>16}  same revision")
    for n in args.docs:
        with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
            folder, cache = make_corpus(Path(tmp) / "data", n), Path(tmp) / "cache"
            rows = [("dict", run_child(folder, cache, str(10**12))), ("store cold", run_child(folder, cache, "0")),
                    ("store warm", run_child(folder, cache, "0"))]
            for name, r in rows:
                same = r["revision"] == rows[0][1]["revision"]
                print(f"{n:>9,} {name:>11} {r['load_s']:>7.1f} {r['hash_s']:>7.1f} {r['rest_s']:>7.1f} "
                      f"{r['peak_mb']:>16.0f}  {same}", flush=True)


if __name__ == "__main__":
    main()
