"""`private-mteb report`: a real BM25 run on the tiny task plus a hand-made second candidate, rendered as HTML
and Markdown. Checks: no http(s) reference, no query/document text unless --show-text, the Markdown tables,
one-line errors, and that building a report loads no model library."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from runners.cli import app
from runners.results.store import find_run, model_dir_name, read_json

from conftest import REPO, TINY_YAML

runner = CliRunner()
FIXTURE = REPO / "tests" / "fixtures" / "kb_tiny"


def _texts() -> list[str]:
    """Every query text, document title and document text of the tiny task (what must not leak)."""
    out = [json.loads(line)["text"] for line in (FIXTURE / "queries.jsonl").read_text().splitlines() if line]
    for line in (FIXTURE / "corpus.jsonl").read_text().splitlines():
        if line:
            d = json.loads(line)
            out += [d["text"], d["title"]]
    return [t for t in out if len(t) >= 10]


def _add_candidate(results: Path, name: str, label: str, like: str, task: str, shift: float, seed: int) -> None:
    """A second candidate in the layout `run` writes, on the same data revision as a real run."""
    src = find_run(results, like, task)
    assert src is not None
    pq = read_json(src / "per_query_test.json")
    rng = np.random.default_rng(seed)
    subsets = {"default": {m: {q: float(np.clip(v + shift + rng.uniform(-0.1, 0.1), 0, 1)) for q, v in s.items()}
                           for m, s in pq["subsets"]["default"].items()}}
    rev, ds = "r1", src.name
    run = results / "private-mteb" / "runs" / model_dir_name(name) / rev / task / ds
    run.mkdir(parents=True)
    (run / "per_query_test.json").write_text(json.dumps({**pq, "model": name, "label": label, "subsets": subsets}))
    res = results / "results" / model_dir_name(name) / rev
    res.mkdir(parents=True)
    tr = read_json(next((results / "results" / model_dir_name(like)).glob(f"*/{task}.json")))
    (res / f"{task}.json").write_text(json.dumps(tr))
    (res / "model_meta.json").write_text(json.dumps({"name": name, "revision": rev}))
    cands = results / "private-mteb" / "candidates.json"
    data = json.loads(cands.read_text())
    data[name] = {"label": label, "revision": rev, "kind": "mteb"}
    cands.write_text(json.dumps(data))


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    """BM25 really run on the tiny task, and a hand-made dense candidate listed first (the baseline)."""
    import yaml

    tmp = tmp_path_factory.mktemp("report")
    cfg = {"name": "tiny-report", "tasks": [str(TINY_YAML)], "results_dir": str(tmp / "results"),
           "models": [{"name": "acme/dense", "label": "Dense"}, {"name": "bm25"}],
           "stats": {"resamples": 500, "metrics": ["ndcg_at_10", "mrr_at_10"], "tags": ["source"]}}
    path = tmp / "bench.yaml"
    path.write_text(yaml.safe_dump({**cfg, "models": [{"name": "bm25"}]}))
    first = runner.invoke(app, ["run", "--config", str(path)])
    assert first.exit_code == 0, first.output
    _add_candidate(tmp / "results", "acme/dense", "Dense", "mteb/baseline-bm25s", "TinyKBRetrieval", 0.05, 1)
    path.write_text(yaml.safe_dump(cfg))
    return path


def _report(bench: Path, out: Path, *extra: str) -> str:
    result = runner.invoke(app, ["report", "-c", str(bench), "-o", str(out), *extra])
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8")


def test_html_is_offline_and_private(bench, tmp_path):
    html = _report(bench, tmp_path / "report.html")
    assert "http://" not in html and "https://" not in html
    assert not re.search(r"""(src|href)\s*=\s*["'](?!#|data:)""", html), "no external resource of any scheme"
    assert "<script" not in html.lower()
    leaked = [t for t in _texts() if t in html]
    assert not leaked, f"document/query text without --show-text: {leaked[:3]}"
    for key in ("summary", "results", "forest", "per-query", "worst", "provenance"):
        assert f'id="{key}"' in html, key
    assert html.count("<svg") >= 2 and "Dense ★" in html
    assert "BM25" in html and "source=human" in html and "Holm" in html
    assert (tmp_path / "report.html").stat().st_mode & 0o044, "a report is for sharing, not a 0600 temp file"


def test_show_text_adds_queries_and_titles(bench, tmp_path):
    html = _report(bench, tmp_path / "report.html", "--show-text", "--no-public")
    assert any(t in html for t in _texts()), "--show-text should show the worst queries' text and titles"
    assert "http://" not in html and "https://" not in html


def test_markdown_twin_has_the_tables(bench, tmp_path):
    md = _report(bench, tmp_path / "report.md", "--no-public")
    assert md.startswith("# private-mteb report: tiny-report")
    for title in ("## 1. Summary", "## 2. Results", "Differences vs the baseline", "Worst queries", "Provenance"):
        assert title in md, title
    assert re.search(r"^\| # \| candidate \| kind \| queries \| nDCG@10 \\\[95% CI\\\] \| MRR@10 \\\[95% CI\\\] \| judged@10 \|$",
                     md, re.M)  # brackets escaped: Markdown-literal
    assert re.search(r"^\|---\|---\|---\|---\|---\|---\|---\|$", md, re.M)
    assert re.search(r"^\| \*\*\d\*\* \| \*\*Dense ★\*\* \|", md, re.M), "baseline row in bold"
    assert "<svg" not in md and "http://" not in md and "https://" not in md
    assert not [t for t in _texts() if t in md]


def test_baseline_option_and_errors(bench, tmp_path):
    html = _report(bench, tmp_path / "r.html", "--baseline", "BM25", "--no-public")
    assert "BM25 ★" in html and "vs the baseline (BM25)" in html
    bad = runner.invoke(app, ["report", "-c", str(bench), "-o", str(tmp_path / "r.html"), "--baseline", "nope"])
    assert bad.exit_code == 2 and "baseline 'nope'" in bad.output and "Traceback" not in bad.output
    bad = runner.invoke(app, ["report", "-c", str(bench), "-o", str(tmp_path / "r.pdf")])
    assert bad.exit_code == 2 and ".html or .md" in bad.output
    empty = tmp_path / "empty.yaml"
    empty.write_text(bench.read_text().replace(str(bench.parent / "results"), str(tmp_path / "none")))
    bad = runner.invoke(app, ["report", "-c", str(empty), "-o", str(tmp_path / "r.html")])
    assert bad.exit_code == 2 and "no stored results" in bad.output


def test_report_loads_no_model_library(bench, tmp_path):
    code = ("import sys; from runners.config.benchmark import BenchmarkConfig; "
            "from runners.analysis.report import build_report; "
            f"build_report(BenchmarkConfig.from_file({str(bench)!r}), with_public=False); "
            "bad = [m for m in ('torch', 'mteb', 'sentence_transformers', 'runners.execution') if m in sys.modules]; "
            "print('LOADED', bad)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "LOADED []" in out.stdout


def test_compare_plot_axis_and_whiskers():
    """The compare scatter: metric on the axes, a span of at least 0.1, whiskers, nothing clipped."""
    import pandas as pd

    from runners.analysis.compare import compare as cmp
    from runners.analysis.compare.compare_plot import comparison_figure

    table = pd.DataFrame({cmp.PRIVATE_MEAN: [0.5000, 0.4985], cmp.PUBLIC_MEAN: [0.40, 0.41],
                          cmp.PRIVATE_FLAG: [False, False], cmp.PUBLIC_FLAG: [False, False]}, index=["a/x", "b/y"])
    comp = cmp.Comparison(table, pd.DataFrame(), ["NoSuchPrivate"], ["NoSuchPublic"], "MTEB(eng, v2) retrieval",
                          "test", pd.DataFrame(), cmp.agreement(table), [], None)
    fig = comparison_figure(comp, {"a/x": (0.47, 0.53)})
    ax = fig.axes[0]
    lo, hi = ax.get_ylim()
    assert hi - lo >= 0.1 - 1e-9 and lo <= 0.47 and hi >= 0.53
    assert "main score" in ax.get_xlabel() or "@" in ax.get_xlabel()
    assert ax.containers or ax.collections  # the whisker was drawn
