"""The one place that touches mteb's private names (leading underscore or private modules).

mteb does not promise to keep them, so every other module calls the functions here; when an
mteb release moves one, `private(...)` fails with a line naming what moved and what to do, and
tests/test_mteb_private.py has a test per name that says the same before a user meets it.
Imports are lazy: `import mteb` costs seconds (torch) and analysis commands must not pay it.
"""

from __future__ import annotations

import importlib
from typing import Any

#: every private name we use: key -> (module, attribute)
PRIVATE_NAMES: dict[str, tuple[str, str]] = {
    "tasks_registry_module": ("mteb.get_tasks", "_TASKS_REGISTRY"),
    "mrr": ("mteb._evaluators.retrieval_metrics", "mrr"),
    "create_dataloader": ("mteb._create_dataloaders", "create_dataloader"),
    "custom_collate_fn": ("mteb._create_dataloaders", "_custom_collate_fn"),
    "filter_queries_without_positives": ("mteb.abstasks.retrieval", "_filter_queries_without_positives"),
    # a private task overrides it to rank the questions awaiting judgment too (task.py: they are pooled, not scored)
    "evaluate_subset": ("mteb.abstasks.retrieval", "AbsTaskRetrieval._evaluate_subset"),
    "combine_queries_with_instruction_text": ("mteb._create_dataloaders", "_combine_queries_with_instruction_text"),
    "prepare_dataset": ("mteb._create_dataloaders", "_prepare_dataset"),
    "borda_rank_from_long": ("mteb.benchmarks._create_table", "_borda_rank_from_long"),
    "build_per_task_pivot": ("mteb.benchmarks._create_table", "_build_per_task_pivot"),
    "skipna_false_mean": ("mteb.benchmarks._create_table", "_skipna_false_mean"),
    "recompute_lenient_means": ("mteb.benchmarks._benchmark_metrics", "_recompute_lenient_means"),
    "results_to_long_frame": ("mteb.results.benchmark_results", "BenchmarkResults._to_results_df"),
    "bm25_languages": ("mteb.models.model_implementations.bm25", "_ISO3_TO_LANG"),
    "bm25_stopwords": ("mteb.models.model_implementations.bm25", "_get_stopwords"),
    # the two tokenizing steps runners/execution/candidates/bm25.py overrides (case kept, the task's own words)
    "bm25_fit_tokens": ("mteb.models.model_implementations.bm25", "BM25Tokenizer._fit_transform_bm25s"),
    "bm25_query_tokens": ("mteb.models.model_implementations.bm25", "BM25Tokenizer._transform_bm25s"),
}


class MtebPrivateNameMoved(ImportError):
    """An mteb upgrade moved or renamed a private name private-mteb relies on."""


def private(key: str) -> Any:
    """The object behind one entry of PRIVATE_NAMES, or a clear error naming what moved."""
    module_name, attr = PRIVATE_NAMES[key]
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        import mteb

        raise MtebPrivateNameMoved(
            f"mteb {mteb.__version__} no longer has {module_name}.{attr} ({e}); private-mteb was written "
            f"against mteb 2.26: pin 'mteb>=2.26,<2.27' or update custom_tasks/mteb_private.py") from None
    return obj


def tasks_registry() -> dict[str, Any]:
    """mteb's task-name -> task-class registry (mutable: private tasks are added to it)."""
    return private("tasks_registry_module")


def _swap(key: str, replacement: Any) -> Any:
    saved = private(key)
    module_name, attr = PRIVATE_NAMES[key]
    setattr(importlib.import_module(module_name), attr, replacement)
    return saved


def swap_prepare_dataset(replacement: Any) -> Any:
    """Put `replacement` where mteb's `create_dataloader` looks up its dataset preparation; the previous one is
    returned (put it back with this function). The latency pass holds a prepared corpus this way."""
    return _swap("prepare_dataset", replacement)


def swap_combine_queries(replacement: Any) -> Any:
    """Put `replacement` where mteb's query preparation (`_prepare_dataset`, its BM25) and
    `combine_queries_with_instruction_text` above look up the query-with-instruction step; the previous one is
    returned. The latency pass holds each sampled query's prepared row this way (a `datasets` transform with its
    fingerprint hashing costs ~7 ms a call: batch plumbing, not a served query's work)."""
    return _swap("combine_queries_with_instruction_text", replacement)


def registry_module() -> Any:
    """The module holding the registry and TASK_LIST (`mteb.get_tasks` the attribute is a function)."""
    private("tasks_registry_module")
    return importlib.import_module("mteb.get_tasks")


def mrr(qrels: Any, results: Any, k_values: list[int]) -> Any:
    return private("mrr")(qrels, results, k_values)


def create_dataloader(*args: Any, **kwargs: Any) -> Any:
    return private("create_dataloader")(*args, **kwargs)


def combine_queries_with_instruction_text(*args: Any, **kwargs: Any) -> Any:
    """Query text as mteb's retrieval search sees it (instructions appended), for searches outside mteb's loader."""
    return private("combine_queries_with_instruction_text")(*args, **kwargs)


def filter_queries_without_positives(*args: Any, **kwargs: Any) -> Any:
    """The queries mteb's retrieval evaluation keeps (those with a positive label), for a search run outside it."""
    return private("filter_queries_without_positives")(*args, **kwargs)


def evaluate_subset(task: Any, *args: Any, **kwargs: Any) -> Any:
    """mteb's retrieval evaluation of one (split, subset) for ``task`` (what a private task's override extends)."""
    return private("evaluate_subset")(task, *args, **kwargs)


def custom_collate_fn() -> Any:
    return private("custom_collate_fn")


def results_to_long_frame(results: Any, tasks: list[str]) -> Any:
    """mteb's leaderboard long frame of a BenchmarkResults (select tasks, join revisions)."""
    private("results_to_long_frame")
    return results._to_results_df(tasks)


def borda_rank_from_long(long: Any, n_models: int) -> Any:
    return private("borda_rank_from_long")(long, n_models=n_models)


def build_per_task_pivot(long: Any) -> Any:
    return private("build_per_task_pivot")(long)


def skipna_false_mean(cols: Any) -> Any:
    return private("skipna_false_mean")(cols)


def recompute_lenient_means(scores: dict[str, float], weights: dict[str, float]) -> Any:
    return private("recompute_lenient_means")(scores, weights)
