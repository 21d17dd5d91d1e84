"""The raters' own files, `labels/<task>/<rater>.jsonl`: read back, and merged into one grade per pair.

The judging app (runners/labels/judging) appends one JSON line per action, fsynced before the screen moves on:
``{"task", "split", "query_id", "doc_id", "grade", "status", "rater", "time"}`` with ``status`` one of
``graded`` (grade set), ``skip`` or ``unsure`` (grade null). The last line of a rater for a pair is their
judgment, so going back and re-grading is just another line and no line is ever rewritten.

A file edited by hand can hold a broken line; it is named in a warning and skipped, the rest is kept
(one bad line must not throw away a day of judging). Lines of another task, or with a grade outside the
task's scale, are skipped the same way.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from custom_tasks.config import TaskConfig, project_root
from custom_tasks.readers._io import display_path

from ...statistics.analysis_errors import AnalysisError

STATUSES = ("graded", "skip", "unsure")
RATER_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,39}")
#: the adjudicator's file: its grade decides a disagreement under `merge: adjudicated`
ADJUDICATION = "adjudication"

Key = tuple[str, str, str]  # (split, query_id, doc_id)


@dataclass(frozen=True)
class Judgment:
    key: Key
    grade: int | None
    status: str
    rater: str
    time: str


@dataclass
class RaterFile:
    rater: str
    path: Path
    judgments: dict[Key, Judgment]  # the last line per pair
    lines: int
    warnings: list[str] = field(default_factory=list)

    @property
    def graded(self) -> dict[Key, int]:
        return {k: j.grade for k, j in self.judgments.items() if j.status == "graded" and j.grade is not None}


def judging_dir(cfg: TaskConfig, override: Path | None = None) -> Path:
    """`labels/<task>/` of the task's project (the folder above the YAML that holds `configs/`)."""
    return Path(override) / cfg.name if override else project_root(cfg.base_dir) / "labels" / cfg.name


def check_rater_name(name: str) -> str:
    """A rater's name names their file: letters, digits, '_', '.', '-', starting with a letter."""
    if not RATER_NAME.fullmatch(name or ""):
        raise AnalysisError(f"--rater {ascii(name)[:60]}: use a name of letters, digits, '_', '.', '-' "
                            "starting with a letter (it names the rater's file), e.g. --rater ana")
    if name.lower() == ADJUDICATION:
        raise AnalysisError(f"--rater {name}: '{ADJUDICATION}' is the adjudicator's file; pick another name "
                            "(use `labels serve --adjudicate` to adjudicate)")
    return name


def _parse_line(text: str, cfg: TaskConfig, rater: str | None) -> Judgment:
    """One line -> a Judgment, or ValueError saying what is wrong with it."""
    try:
        row = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"not a JSON line ({e.msg})") from None
    if not isinstance(row, dict):
        raise ValueError("not a JSON object")
    if row.get("task", cfg.name) != cfg.name:
        raise ValueError(f"a judgment of task {str(row.get('task'))[:60]!r}, not {cfg.name!r}")
    who = str(row.get("rater") or rater or "")
    if rater is not None and who != rater:
        raise ValueError(f"a judgment by {str(row.get('rater'))[:60]!r} in {rater!r}'s file")
    try:
        key = (str(row["split"]), str(row["query_id"]), str(row["doc_id"]))
    except KeyError as e:
        raise ValueError(f"no {e.args[0]!r}") from None
    status = row.get("status", "graded")
    if status not in STATUSES:
        raise ValueError(f"status {str(status)[:30]!r} is not one of {', '.join(STATUSES)}")
    grade = row.get("grade")
    if status == "graded":
        if isinstance(grade, bool) or not isinstance(grade, int) or grade not in cfg.grades:
            raise ValueError(f"grade {json.dumps(grade)[:30]} is outside the task's scale {cfg.grade_scale}")
    elif grade is not None:
        raise ValueError(f"status {status!r} with a grade")
    return Judgment(key, grade if status == "graded" else None, status, who, str(row.get("time", "")))


def read_rater_file(path: Path, cfg: TaskConfig, rater: str | None = None) -> RaterFile:
    """A rater's judgments; broken lines named in ``warnings`` and skipped. A missing file has none."""
    path = Path(path)
    rater = rater or path.stem
    check = None if rater == ADJUDICATION else rater  # the adjudication file holds its adjudicators' names
    out: dict[Key, Judgment] = {}
    warnings: list[str] = []
    n = 0
    if path.exists():
        with open(path, "rb") as f:
            for n, raw in enumerate(f, 1):
                if not raw.strip():
                    continue
                try:
                    j = _parse_line(raw.decode("utf-8"), cfg, check)
                except (ValueError, UnicodeDecodeError) as e:
                    warnings.append(f"{display_path(path)}:{n}: {e} (line skipped, the others are kept)")
                    continue
                out[j.key] = j
    return RaterFile(rater, path, out, n, warnings)


def read_all(cfg: TaskConfig, folder: Path) -> list[RaterFile]:
    """Every rater's file in `labels/<task>/` (the adjudicator's left out), by name."""
    files = sorted(p for p in Path(folder).glob("*.jsonl") if p.stem != ADJUDICATION)
    return [read_rater_file(p, cfg) for p in files]


def merge_grades(grades: list[int], rule: str, adjudicated: int | None = None) -> int | None:
    """One grade from several raters' grades of a pair; None while an `adjudicated` disagreement waits.

    median: the lower median (with two raters, 1 and 2 give 1: a pair is not called more relevant than
    half its raters say); majority: the most frequent grade, a tie broken by the lower median;
    adjudicated: the agreed grade, else the adjudicator's.
    """
    if not grades:
        return adjudicated
    if rule == "median":
        return int(statistics.median_low(grades))
    if rule == "majority":
        counts = Counter(grades).most_common()
        top = [g for g, c in counts if c == counts[0][1]]
        return top[0] if len(top) == 1 else int(statistics.median_low(grades))
    if rule == "adjudicated":
        if len(set(grades)) == 1:
            return grades[0]
        return adjudicated
    raise AnalysisError(f"unknown merge rule {rule!r} (median, majority, adjudicated)")


@dataclass
class Merged:
    grades: dict[Key, int]  # what mteb scores
    ratings: dict[Key, list[dict[str, Any]]]  # every rater's grade with rater and time
    pending: list[Key]  # disagreements waiting for the adjudicator (merge: adjudicated)


def merge_all(cfg: TaskConfig, files: list[RaterFile], adjudication: RaterFile | None = None) -> Merged:
    """Apply the task's `merge:` rule to every pair at least one rater graded."""
    keys = sorted({k for f in files for k in f.graded})
    adj = adjudication.graded if adjudication else {}
    grades, ratings, pending = {}, {}, []
    for k in keys:
        rows = [{"rater": f.rater, "grade": f.graded[k], "time": f.judgments[k].time} for f in files if k in f.graded]
        if k in adj:
            rows.append({"rater": adjudication.judgments[k].rater, "grade": adj[k], "time": adjudication.judgments[k].time,
                         "adjudicated": True})
        merged = merge_grades([r["grade"] for r in rows if not r.get("adjudicated")], cfg.merge, adj.get(k))
        ratings[k] = rows
        if merged is None:
            pending.append(k)
        else:
            grades[k] = merged
    return Merged(grades, ratings, pending)
