"""What the exact-search tests share: the tiny task loaded once per module, queries, search keyword arguments.

Used by tests/test_exact_search.py and tests/test_large_corpus.py (import the fixture by name).
"""

from __future__ import annotations

from typing import Any

import pytest


@pytest.fixture(scope="module")
def tiny_task():
    import custom_tasks
    from tests.conftest import TINY_YAML

    task = custom_tasks.get_task(str(TINY_YAML))
    task.load_data()
    return task


def queries(n: int) -> Any:
    """`n` queries "text 0" .. "text n-1" with ids q0 .. q<n-1>, as a datasets.Dataset."""
    from datasets import Dataset

    return Dataset.from_dict({"id": [f"q{i}" for i in range(n)], "text": [f"text {i}" for i in range(n)]})


def search_kwargs(task: Any) -> dict[str, Any]:
    """The keyword arguments of a search wrapper's `index` and `search` on the task's test split."""
    return {"task_metadata": task.metadata, "hf_split": "test", "hf_subset": "default",
            "encode_kwargs": {"batch_size": 32, "show_progress_bar": False}}
