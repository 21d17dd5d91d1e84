"""The newcomer path of issue 29, replayed end to end as subprocesses from a folder outside the checkout.

A generated export as teams ship it: the corpus and the labels as top-level JSON arrays, the questions as a
';'-separated CSV, column names init has to work out (`id`/`headline`/`body`, `query number`, `doc`,
`relevance`), grades where 1 means best, two empty documents and one label for a removed document. The path:
`init` (validation fails: a draft, said so) -> `tasks validate` (every problem at once) -> fix the label and
uncomment the suggested `grades_map:` -> `init` again (replaces the draft) -> `run` (BM25 and MiniLM) ->
`stats` -> `check` (green against a copy of the run), none of them with `-c`: a project with one benchmark
config needs none.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

pytestmark = pytest.mark.slow

TOPICS = ["vpn", "password", "printer", "expenses", "laptop", "wifi", "email", "badge", "parking", "travel"]


def _export(folder: Path) -> None:
    rng = random.Random(29)
    folder.mkdir(parents=True)
    docs = []
    for i in range(60):
        t = TOPICS[i % len(TOPICS)]
        words = " ".join(rng.choice(TOPICS) for _ in range(6))
        docs.append({"id": f"KB-{i:03d}", "headline": f"{t} guide {i}", "body": f"How to handle {t} issue {i}: {words}."})
    docs[7]["body"] = docs[7]["headline"] = ""  # two empty documents: warnings, never errors
    docs[13]["body"], docs[13]["headline"] = "   ", ""
    (folder / "corpus.json").write_text(json.dumps(docs, indent=2), encoding="utf-8")
    rows = ["query number;question"] + [f'{q};"my {TOPICS[q % 10]} issue {q}; what now?"' for q in range(1, 21)]
    (folder / "queries.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    labels = []
    for q in range(1, 21):
        labels.append({"query number": q, "doc": f"KB-{q:03d}", "relevance": 1})  # 1 = best
        labels.append({"query number": q, "doc": f"KB-{q + 20:03d}", "relevance": 2 + q % 3})
    labels.append({"query number": 3, "doc": "KB-999", "relevance": 2})  # a removed document
    (folder / "qrels.json").write_text(json.dumps(labels), encoding="utf-8")


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRIVATE_MTEB_")}
    env.update(PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               TOKENIZERS_PARALLELISM="false", COLUMNS="200")
    return subprocess.run([sys.executable, "-m", "runners.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)


def test_newcomer_path_from_an_export_to_a_green_check(tmp_path):
    project = tmp_path / "team-project"
    assert not project.resolve().is_relative_to(REPO)
    _export(project / "export")

    first = _cli(project, "init", "export")
    out = first.stdout + first.stderr
    assert first.returncode == 2, out
    assert "qrels.json:1: label for unknown document 'KB-999'" in out and "wrote DRAFT" in out, out
    task = project / "configs" / "tasks" / "export.yaml"
    bench = project / "configs" / "benchmarks" / "export.yaml"
    text = task.read_text()
    assert text.startswith("# DRAFT") and "query_id: query number" in text and "text: body" in text
    assert "# grades_map: {1: 2, 2: 1, 3: 0, 4: 0}" in text

    val = _cli(project, "tasks", "validate", "configs/tasks/export.yaml")
    assert val.returncode == 2 and "KB-999" in val.stderr and "Traceback" not in val.stderr, val.stderr

    labels = json.loads((project / "export" / "qrels.json").read_text())
    (project / "export" / "qrels.json").write_text(json.dumps([r for r in labels if r["doc"] != "KB-999"]))
    task.write_text(text.replace("  # grades_map:", "  grades_map:"))
    again = _cli(project, "init", "export")
    assert again.returncode == 0, again.stdout + again.stderr
    assert "empty_document x2" in again.stdout and not task.read_text().startswith("# DRAFT")
    assert yaml.safe_load(task.read_text())["source"]["grades_map"] == {1: 2, 2: 1, 3: 0, 4: 0}

    ok = _cli(project, "tasks", "validate", "configs/tasks/export.yaml")
    flat = " ".join(ok.stdout.split())  # each example at its file:line (issue 36), wrapped by the terminal
    assert ok.returncode == 0 and "warning empty_document x2" in flat, ok.stdout
    assert "KB-007 at export/corpus.json:37, KB-013 at export/corpus.json:67" in flat, ok.stdout

    assert bench.is_file()
    run = _cli(project, "run")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "BM25" in run.stdout and "all-MiniLM-L6-v2" in run.stdout and "ExportRetrieval" in run.stdout

    stats = _cli(project, "stats")
    assert stats.returncode == 0 and "ExportRetrieval" in stats.stdout, stats.stdout + stats.stderr

    shutil.copytree(project / "results", project / "baseline-results")
    check = _cli(project, "check", "--baseline", "baseline-results", "--candidate", "results")
    assert check.returncode == 0 and "PASS" in check.stdout, check.stdout + check.stderr
