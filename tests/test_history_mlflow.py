"""MLflow (issue 23): `run --mlflow URI` / `mlflow:` log each (candidate, task) as an MLflow run, `report` attaches
the HTML, `history --from-mlflow` reads them back. Against a real tracking server this test starts on loopback
(sqlite backend, artifacts served by the server) and stops itself.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from test_history import NP, _project

pytest.importorskip("mlflow", reason="needs the mlflow extra: pip install 'private-mteb[mlflow]'")
pytest.importorskip("sqlalchemy", reason="the tracking server's sqlite backend needs the mlflow extra")
pytest.importorskip("flask", reason="the tracking server needs the mlflow extra")

from runners.cli import app  # noqa: E402

runner = CliRunner()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def tracking_server(tmp_path):
    port = _free_port()
    mlflow_bin = Path(sys.executable).parent / "mlflow"
    cmd = [str(mlflow_bin) if mlflow_bin.exists() else "mlflow", "server", "--host", "127.0.0.1", "--port", str(port),
           "--workers", "1", "--backend-store-uri", f"sqlite:///{tmp_path / 'mlflow.db'}",
           "--artifacts-destination", str(tmp_path / "mlartifacts")]
    log = open(tmp_path / "server.log", "w")
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    uri = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 240
        while True:
            try:
                with urllib.request.urlopen(f"{uri}/health", timeout=3) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.time() > deadline:
                pytest.fail(f"mlflow server did not start: {(tmp_path / 'server.log').read_text()[-2000:]}")
            time.sleep(0.5)
        yield uri
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)  # the server and the workers it started (its own session)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


@pytest.mark.slow  # a tracking server takes 20-60 s to start on a busy 2-core machine
def test_runs_are_logged_to_and_read_back_from_a_real_tracking_server(tmp_path, tracking_server):
    from mlflow.tracking import MlflowClient

    uri = tracking_server
    cfg = _project(tmp_path, [NP])
    first = runner.invoke(app, ["run", "-c", str(cfg), "--mlflow", uri])
    assert first.exit_code == 0 and "mlflow: 1 run(s) logged" in first.output, first.output
    with open(tmp_path / "kb_tiny" / "corpus.jsonl", "a") as f:  # a document added; then `mlflow:` in the config
        f.write(json.dumps({"_id": "parking", "title": "Parking", "text": "Visitor parking is on level 2."}) + "\n")
    data = yaml.safe_load(cfg.read_text())
    cfg.write_text(yaml.safe_dump({**data, "mlflow": {"tracking_uri": uri, "experiment": "kb"}}))
    second = runner.invoke(app, ["run", "-c", str(cfg)])
    assert second.exit_code == 0 and "mlflow: 1 run(s) logged" in second.output, second.output
    report = runner.invoke(app, ["report", "-c", str(cfg), "-o", str(tmp_path / "report.html"), "--no-public"])
    assert report.exit_code == 0 and "attached to 1 run(s)" in report.output, report.output

    client = MlflowClient(tracking_uri=uri)
    (run,) = client.search_runs([client.get_experiment_by_name("kb").experiment_id])
    assert run.data.params["model"] == "test/np" and run.data.params["label"] == "prod"
    assert run.data.params["corpus_size"] == "13" and run.data.params["queries"] == "10"
    assert run.data.params["fp.task.dataset_revision"] == run.data.params["data_revision"]
    assert run.data.params["fingerprint"] and run.data.params["fp.candidate.factory"].startswith("tests.identity_encoder")
    m = run.data.metrics
    assert m["ndcg_at_10_ci_low"] <= m["ndcg_at_10"] <= m["ndcg_at_10_ci_high"] and "recall_at_100" in m
    assert run.data.tags["private_mteb.changed"] == "data" and run.data.tags["private_mteb.task"] == "TinyKBRetrieval"
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id, "private-mteb")}
    assert artifacts == {"private-mteb/record.json", "private-mteb/report.html"}
    (older,) = client.search_runs([client.get_experiment_by_name("private-mteb").experiment_id])
    assert older.data.tags["private_mteb.changed"] == "first record" and older.data.params["corpus_size"] == "12"

    local = json.loads(runner.invoke(app, ["history", "-c", str(cfg), "--format", "json"]).output)
    both = []
    for experiment in ("private-mteb", "kb"):
        read = runner.invoke(app, ["history", "-c", str(cfg), "--from-mlflow", uri, "--experiment", experiment,
                                   "--format", "json"])
        assert read.exit_code == 0, read.output
        both += json.loads(read.output)["timelines"][0]["steps"]
    assert [s["id"] for s in both] == [s["id"] for s in local["timelines"][0]["steps"]]
    assert both[0]["mean"] == local["timelines"][0]["steps"][0]["mean"]


def test_an_unreachable_tracking_server_is_one_line_and_exit_2_after_the_history_is_written(tmp_path):
    cfg = _project(tmp_path, [NP])
    result = runner.invoke(app, ["run", "-c", str(cfg), "--mlflow", "http://127.0.0.1:9"])
    assert result.exit_code == 2, result.output
    assert "MLflow: could not log the runs" in result.output and "Traceback" not in result.output
    assert "history: 1 record(s) appended" in result.output  # the history does not depend on MLflow
