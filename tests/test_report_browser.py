"""The demo-like report in real headless Chromium: it loads, makes no request beyond its own file, logs no
console error, shows its key sections and figures; a screenshot is kept for a human to look at.

Needs Debian's `chromium` (apt-get install -y chromium) and the PyPI package `playwright`, which drives the
system browser through `executable_path` (no browser download). Skipped, saying why, when either is absent.
Set PRIVATE_MTEB_SCREENSHOT=path.png to keep the screenshot outside pytest's tmp folder.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import MINILM, TINY_YAML
from runners.cli import app

CHROMIUM = os.environ.get("PRIVATE_MTEB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
try:
    import playwright.sync_api  # noqa: F401
    HAVE_PLAYWRIGHT = True
except ImportError:
    HAVE_PLAYWRIGHT = False

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium not installed (apt-get install -y chromium)"),
    pytest.mark.skipif(not HAVE_PLAYWRIGHT, reason="playwright not installed (pip install playwright; it drives "
                                                   "the system chromium, no browser download)"),
]
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SECTIONS = {"summary": "Summary", "results": "Results", "forest": "Differences vs the baseline",
            "per-query": "Per query", "experiments": "Experiments", "public": "Private vs public",
            "worst": "Worst queries", "provenance": "Provenance"}


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    """The demo's shape on the tiny task: MiniLM vs BM25, a hybrid sweep, tags; then `report -o`."""
    import yaml

    tmp = tmp_path_factory.mktemp("browser")
    cfg = {"name": "demo-like", "tasks": [str(TINY_YAML)], "results_dir": str(tmp / "results"),
           "models": [{"name": MINILM, "label": "all-MiniLM-L6-v2"}, {"name": "bm25", "label": "BM25"}],
           "experiments": [{"type": "hybrid", "dense": MINILM, "fusion": "weighted", "alpha": [0.3, 0.7]}],
           "stats": {"resamples": 1000, "metrics": ["ndcg_at_10", "mrr_at_10"], "tags": ["source"]}}
    path = tmp / "bench.yaml"
    path.write_text(yaml.safe_dump(cfg))
    runner = CliRunner()
    ran = runner.invoke(app, ["run", "--config", str(path)])
    assert ran.exit_code == 0, ran.output
    out = tmp / "report.html"
    made = runner.invoke(app, ["report", "-c", str(path), "-o", str(out)])
    assert made.exit_code == 0, made.output
    return out


def test_report_renders_in_headless_chromium(report, tmp_path):
    from playwright.sync_api import sync_playwright

    console_errors: list[str] = []
    failed: list[str] = []
    requests: list[str] = []
    shot = Path(os.environ.get("PRIVATE_MTEB_SCREENSHOT") or tmp_path / "report.png")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900},
                                    user_agent="private-mteb-report-test")
            page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: console_errors.append(str(e)))
            page.on("requestfailed", lambda r: failed.append(f"{r.url}: {r.failure}"))
            page.on("request", lambda r: requests.append(r.url))
            response = page.goto(report.as_uri(), wait_until="load")
            assert response is None or response.ok
            page.screenshot(path=str(shot), full_page=True)
            assert page.title().startswith("private-mteb report")
            for key, title in SECTIONS.items():
                heading = page.locator(f"section#{key} > h2")
                assert heading.count() == 1, f"section {key} missing"
                assert title in heading.inner_text()
                assert heading.is_visible()
            boxes = [page.locator("figure svg").nth(i).bounding_box()
                     for i in range(page.locator("figure svg").count())]
            assert len(boxes) >= 4 and all(b and b["width"] > 200 and b["height"] > 100 for b in boxes)
            assert page.locator("tr.baseline").count() >= 1
            assert "http" not in "".join(page.locator("a").evaluate_all("els => els.map(e => e.href)"))
        finally:
            browser.close()
    assert not console_errors, console_errors
    assert not failed, failed
    assert requests == [report.as_uri()], f"the page fetched something besides itself: {requests}"
    assert shot.stat().st_size > 20_000


def test_a_right_to_left_cell_reads_right_to_left(tmp_path):
    """A table cell of Arabic or Hebrew text (questions shown with --show-text) is laid out right to left, an English
    or numeric one left to right, in the HTML the report writes."""
    from playwright.sync_api import sync_playwright

    from runners.analysis.page.blocks import Report, Section, Table
    from runners.analysis.page.html import render_html

    table = Table(["question", "nDCG@10"], [["ما هي عاصمة مصر؟", "0.5000"], ["מהי בירת ישראל?", "0.2500"],
                                           ["what is the capital of Egypt?", "1.0000"]])
    path = tmp_path / "r.html"
    path.write_text(render_html(Report("t", "s", [Section("worst", "Worst", [table])])), encoding="utf-8")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        page = browser.new_page()
        page.goto(path.as_uri())
        got = page.evaluate("[...document.querySelectorAll('tbody td')].map(td => getComputedStyle(td).direction)")
        browser.close()
    assert got == ["rtl", "ltr", "rtl", "ltr", "ltr", "ltr"], got
