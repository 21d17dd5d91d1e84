"""Which grades a task is scored on: human grades, plus the judge's LLM grades when the benchmark says so.

`labels: {use_llm: fill_unjudged}` adds the grades of the config's judge (same judge identity, same texts) to the
pairs no human graded; the qrels change, so the data revision does, and `LabelsUsed` is what a stored result
records next to it. `use_llm: false` (the default) leaves the collection as it is.
"""

from __future__ import annotations

from typing import Any

from custom_tasks.collection import Collection
from custom_tasks.llm_labels import LabelsUsed, current_grades, llm_labels_path, read_llm_labels, with_llm_labels

from .judge_prompt import judge_identity, load_template, task_grades


def current_judge(bench: Any, task_cfg: Any) -> str:
    """The identity of the benchmark's judge on this task (endpoint, model, prompt with the task's scale,
    parameters)."""
    opts = bench.judge
    template = load_template(opts.prompt, bench.base_dir, bench.path)
    return judge_identity(opts.model, template, task_grades(task_cfg), opts.temperature, opts.max_tokens,
                          opts.chat_url)


def scored_collection(collection: Collection, task_cfg: Any, bench: Any | None) -> tuple[Collection, LabelsUsed]:
    """The collection scores are computed on under ``bench``'s `labels:` policy, and which grades that is."""
    policy = bench.labels.use_llm if bench is not None and bench.labels.fills else False
    if not policy or bench.judge is None or task_cfg is None or task_cfg.path is None:
        return with_llm_labels(collection, {}, "", False)
    rows = read_llm_labels(llm_labels_path(task_cfg.path))
    grades = current_grades(collection, rows, current_judge(bench, task_cfg))
    return with_llm_labels(collection, grades, bench.judge.source, policy)
