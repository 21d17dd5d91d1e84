"""`stats` and `check` never import pandas or pyarrow (and `check` not scipy): issue #10's start-up budget.

Each command runs in a fresh interpreter on the hand-made results of tests/fixtures/inspect_results
(two models, tags, stored rankings), on a copy of its task that names an LLM generator, so the
paths a real run takes are all walked: paired tests, the default `source` breakdown, judged@10,
the generator guard, the gate's bootstrap and randomization test. What each may not import is
read from `sys.modules` afterwards. The csv format needs pandas, which also shows the probe sees it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import REPO

FIX = REPO / "tests" / "fixtures"
RESULTS = FIX / "inspect_results"
PROBED = ("pandas", "pyarrow", "scipy", "scipy.special", "scipy.stats", "torch", "mteb", "custom_tasks.corpus_store")


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("startup")
    task = yaml.safe_load((FIX / "inspect_kb" / "task.yaml").read_text())
    task["source"]["path"] = str(FIX / "inspect_kb")
    task["generated_by"] = "acme/writer-1"  # same family as acme/dense-a: the generator guard speaks
    (tmp / "task.yaml").write_text(yaml.safe_dump(task))
    path = tmp / "bench.yaml"
    path.write_text(yaml.safe_dump({"name": "t", "tasks": [str(tmp / "task.yaml")], "results_dir": str(RESULTS),
                                    "models": [{"name": "acme/dense-a", "label": "DenseA"}, {"name": "bm25"}]}))
    return path


def _run(args: list[str]) -> tuple[int, str, list[str]]:
    """Exit code, output and the probed modules loaded after one CLI call in a fresh interpreter."""
    code = ("import sys, json\nfrom typer.testing import CliRunner\nfrom runners.cli import app\n"
            f"r = CliRunner().invoke(app, {args!r})\n"
            f"print(json.dumps([r.exit_code, r.output, sorted(m for m in {PROBED!r} if m in sys.modules)]))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    exit_code, output, loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    return exit_code, output, loaded


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_stats_does_not_import_pandas(bench: Path, fmt: str) -> None:
    code, out, loaded = _run(["stats", "-c", str(bench), "--resamples", "200", "--format", fmt])
    assert code == 0, out
    if fmt == "table":  # every part of the report was computed
        assert "paired tests (source=human)" in out and "judged@10: DenseA" in out and "acme/writer-1" in out
    else:
        rep = json.loads(out)["tasks"][0]
        assert {r["subset"] for r in rep["intervals"]} == {"all", "source=human"} and rep["pairs"]
    # reading the collection (tags, labels) must not load the disk-backed corpus store (pyarrow) either
    assert not {"pandas", "pyarrow", "custom_tasks.corpus_store", "torch", "mteb"} & set(loaded), loaded


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_check_imports_neither_pandas_nor_scipy(fmt: str) -> None:
    code, out, loaded = _run(["check", "--baseline", "BM25", "--candidate", "DenseA", "--results", str(RESULTS),
                              "--resamples", "200", "--format", fmt])
    assert code in (0, 1) and "InspectKBRetrieval" in out, out
    assert not {"pandas", "pyarrow", "scipy", "torch", "mteb"} & set(loaded), loaded


def test_the_probe_sees_pandas_where_it_is_used(bench: Path) -> None:
    code, out, loaded = _run(["stats", "-c", str(bench), "--resamples", "200", "--format", "csv"])
    assert code == 0 and out.startswith("kind,task,metric,subset"), out
    assert "pandas" in loaded and "scipy.special" in loaded
