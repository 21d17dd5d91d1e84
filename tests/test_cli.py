"""The CLI: one clear line and a non-zero exit on bad input, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from runners.cli import app
from tests.conftest import REPO, TINY_YAML, write_benchmark

runner = CliRunner()
GOOD_DOCS = [{"_id": "d1", "title": "VPN", "text": "Install the client."}, {"_id": "d2", "text": "Reset passwords here."}]
GOOD_QUERIES = [{"_id": "q1", "text": "vpn?"}, {"_id": "q2", "text": "password?"}]
GOOD_QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t2\nq2\td2\t1\n"


def _beir(tmp_path, corpus=None, queries=None, qrels=None, raw_corpus: bytes | None = None):
    folder = tmp_path / "data"
    (folder / "qrels").mkdir(parents=True)
    if raw_corpus is not None:
        (folder / "corpus.jsonl").write_bytes(raw_corpus)
    elif corpus is not False:
        (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in (corpus or GOOD_DOCS)))
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in (queries or GOOD_QUERIES)))
    (folder / "qrels" / "test.tsv").write_text(GOOD_QRELS if qrels is None else qrels)
    cfg = tmp_path / "task.yaml"
    cfg.write_text("name: Bad\ndescription: d\nsource: {format: beir, path: data}\nlicense: cc0-1.0\n")
    return cfg


CASES = {
    "missing file": (dict(corpus=False), r"corpus.jsonl: .*(not found|missing|does not exist)"),
    "wrong encoding": (dict(raw_corpus='{"_id": "d1", "text": "caf\u00e9"}\n'.encode("latin-1")), r"corpus.jsonl:1: .*UTF-8"),
    "malformed json": (dict(raw_corpus=b'{"_id": "d1", "text": "ok"}\n{"_id": "d2", "text": \n'), r"corpus.jsonl:2: .*JSON"),
    "empty file": (dict(raw_corpus=b""), r"corpus.jsonl: .*empty"),
    "duplicate doc id": (dict(corpus=GOOD_DOCS + [{"_id": "d1", "text": "again"}]), r"corpus.jsonl:3: .*duplicate.*d1"),
    "missing column": (dict(corpus=[{"id": "d1", "text": "x"}]), r"corpus.jsonl:1: .*_id"),
    "empty text": (dict(corpus=GOOD_DOCS + [{"_id": "d3", "text": "   "}]), r"corpus.jsonl:3: .*empty"),
    "unknown doc": (dict(qrels=GOOD_QRELS + "q1\td9\t1\n"), r"test.tsv:4: .*d9"),
    "unknown query": (dict(qrels=GOOD_QRELS + "q7\td1\t1\n"), r"test.tsv:4: .*q7"),
    "non-integer grade": (dict(qrels=GOOD_QRELS + "q1\td2\tx\n"), r"test.tsv:4: .*grade"),
    "negative grade": (dict(qrels=GOOD_QRELS + "q1\td2\t-1\n"), r"test.tsv:4: .*grade"),
    "split without labels": (dict(qrels="query-id\tcorpus-id\tscore\n"), r"test.tsv.*(no labels|empty)"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_validate_bad_input_is_one_line(tmp_path, case):
    kwargs, pattern = CASES[case]
    cfg = _beir(tmp_path, **kwargs)
    result = runner.invoke(app, ["tasks", "validate", str(cfg)])
    out = result.output.strip()
    assert result.exit_code == 2, out
    assert "Traceback" not in out and len(out.splitlines()) == 1, out
    assert out.startswith("error: ")
    import re

    assert re.search(pattern, out, flags=re.IGNORECASE), out


def test_real_process_prints_no_traceback(tmp_path):
    cfg = _beir(tmp_path, qrels=GOOD_QRELS + "q1\td9\t1\n")
    proc = subprocess.run([sys.executable, "-m", "runners.cli", "tasks", "validate", str(cfg)], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr + proc.stdout
    assert proc.stderr.strip().count("\n") == 0 and "test.tsv:4" in proc.stderr


def test_tasks_list_validate_stats_on_good_task():
    assert "NorthwindKBRetrieval" in runner.invoke(app, ["tasks", "list"]).output
    ok = runner.invoke(app, ["tasks", "validate", str(TINY_YAML)])
    assert ok.exit_code == 0 and "ok TinyKBRetrieval" in ok.output
    stats = runner.invoke(app, ["tasks", "stats", str(TINY_YAML)])
    assert stats.exit_code == 0 and "relevant docs per query" in stats.output


@pytest.mark.parametrize("change,pattern", [
    ({"modelz": []}, "unknown key 'modelz'"),
    ({"tasks": ["NoSuchTask"]}, "unknown task 'NoSuchTask'"),
    ({"models": [{"name": "x", "kind": "nope"}]}, "models.0.kind"),
    ({"models": [{"name": "acme/unknown-model"}]}, "unknown model 'acme/unknown-model'"),
    ({"models": [{"name": "acme/m", "path": "/no/such/dir"}]}, "does not exist"),
])
def test_benchmark_config_errors(tmp_path, change, pattern):
    import yaml

    path = write_benchmark(tmp_path, [str(TINY_YAML)])
    data = yaml.safe_load(path.read_text())
    data.update(change)
    path.write_text(yaml.safe_dump(data))
    result = runner.invoke(app, ["run", "--config", str(path)])
    assert result.exit_code == 2 and pattern in result.output and "Traceback" not in result.output


def test_run_stats_check_cli_roundtrip(tmp_path):
    cfg = write_benchmark(tmp_path, [str(TINY_YAML)], models=[{"name": "bm25"}])
    first = runner.invoke(app, ["run", "--config", str(cfg)])
    assert first.exit_code == 0, first.output
    assert "nDCG@10" in first.output
    again = runner.invoke(app, ["run", "--config", str(cfg)])
    assert "cached" in again.output
    base = tmp_path / "baseline"
    import shutil

    shutil.copytree(tmp_path / "results", base)
    check = runner.invoke(app, ["check", "--baseline", str(base), "--candidate", str(tmp_path / "results")])
    assert check.exit_code == 0 and "PASS" in check.output
