#!/usr/bin/env python
"""Prediction-powered verdicts on the demo, the path a team takes (issue 47), in a scratch copy of the demo project.

  1. `private-mteb run` on the demo (MiniLM vs BM25; the checkout's MiniLM vectors copied in: nothing re-encoded);
  2. `configs/benchmarks/ppi-demo.yaml`: judge-demo.yaml with `labels: {use_llm: prediction_powered}`;
  3. the LLM judges the pool: `labels judge`, the judge being tests/fake_judge.py, a STAND-IN for the team's own
     model server (a word-overlap rule with a tenth of its answers one grade off; not a model);
  4. `labels plan --order sample`: a seeded random sample of questions, stratified by topic, every pooled pair of
     each for people to judge; `labels serve` says it serves that sample in its drawn order;
  5. the people: STAND-INS too (a script, not people), grading every planned pair by the share of the question's
     words in the document (>= 60%: 2, >= 30%: 1, else 0; the rule of scripts/judging_demo.py's raters, read from
     the texts instead of the screen), written as a grades file and `labels import`ed;
  6. `run` again (the labels changed: re-scored from the embedding cache), then `stats`: the prediction-powered
     figures and verdicts beside the LLM-only and human-only ones.

Usage: .venv/bin/python scripts/ppi_demo.py [--questions 40] [--keep DIR]
(prints the transcript docs/judging.md shows: the commands and their output, the scratch folder shown as ".")
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TASK = "NorthwindKBRetrieval"
PORT = 8099  # judge-demo.yaml's: the judge's identity names its URL
WORD = re.compile(r"\w+")


def env(project: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "PRIVATE_MTEB_PROJECT": str(project), "COLUMNS": "120", "PYTHONUNBUFFERED": "1"}


def cli(project: Path, *args: str, log: list[str], show: bool = True) -> str:
    """Run `private-mteb ARGS` in the scratch project; keep the command and its output for the transcript."""
    out = subprocess.run([sys.executable, "-m", "runners.cli", *args], cwd=project, env=env(project),
                         capture_output=True, text=True, timeout=1800)
    text = (out.stdout + out.stderr).rstrip()
    if out.returncode != 0:
        raise SystemExit(f"private-mteb {' '.join(args)} failed ({out.returncode}):\n{text}")
    if show:
        log.append(f"$ private-mteb {' '.join(args)}\n{text}\n")
    return text


def person_grade(query: str, title: str, text: str) -> int:
    """The stand-in person's grade: the share of the question's words (3 letters or more) in the document."""
    words = {w for w in WORD.findall(query.lower()) if len(w) >= 3}
    seen = set(WORD.findall(f"{title} {text}".lower()))
    share = len(words & seen) / max(1, len(words))
    return 2 if share >= 0.6 else 1 if share >= 0.3 else 0


def serve_lines(project: Path, log: list[str]) -> None:
    """`labels serve` for ana: its first lines (what it serves, in which order), then stopped."""
    args = ["labels", "serve", "-c", "configs/benchmarks/ppi-demo.yaml", "--rater", "ana", "--port", "0"]
    proc = subprocess.Popen([sys.executable, "-m", "runners.cli", *args], cwd=project, env=env(project),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = []
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("judging app:"):
            seen.append("judging app: http://127.0.0.1:PORT/?token=...   (the URL to open; stopped here)")
            break
        seen.append(line.rstrip())
    proc.terminate()
    proc.wait(timeout=30)
    log.append(f"$ private-mteb {' '.join(args)}\n" + "\n".join(seen) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=40)
    ap.add_argument("--keep", type=Path, help="work in this folder and keep it (default: a temporary one)")
    args = ap.parse_args()
    project = args.keep or Path(tempfile.mkdtemp(prefix="ppi-demo-"))
    for name in ("configs", "data"):
        if not (project / name).exists():
            shutil.copytree(REPO / name, project / name)
    cache = REPO / "results" / "private-mteb" / "embeddings"
    if cache.is_dir() and not (project / "results").exists():  # the checkout's MiniLM vectors: nothing re-encoded
        shutil.copytree(cache, project / "results" / "private-mteb" / "embeddings",
                        ignore=lambda d, names: ["rerank"] if Path(d) == cache else [])
    log: list[str] = []
    judge = None
    try:
        cli(project, "run", "-c", "configs/benchmarks/demo.yaml", log=log, show=False)
        text = (project / "configs/benchmarks/judge-demo.yaml").read_text()
        text = re.sub(r"(?m)^labels:\n  use_llm: false.*$", "labels:\n  use_llm: prediction_powered   # LLM grades "
                      "enter inference only, corrected on the human-judged sample", text)
        (project / "configs/benchmarks/ppi-demo.yaml").write_text(text.replace("name: judge-demo", "name: ppi-demo"))
        log.append("# configs/benchmarks/ppi-demo.yaml: judge-demo.yaml with `labels: {use_llm: prediction_powered}`\n")
        judge = subprocess.Popen([sys.executable, str(REPO / "tests" / "fake_judge.py"), "--port", str(PORT)],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert judge.stdout is not None
        log.append(f"$ python tests/fake_judge.py --port {PORT} &\n{judge.stdout.readline().rstrip()}\n")
        time.sleep(0.2)
        cli(project, "labels", "judge", "-c", "configs/benchmarks/ppi-demo.yaml", log=log)
        cli(project, "labels", "plan", "-c", "configs/benchmarks/ppi-demo.yaml", "--order", "sample", "--questions",
            str(args.questions), "--stratify", "topic", "--raters", "ana,bo", "--overlap", "0", log=log)
        serve_lines(project, log)
        plan = json.loads((project / "labels" / TASK / "plan.json").read_text())
        corpus = {d["_id"]: d for d in map(json.loads, (project / "data/demo_kb/corpus.jsonl").open())}
        queries = {str(q["query_id"]): q["query"] for q in
                   map(json.loads, (project / "data/demo_kb/evalset.jsonl").open())}
        rows = []
        for rater, keys in plan["raters"].items():
            for split, q, d in keys:
                query, doc = queries[q], corpus[d]
                rows.append({"query_id": q, "doc_id": d, "split": split,
                             "grade": person_grade(query, doc.get("title") or "", doc["text"]), "rater": rater})
        with open(project / "sample-grades.csv", "w", newline="") as f:
            w = csv.DictWriter(f, ["query_id", "doc_id", "split", "grade"], extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)
        log.append(f"# the people (STAND-INS: a script grading by the share of the question's words in the "
                   f"document) judge all {len(rows)} planned pairs -> sample-grades.csv\n")
        cli(project, "labels", "import", "sample-grades.csv", "-t", TASK, log=log)
        cli(project, "run", "-c", "configs/benchmarks/ppi-demo.yaml", log=log, show=False)
        log.append("$ private-mteb run -c configs/benchmarks/ppi-demo.yaml   # re-scored on the new labels (from the "
                   "embedding cache; output left out)\n")
        cli(project, "stats", "-c", "configs/benchmarks/ppi-demo.yaml", "-m", "ndcg_at_10", log=log)
    finally:
        if judge is not None:
            judge.terminate()
            judge.wait(timeout=30)
        if args.keep is None:
            shutil.rmtree(project, ignore_errors=True)
    print("\n".join(log).replace(str(project), "."))


if __name__ == "__main__":
    main()
