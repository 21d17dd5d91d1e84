"""The judging app with a config (issue 39): the rater's items in the re-planned decisive order, re-planned after
every grade with no reload, a grade never put on a pair that moved, and the panel's settled/open per pair.
Hand-made rankings over the tiny KB's pool, the real app over Starlette's test client (the browser walk:
tests/test_judging_browser_plan.py)."""

from __future__ import annotations

import numpy as np
import pytest

from custom_tasks.config import TaskConfig
from custom_tasks.sources import load_collection
from judging_fixture import write_task
from runners.labels.pool.replan_order import Replanner
from runners.labels.pool.verdict_bounds import pair_bounds

TASK = "TinyKBRetrieval"


def _rankings(collection, seed: int = 3, k: int = 5):
    """Two candidates that rank the tiny KB's documents by their own random scores, per question."""
    rng = np.random.default_rng(seed)
    docs = sorted(collection.corpus)
    out = {"A": {}, "B": {}}
    for q in sorted(collection.qrels["test"]):
        for name in out:
            score = rng.random(len(docs))
            top = np.argsort(-score)[:k]
            out[name][q] = {docs[j]: float(score[j]) for j in top}
    return out


@pytest.fixture
def served(tmp_path):
    from starlette.testclient import TestClient

    from runners.labels.judging.app import make_app
    from runners.labels.judging.items import items_from_keys
    from runners.labels.judging.live_plan import LivePlan
    from runners.labels.judging.server import open_session

    yaml_path, _ = write_task(tmp_path)
    cfg = TaskConfig.from_file(yaml_path)
    coll = load_collection(cfg.source, cfg.base_dir, cfg.name)
    rankings = _rankings(coll)
    qrels = {q: dict(v) for q, v in coll.qrels["test"].items()}
    keys = sorted({("test", q, d) for r in rankings.values() for q in qrels for d in r[q] if d not in qrels[q]})
    s = open_session(cfg, coll, items_from_keys(keys, coll), "ana", tmp_path / "labels" / TASK)
    planner = Replanner(rankings, qrels, sorted(cfg.grades), 5)
    s.session.live = LivePlan(planner, ["A", "B"], {"A": "A", "B": "B"}, 5)
    s.session.live.reorder(s.session, -1)
    app, token = make_app(s.session)
    try:
        yield TestClient(app, headers={"X-Judging-Token": token}), s.session, rankings, qrels, cfg
    finally:
        s.session.close()


def test_each_grade_re_plans_the_items_still_open(served):
    client, session, rankings, qrels, cfg = served
    expected = Replanner(rankings, qrels, sorted(cfg.grades), 5)  # an independent planner fed the same grades
    state = client.get("/api/state").json()
    assert state["start"] == 0 and len(state["verdicts"]) == 1
    i, grades = 0, [2, 0, 1, 0, 0, 2, 1, 0]
    served_keys = []
    for g in grades:
        first = expected.order()[0]
        item = client.get(f"/api/item/{i}").json()
        assert item["key"] == ["test", first.query_id, first.doc_id]  # the most decisive pair given the grades
        served_keys.append(tuple(item["key"]))
        r = client.post("/api/judge", json={"index": i, "key": item["key"], "grade": g}).json()
        expected.grade(first.query_id, first.doc_id, g)
        qrels[first.query_id][first.doc_id] = g
        i = r["next"]
        assert i == len(served_keys)  # the next place holds the re-planned first pair, no reload needed
        # the panel follows the exact bounds of the grades so far
        (pb,) = pair_bounds(rankings, qrels, sorted(cfg.grades), 5)
        (v,) = r["verdicts"]
        assert (v["lowest"], v["highest"]) == (pytest.approx(pb.low, abs=1e-12), pytest.approx(pb.high, abs=1e-12))
        assert v["settled"] == (pb.verdict in ("A", "B")) and v["sentence"].startswith(
            "settled" if v["settled"] else "worst case: open")
    assert len(set(served_keys)) == len(grades)
    # items before the current one keep their places: going back shows what the rater graded
    assert [tuple(client.get(f"/api/item/{j}").json()["key"]) for j in range(len(grades))] == served_keys


def test_a_grade_for_a_pair_that_moved_is_refused(served):
    client, session, *_ = served
    item = client.get("/api/item/1").json()
    assert client.post("/api/judge", json={"index": 0, "key": client.get("/api/item/0").json()["key"],
                                           "grade": 2}).status_code == 200
    r = client.post("/api/judge", json={"index": 1, "key": item["key"], "grade": 1})
    if session.items[1].key != tuple(item["key"]):  # the grade re-planned item 1's place
        assert r.status_code == 409 and "reload" in r.json()["error"]
        assert tuple(item["key"]) not in session.judged
    else:
        assert r.status_code == 200
    wrong = [k for k in (tuple(it.key) for it in session.items[2:]) if k != session.items[2].key][0]
    r = client.post("/api/judge", json={"index": 2, "key": list(wrong), "grade": 1})
    assert r.status_code == 409 and wrong not in session.judged


@pytest.mark.parametrize("level", [0.6, 0.99])
def test_the_panel_says_how_likely_each_verdict_holds_and_stops_at_the_configured_confidence(served, monkeypatch,
                                                                                              level):
    """With rankings and the judge's grades the panel gives each verdict's probability of holding, and its stop
    line appears exactly when the verdicts are at least `labels.confidence` likely all together (and not before). The
    probabilities are calibrated on the grades people gave in the app, not on the task's own labels."""
    import runners.labels.verdicts.confidence_stop as cs
    from runners.labels.judging.live_plan import LivePlan
    from runners.labels.verdicts.confidence_stop import verdict_confidence

    client, session, rankings, qrels, cfg = served
    monkeypatch.setattr(cs, "MIN_CALIBRATION", 2)
    pool = sorted({(q, d) for q in qrels for r in rankings.values() for d in r[q]})
    llm = {key: int(n % 3 == 0) for n, key in enumerate(pool)}
    session.live = LivePlan(session.live.planner, ["A", "B"], {"A": "A", "B": "B"}, 5, rankings, llm, level)
    i, seen, people = 0, [], {}
    for g in [2, 0, 1, 0, 0, 2, 1, 0, 0, 0, 1, 0]:
        item = client.get(f"/api/item/{i}").json()
        r = client.post("/api/judge", json={"index": i, "key": item["key"], "grade": g}).json()
        qrels[item["key"][1]][item["key"][2]] = g
        people.setdefault(item["key"][1], {})[item["key"][2]] = g
        rep = verdict_confidence(rankings, qrels, sorted(cfg.grades), 5, llm, level, calibrate_on=people)
        (v,) = r["verdicts"]
        if rep.pairs:
            assert v["probability"] == pytest.approx(rep.pairs[0].probability, abs=1e-12)
            assert v["settled"] or "likely to hold" in v["sentence"]
        assert (v["stop"] is not None) == rep.reached
        seen.append(rep.reached)
        i = r["next"]
    assert v["probability"] is not None
    assert seen[-1] or level > 0.9, seen  # on these grades 0.6 is reached by the last grade
