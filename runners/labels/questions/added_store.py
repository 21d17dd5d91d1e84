"""The one writer of a task's added-questions file (``source.added_questions``): append-only and atomic.

Questions sampled from a query log or generated are *added* to a task, never written over its questions: a
judged question is expensive, and a result must stay explainable by the data it was scored on. So a new batch
is the old bytes plus new lines, written to a temp file and renamed (a reader sees the old file or the new one,
never half), under a lock so two writers never lose each other's rows. The file's bytes are part of the
collection's revision (``Collection.content_hash``), so every stored result is re-scored after an append.
The rows are checked before anything is written, with the loader's own rules, so a written file always loads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from custom_tasks.config import TaskConfig
from custom_tasks.errors import CollectionError
from custom_tasks.readers._io import as_id, is_missing, resolve
from custom_tasks.readers._text import display_path
from custom_tasks.readers.added_questions import PENDING
from custom_tasks.sources import load_collection
from custom_tasks.yaml_io import add_mapping_key

from ...results.locks import FileLock
from ...results.store import atomic_write_bytes

KEY = "added_questions"


def default_added_path(task_yaml: Path) -> str:
    """Where a task's added questions go when its YAML names no file yet: beside the YAML (relative to it)."""
    return f"{Path(task_yaml).stem}.added_questions.jsonl"


def append_questions(task_yaml: Path, rows: list[dict[str, Any]]) -> Path:
    """Append ``rows`` (evalset-format questions, see readers/added_questions.py) to the task's added file.

    Returns the file's path. Adds ``source.added_questions:`` to the task YAML when missing, keeping its
    comments. An id already used by the task's questions, the file's or another new row is a one-line
    ``CollectionError`` and nothing is written.
    """
    task_yaml = Path(task_yaml)
    cfg = TaskConfig.from_file(task_yaml)
    named = cfg.source.get(KEY)
    rel = named or default_added_path(task_yaml)
    path = resolve(cfg.base_dir, rel)
    with FileLock(path.with_name(f".{path.name}.lock")):
        old = path.read_bytes() if path.is_file() else b""
        own = load_collection({**cfg.source, KEY: None, "labels_file": None}, cfg.base_dir, cfg.name)
        taken = {**{q: "the task's questions" for q in own.queries}, **{q: display_path(path) for q in _ids(old, path)}}
        lines = [_checked(path, i, row, taken, own.corpus) for i, row in enumerate(rows, 1)]
        if lines:
            if old and not old.endswith(b"\n"):
                old += b"\n"
            atomic_write_bytes(path, old + "".join(lines).encode("utf-8"))
    if not named:
        text = task_yaml.read_text(encoding="utf-8")
        try:
            new_text = add_mapping_key(text, ["source"], KEY, rel)
        except ValueError:
            raise CollectionError(display_path(task_yaml), f"could not add `{KEY}: {rel}` under `source:`: add it "
                                                           "by hand (the questions are written)") from None
        atomic_write_bytes(task_yaml, new_text.encode("utf-8"))
    return path


def _ids(data: bytes, path: Path) -> list[str]:
    """The query ids of an added file's lines (its rows were checked when they were appended)."""
    out = []
    for i, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        if line.strip():
            try:
                out.append(as_id(json.loads(line).get("query_id")))
            except (ValueError, AttributeError):
                raise CollectionError(path, f"line {i} is not a JSON object: the added-questions file was edited "
                                            "by hand; fix that line") from None
    return out


def _checked(path: Path, n: int, row: Any, taken: dict[str, str], corpus: Any) -> str:
    """One new row as a JSONL line, after the loader's rules; ``taken`` gains its id."""
    def bad(problem: str) -> CollectionError:
        return CollectionError(display_path(path), f"new question {n}: {problem} (nothing was written)")

    if not isinstance(row, dict):
        raise bad("is not an object")
    qid = as_id(row.get("query_id"))
    if not qid or any(c.isspace() for c in qid):
        raise bad(f"query_id {qid!r} is empty or holds whitespace")
    if qid in taken:
        raise bad(f"query id {qid!r} is already used by {taken[qid]}: give it another id")
    if not isinstance(row.get("query"), str) or not row["query"].strip():
        raise bad(f"question {qid!r} has no text in 'query'")
    relevant = row.get("relevant") or {}
    if not isinstance(relevant, dict):
        raise bad(f"'relevant' of {qid!r} must be an object {{doc_id: grade or null}}")
    for doc_id, grade in relevant.items():
        if as_id(doc_id) not in corpus:
            raise bad(f"question {qid!r} names document {doc_id!r}, which is not in the corpus")
        pending = is_missing(grade) or (isinstance(grade, str) and grade.strip().lower() in PENDING)
        if not pending and (isinstance(grade, bool) or not isinstance(grade, int) or grade < 0):
            raise bad(f"grade {grade!r} of {qid!r} is not a whole number >= 0 or null (pending)")
    tags = row.get("tags")
    if not isinstance(tags, dict) or not str(tags.get("source") or "").strip():
        raise bad(f"question {qid!r} needs 'tags' with a 'source' (log, human or llm:<model>)")
    taken[qid] = "another new question"
    return json.dumps(row, ensure_ascii=False) + "\n"
