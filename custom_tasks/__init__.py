"""Private collections -> validated Collection -> genuine mteb retrieval tasks.

Names are imported on first use: reading configs and collections must not pay for `import mteb`
(seconds of torch), which only `get_task` / `register_all` / `task_from_collection` need.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Collection": ".collection",
    "CollectionWarning": ".collection",
    "TaskConfig": ".config",
    "find_task_configs": ".config",
    "resolve_task_config": ".config",
    "CollectionError": ".errors",
    "ConfigError": ".errors",
    "load_collection": ".sources",
    "get_task": ".task",
    "register_all": ".task",
    "task_from_collection": ".task",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'custom_tasks' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name], __name__), name)
