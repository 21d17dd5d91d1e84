"""Candidates x private tasks -> MTEB-format results -> statistics, comparison, regression gate.

Layers, in the direction data flows (each imports only the ones before it):
  config/     benchmark YAML, model entries, experiment entries   (pure data)
  results/    where results live on disk, atomic writes, readers, run identity (no model libraries)
  search/     search strategies: hybrid, chunked, ANN              (plugged into the executor)
  execution/  rooms backends < encoding < cache < candidates, distributed < runner < measure
              (imports mteb/torch lazily; see runners/execution/__init__.py)
  statistics/ the statistics core: per-query tables, intervals, tests, power, confidence sequences (no model)
  labels/     the ground truth: pool, raters, LLM judge, lint, questions, the judging app (on the statistics
              core, below analysis; see runners/labels/__init__.py)
  analysis/   stored results only, in rooms gate, diagnose, compare, cost < page < report
              (see runners/analysis/__init__.py)
  cli/        thin typer commands over the above
The Python API below is imported lazily, so `import runners` stays cheap.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

# onnxruntime (the onnx encode backend) reports usage to Microsoft from Linux too, and keeps a device id and an
# event queue under ~/.cache/Microsoft, unless this is set before it is first imported; nothing may leave the machine
if not os.environ.get("ORT_DISABLE_TELEMETRY"):
    os.environ["ORT_DISABLE_TELEMETRY"] = "1"

_EXPORTS = {
    "BenchmarkConfig": ".config.benchmark",
    "ModelSpec": ".config.model_spec",
    "run_benchmark": ".execution.run",
    "load_per_query": ".results.store",
    "load_rankings": ".results.store",
    "stats_report": ".statistics.stats_report",
    "per_query_table": ".statistics.per_query",
    "regression_gate": ".analysis.gate.gate",
    "ci_table": ".statistics.stats_frames",
    "paired_tests": ".statistics.stats_frames",
    "regression_check": ".analysis.gate.gate",
    "compare_table": ".analysis.compare.compare",
    "experiment_table": ".analysis.cost.experiments_table",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'runners' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name], __name__), name)
