"""`labels serve -c CONFIG` in a real browser (issue 39): the real server in a subprocess serves the decisive
order re-planned after every grade, the page moves to the re-planned next pair without a reload, and its panel
says settled/open per pair of candidates as `labels status` computes it from the same grades.

Hand-made stored rankings (two candidates that order the tiny KB's documents differently), no model run. Needs
Debian's `chromium` and the PyPI package `playwright`, as tests/test_judging_browser.py (skipped, saying why,
without them).
"""

from __future__ import annotations

import numpy as np
import pytest

from judging_fixture import Server, lines, write_task
from test_report_browser import ARGS, CHROMIUM
from test_report_browser import pytestmark as browser_skips  # the same skips and launch flags

pytestmark = [*browser_skips, pytest.mark.slow]

TASK = "TinyKBRetrieval"


def _config(tmp_path):
    from custom_tasks.config import TaskConfig
    from custom_tasks.sources import load_collection
    from fake_results import scores, write_config, write_model
    from runners.results.store import atomic_write_json, run_dir

    yaml_path, _ = write_task(tmp_path)
    cfg = TaskConfig.from_file(yaml_path)
    coll = load_collection(cfg.source, cfg.base_dir, cfg.name)
    docs = sorted(coll.corpus)
    rng = np.random.default_rng(7)
    results, rankings = tmp_path / "results", {}
    for seed, name in enumerate(("acme/one", "acme/two")):
        write_model(results, name, TASK, scores(0.6, seed), name)
        rankings[name] = {q: {d: float(s) for d, s in zip(docs, rng.random(len(docs)))} for q in coll.qrels["test"]}
        atomic_write_json(run_dir(results, name, "r1", TASK, "ds1") / "rankings_test.json.gz",
                          {"top_k": 100, "subsets": {"default": rankings[name]}}, compress=True)
    bench = write_config(tmp_path / "bench.yaml", results, [str(yaml_path)],
                         [{"name": "acme/one", "label": "One"}, {"name": "acme/two", "label": "Two"}])
    return bench, yaml_path, rankings, {q: dict(v) for q, v in coll.qrels["test"].items()}, sorted(cfg.grades)


def test_the_app_serves_the_re_planned_order_and_its_panel_without_a_reload(tmp_path):
    from playwright.sync_api import sync_playwright

    from runners.labels.pool.judged import ranked_ids
    from runners.labels.pool.replan_order import Replanner
    from runners.labels.pool.verdict_bounds import pair_bounds

    bench, yaml_path, rankings, qrels, scale = _config(tmp_path)
    k = 3
    top = {n: {q: dict((d, r[q][d]) for d in ranked_ids(r[q])[:k]) for q in r} for n, r in rankings.items()}
    expected = Replanner(top, qrels, scale, k)
    keys = "2010201"
    with Server("-c", str(bench), "--depth", str(k), "--rater", "ana") as srv, sync_playwright() as p:
        assert "order: decisive, re-planned after every grade" in " ".join(srv.output.split())
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 860})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(srv.url, wait_until="load")
        page.wait_for_selector("body[data-index='0']")
        page.evaluate("window.sameDocument = 'yes'")  # gone if the page ever reloads
        assert page.is_visible("#verdicts summary")
        for n, key in enumerate(keys, 1):
            first = expected.order()[0]
            assert page.get_attribute("body", "data-key") == f"test/{first.query_id}/{first.doc_id}", n
            page.keyboard.press(key)
            page.wait_for_selector(f"body[data-saved='{n}'][data-index='{n}']", timeout=10_000)
            expected.grade(first.query_id, first.doc_id, int(key))
            qrels[first.query_id][first.doc_id] = int(key)
        assert page.evaluate("window.sameDocument") == "yes"
        page.click("#verdicts summary")
        (pb,) = pair_bounds(top, qrels, scale, k)
        shown = page.inner_text("#pairs")
        assert shown.startswith("settled" if pb.verdict in ("A", "B") else "worst case: open:"), shown
        if pb.verdict in ("A", "B") or pb.now != 0:  # the winner (or the one ahead now) is named, by its label
            ahead = "acme/one" if (pb.verdict == "A" or (pb.verdict == "open" and pb.now > 0)) else "acme/two"
            assert ahead in shown.split(" leads now")[0].split(" beats ")[0], shown
        assert not errors, errors
        browser.close()
    got = lines(yaml_path.parent / "labels" / TASK / "ana.jsonl")
    assert [r["grade"] for r in got] == [int(c) for c in keys]


def test_a_tab_whose_pair_moved_shows_the_new_pair_and_saves_nothing(tmp_path):
    """Two tabs of one rater: a re-grade in one re-plans the items after it, so the other tab's item may now be
    another pair; its grade is refused (409) and the tab shows the pair now at that place instead."""
    import json
    import urllib.request

    from playwright.sync_api import sync_playwright

    bench, yaml_path, *_ = _config(tmp_path)

    def item(srv, i: int) -> str:
        req = urllib.request.Request(f"{srv.base}/api/item/{i}", headers={"X-Judging-Token": srv.token})
        return "/".join(json.loads(urllib.request.urlopen(req).read())["key"])

    def judge(srv, i: int, key: str, grade: int) -> None:
        body = json.dumps({"index": i, "key": key.split("/"), "grade": grade}).encode()
        req = urllib.request.Request(f"{srv.base}/api/judge", data=body, method="POST",
                                     headers={"X-Judging-Token": srv.token, "Content-Type": "application/json"})
        urllib.request.urlopen(req).read()

    with Server("-c", str(bench), "--depth", "3", "--rater", "ana") as srv, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = browser.new_page()
        page.goto(srv.url, wait_until="load")
        page.wait_for_selector("body[data-index='0']")
        page.keyboard.press("0")
        page.wait_for_selector("body[data-saved='1'][data-index='1']")
        seen = page.get_attribute("body", "data-key")
        first = item(srv, 0)
        for grade in [2, 1, 2, 0, 2, 1] * 3:  # the other tab re-grades item 0 until item 1's place holds another pair
            judge(srv, 0, first, grade)
            if item(srv, 1) != seen:
                break
        now = item(srv, 1)
        assert now != seen, "no re-grade moved item 1: the test would not exercise the refusal"
        page.keyboard.press("1")
        page.wait_for_selector(f"body[data-key='{now}']", timeout=10_000)
        assert "another pair is at this place now" in page.inner_text("#status")
        browser.close()
    got = lines(yaml_path.parent / "labels" / TASK / "ana.jsonl")
    assert all(f"test/{r['query_id']}/{r['doc_id']}" != seen for r in got)  # nothing saved for the moved pair
