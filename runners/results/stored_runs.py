"""Which stored runs are current: decided for every (candidate, task) of a run at once, before anything loads.

A stored run is reused only when its identity.json records the fingerprint the current config gives
(execution/candidates/run_identity.py) and every file it vouches for is intact (the TaskResult, and per split the
per-query sidecar and the rankings). The runner asks here once for all of its pairs (`stored_states`), then asks
again for one pair under that pair's lock (`why_stale`: a concurrent run may have completed it meanwhile).
Plain data in, plain data out: where a run is stored (`RunAt`) is the candidate's name and revision and the task's
name, data revision and splits, so this room needs neither the candidates nor the tasks.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .fingerprints import changed_parts
from .store import existing_dataset_revision, file_digest, read_identity, read_json, run_dir, task_result_path


@dataclass(frozen=True)
class RunAt:
    """Where one (candidate, task) run is stored."""

    name: str  # the candidate's results name (results/<org__name>/<revision>/)
    revision: str
    task: str
    data_revision: str  # the task's data revision (its content hash for a private task)
    splits: tuple[str, ...]  # the task's evaluation splits, the first one's scores shown


def run_files(results_dir: Path, at: RunAt) -> dict[str, Path]:
    """The files a complete run consists of, by the name identity.json records their digests under."""
    folder = run_dir(results_dir, at.name, at.revision, at.task, at.data_revision)
    files = {"task_result": task_result_path(results_dir, at.name, at.revision, at.task, legacy=False)}
    for split in at.splits:
        files[f"per_query_{split}.json"] = folder / f"per_query_{split}.json"
        files[f"rankings_{split}.json.gz"] = folder / f"rankings_{split}.json.gz"
    return files


def why_stale(results_dir: Path, at: RunAt, identity: dict[str, Any]) -> str:
    """'' when the stored run has this identity and intact files, else what differs (one phrase)."""
    if existing_dataset_revision(task_result_path(results_dir, at.name, at.revision, at.task)) != at.data_revision:
        return "no result for this data revision"
    stored = read_identity(run_dir(results_dir, at.name, at.revision, at.task, at.data_revision))
    if stored is None or stored.get("fingerprint") != identity["fingerprint"]:
        return "changed: " + ", ".join(changed_parts(stored, identity))
    digests = stored.get("files") or {}
    for key, path in run_files(results_dir, at).items():
        if not digests.get(key) or file_digest(path) != digests[key]:
            return f"{path.name} is missing or not the one its identity.json vouches for"
    return ""


def stored_scores(results_dir: Path, at: RunAt, split: str | None = None) -> dict[str, float]:
    """The stored TaskResult's main scores on `split` (default: the task's first split)."""
    data = read_json(task_result_path(results_dir, at.name, at.revision, at.task))
    return dict(data["scores"][split or at.splits[0]][0])


def stored_states(results_dir: Path, ats: list[list[RunAt]],
                  identities: list[list[dict[str, Any]]]) -> list[list[tuple[str, dict[str, float] | None]]]:
    """`[candidate][task]`: ('', its stored scores) for a current run, (why not, None) for one to compute."""
    out = []
    for row, row_identities in zip(ats, identities):
        states: list[tuple[str, dict[str, float] | None]] = []
        for at, identity in zip(row, row_identities):
            reason = why_stale(results_dir, at, identity)
            states.append((reason, None if reason else stored_scores(results_dir, at)))
        out.append(states)
    return out
