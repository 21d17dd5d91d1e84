"""LLM relevance grades, kept apart from human grades: `<task yaml stem>.llm-labels.jsonl` next to the task YAML.

`private-mteb labels judge` writes one JSON line per (judge, split, query, document): the grade (null when the
pair was unrateable), ``source: llm:<model>``, the judge identity and the sha256 of the query and document texts
it judged, never the texts. A grade counts only for the same judge and the same texts: after a document changes,
its old grade is stale and ignored. Whether LLM grades count in scoring is the benchmark's explicit choice
(``labels: {use_llm: false | fill_unjudged}``); with ``fill_unjudged`` they fill pairs no human graded, never
replace a human grade, and the merged qrels give a new data revision.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .collection import Collection
from .errors import CollectionError

LLM_POLICIES = (False, "fill_unjudged")


def llm_labels_path(task_yaml: Path) -> Path:
    """Where a task's LLM grades live: next to its YAML, apart from its human labels file."""
    return Path(task_yaml).with_name(Path(task_yaml).stem + ".llm-labels.jsonl")


def text_sha(text: str) -> str:
    """The hash a grade is tied to (what the judge read), so a changed text is judged again."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def judged_document_text(doc: dict[str, str]) -> str:
    """The document text a judge reads: title and text, as a person would see them."""
    title = doc.get("title") or ""
    return f"{title}\n\n{doc['text']}" if title else doc["text"]


def read_llm_labels(path: Path) -> list[dict[str, Any]]:
    """Every row of an LLM grades file (absent: none); a broken line is one ``file:line`` error."""
    path = Path(path)
    if not path.is_file():
        return []
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            raise CollectionError(f"{path}:{n}", "not a JSON line: delete the line (that pair is judged again)") from None
        need = ("split", "query_id", "doc_id", "judge", "query_hash", "doc_hash", "source")
        if not isinstance(row, dict) or any(not isinstance(row.get(k), str) for k in need):
            raise CollectionError(f"{path}:{n}", f"an LLM grade needs {', '.join(need)}: delete the line")
        grade = row.get("grade")
        if grade is not None and (isinstance(grade, bool) or not isinstance(grade, int) or grade < 0):
            raise CollectionError(f"{path}:{n}", f"grade {grade!r} is not a whole number >= 0 or null")
        rows.append(row)
    return rows


def current_grades(collection: Collection, rows: list[dict[str, Any]], judge: str) -> dict[tuple[str, str, str], int]:
    """(split, query, doc) -> grade of ``judge`` for the texts as they are now (stale and unrateable left out)."""
    out = {}
    for r in rows:
        if r["judge"] != judge or r.get("grade") is None:
            continue
        q, d = collection.queries.get(r["query_id"]), collection.corpus.get(r["doc_id"])
        if q is None or d is None or r["split"] not in collection.qrels:
            continue
        if text_sha(q) == r["query_hash"] and text_sha(judged_document_text(d)) == r["doc_hash"]:
            out[(r["split"], r["query_id"], r["doc_id"])] = r["grade"]
    return out


@dataclass
class LabelsUsed:
    """Which grades a score rests on: what results record (identity.json) next to the data revision."""

    use_llm: str | bool = False
    human: int = 0  # judged pairs with a human grade
    llm: int = 0  # pairs graded by the LLM only (filled in)
    judges: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"use_llm": self.use_llm, "human": self.human, "llm": self.llm, "judges": self.judges}


def with_llm_labels(collection: Collection, grades: dict[tuple[str, str, str], int], source: str,
                    policy: str | bool) -> tuple[Collection, LabelsUsed]:
    """A copy of the collection whose qrels hold the LLM grades of pairs no human graded (``fill_unjudged``);
    with ``False`` the collection itself. A human grade is never replaced, nor a question declared complete filled."""
    human = sum(len(d) for s in collection.qrels.values() for d in s.values())
    if policy is False:
        return collection, LabelsUsed(False, human)
    if policy not in LLM_POLICIES:
        raise ValueError(f"labels.use_llm must be false or fill_unjudged, got {policy!r}")
    qrels = {s: {q: dict(d) for q, d in per.items()} for s, per in collection.qrels.items()}
    filled = 0
    for (split, qid, doc_id), grade in sorted(grades.items()):
        if qid in collection.complete_questions:  # declared complete: a pair no human graded is known not relevant
            continue
        labels = qrels[split].setdefault(qid, {})
        if doc_id not in labels:
            labels[doc_id] = grade
            filled += 1
    return replace(collection, qrels=qrels), LabelsUsed(policy, human, filled, [source] if filled else [])
