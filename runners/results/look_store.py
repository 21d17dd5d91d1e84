"""The looks at one comparison: every time the gate decided (candidate, task, baseline), one file, append-only.

A fixed-sample test holds its error rate for one look; the gate counts the looks so that it can say when a
verdict was one of many (runners/analysis/gate/gate_looks.py) and so that the anytime mode knows the order in which
the questions arrived (the queries of each look that earlier looks did not have).

Layout under the history folder (`history:` in the benchmark config), else under <results>/private-mteb:
  looks/<label>/<Task>/<baseline digest>/<UTC stamp>-<pid>-<random>.json
Each file is written to a temp file and renamed (store.atomic_write_json): concurrent CI jobs add two intact
files, a reader never sees half of one; an unreadable file is skipped (and counted as damaged), never fatal.
A look holds query ids and figures, never text.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .history_store import new_record_id, utc_now
from .store import atomic_write_json, model_dir_name, read_json

LOOKS = "looks"


def baseline_digest(baseline: str) -> str:
    """A folder name for a baseline's identity (a folder and model, or a history record id)."""
    return hashlib.sha256(baseline.encode()).hexdigest()[:16]


@dataclass
class Looks:
    """The looks so far at one comparison, oldest first, and the files that could not be read."""

    looks: list[dict[str, Any]] = field(default_factory=list)
    damaged: list[str] = field(default_factory=list)

    @property
    def arrived(self) -> list[str]:
        """Query ids in the order they were first looked at."""
        out: list[str] = []
        for look in self.looks:
            out += [q for q in look.get("new_queries") or [] if isinstance(q, str)]
        return list(dict.fromkeys(out))


class LookStore:
    """Looks per (candidate label, task, baseline) under `root`."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root) / LOOKS

    def folder(self, label: str, task: str, baseline: str) -> Path:
        return self.root / (model_dir_name(label) or "_") / (model_dir_name(task) or "_") / baseline_digest(baseline)

    def read(self, label: str, task: str, baseline: str) -> Looks:
        return self._read_folder(self.folder(label, task, baseline))

    def _read_folder(self, folder: Path) -> Looks:
        out = Looks()
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
            if path.name.startswith("."):
                continue  # a writer's temp file
            try:
                look = read_json(path)
            except (OSError, ValueError):
                out.damaged.append(f"{path}: unreadable")
                continue
            if isinstance(look, dict) and isinstance(look.get("data"), str):
                out.looks.append(look)
            else:
                out.damaged.append(f"{path}: not a look")
        out.looks.sort(key=lambda look: str(look.get("time", "")))
        return out

    def comparisons(self, label: str, task: str) -> list[Looks]:
        """The looks of every baseline (candidate, task) has been compared with, oldest comparison first."""
        folder = self.root / (model_dir_name(label) or "_") / (model_dir_name(task) or "_")
        out = []
        for sub in sorted(folder.iterdir()) if folder.is_dir() else []:
            found = self._read_folder(sub) if sub.is_dir() else Looks()
            if found.looks or found.damaged:
                out.append(found)
        return sorted(out, key=lambda f: str(f.looks[0].get("time", "")) if f.looks else "")

    def append(self, label: str, task: str, baseline: str, look: dict[str, Any]) -> Path:
        when = utc_now()
        record = {"time": when.isoformat(), "label": label, "task": task, "baseline": baseline, **look}
        path = self.folder(label, task, baseline) / f"{new_record_id(when)}.json"
        atomic_write_json(path, json.loads(json.dumps(record, allow_nan=True)))
        return path
