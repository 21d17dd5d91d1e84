"""CSV is CSV (issue 28): every CSV the project writes (labels pool, inspect, stats, latency, history) is RFC 4180
(CRLF records; a field holding CR, LF, the delimiter or a quote is quoted), and Python's csv module and pandas
read back the rows its JSON twin holds, whatever the texts and labels hold."""

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

from conftest import REPO
from runners.cli import app
from runners.results.spreadsheet import restore

runner = CliRunner()
LABEL = 'BM25, "lexical" ; v2'  # the delimiter and quotes in a label (control characters are refused there)
TEXTS = ["lone\rCR in the middle", "line one\nline two", "crlf\r\ninside", 'a, "quoted" text', "=1+2 formula-like",
         "plain question"]


def rfc4180_problems(text: str) -> list[str]:
    """Bare CR/LF outside quotes, a record not ending in CRLF, or a quote inside an unquoted field."""
    problems, quoted, at_start, i = [], False, True, 0
    while i < len(text):
        c = text[i]
        if quoted:
            if c == '"':
                if text[i + 1:i + 2] == '"':
                    i += 1
                else:
                    quoted = False
        elif c == '"':
            if not at_start:
                problems.append(f"quote inside an unquoted field at {i}")
            quoted = True
        elif c == "\r" and text[i + 1:i + 2] != "\n":
            problems.append(f"bare CR at {i}")
        elif c == "\n" and text[i - 1:i] != "\r":
            problems.append(f"bare LF at {i}")
        at_start = c in ",\n"
        i += 1
    if text and not text.endswith("\r\n"):
        problems.append("last record does not end in CRLF")
    return problems


def read_both(text: str) -> list[dict[str, str]]:
    """The rows as Python's csv module reads them, checked equal to what pandas reads (cells un-neutralised)."""
    assert rfc4180_problems(text) == []
    by_csv = [{k: restore(v) for k, v in row.items()} for row in csv.DictReader(io.StringIO(text, newline=""))]
    frame = pd.read_csv(io.BytesIO(text.encode("utf-8")), dtype=str, keep_default_na=False)
    by_pandas = [{k: restore(v) for k, v in row.items()} for row in frame.to_dict("records")]
    assert by_pandas == by_csv
    return by_csv


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    """The inspect fixture's collection with hostile query texts and titles, a BM25 run and a history record."""
    root = tmp_path_factory.mktemp("csv")
    data = root / "kb"
    shutil.copytree(REPO / "tests" / "fixtures" / "inspect_kb", data)
    queries = [json.loads(line) for line in (data / "queries.jsonl").read_text().splitlines() if line]
    for q, text in zip(queries, TEXTS):
        q["text"] = text
    (data / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    docs = [json.loads(line) for line in (data / "corpus.jsonl").read_text().splitlines() if line]
    for d, text in zip(docs, TEXTS[::-1] * 2):
        d["title"] = text
        d["text"] = d["text"] + " " + text
    (data / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    cfg = root / "bench.yaml"
    cfg.write_text(yaml.safe_dump({"name": "csv", "tasks": [str(data / "task.yaml")], "results_dir": "results",
                                   "history": "history", "stats": {"resamples": 200},
                                   "models": [{"name": "bm25", "label": LABEL}]}))
    r = runner.invoke(app, ["run", "-c", str(cfg)])
    assert r.exit_code == 0, r.output
    return cfg


def _out(*args: str) -> str:
    r = runner.invoke(app, list(args))
    assert r.exit_code == 0, r.output
    return r.stdout_bytes.decode("utf-8")  # Click's `stdout` turns CRLF into LF: the bytes are what a pipe gets


def test_pool_csv_reads_back_as_its_jsonl(hostile, tmp_path):
    out = tmp_path / "pool.csv"
    _out("labels", "pool", "-c", str(hostile), "--depth", "5", "-o", str(out))
    rows = read_both(out.read_bytes().decode("utf-8"))
    twin = [json.loads(line) for line in out.with_suffix(".jsonl").read_text(encoding="utf-8").splitlines()]
    assert rows == [{k: str(v) for k, v in r.items()} for r in twin] and len(rows) > 5  # same rows, task included
    assert any("\r" in r["query"] for r in rows) and any("\n" in r["document"] for r in rows)


def test_inspect_worst_csv_reads_back_as_its_json(hostile):
    cfg = str(hostile)
    rows = read_both(_out("inspect", "worst", "-c", cfg, "--model", LABEL, "--format", "csv"))
    items = json.loads(_out("inspect", "worst", "-c", cfg, "--model", LABEL, "--format", "json"))["queries"]
    assert [(r["query_id"], r["text"], float(r["ndcg_at_10"])) for r in rows] == [
        (i["query_id"], i["text"], i["score"]) for i in items]
    assert {r["text"] for r in rows} == set(TEXTS[:3])  # CR, LF and CRLF inside a cell


def test_stats_csv_reads_back_as_its_json(hostile):
    rows = read_both(_out("stats", "-c", str(hostile), "--format", "csv"))
    doc = json.loads(_out("stats", "-c", str(hostile), "--format", "json"))
    intervals = [i for t in doc["tasks"] for i in t["intervals"]]
    assert [(r["candidate"], float(r["mean"]), float(r["ci_low"])) for r in rows if r["kind"] == "interval"] == [
        (i["candidate"], i["mean"], i["ci_low"]) for i in intervals]
    assert intervals[0]["candidate"] == LABEL


def test_history_csv_reads_back_as_its_json(hostile):
    rows = read_both(_out("history", "-c", str(hostile), "--format", "csv"))
    doc = json.loads(_out("history", "-c", str(hostile), "--format", "json"))
    steps = [s for t in doc["timelines"] for s in t["steps"]]
    assert [r["candidate"] for r in rows] == [s["candidate"] for s in steps] == [LABEL]
    assert [float(r["mean"]) for r in rows] == [s["mean"] for s in steps]


def test_latency_csv_reads_back_as_its_json(hostile):
    args = ["latency", "-c", str(hostile), "--queries", "3", "--repeats", "1", "--warmup", "0",
            "--encode-sample", "3"]
    rows = read_both(_out(*args, "--format", "csv"))
    doc = json.loads(_out(*args, "--format", "json"))["latency"]
    assert [r["candidate"] for r in rows] == [d["candidate"] for d in doc] == [LABEL]
    assert list(rows[0]) == list(doc[0])  # two passes time differently: the same columns, the same candidates


def test_the_checker_itself_fails_on_bare_line_breaks():
    assert rfc4180_problems('a,b\r\n"x\ry",z\r\n') == []
    assert rfc4180_problems("a,b\nx\ry,z\n") == ["bare LF at 3", "bare CR at 5", "bare LF at 9",
                                                 "last record does not end in CRLF"]
