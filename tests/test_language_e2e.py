"""Issue 35, "Done when" (languages), end to end as subprocesses from a project outside the checkout: the generated
Romanian collection from `init` to `run` to `check`. init detects Romanian and writes ron-Latn; a changed
`languages:` re-runs BM25 (never the stored figure of the other analyzer) and stores what a fresh run stores; the
gate sees what the wrong language costs (BM25 with English's analyzer drops significantly: exit 1) and passes once
the language is right again; an invalid code is one line naming the file with the nearest valid code, exit 2.
BM25 only (MiniLM re-encoding 168 texts would add a minute without testing anything about languages)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from tests.romanian_fixture import write_romanian_collection

pytestmark = pytest.mark.slow


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRIVATE_MTEB_")}
    env.update(PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               TOKENIZERS_PARALLELISM="false", COLUMNS="400")
    return subprocess.run([sys.executable, "-m", "runners.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=900)


def _ok(proc: subprocess.CompletedProcess, code: int = 0) -> str:
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    return " ".join(proc.stdout.split())


def _set_languages(task_yaml: Path, languages: str) -> None:
    text = task_yaml.read_text(encoding="utf-8")
    line = next(ln for ln in text.splitlines() if ln.startswith("languages:"))
    task_yaml.write_text(text.replace(line, f"languages: {languages}"), encoding="utf-8")


def _bm25(results: Path) -> float:
    """BM25's nDCG@10 as mteb stored it in the results folder."""
    [scores] = [p for p in results.rglob("RoKbRetrieval.json") if "bm25" in str(p).lower()]
    return json.loads(scores.read_text())["scores"]["test"][0]["ndcg_at_10"]


def test_romanian_collection_init_run_check(tmp_path):
    project = tmp_path / "proj"
    write_romanian_collection(project / "data" / "ro_kb")
    (project / "configs").mkdir()
    said = _ok(_cli(project, "init", "data/ro_kb"))
    assert "documents: Romanian 100% → languages: [ron-Latn]" in said, said
    task_yaml, bench_yaml = project / "configs/tasks/ro-kb.yaml", project / "configs/benchmarks/ro-kb.yaml"
    assert yaml.safe_load(task_yaml.read_text(encoding="utf-8"))["languages"] == ["ron-Latn"]
    bench = yaml.safe_load(bench_yaml.read_text(encoding="utf-8"))
    bench["models"] = [m for m in bench["models"] if m["name"] == "bm25"]
    bench.pop("experiments", None)  # with the multilingual extra, init adds the dense model's BM25 hybrid
    bench_yaml.write_text(yaml.safe_dump(bench), encoding="utf-8")

    _ok(_cli(project, "run"))
    romanian = _bm25(project / "results")
    shutil.copytree(project / "results", project / "base")

    _set_languages(task_yaml, "[eng-Latn]")  # the analyzer init used to choose for every collection
    rerun = _ok(_cli(project, "run"))
    assert "done: BM25 on RoKbRetrieval" in rerun and "cached" not in rerun, rerun  # re-run, not the stored figure
    assert "lint RoKbRetrieval: languages differ: 96" in rerun, rerun  # and run says the language looks wrong
    english = _bm25(project / "results")
    fresh_dir = tmp_path / "fresh"
    shutil.copytree(project, fresh_dir, ignore=shutil.ignore_patterns("results", "base"))
    _ok(_cli(fresh_dir, "run"))
    assert english == _bm25(fresh_dir / "results")  # what a fresh run stores, to the last digit
    assert romanian > english + 0.05, (romanian, english)

    gate = _cli(project, "check", "--baseline", "base", "--resamples", "2000")
    assert gate.returncode == 1, gate.stdout + gate.stderr  # the wrong language: a significant drop
    assert "BM25 -> BM25: FAIL" in " ".join(gate.stdout.split())

    _set_languages(task_yaml, "[ron-Latn]")
    _ok(_cli(project, "run"))
    assert _bm25(project / "results") == romanian
    assert "BM25 -> BM25: PASS" in _ok(_cli(project, "check", "--baseline", "base", "--resamples", "2000"))

    _set_languages(task_yaml, "[ro]")
    bad = _cli(project, "run")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr, bad.stderr
    lines = [ln for ln in (bad.stdout + bad.stderr).splitlines() if ln.strip()]
    assert len(lines) == 1 and "ro-kb.yaml" in lines[0] and "`ro`: did you mean `ron-Latn`?" in lines[0], lines
