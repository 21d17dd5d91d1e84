"""Issue 29 "scopes follow the config": `history`, `history accept`, `export` and `check --baseline history:*`
act on the config's candidates and tasks by default, even when several configs share the results and history
folders; a label resolves to the config's current candidate."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from typer.testing import CliRunner

from conftest import TINY_YAML
from fake_results import QUERIES, scores, write_model
from runners.analysis.gate.history import record_run
from runners.cli import app
from runners.results.history_store import HistoryStore
from runners.results.store import atomic_write_json, find_run

runner = CliRunner()
TINY = "TinyKBRetrieval"


def _stored(results: Path, name: str, label: str, task: str, seed: int) -> None:
    """A stored result as `run` keeps it: per-query scores with query hashes, an identity, rankings."""
    path = write_model(results, name, task, scores(0.6, seed), label=label)
    data = json.loads(path.read_text())
    data["query_hashes"] = {"default": {"text": {q: q for q in QUERIES}, "labels": {q: "l" for q in QUERIES}}}
    path.write_text(json.dumps(data))
    (path.parent / "identity.json").write_text(json.dumps({
        "fingerprint": f"fp-{name}-{task}", "task": {"dataset_revision": "ds1", "main_score": "ndcg_at_10"},
        "candidate": {"name": name, "revision": "r1"}, "keep_top_k": 100}))
    atomic_write_json(find_run(results, name, task) / "rankings_test.json.gz",
                      {"top_k": 100, "subsets": {"default": {q: {"d1": 1.0} for q in QUERIES}}}, compress=True)


def _config(tmp_path: Path, name: str, models: list[dict]) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"name": name, "tasks": [str(TINY_YAML)], "models": models,
                                    "results_dir": "results", "history": "history", "stats": {"resamples": 200}}))
    return path


def _shared(tmp_path: Path) -> Path:
    """Config A (model One on the tiny task) sharing results/ and history/ with another config's candidate
    Two and with One's runs on a task A does not have."""
    results = tmp_path / "results"
    _stored(results, "acme/one", "One", TINY, 1)
    _stored(results, "acme/two", "Two", TINY, 2)
    _stored(results, "acme/one", "One", "OtherKB", 3)
    record_run(tmp_path / "history", results, [
        {"name": "acme/one", "label": "One", "task": TINY, "status": "ran"},
        {"name": "acme/two", "label": "Two", "task": TINY, "status": "ran"},
        {"name": "acme/one", "label": "One", "task": "OtherKB", "status": "ran"}])
    return _config(tmp_path, "a", [{"name": "acme/one", "label": "One"}])


def test_history_accept_and_listing_stay_within_the_config(tmp_path):
    cfg = _shared(tmp_path)
    out = runner.invoke(app, ["history", "accept", "-c", str(cfg)])
    assert out.exit_code == 0, out.output
    assert "accepted: One on TinyKBRetrieval" in out.output and "Two" not in out.output
    assert "OtherKB" not in out.output
    store = HistoryStore(tmp_path / "history")
    assert store.accepted_id("Two", TINY) is None and store.accepted_id("One", "OtherKB") is None
    doc = json.loads(runner.invoke(app, ["history", "-c", str(cfg), "-t", TINY, "--format", "json"]).output)
    assert [t["candidate"] for t in doc["timelines"]] == ["One"]


def test_history_gate_checks_the_configs_tasks_and_names_the_accept_command(tmp_path):
    cfg = _shared(tmp_path)
    assert runner.invoke(app, ["history", "accept", "-c", str(cfg), "-t", TINY]).exit_code == 0
    ok = runner.invoke(app, ["check", "-c", str(cfg), "--baseline", "history:accepted", "--resamples", "200"])
    assert ok.exit_code == 0, ok.output  # One on OtherKB (not a task of a.yaml) has no accepted record: not asked
    other = _config(tmp_path, "b", [{"name": "acme/two", "label": "Two"}])
    res = runner.invoke(app, ["check", "-c", str(other), "--baseline", "history:accepted", "--resamples", "200"])
    line = " ".join(res.output.split())
    assert res.exit_code == 2, res.output
    assert f"Two on task {TINY}" in line and f"private-mteb history accept -c {other} -m Two -t {TINY}" in line


def test_a_label_resolves_to_the_configs_current_candidate(tmp_path):
    """The README's model swap: a new model under the old label; both are stored under that label."""
    results = tmp_path / "results"
    _stored(results, "acme/old", "prod", TINY, 1)
    _stored(results, "acme/new", "prod", TINY, 2)
    cfg = _config(tmp_path, "c", [{"name": "acme/new", "label": "prod"}])
    out = tmp_path / "prod.run"
    res = runner.invoke(app, ["export", "run", "--model", "prod", "-c", str(cfg), "-o", str(out), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["model"] == "acme/new"
    worst = runner.invoke(app, ["inspect", "worst", "--model", "prod", "-c", str(cfg), "--format", "json"])
    assert worst.exit_code == 0 and json.loads(worst.output)["model"] == "acme/new", worst.output
