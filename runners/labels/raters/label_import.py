"""Import annotators' grades (a filled pool file) into the task's labels file, with provenance.

A files-level operation: it validates the grades like the readers do (one `file:line: problem` line),
merges them into the labels file the task YAML points to (`source.labels_file:`, added to the YAML
when missing) with annotator, date and source `pooled`, and re-reads the task. The collection then has a
new content hash, so the next `private-mteb run` re-scores every candidate; dense ones from cached vectors
(the embedding cache is keyed by text), so nothing is encoded again.
"""

from __future__ import annotations

import datetime as dt
import getpass
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from custom_tasks.collection import Collection
from custom_tasks.config import TaskConfig
from custom_tasks.errors import ConfigError
from custom_tasks.readers._io import as_id, display_path, is_missing, read_table, resolve
from custom_tasks.readers.extra_labels import read_labels
from custom_tasks.sources import load_collection
from custom_tasks.validate import parse_grade

from ...results.spreadsheet import restore
from ...results.store import atomic_write_bytes


@dataclass
class ImportResult:
    labels_path: Path
    yaml_changed: bool
    added: int  # pairs judged for the first time
    changed: int  # pairs the labels file had with another grade
    unchanged: int
    ungraded: int  # rows left empty by the annotators (not imported)
    old_revision: str
    new_revision: str


def default_labels_path(cfg: TaskConfig) -> Path:
    """Where a task's labels file goes when its YAML names none: `<yaml stem>.labels.jsonl` next to it."""
    stem = cfg.path.stem if cfg.path else cfg.name
    return cfg.base_dir / f"{stem}.labels.jsonl"


def _graded_rows(path: Path, base: Collection, annotator: str, date: str,
                 scale: list[int] | None = None) -> tuple[list[dict[str, Any]], int]:
    """Filled rows of a pool file as labels-file rows; empty grades are counted, bad ones are errors.

    CSV/TSV cells lose the quote `labels pool` put before formula-like text (spreadsheet.restore)."""
    t = read_table(Path(path), "utf-8", "labels")
    t.require_columns(["query_id", "doc_id", "grade"])
    splits = base.splits
    rows, seen, empty = [], {}, 0
    for loc, raw in t.rows:
        row = {k: restore(v) for k, v in raw.items()} if t.kind in ("csv", "tsv") else raw
        value = t.get(loc, row, "grade")
        if is_missing(value) or (isinstance(value, str) and not value.strip()):
            empty += 1
            continue
        grade = parse_grade(t, loc, value)
        if scale is not None and grade not in scale:
            raise t.error(loc, f"grade {grade} is outside the task's scale {scale} (its YAML's `grades:`)")
        qid, doc_id = as_id(t.get(loc, row, "query_id")), as_id(t.get(loc, row, "doc_id"))
        split = as_id(row.get("split")) or (splits[0] if len(splits) == 1 else "")
        if split not in base.qrels:
            raise t.error(loc, f"split {split!r} is not one of the task's splits ({', '.join(splits)})")
        if qid not in base.queries:
            raise t.error(loc, f"unknown query id {qid!r} (not in the task's queries)")
        if doc_id not in base.corpus:
            raise t.error(loc, f"unknown document id {doc_id!r} (not in the corpus)")
        own = base.qrels[split].get(qid, {}).get(doc_id)
        if own is not None and own != grade:
            raise t.error(loc, f"({qid!r}, {doc_id!r}) is graded {own} by the task's own labels, {grade} here: "
                               "change it in the task's own file, or leave this row empty")
        key = (split, qid, doc_id)
        if key in seen:
            raise t.error(loc, f"({qid!r}, {doc_id!r}) is graded twice (first at line {seen[key]}): keep one row")
        seen[key] = loc
        who = as_id(row.get("annotator")) or annotator
        rows.append({"query_id": qid, "doc_id": doc_id, "grade": grade, "split": split, "annotator": who,
                     "date": date, "source": "pooled"})
    return rows, empty


def add_labels_file_key(yaml_path: Path, rel: str) -> None:
    """Insert `labels_file: <rel>` as the first key of the YAML's block `source:` mapping (comments kept)."""
    text = yaml_path.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    at = next((i for i, line in enumerate(lines) if re.match(r"^source:\s*(#.*)?$", line.rstrip("\n"))), None)
    if at is None:
        raise ConfigError(yaml_path, f"cannot add `labels_file: {rel}` under `source:` (not a block mapping): "
                                     "add it by hand and re-run the import")
    nxt = next((line for line in lines[at + 1:] if line.strip() and not line.lstrip().startswith("#")), "  x")
    indent = nxt[: len(nxt) - len(nxt.lstrip())] or "  "
    lines.insert(at + 1, f"{indent}labels_file: {json.dumps(rel)}  # pooled judgments (private-mteb labels import)\n")
    atomic_write_bytes(yaml_path, "".join(lines).encode("utf-8"))


def write_labels(cfg: TaskConfig, labels_path: Path, rows: dict, named: bool) -> Collection:
    """Write the labels file atomically (rows sorted by key), name it in the task YAML when it was not named yet,
    and return the collection as it now loads: its content hash is the new data revision that `run` re-scores."""
    body = "".join(json.dumps(rows[k], ensure_ascii=False) + "\n" for k in sorted(rows))
    atomic_write_bytes(labels_path, body.encode("utf-8"))
    if not named:
        add_labels_file_key(cfg.path, labels_path.name)
    new_cfg = TaskConfig.from_file(cfg.path)
    return load_collection(new_cfg.source, new_cfg.base_dir, new_cfg.name)


def import_labels(file: Path, cfg: TaskConfig, annotator: str | None = None,
                  date: dt.date | None = None) -> ImportResult:
    """Validate a filled pool file and merge it into the task's labels file (pointing the YAML at it)."""
    if cfg.path is None:
        raise ConfigError(cfg.name, "the task has no YAML file to point at a labels file")
    current = load_collection(cfg.source, cfg.base_dir, cfg.name)
    named = cfg.source.get("labels_file")
    base = load_collection({**cfg.source, "labels_file": None}, cfg.base_dir, cfg.name) if named else current
    labels_path = resolve(cfg.base_dir, named) if named else default_labels_path(cfg)
    when = (date or dt.date.today()).isoformat()
    rows, empty = _graded_rows(file, base, annotator or getpass.getuser(), when, cfg.grade_scale)
    if not rows:
        scale = "; ".join(f"{g} = {meaning}" for g, meaning in cfg.grades.items())
        raise ConfigError(display_path(Path(file)), f"no graded rows: fill the 'grade' column ({scale}) and import "
                                                    "again")
    old = {(r["split"], r["query_id"], r["doc_id"]): r for r in (read_labels(labels_path, base) if named else [])}
    added = changed = unchanged = 0
    for r in rows:
        key = (r["split"], r["query_id"], r["doc_id"])
        before = old.get(key)
        if before is None:
            added += 1
        elif before["grade"] != r["grade"]:
            changed += 1
        else:
            unchanged += 1
            continue  # keep the first judgment's provenance
        old[key] = r
    after = write_labels(cfg, labels_path, old, named)
    return ImportResult(labels_path, not named, added, changed, unchanged, empty, current.content_hash(),
                        after.content_hash())
