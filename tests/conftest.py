"""Shared fixtures: offline environment, the offline MiniLM, a tiny task, a benchmark config writer."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
if os.environ.get("PYTEST_XDIST_WORKER"):  # scripts/test.sh -n: a worker starts with COLUMNS=80 LINES=24 set,
    for _name in ("COLUMNS", "LINES"):  # which rich takes as the width of output that is no terminal
        os.environ.pop(_name, None)

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
TINY_YAML = REPO / "tests" / "configs" / "kb_tiny.yaml"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"


@pytest.fixture(autouse=True)
def _repo_cwd(monkeypatch):
    """The CLI and configs resolve configs/ and results/ against the project root."""
    monkeypatch.chdir(REPO)


@pytest.fixture(scope="session")
def minilm():
    from runners.config.model_spec import ModelSpec
    from runners.execution.encoding.models import load_model

    return load_model(ModelSpec(name=MINILM))


@pytest.fixture
def tiny_copy(tmp_path) -> Path:
    """A private copy of the tiny task (data + YAML) that a test may edit."""
    data = tmp_path / "kb_tiny"
    shutil.copytree(REPO / "tests" / "fixtures" / "kb_tiny", data)
    yaml_path = tmp_path / "kb_tiny.yaml"
    yaml_path.write_text(TINY_YAML.read_text().replace("../fixtures/kb_tiny", "kb_tiny"))
    return yaml_path


def write_benchmark(tmp_path: Path, tasks: list[str], models: list[dict] | None = None, **extra) -> Path:
    import yaml

    cfg = {"name": "t", "tasks": tasks, "models": models or [{"name": MINILM, "label": "MiniLM"}, {"name": "bm25"}],
           "results_dir": str(tmp_path / "results"), **extra}
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def pytest_sessionfinish(session, exitstatus):
    """CI sets PRIVATE_MTEB_REQUIRE_OPTIONAL_TESTS=1: a skipped browser/Ray/mpnet test there is a failure."""
    if os.environ.get("PRIVATE_MTEB_REQUIRE_OPTIONAL_TESTS") != "1":
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter else []
    if skipped and session.exitstatus == 0:
        for rep in skipped:
            reporter.write_line(f"required test skipped: {rep.nodeid}: {rep.longrepr[-1] if rep.longrepr else ''}")
        session.exitstatus = 1


@pytest.fixture
def served():
    """Start fake HTTP servers (tests/fake_embeddings.py, tests/fake_judge.py: anything whose ``start()`` returns
    (server, url)) and shut every one down after the test: ``url = served(FakeEmbeddings(...))``."""
    servers = []

    def start(fake) -> str:  # noqa: ANN001 - any fake server
        server, url = fake.start()
        servers.append(server)
        return url

    yield start
    for s in servers:
        s.shutdown()
        s.server_close()
