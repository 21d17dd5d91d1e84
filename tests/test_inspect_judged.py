"""`inspect worst` and `inspect query` show the model's judged@10 on the task (json and table); hand-made rankings."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from runners.cli import app

from test_report_judged import _bench

runner = CliRunner()


def _run(*args: str):
    res = runner.invoke(app, list(args))
    assert res.exit_code == 0, res.output
    return res.output


def test_worst_and_query_show_judged_at_10(tmp_path):
    cfg = str(_bench(tmp_path, new_judged=False).path)
    base = json.loads(_run("inspect", "worst", "-c", cfg, "--model", "Base", "--format", "json"))
    new = json.loads(_run("inspect", "worst", "-c", cfg, "--model", "New", "--format", "json"))
    assert base["judged_at_10"] == 0.5 and new["judged_at_10"] == 0.0
    assert "judged@10 of New on TinyKBRetrieval: 0.00" in _run("inspect", "worst", "-c", cfg, "--model", "New")
    view = json.loads(_run("inspect", "query", "-c", cfg, "q1", "--format", "json"))
    assert {c["label"]: c["judged_at_10"] for c in view["candidates"]} == {"Base": 0.5, "New": 0.0}
    table = _run("inspect", "query", "-c", cfg, "q1")
    assert "judged@10 of Base on the task: 0.50" in table and "judged@10 of New on the task: 0.00" in table
