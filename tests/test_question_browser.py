"""The question mode of `labels serve --questions` as a rater meets it (issue 38): the real server in a subprocess,
real headless Chromium pressing keys. Generated questions are accepted, edited and rejected with the keyboard, each
with its source passage's grade; every review is in `<added>.reviews.jsonl` before the screen moves on, survives
kill -9 and resumes on restart; a question holding markup is only text.

Needs Debian's `chromium` and the PyPI package `playwright` (drives the system browser, no download), as
tests/test_judging_browser.py; skipped, saying why, when either is absent.
"""

from __future__ import annotations


import pytest

from judging_fixture import GENERATED, Server, lines, step_through, write_added, write_task
from test_report_browser import ARGS, CHROMIUM
from test_report_browser import pytestmark as _browser_marks

pytestmark = [*_browser_marks, pytest.mark.slow]
BY_TEXT = {text: q for q, text, _ in GENERATED}
DOC = {q: d for q, _, d in GENERATED}


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def task(tmp_path):
    yaml_path, _ = write_task(tmp_path)
    return yaml_path, write_added(yaml_path)


def _page(browser, url: str):
    page = browser.new_page(viewport={"width": 1280, "height": 860})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" and "400" not in m.text else None)
    page.goto(url, wait_until="load")
    page.wait_for_selector("body[data-index]")
    page.errors = errors  # type: ignore[attr-defined]
    return page


def _keys(page, keys: str) -> None:
    for k in keys:
        page.keyboard.press(k)


def _saved(page, n: int) -> None:
    page.wait_for_selector(f"body[data-saved='{n}']", timeout=10_000)


def _on_screen(page) -> str:
    """The query id of the question on screen (the fixture's texts are unique)."""
    return BY_TEXT[page.inner_text("#query")]


def test_accept_edit_reject_with_the_keyboard_writes_the_reviews(browser, task):
    yaml_path, added = task
    with Server("--questions", "-t", str(yaml_path), "--rater", "ana") as srv:
        assert "5 generated questions to verify, 0 reviewed before" in srv.output
        page = _page(browser, srv.url)
        shown = []
        shown.append(_on_screen(page))
        assert page.inner_text("#text")  # the source passage is on screen
        page.keyboard.press("a")  # accept without a grade: refused, nothing written
        page.wait_for_selector("#status.bad")
        assert "grade the source passage first" in page.inner_text("#status")
        _keys(page, "2a")
        _saved(page, 1)
        shown.append(_on_screen(page))
        _keys(page, "1e")
        page.wait_for_selector("body[data-editing='1']")
        page.keyboard.type("<b>where</b> are the meal limits for a trip?")  # 'a', 'r', 'e' type, do not act
        page.keyboard.press("Enter")
        _saved(page, 2)
        shown.append(_on_screen(page))
        page.keyboard.press("r")
        _saved(page, 3)
        shown.append(_on_screen(page))
        _keys(page, "0e")
        page.wait_for_selector("body[data-editing='1']")
        page.keyboard.press("Escape")  # cancelled: nothing written, the question stays
        page.wait_for_selector("body[data-editing='0']")
        _keys(page, "0a")
        _saved(page, 4)
        shown.append(_on_screen(page))
        _keys(page, "2r")
        _saved(page, 5)
        page.wait_for_selector("body[data-index='done']")
        assert page.inner_text("#where").startswith("5 / 5 reviewed · 2 accepted · 1 edited · 2 rejected")
        page.keyboard.press("ArrowLeft")  # revisit: the edit shows as text, markup and all
        page.wait_for_selector("body[data-index='4']")
        page.keyboard.press("ArrowLeft")
        page.keyboard.press("ArrowLeft")
        page.keyboard.press("ArrowLeft")
        page.wait_for_selector("body[data-index='1']")
        assert page.inner_text("#edited") == "edited to: <b>where</b> are the meal limits for a trip?"
        assert "already edited by ana (passage graded 1)" in page.inner_text("#status")
        assert page.evaluate("document.querySelectorAll('#item b, #item img, #item script').length") == 0
        assert page.evaluate("window.__pwned") is None  # g3's <img onerror> was shown, never run
        assert not page.errors, page.errors
    rows = lines(added.with_name("kb.added.reviews.jsonl"))
    assert [r["query_id"] for r in rows] == shown and sorted(shown) == sorted(DOC)
    assert [r["action"] for r in rows] == ["accept", "edit", "reject", "accept", "reject"]
    assert [r.get("grade") for r in rows] == [2, 1, None, 0, 2]
    assert rows[1]["text"] == "<b>where</b> are the meal limits for a trip?" and "text" not in rows[0]
    assert {r["rater"] for r in rows} == {"ana"} and all(r["time"] for r in rows)
    # the collection loader applies them: accepted and edited questions scored on their passage's grade, edited
    # text in place, rejected ones dropped
    from custom_tasks.config import TaskConfig
    from custom_tasks.sources import load_collection

    cfg = TaskConfig.from_file(yaml_path)
    c = load_collection(cfg.source, cfg.base_dir, cfg.name)
    assert c.queries[shown[1]] == "<b>where</b> are the meal limits for a trip?"
    assert {shown[0], shown[1], shown[3]} <= set(c.queries) and not {shown[2], shown[4]} & set(c.queries)
    assert c.qrels["test"][shown[0]] == {DOC[shown[0]]: 2} and c.qrels["test"][shown[1]] == {DOC[shown[1]]: 1}


def test_the_previous_and_next_buttons_and_keys_move_and_write_nothing(browser, task):
    """The next / previous buttons and n / p move between questions as in the grades page (page.py moved/stepped);
    at the first question ← stays; no review is written."""
    yaml_path, added = task
    with Server("--questions", "-t", str(yaml_path), "--rater", "ana") as srv:
        page = _page(browser, srv.url)
        page.wait_for_selector("body[data-index='0']")
        first = _on_screen(page)
        # at question 0, the previous button and ← do nothing: the next move that moves lands on 1
        step_through(page, [("next", 1), ("n", 2), ("prev", 1), ("p", 0), ("prev", None), ("ArrowLeft", None),
                            ("n", 1), ("p", 0)])
        assert _on_screen(page) == first
        assert not page.errors, page.errors
    reviews = added.with_name("kb.added.reviews.jsonl")
    assert not reviews.exists() or not lines(reviews)


def test_a_hostile_question_is_text_and_runs_nothing(browser, tmp_path):
    yaml_path, _ = write_task(tmp_path)
    hostile = "<script>window.__pwned='s'</script><img src=x onerror=\"window.__pwned='i'\"> \x1b[31mvpn\x1b[0m"
    added = write_added(yaml_path, [{"query_id": "h1", "query": hostile, "relevant": {},
                                     "provenance": {"source_doc": "vpn-mac"},
                                     "tags": {"source": "llm:fake/model-1", "verified": False}}])
    with Server("--questions", "-t", str(yaml_path), "--rater", "ana") as srv:
        page = browser.new_page()
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.goto(srv.url, wait_until="load")
        page.wait_for_selector("body[data-index='0']")
        page.wait_for_timeout(300)
        q = page.inner_text("#query")
        assert "<script>window.__pwned='s'</script>" in q and "<img src=x" in q
        assert "\u241b[31mvpn" in q and "\x1b" not in q
        assert page.evaluate("window.__pwned") is None
        assert page.evaluate("document.querySelectorAll('script').length") == 1  # the page's own
        assert all(u.startswith(srv.base) for u in requests), requests
        _keys(page, "1e")
        page.wait_for_selector("body[data-editing='1']")
        assert page.input_value("#edit").startswith("<script>")  # the field holds the text, as text
        page.keyboard.press("Enter")  # unchanged: an acceptance
        _saved(page, 1)
    assert [(r["action"], r["grade"]) for r in lines(added.with_name("kb.added.reviews.jsonl"))] == [("accept", 1)]


def test_kill_9_after_an_acknowledged_review_loses_nothing_and_resumes(browser, task):
    yaml_path, added = task
    reviews = added.with_name("kb.added.reviews.jsonl")
    args = ("--questions", "-t", str(yaml_path), "--rater", "ana")
    srv = Server(*args)
    try:
        page = _page(browser, srv.url)
        first = [_on_screen(page)]
        _keys(page, "2a")
        _saved(page, 1)
        first.append(_on_screen(page))
        page.keyboard.press("r")
        _saved(page, 2)
        third = _on_screen(page)
        srv.kill9()  # no shutdown handler runs
    finally:
        srv.stop()
    assert [r["query_id"] for r in lines(reviews)] == first
    with open(reviews, "ab") as f:
        f.write(b'{"query_id": "g9", "act')  # a line cut by a crash mid-write
    with Server(*args) as again:
        assert "2 reviewed before" in again.output and "cut off by a crash" in again.output
        page = _page(browser, again.url)
        page.wait_for_selector("body[data-index='2']")  # the first question without a review
        assert _on_screen(page) == third
        _keys(page, "1a")
        _saved(page, 1)
    # the cut line (never acknowledged) is gone, so the task loads with its reviews applied
    assert [r["query_id"] for r in lines(reviews)] == [*first, third]
    from custom_tasks.config import TaskConfig
    from custom_tasks.sources import load_collection

    cfg = TaskConfig.from_file(yaml_path)
    c = load_collection(cfg.source, cfg.base_dir, cfg.name)
    accepted = {first[0], third}  # accepted and graded: verified, scored; the rejected one is dropped
    assert accepted <= set(c.queries) and first[1] not in c.queries
    assert all(c.qrels["test"][q] == {DOC[q]: g} for q, g in ((first[0], 2), (third, 1)))
