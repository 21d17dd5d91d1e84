"""Issue 19 item 1: an evalset without query_id, one row moved to the end, re-run, `check`: queries are paired by
content (ids from the text), so the comparison is exact; changed data is said, counted, and exit 2 unless
--allow-changed-data. bm25 on a 12-document collection: seconds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from conftest import REPO, write_benchmark
from runners.cli import app

runner = CliRunner()
KB = REPO / "tests" / "fixtures" / "kb_tiny"


def _evalset_rows() -> list[dict]:
    """kb_tiny's queries and labels as evalset rows, without a query_id."""
    labels: dict[str, dict[str, int]] = {}
    for line in (KB / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        q, d, g = line.split("\t")
        labels.setdefault(q, {})[d] = int(g)
    rows = []
    for line in (KB / "queries.jsonl").read_text().splitlines():
        q = json.loads(line)
        rows.append({"query": q["text"], "relevant": labels[q["_id"]], "tags": {"source": q["source"]}})
    return rows


def _project(tmp_path: Path, rows: list[dict]) -> Path:
    data = tmp_path / "kb"
    data.mkdir(exist_ok=True)
    shutil.copy(KB / "corpus.jsonl", data / "corpus.jsonl")
    write_rows(data, rows)
    task = tmp_path / "task.yaml"
    task.write_text(yaml.safe_dump({"name": "EvalsetKBRetrieval", "description": "kb_tiny as an evalset",
                                    "source": {"format": "evalset", "corpus": "kb/corpus.jsonl",
                                               "evalset": "kb/evalset.jsonl"},
                                    "splits": ["test"], "license": "cc0-1.0", "labels": "human"}))
    return write_benchmark(tmp_path, [str(task)], models=[{"name": "bm25"}])


def write_rows(data: Path, rows: list[dict]) -> None:
    (data / "evalset.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def _run(cfg: Path) -> None:
    result = runner.invoke(app, ["run", "--config", str(cfg)])
    assert result.exit_code == 0, result.output


def _check(base: Path, cand: Path, *extra: str):
    return runner.invoke(app, ["check", "--baseline", str(base), "--candidate", str(cand), "--resamples", "500",
                               "--format", "json", *extra])


def test_moved_row_pairs_by_content_and_changed_data_is_said(tmp_path):
    rows = _evalset_rows()
    cfg = _project(tmp_path, rows)
    _run(cfg)
    (stored,) = (tmp_path / "results" / "private-mteb" / "runs").rglob("per_query_test.json")
    hashes = json.loads(stored.read_text())["query_hashes"]["default"]  # stored with the scores
    assert len(hashes["text"]) == len(hashes["labels"]) == 10
    base = tmp_path / "base-results"
    shutil.copytree(tmp_path / "results", base)
    write_rows(tmp_path / "kb", rows[1:] + rows[:1])  # same questions, labels, corpus; first row moved to the end
    _run(cfg)
    moved = _check(base, tmp_path / "results")
    assert moved.exit_code == 0, moved.output
    out = json.loads(moved.stdout)
    (outcome,) = out["outcomes"]
    assert outcome["bound"] == pytest.approx(0.0, abs=1e-6) and outcome["drop"] == 0.0 and outcome["n_queries"] == 10
    assert outcome["tied"] == 10 and outcome["p_value"] == 1.0
    assert out["data"][0]["same_data"] and out["data"][0]["paired"] == 10
    # one question reworded: another data revision; the gate refuses (exit 2) and counts what changed
    rows[3] = {**rows[3], "query": rows[3]["query"] + " please"}
    write_rows(tmp_path / "kb", rows)
    _run(cfg)
    refused = _check(base, tmp_path / "results")
    assert refused.exit_code == 2, refused.output
    assert "different questions or labels" in refused.output
    assert "1 query added, 1 removed, 0 changed" in refused.output
    assert "--allow-changed-data" in refused.output
    allowed = runner.invoke(app, ["check", "--baseline", str(base), "--candidate", str(tmp_path / "results"),
                                  "--resamples", "500", "--allow-changed-data"])
    assert allowed.exit_code == 0, allowed.output
    assert "decided on the 9 unchanged queries" in allowed.output
    # labels of one query changed (same text): that query is 'changed' and left out
    extra = next(d for d in ("printer", "wifi") if d not in rows[5]["relevant"])
    rows[5] = {**rows[5], "relevant": {**rows[5]["relevant"], extra: 1}}
    write_rows(tmp_path / "kb", rows)
    _run(cfg)
    labels = json.loads(_check(base, tmp_path / "results", "--allow-changed-data").stdout)
    assert labels["data"][0]["changed"] == 1 and labels["data"][0]["paired"] == 8
