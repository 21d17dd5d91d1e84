"""stats and check say when the stored results measured the task as it was, not as its YAML and files are now.

`run` re-runs a changed task (the run fingerprint), but between an edit of `languages:` (or a new document) and the
next `run`, `stats` printed the old English BM25 figure beside the task's new `ron-Latn` without a word.
"""

from __future__ import annotations

import json
import shutil

from typer.testing import CliRunner

from runners.cli import app
from tests.test_languages import BM25, bm25_run, romanian_task, set_languages

runner = CliRunner()


def _stats(cfg) -> str:
    res = runner.invoke(app, ["stats", "-c", str(cfg)])
    assert res.exit_code == 0, res.output
    return res.output


def test_stats_and_check_name_results_of_the_task_as_it_was(tmp_path):
    task_yaml = romanian_task(tmp_path, ["ron-Latn"])
    bm25_run(tmp_path, task_yaml)
    cfg = tmp_path / "results" / "bench.yaml"
    assert "note:" not in _stats(cfg)  # just run: the stored results are the task as it is

    set_languages(task_yaml, ["eng-Latn"])  # edited, not re-run
    out = _stats(cfg)
    assert "the stored results of BM25 were made with other task settings" in out, out
    assert "private-mteb run" in out

    shutil.copytree(tmp_path / "results" / "results", tmp_path / "baseline")  # check reads the same notes
    res = runner.invoke(app, ["check", "-c", str(cfg), "--baseline", str(tmp_path / "baseline")])
    assert "made with other task settings" in res.output, res.output

    bm25_run(tmp_path, task_yaml)  # re-run: the note goes
    assert "note:" not in _stats(cfg)

    corpus = tmp_path / "ro_kb" / "corpus.jsonl"  # one more document: another version of the collection
    first = json.loads(corpus.read_text(encoding="utf-8").splitlines()[0])
    with corpus.open("a", encoding="utf-8") as f:
        f.write(json.dumps({**first, "_id": "extra-doc"}, ensure_ascii=False) + "\n")
    out = _stats(cfg)
    assert "made on another version of the collection" in out, out
    assert "other task settings" not in out


def test_the_report_says_it_beside_the_tasks_languages(tmp_path):
    task_yaml = romanian_task(tmp_path, ["ron-Latn"])
    bm25_run(tmp_path, task_yaml)
    cfg = tmp_path / "results" / "bench.yaml"
    set_languages(task_yaml, ["eng-Latn"])
    out = tmp_path / "report.md"
    res = runner.invoke(app, ["report", "-c", str(cfg), "-o", str(out)])
    assert res.exit_code == 0, res.output
    text = out.read_text(encoding="utf-8")
    tasks = text[text.index("Tasks"):]
    assert "eng-Latn" in tasks and "stemmer romanian" in tasks  # the YAML now, the analyzer then ...
    assert "made with other task settings" in tasks  # ... and the sentence that reconciles them
