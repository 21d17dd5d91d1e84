"""`compare -t <private task>` in a fresh process: private tasks are never in mteb's registry until registered."""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys

from tests.conftest import REPO
from tests.test_compare import write_result

DEMO_TASK = "NorthwindKBRetrieval"  # configured in configs/tasks/, unknown to mteb


def test_compare_by_private_task_name_in_a_fresh_process(tmp_path):
    write_result(tmp_path, "acme/one", "r1", DEMO_TASK, 0.61)
    write_result(tmp_path, "acme/two", "r1", DEMO_TASK, 0.42)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-m", "runners.cli", "compare", "--results", str(tmp_path),
                           "-t", DEMO_TASK, "--private-only", "--format", "csv"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    rows = {r["model"]: r for r in csv.DictReader(io.StringIO(proc.stdout))}
    assert set(rows) == {"acme/one", "acme/two"}
    assert float(rows["acme/one"][DEMO_TASK]) == 0.61 and rows["acme/one"]["Rank (Private)"] == "1"
    assert float(rows["acme/two"][DEMO_TASK]) == 0.42

