"""The judging app (`labels serve`) as a rater meets it: the real server in a subprocess, real headless Chromium
pressing keys. Grades reach the rater's file before the screen moves on, survive kill -9, resume on reload and
restart; two raters at once keep to their own files; no token, no access; hostile documents are only text.

Needs Debian's `chromium` and the PyPI package `playwright` (drives the system browser, no download), as
tests/test_report_browser.py; skipped, saying why, when either is absent.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from judging_fixture import Server, lines, step_through, write_task
from test_report_browser import ARGS, CHROMIUM, pytestmark  # noqa: F401 - the same skips and launch flags

TASK = "TinyKBRetrieval"


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield b
        b.close()


def _page(browser, url: str):
    page = browser.new_page(viewport={"width": 1280, "height": 860})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(url, wait_until="load")
    page.wait_for_selector("body[data-index]")
    page.errors = errors  # type: ignore[attr-defined]
    return page


def _grade(page, key: str, n_saved: int) -> None:
    """Press a key and wait for the server's acknowledgement (the page counts them)."""
    page.keyboard.press(key)
    page.wait_for_selector(f"body[data-saved='{n_saved}']", timeout=10_000)


def _shown(page) -> tuple[str, str]:
    return page.inner_text("#query"), page.inner_text("#text")


@pytest.fixture
def task(tmp_path):
    return write_task(tmp_path)


def _file(yaml_path: Path, rater: str) -> Path:
    return yaml_path.parent / "labels" / TASK / f"{rater}.jsonl"


def test_keyboard_grading_of_ten_items_writes_ten_lines(browser, task):
    yaml_path, pool = task
    keys = ["2", "0", "1", "0", "0", "2", "1", "0", "s", "u"]
    with Server("-t", str(yaml_path), "--pool", str(pool), "--rater", "ana") as srv:
        page = _page(browser, srv.url)
        shown = []
        for n, key in enumerate(keys, 1):
            shown.append(_shown(page))
            _grade(page, key, n)
        assert page.inner_text("#where").startswith("10 / 30 done")
        assert not page.errors, page.errors
    got = lines(_file(yaml_path, "ana"))
    assert len(got) == 10
    assert [r["grade"] for r in got] == [2, 0, 1, 0, 0, 2, 1, 0, None, None]
    assert [r["status"] for r in got][-2:] == ["skip", "unsure"]
    assert {r["rater"] for r in got} == {"ana"} and all(r["time"] for r in got)
    assert len({(r["query_id"], r["doc_id"]) for r in got}) == 10  # ten different items, one line each
    # the line is about the pair that was on screen
    from custom_tasks.config import TaskConfig
    from custom_tasks.sources import load_collection

    cfg = TaskConfig.from_file(yaml_path)
    c = load_collection(cfg.source, cfg.base_dir, cfg.name)
    assert [(c.queries[r["query_id"]], c.corpus[r["doc_id"]]["text"]) for r in got] == shown


def test_reload_resumes_and_previous_regrades(browser, task):
    yaml_path, pool = task
    with Server("-t", str(yaml_path), "--pool", str(pool), "--rater", "ana") as srv:
        page = _page(browser, srv.url)
        for n, key in enumerate("210", 1):
            _grade(page, key, n)
        fourth = _shown(page)
        page.reload(wait_until="load")
        page.wait_for_selector("body[data-index='3']")
        assert _shown(page) == fourth
        page.keyboard.press("ArrowLeft")
        page.wait_for_selector("body[data-index='2']")
        assert "already graded 0" in page.inner_text("#status")
        _grade(page, "2", 1)  # a re-grade is a new line; the screen goes on to the first open item
        page.wait_for_selector("body[data-index='3']")
    got = lines(_file(yaml_path, "ana"))
    assert [r["grade"] for r in got] == [2, 1, 0, 2] and got[2]["doc_id"] == got[3]["doc_id"]


def test_the_previous_and_next_buttons_and_keys_move_and_write_nothing(browser, task):
    """→ / n and ← / p, and the next / previous buttons, move between items (page.py moved/stepped, shared with
    the question mode); at the first item ← stays; no line is written."""
    yaml_path, pool = task
    with Server("-t", str(yaml_path), "--pool", str(pool), "--rater", "ana") as srv:
        page = _page(browser, srv.url)
        page.wait_for_selector("body[data-index='0']")
        # at item 0, ← and the previous button do nothing: the next move that moves lands on 1
        step_through(page, [("next", 1), ("n", 2), ("ArrowRight", 3), ("prev", 2), ("p", 1), ("ArrowLeft", 0),
                            ("prev", None), ("p", None), ("next", 1)])
        assert "data-saved" not in page.evaluate("Object.keys(document.body.dataset).join(' ')")
        assert not page.errors, page.errors
    path = _file(yaml_path, "ana")
    assert not path.exists() or not lines(path)


def test_kill_9_right_after_an_acknowledged_grade_loses_nothing(browser, task):
    yaml_path, pool = task
    args = ("-t", str(yaml_path), "--pool", str(pool), "--rater", "ana")
    srv = Server(*args)
    try:
        page = _page(browser, srv.url)
        for n, key in enumerate("20102", 1):
            _grade(page, key, n)
        srv.kill9()  # no shutdown handler runs
    finally:
        srv.stop()
    assert [r["grade"] for r in lines(_file(yaml_path, "ana"))] == [2, 0, 1, 0, 2]
    with open(_file(yaml_path, "ana"), "ab") as f:
        f.write(b'{"task": "TinyKBRetrieval", "split": "te')  # a line cut by a crash mid-write
    with Server(*args) as again:
        assert "line skipped" in again.output
        page = _page(browser, again.url)
        page.wait_for_selector("body[data-index='5']")  # the first item without a judgment
        _grade(page, "1", 1)
    raw = _file(yaml_path, "ana").read_text().splitlines()
    assert len(raw) == 7 and json.loads(raw[-1])["grade"] == 1  # the cut line did not swallow the next one


def test_two_raters_at_once_keep_to_their_own_files(browser, task):
    yaml_path, pool = task
    with Server("-t", str(yaml_path), "--pool", str(pool), "--rater", "ana") as a, \
            Server("-t", str(yaml_path), "--pool", str(pool), "--rater", "bo") as b:
        pa, pb = _page(browser, a.url), _page(browser, b.url)
        for n in range(1, 13):
            pa.keyboard.press("2")
            pb.keyboard.press("0")  # both in flight at once
            pa.wait_for_selector(f"body[data-saved='{n}']")
            pb.wait_for_selector(f"body[data-saved='{n}']")
        # a second server for the same rater is refused (it would write the same file)
        import subprocess
        import sys

        dup = subprocess.run([sys.executable, "-m", "runners.cli", "labels", "serve", "-t", str(yaml_path), "--pool",
                              str(pool), "--rater", "ana", "--port", "0"], capture_output=True, text=True, timeout=60)
        assert dup.returncode == 2 and "open in another judging server" in dup.stdout + dup.stderr
    ana, bo = lines(_file(yaml_path, "ana")), lines(_file(yaml_path, "bo"))
    assert len(ana) == len(bo) == 12
    assert {r["rater"] for r in ana} == {"ana"} and {r["grade"] for r in ana} == {2}
    assert {r["rater"] for r in bo} == {"bo"} and {r["grade"] for r in bo} == {0}
    assert [r["doc_id"] for r in ana] != [r["doc_id"] for r in bo]  # each rater has their own seeded order


def _status(url: str, data: bytes | None = None, headers: dict | None = None) -> int:
    req = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def test_a_request_without_the_token_is_refused(browser, task):
    yaml_path, pool = task
    with Server("-t", str(yaml_path), "--pool", str(pool), "--rater", "ana") as srv:
        body = json.dumps({"index": 0, "grade": 2, "status": "graded"}).encode()
        assert _status(srv.base + "/") == 403
        assert _status(srv.base + "/api/state") == 403
        assert _status(srv.base + "/api/item/0") == 403
        assert _status(srv.base + "/api/judge", body, {"Content-Type": "application/json"}) == 403
        wrong = srv.token[:-1] + ("y" if srv.token.endswith("x") else "x")  # one character off, never the token
        assert _status(srv.base + "/api/judge", body, {"X-Judging-Token": wrong}) == 403
        assert _status(srv.base + "/?token=" + srv.token[:-2]) == 403
        page = browser.new_page()
        page.goto(srv.base + "/", wait_until="load")
        assert "needs the token" in page.inner_text("body")
        assert _status(srv.base + "/api/state", headers={"X-Judging-Token": srv.token}) == 200
    assert not _file(yaml_path, "ana").exists() or lines(_file(yaml_path, "ana")) == []


HOSTILE = {"evil": ("<img src=x onerror=\"window.__pwned='title'\">",
                    "before <script>window.__pwned='script'</script> <img src=x onerror=\"window.__pwned='img'\"> "
                    "\x1b[31mRED\x1b[0m =HYPERLINK(\"http://evil.example\",\"click\") vpn after")}


def test_a_hostile_document_is_shown_as_text_and_runs_nothing(browser, tmp_path):
    yaml_path, pool = write_task(tmp_path, HOSTILE, n_pool=1)  # q1: "how do I connect to the vpn ..."
    with Server("-t", str(yaml_path), "--pool", str(pool), "--rater", "ana") as srv:
        page = browser.new_page()
        requests, dialogs = [], []
        page.on("request", lambda r: requests.append(r.url))
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(srv.url, wait_until="load")
        page.wait_for_selector("body[data-index='0']")
        page.wait_for_timeout(300)
        text, title = page.inner_text("#text"), page.inner_text("#title")
        assert "<script>window.__pwned='script'</script>" in text
        assert "<img src=x onerror=\"window.__pwned='img'\">" in text
        assert "=HYPERLINK(\"http://evil.example\",\"click\")" in text
        assert "\u241b[31mRED\u241b[0m" in text and "\x1b" not in text  # the escape is shown, not acted on
        assert title.startswith("<img src=x")
        assert page.evaluate("window.__pwned") is None
        assert page.evaluate("document.querySelectorAll('#item img, #item script').length") == 0
        assert page.evaluate("document.querySelectorAll('script').length") == 1  # the page's own
        assert not dialogs
        assert all(u.startswith(srv.base) for u in requests), requests  # nothing fetched from elsewhere
        assert "vpn" in page.evaluate("[...document.querySelectorAll('#text mark')].map(m => m.textContent)"
                                      ".join(' ').toLowerCase()")  # the question's words are marked
        page.keyboard.press("1")
        page.wait_for_selector("body[data-saved='1']")
    assert lines(tmp_path / "labels" / TASK / "ana.jsonl")[0]["doc_id"] == "evil"


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_open_tab_keeps_working_after_a_crash_and_restart(browser, task):
    """The restarted server is the same rater's on the same task: same token, so the tab left open goes on."""
    yaml_path, pool = task
    args = ("-t", str(yaml_path), "--pool", str(pool), "--rater", "ana", "--port", str(_free_port()))
    srv = Server(*args)
    try:
        page = _page(browser, srv.url)
        for n, key in enumerate("21", 1):
            _grade(page, key, n)
        srv.kill9()
    finally:
        srv.stop()
    with Server(*args) as again:
        assert again.url == srv.url  # same port, same token: the URL the rater has open
        _grade(page, "0", 3)  # the old tab, not reloaded
        assert not [e for e in page.errors if "403" in e], page.errors
    assert [r["grade"] for r in lines(_file(yaml_path, "ana"))] == [2, 1, 0]


MARKS = [  # question, task languages, document, the words the page marks (in order)
    ("how do I set up the printer", ["eng-Latn"], "Run setup first, then set the printer. Printers: reset.",
     ["set", "printer"]),
    ("Wie setze ich das Passwort zurück?", ["deu-Latn"], "Zur Passwortänderung das Passwort zurücksetzen, dann zurück.",
     ["Passwort", "zurück"]),  # not inside longer words; "das" is a German stop word
    ("पासवर्ड रीसेट कैसे करें", ["hin-Deva"], "पासवर्डों के लिए पासवर्ड रीसेट करने", ["पासवर्ड", "रीसेट"]),
    ("zurück", ["deu-Latn"], "Bitte zuru\u0308ck gehen", ["zurück"]),  # the document in decomposed form (NFD)
    ("重置密码", ["zho-Hans"], "如何重置密码的方法", ["重置密码"]),  # no spaces between words: marked inside a run
]


def _one_item_pages(browser, tmp_path, items: list[tuple[str, list[str], str]]):
    """A page serving the real page script over one real session per (question, languages, document text), through
    a route; ``show(i)`` loads the i-th."""
    from types import SimpleNamespace

    from runners.labels.judging.items import Item
    from runners.labels.judging.page import page_html
    from runners.labels.judging.session import JudgingSession

    grades = {2: "answers", 1: "partly", 0: "no"}
    sessions = [JudgingSession(SimpleNamespace(name="T", grades=grades, languages=langs), "ana",
                               [Item(("test", "q", "d"), q, "", text)], tmp_path / f"ana{i}.jsonl")
                for i, (q, langs, text) in enumerate(items)]
    shown = [0]

    def handle(route) -> None:
        path = route.request.url.split("judging.test")[1]
        s = sessions[shown[0]]
        if path.startswith("/api/state"):
            body = {"task": "T", "rater": "ana", "start": 0, "grades": {str(k): v for k, v in grades.items()},
                    "progress": s.progress()}
        elif path.startswith("/api/item/0"):
            body = {**s.item(0), "progress": s.progress()}
        else:
            return route.fulfill(status=200, content_type="text/html", body=page_html("n", "T", "ana", grades))
        route.fulfill(status=200, content_type="application/json", body=json.dumps(body))

    page = browser.new_page()
    page.route("http://judging.test/**", handle)

    def show(i: int) -> None:
        shown[0] = i
        page.goto("http://judging.test/?token=t", wait_until="load")
        page.wait_for_selector("body[data-index='0']")

    return page, show


def test_the_question_is_marked_as_whole_words_in_any_script(browser, tmp_path):
    """The real page script over the real session's items (terms from the task's languages), served by a route."""
    page, show = _one_item_pages(browser, tmp_path, [(q, langs, text) for q, langs, text, _ in MARKS])
    for i, (_, _, _, want) in enumerate(MARKS):
        show(i)
        got = page.evaluate("[...document.querySelectorAll('#text mark')].map(m => m.textContent)")
        assert got == want, (MARKS[i], got)


def test_right_to_left_text_reads_right_to_left_and_the_rest_left_to_right(browser, tmp_path):
    """An Arabic or Hebrew question and document are laid out right to left (dir="auto": each element takes the
    direction of its first strong letter), an English one left to right, on the same page script; before, every text
    was laid out left to right, so an Arabic sentence's full stop stood at its start."""
    texts = [("ما هي عاصمة مصر؟", "القاهرة هي عاصمة مصر وأكبر مدنها.", "rtl"),
             ("מהי בירת ישראל?", "ירושלים היא בירת ישראל.", "rtl"),
             ("what is the capital of Egypt?", "Cairo is the capital of Egypt (القاهرة).", "ltr")]
    page, show = _one_item_pages(browser, tmp_path, [(q, ["ara-Arab"], text) for q, text, _ in texts])
    for i, (_, _, want) in enumerate(texts):
        show(i)
        got = page.evaluate("['query', 'text'].map(id => getComputedStyle(document.getElementById(id)).direction)")
        assert got == [want, want], (texts[i], got)
        assert page.evaluate("getComputedStyle(document.getElementById('grades')).direction") == "ltr"


def test_the_question_review_page_sets_the_direction_of_every_text_by_its_letters():
    """The review page of `labels serve --questions` lays out its texts as the judging page does (dir="auto")."""
    import re as regex

    from runners.labels.judging.question_page import question_page_html

    html = question_page_html("n", "T", "ana", {1: "yes", 0: "no"})
    for element in ("query", "edited", "edit", "title", "text"):
        assert regex.search(rf'id="{element}" dir="auto"', html), element
