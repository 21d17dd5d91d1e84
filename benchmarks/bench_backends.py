"""Encode backends on SciFact vs plain `mteb.evaluate` with torch fp32: cold-run ratios and drift, in one run.

Each row is a cold run: `private-mteb run` of all-MiniLM-L6-v2 on the task from an empty embedding cache with that
encode backend (model load, encoding, search, evaluation; exported copies are built beforehand, once per machine),
and (a) plain `mteb.evaluate` with torch fp32, the model loaded inside the timing too. The runs are interleaved,
their order reversed every other repeat, and the load average is printed: on a shared machine only the ratios
mean something. Drift per backend: max |cosine difference| of every query and document vector to torch fp32's,
the nDCG@10 difference with its paired 95% CI and p (Holm over the backends), the share of queries whose top-10
changed (runners/analysis/cost/drift.py, as `private-mteb backends`).
Targets: fp32 ONNX/OpenVINO <= 0.7x with |dnDCG@10| <= 1e-4; int8 <= 0.4x with |dnDCG@10| <= 0.005, not significant.

    .venv/bin/python benchmarks/bench_backends.py                     # SciFact (tests/configs/scifact.yaml)
    .venv/bin/python benchmarks/bench_backends.py --backends onnx,onnx-int8 --repeats 2
    .venv/bin/python benchmarks/bench_backends.py --smoke             # the 12-page test task (CI)
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
ALL = "onnx,onnx-int8,openvino,openvino-bf16,openvino-int8"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default=str(REPO / "tests/configs/scifact.yaml"))
    ap.add_argument("--backends", default=ALL, help=f"comma-separated (default {ALL})")
    ap.add_argument("--repeats", type=int, default=1, help="cold runs of each, interleaved; medians compared")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--docs", type=int, default=None,
                    help="a SciFact subset: every document a test query is judged relevant to plus a seeded random "
                         "sample of the others, this many in all, all 300 queries (when the full task is too slow)")
    ap.add_argument("--beir", type=Path, default=REPO.parent / "shared" / "datasets" / "scifact",
                    help="BEIR folder --docs samples from")
    ap.add_argument("--smoke", action="store_true", help="tiny size: the 12-page test task, onnx only (CI runs this)")
    args = ap.parse_args()
    if args.smoke:
        if importlib.util.find_spec("onnxruntime") is None:
            print("onnxruntime is not installed: pip install 'private-mteb[onnx]'", file=sys.stderr)
            sys.exit(77)  # skipped (tests/test_benchmarks_smoke.py)
        args.task, args.backends = str(REPO / "tests/configs/kb_tiny.yaml"), "onnx,onnx-int8"

    import logging
    import warnings

    warnings.filterwarnings("ignore")
    logging.getLogger("mteb").setLevel(logging.ERROR)
    import mteb

    from runners.analysis.cost.drift import drift_rows
    from runners.cli.backends import parse_variants
    from runners.config.benchmark import BenchmarkConfig
    from runners.config.model_spec import ModelSpec
    from runners.execution.backends.backend_build import require
    from runners.execution.measure.backend_drift import (cold_run, max_cosine_difference, prepare, task_texts,
                                                 variant_specs)
    from runners.execution.encoding.models import load_model
    from runners.execution.run import load_task

    work = Path(tempfile.mkdtemp(prefix="bench-backends-"))
    if args.docs and not args.smoke:
        args.task = str(beir_subset(args.beir, args.docs, work / "subset"))
    if args.smoke:  # exported copies built afresh in the temp folder (the export path is part of what is checked)
        os.environ["PRIVATE_MTEB_EXPORT_CACHE"] = str(work / "exported")
    cfg = BenchmarkConfig(name="backends", tasks=[args.task], models=[{"name": MODEL}],
                          results_dir=str(work / "results"), encode={"batch_size": args.batch_size})
    specs = variant_specs(cfg.models[0], parse_variants(args.backends))
    for spec in specs[1:]:
        require(spec.backend, spec.precision)
    task = load_task(args.task)
    queries, docs = task_texts(task)
    name = task.metadata.name
    load_before = os.getloadavg()
    print(f"{name}: {len(docs):,} documents + {len(queries):,} queries, {MODEL}, batch {args.batch_size}; "
          f"{os.cpu_count()} CPUs, load average {load_before[0]:.1f} / {load_before[1]:.1f} (1 / 5 min) at start",
          flush=True)
    runs = prepare(cfg, specs, lambda msg: print(f"  {msg}", flush=True))
    mteb_s: list[float] = []
    profile: dict[str, dict[str, list[float]]] = {}
    mteb_score = float("nan")
    for r in range(args.repeats):
        order = ["mteb", *runs] if r % 2 == 0 else [*runs[::-1], "mteb"]
        for run in order:
            if run == "mteb":  # plain mteb.evaluate, torch fp32, no cache: the model load is timed like a run's
                fresh = load_task(args.task)
                t0 = time.perf_counter()
                res = mteb.evaluate(load_model(ModelSpec(name=MODEL)), fresh, cache=None,
                                    encode_kwargs={"batch_size": args.batch_size}, show_progress_bar=False)
                mteb_s.append(time.perf_counter() - t0)
                mteb_score = res.task_results[0].get_score()
                print(f"  run {r + 1}: plain mteb.evaluate {mteb_s[-1]:.1f} s", flush=True)
            else:
                spent = profile.setdefault(run.name, {"tokenise": [], "network": []})
                cold_run(cfg, run, task, name, (queries, docs), vectors=r == args.repeats - 1,
                         on_load=lambda model, sp=spent: timed(model, sp))
                print(f"  run {r + 1}: {run.name} {run.seconds[-1]:.1f} s (tokenise {spent['tokenise'][-1]:.1f} s, "
                      f"transformer network {spent['network'][-1]:.1f} s)", flush=True)
    ref = runs[0]
    rows = {row["variant"]: row for row in drift_rows(cfg.results_path, name, ref.name, [v.name for v in runs[1:]],
                                                      split=task.metadata.eval_splits[0])}
    base = statistics.median(mteb_s)
    load_after = os.getloadavg()
    print(f"\nload average {load_after[0]:.1f} / {load_after[1]:.1f} at the end; medians of {args.repeats} run(s)")
    print(f"{'run':<32} {'seconds':>8} {'vs mteb':>8} {'max|cos diff|':>13} {'nDCG@10':>8} {'diff [95% CI]':>28} "
          f"{'p Holm':>7} {'top-10 chg':>10}  target")
    print(f"{'plain mteb.evaluate, torch fp32':<32} {base:>8.1f} {1:>7.2f}x {'':>13} {mteb_score:>8.5f}")
    for run in runs:
        secs = statistics.median(run.seconds)
        label = f"private-mteb run, {run.tag if run is not ref else 'torch fp32'}"
        if run is ref:
            print(f"{label:<32} {secs:>8.1f} {secs / base:>7.2f}x {'0':>13} {run.scores['ndcg_at_10']:>8.5f}")
            continue
        row = rows[run.name]
        ci = f"{row['diff']:+.5f} [{row['diff_ci_low']:+.5f}, {row['diff_ci_high']:+.5f}]"
        int8 = run.spec.precision != "fp32"  # bf16 is lossy too: held to int8's drift bound (the issue sets none)
        ok = (secs / base <= (0.4 if int8 else 0.7)
              and abs(row["diff"]) <= (0.005 if int8 else 1e-4) and not (int8 and row["significant"]))
        print(f"{label:<32} {secs:>8.1f} {secs / base:>7.2f}x {max_cosine_difference(ref.vectors, run.vectors):>13.2e} "
              f"{row['mean']:>8.5f} {ci:>28} {row['p_holm']:>7.3f} {row['top10_changed']:>10.1%}  "
              f"{'OK' if ok else 'MISS'} ({'<= 0.4x, |d| <= 0.005, n.s.' if int8 else '<= 0.7x, |d| <= 1e-4'})")
    print(f"\nwhere a cold run's time goes (medians, seconds): {'run':<28} {'total':>7} {'tokenise':>9} "
          f"{'network':>8} {'rest':>6}")
    for run in runs:
        tok, net = (statistics.median(profile[run.name][k]) for k in ("tokenise", "network"))
        total = statistics.median(run.seconds)
        print(f"{'':<48} {run.tag if run is not ref else 'torch fp32':<28} {total:>7.1f} {tok:>9.1f} {net:>8.1f} "
              f"{total - tok - net:>6.1f}")
    threads = {run.threads for run in runs[1:]}
    print(f"intra-op threads of the exported runtimes: {', '.join(map(str, sorted(t for t in threads if t)))}")
    from benchmarks._network_profile import print_profile  # the repository root is on sys.path (above)

    print_profile(load_model(ModelSpec(name=MODEL)).model, queries, docs,
                  {run.tag if run is not ref else "torch fp32": statistics.median(profile[run.name]["network"])
                   for run in runs})


def timed(model: object, spent: dict[str, list[float]]) -> None:
    """Accumulate the seconds the loaded model spends tokenising and in its transformer network (a new entry each
    run); pooling, normalisation, batching, search, evaluation and the model load are the rest."""
    st = getattr(model, "model", model)
    spent["tokenise"].append(0.0)
    spent["network"].append(0.0)
    name = "preprocess" if hasattr(st, "preprocess") else "tokenize"

    def clock(func, key):  # noqa: ANN001, ANN202
        def wrapper(*a, **k):  # noqa: ANN002, ANN003, ANN202
            t0 = time.perf_counter()
            try:
                return func(*a, **k)
            finally:
                spent[key][-1] += time.perf_counter() - t0
        return wrapper

    setattr(st, name, clock(getattr(st, name), "tokenise"))
    st[0].forward = clock(st[0].forward, "network")


def beir_subset(beir: Path, n_docs: int, out: Path) -> Path:
    """A task YAML over a BEIR folder holding `n_docs` of `beir`'s documents: all judged relevant to a test query,
    then a seeded random sample of the rest; every test query and label kept."""
    import json
    import random

    qrels = (beir / "qrels" / "test.tsv").read_text().splitlines()
    relevant = {line.split("\t")[1] for line in qrels[1:] if line.strip()}
    lines = (beir / "corpus.jsonl").read_text().splitlines()
    ids = [json.loads(line)["_id"] for line in lines]
    others = [i for i in ids if i not in relevant]
    keep = relevant | set(random.Random(0).sample(others, max(0, min(len(others), n_docs - len(relevant)))))
    (out / "qrels").mkdir(parents=True)
    (out / "corpus.jsonl").write_text("".join(line + "\n" for line, i in zip(lines, ids) if i in keep))
    (out / "queries.jsonl").write_text((beir / "queries.jsonl").read_text())
    (out / "qrels" / "test.tsv").write_text("\n".join(qrels) + "\n")
    yaml_path = out / "subset.yaml"
    yaml_path.write_text(f"name: SciFactSubset{len(keep)}\ndescription: SciFact, {len(keep)} of its documents\n"
                         "source:\n  format: beir\n  path: .\n  splits: [test]\nsplits: [test]\nlicense: https://creativecommons.org/licenses/by-nc/2.0/\n"
                         "labels: expert\n")
    return yaml_path


if __name__ == "__main__":
    main()
