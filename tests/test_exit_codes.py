"""The exit-code contract: 0 ok, 1 regression (`check` only), 2 bad input / usage / environment,
130 interrupted; always one line, never a traceback (unless PRIVATE_MTEB_DEBUG=1)."""

from __future__ import annotations

import errno
import json
import subprocess
import sys
import textwrap

import pytest
from typer.testing import CliRunner

from runners.cli import app
from tests.conftest import REPO, TINY_YAML
from tests.fake_results import scores, write_config, write_model

runner = CliRunner()
TASK = "TinyKBRetrieval"


def _invoke(args: list[str]):
    result = runner.invoke(app, args)
    out = result.output.strip()
    assert "Traceback" not in out, out
    return result.exit_code, out


@pytest.fixture
def bench(tmp_path):
    """Two models with results, and a config naming them."""
    results = tmp_path / "results"
    write_model(results, "acme/one", TASK, scores(0.8, 1), "One")
    write_model(results, "acme/two", TASK, scores(0.5, 2), "Two")
    return write_config(tmp_path / "bench.yaml", results, [str(TINY_YAML)],
                        [{"name": "acme/one", "label": "One"}, {"name": "acme/two", "label": "Two"}])


def _boom(exc: BaseException):
    def raiser(*args, **kwargs):
        raise exc

    return raiser


def test_unexpected_exception_is_one_internal_error_line(bench, monkeypatch):
    monkeypatch.setattr("runners.statistics.stats_report.stats_report", _boom(RuntimeError("boom")))
    code, out = _invoke(["stats", "-c", str(bench)])
    assert code == 2, out
    assert out == "error: internal error: RuntimeError: boom (run with PRIVATE_MTEB_DEBUG=1 for the traceback)"


def test_debug_env_shows_the_traceback(bench, monkeypatch):
    monkeypatch.setenv("PRIVATE_MTEB_DEBUG", "1")
    monkeypatch.setattr("runners.statistics.stats_report.stats_report", _boom(RuntimeError("boom")))
    result = runner.invoke(app, ["stats", "-c", str(bench)])
    assert result.exit_code == 2 and "Traceback" in result.output and "RuntimeError: boom" in result.output


@pytest.mark.parametrize("exc,pattern", [
    (OSError(errno.ENOSPC, "No space left on device", "/r/x.json"),
     "disk full while writing /r/x.json: free space or point results_dir elsewhere"),
    (OSError("94848 requested and 15328 written"), "disk full while writing"),  # numpy's short write: no errno
    (PermissionError(errno.EACCES, "Permission denied", "/r/x.json"), "cannot write /r/x.json: permission denied"),
    (OSError(errno.EROFS, "Read-only file system", "/r/x.json"), "cannot write /r/x.json: read-only file system"),
    (FileNotFoundError(errno.ENOENT, "No such file", "/r/gone.json"), "/r/gone.json: file not found"),
    (json.JSONDecodeError("Expecting value", "{", 1), "a stored JSON file is damaged"),
])
def test_environment_faults_exit_2_with_one_line(bench, monkeypatch, exc, pattern):
    monkeypatch.setattr("runners.statistics.stats_report.stats_report", _boom(exc))
    code, out = _invoke(["stats", "-c", str(bench)])
    assert code == 2 and len(out.splitlines()) == 1 and out.startswith("error: ") and pattern in out, out


def test_keyboard_interrupt_exits_130(bench, monkeypatch):
    monkeypatch.setattr("runners.analysis.gate.gate.regression_gate", _boom(KeyboardInterrupt()))
    code, out = _invoke(["check", "--baseline", "x", "--results", str(bench.parent / "results")])
    assert code == 130 and out == "error: interrupted", out


def test_disk_full_while_writing_the_experiments_csv(bench, tmp_path, monkeypatch):
    import os

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    target = tmp_path / "table.csv"
    code, out = _invoke(["experiments", "-c", str(bench), "--csv", str(target)])
    assert code == 2, out
    last = out.splitlines()[-1]
    assert last.startswith("error: ") and "table.csv" in last and "full" in last, out
    assert not target.exists() and not list(tmp_path.glob(".table.csv*"))


def test_usage_errors_keep_exit_2(bench):
    result = runner.invoke(app, ["stats", "-c", str(bench), "--no-such-option"])
    assert result.exit_code == 2
    result = runner.invoke(app, ["stats", "-c", str(bench), "--format", "yaml"])
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_missing_config_exits_2(tmp_path):
    code, out = _invoke(["stats", "-c", str(tmp_path / "none.yaml")])
    assert code == 2 and "none.yaml" in out and "not found" in out


def test_corrupt_per_query_file_names_it(bench, tmp_path):
    path = write_model(tmp_path / "results", "acme/two", TASK, scores(0.5, 2), "Two")
    path.write_text('{"subsets": {"default": ')
    code, out = _invoke(["stats", "-c", str(bench)])
    assert code == 2 and str(path) in out and "re-run `private-mteb run`" in out, out


def test_every_registered_command_is_wrapped():
    """A command added later (one line in runners/cli/__init__.py) gets the contract without remembering to."""
    from runners.cli.common import friendly_errors

    def walk(typer_app):
        for info in typer_app.registered_commands:
            yield info.callback
        for group in typer_app.registered_groups:
            yield from walk(group.typer_instance)

    callbacks = list(walk(app))
    assert len(callbacks) >= 6
    assert all(getattr(cb, "_friendly", False) for cb in callbacks), [cb.__name__ for cb in callbacks]
    assert friendly_errors(callbacks[0]) is callbacks[0]  # wrapping twice changes nothing


def test_real_process_internal_error_is_one_line(bench):
    """`private-mteb` itself (main()), not only CliRunner: exit 2, one line on stderr, no traceback."""
    code = textwrap.dedent(f"""
        import sys
        import runners.analysis.gate.gate as gate
        def boom(*a, **k):
            raise ZeroDivisionError("division by zero")
        gate.regression_gate = boom
        sys.argv = ["private-mteb", "check", "--baseline", "x", "--results", {str(bench.parent / 'results')!r}]
        from runners.cli import main
        main()
    """)
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert proc.stderr.strip() == ("error: internal error: ZeroDivisionError: division by zero "
                                   "(run with PRIVATE_MTEB_DEBUG=1 for the traceback)")


def test_brackets_in_an_error_are_printed_not_taken_as_markup(bench, monkeypatch):
    from runners.statistics.analysis_errors import AnalysisError

    monkeypatch.setattr("runners.statistics.stats_report.stats_report", _boom(AnalysisError("x [bold]y[/bold] [0.1, 0.2]")))
    code, out = _invoke(["stats", "-c", str(bench)])
    assert code == 2 and out == "error: x [bold]y[/bold] [0.1, 0.2]", out
