"""The documentation site builds offline with `mkdocs build --strict` (issue 30), and stays complete.

CI installs the `docs` extra (.ci/run), so the build runs there; locally it is skipped without mkdocs. The other
checks need no mkdocs: the Python API page documents every name `runners` exports, and every output block marked
for scripts/docs-outputs.sh holds real output (the script has been run on it).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "scripts"))
import docs_outputs  # noqa: E402


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="mkdocs not installed (pip install 'private-mteb[docs]')")
def test_mkdocs_build_strict_offline(tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    pages = {p.relative_to(site).as_posix() for p in site.rglob("index.html")}
    for md in (REPO / "docs").glob("*.md"):
        want = "index.html" if md.stem == "index" else f"{md.stem}/index.html"
        assert want in pages, f"docs/{md.name} was not built"
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert "run_benchmark" in api and "stats_report" in api, "the API page lacks the generated reference"
    # nothing leaves the machine: the pages load no web font or script from elsewhere
    for html in site.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        assert "fonts.googleapis" not in text and "fonts.gstatic" not in text, html


def test_api_page_documents_every_export() -> None:
    import custom_tasks
    import runners

    api = (REPO / "docs" / "api.md").read_text(encoding="utf-8")
    shown = set(re.findall(r"^::: ([\w.]+)$", api, re.M))
    want = {f"runners{runners._EXPORTS[n]}.{n}" for n in runners.__all__}
    assert want <= shown, f"docs/api.md lacks {sorted(want - shown)}"
    assert f"custom_tasks{custom_tasks._EXPORTS['get_task']}.get_task" in shown


def test_marked_output_blocks_hold_real_output() -> None:
    """Each `<!-- docs-output: CMD -->` block was filled by scripts/docs-outputs.sh: more than its "$ CMD" line."""
    found = 0
    for path in docs_outputs.files():
        for m in docs_outputs.BLOCK.finditer(path.read_text(encoding="utf-8")):
            found += 1
            body = [ln for ln in m["body"].splitlines() if ln.strip() and not ln.startswith("$ ")]
            assert len(body) >= 2, f"{path.name}: the block of `{m['cmd']}` is empty: run scripts/docs-outputs.sh"
            assert "Traceback" not in m["body"], f"{path.name}: `{m['cmd']}` failed"
    assert found >= 3  # the README's stats and walk, the statistics page


def test_a_re_run_differs_by_its_numbers_not_its_timings_or_layout() -> None:
    """CI's `docs-outputs.sh --check --numbers --demo` (issue 37) fails on a changed figure, never on a timing."""
    shown = "┃ model ┃ nDCG@10 ┃ time ┃\n│ BM25  │ 0.7279  │ 1.9s │\nbenchmark ━━ 2/2  0:00:20 0:00:00\n" \
            "latency p50 17.4 ms; 2026-12-03 14:23  23de41b6"
    slower = "┃ model ┃ nDCG@10 ┃ time  ┃\n│ BM25  │ 0.7279  │ 16.4s │\nbenchmark ━━ 2/2  0:01:02 0:00:00\n" \
             "latency p50 61.4 ms; 2026-12-05 08:23  23de41b6"
    assert docs_outputs.comparable(shown) == docs_outputs.comparable(slower)
    assert docs_outputs.comparable(shown) != docs_outputs.comparable(shown.replace("0.7279", "0.7280"))
    assert docs_outputs.comparable("queries +11 improved") != docs_outputs.comparable("queries +12 improved")
    assert docs_outputs.demo_command("private-mteb stats -c configs/benchmarks/demo.yaml --by source")
    assert not docs_outputs.demo_command("scripts/gate-walks.sh demo-unchanged")
