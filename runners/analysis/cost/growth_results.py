"""The stored growth curves of a config's `type: growth` entries, as curves and as experiments-table rows.

Analysis side only: the entry's parameters find the stored record (runners/results/growth_store.py), on the
dataset revision of the model's plain run when it has one, so a curve computed before the data changed is
not shown as current. The distractors' content hash is not recomputed here (that would read another
collection): the newest curve for the entry's `distractors:` path is the one shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ...config.benchmark import BenchmarkConfig
from ...config.experiments import GrowthEntry, base_spec, growth_entries
from ...config.task_lookup import task_name_for
from ...results.growth_store import stored_growth
from ...results.store import existing_dataset_revision, load_candidates, task_result_path
from ...statistics.analysis_errors import AnalysisError
from .growth_curve import GrowthCurve, growth_curve


@dataclass
class StoredCurve:
    entry: GrowthEntry
    model: str  # results name of the entry's dense model
    task: str
    curve: GrowthCurve | None  # None: nothing stored yet (see `note`)
    note: str = ""


def growth_match(entry: GrowthEntry) -> dict[str, Any]:
    """The stored params an entry's curve must have (runners/execution/measure/growth.py writes them)."""
    return {"fractions": list(entry.fractions), "repeats": entry.repeats, "seed": entry.seed,
            "distractors": {"path": entry.distractors} if entry.distractors else None}


def _plain_dataset_revision(results_dir: Path, model: str, task: str) -> str | None:
    rev = load_candidates(results_dir).get(model, {}).get("revision")
    return existing_dataset_revision(task_result_path(results_dir, model, rev, task)) if rev else None


def _stored_records(results_dir: Path, cfg: BenchmarkConfig, models: list[str] | None = None
                    ) -> list[tuple[GrowthEntry, str, str, dict[str, Any] | None, str]]:
    """(entry, model, task, stored record or None, note why none) of every (growth entry, task) of the config:
    the files are read once, whatever the number of metrics shown from them."""
    out = []
    for entry in growth_entries(cfg):
        spec = base_spec(cfg, entry.model)
        name = spec.results_name
        if models is not None and name not in models and spec.name not in models:
            continue
        for t in cfg.tasks:
            task = task_name_for(t, cfg)
            ds = _plain_dataset_revision(results_dir, name, task)
            record = stored_growth(results_dir, name, task, growth_match(entry), ds)
            if record is None:
                out.append((entry, name, task, None, f"no stored growth curve of {name} on {task}"
                            + (" for the current data" if ds else "") + ": run `private-mteb growth`"))
                continue
            out.append((entry, name, task, {**record, "label": entry.label} if entry.label else record, ""))
    return out


def _curves(records: list[tuple[GrowthEntry, str, str, dict[str, Any] | None, str]], cfg: BenchmarkConfig,
            metric: str, n_resamples: int | None = None) -> list[StoredCurve]:
    out = []
    for entry, name, task, record, note in records:
        if record is None:
            out.append(StoredCurve(entry, name, task, None, note))
            continue
        try:
            curve = growth_curve(record, metric, n_resamples or cfg.stats.resamples, cfg.stats.seed,
                                 cfg.stats.confidence)
        except AnalysisError as e:
            out.append(StoredCurve(entry, name, task, None, str(e)))
            continue
        out.append(StoredCurve(entry, name, task, curve))
    return out


def config_curves(results_dir: Path, cfg: BenchmarkConfig, metric: str, n_resamples: int | None = None,
                  models: list[str] | None = None) -> list[StoredCurve]:
    """Every (growth entry, task) of the config with its stored curve for `metric`, or a note saying why not."""
    return _curves(_stored_records(results_dir, cfg, models), cfg, metric, n_resamples)


def growth_rows(results_dir: Path, cfg: BenchmarkConfig, metrics: list[str],
                models: list[str] | None = None) -> pd.DataFrame:
    """Experiments-table rows (kind 'growth'): the metric per measured fraction, then the fitted or
    extrapolated value at 2x and 10x the corpus, each with its CI and the trend per doubling."""
    rows: list[dict[str, Any]] = []
    records = _stored_records(results_dir, cfg, models)
    for metric in metrics:
        for sc in _curves(records, cfg, metric):
            c = sc.curve
            if c is None:
                continue
            common = {"task": sc.task, "candidate": f"{c.label} growth", "model": sc.model, "kind": "growth",
                      "metric": metric, "n_queries": c.n_queries, "base": None,
                      "slope_per_doubling": c.slope_per_doubling, "slope_ci_low": c.slope_ci[0],
                      "slope_ci_high": c.slope_ci[1], "distractors": c.distractors}
            for p in c.points.itertuples():
                rows.append({**common, "fraction": p.fraction, "n_docs": p.n_docs, "point": "measured",
                             "mean": p.mean, "ci_low": p.ci_low, "ci_high": p.ci_high})
            for e in c.extrapolated.dropna().itertuples():
                rows.append({**common, "fraction": e.multiple, "n_docs": e.n_docs,
                             "point": "fitted" if e.measured_range else "extrapolated",
                             "mean": e.mean, "ci_low": e.ci_low, "ci_high": e.ci_high})
    return pd.DataFrame(rows)
