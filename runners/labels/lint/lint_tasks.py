"""`tasks lint` over a list of tasks: the data checks and the declared language of each collection, and with a
benchmark each candidate's truncation and the pooling gaps of its stored rankings.

One function composes the checks so the command stays a printer: lint.py (the data checks, no model),
lint_language.py, truncation.py (each candidate's own tokenizer, only with a benchmark) and lint_pool.py (stored
rankings, only with a benchmark). What cannot be checked without a benchmark is said in the report's `skipped`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from custom_tasks.config import resolve_task_config
from custom_tasks.errors import ConfigError

from ...statistics.per_query import task_config_collection
from . import lint_language
from .lint import LintReport, LintSettings, lint_collection


def lint_reports(targets: list[str], bench: Any, settings: LintSettings, split: str,
                 on_skip: Callable[[str], None] | None = None) -> list[LintReport]:
    """A LintReport per task entry: the data checks, and with a benchmark its truncation and pooling checks.

    With a benchmark, an entry that is not a private task (an mteb task) is passed to ``on_skip`` and left out,
    unless it is the only target or a YAML path: then its ConfigError is the user's to fix."""
    reports = []
    for t in targets:
        if bench is not None:
            from ...config.task_lookup import task_config_for

            try:
                cfg = task_config_for(t, bench)
            except ConfigError:
                if len(targets) == 1 or Path(t).suffix in (".yaml", ".yml"):
                    raise
                if on_skip is not None:
                    on_skip(t)
                continue
        else:
            cfg = resolve_task_config(t)
        collection = task_config_collection(cfg)
        report = lint_language.attach(lint_collection(collection, settings), collection, cfg.languages)
        if bench is not None:
            from ...config.experiments import plan_experiments
            from . import lint_pool, truncation

            truncation.attach(report, collection, bench)
            models = [m.results_name for m in bench.models] + [p.name for p in plan_experiments(bench)]
            known = collection.complete_in(split)
            if known and len(known) >= len(collection.qrels.get(split, {})):  # every relevant document labelled
                report.skipped["pooling_suggested"] = ("every question's labels are declared complete "
                                                       "(`complete_labels`)")
            else:  # the questions declaring complete labels are left out of the suggestion (lint_pool.py)
                lint_pool.attach(report, bench.results_path, collection, models, settings, split)
        else:
            report.skipped["truncation"] = "needs the candidates: pass -c BENCHMARK.yaml"
            report.skipped["pooling_suggested"] = "needs stored rankings: pass -c BENCHMARK.yaml after `run`"
        reports.append(report)
    return reports


def bench_entry(target: str, bench: Any) -> str:
    """The benchmark's task entry (e.g. a YAML path) whose task is named ``target``, else ``target`` itself."""
    if bench is None:
        return target
    from ...config.task_lookup import task_name_for

    for entry in bench.tasks:
        try:
            if task_name_for(entry, bench) == target:
                return entry
        except Exception:  # noqa: BLE001 - an entry that does not resolve is reported when it is linted
            continue
    return target
