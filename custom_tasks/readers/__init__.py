"""One reader per collection format; each turns a validated ``source:`` model into a Collection.

Format modules are imported on demand so ``custom_tasks.validate`` can use ``_io`` without a cycle.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, Callable

from ..collection import Collection

FORMATS = ("beir", "trec", "tables", "evalset", "judgments")

Reader = Callable[[Any, Path, str], Collection]


def get_reader(fmt: str) -> Reader:
    """The ``read(cfg, base_dir, name)`` function of a format module."""
    if fmt not in FORMATS:
        from ..errors import CollectionError

        raise CollectionError(None, f"unknown format {fmt!r} (known formats: {', '.join(FORMATS)})")
    return importlib.import_module(f"{__name__}.{fmt}").read
