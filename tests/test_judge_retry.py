"""`labels judge`'s one retry policy, its re-run of unrateable pairs, the endpoint in the judge identity, and
`--show-refused` (issue 36), against tests/fake_judge.py on 127.0.0.1.

Every kind of answer that brings no grade (a body cut short of its Content-Length, a connection dropped mid-body,
an HTML page, JSON without `choices`, a connection closed before answering, out-of-format text) is asked again, at
most `max_retries` times; a re-run asks every pair left unrateable; another server under the same model name is
another judge; and the refused answers can be read, escaped.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from custom_tasks.llm_labels import llm_labels_path, read_llm_labels
from fake_judge import FakeJudge
from runners.cli import app
from test_judge import bench, judge, pair_texts, tiny, truth_rule, write_pool  # noqa: F401 - fixtures

runner = CliRunner()


def _rows(task_yaml) -> dict:
    return {(r["query_id"], r["doc_id"]): r for r in read_llm_labels(llm_labels_path(task_yaml))}


def test_every_kind_of_malformed_answer_is_asked_again(tiny, tmp_path, served) -> None:
    task_yaml, c = tiny
    pool = write_pool(tmp_path, c)
    first = json.loads(pool.read_text().splitlines()[0])
    assert first["query_id"] != "q5"
    faults = {"pwd": ("cut",), "vpn-mac": ("drop",), "wifi": ("html",), "mfa": ("nochoices",),
              "printer": ("reset",), "vpn-win": ("malformed", "cut")}
    broken = {pair_texts(c, "q5", d): f for d, f in faults.items() if d in c.corpus}
    assert len(broken) == 6
    never = pair_texts(c, "q6", "pwd")  # more faults than retries (max_retries: 2): unrateable after 3 requests
    broken[never] = ("cut", "html", "nochoices", "drop")
    fake = FakeJudge(rule=truth_rule(c), faults=lambda q, p: broken.get((q, p), ()))
    rep = judge(bench(tmp_path, task_yaml, served(fake)), pool)
    n = len(pool.read_text().splitlines())
    assert (rep["asked"], rep["graded"], rep["unrateable"]) == (n, n - 1, 1), rep
    assert rep["requests"] == fake.requests == n + 1 + 1 + 1 + 1 + 1 + 2 + 2
    assert rep["failures"] == {"connection (cut answer)": 3, "not json": 3, "no content": 2, "malformed": 1,
                               "connection (RemoteDisconnected)": 1}, rep["failures"]
    rows = _rows(task_yaml)
    assert rows[("q6", "pwd")]["grade"] is None and rows[("q6", "pwd")]["requests"] == 3
    assert rows[("q6", "pwd")]["unrateable"] == ["connection (cut answer)", "no content", "not json"]
    assert all(rows[("q5", d)]["grade"] == truth_rule(c)(*pair_texts(c, "q5", d)) for d in faults)


def test_a_rerun_asks_every_unrateable_pair(tiny, tmp_path, served) -> None:
    task_yaml, c = tiny
    pool = write_pool(tmp_path, c)
    stuck = [pair_texts(c, "q5", d) for d in ("pwd", "vpn-mac", "wifi")]
    fake = FakeJudge(rule=truth_rule(c), malformed=lambda q, p: 99 if (q, p) in stuck else 0)
    cfg = bench(tmp_path, task_yaml, served(fake))
    assert judge(cfg, pool)["unrateable"] == 3
    # the same server again: the first of the three still cannot be graded, the other two now can
    fake.malformed = lambda q, p: 99 if (q, p) == stuck[0] else 0
    asked_before = fake.requests
    again = judge(cfg, pool)
    assert (again["asked"], again["graded"], again["unrateable"], again["cached"]) == (3, 2, 1, 105), again
    assert fake.requests - asked_before == 3 + 1 + 1  # the stuck pair with its two retries, then one each
    rows = _rows(task_yaml)
    assert rows[("q5", "pwd")]["grade"] is None
    assert rows[("q5", "vpn-mac")]["grade"] is not None and rows[("q5", "wifi")]["grade"] is not None


def test_another_endpoint_under_the_same_model_name_is_another_judge(tiny, tmp_path, served) -> None:
    task_yaml, c = tiny
    pool = write_pool(tmp_path, c)
    one, two = FakeJudge(rule=lambda q, p: 1), FakeJudge(rule=lambda q, p: 0)
    url_one, url_two = served(one), served(two)
    first = judge(bench(tmp_path, task_yaml, url_one), pool)
    assert first["asked"] == 108
    other = judge(bench(tmp_path, task_yaml, url_two), pool)  # model: fake-judge-1 on both
    assert (other["asked"], other["cached"]) == (108, 0) and two.requests == 108
    assert other["judge"] != first["judge"]
    # the same server written another way is the same judge: nothing is asked
    host, port = url_one.split("//")[1].split("/")[0].split(":")
    same = f"HTTP://{host}:{port}/v1/chat/completions/"
    again = judge(bench(tmp_path, task_yaml, same), pool)
    assert (again["asked"], again["judge"]) == (0, first["judge"]) and one.requests == 108


def test_show_refused_prints_what_a_model_that_cannot_follow_the_format_said(tiny, tmp_path, served) -> None:
    task_yaml, c = tiny
    pool = write_pool(tmp_path, c)
    said = "Relevance: high.\x1b]0;owned\x07\nI'd give it a 2 \u202eout of 2"
    fake = FakeJudge(malformed=lambda q, p: 99, malformed_text=said)
    cfg = bench(tmp_path, task_yaml, served(fake))
    r = runner.invoke(app, ["labels", "judge", "-c", str(cfg), "--pool", str(pool), "--show-refused", "2"])
    assert r.exit_code == 2, r.output
    lines = r.output.splitlines()
    assert lines[-1].startswith("error:") and "'##final score: N'" in lines[-1]
    shown = [line for line in lines if line.startswith("refused answer")]
    first = json.loads(pool.read_text().splitlines()[0])
    assert len(shown) == 2 and shown[0].startswith(f"refused answer 1/2 ({first['query_id']} / "
                                                   f"{first['doc_id']}, malformed): \"Relevance: high.")
    assert "\x1b" not in r.output and "\x07" not in r.output and "\u202e" not in r.output
    assert "\\u001b]0;owned" in shown[0] and "\\n" in shown[0]  # on one line, the escape shown, not obeyed
    assert not llm_labels_path(task_yaml).exists()  # nothing was graded, nothing stored
    # without the option, the stop says how to see them
    r = runner.invoke(app, ["labels", "judge", "-c", str(cfg), "--pool", str(pool)])
    assert r.exit_code == 2 and "--show-refused 3" in r.output and "refused answer" not in r.output


def test_show_refused_in_a_run_that_goes_on(tiny, tmp_path, served) -> None:
    task_yaml, c = tiny
    pool = write_pool(tmp_path, c)
    never = pair_texts(c, "q5", "mfa")
    fake = FakeJudge(rule=truth_rule(c), malformed=lambda q, p: 99 if (q, p) == never else 0)
    cfg = bench(tmp_path, task_yaml, served(fake))
    r = runner.invoke(app, ["labels", "judge", "-c", str(cfg), "--pool", str(pool)])
    assert r.exit_code == 0 and "1 unrateable" in r.output and "--show-refused 3" in r.output
    llm_labels_path(task_yaml).unlink()
    rep = judge(cfg, pool, "--show-refused", "5")
    assert rep["unrateable"] == 1
    assert rep["refused"] == [{"query_id": "q5", "doc_id": "mfa", "kind": "malformed",
                               "answer": "The passage seems relevant, I would say 2."}] * 3
    assert "refused" not in llm_labels_path(task_yaml).read_text()  # shown, never stored


def test_an_endpoint_answering_error_pages_is_no_judge_whatever_the_file_holds(tiny, tmp_path, served) -> None:
    """The grades file holds this judge's grades; the same endpoint now answers every request with an HTML page
    (HTTP 200). Not a run of unrateable pairs: one line, exit 2, the first pair's attempts only, the file as it was.
    Also when the first pair's failures are mixed (a timeout-like reset, then HTML): no answer was a judge's."""
    task_yaml, c = tiny
    pool = write_pool(tmp_path, c)
    fake = FakeJudge(rule=truth_rule(c))
    cfg = bench(tmp_path, task_yaml, served(fake))
    lines = pool.read_text().splitlines()
    part = tmp_path / "part.jsonl"  # the judge grades some pairs first: the file holds its grades
    part.write_text("\n".join(lines[:30]) + "\n")
    assert judge(cfg, part)["graded"] == 30
    before = llm_labels_path(task_yaml).read_bytes()
    for faults in (lambda q, p: ("html",) * 9, lambda q, p: ("reset",) + ("html",) * 9):
        fake.faults, asked = faults, fake.requests
        r = runner.invoke(app, ["labels", "judge", "-c", str(cfg), "--pool", str(pool)])
        assert r.exit_code == 2, r.output
        err = [line for line in r.output.splitlines() if line.startswith("error:")]
        assert len(err) == 1 and "did not answer chat-completions JSON" in err[0] and "Traceback" not in r.output
        assert llm_labels_path(task_yaml).read_bytes() == before  # not rewritten
        if faults(None, None)[0] == "html":
            assert fake.requests - asked == 3  # the first pair's 3 attempts: no 78 more
