"""Regenerate runners/analysis/compare/public_snapshot.json from a public results folder (results-repo layout).

The snapshot lets `private-mteb compare` show public context offline. It holds main scores only, for the
retrieval tasks of MTEB(eng, v2), BEIR (= MTEB(eng, v1) retrieval) and NanoBEIR, for the demo's models and a
handful of popular ones, with the revision the leaderboard would keep (mteb's join_revisions).

    python benchmarks/make_public_snapshot.py                       # from ../shared/public-results
    python benchmarks/make_public_snapshot.py --source ~/results --commit abc1234 --date 2026-09-01
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

BENCHMARKS = ["MTEB(eng, v2)", "BEIR", "NanoBEIR"]
MODELS = [
    "sentence-transformers/all-MiniLM-L6-v2",  # the demo's dense model
    "mteb/baseline-bm25s",  # the demo's BM25
    "sentence-transformers/all-MiniLM-L12-v2",
    "sentence-transformers/all-mpnet-base-v2",
    "sentence-transformers/multi-qa-MiniLM-L6-cos-v1",
    "BAAI/bge-small-en-v1.5",
    "BAAI/bge-base-en-v1.5",
    "intfloat/e5-small-v2",
    "intfloat/e5-base-v2",
    "intfloat/multilingual-e5-small",
    "thenlper/gte-small",
    "thenlper/gte-base",
    "Alibaba-NLP/gte-base-en-v1.5",
    "nomic-ai/nomic-embed-text-v1.5",
    "Snowflake/snowflake-arctic-embed-s",
    "Snowflake/snowflake-arctic-embed-m",
    "jinaai/jina-embeddings-v2-small-en",
    "minishlab/potion-base-8M",
    "mixedbread-ai/mxbai-embed-large-v1",
    "google/embeddinggemma-300m",
    "Qwen/Qwen3-Embedding-0.6B",
    "openai/text-embedding-3-small",
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path, default=REPO.parent / "shared" / "public-results",
                    help="results folder: <source>/results/<org__model>/<revision>/<Task>.json")
    ap.add_argument("--commit", default="f4cc6c8b", help="commit of embeddings-benchmark/results the folder holds")
    ap.add_argument("--date", default="2026-08-20", help="date of that commit")
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated model names")
    ap.add_argument("--out", type=Path, default=REPO / "runners" / "analysis" / "compare" / "public_snapshot.json")
    ap.add_argument("--smoke", action="store_true",
                    help="CI check: an empty source folder, one model, output to a temp file (never the snapshot)")
    args = ap.parse_args(argv)
    if args.smoke:
        import tempfile

        tmp = Path(tempfile.mkdtemp(prefix="snapshot-smoke-"))
        (tmp / "results").mkdir()
        args.source, args.out, args.models = tmp, tmp / "snapshot.json", MODELS[0]

    import mteb

    from runners.analysis.compare.public import FolderSource, snapshot_from_results

    tasks: dict[str, object] = {}
    benchmarks: dict[str, list[str]] = {}
    for name in BENCHMARKS:
        bench = mteb.get_benchmark(name)
        retrieval = [t for t in bench.tasks if t.metadata.type == "Retrieval"]
        benchmarks[bench.name] = [t.metadata.name for t in retrieval]
        for t in retrieval:
            tasks.setdefault(t.metadata.name, t)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    results = FolderSource(args.source).load(list(tasks.values()), models)
    source = {"repository": "embeddings-benchmark/results", "commit": args.commit, "date": args.date,
              "license": "CC0-1.0", "generated_by": "benchmarks/make_public_snapshot.py",
              "mteb_version": mteb.__version__}
    snap = snapshot_from_results(results, list(tasks.values()), source, benchmarks)
    missing = sorted(set(models) - set(snap["models"]))
    args.out.write_text(_dump(snap), encoding="utf-8")
    n_scores = sum(len(m["tasks"]) for m in snap["models"].values())
    print(f"wrote {args.out}: {len(snap['models'])} models, {n_scores} task scores"
          + (f"; no results for {', '.join(missing)}" if missing else ""))
    return 0


def _dump(snap: dict) -> str:
    """Readable JSON with one line per (model, task), so regenerating gives small diffs."""
    head = json.dumps({k: v for k, v in snap.items() if k != "models"}, indent=1)[:-2]
    models = []
    for name, entry in snap["models"].items():
        rows = ",\n".join(f"   {json.dumps(t)}: {json.dumps(r)}" for t, r in entry["tasks"].items())
        models.append(f'  {json.dumps(name)}: {{"tasks": {{\n{rows}\n  }}}}')
    return head + ',\n "models": {\n' + ",\n".join(models) + "\n }\n}\n"


if __name__ == "__main__":
    raise SystemExit(main())
