"""Issue 29 "a way in": without -c a command uses the project's only benchmark config, finds results where
`run -c` put them (results_dir is relative to the config file); several configs -> one line asking for -c;
none -> one line saying to run `init`; every command that reads results takes `-c` and `--results` alike."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml
from typer.testing import CliRunner

from conftest import TINY_YAML
from fake_results import scores, write_model
from runners.cli import app

runner = CliRunner()
TINY = "TinyKBRetrieval"


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A team's project outside the checkout: one config whose results_dir is relative to its own folder."""
    monkeypatch.delenv("PRIVATE_MTEB_PROJECT", raising=False)
    root = tmp_path / "proj"
    bench = root / "configs" / "benchmarks"
    bench.mkdir(parents=True)
    (bench / "team.yaml").write_text(yaml.safe_dump({
        "name": "team", "tasks": [str(TINY_YAML)], "results_dir": "out", "stats": {"resamples": 200},
        "models": [{"name": "acme/one", "label": "One"}, {"name": "acme/two", "label": "Two"}]}))
    results = bench / "out"  # where `run -c configs/benchmarks/team.yaml` writes: not ./results
    write_model(results, "acme/one", TINY, scores(0.8, 1), "One")
    write_model(results, "acme/two", TINY, scores(0.5, 2), "Two")
    monkeypatch.chdir(root)
    return root


def _ok(args):
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    return res.output


def test_commands_use_the_only_config_and_its_results(project):
    out = _ok(["stats", "-m", "ndcg_at_10"])
    assert "among the 2 candidates of team.yaml" in out
    base = project / "base"
    shutil.copytree(project / "configs" / "benchmarks" / "out", base)
    doc = json.loads(_ok(["check", "--baseline", str(base), "--format", "json", "--resamples", "200"]))
    assert doc["passed"] and {o["candidate"] for o in doc["outcomes"]} == {"One", "Two"}
    worst = json.loads(_ok(["inspect", "worst", "--model", "One", "--format", "json", "-n", "2"]))
    assert worst["model"] == "acme/one"


def test_compare_finds_the_configs_results(project):
    from tests.test_compare import write_result

    out = project / "configs" / "benchmarks" / "out"
    shutil.rmtree(out)  # mteb's own TaskResult files, as `run` writes them
    write_result(out, "acme/three", "r1", TINY, 0.61)
    comp = _ok(["compare", "--format", "json", "--private-only"])
    assert "acme/three" in comp and "0.61" in comp


def test_results_option_on_stats_like_check(project, tmp_path):
    other = tmp_path / "other-results"
    write_model(other, "acme/one", TINY, scores(0.3, 5), "One")
    write_model(other, "acme/two", TINY, scores(0.9, 6), "Two")
    doc = json.loads(_ok(["stats", "--results", str(other), "-m", "ndcg_at_10", "--format", "json"]))
    assert doc["tasks"][0]["best"].split(": ")[1].startswith("Two at")


def test_several_configs_list_them_and_ask_for_c(project):
    (project / "configs" / "benchmarks" / "second.yaml").write_text(
        (project / "configs" / "benchmarks" / "team.yaml").read_text())
    res = runner.invoke(app, ["stats"])
    assert res.exit_code == 2, res.output
    line = " ".join(res.output.split())
    assert "2 benchmark configs (second.yaml, team.yaml): pass -c CONFIG" in line and "Traceback" not in line
    assert _ok(["stats", "-c", "configs/benchmarks/team.yaml", "-m", "ndcg_at_10"])


def test_no_config_says_run_init(tmp_path, monkeypatch):
    monkeypatch.delenv("PRIVATE_MTEB_PROJECT", raising=False)
    (tmp_path / "configs").mkdir()
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["stats"])
    assert res.exit_code == 2 and "run `private-mteb init" in res.output, res.output


def test_missing_config_hints_c_and_names_the_projects_configs(project):
    res = runner.invoke(app, ["inspect", "worst", "--model", "One", "-c", "configs/benchmarks/demo.yaml"])
    line = " ".join(res.output.split())
    assert res.exit_code == 2 and "benchmark config not found: pass -c CONFIG" in line, line
    assert "team.yaml" in line


def test_the_checkout_keeps_its_demo_default():
    from runners.config.discovery import config_path

    assert config_path(None).as_posix().endswith("configs/benchmarks/demo.yaml")  # several configs, demo.yaml wins
