"""Queries identified by content (custom_tasks/query_ids.py) and paired explicitly (runners/statistics/pairing.py)."""

from __future__ import annotations

import doctest

from custom_tasks.query_ids import ContentIds, labels_hash, text_hash
from runners.statistics import pairing
from runners.statistics.pairing import pair_queries


def test_doctest_of_pairing():
    assert doctest.testmod(pairing).failed == 0


def test_content_ids_stable_under_reordering_and_safe_for_duplicates():
    rows = ["How do I reset my password?", "VPN  drops\nat the hotel", "How do I reset my password?", "Expenses"]
    ids = [ContentIds().next_id(t) for t in rows]  # each alone: no occurrence suffix
    gen = ContentIds()
    together = [gen.next_id(t) for t in rows]
    assert together[0] == ids[0] and together[2] == ids[0] + "-2" and len(set(together)) == 4
    assert together[1] == ContentIds().next_id("VPN drops at the hotel")  # whitespace normalised
    gen = ContentIds()
    moved = [gen.next_id(t) for t in rows[1:] + rows[:1]]  # first row moved to the end
    assert sorted(moved) == sorted(together)
    assert together[0].startswith("q-") and len(together[0]) == 12


def test_hashes():
    assert text_hash("a  b") == text_hash(" a b ") != text_hash("a c")
    assert labels_hash({"d1": 2, "d2": 1}) == labels_hash({"d2": 1, "d1": 2}) != labels_hash({"d1": 1, "d2": 1})


def test_pairing_counts_and_unknown_hashes():
    base = {"a": ("h1", 0.5), "b": ("h2", 0.4), "c": ("h3", 0.3)}
    same = pair_queries(base, dict(base), "r1", "r1")
    assert same.same_data and same.paired == ("a", "b", "c")
    assert same.describe() == "same data revision r1: all 3 queries paired"
    cand = {"a": ("h1", 0.6), "b": ("hX", 0.4), "d": ("h4", 0.1)}
    p = pair_queries(base, cand, "r1", "r2")
    assert (p.paired, p.added, p.removed, p.changed) == (("a",), ("d",), ("c",), ("b",))
    assert not p.same_data and p.revision_changed
    assert p.describe() == ("data revision r1 -> r2: 1 query added, 1 removed, 1 changed (text or labels); "
                            "1 unchanged paired")
    assert p.to_dict()["changed"] == 1
    # only the revision differs (e.g. the corpus changed): not the same data, every query still pairs
    assert not pair_queries(base, base, "r1", "r2").same_data
    # results stored before hashes were kept: by id on the same revision (said so), left out across revisions
    old = {q: (None, s) for q, (_, s) in base.items()}
    p = pair_queries(old, base, "r1", "r1")
    assert p.same_data and p.paired == ("a", "b", "c") and p.unknown == 3
    assert "3 paired by id only" in p.describe()
    p = pair_queries(old, base, "r0", "r1")
    assert not p.paired and p.unverified == ("a", "b", "c") and "no stored query hash" in p.describe()


def test_gate_on_results_stored_without_hashes(tmp_path):
    """Old per-query files (no query_hashes) still load: by id on the same data revision, said and refused
    across revisions."""
    import pytest

    from fake_results import scores, write_model
    from runners.statistics.analysis_errors import AnalysisError
    from runners.analysis.gate.gate import regression_gate

    base, cand = tmp_path / "base", tmp_path / "cand"
    write_model(base, "acme/m", "T", scores(0.6, 1))
    write_model(cand, "acme/m", "T", scores(0.6, 1))
    run = regression_gate(str(base), str(cand), results_dir=tmp_path, n_resamples=200)
    assert run.passed and run.pairings[0].unknown == 10
    assert run.data_notes == ["T: 10 of 10 queries paired by id only: stored without query hashes (older results), "
                              "on the same data revision"]
    write_model(cand, "acme/m", "T", scores(0.6, 1), dataset_revision="ds2")
    (cand / "private-mteb" / "runs" / "acme__m" / "r1" / "T" / "ds1" / "per_query_test.json").unlink()
    with pytest.raises(AnalysisError, match="data revision ds1 -> ds2.*10 left out: no stored query hash"):
        regression_gate(str(base), str(cand), results_dir=tmp_path, n_resamples=200)
    with pytest.raises(AnalysisError, match="no query is unchanged"):
        regression_gate(str(base), str(cand), results_dir=tmp_path, n_resamples=200, allow_changed_data=True)


def _with_hashes(path, texts: dict[str, str]) -> None:
    import json

    data = json.loads(path.read_text())
    data["query_hashes"] = {"default": {"text": {q: text_hash(t)[:16] for q, t in texts.items()},
                                        "labels": {q: "l" for q in texts}}}
    path.write_text(json.dumps(data))


def test_stats_across_data_revisions_pairs_unchanged_queries_and_says_so(tmp_path):
    from typer.testing import CliRunner

    from fake_results import QUERIES, scores, write_config, write_model
    from runners.statistics.stats_report import stats_report
    from runners.cli import app

    texts = {q: f"question {q}" for q in QUERIES}
    results = tmp_path / "results"
    _with_hashes(write_model(results, "acme/old", "T", scores(0.5, 1), "Old"), texts)
    new_scores = {("q11" if q == "q10" else q): s for q, s in scores(0.6, 2).items()}
    new_texts = {**{q: t for q, t in texts.items() if q != "q10"}, "q3": "reworded", "q11": "new question"}
    _with_hashes(write_model(results, "acme/new", "T", new_scores, "New", dataset_revision="ds2"), new_texts)
    rep = stats_report(results, "T", n_resamples=200, models=["acme/old", "acme/new"])
    assert rep.n_queries == 8  # q3 changed, q10 removed, q11 added
    assert ("the models were scored on different data (Old vs New: data revision ds1 -> ds2: 1 query added, "
            "1 removed, 1 changed (text or labels); 8 unchanged paired): compared on the 8 queries") in rep.data_note
    cfg = write_config(tmp_path / "b.yaml", results, ["T"], [{"name": "acme/old"}, {"name": "acme/new"}])
    out = CliRunner().invoke(app, ["stats", "-c", str(cfg)])
    assert out.exit_code == 0, out.output
    assert "compared on the 8 queries unchanged for every model" in " ".join(out.output.split())
    # the same data: no note
    same = stats_report(results, "T", n_resamples=200, models=["acme/old"])
    assert same.data_note == "" and same.n_queries == 10


def test_gate_judged_at_10_counts_only_the_paired_queries(tmp_path):
    from fake_results import QUERIES, scores, write_model
    from runners.analysis.gate.gate import regression_gate
    from runners.results.store import atomic_write_json, run_dir

    texts = {q: f"question {q}" for q in QUERIES}
    qrels = {q: {f"good-{q}": 1} for q in QUERIES}
    for folder, ds, changed in (("base", "ds1", {}), ("cand", "ds2", {"q1": "reworded"})):
        _with_hashes(write_model(tmp_path / folder, "acme/m", "T", scores(0.6, 1), dataset_revision=ds),
                     {**texts, **changed})
        ranked = {q: ({f"good-{q}": 0.9, "x": 0.5} if q != "q1" else {"x": 0.9, "y": 0.5}) for q in QUERIES}
        atomic_write_json(run_dir(tmp_path / folder, "acme/m", "r1", "T", ds) / "rankings_test.json.gz",
                          {"top_k": 100, "subsets": {"default": ranked}}, compress=True)
    run = regression_gate(str(tmp_path / "base"), str(tmp_path / "cand"), results_dir=tmp_path, n_resamples=200,
                          allow_changed_data=True, qrels={"T": qrels})
    assert run.outcomes[0][3].n_queries == 9
    assert run.judged == ["T: judged@10: baseline m 0.50, candidate m 0.50"]  # q1 (0.00) left out as the scores


def test_inspect_diff_pairs_by_content_and_says_when_data_differ(tmp_path):
    from fake_results import QUERIES, scores, write_model
    from runners.analysis.diagnose.inspect import diff_queries

    texts = {q: f"question {q}" for q in QUERIES}
    _with_hashes(write_model(tmp_path, "acme/a", "T", scores(0.5, 1), "A"), texts)
    _with_hashes(write_model(tmp_path, "acme/b", "T", scores(0.6, 2), "B", dataset_revision="ds2"),
                 {**texts, "q2": "another question"})
    rep = diff_queries(tmp_path, "T", "acme/a", "acme/b")
    assert len(rep.rows) == 9 and "q2" not in {r.query_id for r in rep.rows}
    assert rep.data_note.startswith("A and B were scored on different data (data revision ds1 -> ds2: 0 queries "
                                    "added, 0 removed, 1 changed")
    assert rep.data_note.endswith("compared on the 9 unchanged queries")
