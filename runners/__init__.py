"""Candidates x private tasks -> MTEB-format results -> statistics, comparison, regression gate.

The Python API behind the `private-mteb` CLI (imports are lazy so `import runners` stays cheap).
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "BenchmarkConfig": ".config",
    "run_benchmark": ".run",
    "load_per_query": ".store",
    "load_rankings": ".store",
    "stats_report": ".analysis",
    "per_query_table": ".analysis",
    "regression_gate": ".analysis",
    "ci_table": ".stats",
    "paired_tests": ".stats",
    "regression_check": ".gate",
    "compare_table": ".compare",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'runners' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_EXPORTS[name], __name__), name)
