"""judged@k from hand-made rankings: the share of the top-k carrying a label, and the baseline warning."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from runners.statistics.analysis_errors import AnalysisError
from runners.labels.pool.judged import judged_at_k, judged_ceiling, judged_line, judged_meaning, judged_report
from runners.results.store import atomic_write_json, run_dir, task_result_path

QRELS = {"q1": {"a": 2, "b": 0}, "q2": {"c": 1}, "q3": {"d": 1}}


def test_judged_counts_any_grade_in_the_top_k():
    rankings = {
        "q1": {"a": 0.9, "x": 0.8, "b": 0.7, "y": 0.1},  # a, b judged (b has grade 0: still judged)
        "q2": {"y": 0.9, "z": 0.8, "c": 0.1},
        # q3 not ranked at all
    }
    s = judged_at_k(rankings, QRELS, k=2)
    assert s["q1"] == 0.5 and s["q2"] == 0.0 and math.isnan(s["q3"])
    s3 = judged_at_k(rankings, QRELS, k=3)
    assert s3["q1"] == pytest.approx(2 / 3) and s3["q2"] == pytest.approx(1 / 3)
    # fewer documents ranked than k: the denominator is what was ranked
    assert judged_at_k({"q2": {"c": 0.5}}, {"q2": {"c": 1}}, k=10)["q2"] == 1.0


def test_ties_are_cut_like_the_stored_top_k():
    # equal scores: the higher id comes first (score, then id, descending), as rankings are stored
    s = judged_at_k({"q1": {"a": 0.5, "x": 0.5}}, {"q1": {"a": 1}}, k=1)
    assert s["q1"] == 0.0
    with pytest.raises(AnalysisError):
        judged_at_k({}, QRELS, k=0)


def _store(results: Path, model: str, rankings: dict) -> None:
    """A minimal stored run: the TaskResult naming the data revision, and the rankings sidecar."""
    atomic_write_json(task_result_path(results, model, "r1", "T"), {"dataset_revision": "d1"})
    atomic_write_json(run_dir(results, model, "r1", "T", "d1") / "rankings_test.json.gz",
                      {"top_k": 100, "subsets": {"default": rankings}}, compress=True)


def _queries(n: int) -> dict:
    return {f"q{i}": {f"good{i}": 1} for i in range(n)}


def test_report_warns_when_a_candidate_is_clearly_less_judged(tmp_path):
    qrels = _queries(30)
    labelled = {q: {d: 1.0, **{f"u{q}{j}": 0.5 - j / 100 for j in range(9)}} for q, docs in qrels.items()
                for d in docs}  # 1 of 10 judged
    unlabelled = {q: {f"v{q}{j}": 0.5 - j / 100 for j in range(10)} for q in qrels}  # 0 of 10
    _store(tmp_path, "base/model", labelled)
    _store(tmp_path, "new/model", unlabelled)
    _store(tmp_path, "same/model", labelled)
    rep = judged_report(tmp_path, "T", qrels, ["base/model", "new/model", "same/model"], ks=(5, 10))
    t = rep.table.set_index(["model", "k"])["judged"]
    assert t[("base/model", 10)] == pytest.approx(0.1) and t[("base/model", 5)] == pytest.approx(0.2)
    assert t[("new/model", 10)] == 0.0
    assert len(rep.warnings) == 1
    assert "new/model judged@10 = 0.00 vs base/model 0.10" in rep.warnings[0]
    assert "probably underestimated; pool and label its top-10" in rep.warnings[0]
    # the margin is a real threshold: 0.1 lower is not "clearly" below with a 0.2 margin
    assert judged_report(tmp_path, "T", qrels, ["base/model", "new/model"], margin=0.2).warnings == []
    # the baseline may be any compared model; a better-judged candidate is never warned about
    assert judged_report(tmp_path, "T", qrels, ["base/model", "new/model"], baseline="new/model").warnings == []
    assert judged_line(rep, 10) == ("judged@10: base/model 0.10, new/model 0.00, same/model 0.10 "
                                    "(at most 0.10 possible: 1.0 labelled documents per query)")


def test_known_item_task_says_0_10_is_the_maximum_not_an_underestimate():
    """One labelled document per query: judged@10 cannot exceed 0.10 (issue 19.10)."""
    known_item = _queries(4)
    assert judged_ceiling(known_item, 10) == (pytest.approx(0.1), 1.0)
    assert judged_ceiling({"q1": {f"d{i}": 1 for i in range(12)}, "q2": {"a": 1, "b": 1}}, 10) == (
        pytest.approx(0.6), 7.0)
    text = judged_meaning(10, {"KnownItem": judged_ceiling(known_item, 10)})
    assert "at most 0.10 on KnownItem (1.0 labelled documents per query)" in text
    assert "a low value means the score is probably underestimated" not in text
    deep = {f"q{i}": {f"d{j}": 1 for j in range(10)} for i in range(3)}
    assert "so a low value means the score is probably underestimated" in judged_meaning(
        10, {"Deep": judged_ceiling(deep, 10)})


def test_missing_rankings_is_one_line_naming_the_model(tmp_path):
    with pytest.raises(AnalysisError, match="no stored rankings for model 'ghost' on task 'T'"):
        judged_report(tmp_path, "T", QRELS, ["ghost"])


# ---------------------------------------------------------------- generator guard (generated_by:)
def test_generator_family_is_flagged_and_source_breakdown_is_default(tiny_copy):
    import pandas as pd

    from custom_tasks.config import TaskConfig
    from runners.labels.notes.generator_guard import default_tags, generator_warnings, same_family

    assert same_family("openai/text-embedding-3-large", "openai/gpt-4o")
    assert same_family("Qwen/Qwen3-Embedding-0.6B", "qwen/Qwen3-32B")
    assert not same_family("sentence-transformers/all-MiniLM-L6-v2", "openai/gpt-4o")
    assert same_family("gpt-embed", "gpt-4o") and not same_family("bm25", "")
    lines = generator_warnings("T", "openai/gpt-4o", [("openai/text-embedding-3-small", "te3"),
                                                       ("mteb/baseline-bm25s", "BM25")])
    assert len(lines) == 1 and lines[0].startswith("T: te3 is of the family of openai/gpt-4o")
    assert generator_warnings("T", None, [("openai/x", "x")]) == []

    both = pd.DataFrame({"source": ["human", "llm", "human"], "topic": ["a", "b", "a"]})
    assert default_tags([], both) == ["source"] and default_tags(["topic"], both) == ["topic", "source"]
    assert default_tags([], both[both.source == "human"]) == []  # one kind only: nothing to compare
    assert default_tags([], None) == []

    tiny_copy.write_text(tiny_copy.read_text() + "generated_by: openai/gpt-4o\n")
    assert TaskConfig.from_file(tiny_copy).generated_by == "openai/gpt-4o"


def test_stats_breaks_down_by_source_when_the_task_names_its_generator(tiny_copy):
    from runners.labels.notes.label_notes import stats_tags

    assert stats_tags(str(tiny_copy), []) == []  # human labels, no generator: the config decides
    tiny_copy.write_text(tiny_copy.read_text() + "generated_by: openai/gpt-4o\n")
    assert stats_tags(str(tiny_copy), []) == ["source"]  # the fixture has human and llm questions
    assert stats_tags(str(tiny_copy), ["source"]) == ["source"]
