"""Private collections -> validated Collection -> genuine mteb retrieval tasks."""

from .collection import Collection, CollectionWarning
from .config import TaskConfig, find_task_configs, resolve_task_config
from .errors import CollectionError, ConfigError
from .sources import load_collection
from .task import get_task, register_all, task_from_collection

__all__ = [
    "Collection",
    "CollectionError",
    "CollectionWarning",
    "ConfigError",
    "TaskConfig",
    "find_task_configs",
    "get_task",
    "load_collection",
    "register_all",
    "resolve_task_config",
    "task_from_collection",
]
