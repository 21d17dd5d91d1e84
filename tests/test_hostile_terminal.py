"""Hostile text on the terminal (issues 19.5, 19.10, 20.4): ids, titles, queries, tags, paths and error
messages are printed literally by the one console writer (runners/cli/terminal.py): no emoji codes, no
markup, no terminal control sequences, and table rows are not wrapped when the output is not a terminal."""

from __future__ import annotations

import io
import json
import shutil
import sys
from pathlib import Path

import pytest
import yaml
from rich.table import Table
from rich.text import Text
from typer.testing import CliRunner

from runners.cli import app
from runners.cli.terminal import SafeConsole, styled, visible
from tests.conftest import REPO

runner = CliRunner()
FIX = REPO / "tests" / "fixtures"
TITLE = "Password reset \x1b]0;PWNED\x1b\\\x1b[2J :100: [bold]x[/]"  # sets the window title, clears the screen
QUERY = "I forgot my password \x1b]52;c;cHduZWQ=\x07 :1234: :+1: [/]"  # OSC 52: writes the clipboard
LONG = "how do I connect to the VPN " + "from a very long way away " * 12 + "END"  # ~340 characters


def test_visible_escapes_controls_and_keeps_text():
    assert visible("a\x1b]0;x\x07b") == "a\\x1b]0;x\\x07b"
    assert visible("cr\rnul\x00del\x7fcsi\x9bbidi\u202e") == "cr\\rnul\\x00del\\x7fcsi\\x9bbidi\\u202e"
    assert visible("line\nnext\ttab é ★ :100: [b]") == "line\nnext\ttab é ★ :100: [b]"


def test_console_prints_emoji_codes_markup_and_escapes_literally():
    buf = io.StringIO()
    console = SafeConsole(file=buf)
    console.print("data/qrels/test.tsv:100: bad id ':ok:' [bold]x[/] \x1b[2J")
    t = Table("id", "title", title="model :1234:")
    t.add_row(":+1:", TITLE)  # string cells: literal, escaped before the column is measured
    console.print(t)
    console.print(styled(("query ", "bold"), QUERY))
    console.print(Text.assemble(("raw ", "bold"), TITLE))  # a Text built from raw user text: escaped too
    out = buf.getvalue()
    assert "data/qrels/test.tsv:100: bad id ':ok:' [bold]x[/] \\x1b[2J" in out
    assert ":+1:" in out and "model :1234:" in out and visible(TITLE) in out and visible(QUERY) in out
    assert f"raw {visible(TITLE)}" in out
    assert "\x1b" not in out and not {"💯", "🔢", "👍", "🆗"} & set(out)


def test_error_line_keeps_file_line_and_brackets():
    res = runner.invoke(app, ["stats", "-c", "data/qrels/test.tsv:100: [bold]x[/] :1234: :+1:.yaml"])
    assert res.exit_code == 2
    assert "data/qrels/test.tsv:100: [bold]x[/] :1234: :+1:.yaml: benchmark config not found" in res.output


@pytest.fixture
def hostile(tmp_path, monkeypatch) -> Path:
    """The inspect fixture's collection with a hostile title, query and tag (ids and results unchanged)."""
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "kb"
    shutil.copytree(FIX / "inspect_kb", data)
    docs = [json.loads(line) for line in (data / "corpus.jsonl").read_text().splitlines() if line]
    for d in docs:
        d["title"] = TITLE if d["_id"] == "d02" else d["title"]
    (data / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    queries = [json.loads(line) for line in (data / "queries.jsonl").read_text().splitlines() if line]
    for q in queries:
        q.update({"q1": {"text": LONG}, "q2": {"text": QUERY, "source": ":ok: \x1b[31m"}}.get(q["_id"], {}))
    (data / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump({"name": "t", "tasks": [str(data / "task.yaml")],
                                    "results_dir": str(FIX / "inspect_results"),
                                    "models": [{"name": "acme/dense-a", "label": "DenseA :100:"}, {"name": "bm25"}]}))
    return path


def _clean(out: str) -> None:
    assert "\x1b" not in out and "\x07" not in out, repr(out[:500])
    assert not {"💯", "🔢", "👍", "🆗"} & set(out)


def test_inspect_query_shows_control_sequences_as_text(hostile):
    res = runner.invoke(app, ["inspect", "query", "-c", str(hostile), "q2"])
    assert res.exit_code == 0, res.output
    _clean(res.output)
    assert visible(TITLE) in res.output and visible(QUERY) in res.output
    assert "source=:ok: \\x1b[31m" in res.output


def test_inspect_worst_table_is_literal_and_not_wrapped_when_piped(hostile):
    res = runner.invoke(app, ["inspect", "worst", "-c", str(hostile), "--model", "bm25", "-n", "3"])
    assert res.exit_code == 0, res.output
    _clean(res.output)
    assert visible(QUERY) in res.output
    row = [line for line in res.output.splitlines() if "how do I connect" in line]
    assert len(row) == 1 and LONG in row[0], "a long row is one line when the output is not a terminal"


def test_csv_on_a_terminal_is_escaped_and_exact_when_piped(monkeypatch, capsys):
    from runners.cli.common import print_data

    print_data('q2,"a\x1b[2Jb"\r\n')
    assert capsys.readouterr().out == 'q2,"a\x1b[2Jb"\r\n'  # piped: the data, byte for byte
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    print_data('q2,"a\x1b[2Jb"\r\n')
    assert capsys.readouterr().out == 'q2,"a\\x1b[2Jb"\n'


def test_python_warnings_are_printed_literally(tmp_path):
    """A warning quoting user text (here the report's public source) goes through the console writer too."""
    import subprocess

    from tests.conftest import TINY_YAML
    from tests.fake_results import scores, write_config, write_model

    write_model(tmp_path / "results", "acme/one", "TinyKBRetrieval", scores(0.6, 1))
    cfg = write_config(tmp_path / "bench.yaml", tmp_path / "results", [str(TINY_YAML)], [{"name": "acme/one"}])
    bad = str(tmp_path / "nope\x1b]0;PWNED\x07:100:")
    proc = subprocess.run([sys.executable, "-m", "runners.cli", "report", "-c", str(cfg), "-o", str(tmp_path / "r.md"),
                           "--public", bad], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stderr and "\x07" not in proc.stderr and "💯" not in proc.stderr
    assert f"warning: private-vs-public section left out: --public {visible(bad)}" in proc.stderr


def test_stats_rows_are_not_wrapped_when_piped(tmp_path):
    """Issue 19.10: `stats | grep` saw rows wrapped at ~140 columns; a 200-character label stays on its row."""
    from tests.conftest import TINY_YAML
    from tests.fake_results import scores, write_config, write_model

    label = "acme-" + "very-long-model-name-" * 9 + "END"
    for i, name in enumerate(("acme/one", "acme/two")):
        write_model(tmp_path / "results", name, "TinyKBRetrieval", scores(0.6 - 0.2 * i, i), label=[label, "two"][i])
    cfg = write_config(tmp_path / "bench.yaml", tmp_path / "results", [str(TINY_YAML)],
                       [{"name": "acme/one", "label": label}, {"name": "acme/two"}])
    res = runner.invoke(app, ["stats", "-c", str(cfg)])
    assert res.exit_code == 0, res.output
    rows = [line for line in res.output.splitlines() if label in line]
    assert len(rows) >= 2 and any("all" in r and "[" in r for r in rows), res.output
    assert "(10 queries, 500 resamples)" in res.output, "nor is a table's title"
