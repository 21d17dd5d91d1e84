"""`labels merge`: the raters' grades -> the task's labels file, one merged grade per pair, every rating kept.

The merged grade (the YAML's ``merge:`` rule) is the row's ``grade``, which the collection reader merges into
qrels and mteb scores; the row also keeps ``ratings``: every rater's grade with rater and time. Rows of
other pairs (e.g. a `labels import`) are kept. The collection then has a new content hash, so the next
`private-mteb run` re-scores every candidate, dense ones from cached vectors (as `labels import` does).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from custom_tasks.config import TaskConfig
from custom_tasks.errors import ConfigError
from custom_tasks.readers._io import display_path, resolve
from custom_tasks.readers.extra_labels import read_labels
from custom_tasks.sources import load_collection

from ...statistics.analysis_errors import AnalysisError
from .label_import import default_labels_path, write_labels
from .ratings import ADJUDICATION, Merged, judging_dir, merge_all, read_all, read_rater_file


@dataclass
class MergeResult:
    labels_path: Path
    merged: int  # pairs with a merged grade
    pending: int  # disagreements waiting for the adjudicator
    changed: int  # pairs whose grade in the labels file changed
    old_revision: str
    new_revision: str
    warnings: list[str]


def merged_for_task(cfg: TaskConfig, folder: Path) -> tuple[Merged, list[str]]:
    """The task's merge rule over every rater's file in `folder` (and the adjudicator's)."""
    files = read_all(cfg, folder)
    adj_path = Path(folder) / f"{ADJUDICATION}.jsonl"
    adj = read_rater_file(adj_path, cfg, ADJUDICATION) if adj_path.exists() else None
    warnings = [w for f in files + ([adj] if adj else []) for w in f.warnings]
    return merge_all(cfg, files, adj), warnings


def judged_from_pool(cfg: TaskConfig, split: str, folder: Path | None = None) -> dict[tuple[str, str], int]:
    """(question, document) -> grade of every pair people judged from the pool on ``split``: the task's labels file
    (`labels import`, `labels merge`: pooled judgments added after the collection was made) and, over it, the raters'
    files in the judging folder, merged by the task's rule. These were judged whatever they turned out to be, so they
    can calibrate how often an unjudged pooled pair is relevant; the collection's own labels cannot (most were
    written down because they are relevant). {} when nobody has judged from the pool yet."""
    out: dict[tuple[str, str], int] = {}
    named = cfg.source.get("labels_file")
    if named:
        path = resolve(cfg.base_dir, named)
        if path.exists():
            base = load_collection({**cfg.source, "labels_file": None}, cfg.base_dir, cfg.name)
            out.update({(r["query_id"], r["doc_id"]): int(r["grade"]) for r in read_labels(path, base)
                        if r["split"] == split})
    where = judging_dir(cfg, folder)
    if where.is_dir():
        merged, _ = merged_for_task(cfg, where)
        out.update({(q, d): g for (s, q, d), g in merged.grades.items() if s == split})
    return out


def merge_into_labels(cfg: TaskConfig, folder: Path) -> MergeResult:
    """Write the merged grades into the task's labels file (pointing the YAML at one when it names none)."""
    if cfg.path is None:
        raise ConfigError(cfg.name, "the task has no YAML file to point at a labels file")
    merged, warnings = merged_for_task(cfg, folder)
    if not merged.grades and not merged.pending:
        raise AnalysisError(f"{display_path(Path(folder))}: no graded pair yet: grade with "
                            f"`private-mteb labels serve -t {cfg.name} --rater NAME` first")
    current = load_collection(cfg.source, cfg.base_dir, cfg.name)
    named = cfg.source.get("labels_file")
    base = load_collection({**cfg.source, "labels_file": None}, cfg.base_dir, cfg.name) if named else current
    labels_path = resolve(cfg.base_dir, named) if named else default_labels_path(cfg)
    old = {(r["split"], r["query_id"], r["doc_id"]): r for r in (read_labels(labels_path, base) if named else [])}
    today = dt.date.today().isoformat()
    changed = 0
    for key, grade in merged.grades.items():
        split, qid, doc_id = key
        if split not in base.qrels or qid not in base.queries or doc_id not in base.corpus:
            raise AnalysisError(f"{display_path(Path(folder))}: ({qid!r}, {doc_id!r}) in split {split!r} is not in "
                                f"task {cfg.name!r}: are these judgments of another task?")
        own = base.qrels[split].get(qid, {}).get(doc_id)
        if own is not None and own != grade:
            raise AnalysisError(f"({qid!r}, {doc_id!r}) is graded {own} by the task's own labels and {grade} by its "
                                "raters: change it in the task's own file or drop those judgments")
        ratings = merged.ratings[key]
        before = old.get(key)
        changed += before is not None and before.get("grade") != grade
        old[key] = {"query_id": qid, "doc_id": doc_id, "grade": grade, "split": split,
                    "annotator": ",".join(sorted({r["rater"] for r in ratings})), "date": today,
                    "source": "judged", "merge": cfg.merge, "ratings": ratings}
    for key in merged.pending:  # a disagreement not yet adjudicated is not scored with a guessed grade
        if old.get(key, {}).get("source") == "judged":
            del old[key]
    after = write_labels(cfg, labels_path, old, named)
    return MergeResult(labels_path, len(merged.grades), len(merged.pending), changed, current.content_hash(),
                       after.content_hash(), warnings)
