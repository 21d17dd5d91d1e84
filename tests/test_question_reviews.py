"""The question mode of `labels serve` below the browser (issue 38): the reviews file `<added>.reviews.jsonl`
(append-only, latest review wins, a line cut by a crash closed before the next one, two servers appending at once
never interleave), the session (resume, what a review needs) and the app's endpoints (token, refusals).
"""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from judging_fixture import GENERATED, lines, write_added, write_task
from runners.statistics.analysis_errors import AnalysisError
from runners.labels.raters.review_store import ReviewLog, check_review, read_reviews, reviews_path

GRADES = {2: "answers", 1: "partly", 0: "no"}


def test_reviews_live_beside_the_added_file() -> None:
    assert reviews_path(Path("/x/kb.added.jsonl")) == Path("/x/kb.added.reviews.jsonl")
    assert reviews_path(Path("q.jsonl")) == Path("q.reviews.jsonl")


def test_rows_follow_the_contract_and_the_latest_review_wins(tmp_path: Path) -> None:
    path = tmp_path / "kb.added.reviews.jsonl"
    log = ReviewLog(path)
    log.append({"query_id": "g1", "action": "accept", "grade": 2, "rater": "ana"})
    log.append({"query_id": "g2", "action": "edit", "text": "meal limit per day?", "grade": 1, "rater": "ana"})
    log.append({"query_id": "g1", "action": "reject", "rater": "bo"})
    log.close()
    rows = lines(path)
    assert [set(r) for r in rows] == [{"query_id", "action", "grade", "rater", "time"},
                                      {"query_id", "action", "text", "grade", "rater", "time"},
                                      {"query_id", "action", "rater", "time"}]
    got = read_reviews(path, GRADES)
    assert (got.latest["g1"].action, got.latest["g1"].rater, got.latest["g1"].grade) == ("reject", "bo", None)
    assert (got.latest["g2"].text, got.latest["g2"].grade) == ("meal limit per day?", 1)
    assert not got.warnings


def test_a_line_cut_by_a_crash_is_removed_before_the_next_review(tmp_path: Path) -> None:
    """A cut line was never acknowledged (the answer waits for the whole line's fsync); the loader reads the file
    strictly, so opening it for appending cuts the remnant off, and a hand-written last line lacking only its
    newline is closed instead."""
    path = tmp_path / "r.jsonl"
    whole = json.dumps({"query_id": "g1", "action": "accept", "grade": 2, "rater": "ana", "time": "t"}) + "\n"
    path.write_text(whole + '{"query_id": "g2", "act')
    log = ReviewLog(path)
    assert log.repaired and log.repaired.endswith("r.jsonl:2: a review cut off by a crash (23 bytes, never "
                                                  "acknowledged) removed")
    log.append({"query_id": "g3", "action": "reject", "rater": "ana"})
    log.close()
    raw = path.read_text().splitlines()
    assert len(raw) == 2 and raw[0] + "\n" == whole and json.loads(raw[1])["query_id"] == "g3"
    with open(path, "a") as f:
        f.write(json.dumps({"query_id": "g4", "action": "reject", "rater": "bo"}))  # by hand, no newline
    log = ReviewLog(path)
    assert log.repaired is None
    log.append({"query_id": "g5", "action": "reject", "rater": "ana"})
    log.close()
    got = read_reviews(path, GRADES)
    assert list(got.latest) == ["g1", "g3", "g4", "g5"] and not got.warnings and got.lines == 4


def test_reading_on_leaves_a_partial_last_line_for_later(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    first = json.dumps({"query_id": "g1", "action": "accept", "rater": "ana"}) + "\n"
    second = json.dumps({"query_id": "g2", "action": "reject", "rater": "bo"}) + "\n"
    path.write_text(first + second[:10])  # another server is half-way through its write
    seen = read_reviews(path, GRADES)
    assert set(seen.latest) == {"g1"} and not seen.warnings
    with open(path, "a") as f:
        f.write(second[10:])
    seen = read_reviews(path, GRADES, seen)
    assert set(seen.latest) == {"g1", "g2"} and not seen.warnings and seen.lines == 2


def test_the_opening_read_counts_an_unended_last_line_or_names_it(tmp_path: Path) -> None:
    """At a session's start (`final`, under a shared lock: no append is half-way) a last line without its newline
    is a hand-written file's last review, or a line cut by a crash; later reads go on with the right line numbers."""
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"query_id": "g1", "action": "accept", "rater": "ana"}))  # no newline
    seen = read_reviews(path, GRADES, final=True)
    assert set(seen.latest) == {"g1"} and seen.lines == 1 and not seen.warnings
    log = ReviewLog(path)
    log.append({"query_id": "g2", "action": "reject", "rater": "ana"})
    log.append({"query_id": "g3", "action": "maybe", "rater": "ana"})  # the store writes what it is given
    log.close()
    seen = read_reviews(path, GRADES, seen)
    assert set(seen.latest) == {"g1", "g2"} and seen.lines == 3
    assert len(seen.warnings) == 1 and seen.warnings[0].endswith("r.jsonl:3: action 'maybe' is not one of accept, "
                                                                  "edit, reject: line skipped")
    with open(path, "a") as f:
        f.write('{"query_id": "g4", "act')
    cut = read_reviews(path, GRADES, final=True)
    assert set(cut.latest) == {"g1", "g2"} and cut.warnings[-1].endswith("r.jsonl:4: not a review line (JSON with "
                                                                         "query_id and action): line skipped")


@pytest.mark.parametrize("action, text, grade, message", [
    ("keep", None, None, "is not one of accept, edit, reject"),
    ("edit", "  ", 2, "needs the question's new text"),
    ("edit", "x" * 2001, 2, "at most 2000"),
    ("accept", "new text", 2, "only an edit carries a text"),
    ("accept", None, 3, "outside the task's scale [0, 1, 2]"),
    ("accept", None, True, "outside the task's scale"),
    ("accept", None, "2", "outside the task's scale"),
])
def test_a_bad_review_is_one_line(action, text, grade, message) -> None:
    with pytest.raises(AnalysisError, match=message.replace("[", r"\[").replace("]", r"\]")):
        check_review(action, text, grade, GRADES)


def _append_many(path: str, rater: str, n: int) -> None:
    log = ReviewLog(Path(path))
    for i in range(n):
        log.append({"query_id": f"{rater}{i}", "action": "edit", "text": rater * 200, "grade": 1, "rater": rater})
    log.close()


def test_two_servers_appending_at_once_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_append_many, args=(str(path), r, 150)) for r in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    got = read_reviews(path, GRADES)
    assert not got.warnings and len(got.latest) == 300 and got.lines == 300


# --- the session and the app over a real task ------------------------------------------------------------------

@pytest.fixture
def task(tmp_path):
    yaml_path, _ = write_task(tmp_path)
    added = write_added(yaml_path)
    return yaml_path, added


def _open(yaml_path: Path, rater: str = "ana"):
    from custom_tasks.config import TaskConfig
    from custom_tasks.sources import load_collection
    from runners.labels.judging.server import open_question_session

    cfg = TaskConfig.from_file(yaml_path)
    coll = load_collection(cfg.source, cfg.base_dir, cfg.name)
    return open_question_session(cfg, coll, rater, yaml_path.parent / "labels" / cfg.name)


def test_the_session_serves_the_unverified_questions_and_resumes(task) -> None:
    yaml_path, added = task
    s, token = _open(yaml_path)
    try:
        assert sorted(it.query_id for it in s.items) == [q for q, _, _ in GENERATED]  # not the log or verified one
        assert s.path == added.with_name("kb.added.reviews.jsonl")
        assert token == (yaml_path.parent / "labels" / "TinyKBRetrieval" / "ana.token").read_text().strip()
        first = s.item(0)
        assert first["has_source"] and first["text"] and first["review"] is None
        with pytest.raises(AnalysisError, match="grade the source passage first"):
            s.review(0, "accept", None, None)
        s.review(0, "accept", None, 2)
        s.review(1, "edit", "  a better question?  ", 1)
        s.review(2, "reject", None, None)
        s.review(3, "edit", s.items[3].query, 2)  # nothing changed: an acceptance
        assert s.progress() == {"total": 5, "done": 4, "accept": 2, "edit": 1, "reject": 1}
        bo, _ = _open(yaml_path, "bo")  # another rater at the same time (another order) sees what is done
        try:
            assert bo.progress()["done"] == 4 and bo.items[bo.first_open()].query_id == s.items[4].query_id
            planted = "mail ana.pop@example.com or call +40 721 234 567 about it?"
            rec = s.review(4, "edit", planted, 1)  # a rater's typing is redacted like a log query
            bo.refresh()  # and reads ana's new line before its next answer
            assert bo.progress()["done"] == 5 and bo.first_open() == 5
        finally:
            bo.close()
        assert rec["text"] == "mail [EMAIL] or call [PHONE] about it?"
        assert rec["redacted"] == {"email": 1, "phone": 1}
    finally:
        s.close()
    rows = lines(s.path)
    assert [r["action"] for r in rows] == ["accept", "edit", "reject", "accept", "edit"]
    assert "ana.pop" not in s.path.read_text() and "721" not in s.path.read_text()
    assert set(rows[4]) == {"query_id", "action", "text", "grade", "rater", "time"}
    assert rows[0]["query_id"] == s.items[0].query_id and rows[0]["grade"] == 2
    assert rows[1]["text"] == "a better question?" and "grade" not in rows[2]


def test_the_app_needs_the_token_and_refuses_bad_reviews(task) -> None:
    from starlette.testclient import TestClient

    from runners.labels.judging.app import make_question_app

    yaml_path, _ = task
    s, token = _open(yaml_path)
    app, token = make_question_app(s, token)
    try:
        assert TestClient(app).get("/api/state").status_code == 403
        client = TestClient(app, headers={"X-Judging-Token": token})
        page = client.get("/?token=" + token)
        assert "script-src 'nonce-" in page.headers["content-security-policy"] and 'data-mode="questions"' in page.text
        assert client.get("/api/state").json()["mode"] == "questions"
        for body in ({"index": 0, "action": "accept"}, {"index": 0, "action": "accept", "grade": 5},
                     {"index": 0, "action": "edit", "text": "", "grade": 1}, {"index": 9, "action": "reject"},
                     {"index": 0, "action": "maybe", "grade": 1}, {"action": "reject"}, ["x"]):
            assert client.post("/api/review", json=body).status_code == 400, body
        r = client.post("/api/review", json={"index": 0, "action": "reject"})
        assert r.status_code == 200 and r.json()["next"] == 1 and r.json()["progress"]["reject"] == 1
        assert client.get("/api/item/0").json()["review"]["action"] == "reject"
    finally:
        s.close()
    assert len(lines(s.path)) == 1


def test_serve_questions_needs_a_task_with_unverified_questions(tmp_path) -> None:
    from typer.testing import CliRunner

    from runners.cli import app

    yaml_path, pool = write_task(tmp_path)
    out = CliRunner().invoke(app, ["labels", "serve", "--questions", "-t", str(yaml_path), "--rater", "ana"])
    assert out.exit_code == 2 and "has no added questions" in out.output
    out = CliRunner().invoke(app, ["labels", "serve", "--questions", "-t", str(yaml_path), "--pool", str(pool),
                                   "--rater", "ana"])
    assert out.exit_code == 2 and "give -t alone" in out.output
    write_added(yaml_path, [{"query_id": "log1", "query": "vpn", "relevant": {}, "tags": {"source": "log"}}])
    out = CliRunner().invoke(app, ["labels", "serve", "--questions", "-t", str(yaml_path), "--rater", "ana"])
    assert out.exit_code == 2 and "no generated question awaits verification" in out.output


def test_serve_questions_with_every_question_reviewed_is_one_line(task, monkeypatch) -> None:
    """Nothing left to review: one line and exit 2 (docs/judging.md), not a server with nothing to show."""
    from typer.testing import CliRunner

    from runners.cli import app
    from runners.labels.judging import server

    yaml_path, added = task
    log = ReviewLog(reviews_path(added))
    for qid, _, _ in GENERATED:
        log.append({"query_id": qid, "action": "reject", "rater": "bo"})
    log.close()
    started = []
    monkeypatch.setattr(server, "serve", lambda *a, **k: started.append(a))
    out = CliRunner().invoke(app, ["labels", "serve", "--questions", "-t", str(yaml_path), "--rater", "ana"])
    assert out.exit_code == 2 and not started, out.output
    err = [line for line in out.output.splitlines() if line.startswith("error:")]
    assert len(err) == 1 and f"all {len(GENERATED)} reviewed" in out.output and "Traceback" not in out.output


def test_the_grades_mode_says_how_many_questions_await_verification(tmp_path) -> None:
    from custom_tasks.config import TaskConfig
    from judging_fixture import Server
    from runners.labels.judging.server import unverified_left

    yaml_path, pool = write_task(tmp_path)
    assert unverified_left(TaskConfig.from_file(yaml_path)) == 0
    added = write_added(yaml_path)
    log = ReviewLog(added.with_name("kb.added.reviews.jsonl"))
    log.append({"query_id": "g2", "action": "reject", "rater": "bo"})
    log.close()
    assert unverified_left(TaskConfig.from_file(yaml_path)) == 4
    with Server("-t", str(yaml_path), "--pool", str(pool), "--rater", "ana") as srv:
        assert ("4 generated question(s) of TinyKBRetrieval await verification: `private-mteb labels serve "
                "--questions -t TinyKBRetrieval --rater NAME`") in " ".join(srv.output.split())
