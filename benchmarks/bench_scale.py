"""Scale: N synthetic documents x 384 dims through `run_benchmark`, with the fast deterministic encoder.

Prints, measured side by side in one invocation: end-to-end seconds of a cold run (encoding into an
empty cache), of a warm rerun (`--force`, all cache hits), the pure encoding time of the same texts,
non-encoding seconds per million documents, and peak anonymous memory (RssAnon, sampled every 50 ms
from /proc/<pid>/status of the run's own process: file-backed memory-mapped pages are not counted,
they belong to the page cache).

Then the same collection, encoder and cold run with a pinned earlier commit (`--against`, default the release
issue 36 measured against), alternating the two versions run by run (`--repeats` each), and prints the
non-encoding seconds per million documents of both and their ratio: on a shared machine seconds move with the
load, a side-by-side ratio much less. The pinned commit is a detached `git worktree` in a temporary folder.

    .venv/bin/python benchmarks/bench_scale.py --docs 100000 300000 1000000
    .venv/bin/python benchmarks/bench_scale.py --docs 1000000 --repeats 3 --against d1ccbc6
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from _pinned import PINNED, commit_available, pinned_checkout, synthetic_factory  # noqa: E402

CHILD = """
import sys, time, json
from runners.config.benchmark import BenchmarkConfig
from runners.execution.run import run_benchmark
cfg = BenchmarkConfig.from_file(sys.argv[1])
t0 = time.perf_counter()
rec = run_benchmark(cfg, force=sys.argv[2] == "force", show_progress=False)[0]
print(json.dumps({"seconds": time.perf_counter() - t0, "ndcg_at_10": rec.scores["ndcg_at_10"],
                  "encoded": rec.encoded, "reused": rec.reused}))
"""


def doc_text(i: int) -> str:
    return f"document {i} about topic {i % 997} and subject {i % 101} with detail {i * 7919 % 100003}"


def make_task(folder: Path, n_docs: int, n_queries: int = 500) -> Path:
    """A BEIR folder + task YAML: query q is relevant to documents q*7, q*7+1 (grade 2, 1)."""
    data = folder / "data"
    (data / "qrels").mkdir(parents=True)
    with open(data / "corpus.jsonl", "w") as f:
        for i in range(n_docs):
            f.write(json.dumps({"_id": f"d{i}", "title": "", "text": doc_text(i)}) + "\n")
    with open(data / "queries.jsonl", "w") as f, open(data / "qrels" / "test.tsv", "w") as q:
        q.write("query-id\tcorpus-id\tscore\n")
        for j in range(n_queries):
            f.write(json.dumps({"_id": f"q{j}", "text": f"question {j} on topic {j % 997}"}) + "\n")
            q.write(f"q{j}\td{(j * 7) % n_docs}\t2\nq{j}\td{(j * 7 + 1) % n_docs}\t1\n")
    yaml_path = folder / "scale.yaml"
    yaml_path.write_text(f"name: Scale{n_docs}Retrieval\ndescription: synthetic scale benchmark\n"
                         f"source:\n  format: beir\n  path: data\nsplits: [test]\nlicense: cc0-1.0\nlabels: derived\n")
    return yaml_path


def write_config(folder: Path, task_yaml: Path, factory: str = "runners.execution.encoding.synthetic:make_encoder",
                 name: str = "bench.yaml") -> Path:
    import yaml

    folder.mkdir(parents=True, exist_ok=True)
    cfg = {"name": "scale", "tasks": [str(task_yaml)], "results_dir": str(folder / "results"),
           "models": [{"name": "synthetic/hash", "revision": "1",
                       "factory": factory, "factory_kwargs": {"dim": 384}}],
           "encode": {"batch_size": 4096}}
    path = folder / name
    path.write_text(yaml.safe_dump(cfg))
    return path


def run_child(cfg: Path, mode: str, repo: Path = REPO) -> dict[str, float]:
    """Run the benchmark in a fresh process with `repo`'s code; sample its RssAnon; return its figures.

    The disk-backed corpus store of large collections goes next to the config (a cold run writes it,
    the warm run opens it), so nothing outlives the temporary folder.
    """
    env = {**os.environ, "PYTHONPATH": str(repo), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TOKENIZERS_PARALLELISM": "false", "PRIVATE_MTEB_CORPUS_CACHE": str(cfg.parent / "corpora")}
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(cfg), mode], cwd=repo, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    peak_anon = 0
    status = Path(f"/proc/{proc.pid}/status")
    while proc.poll() is None:
        try:
            for line in status.read_text().splitlines():
                if line.startswith("RssAnon:"):
                    peak_anon = max(peak_anon, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.05)
    out = proc.stdout.read() if proc.stdout else ""
    if proc.returncode != 0:
        raise SystemExit(f"error: benchmark child failed (exit {proc.returncode})")
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_rss_anon_mb"] = peak_anon / 1024
    return result


def pure_encoding_seconds(n_docs: int, n_queries: int = 500, batch: int = 4096) -> float:
    from runners.execution.encoding.synthetic import synthetic_vectors

    texts = [doc_text(i) for i in range(n_docs)] + [f"question {j} on topic {j % 997}" for j in range(n_queries)]
    t0 = time.perf_counter()
    for start in range(0, len(texts), batch):
        synthetic_vectors(texts[start:start + batch], 384)
    return time.perf_counter() - t0


def side_by_side(folder: Path, task_yaml: Path, pinned: Path, commit: str, repeats: int, enc: float,
                 n: int) -> None:
    """Cold runs of this checkout and of the pinned one, alternating (A B, B A, ...), each into an empty
    results folder and corpus store; prints non-encoding seconds per million documents and their ratio."""
    versions = {"now": (REPO, "runners.execution.encoding.synthetic:make_encoder"),
                commit: (pinned, synthetic_factory(pinned))}
    seconds: dict[str, list[float]] = {v: [] for v in versions}
    small = make_task(folder / "warm-up", 2000)  # not counted: a session's first run also reads its imports from
    for label, (repo, factory) in versions.items():  # disk (a minute more on a busy machine)
        run_child(write_config(folder / "warm-up" / label, small, factory), "cold", repo)
    for r in range(repeats):
        for label in (list(versions) if r % 2 == 0 else list(versions)[::-1]):
            repo, factory = versions[label]
            cfg = write_config(folder / f"{label}-{r}", task_yaml, factory)
            seconds[label].append(run_child(cfg, "cold", repo)["seconds"])
            shutil.rmtree(cfg.parent, ignore_errors=True)
    per_m = {v: [(s - enc) * 1e6 / n for s in runs] for v, runs in seconds.items()}
    for v, runs in per_m.items():
        print(f"  {v:>9}: cold {' '.join(f'{s:.1f}' for s in seconds[v])} s; non-encoding per 1M "
              f"{' '.join(f'{s:.1f}' for s in runs)} (median {statistics.median(runs):.1f})")
    now, then = statistics.median(per_m["now"]), statistics.median(per_m[commit])
    print(f"  non-encoding time per 1M documents, now / {commit}: {now:.1f} / {then:.1f} = {now / then:.2f}x "
          f"(medians of {repeats} alternating cold runs each; same collection, encoder and machine)", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, nargs="+", default=[100_000])
    ap.add_argument("--workdir", type=Path, default=None, help="where the synthetic data and cache go (tmp)")
    ap.add_argument("--against", default=PINNED,
                    help=f"earlier commit run side by side (default {PINNED}, the issue-36 reference); 'none': skip")
    ap.add_argument("--repeats", type=int, default=2, help="alternating cold runs of each version (default 2)")
    ap.add_argument("--pair-only", action="store_true",
                    help="only the side-by-side cold runs (no warm run, no memory columns): a busy machine's shortcut")
    ap.add_argument("--smoke", action="store_true", help="tiny size, seconds (CI runs this: tests/test_benchmarks_smoke.py)")
    args = ap.parse_args()
    if args.smoke:
        args.docs = [2000]
        args.against = "none"  # two more versions' imports would not fit the smoke budget (~10 s)
    against = None if args.against == "none" else args.against
    if against is not None and not commit_available(against):
        print(f"warning: commit {against} is not in this checkout's history (shallow clone?): "
              "no side-by-side comparison", file=sys.stderr)
        against = None
    with contextlib.ExitStack() as stack:
        pinned = stack.enter_context(pinned_checkout(against)) if against else None
        print(f"{'docs':>9} {'cold s':>8} {'warm s':>8} {'encode s':>9} {'non-enc s/M (cold)':>19} "
              f"{'non-enc s/M (warm)':>19} {'peak RssAnon cold MB':>21} {'warm MB':>8}  nDCG@10")
        peaks: dict[int, tuple[float, float]] = {}
        for n in args.docs:
            with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
                folder = Path(tmp)
                task_yaml = make_task(folder, n)
                if args.pair_only and pinned is not None:
                    print(f"{n:>9} (side by side only)", flush=True)
                    side_by_side(folder / "ab", task_yaml, pinned, against, args.repeats, pure_encoding_seconds(n), n)
                    continue
                cfg = write_config(folder, task_yaml)
                cold = run_child(cfg, "cold")
                warm = run_child(cfg, "force")
                enc = pure_encoding_seconds(n)
                per_m = 1e6 / n
                print(f"{n:>9} {cold['seconds']:>8.1f} {warm['seconds']:>8.1f} {enc:>9.1f} "
                      f"{(cold['seconds'] - enc) * per_m:>19.1f} {warm['seconds'] * per_m:>19.1f} "
                      f"{cold['peak_rss_anon_mb']:>21.0f} {warm['peak_rss_anon_mb']:>8.0f}  "
                      f"{cold['ndcg_at_10']:.4f}{'' if cold['ndcg_at_10'] == warm['ndcg_at_10'] else ' (warm differs!)'}",
                      flush=True)
                peaks[n] = (cold["peak_rss_anon_mb"], warm["peak_rss_anon_mb"])
                if pinned is not None:
                    side_by_side(folder / "ab", task_yaml, pinned, against, args.repeats, enc, n)
        if len(peaks) > 1:
            small, large = min(peaks), max(peaks)
            print(f"peak RssAnon {large:,} / {small:,} documents: cold {peaks[large][0] / peaks[small][0]:.2f}x, "
                  f"warm {peaks[large][1] / peaks[small][1]:.2f}x")


if __name__ == "__main__":
    main()
