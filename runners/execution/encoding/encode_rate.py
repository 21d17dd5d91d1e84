"""Documents/s of a cold encode, kept beside the vectors it produced: the latency pass's indexing rate.

A run that encodes a corpus's documents (texts the cache lacked: reused vectors never count) records how many
and how long the model took, per task, in `encode-rate.json` of the embedding cache folder (the folder is one
model with one set of encode settings). The latency pass (serving.py) takes its docs/s from there instead of
encoding a sample again: the rate of a whole cold corpus encode, batched as indexing is, is the better figure
and costs nothing more. Only a rate measured on this CPU with at least `MIN_DOCS` documents is used.
Best effort: a cache folder that cannot be written loses the rate, never the run.
"""

from __future__ import annotations

import logging
import os
import platform
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ...results.store import atomic_write_json, read_json

FILE = "encode-rate.json"
MIN_DOCS = 16  # fewer cold documents than this (an incremental run) give no rate worth keeping
logger = logging.getLogger(__name__)


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            return next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), "")
    except OSError:
        return platform.processor() or platform.machine()


def _threads() -> int | None:
    try:
        import torch

        return int(torch.get_num_threads())
    except Exception:  # noqa: BLE001 - not a torch model: threads unknown
        return None


def record(folder: Path, task_name: str, docs: int, seconds: float) -> None:
    """Keep the cold encode of `docs` documents of `task_name` (the latest run's, when it encoded enough)."""
    if docs < MIN_DOCS or seconds <= 0:
        return
    path = Path(folder) / FILE
    try:
        try:
            rates = read_json(path) if path.exists() else {}
        except ValueError:  # a corrupt file holds nothing worth keeping: replaced
            rates = {}
        if not isinstance(rates, dict):
            rates = {}
        rates[task_name] = {"docs": int(docs), "seconds": float(seconds), "cpu": cpu_name(),
                            "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
                            "threads": _threads(), "at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        atomic_write_json(path, rates)
    except (OSError, ValueError) as e:  # a read-only or corrupt cache folder: the rate is lost, the run is not
        logger.debug("encode rate not kept in %s: %s", path, e)


def read(folder: Path, task_name: str) -> dict[str, Any] | None:
    """The kept cold rate of `task_name` in this cache folder, if measured on this CPU; else None."""
    path = Path(folder) / FILE
    try:
        rate = (read_json(path) if path.exists() else {}).get(task_name)
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(rate, dict) or rate.get("cpu") != cpu_name() or int(rate.get("docs", 0)) < MIN_DOCS:
        return None
    if not float(rate.get("seconds", 0)) > 0:
        return None
    return rate
