"""Issue 19 item 7: `check` / `compare` take `-c CONFIG` (results_dir from it) and work from outside the project."""

from __future__ import annotations

import os
import subprocess
import sys

import yaml
from typer.testing import CliRunner

from conftest import REPO
from fake_results import scores, write_model
from runners.cli import app
from tests.test_compare import write_result

runner = CliRunner()
DEMO_TASK = "NorthwindKBRetrieval"


def _bench(tmp_path, results, tasks) -> str:
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump({"name": "b", "tasks": tasks, "models": [{"name": "acme/one"}],
                                    "results_dir": str(results)}))
    return str(path)


def test_check_reads_results_dir_from_config(tmp_path, monkeypatch):
    results, base = tmp_path / "elsewhere", tmp_path / "base"
    write_model(results, "acme/one", "T", scores(0.6, 1))
    write_model(base, "acme/one", "T", scores(0.6, 1))
    monkeypatch.chdir(tmp_path)  # no ./results here: the candidate folder comes from the config
    out = runner.invoke(app, ["check", "--baseline", str(base), "-c", _bench(tmp_path, results, ["T"]),
                              "--resamples", "200"])
    assert out.exit_code == 0, out.output
    assert "T: one -> one: PASS" in out.output
    missing = runner.invoke(app, ["check", "--baseline", str(base), "--resamples", "200"])
    assert missing.exit_code == 2  # without -c: ./results, which does not exist


def test_compare_with_config_from_outside_the_project(tmp_path):
    """A fresh process outside the project: the config's task is known (no 'skipped: no such task' note)."""
    results = tmp_path / "res"
    write_result(results, "acme/one", "r1", DEMO_TASK, 0.61)
    write_result(results, "acme/two", "r1", DEMO_TASK, 0.42)
    cfg = _bench(tmp_path, results, [str(REPO / "configs" / "tasks" / "northwind-kb.yaml")])
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    env.pop("PRIVATE_MTEB_PROJECT", None)
    proc = subprocess.run([sys.executable, "-m", "runners.cli", "compare", "-c", cfg, "--private-only"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "no such task" not in proc.stdout + proc.stderr
    assert "acme/one" in proc.stdout and "0.61" in proc.stdout


def test_init_in_a_project_subfolder_uses_the_projects_configs(tmp_path, monkeypatch):
    import shutil

    monkeypatch.delenv("PRIVATE_MTEB_PROJECT", raising=False)
    project = tmp_path / "proj"
    (project / "configs" / "benchmarks").mkdir(parents=True)
    data = project / "data" / "beir_mini"
    shutil.copytree(REPO / "tests" / "fixtures" / "beir_mini", data)
    monkeypatch.chdir(project / "data")
    res = runner.invoke(app, ["init", "beir_mini"])
    assert res.exit_code == 0, res.output
    assert (project / "configs" / "tasks" / "beir-mini.yaml").is_file()
    assert not (project / "data" / "configs").exists()  # no second configs/ in the sub-folder


def test_tasks_validate_outside_a_project_says_where_it_looked_and_how_to_point(tmp_path, monkeypatch):
    monkeypatch.delenv("PRIVATE_MTEB_PROJECT", raising=False)
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["tasks", "validate", "TinyKBRetrieval"])
    assert res.exit_code == 2
    line = " ".join(res.output.split())
    assert str(tmp_path) in line and "--project DIR" in line and "-c BENCHMARK.yaml" in line, line
    # -c: the name is looked up in the benchmark's project
    tiny = yaml.safe_load((REPO / "tests" / "configs" / "kb_tiny.yaml").read_text())
    tiny["source"]["path"] = str(REPO / "tests" / "fixtures" / "kb_tiny")
    (tmp_path / "proj" / "configs" / "tasks").mkdir(parents=True)
    (tmp_path / "proj" / "configs" / "tasks" / "tiny.yaml").write_text(yaml.safe_dump(tiny))
    bench = _bench(tmp_path / "proj" / "configs", tmp_path / "results", ["TinyKBRetrieval"])
    ok = runner.invoke(app, ["tasks", "validate", "TinyKBRetrieval", "-c", bench])
    assert ok.exit_code == 0, ok.output
    assert "ok TinyKBRetrieval" in ok.output


def test_compare_results_outside_the_cwd_find_the_tasks_of_their_project(tmp_path, monkeypatch):
    """`compare --results DIR` (no -c) from another folder: the tasks come from the project DIR lies in, not the cwd;
    results that lie in no project get a note saying how to point at one."""
    from runners.analysis.compare.compare import load_private

    monkeypatch.delenv("PRIVATE_MTEB_PROJECT", raising=False)
    monkeypatch.delenv("PRIVATE_MTEB_TASKS_DIR", raising=False)
    name = f"DiscoveryProbe{tmp_path.name.replace('-', '').replace('_', '')}Retrieval"  # never registered before
    tiny = yaml.safe_load((REPO / "tests" / "configs" / "kb_tiny.yaml").read_text())
    tiny.update(name=name, source={**tiny["source"], "path": str(REPO / "tests" / "fixtures" / "kb_tiny")})
    project = tmp_path / "proj"
    (project / "configs" / "tasks").mkdir(parents=True)
    (project / "configs" / "tasks" / "probe.yaml").write_text(yaml.safe_dump(tiny))
    write_result(project / "results", "acme/one", "r1", name, 0.61)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")

    _, private, notes = load_private(project / "results")
    assert private == [name] and not any("no such task" in n for n in notes), notes

    lone = tmp_path / "lone"  # results in no project: skipped, and the note says how to point at the project
    write_result(lone, "acme/one", "r1", name + "X", 0.5)
    _, private, notes = load_private(lone)
    note = next(n for n in notes if "no such task" in n)
    assert name + "X" in note and "-c BENCHMARK.yaml" in note and "--project DIR" in note, note
