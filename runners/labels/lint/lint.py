"""`private-mteb tasks lint`: what in a collection silently bends every score, found before anything is scored.

Each check returns a ``Finding`` (a count, the worst examples by id, what to do) only when it found something:
* duplicate documents, exact (normalised text hash) and near (shingle Jaccard >= a threshold), and among them the
  twins one question grades differently (a model that returns the unjudged twin is punished for it);
* leakage: questions whose text, or a long run of its words, is copied verbatim from a relevant document (it
  favours lexical search);
* near-duplicate questions (they inflate n, so intervals come out too narrow);
* documents no question can reach: nothing left after normalisation (only punctuation, markup or symbols).
Truncation (needs each model's tokenizer) and the pooling suggestion (needs stored rankings) are added by the
layers that can read those (runners/labels/lint/truncation.py, runners/labels/lint/lint_pool.py). Lint reads, never
writes: the collection is not changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from custom_tasks.collection import Collection

from .lint_text import char_shingles, common_run, groups, near_pairs, text_hash, word_count, word_shingles, words

#: how many example ids a finding lists (worst first)
EXAMPLES = 5


@dataclass(frozen=True)
class LintSettings:
    """Thresholds of the checks; the defaults are what `tasks lint` uses unless told otherwise."""

    doc_threshold: float = 0.8  # Jaccard of 3-word shingles for near-duplicate documents
    doc_shingle: int = 3
    query_threshold: float = 0.8  # Jaccard of 4-character shingles for near-duplicate questions
    query_shingle: int = 4
    leak_ngram: int = 8  # a run of this many question words copied from a relevant document is leakage ...
    leak_min_words: int = 5  # ... and so is a whole question of at least this many words
    pool_k: int = 10  # pooling suggestion: the candidates' top-k ...
    pool_min_unjudged: int = 5  # ... holding at least this many unjudged documents


@dataclass
class Finding:
    """One kind of problem: how many, the worst examples (ids), and what to do about it."""

    check: str
    summary: str
    count: int
    examples: list[str]
    action: str
    details: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class LintReport:
    """Every finding of one task, and the checks that could not run (with why)."""

    task: str
    revision: str
    documents: int
    queries: int
    findings: list[Finding] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"task": self.task, "revision": self.revision, "documents": self.documents, "queries": self.queries,
                "findings": [f.as_dict() for f in self.findings], "skipped": self.skipped}

    def one_line(self) -> str:
        """What `run` prints per task: the count of each finding, or that there is none."""
        if not self.findings:
            return f"lint {self.task}: no findings"
        parts = ", ".join(f"{f.check.replace('_', ' ')}: {f.count}" for f in self.findings)
        return f"lint {self.task}: {parts} (details: private-mteb tasks lint {self.task})"


def _doc_words(collection: Collection) -> dict[str, list[str]]:
    """Normalised words of each document as mteb embeds it (title, then text)."""
    out = {}
    for doc_id, d in collection.corpus.items():
        title = d.get("title") or ""
        out[doc_id] = words(f"{title} {d['text']}" if title else d["text"])
    return out


def duplicate_groups(doc_words: dict[str, list[str]], settings: LintSettings
                     ) -> tuple[list[list[str]], list[tuple[str, str, float]]]:
    """(exact groups of 2+ documents with the same normalised text, near pairs not already exact)."""
    by_hash: dict[str, list[str]] = {}
    for doc_id, toks in doc_words.items():
        if toks:
            by_hash.setdefault(text_hash(toks), []).append(doc_id)
    exact = sorted((sorted(g) for g in by_hash.values() if len(g) > 1), key=lambda g: (-len(g), g[0]))
    copies = {other for g in exact for other in g[1:]}
    # one representative per exact group: its copies would only repeat the same near pairs
    shingles = {d: word_shingles(t, settings.doc_shingle) for d, t in doc_words.items() if t and d not in copies}
    near = near_pairs(shingles, settings.doc_threshold)
    return exact, near


def _exact_finding(exact: list[list[str]]) -> Finding | None:
    if not exact:
        return None
    n_docs = sum(len(g) for g in exact)
    return Finding("exact_duplicate_documents",
                   f"{len(exact)} group(s) of documents with the same normalised text ({n_docs} documents)",
                   len(exact), [" = ".join(g) for g in exact[:EXAMPLES]],
                   "keep one document per group (or merge their labels onto it); a model is scored as wrong when it "
                   "returns the copy that carries no label",
                   [{"documents": g} for g in exact])


def _near_finding(near: list[tuple[str, str, float]], threshold: float) -> Finding | None:
    if not near:
        return None
    return Finding("near_duplicate_documents",
                   f"{len(near)} pair(s) of documents with shingle Jaccard >= {threshold:.2f}",
                   len(near), [f"{a} ~ {b} ({s:.2f})" for a, b, s in near[:EXAMPLES]],
                   "check each pair: versions of one page should be merged or labelled alike; raise --doc-threshold "
                   "if these are legitimately distinct documents",
                   [{"documents": [a, b], "jaccard": round(s, 4)} for a, b, s in near])


def twin_conflicts(collection: Collection, clusters: list[list[str]]) -> Finding | None:
    """(split, question, cluster) where twins carry different grades (an unjudged twin counts as 0, as mteb does)."""
    member_of = {d: i for i, g in enumerate(clusters) for d in g}
    rows = []
    for split in collection.splits:
        for qid, labels in sorted(collection.qrels[split].items()):
            for i in sorted({member_of[d] for d in labels if d in member_of}):
                grades = {d: labels.get(d) for d in clusters[i]}
                scored = {g or 0 for g in grades.values()}
                if len(scored) > 1:
                    rows.append({"split": split, "query": qid, "grades": grades,
                                 "gap": max(scored) - min(scored)})
    if not rows:
        return None
    rows.sort(key=lambda r: (-r["gap"], r["query"]))

    def show(r: dict[str, Any]) -> str:
        return f"{r['query']}: " + ", ".join(f"{d}={'unjudged' if g is None else g}" for d, g in r["grades"].items())

    return Finding("twin_label_conflicts",
                   f"{len(rows)} question(s) grade duplicate documents differently",
                   len(rows), [show(r) for r in rows[:EXAMPLES]],
                   "give every twin the grade of its copy (labels import), or drop the copies; otherwise a model "
                   "that finds the unjudged twin is punished",
                   [{"split": r["split"], "query": r["query"],
                     "grades": {d: g for d, g in r["grades"].items()}} for r in rows])


def copied_run(question: list[str], document: list[str], settings: LintSettings) -> int:
    """How many normalised tokens of ``question`` are copied verbatim from ``document`` when that is leakage (the
    whole question of >= leak_min_words words, or a run of leak_ngram of its words), else 0. The one rule of
    `tasks lint` and of `questions generate`'s copied-wording filter. Lengths are in words (``word_count``): in a
    script without spaces a token is a character, and 1.66 of them make a word."""
    size = word_count(question)
    need = max(settings.leak_min_words, min(settings.leak_ngram, size))
    if size < need:
        return 0
    run, start = common_run(question, document)
    return run if word_count(question[start:start + run]) >= need - 1e-9 else 0


def leakage(collection: Collection, doc_words: dict[str, list[str]], settings: LintSettings) -> Finding | None:
    """Questions copied from a relevant document: the whole question (>= leak_min_words words) or a run of
    leak_ngram of its words verbatim, after normalisation."""
    rows: dict[str, dict[str, Any]] = {}
    for split in collection.splits:
        for qid, labels in collection.qrels[split].items():
            q = words(collection.queries.get(qid, ""))
            for doc_id, grade in labels.items():
                if grade <= 0:
                    continue
                run = copied_run(q, doc_words.get(doc_id, []), settings)
                if run and run / len(q) > rows.get(qid, {}).get("share", 0.0):
                    rows[qid] = {"query": qid, "document": doc_id, "copied_words": run, "query_words": len(q),
                                 "share": run / len(q)}
    if not rows:
        return None
    ordered = sorted(rows.values(), key=lambda r: (-r["share"], -r["copied_words"], r["query"]))
    whole = sum(r["copied_words"] == r["query_words"] for r in ordered)
    return Finding("leaked_questions",
                   f"{len(ordered)} question(s) copy a relevant document verbatim ({whole} the whole question, the "
                   f"rest a run of >= {settings.leak_ngram} words)",
                   len(ordered), [f"{r['query']} ({r['copied_words']}/{r['query_words']} words in {r['document']})"
                                  for r in ordered[:EXAMPLES]],
                   "rephrase these questions as a user would ask them, or tag them (e.g. source: copied) and compare "
                   "with --by; copied wording favours lexical search (BM25)",
                   [{k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()} for r in ordered])


def near_duplicate_questions(collection: Collection, settings: LintSettings) -> Finding | None:
    """Pairs of evaluated questions whose normalised texts are (nearly) the same."""
    evaluated = {q for split in collection.splits for q in collection.qrels[split]}
    shingles = {q: char_shingles(words(collection.queries[q]), settings.query_shingle)
                for q in sorted(evaluated) if q in collection.queries}
    pairs = near_pairs(shingles, settings.query_threshold)
    if not pairs:
        return None

    def relevant(q: str) -> set[str]:
        return {d for s in collection.splits for d, g in collection.qrels[s].get(q, {}).items() if g > 0}

    rows = [{"queries": [a, b], "jaccard": round(s, 4), "same_relevant": relevant(a) == relevant(b)}
            for a, b, s in pairs]
    shared = sum(r["same_relevant"] for r in rows)
    return Finding("near_duplicate_questions",
                   f"{len(rows)} pair(s) of questions with character-shingle Jaccard >= "
                   f"{settings.query_threshold:.2f} ({shared} with the same relevant documents)",
                   len(rows), [f"{a} ~ {b} ({s:.2f})" for a, b, s in pairs[:EXAMPLES]],
                   "keep one question of each pair (or group them, e.g. a tag, and count them once); duplicates "
                   "inflate the number of queries, so intervals and p-values come out too optimistic",
                   rows)


def unreachable_documents(doc_words: dict[str, list[str]]) -> Finding | None:
    """Documents with no word left after normalisation: no question can match them, lexically or densely."""
    empty = sorted(d for d, t in doc_words.items() if not t)
    if not empty:
        return None
    return Finding("unreachable_documents", f"{len(empty)} document(s) are empty after normalisation (only "
                   "punctuation, markup or symbols)", len(empty), empty[:EXAMPLES],
                   "fix the export (the text was probably lost) or remove these documents", [{"document": d}
                                                                                          for d in empty])


def lint_collection(collection: Collection, settings: LintSettings | None = None) -> LintReport:
    """Every data check on one collection (no model, no results): the findings, in a fixed order."""
    settings = settings or LintSettings()
    doc_words = _doc_words(collection)
    exact, near = duplicate_groups(doc_words, settings)
    clusters = groups([(g[0], o) for g in exact for o in g[1:]] + [(a, b) for a, b, _ in near])
    found: Iterable[Finding | None] = (
        _exact_finding(exact), _near_finding(near, settings.doc_threshold), twin_conflicts(collection, clusters),
        leakage(collection, doc_words, settings), near_duplicate_questions(collection, settings),
        unreachable_documents(doc_words),
    )
    return LintReport(collection.name, collection.content_hash(), len(collection.corpus), len(collection.queries),
                      [f for f in found if f is not None])
