"""Names and revisions from a config never write outside results_dir / cache_dir (issue 20.1).

Each hostile value (absolute path, `..`, separators, NUL, control characters, > 255 bytes) goes into a
model name, revision, label, public name, task name or experiment label of a real `run` (BM25 and the
cheap identity encoder). A value that becomes a path component is either sanitised the way model names
are (org/name -> org__name) or refused with one line naming the config file and line; a shown-only value
(label, public name) may hold anything but control characters. Either way, nothing is created outside the
results and cache folders.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from conftest import TINY_YAML
from custom_tasks.errors import CollectionError
from runners.cli import app

runner = CliRunner()
NP = {"name": "test/np", "factory": "tests.identity_encoder:NumpyEncoder", "revision": "r1"}


def _values(root: Path) -> dict[str, str]:
    return {"absolute": str(root / "escape"), "dotdot": "../../../../escape", "parent": "..",
            "separator": "a/../../b", "backslash": "a\\..\\b", "nul": "a\x00b", "escape": "a\x1b]0;x\x07b",
            "long": "x" * 300}


def _project(tmp_path: Path, model: dict, task_name: str | None = None, experiments: list | None = None) -> Path:
    """A project four folders deep (so `../..` values land inside tmp_path, where the test looks)."""
    project = tmp_path / "a" / "b" / "c" / "project"
    project.mkdir(parents=True)
    task = project / "task.yaml"
    data = yaml.safe_load(TINY_YAML.read_text())
    data["source"]["path"] = str((TINY_YAML.parent / data["source"]["path"]).resolve())
    if task_name is not None:
        data["name"] = task_name
    task.write_text(yaml.safe_dump(data))
    cfg = {"name": "hostile", "tasks": [str(task)], "models": [model, {"name": "bm25"}],
           "results_dir": "results", "cache_dir": "cache", "experiments": experiments or []}
    (project / "bench.yaml").write_text(yaml.safe_dump(cfg))
    return project


def _files(root: Path) -> set[Path]:
    return {Path(d) / f for d, _, files in os.walk(root) for f in files} | {Path(d) for d, _, _ in os.walk(root)}


def _run_and_check(tmp_path: Path, project: Path) -> tuple[int, str]:
    before = _files(tmp_path)
    res = runner.invoke(app, ["run", "-c", str(project / "bench.yaml")])
    created = _files(tmp_path) - before
    inside = (project / "results", project / "cache")
    outside = sorted(str(p) for p in created if not any(p == d or d in p.parents for d in inside))
    assert outside == [], f"created outside results_dir/cache_dir: {outside}\n{res.output}"
    assert "Traceback" not in res.output and "internal error" not in res.output, res.output
    return res.exit_code, res.output


def _refused(project: Path, config: str, output: str, field: str) -> None:
    assert output.startswith(f"error: {project / config}:"), output
    line = output.split(f"{project / config}:", 1)[1].split(":", 1)[0]
    assert line.isdigit(), output  # the config line of the value
    assert field in output and "cannot name a folder" in output or "control character" in output or \
        "must start with a letter" in output, output


@pytest.mark.parametrize("kind", ["absolute", "dotdot", "parent", "separator", "backslash", "nul", "escape", "long"])
def test_revision_outside_the_results_folder_is_refused(tmp_path, kind):
    value = _values(tmp_path / "a" / "b")[kind]
    project = _project(tmp_path, {**NP, "revision": value})
    code, output = _run_and_check(tmp_path, project)
    assert code == 2
    _refused(project, "bench.yaml", output, "revision")


@pytest.mark.parametrize("kind", ["absolute", "dotdot", "separator", "parent", "nul", "long", "backslash"])
def test_model_names_are_sanitised_or_refused(tmp_path, kind):
    value = _values(tmp_path / "a" / "b")[kind]
    project = _project(tmp_path, {**NP, "name": value})
    code, output = _run_and_check(tmp_path, project)
    if kind in ("absolute", "dotdot", "separator"):  # '/' becomes '__': one folder inside results/
        assert code == 0, output
        folder = value.replace("/", "__")
        assert (project / "results" / "results" / folder / "r1").is_dir()
        assert (project / "cache" / folder / "r1").is_dir()
    else:
        assert code == 2
        _refused(project, "bench.yaml", output, "name")


@pytest.mark.parametrize("kind", ["absolute", "dotdot", "parent", "nul", "long"])
def test_task_names_that_cannot_name_a_file_are_refused(tmp_path, kind):
    value = _values(tmp_path / "a" / "b")[kind]
    project = _project(tmp_path, NP, task_name=value)
    code, output = _run_and_check(tmp_path, project)
    assert code == 2
    _refused(project, "task.yaml", output, "name")


def test_shown_names_may_hold_paths_but_never_write_there(tmp_path):
    """Labels, public names and experiment labels are shown, not used as paths: `../` stays text."""
    root = tmp_path / "a" / "b"
    model = {**NP, "label": str(root / "escape"), "public_name": "../../../../escape"}
    exp = [{"type": "hybrid", "dense": "test/np", "label": "../../../../escape2", "k": [60]}]
    project = _project(tmp_path, model, experiments=exp)
    code, output = _run_and_check(tmp_path, project)
    assert code == 0, output
    assert (project / "results" / "results" / "private-mteb__np+bm25-rrf60" / "r1").is_dir()
    bad = _project(tmp_path / "ctl", {**NP, "label": "a\x1b[2Jb"})
    code, output = _run_and_check(tmp_path / "ctl", bad)
    assert code == 2 and "control character \\x1b" in output


def test_a_candidate_built_in_code_is_stopped_by_the_path_builders(tmp_path):
    """Configs refuse bad revisions when read; one that comes another way stops before anything is written."""
    from runners.config.benchmark import BenchmarkConfig
    from runners.execution.run import candidates_for, run_benchmark

    project = _project(tmp_path, NP)
    cfg = BenchmarkConfig.from_file(project / "bench.yaml")
    first = candidates_for(cfg)[0]  # a candidate is its value plus a loader: the value says the revision
    cand = dataclasses.replace(first, value=dataclasses.replace(first.value, revision="../../../../escape"))
    before = _files(tmp_path)
    with pytest.raises(CollectionError, match="revision '../../../../escape' cannot name a folder"):
        run_benchmark(cfg, candidates=[cand], show_progress=False)
    created = _files(tmp_path) - before
    assert all(project / "results" in p.parents or p == project / "results" for p in created), created


@pytest.mark.parametrize("kind", ["parent", "nul", "long"])
def test_experiment_base_names_that_cannot_name_a_folder_are_refused(tmp_path, kind):
    value = _values(tmp_path)[kind]
    project = _project(tmp_path, NP, experiments=[{"type": "hybrid", "dense": value, "k": [60]}])
    code, output = _run_and_check(tmp_path, project)
    assert code == 2 and "experiments[0] (hybrid): dense" in output and "cannot name a folder" in output, output
    _refused(project, "bench.yaml", output, "dense")
