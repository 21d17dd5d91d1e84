"""The report shows judged@10 (results table, HTML and Markdown) and warns in the summary when a candidate's
judged@10 is clearly below the baseline's; hand-made rankings on the tiny task, no model run."""

from __future__ import annotations

import re
from pathlib import Path

from runners.analysis.report import build_report, render
from runners.config.benchmark import BenchmarkConfig
from runners.results.store import atomic_write_json, run_dir

from conftest import TINY_YAML
from fake_results import QUERIES, scores, write_config, write_model

TASK = "TinyKBRetrieval"
LABELLED = {"q1": "vpn-mac", "q2": "pwd", "q3": "leave-uk", "q4": "expense", "q5": "laptop", "q6": "deploy",
            "q7": "mfa", "q8": "oncall", "q9": "printer", "q10": "wifi"}


def _model(results: Path, name: str, label: str, rankings: dict, seed: int) -> None:
    write_model(results, name, TASK, scores(0.6, seed), label)
    atomic_write_json(run_dir(results, name, "r1", TASK, "ds1") / "rankings_test.json.gz",
                      {"top_k": 100, "subsets": {"default": rankings}}, compress=True)


def _bench(tmp_path: Path, new_judged: bool) -> BenchmarkConfig:
    results = tmp_path / "results"
    judged = {q: {LABELLED[q]: 0.9, f"unlabelled-{q}": 0.5} for q in QUERIES}  # judged@10 = 1/2
    unjudged = {q: {f"x-{q}": 0.9, f"y-{q}": 0.5} for q in QUERIES}  # judged@10 = 0
    _model(results, "acme/base", "Base", judged, 1)
    _model(results, "acme/new", "New", judged if new_judged else unjudged, 2)
    path = write_config(tmp_path / "bench.yaml", results, [str(TINY_YAML)],
                        [{"name": "acme/base", "label": "Base"}, {"name": "acme/new", "label": "New"}])
    return BenchmarkConfig.from_file(path)


def test_report_shows_judged_and_warns_below_the_baseline(tmp_path):
    rep = build_report(_bench(tmp_path, new_judged=False), with_public=False)
    md, html = render(rep, "md"), render(rep, "html")
    assert re.search(r"^\| # \| candidate \| kind \| queries \| .* \| judged@10 \|$", md, re.M)
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\|[^|]*\|\s*\**(Base ★|New)\**\s*\|.*\|\s*\**([0-9.]+)\**\s*\|$",
                                                        md, re.M)}
    assert rows == {"Base ★": "0.50", "New": "0.00"}
    summary = md.split("## 2.")[0]
    assert "New judged@10 = 0.00 vs Base 0.50" in summary
    assert "its score is probably underestimated; pool and label its top-10" in summary
    assert "judged@10</th>" in html and "probably underestimated; pool and label its top-10" in html
    assert "http://" not in html and "https://" not in html


def test_no_warning_when_equally_judged(tmp_path):
    md = render(build_report(_bench(tmp_path, new_judged=True), with_public=False), "md")
    assert "| judged@10 |" in md
    assert "probably underestimated; pool" not in md


def test_labels_section_shows_coverage_raters_and_agreement(tmp_path, monkeypatch):
    """The "Labels" section: judged@10 per candidate, who judged how much, kappa and alpha with CIs, a sentence."""
    import json

    sk = __import__("pytest").importorskip("sklearn.metrics")
    monkeypatch.setenv("PRIVATE_MTEB_PROJECT", str(tmp_path))  # labels/<task>/ of this project
    folder = tmp_path / "labels" / TASK
    folder.mkdir(parents=True)
    pairs = [(q, d) for q in QUERIES for d in ("vpn-mac", "pwd", "wifi")]
    a = [(i * 7) % 3 for i in range(len(pairs))]
    b = [g if i % 5 else (g + 2) % 3 for i, g in enumerate(a)]
    for rater, grades in (("ana", a), ("bo", b)):
        (folder / f"{rater}.jsonl").write_text("".join(json.dumps(
            {"task": TASK, "split": "test", "query_id": q, "doc_id": d, "grade": g, "status": "graded",
             "rater": rater, "time": "2026-01-01T10:00:00+00:00"}) + "\n" for (q, d), g in zip(pairs, grades)))
    md = render(build_report(_bench(tmp_path, new_judged=False), with_public=False), "md")
    section = md[md.index(". Labels"):]
    section = section[: section.index("\n## ")] if "\n## " in section else section
    assert "share of each candidate's top-10 with a label" in section and "| Base | 0.50 |" in section
    assert re.search(r"\| ana \| 30 \| 0 \| 0 \|", section) and re.search(r"\| bo \| 30 \| 0 \| 0 \|", section)
    kq = sk.cohen_kappa_score(a, b, weights="quadratic")
    assert re.search(rf"\| ana / bo \| 30 \| [^|]+ \| {kq:.2f} \\?\[[-0-9.]+, [-0-9.]+\\?\] \|", section), section
    assert "Krippendorff's alpha (ordinal) over all 2 raters:" in section
    # labels status (issue 39): the pair's bounds over the unjudged pairs and its verdict, as the CLI computes them
    from runners.labels.verdicts.label_status import label_status

    bench = _bench(tmp_path, new_judged=False)
    (p,) = label_status(bench, ["acme/base", "acme/new"]).pairs
    assert "could the unjudged pairs change the verdict?" in section
    assert f"| Base | New | {p.now:+.4f} | {p.low:+.4f} | {p.high:+.4f} | {p.unjudged:,} |" in section, section
    assert ("Settled: " if p.verdict in ("A", "B") else "Worst case: open: ") in section
    assert "Two raters agree" in section and "of them differ by two grades" in section
    monkeypatch.setenv("PRIVATE_MTEB_PROJECT", str(tmp_path / "other"))
    empty = render(build_report(_bench(tmp_path / "other", new_judged=False), with_public=False), "md")
    assert "Two raters" not in empty  # no raters' files there: coverage only
