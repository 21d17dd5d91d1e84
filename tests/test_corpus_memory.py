"""Memory does not grow with the corpus (issue #13): 100k vs 500k documents, peak RssAnon of a fresh process.

Each child validates a generated BEIR corpus into its disk store, computes the content hash, builds mteb's split
data and streams every document once, while a thread samples RssAnon (anonymous memory; the memory-mapped
store is file-backed and not counted). The dict path costs ~1 KB per document, i.e. ~400 MB more here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

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
c = load_collection({"format": "beir", "path": sys.argv[1]}, "/", "Mem")
revision = c.content_hash()
data = collection_to_split_data(c, ["test"])
n = sum(1 for _ in c.corpus.items())
time.sleep(0.05)
print(json.dumps({"docs": n, "store": type(c.corpus).__name__, "peak_mb": peak[0] / 1024}))
"""


def _corpus(folder: Path, n: int) -> Path:
    (folder / "qrels").mkdir(parents=True)
    with open(folder / "corpus.jsonl", "w") as f:
        for i in range(n):
            f.write(f'{{"_id": "d{i}", "title": "", "text": "document {i} about topic {i % 997} and subject '
                    f'{i % 101} with detail {i * 7919 % 100003}"}}\n')
    (folder / "queries.jsonl").write_text("".join(f'{{"_id": "q{j}", "text": "question {j}"}}\n' for j in range(100)))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n"
                                               + "".join(f"q{j}\td{j * 7}\t1\n" for j in range(100)))
    return folder


def _peak(folder: Path, cache: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PRIVATE_MTEB_CORPUS_CACHE": str(cache),
           "PRIVATE_MTEB_STORE_MIN_DOCS": "0", "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", CHILD, str(folder)], env=env, cwd=REPO, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_peak_memory_is_independent_of_corpus_size(tmp_path):
    small = _peak(_corpus(tmp_path / "small", 100_000), tmp_path / "cache")
    large = _peak(_corpus(tmp_path / "large", 500_000), tmp_path / "cache")
    assert (small["docs"], large["docs"]) == (100_000, 500_000)
    assert small["store"] == large["store"] == "CorpusStore"
    growth = large["peak_mb"] - small["peak_mb"]
    print(f"peak RssAnon: 100k docs {small['peak_mb']:.0f} MB, 500k docs {large['peak_mb']:.0f} MB")
    assert growth < 20, f"peak RssAnon grew {growth:.0f} MB for 400k more documents (dict path: ~400 MB)"
