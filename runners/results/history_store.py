"""The run history on disk: one file per record, append-only, safe for concurrent writers.

Layout under the history folder (`history:` in the benchmark config):
  records/<label>/<Task>/<UTC stamp>-<pid>-<random>.json.gz   -- one (candidate, task) measurement
  accepted/<label>/<Task>/<UTC stamp>-<record id>.json        -- `history accept` markers (newest wins)
A record is written to a temp file and renamed (store.atomic_write_bytes), so two runs appending at the same
moment give two intact files and a reader never sees half of one. A file that cannot be read as a record
(truncated, hand-edited, another tool's) is reported by the reader and skipped, never fatal.

What a record holds is built in runners/analysis/gate/history.py; this module only stores, lists and reads them,
and reads one stored result's raw per-query data (`stored_result`) for it.
"""

from __future__ import annotations

import glob
import gzip
import json
import os
import subprocess
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .store import (atomic_write_bytes, atomic_write_json, find_run, model_dir_name, per_query_path, read_identity,
                    read_json, read_per_query)

RECORD_VERSION = 1
RECORD_SUFFIX = ".json.gz"
#: keys every record must have (anything else missing is tolerated: older/newer writers)
REQUIRED = ("id", "time", "candidate", "task", "fingerprint", "metrics")


def _safe(part: str) -> str:
    return model_dir_name(part) or "_"


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def new_record_id(when: datetime) -> str:
    """Sortable by time, unique across processes: `20261203T141000.123456Z-<pid>-<random>`."""
    return f"{when.strftime('%Y%m%dT%H%M%S.%fZ')}-{os.getpid()}-{os.urandom(3).hex()}"


@dataclass
class HistoryRead:
    """Records (oldest first) and the files that could not be read, each with why."""

    records: list[dict[str, Any]] = field(default_factory=list)
    damaged: list[str] = field(default_factory=list)  # "path: why"


class HistoryStore:
    """An append-only folder of history records."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def _folder(self, kind: str, label: str, task: str) -> Path:
        return self.root / kind / _safe(label) / _safe(task)

    def append(self, record: dict[str, Any]) -> Path:
        """Write one record as its own file (atomic); returns its path."""
        path = self._folder("records", record["candidate"]["label"], record["task"]) / f"{record['id']}{RECORD_SUFFIX}"
        data = json.dumps(record, separators=(",", ":"), allow_nan=True).encode()
        atomic_write_bytes(path, gzip.compress(data, mtime=0))
        return path

    def read(self, label: str | None = None, task: str | None = None) -> HistoryRead:
        """Every readable record (of one label and/or task when given), oldest first."""
        out = HistoryRead()
        base = self.root / "records"
        if not base.is_dir():
            return out
        pattern = (f"{glob.escape(_safe(label)) if label else '*'}/{glob.escape(_safe(task)) if task else '*'}"
                   f"/*{RECORD_SUFFIX}")
        for path in sorted(base.glob(pattern)):
            if path.name.startswith("."):
                continue  # a temp file of a writer still at work
            record, why = _load(path)
            if record is None:
                out.damaged.append(f"{path}: {why}")
            elif (label is None or record["candidate"].get("label") == label) and (task is None or record["task"] == task):
                out.records.append(record)
        out.records.sort(key=lambda r: (str(r["time"]), str(r["id"])))
        return out

    def accept(self, record: dict[str, Any], note: str = "") -> Path:
        """Mark a record as the accepted baseline of its (candidate, task) (`check --baseline history:accepted`)."""
        when = utc_now()
        path = (self._folder("accepted", record["candidate"]["label"], record["task"])
                / f"{when.strftime('%Y%m%dT%H%M%S.%fZ')}-{record['id']}.json")
        atomic_write_json(path, {"record": record["id"], "time": when.isoformat(), "note": note})
        return path

    def accepted_id(self, label: str, task: str) -> str | None:
        """The record id most recently accepted for (label, task), None if none is."""
        folder = self._folder("accepted", label, task)
        for path in sorted(folder.glob("*.json"), reverse=True) if folder.is_dir() else []:
            try:
                rid = read_json(path).get("record")
            except (OSError, ValueError, AttributeError):
                continue
            if isinstance(rid, str):
                return rid
        return None


def _load(path: Path) -> tuple[dict[str, Any] | None, str]:
    try:
        data = json.loads(gzip.decompress(path.read_bytes()))
    except (OSError, EOFError, ValueError, gzip.BadGzipFile) as e:
        return None, f"unreadable ({type(e).__name__})"
    if not isinstance(data, dict):
        return None, "not a record (expected a JSON object)"
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        return None, f"not a record (missing {', '.join(missing)})"
    if not isinstance(data["candidate"], dict) or not isinstance(data["metrics"], dict):
        return None, "not a record (candidate/metrics are not objects)"
    return data, ""


def git_state(folder: Path) -> dict[str, Any] | None:
    """{'commit': sha, 'dirty': bool} of the git checkout `folder` is in (None outside one, or without git).

    Dirty = tracked files differ from the commit (untracked files are not counted: results and caches
    are usually untracked, and scanning them would be slow)."""
    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if not commit:
        return None
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit.strip(), "dirty": None if status is None else bool(status.strip())}


@dataclass
class StoredResult:
    """One stored (model, task) result as the history needs it."""

    folder: Path
    split: str
    dataset_revision: str
    identity: dict[str, Any]  # run identity (fingerprint + parts), without file digests
    scores: dict[str, dict[str, float]]  # metric -> query id -> score
    text_hashes: dict[str, str]  # query id -> hash of its text ({} for results stored before they were kept)
    label_hashes: dict[str, str]  # query id -> hash of its labels


def stored_result(results_dir: Path, model_name: str, task: str, split: str = "test",
                  subset: str = "default") -> StoredResult | None:
    """The current stored result of `model_name` on `task` (None when there is none)."""
    folder = find_run(results_dir, model_name, task)
    if folder is None or not per_query_path(folder, split).exists():
        return None
    data = read_per_query(per_query_path(folder, split))
    identity = {k: v for k, v in (read_identity(folder) or {}).items() if k != "files"}
    hashes = ((data.get("query_hashes") or {}).get(subset) or {}) if isinstance(data, dict) else {}
    return StoredResult(folder, split, folder.name, identity, data["subsets"][subset],
                        dict(hashes.get("text") or {}), dict(hashes.get("labels") or {}))
