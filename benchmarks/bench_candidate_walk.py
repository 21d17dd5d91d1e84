"""Benchmark: the walk of one config through the code, from `run_benchmark` (issue 37's "stays and climbs").

How readable the runner is, measured rather than claimed: one benchmark config (the 12-page tiny task; BM25,
MiniLM, a MiniLM + BM25 hybrid and a BM25 -> MiniLM rerank; results and cache in a temporary folder) is run
by `run_benchmark` under `sys.setprofile`, which sees every Python function call. Only calls into first-party
files count (runners/ and custom_tasks/; module bodies executed by an import are left out: whether a lazy
import runs depends on what was imported before). From the ordered list of those calls:

* a **stay** is a maximal run of consecutive calls in one file; **places** are the distinct files;
  **entries per file** is how many stays a file has;
* a **room** is the folder a file is in (runners/execution/candidates, runners/results, custom_tasks/readers...),
  ranked in the import order that tests/test_layout.py enforces (custom_tasks < results < search < config <
  retrievers < execution's remote < backends < encoding < cache < candidates < distributed < the runner <
  measure: search imports results and never config, config imports search and never results);
* a **climb back up** is a move from a stay in room A to a stay in room B where B was visited before and B
  is higher in the layer order than A: the walk had left B for lower rooms and comes back up into it
  (a call returning is not a move; the next call made from B is). Each room visited once in order has none.

It reports the cold run (everything computed), the warm re-run (everything reused: what deciding that a
stored result is current costs) and the candidate walk (the config's candidates built, then each one's run
identity on the task computed, the task loaded beforehand: the path issue 37 is about), each as stays /
places / room visits / climbs, and the files entered most.

    python benchmarks/bench_candidate_walk.py [--smoke] [--json out.json] [--trace]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: rooms, lowest first (the import directions of tests/test_layout.py FORBIDDEN and ROOMS); a folder not listed ranks by its nearest listed parent
ORDER = ["custom_tasks", "runners/results", "runners/search", "runners/config", "runners/retrievers",
         "runners/execution/remote", "runners/execution/backends", "runners/execution/encoding",
         "runners/execution/cache", "runners/execution/candidates", "runners/execution/distributed",
         "runners/execution", "runners/execution/measure", "runners/analysis", "runners/cli"]
MINILM = "sentence-transformers/all-MiniLM-L6-v2"


def rank(room: str) -> int:
    """The room's place in ORDER (a sub-folder such as custom_tasks/readers ranks as its listed parent)."""
    probe = room
    while probe:
        if probe in ORDER:
            return ORDER.index(probe)
        probe = probe.rpartition("/")[0]
    return -1


def first_party(filename: str) -> str | None:
    """The repository-relative path of a first-party source file, else None."""
    try:
        rel = Path(filename).resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return None
    return rel if rel.startswith(("runners/", "custom_tasks/")) and rel.endswith(".py") else None


def trace(fn, *args, **kwargs) -> list[str]:
    """The files of the first-party calls `fn(*args, **kwargs)` makes, in order (one entry per call)."""
    calls: list[str] = []
    known: dict[str, str | None] = {}

    def profile(frame, event, arg):  # noqa: ANN001 - sys.setprofile's signature
        if event != "call" or frame.f_code.co_name == "<module>":
            return
        name = frame.f_code.co_filename
        rel = known.get(name, "?")
        if rel == "?":
            rel = known[name] = first_party(name)
        if rel is not None:
            calls.append(rel)

    sys.setprofile(profile)
    try:
        fn(*args, **kwargs)
    finally:
        sys.setprofile(None)
    return calls


def walk_figures(calls: list[str]) -> dict[str, object]:
    """Stays, places, entries per file, room visits and climbs back up of one call sequence (definitions above)."""
    stays = [f for i, f in enumerate(calls) if i == 0 or calls[i - 1] != f]
    rooms = [str(Path(f).parent) for f in stays]
    room_stays = [r for i, r in enumerate(rooms) if i == 0 or rooms[i - 1] != r]
    seen: set[str] = set()
    climbs = []
    for i, room in enumerate(room_stays):
        if i and room in seen and rank(room) > rank(room_stays[i - 1]):
            climbs.append(f"{room_stays[i - 1]} -> {room}")
        seen.add(room)
    return {"calls": len(calls), "stays": len(stays), "places": len(set(stays)),
            "room_visits": len(room_stays), "rooms": len(set(room_stays)), "climbs": len(climbs),
            "entries": dict(Counter(stays).most_common()), "climb_moves": dict(Counter(climbs).most_common()),
            "stay_sequence": stays}


def _config(tmp: Path) -> Path:
    import yaml

    tiny = ROOT / "tests" / "configs" / "kb_tiny.yaml"
    cfg = {"name": "walk", "tasks": [str(tiny)], "results_dir": str(tmp / "results"), "cache_dir": str(tmp / "cache"),
           "models": [{"name": "bm25"}, {"name": MINILM, "label": "MiniLM"}],
           "experiments": [{"type": "hybrid", "dense": "MiniLM", "fusion": "rrf", "k": [60]},
                           {"type": "rerank", "first": "bm25",
                            "reranker": {"name": MINILM, "kind": "bi-encoder", "label": "MiniLM"}, "depth": [5]}]}
    path = tmp / "walk.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _candidate_walk(cfg, tasks: list, keep_top_k, cache_path) -> None:
    """From the config to each candidate's run identity on each task: what deciding reuse needs (the config's
    depth and cache folder read beforehand, as run_benchmark reads them when it starts)."""
    from runners.execution.run import candidates_for

    try:  # issue 37: every identity of a config made at once, by the one identity function
        from runners.execution.candidates.run_identity import run_identities
    except ImportError:  # before: one (candidate, task) at a time
        from runners.results.identity import run_identity

        for cand in candidates_for(cfg):
            for task in tasks:
                run_identity(cand, task, keep_top_k, cache_path)
        return
    run_identities(candidates_for(cfg), tasks, keep_top_k, cache_path)


def measure() -> dict[str, dict[str, object]]:
    """The cold run's, the warm re-run's and the candidate walk's figures on the tiny config."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TQDM_DISABLE", "1")
    from runners.config.benchmark import BenchmarkConfig
    from runners.execution.run import run_benchmark

    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        cfg = BenchmarkConfig.from_file(_config(Path(tmp)))
        for phase in ("cold", "warm"):
            records = []
            calls = trace(lambda: records.extend(run_benchmark(cfg, show_progress=False)))
            failed = [f"{r.label} on {r.task}: {r.reason}" for r in records if r.status == "failed"]
            if failed:
                raise SystemExit("the walk's run failed: " + "; ".join(failed))
            out[phase] = {**walk_figures(calls), "statuses": dict(Counter(r.status for r in records))}
        from runners.execution.tasks import load_task

        tasks = [load_task(t, cfg) for t in cfg.tasks]
        walk = trace(_candidate_walk, cfg, tasks, cfg.keep_top_k, cfg.cache_path)
        out["candidates"] = {**walk_figures(walk), "statuses": {}}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true", help="the same walk (the tiny config is already the smallest)")
    ap.add_argument("--json", type=Path, help="write every figure (with the stay sequence) to this file")
    ap.add_argument("--trace", action="store_true", help="print the stay sequence of each phase")
    ap.add_argument("--top", type=int, default=12, help="files entered most, shown per phase")
    args = ap.parse_args()
    figures = measure()
    print(f"{'phase':<6} {'calls':>7} {'stays':>6} {'places':>7} {'room visits':>12} {'rooms':>6} {'climbs':>7}  runs")
    for phase, f in figures.items():
        print(f"{phase:<6} {f['calls']:>7} {f['stays']:>6} {f['places']:>7} {f['room_visits']:>12} {f['rooms']:>6} "
              f"{f['climbs']:>7}  {f['statuses']}")
    for phase, f in figures.items():
        print(f"\n{phase}: files entered most (stays)")
        for path, n in list(f["entries"].items())[:args.top]:
            print(f"  {n:>5}  {path}")
        print(f"{phase}: climbs back up, by move")
        for move, n in list(f["climb_moves"].items())[:args.top]:
            print(f"  {n:>5}  {move}")
        if args.trace:
            print(f"{phase}: stay sequence\n  " + "\n  ".join(f["stay_sequence"]))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
