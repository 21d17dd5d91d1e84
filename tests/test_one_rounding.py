"""Issue 28 "one rounding": `run` printed 0.5061 where `stats` printed 0.5062 for the same score (run took mteb's
5-decimal JSON value, stats the mean of the per-query scores). Both now print stats.format_score of the
per-query mean."""

from __future__ import annotations

import re

from rich.console import Console
from typer.testing import CliRunner

from runners.cli import app
from runners.cli.run_command import results_table
from runners.execution.run import SUMMARY_METRICS, RunRecord
from tests.conftest import TINY_YAML
from tests.fake_results import QUERIES, write_config, write_model

TASK = "TinyKBRetrieval"


def _scores() -> dict[str, float]:
    """Per-query scores whose mean is 0.50615 + 4e-7: mteb's JSON keeps 0.50615, which prints as 0.5061."""
    values = [0.40615 + 0.2 * (i % 2) for i in range(len(QUERIES))]
    values[0] += 4e-6
    return dict(zip(QUERIES, values))


def test_run_table_and_stats_print_the_same_figure(tmp_path):
    per_query = _scores()
    mean = sum(per_query.values()) / len(per_query)
    mteb_json = round(mean, 5)
    assert f"{mteb_json:.4f}" == "0.5061" and f"{mean:.4f}" == "0.5062"  # the two roundings disagree here
    results = tmp_path / "results"
    write_model(results, "acme/one", TASK, per_query, "One")
    record = RunRecord("acme/one", "One", TASK, "skipped", 0.0, {m: mteb_json for m in SUMMARY_METRICS})
    console = Console(width=200, record=True)
    console.print(results_table([record], results))
    run_row = next(line for line in console.export_text().splitlines() if "One" in line)
    cfg = write_config(tmp_path / "b.yaml", results, [str(TINY_YAML)], [{"name": "acme/one", "label": "One"}])
    out = CliRunner().invoke(app, ["stats", "-c", str(cfg), "--metric", "ndcg_at_10"], terminal_width=200)
    assert out.exit_code == 0, out.output
    stats_row = next(line for line in out.output.splitlines() if "One" in line and "all" in line)
    assert re.findall(r"0\.\d{4}", run_row)[0] == "0.5062"
    assert re.findall(r"0\.\d{4}", stats_row)[0] == "0.5062"


def test_run_table_falls_back_to_mtebs_value_without_per_query_scores(tmp_path):
    record = RunRecord("acme/none", "None", TASK, "ran", 1.0, {m: 0.25 for m in SUMMARY_METRICS})
    console = Console(width=200, record=True)
    console.print(results_table([record], tmp_path / "results"))
    assert "0.2500" in console.export_text()
