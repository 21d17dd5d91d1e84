"""What the judging tests share: a task copy with a pool file, and the real `labels serve` in a subprocess."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import REPO

URL = re.compile(r"http://127\.0\.0\.1:\d+/\?token=[A-Za-z0-9_-]+")


def write_task(tmp: Path, docs: dict[str, tuple[str, str]] | None = None, n_pool: int = 30) -> tuple[Path, Path]:
    """A BEIR task in `tmp` (the tiny KB, or `docs` id -> (title, text)) and a pool JSONL of unlabelled pairs."""
    import shutil

    data = tmp / "kb"
    shutil.copytree(REPO / "tests" / "fixtures" / "kb_tiny", data)
    if docs:
        with open(data / "corpus.jsonl", "a", encoding="utf-8") as f:
            for doc_id, (title, text) in docs.items():
                f.write(json.dumps({"_id": doc_id, "title": title, "text": text}) + "\n")
    yaml_path = tmp / "kb.yaml"
    yaml_path.write_text((REPO / "tests" / "configs" / "kb_tiny.yaml").read_text().replace("../fixtures/kb_tiny", "kb"))
    from custom_tasks.config import TaskConfig
    from custom_tasks.sources import load_collection

    cfg = TaskConfig.from_file(yaml_path)
    c = load_collection(cfg.source, cfg.base_dir, cfg.name)
    rows = [{"task": cfg.name, "split": "test", "query_id": q, "doc_id": d}
            for q in sorted(c.qrels["test"]) for d in (sorted(docs) if docs else sorted(c.corpus))
            if d not in c.qrels["test"][q]][:n_pool]
    pool = tmp / "pool.jsonl"
    pool.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return yaml_path, pool


class Server:
    """`private-mteb labels serve ... --port 0` as a real process; `.url` once it listens."""

    def __init__(self, *args: str, cwd: Path = REPO) -> None:
        env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen([sys.executable, "-m", "runners.cli", "labels", "serve", "--port", "0", *args],
                                     cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.output = ""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line and self.proc.poll() is not None:
                break
            self.output += line
            m = URL.search(line)
            if m:
                self.url = m.group()
                self.base = self.url.split("/?")[0]
                self.token = self.url.split("token=")[1]
                return
        self.proc.kill()
        raise AssertionError(f"server did not start: {self.output}")

    def kill9(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def step_through(page, steps: list[tuple[str, int | None]]) -> None:
    """Each (move, index): press the key, or click the button of a `prev`/`next` move, then wait until the page
    shows that index (None: no wait, the move is expected to do nothing)."""
    for move, index in steps:
        if move in ("prev", "next"):
            page.click(f"button[data-action='{move}']")
        else:
            page.keyboard.press(move)
        if index is not None:
            page.wait_for_selector(f"body[data-index='{index}']")


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


#: generated questions of the tiny KB as `questions generate` stores them (issue 38's contract), with one log
#: question and one already verified (neither is shown for verification)
GENERATED = [
    ("g1", "How do I install the NorthGate client on a Mac?", "vpn-mac"),
    ("g2", "What is the daily limit for meals when travelling?", "expense"),
    ("g3", "<img src=x onerror=\"window.__pwned='q'\"> how do I reset a forgotten password", "pwd"),
    ("g4", "Which network should guests use?", "wifi"),
    ("g5", "Who approves production deploys in Shipyard?", "deploy"),
]


def added_rows(generated: list[tuple[str, str, str]] = GENERATED) -> list[dict]:
    rows = [{"query_id": q, "query": text, "relevant": {}, "provenance": {"source_doc": doc, "prompt": "default"},
             "tags": {"source": "llm:fake/model-1", "stratum": "c0", "verified": False}}
            for q, text, doc in generated]
    rows.append({"query_id": "log1", "query": "vpn on mac", "relevant": {},
                 "tags": {"source": "log", "stratum": "head"}, "provenance": {"log_sha256": "0" * 64}})
    rows.append({"query_id": "g0", "query": "Which printers need the PaperCut driver?", "relevant": {"printer": 2},
                 "provenance": {"source_doc": "printer"}, "tags": {"source": "llm:fake/model-1", "verified": True}})
    return rows


def write_added(yaml_path: Path, rows: list[dict] | None = None) -> Path:
    """The task's added-questions file written by hand (`kb.added.jsonl`), named in the YAML's `source:`."""
    added = yaml_path.parent / "kb.added.jsonl"
    added.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in (rows or added_rows())),
                     encoding="utf-8")
    text = yaml_path.read_text()
    if "added_questions:" not in text:
        yaml_path.write_text(text.replace("  format: beir\n", "  format: beir\n  added_questions: kb.added.jsonl\n"))
    return added
