"""The comparison behind the report's public section, kept on disk: a report that finds it imports no mteb (~4 s).

The numbers are always build_comparison's (mteb's own leaderboard aggregation); what is kept is its result, under
a key made of the content of everything it depends on: every file under `<results>/results` and candidates.json,
the public snapshot, the report's tasks (their configs) and candidates, the task folders that name private tasks,
the mteb version and the code that computes it. Any change gives another key, so a stale entry is never read
(a few recent ones are kept). Only snapshot sources are kept: a results folder or mteb's cache is too large to
hash on every report. Frames travel as Parquet (dtypes and floats exact), the rest as JSON: no pickle, since a
results folder may come from someone else.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import io
import json
import os
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl

from ...results.store import atomic_write_json, read_json
from .compare import Agreement, Comparison
from .public import PublicSource, SnapshotSource

FORMAT = 1
KEEP = 8  # entries kept per results folder (one per combination of candidates, tasks and inputs)
_HERE = Path(__file__).resolve().parent
_ROOT = _HERE.parents[2]
#: the code whose output is kept: a change of any of them is a new key (tests/test_compare_cache.py checks they exist)
CODE = [Path(__file__).resolve(), _HERE / "compare.py", _HERE / "public.py", _HERE / "public_language.py",
        _ROOT / "custom_tasks" / "mteb_private.py", _ROOT / "custom_tasks" / "task.py"]
_FRAMES = ("table", "ranks", "revisions")


def cache_folder(results_dir: Path) -> Path:
    return Path(results_dir) / "private-mteb" / "cache"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _task_folders(results_dir: Path) -> list[Path]:
    """The folders private tasks are registered from (custom_tasks.task.register_project_tasks looks in these)."""
    from custom_tasks.config import DEFAULT_TASKS_DIR, project_root, tasks_dir

    return [tasks_dir(), project_root(Path(results_dir).resolve()) / DEFAULT_TASKS_DIR]


def cache_key(results_dir: Path, source: PublicSource, configs: Sequence[Any], tasks: Sequence[str],
              models: Sequence[str]) -> str | None:
    """Content key of one report comparison, or None when its source is not a snapshot file (never kept)."""
    if not isinstance(source, SnapshotSource) or not Path(source.path).is_file():
        return None
    h = hashlib.sha256()

    def put(*parts: Any) -> None:
        for part in parts:
            h.update(str(part).encode("utf-8", "surrogateescape") + b"\0")

    try:
        mteb_version = version("mteb")
    except PackageNotFoundError:
        mteb_version = "?"
    put(FORMAT, mteb_version, *(_digest(p) for p in CODE), _digest(Path(source.path)))
    put(json.dumps([list(tasks), sorted(models)]))
    put(*(c.model_dump_json() if hasattr(c, "model_dump_json") else repr(c) for c in configs))
    put(os.environ.get("PRIVATE_MTEB_PROJECT"), os.environ.get("PRIVATE_MTEB_TASKS_DIR"))
    for folder in _task_folders(results_dir):
        put(folder, *(f"{p.name}:{_digest(p)}" for p in sorted(folder.glob("*.y*ml")) if p.is_file()))
    root = Path(results_dir)
    for p in sorted((root / "results").rglob("*")) if (root / "results").is_dir() else []:
        if p.is_file():
            put(p.relative_to(root).as_posix(), _digest(p))
    cands = root / "private-mteb" / "candidates.json"
    put(_digest(cands) if cands.is_file() else None)
    return h.hexdigest()[:32]


def _parquet(frame: pd.DataFrame | pl.DataFrame) -> str:
    buf = io.BytesIO()
    (frame.write_parquet if isinstance(frame, pl.DataFrame) else frame.to_parquet)(buf)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _frame(text: str) -> pd.DataFrame:
    return pd.read_parquet(io.BytesIO(base64.b64decode(text)))


def to_record(comp: Comparison) -> dict[str, Any]:
    rec: dict[str, Any] = {f.name: getattr(comp, f.name) for f in dataclasses.fields(comp)}
    rec.update({name: _parquet(getattr(comp, name)) for name in _FRAMES})
    rec["long_frame"] = _parquet(comp.long_frame)
    rec["agreement"] = dataclasses.asdict(comp.agreement)
    rec["private_results_dir"] = str(comp.private_results_dir) if comp.private_results_dir is not None else None
    return {"format": FORMAT, "comparison": rec}


def from_record(data: dict[str, Any]) -> Comparison:
    if data.get("format") != FORMAT:
        raise ValueError(f"cache format {data.get('format')!r}")
    rec = dict(data["comparison"])
    rec.update({name: _frame(rec[name]) for name in _FRAMES})
    rec["long_frame"] = pl.read_parquet(io.BytesIO(base64.b64decode(rec["long_frame"])))
    rec["agreement"] = Agreement(**rec["agreement"])
    rec["private_results_dir"] = Path(rec["private_results_dir"]) if rec["private_results_dir"] else None
    return Comparison(**rec)


def cached_comparison(results_dir: Path, source: PublicSource, configs: Sequence[Any], tasks: Sequence[str],
                      models: Sequence[str], build: Callable[[], Comparison]) -> Comparison:
    """The kept comparison for exactly these inputs, else `build()` (mteb) and keep it (a read-only results folder
    just means it is not kept)."""
    key = cache_key(results_dir, source, configs, tasks, models)
    path = cache_folder(results_dir) / f"compare-{key}.json.gz"
    if key is not None and path.is_file():
        try:
            return from_record(read_json(path))
        except (OSError, ValueError, KeyError, TypeError):  # unreadable or from another format: rebuilt below
            pass
    comp = build()
    if key is not None:
        try:
            atomic_write_json(path, to_record(comp), compress=True)
            old = sorted(cache_folder(results_dir).glob("compare-*.json.gz"), key=lambda p: p.stat().st_mtime)
            for stale in old[:-KEEP]:
                stale.unlink(missing_ok=True)
        except Exception:  # noqa: BLE001 — keeping it only saves time: failing to keep must not sink the report
            pass
    return comp
