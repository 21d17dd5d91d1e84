"""Stored rankings and a collection's labels as TREC files, for trec_eval, ranx and pyserini.

Run lines are ``qid Q0 docid rank score tag``, written best first with ties ordered by doc id descending,
which is how trec_eval (and pytrec_eval, which mteb scores with) order equal scores: the ``rank`` column
then agrees with what those tools compute. Qrels lines are ``qid 0 docid grade`` and keep grade-0
judgements. Only ids and scores are written, never text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from custom_tasks.errors import ConfigError

from .store import atomic_write_bytes, find_run, read_json


def _check_id(value: str, what: str) -> str:
    """TREC files are whitespace-separated: an id with a space or an empty id cannot be written."""
    if not value or any(c.isspace() for c in value):
        raise ConfigError(what, f"id {value!r} is empty or contains whitespace, which TREC files cannot hold")
    return value


def trec_order(scores: Mapping[str, float]) -> list[tuple[str, float]]:
    """(doc id, score) best first, equal scores by doc id descending (trec_eval's order)."""
    items = sorted(scores.items(), key=lambda kv: kv[0], reverse=True)
    items.sort(key=lambda kv: -kv[1])  # stable: equal scores keep the doc id order
    return items


def run_lines(rankings: Mapping[str, Mapping[str, float]], tag: str, depth: int | None = None) -> Iterable[str]:
    """TREC run lines for ``query id -> {doc id: score}`` (queries in id order)."""
    tag = _check_id(tag.replace("/", "__"), "--tag")
    for qid in sorted(rankings):
        _check_id(qid, "query")
        for rank, (doc_id, score) in enumerate(trec_order(rankings[qid])[:depth], 1):
            yield f"{qid} Q0 {_check_id(doc_id, 'document')} {rank} {score!r} {tag}\n"


def qrels_lines(qrels: Mapping[str, Mapping[str, int]]) -> Iterable[str]:
    """TREC qrels lines for ``query id -> {doc id: grade}`` (queries and documents in id order)."""
    for qid in sorted(qrels):
        _check_id(qid, "query")
        for doc_id in sorted(qrels[qid]):
            yield f"{qid} 0 {_check_id(doc_id, 'document')} {int(qrels[qid][doc_id])}\n"


def write_lines(path: Path, lines: Iterable[str]) -> int:
    """Write atomically; returns the number of lines."""
    text = list(lines)
    atomic_write_bytes(Path(path), "".join(text).encode("utf-8"))
    return len(text)


def stored_rankings(results_dir: Path, model: str, task: str, split: str = "test",
                    subset: str = "default") -> dict[str, dict[str, float]]:
    folder = find_run(results_dir, model, task)
    path = folder / f"rankings_{split}.json.gz" if folder else None
    if path is None or not path.exists():
        raise FileNotFoundError(f"no rankings for '{model}' on '{task}' ({split} split) in {results_dir}: "
                                "run `private-mteb run` first")
    return read_json(path)["subsets"].get(subset, {})


def export_run(results_dir: Path, model: str, task: str, out: Path, split: str = "test", tag: str | None = None,
               depth: int | None = None) -> int:
    """One model's stored top-k on one task as a TREC run file; returns the number of lines."""
    rankings = stored_rankings(results_dir, model, task, split)
    return write_lines(out, run_lines(rankings, tag or model, depth))


def export_qrels(qrels: Mapping[str, Mapping[str, int]], out: Path) -> int:
    """One split's labels as a TREC qrels file; returns the number of lines."""
    return write_lines(out, qrels_lines(qrels))
