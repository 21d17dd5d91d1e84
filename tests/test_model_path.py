"""A model `path:` that does not exist stops `run` before anything runs; relative paths follow the config file."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from runners.cli import app
from tests.conftest import REPO, write_benchmark

runner = CliRunner()


def test_missing_model_path_is_rejected_before_anything_runs(tmp_path):
    cfg = write_benchmark(tmp_path, ["NorthwindKBRetrieval"], [{"name": "bm25"}, {"name": "acme/mine", "path": "models/nope"}])
    result = runner.invoke(app, ["run", "--config", str(cfg)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    line = result.output.strip().replace("\n", " ")
    n = next(i for i, text in enumerate(cfg.read_text().splitlines(), 1) if "path: models/nope" in text)
    assert f"{cfg}:{n}:" in line and "models[1] 'acme/mine'" in line and "'models/nope' does not exist" in line
    assert not (tmp_path / "results").exists()  # BM25 did not run first


def test_model_path_relative_to_the_config_file(tmp_path, monkeypatch):
    from runners.config.benchmark import BenchmarkConfig

    (tmp_path / "models" / "mine").mkdir(parents=True)
    cfg_path = write_benchmark(tmp_path, ["NorthwindKBRetrieval"], [{"name": "acme/mine", "path": "models/mine"}])
    monkeypatch.chdir(REPO)  # not where the config lives
    cfg = BenchmarkConfig.from_file(cfg_path)
    assert Path(cfg.models[0].path) == (tmp_path / "models" / "mine").resolve()
    cfg.check_model_paths()
