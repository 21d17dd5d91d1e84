"""Every command works from a folder outside the project (issue #11: one rule for paths)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO

CLI = [sys.executable, "-m", "runners.cli"]


def _cli(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess:
    import os

    return subprocess.run(CLI + args, cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(REPO), **env})


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project copy: configs/tasks + configs/benchmarks + data, results_dir relative to the benchmark."""
    proj = tmp_path / "proj"
    shutil.copytree(REPO / "tests" / "fixtures" / "kb_tiny", proj / "data" / "kb_tiny")
    (proj / "configs" / "tasks").mkdir(parents=True)
    task = yaml.safe_load((REPO / "tests" / "configs" / "kb_tiny.yaml").read_text())
    task["source"]["path"] = "../../data/kb_tiny"
    (proj / "configs" / "tasks" / "tiny.yaml").write_text(yaml.safe_dump(task))
    (proj / "configs" / "benchmarks").mkdir()
    (proj / "configs" / "benchmarks" / "b.yaml").write_text(yaml.safe_dump(
        {"name": "b", "tasks": ["TinyKBRetrieval"], "models": [{"name": "bm25"}], "results_dir": "../../results"}))
    return proj


def test_run_and_stats_from_an_unrelated_folder(project: Path, tmp_path: Path, monkeypatch) -> None:
    """Paths resolve against the benchmark file, not the working folder. In-process with the working folder
    moved (a subprocess costs ~15 s of imports here); tests/test_newcomer_replay.py (slow) runs the same path
    as subprocesses from a folder outside the checkout."""
    from typer.testing import CliRunner

    from runners.cli import app

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    bench = project / "configs" / "benchmarks" / "b.yaml"
    run = CliRunner().invoke(app, ["run", "-c", str(bench)])
    assert run.exit_code == 0, run.output
    assert (project / "results" / "results").is_dir()  # results_dir resolves against the benchmark file
    assert not (elsewhere / "results").exists()
    stats = CliRunner().invoke(app, ["stats", "-c", str(bench), "--format", "json", "--resamples", "200"])
    assert stats.exit_code == 0, stats.output
    assert "TinyKBRetrieval" in stats.stdout


def test_tasks_list_finds_the_project_upward_or_by_option(project: Path, tmp_path: Path) -> None:
    sub = project / "data"
    assert "TinyKBRetrieval" in _cli(["tasks", "list"], sub).stdout
    outside = tmp_path / "outside"
    outside.mkdir()
    empty = _cli(["tasks", "list"], outside)
    assert empty.returncode == 2 and "--project" in empty.stderr and "Traceback" not in empty.stderr
    assert "TinyKBRetrieval" in _cli(["--project", str(project), "tasks", "list"], outside).stdout
    assert "TinyKBRetrieval" in _cli(["tasks", "list"], outside, PRIVATE_MTEB_PROJECT=str(project)).stdout


def test_version() -> None:
    out = _cli(["--version"], REPO)
    assert out.returncode == 0 and out.stdout.startswith("private-mteb ")
