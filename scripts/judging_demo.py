#!/usr/bin/env python
"""A real judging session on the demo, driven in headless Chromium: two raters grade the same pooled pairs.

What it does, in a scratch copy of the demo project (the repository is not touched):
  1. `private-mteb run` on the demo (MiniLM vs BM25), then `labels pool --depth 3`, and keeps the first
     N pairs of the (already shuffled) pool: the session's share;
  2. `labels plan --raters ana,bo --overlap 1.0` (both raters grade every pair: agreement is measured on all);
  3. starts `labels serve` once per rater and drives each page with the keyboard in headless Chromium.
     Both "raters" read the screen: the share of the question's words marked in the document decides the
     grade (>= 60%: 2, >= 30%: 1, else 0). bo then disagrees on purpose (seeded): one grade up or down on
     20% of the pairs, 0 <-> 2 on 5%, and one skip. These are stand-ins for people, and say so;
  4. `labels agreement`, `labels merge` and `run` again (re-scored from the embedding cache).

Writes docs/judging-demo.png (ana's screen) and docs/judging-demo.txt (the commands and their output).
Needs the `playwright` package and Debian's `chromium` (as tests/test_judging_browser.py; no browser download).
Usage: .venv/bin/python scripts/judging_demo.py [--items 60] [--keep DIR] [--transcript]
(--transcript: print the transcript alone, as docs/judging.md shows it; the checkout's MiniLM vectors are copied in)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("PRIVATE_MTEB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]
URL = re.compile(r"http://127\.0\.0\.1:\d+/\?token=[A-Za-z0-9_-]+")
TASK = "NorthwindKBRetrieval"


def cli(project: Path, *args: str, log: list[str]) -> str:
    """Run `private-mteb ARGS` in the scratch project; keep the command and its output for the transcript."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "PRIVATE_MTEB_PROJECT": str(project), "COLUMNS": "120"}
    out = subprocess.run([sys.executable, "-m", "runners.cli", *args], cwd=project, env=env, capture_output=True,
                         text=True, timeout=1800)
    text = (out.stdout + out.stderr).rstrip()
    if out.returncode != 0:
        raise SystemExit(f"private-mteb {' '.join(args)} failed ({out.returncode}):\n{text}")
    log.append(f"$ private-mteb {' '.join(args)}\n{text}\n")
    return text


def start(project: Path, rater: str, pool: Path) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PRIVATE_MTEB_PROJECT": str(project), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "runners.cli", "labels", "serve", "-t", TASK, "--pool", str(pool),
                             "--rater", rater, "--port", "0"], cwd=project, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    seen = ""
    for line in proc.stdout:
        seen += line
        m = URL.search(line)
        if m:
            return proc, m.group()
    raise SystemExit(f"labels serve did not start:\n{seen}")


def read_grade(page) -> int:
    """The stand-in rater's reading: how many of the question's words the document holds (the marks)."""
    terms = page.evaluate("""() => {
        const q = document.getElementById('query').textContent.toLowerCase();
        const marks = [...document.querySelectorAll('#text mark, #title mark')].map(m => m.textContent.toLowerCase());
        const words = [...new Set((q.match(/[\\p{L}\\p{N}_]+/gu) || []).filter(w => w.length >= 3))];
        return [words.length, words.filter(w => marks.includes(w)).length];
    }""")
    share = terms[1] / max(1, terms[0])
    return 2 if share >= 0.6 else 1 if share >= 0.3 else 0


def drive(browser, url: str, n: int, disagree: np.random.Generator | None, shot: Path | None) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(url, wait_until="load")
    page.wait_for_selector("body[data-index]")
    shot_taken = False
    for i in range(n):
        if page.get_attribute("body", "data-index") == "done":
            break
        grade, key = read_grade(page), None
        if disagree is not None:
            u = disagree.random()
            if i == 7:
                key = "s"  # bo skips one pair
            elif u < 0.05:
                grade = 2 - grade if grade != 1 else grade
            elif u < 0.25:
                grade = int(np.clip(grade + (1 if disagree.random() < 0.5 else -1), 0, 2))
        if shot is not None and not shot_taken and i >= 4 and page.locator("#text mark").count() >= 3:
            page.screenshot(path=str(shot))  # a pair whose document holds several of the question's words
            shot_taken = True
        page.keyboard.press(key or str(grade))
        page.wait_for_selector(f"body[data-saved='{i + 1}']", timeout=15_000)
    page.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=60, help="pairs each rater grades")
    ap.add_argument("--keep", type=Path, help="scratch project folder to keep (default: a temporary one)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--transcript", action="store_true",
                    help="print the transcript alone (scripts/docs-outputs.sh pastes it into docs/judging.md)")
    args = ap.parse_args()
    if CHROMIUM is None:
        raise SystemExit("headless Chromium not found (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    project = args.keep or Path(tempfile.mkdtemp(prefix="judging-demo-"))
    for part in ("configs/tasks/northwind-kb.yaml", "configs/benchmarks/demo.yaml", "data/demo_kb"):
        src, dst = REPO / part, project / part
        dst.parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dst)
    cache = REPO / "results" / "private-mteb" / "embeddings"
    if cache.is_dir():  # the checkout's MiniLM vectors (not its reranker scores): the first run encodes nothing
        shutil.copytree(cache, project / "results" / "private-mteb" / "embeddings",
                        ignore=lambda d, names: ["rerank"] if Path(d) == cache else [])
    log: list[str] = []
    cli(project, "run", "-c", "configs/benchmarks/demo.yaml", log=log)
    log.clear()  # the transcript starts at the judging
    cli(project, "labels", "pool", "-c", "configs/benchmarks/demo.yaml", "--depth", "3", "-o", "pool.csv", log=log)
    rows = (project / "pool.jsonl").read_text(encoding="utf-8").splitlines()[: args.items]
    (project / "session.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    log.append(f"# the session: the first {len(rows)} pairs of the shuffled pool -> session.jsonl\n")
    cli(project, "labels", "plan", "-t", TASK, "--pool", "session.jsonl", "--raters", "ana,bo", "--overlap", "1.0",
        log=log)
    shot = REPO / "docs" / "judging-demo.png"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            for rater, rng, picture in (("ana", None, shot), ("bo", np.random.default_rng(args.seed), None)):
                proc, url = start(project, rater, project / "session.jsonl")
                try:
                    drive(browser, url, len(rows), rng, picture)
                finally:
                    proc.terminate()
                    proc.wait(10)
        finally:
            browser.close()
    for rater in ("ana", "bo"):
        n = len((project / "labels" / TASK / f"{rater}.jsonl").read_text().splitlines())
        log.append(f"# {rater} graded in the app (headless Chromium, keyboard): {n} lines in labels/{TASK}/{rater}.jsonl\n")
    cli(project, "labels", "agreement", "-t", TASK, "--show", "8", log=log)
    cli(project, "labels", "merge", "-t", TASK, log=log)
    cli(project, "run", "-c", "configs/benchmarks/demo.yaml", log=log)
    transcript = "\n".join(log).replace(str(project), ".")  # the scratch copy's path is the reader's checkout
    (REPO / "docs" / "judging-demo.txt").write_text(transcript, encoding="utf-8")
    print(transcript)
    if args.transcript:
        if not args.keep:
            shutil.rmtree(project, ignore_errors=True)
        return
    print(f"screenshot: {shot}\nscratch project: {project}")
    summary = json.loads(cli(project, "labels", "agreement", "-t", TASK, "--format", "json", log=[]))
    print("sentence:", summary["sentence"])


if __name__ == "__main__":
    main()
