"""`check` (regression_gate): judged@10 of baseline and candidate, and the warning when the candidate's is clearly
lower, and the mark of a verdict the unjudged pairs could reverse; hand-made rankings, no model run."""

from __future__ import annotations

from runners.labels.notes.unjudged_mark import ASSUMED
from runners.analysis.gate.gate import regression_gate
from runners.results.store import atomic_write_json, run_dir

from fake_results import QUERIES, scores, write_model

TASK = "T"
QRELS = {q: {f"good-{q}": 1} for q in QUERIES}


def _model(results, name, label, labelled: bool, seed: int) -> None:
    write_model(results, name, TASK, scores(0.6, seed), label)
    rankings = {q: ({f"good-{q}": 0.9, f"u-{q}": 0.5} if labelled else {f"x-{q}": 0.9, f"y-{q}": 0.5})
                for q in QUERIES}
    atomic_write_json(run_dir(results, name, "r1", TASK, "ds1") / "rankings_test.json.gz",
                      {"top_k": 100, "subsets": {"default": rankings}}, compress=True)


def test_gate_reports_judged_and_warns(tmp_path):
    _model(tmp_path, "acme/base", "Base", True, 1)
    _model(tmp_path, "acme/new", "New", False, 2)
    _model(tmp_path, "acme/same", "Same", True, 3)
    run = regression_gate("Base", "New", results_dir=tmp_path, qrels={TASK: QRELS}, n_resamples=200)
    assert run.judged[0] == "T: judged@10: baseline Base 0.50, candidate New 0.00"
    assert len(run.judged) == 4 and run.judged[1].startswith("warning: T: New judged@10 = 0.00 vs Base 0.50")
    assert "probably underestimated; pool and label its top-10" in run.judged[1]
    # the unjudged pairs could reverse the verdict: New's unjudged x, y graded relevant put it ahead
    n = len(QUERIES)
    assert run.judged[2] == f"T: {ASSUMED}"  # what the marks assume, said once (issue 47)
    assert run.judged[3].startswith(f"T: unjudged: Base leads New on nDCG@10 by +1.0000 with {n:,} and {2 * n:,} "
                                    "unjudged pairs in their top-10: in the worst case their grades could reverse it")
    same = regression_gate("Base", "Same", results_dir=tmp_path, qrels={TASK: QRELS}, n_resamples=200)
    assert same.judged == ["T: judged@10: baseline Base 0.50, candidate Same 0.50", f"T: {ASSUMED}",
                           f"T: unjudged: Base and Same tie on nDCG@10 with {n:,} and {n:,} unjudged pairs in their "
                           "top-10: settled, every grading of them leaves the tie"]
    # no labels known for the task (a public task): no judged@10, the gate stands
    assert regression_gate("Base", "New", results_dir=tmp_path, n_resamples=200).judged == []
