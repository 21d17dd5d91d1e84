"""`private-mteb labels judge`: LLM grades for pooled (query, document) pairs, cached, stored apart from humans'.

Each pair is looked up first by (judge identity, sha256 of the query, sha256 of the document): a grade the same
judge gave to the same texts is reused, so a re-run asks nothing (pairs left unrateable are asked again). The
grades go to the task's LLM grades file (custom_tasks/llm_labels.py) with `source: llm:<model>`: ids, grades and
hashes, never a text. Human grades are neither read for the prompt nor touched.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from custom_tasks.collection import Collection
from custom_tasks.errors import ConfigError
from custom_tasks.llm_labels import judged_document_text, llm_labels_path, read_llm_labels, text_sha

from ...config.benchmark import BenchmarkConfig
from ...config.judge_prompt import judge_identity, load_template, render, task_grades
from ...results.store import atomic_write_bytes
from .judge_client import ChatJudge, Outcome, configured

#: the grades file is rewritten (atomically) after this many new judgments, so an interruption loses little
_SAVE_EVERY = 100


@dataclass
class JudgeReport:
    """What one `labels judge` did: pairs, how each was answered, requests made, where the grades went."""

    path: Path
    judge: str
    source: str
    pairs: int = 0
    cached: int = 0
    asked: int = 0
    graded: int = 0
    unrateable: int = 0
    requests: int = 0
    max_in_flight: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    grades: dict[int, int] = field(default_factory=dict)
    #: the first refused answers (`--show-refused N`): ids, why, the start of the answer; shown, never stored
    refused: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {k: (str(v) if isinstance(v, Path) else v) for k, v in self.__dict__.items()}


def _key(row: dict[str, Any]) -> tuple[str, str, str, str]:
    return row["judge"], row["split"], row["query_id"], row["doc_id"]


def _save(path: Path, rows: dict[tuple[str, str, str, str], dict[str, Any]]) -> None:
    body = "".join(json.dumps(rows[k], ensure_ascii=False, sort_keys=True) + "\n" for k in sorted(rows))
    atomic_write_bytes(path, body.encode("utf-8"))


def judge_pairs(pairs: Sequence[tuple[str, str, str]], collection: Collection, bench: BenchmarkConfig,
                task_cfg: Any, on_progress: Callable[[int, int], None] | None = None,
                today: dt.date | None = None, keep_refused: int = 0,
                refused: list[dict[str, Any]] | None = None) -> JudgeReport:
    """Grade ``pairs`` (split, query id, document id) of ``collection`` with ``bench.judge``.

    ``keep_refused``: keep the first N answers that brought no grade in ``report.refused``, and in ``refused`` (a
    list the caller passes) even when the command stops on a broken endpoint, so the user can see what it said."""
    opts = configured(bench.judge, "judge", bench.path)
    if task_cfg.path is None:
        raise ConfigError(collection.name, "the task has no YAML file to keep its LLM grades next to")
    template = load_template(opts.prompt, bench.base_dir, bench.path)
    grades = task_grades(task_cfg)
    jid = judge_identity(opts.model, template, grades, opts.temperature, opts.max_tokens, opts.chat_url)
    path = llm_labels_path(task_cfg.path)
    rows = {_key(r): r for r in read_llm_labels(path)}
    cache = {(r["judge"], r["query_hash"], r["doc_hash"]): r["grade"] for r in rows.values()
             if r.get("grade") is not None}
    report = JudgeReport(path, jid, opts.source, pairs=len(pairs))
    when = (today or dt.date.today()).isoformat()
    todo: list[tuple[dict[str, Any], str]] = []
    reused = 0  # cached grades written under a new (split, query, doc) key
    for split, qid, doc_id in pairs:
        query, doc = collection.queries[qid], judged_document_text(collection.corpus[doc_id])
        row = {"split": split, "query_id": qid, "doc_id": doc_id, "judge": jid, "source": opts.source,
               "query_hash": text_sha(query), "doc_hash": text_sha(doc), "date": when}
        hit = cache.get((jid, row["query_hash"], row["doc_hash"]))
        if hit is not None:
            report.cached += 1
            old = rows.get(_key(row))
            if old is None or old.get("grade") != hit or old["doc_hash"] != row["doc_hash"]:
                rows[_key(row)] = {**row, "grade": hit}  # the same texts under another id: no request
                reused += 1
            continue
        todo.append((row, render(template, query, doc, grades)))
    report.asked = len(todo)
    lock = threading.Lock()
    done = [0]
    # a judge that has graded pairs before can answer in the format: a pair it still cannot grade is that pair's
    # problem, so a re-run of the unrateable ones asks every one of them instead of stopping at the first
    proven = any(r.get("grade") is not None for r in rows.values() if r["judge"] == jid)
    client = ChatJudge(opts, grades, bench.path, keep_refused=keep_refused)

    def finished(i: int, out: Outcome) -> None:
        row = {**todo[i][0], "grade": out.grade, "requests": out.requests}
        if out.grade is None:
            row["unrateable"] = sorted(set(out.failures))
        with lock:
            rows[_key(row)] = row
            done[0] += 1
            if out.grade is None:
                report.unrateable += 1
            else:
                report.graded += 1
                report.grades[out.grade] = report.grades.get(out.grade, 0) + 1
            if done[0] % _SAVE_EVERY == 0 and client.stats.chat_answers:  # a server that never judged: untouched
                _save(path, rows)
            if on_progress is not None:
                on_progress(done[0], len(todo))

    finished_run = False
    try:
        client.grade_all([p for _, p in todo], finished, check_format=not proven)
        if todo and not client.stats.chat_answers:  # every answer an error page (HTTP 200), or none came
            raise ConfigError(bench.path, client.not_chat_json(client.stats.requests) + f"; {path.name} is left "
                                          "as it was")
        finished_run = True
    finally:
        report.refused = [{"query_id": todo[r.index][0]["query_id"], "doc_id": todo[r.index][0]["doc_id"],
                           "kind": r.kind, "answer": r.answer} for r in client.stats.refused]
        if refused is not None:
            refused[:] = report.refused
        # no chat-completions answer (a broken endpoint): the file is left as it was, whatever it holds
        if (done[0] and client.stats.chat_answers) or (reused and finished_run):
            _save(path, rows)
        report.requests = client.stats.requests
        report.max_in_flight = client.stats.max_in_flight
        report.failures = dict(client.stats.failures)
    return report


def judged_pairs_for(pool_rows: Sequence[dict[str, Any]], collection: Collection, split: str,
                     also_judged: bool) -> list[tuple[str, str, str]]:
    """The (split, query, doc) pairs to grade: the pool's, plus (``also_judged``) every human-graded pair of the
    pool's queries, which is what agreement between LLM and human grades is measured on."""
    pairs = [(r.get("split") or split, str(r["query_id"]), str(r["doc_id"])) for r in pool_rows]
    if also_judged:
        queries = sorted({q for _, q, _ in pairs} | set(collection.qrels.get(split, {})))
        pairs += [(split, q, d) for q in queries for d in sorted(collection.qrels[split].get(q, {}))]
    seen, out = set(), []
    for p in pairs:
        if p not in seen and p[1] in collection.queries and p[2] in collection.corpus:
            seen.add(p)
            out.append(p)
    return out
