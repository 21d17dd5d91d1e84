"""Complete label sets, declared (issue 47): a task saying `complete_labels: true` prints no unjudged mark in
`stats` or `check`, `labels status` calls no verdict open, `tasks lint` suggests no pooling; without it, what the
marks assume is said once per task; `init` proposes the declaration on a known-item export."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from custom_tasks.config import TaskConfig
from runners.cli import app
from runners.config.benchmark import BenchmarkConfig
from runners.execution.run import run_benchmark
from runners.labels.notes.unjudged_mark import ASSUMED, COMPLETE
from tests.conftest import REPO, TINY_YAML, write_benchmark

flat = lambda out: " ".join(out.split())  # noqa: E731  (rich wraps long lines)


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """The tiny task run once; `declare(True/False)` rewrites its YAML (notes only: the stored runs stay valid)."""
    base = tmp_path_factory.mktemp("complete-ran")
    shutil.copytree(REPO / "tests" / "fixtures" / "kb_tiny", base / "kb_tiny")
    yaml_path = base / "kb_tiny.yaml"
    plain = TINY_YAML.read_text().replace("../fixtures/kb_tiny", "kb_tiny")
    yaml_path.write_text(plain)
    path = write_benchmark(base, [str(yaml_path)])
    run_benchmark(BenchmarkConfig.from_file(path), show_progress=False)

    def declare(complete: bool) -> None:
        yaml_path.write_text(plain + ("complete_labels: true\n" if complete else ""))

    return path, declare


def _invoke(*args: str):
    r = CliRunner().invoke(app, list(args))
    assert r.exit_code in (0, 1), r.output
    return flat(r.output)


def test_a_complete_task_prints_no_unjudged_mark(ran):
    path, declare = ran
    declare(False)
    stats = _invoke("stats", "-c", str(path), "-m", "ndcg_at_10", "--resamples", "200")
    check = _invoke("check", "-c", str(path), "--baseline", "BM25", "--candidate", "MiniLM", "--resamples", "200")
    for out in (stats, check):  # undeclared: the assumption once, then the worst case per pair
        assert out.count(flat(ASSUMED)) == 1, out
        assert re.search(r"unjudged: \S.* unjudged pairs in their top-10", out), out
        assert ": open," not in out
    declare(True)
    assert TaskConfig.from_file(Path(path).parent / "kb_tiny.yaml").complete_labels
    stats = _invoke("stats", "-c", str(path), "-m", "ndcg_at_10", "--resamples", "200")
    check = _invoke("check", "-c", str(path), "--baseline", "BM25", "--candidate", "MiniLM", "--resamples", "200")
    as_json = json.loads(CliRunner().invoke(app, ["stats", "-c", str(path), "--resamples", "200", "--format",
                                                  "json"]).output)
    for out in (stats, check):
        assert "unjudged" not in out and "judged@10" not in out, out
        assert flat(COMPLETE) in out, out
    assert "unjudged" not in as_json
    from runners.analysis.report import build_report, render

    md = flat(render(build_report(BenchmarkConfig.from_file(path), with_public=False), "md").replace("\\", ""))
    assert "unjudged" not in md and "judged@10" not in md and flat(COMPLETE)[1:] in md
    status = json.loads(CliRunner().invoke(app, ["labels", "status", "-c", str(path), "--format", "json"]).output)
    assert status["unjudged_in_pool"] == 0 and all(p["verdict"] == "settled" for p in status["pairs"])
    # nothing unjudged: each verdict certain and the stop reached, with no calibration sample asked for
    assert all(p["probability_holds"] == 1.0 for p in status["pairs"]) and status["confidence"]["reached"]
    assert "no unjudged pair" in status["confidence"]["basis"]
    lint = CliRunner().invoke(app, ["tasks", "lint", "-c", str(path), "--format", "json"])
    assert "complete_labels" in lint.output and '"pooling_suggested"' in lint.output  # skipped, and why
    declare(False)


def _known_item(project: Path, column: str) -> Path:
    kb = project / "data" / "faq"
    kb.mkdir(parents=True)
    shutil.copy(REPO / "tests" / "fixtures" / "evalset_mini" / "corpus.jsonl", kb / "corpus.jsonl")
    (kb / "evalset.csv").write_text(f"ID,Question,{column}\n"
                                    "a1,How do I connect to the VPN?,d1\n"
                                    "a2,I forgot my password,d2\n")
    return kb


@pytest.mark.parametrize("column,expected", [("answer_id", "declared"), ("relevant", "proposed")])
def test_init_proposes_complete_labels_on_a_known_item_export(tmp_path, monkeypatch, column, expected):
    monkeypatch.chdir(tmp_path)
    kb = _known_item(tmp_path, column)
    res = CliRunner().invoke(app, ["init", str(kb), "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["complete_labels"] == expected
    text = Path(out["task_yaml"]).read_text()
    cfg = TaskConfig.from_file(out["task_yaml"])
    if expected == "declared":  # the export's column says each question's one answer: written
        assert cfg.complete_labels and re.search(r"^complete_labels: true", text, re.M)
    else:  # only the counts say so: a commented proposal the user sees
        assert not cfg.complete_labels and "# complete_labels: true" in text
    shown = CliRunner().invoke(app, ["init", str(kb), "--force"])
    assert "complete_labels: true" in flat(shown.output)


def test_init_proposes_nothing_when_a_question_has_several_labels(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    kb = _known_item(tmp_path, "answer_id")
    (kb / "evalset.csv").write_text("ID,Question,answer_id\na1,How do I connect to the VPN?,d1; d3\n"
                                    "a2,I forgot my password,d2\n")
    out = json.loads(CliRunner().invoke(app, ["init", str(kb), "--format", "json"]).output)
    assert out["complete_labels"] is None and "complete_labels" not in Path(out["task_yaml"]).read_text()


def test_the_declaration_is_not_part_of_the_tasks_identity():
    """It changes notes, not scores (an unjudged document counts as not relevant either way): stored runs stay."""
    base = {"name": "T", "description": "d", "source": {"format": "beir", "path": "x"}}
    assert TaskConfig.model_validate({**base, "complete_labels": True}).settings_fingerprint() == \
        TaskConfig.model_validate(base).settings_fingerprint()
