"""`private-mteb baseline save DIR`: the part of a results folder that `check --baseline DIR` reads, no more.

Copying the whole folder (`cp -r results baseline`) committed every ranking at full depth and the embedding
cache: 27 MB for 1,190 questions, where the gate reads per-query scores. This keeps, for each stored run the gate
would pick (`find_run`: the run of the data revision its TaskResult names):

* ``results/<model>/<revision>/<Task>.json`` and ``model_meta.json``: how `check` finds the models and the data
  revision they were scored on;
* ``private-mteb/candidates.json``: the labels (a candidate swapped under its label is paired by it);
* ``per_query_<split>.json.gz``: per-query scores of every metric and the query hashes pairing compares, in
  columns and gzipped (results/per_query_pack.py; format 2 of the marker file): 1.1 MB of indented JSON per
  candidate for 1,190 questions became about 60 kB, the same numbers once read back;
* ``identity.json``: the run fingerprint, what produced those scores;
* ``rankings_<split>.json.gz`` cut to the top ``JUDGED_DEPTH`` (the judged@10 the gate prints, cut exactly as
  `ranked_ids` orders, so the figure is the same) with every corpus id (the corpus change the gate says).

Nothing else (no embedding cache, locks, staging, growth or latency records, deeper rankings). The copy is built
in a temporary folder beside DIR and renamed into place: an interrupted save leaves the previous baseline whole.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ...results.per_query_pack import pack
from ...results.store import (SIDE, atomic_write_bytes, atomic_write_json, candidates_path, env_faults,
                              existing_dataset_revision, find_run, read_json, result_revisions, task_result_path)
from ...labels.pool.judged import ranked_ids
from ...statistics.analysis_errors import AnalysisError
from ...statistics.per_query import all_models

#: the ranking depth kept: `check` prints judged@10 of the baseline, it reads no deeper
JUDGED_DEPTH = 10
#: 2: per-query files gzipped (per_query_<split>.json.gz); 1 (no "format" key): copied as `run` wrote them
FORMAT = 2
#: the file that marks a folder as written by `baseline save` (a later save may replace it)
MARKER = Path(SIDE) / "baseline.json"


@dataclass(frozen=True)
class SavedBaseline:
    """What `save_baseline` wrote: the folder, its runs (model, task) and its size in bytes."""

    folder: Path
    runs: list[tuple[str, str]]
    size: int


def _tasks_with_runs(results_dir: Path) -> list[str]:
    return sorted({p.name for p in (Path(results_dir) / SIDE / "runs").glob("*/*/*") if p.is_dir()})


def _copy(src_root: Path, path: Path, dest_root: Path) -> None:
    target = dest_root / path.relative_to(src_root)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(path, target)


def _write_gz(target: Path, obj: object) -> None:
    """Compact JSON at gzip's best level (a file committed once and read often: `run`'s level 1 is for speed)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(target, gzip.compress(json.dumps(obj, separators=(",", ":")).encode(), compresslevel=9,
                                             mtime=0))


def _cut_rankings(src_root: Path, path: Path, dest_root: Path, depth: int) -> None:
    """The rankings file with each query's top ``depth`` (``ranked_ids`` order) and every corpus id."""
    data = read_json(path)
    subsets = data.get("subsets") or {}
    data["subsets"] = {sub: {q: {d: ranking[d] for d in ranked_ids(ranking)[:depth]} for q, ranking in runs.items()}
                       for sub, runs in subsets.items()}
    data["top_k"] = min(int(data.get("top_k") or depth), depth)
    target = dest_root / path.relative_to(src_root)
    _write_gz(target, data)


def _pack(src_root: Path, path: Path, dest_root: Path) -> None:
    """``per_query_<split>.json`` as ``per_query_<split>.json.gz``: the same numbers in columns, gzipped
    (results/per_query_pack.py): every metric of every query is kept (`check --metric` may name any). Readers find
    either name (results/store.py per_query_path) and read either form (read_per_query)."""
    target = dest_root / path.relative_to(src_root)
    target = target.with_name(target.name + ".gz")
    _write_gz(target, pack(read_json(path)))


def _runs(results_dir: Path) -> list[tuple[str, str, Path, Path]]:
    """(model, task, TaskResult file, run folder) of every run the gate would read in ``results_dir``."""
    out = []
    tasks = _tasks_with_runs(results_dir)
    for name in all_models(results_dir):
        for rev in result_revisions(results_dir, name):
            for task in tasks:
                result = task_result_path(results_dir, name, rev, task)
                folder = find_run(results_dir, name, task, rev) if existing_dataset_revision(result) else None
                if folder is not None:
                    out.append((name, task, result, folder))
    return out


def _write(results_dir: Path, stage: Path, runs: list[tuple[str, str, Path, Path]], depth: int) -> None:
    for _, _, result, folder in runs:
        _copy(results_dir, result, stage)
        if (result.parent / "model_meta.json").is_file():
            _copy(results_dir, result.parent / "model_meta.json", stage)
        for path in sorted(folder.iterdir()):
            if path.name.startswith("per_query_") and path.name.endswith(".json"):
                _pack(results_dir, path, stage)
            elif path.name == "identity.json":
                _copy(results_dir, path, stage)
            elif path.name.startswith("rankings_") and path.name.endswith(".json.gz"):
                _cut_rankings(results_dir, path, stage, depth)
    if candidates_path(results_dir).is_file():
        _copy(results_dir, candidates_path(results_dir), stage)
    atomic_write_json(stage / MARKER, {"written_by": "private-mteb baseline save", "format": FORMAT,
                                       "per_query": "gzip", "rankings_depth": depth,
                                       "runs": [[m, t] for m, t, *_ in runs]})


def save_baseline(results_dir: Path, dest: Path, depth: int = JUDGED_DEPTH) -> SavedBaseline:
    """Write the small baseline of ``results_dir`` to ``dest`` (replacing an earlier one written by this).

    AnalysisError (exit 2) when there is nothing to save, or ``dest`` is a folder this did not write."""
    results_dir, dest = Path(results_dir), Path(dest)
    if depth < 1:
        raise AnalysisError(f"--depth must be >= 1, got {depth}")
    if dest.exists() and dest.resolve() == results_dir.resolve():
        raise AnalysisError(f"{dest}: the baseline cannot be the results folder itself: name another folder")
    if dest.exists() and not (dest / MARKER).is_file() and (not dest.is_dir() or any(dest.iterdir())):
        raise AnalysisError(f"{dest} exists and was not written by `private-mteb baseline save` (e.g. a full copy "
                            "of results/): remove it, or name another folder")
    runs = _runs(results_dir) if results_dir.is_dir() else []
    if not runs:
        raise AnalysisError(f"no per-query results in {results_dir}: nothing to save (run `private-mteb run` first)")
    with env_faults(dest):
        dest.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp"))
        umask = os.umask(0)
        os.umask(umask)
        stage.chmod(0o777 & ~umask)  # a folder to commit and share, not mkdtemp's private 0700
        old = None
        try:
            _write(results_dir, stage, runs, depth)
            if dest.exists():  # swap: the previous baseline stays whole until the new one is complete
                old = Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{dest.name}.old.", suffix=".tmp"))
                os.replace(dest, old / "previous")
            os.replace(stage, dest)
        except BaseException:
            if old is not None and (old / "previous").exists() and not dest.exists():
                os.replace(old / "previous", dest)
            shutil.rmtree(stage, ignore_errors=True)
            raise
        finally:
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
    size = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    return SavedBaseline(dest, [(m, t) for m, t, *_ in runs], size)
