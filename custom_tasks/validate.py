"""Validation of collections: hard errors while building (with file and line), warnings once built.

Every reader feeds rows into ``CollectionBuilder`` so the rules (ids, empty text, grades, dangling
labels, empty splits) are the same for every format and each error can name the offending line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .collection import Collection, CollectionWarning
from .errors import CollectionError, ProblemLog
from .letter_forms import FormCounts
from .readers._io import Table, as_id
from .row_values import checked_id, declared, parse_grade

LONG_DOC_TOKENS = 512

WARNING_KINDS: dict[str, str] = {
    "empty_document": "documents with neither text nor a title: kept (the collection loads and runs) but no "
                      "model can ever retrieve them",
    "no_positive_label": "queries whose labels are all grade 0: mteb keeps them but they can never score",
    "unlabeled_query": "queries with no labels in any loaded split: mteb drops them, they are not evaluated",
    "query_id_equals_doc_id": "query ids that are also document ids: BEIR/mteb silently drop such hits "
                              "when scoring (ignore_identical_ids); private-mteb keeps them as real hits unless "
                              "the task YAML sets `ignore_identical_ids: true`",
    "title_only_document": "documents with a title but empty text: mteb scores them on the title alone "
                           "(BEIR corpora have such documents)",
    "duplicate_doc_text": "documents whose text repeats an earlier document",
    "duplicate_query_text": "queries whose text repeats an earlier query",
    "long_document": f"documents over ~{LONG_DOC_TOKENS} tokens by a word estimate, max(words x 1.3, chars / 4): "
                     "English text under a large-vocabulary tokenizer, a lower bound (other languages and technical "
                     "text split into more tokens per word); -c CONFIG counts in the candidates' own tokenizers",
    "truncated_document": "documents longer than a candidate's max_seq_length in its own tokenizer (special tokens "
                          "included): that model never sees their end",
    "duplicate_judgment": "the same (query, document) judged twice in a split with the same grade",
    "mixed_letter_forms": "the same letters encoded two ways: a model's tokenizer and BM25 without normalisation see "
                          "different words",
}


@dataclass
class IdWarning(CollectionWarning):
    """A CollectionWarning that also carries the ids it is about, for the summary's examples."""

    ids: tuple[str, ...] = ()
    #: where the first id's row is, as errors name it ('corpus.jsonl:9'; 'corpus.parquet row 9'); '' if unknown
    at: str = ""


def _warn(kind: str, message: str, *ids: str, at: str = "") -> IdWarning:
    return IdWarning(kind=kind, message=message, ids=tuple(ids), at=at)


def place(table: Table, loc: int) -> str:
    """``file:line`` of a row, as an error names it (a Parquet file has rows, not lines)."""
    return f"{table.shown} row {loc}" if table.kind == "parquet" else f"{table.shown}:{loc}"


#: warning kinds about a document (their ids are document ids); every other kind is about a query
DOC_KINDS = {"empty_document", "title_only_document", "duplicate_doc_text", "long_document"}
#: warning kinds that depend on the labels: not computed while label rows have errors (they would be false)
LABEL_KINDS = {"no_positive_label", "unlabeled_query"}


class CollectionBuilder:
    """Collects documents, then queries, then labels, checking each as it arrives.

    Order matters: labels are checked against the documents and queries already added.
    """

    def __init__(self, name: str, splits: list[str] | None = None, grades_map: dict[str, int] | None = None) -> None:
        self.name = name
        self.grades_map = grades_map
        self.wanted = set(splits) if splits else None
        self.requested = list(splits) if splits else None
        self.corpus: Mapping[str, dict[str, str]] = {}
        self._doc_warnings: list[CollectionWarning] | None = None
        self.queries: dict[str, str] = {}
        self.query_tags: dict[str, dict[str, str]] = {}
        self.complete: set[str] = set()  # questions whose `complete_labels` column says yes
        self.qrels: dict[str, dict[str, dict[str, int]]] = {}
        self.spans: dict[str, dict[str, dict[str, list[tuple[int, int]]]]] = {}
        self.warnings: list[CollectionWarning] = []
        self._doc_at: dict[str, tuple[Table, int]] = {}
        self._query_at: dict[str, tuple[Table, int]] = {}
        self._label_at: dict[tuple[str, str, str], tuple[Table, int]] = {}
        self._split_file: dict[str, Table] = {}
        self._split_count: dict[str, int] = {}  # labels seen per split, including splits filtered out
        self._labelled_any: set[str] = set()  # queries with labels in any split, including filtered out
        #: every row problem of every file, raised together by ``finish`` (readers skip the bad rows)
        self.log = ProblemLog()
        self.letter_forms = FormCounts()  # Romanian ș/ş, Arabic ي/ی ...: which form each side writes (letter_forms.py)

    def wants(self, split: str) -> bool:
        return self.wanted is None or split in self.wanted

    @staticmethod
    def _first(table: Table, first: tuple[Table, int]) -> str:
        t, loc = first
        return f"first at {t.where(loc)}" if t is table else f"first at {t.shown}:{t.where(loc)}"

    def add_doc(self, table: Table, loc: int, doc_id: Any, title: str, text: str) -> None:
        """Title-only documents are kept (mteb scores them) with a warning; empty ones too (they can never be
        retrieved, but a collection holding them must still load and run)."""
        doc_id = checked_id(table, loc, doc_id, "document")
        if doc_id in self._doc_at:
            raise table.error(loc, f"duplicate document id {doc_id!r} ({self._first(table, self._doc_at[doc_id])})")
        warning = check_doc_text(table, loc, doc_id, title, text)
        if warning is not None:
            self.warnings.append(warning)
        self._doc_at[doc_id] = (table, loc)
        self.corpus[doc_id] = {"title": title, "text": text}  # type: ignore[index]
        self.letter_forms.add("documents", title, lambda: place(table, loc))
        self.letter_forms.add("documents", text, lambda: place(table, loc))

    def use_stored_corpus(self, corpus: Mapping[str, dict[str, str]], warnings: list[CollectionWarning],
                          doc_warnings: list[CollectionWarning]) -> None:
        """A corpus validated into a disk store (readers/stored_corpus.py) instead of ``add_doc`` one by one.

        ``warnings``: its title-only warnings (in file order); ``doc_warnings``: what ``collect_warnings``
        would find in its documents, computed while streaming so they are not searched for again.
        """
        self.corpus = corpus
        self.warnings.extend(warnings)
        self._doc_warnings = doc_warnings

    def add_query(self, table: Table, loc: int, qid: Any, text: str, tags: dict[str, str] | None = None) -> str:
        qid = checked_id(table, loc, qid, "query")
        if qid in self._query_at:
            raise table.error(loc, f"duplicate query id {qid!r} ({self._first(table, self._query_at[qid])})")
        if not text.strip():
            raise table.error(loc, f"query {qid!r} has empty text")
        self._query_at[qid] = (table, loc)
        self.queries[qid] = text
        self.letter_forms.add("questions", text, lambda: place(table, loc))
        if tags:
            self.query_tags[qid] = tags
        return qid

    def declare_complete(self, table: Table, loc: int, qid: str, value: Any, column: str) -> None:
        """A question row's `complete_labels` value (Collection.complete_questions); a bad one is its own problem at
        its line, the question kept (so its labels do not fail as labels of an unknown question too)."""
        with table.checking():
            if declared(table, loc, value, qid, column):
                self.complete.add(qid)

    def note_left_out(self, qid: Any) -> None:
        """A query labelled only in a split left out by ``splits:`` (no unlabeled_query warning)."""
        self._labelled_any.add(as_id(qid))

    def expect_split(self, split: str, table: Table) -> None:
        """Note that ``table`` provides labels for ``split`` (so an empty split can name its file)."""
        self._split_file.setdefault(split, table)

    def add_label(self, table: Table, loc: int, split: str, qid: Any, doc_id: Any, grade: Any,
                  mapped: bool = True) -> None:
        """One judgment; ``mapped=False``: ``grade`` is already on private-mteb's scale (not looked up in
        ``grades_map:``, e.g. an evalset's ``default_grade``)."""
        qid, doc_id = as_id(qid), as_id(doc_id)
        if qid not in self.queries:
            raise table.error(loc, f"label for unknown query {qid!r} (not in the queries)")
        if doc_id not in self.corpus:
            raise table.error(loc, f"label for unknown document {doc_id!r} (not in the corpus)")
        g = self._grade(table, loc, grade) if mapped else parse_grade(table, loc, grade)
        self.expect_split(split, table)
        self._split_count[split] = self._split_count.get(split, 0) + 1
        self._labelled_any.add(qid)
        if not self.wants(split):
            return
        per_query = self.qrels.setdefault(split, {}).setdefault(qid, {})
        key = (split, qid, doc_id)
        if doc_id in per_query:
            first = self._first(table, self._label_at[key])
            if per_query[doc_id] != g:
                raise table.error(loc, f"query {qid!r} / document {doc_id!r} judged twice in split {split!r} "
                                       f"with different grades {per_query[doc_id]} and {g} ({first})")
            problem = f"query {qid!r} / document {doc_id!r} judged twice in split {split!r} ({first})"
            self.warnings.append(_warn("duplicate_judgment", str(table.error(loc, problem)), qid,
                                       at=place(table, loc)))
            return
        per_query[doc_id] = g
        self._label_at[key] = (table, loc)

    def _grade(self, table: Table, loc: int, value: Any) -> int:
        """The grade as stored: ``parse_grade``, or the export's grade looked up in ``grades_map:``."""
        if self.grades_map is None:
            return parse_grade(table, loc, value)
        key = as_id(value)
        if key not in self.grades_map:
            known = ", ".join(self.grades_map)
            raise table.error(loc, f"grade {value!r} is not in the source's grades_map (its grades: {known})")
        return self.grades_map[key]

    def add_span(self, split: str, qid: str, doc_id: str, span: tuple[int, int]) -> None:
        if self.wants(split):
            self.spans.setdefault(split, {}).setdefault(qid, {}).setdefault(doc_id, []).append(span)

    def _placed(self, warnings: list[CollectionWarning]) -> list[CollectionWarning]:
        """``warnings`` with each id warning's ``at`` filled from the row its first id was read from."""
        for w in warnings:
            ids = getattr(w, "ids", ())
            if isinstance(w, IdWarning) and ids and not w.at:
                first = self._doc_at.get(ids[0]) if w.kind in DOC_KINDS else self._query_at.get(ids[0])
                w.at = place(*first) if first else ""
        return warnings

    def _warnings_despite_errors(self) -> list[CollectionWarning]:
        """The warnings of the rows read so far, for the error message: a team fixes both in one round.
        The label-based kinds are left out (a skipped label row would make them false)."""
        partial = Collection(name=self.name, corpus=self.corpus, queries=self.queries, qrels={})
        found = list(self.warnings) + collect_warnings(partial, doc_warnings=self._doc_warnings)
        found += self.letter_forms.warnings()
        return self._placed([w for w in found if w.kind not in LABEL_KINDS])

    def finish(self, fallback_path: str) -> Collection:
        """Raise every row problem found (with the warnings found so far), check splits have labels, build the
        Collection, attach its warnings."""
        if self.log.errors:
            so_far = self._warnings_despite_errors()
            self.log.warnings = (sum(w.count for w in so_far), warning_lines(so_far))
        self.log.check()
        names = self.requested or sorted(self._split_file)
        if not names:
            raise CollectionError(fallback_path, "no labels found: the collection has no split with judgments")
        for split in names:
            if not self.qrels.get(split):
                t = self._split_file.get(split)
                found = ", ".join(s for s in sorted(self._split_count) if self._split_count[s])
                extra = f" (splits with labels: {found})" if found else ""
                raise CollectionError(t.shown if t else fallback_path, f"split {split!r} has no labels{extra}")
        c = Collection(
            name=self.name, corpus=self.corpus, queries=self.queries,
            qrels={s: self.qrels[s] for s in names}, query_tags=self.query_tags,
            spans=self.spans, warnings=list(self.warnings), complete_questions=set(self.complete),
        )
        c.warnings.extend(collect_warnings(c, labelled_elsewhere=self._labelled_any, doc_warnings=self._doc_warnings))
        c.warnings.extend(self.letter_forms.warnings())
        self._placed(c.warnings)
        return c


def check_doc_text(table: Table, loc: int, doc_id: str, title: str, text: str) -> IdWarning | None:
    """The warning of a document without text (returned): a title alone (scored on it), or nothing at all."""
    if text.strip():
        return None
    if not title.strip():
        return empty_doc_warning(table, loc, doc_id)
    return title_only_warning(table, loc, doc_id)


def empty_doc_warning(table: Table, loc: int, doc_id: str) -> IdWarning:
    problem = f"document {doc_id!r} has neither text nor a title: it is kept, but no model can retrieve it"
    return _warn("empty_document", str(table.error(loc, problem)), doc_id, at=place(table, loc))


def title_only_warning(table: Table, loc: int, doc_id: str) -> IdWarning:
    problem = f"document {doc_id!r} has a title but empty text: mteb embeds the title alone"
    return _warn("title_only_document", str(table.error(loc, problem)), doc_id, at=place(table, loc))


def doc_key_and_tokens(title: str, text: str) -> tuple[tuple[str, str], int]:
    """The duplicate-text key of a document and its token estimate (``estimate_tokens`` of title + text).

    Title-only documents are told apart by their title, not all lumped together as "same empty text".
    """
    words = text.split()
    key = ("text", " ".join(words)) if words else ("title", " ".join(title.split()))
    n_words = len(words) + (len(title.split()) if title else 0)
    return key, int(max(n_words * 1.3, (len(title) + 1 + len(text)) / 4))  # same as estimate_tokens, split once


def duplicate_doc_warning(doc_id: str, kind: str, first_id: str, at: str = "") -> IdWarning:
    return _warn("duplicate_doc_text", f"document {doc_id!r} has the same {kind} as {first_id!r}", doc_id, at=at)


def long_doc_warning(doc_id: str, n: int, at: str = "") -> IdWarning:
    return _warn("long_document", f"document {doc_id!r} is about {n} tokens (an estimate from its words, a lower "
                 f"bound for most tokenizers), over {LONG_DOC_TOKENS}; many embedding models truncate it", doc_id,
                 at=at)


#: the empty key of ``doc_key_and_tokens``: empty documents are reported as such, not as duplicates of each other
EMPTY_KEY = ("title", "")

#: a corpus in the disk store keeps this many per-document warnings of each kind, then one "and N more" entry
KEPT_PER_KIND = 1000


def more_warnings(kind: str, n: int) -> IdWarning:
    """The entry standing for a large corpus' further ``n`` warnings of ``kind`` (counted, not listed)."""
    w = _warn(kind, f"... and {n} more {kind} warnings (a large corpus lists the first {KEPT_PER_KIND} of each kind)")
    w.count = n
    return w


def estimate_tokens(text: str) -> int:
    """Rough token count without a tokenizer: the larger of words x 1.3 and chars / 4."""
    return int(max(len(text.split()) * 1.3, len(text) / 4))


def collect_warnings(c: Collection, labelled_elsewhere: set[str] | frozenset[str] = frozenset(),
                     doc_warnings: list[CollectionWarning] | None = None) -> list[CollectionWarning]:
    """The non-fatal findings (see WARNING_KINDS); in memory only, counted by ``summarize``.

    ``doc_warnings``: the per-document ones (duplicate text, long) when already computed while streaming
    a large corpus into its store; otherwise they are found here.

    ``labelled_elsewhere``: queries labelled in splits the source chose not to load (``splits:``); they
    are left out on purpose, so they get no ``unlabeled_query`` warning.
    """
    out: list[CollectionWarning] = []
    labelled: set[str] = set()
    for split in sorted(c.qrels):
        for qid, docs in c.qrels[split].items():
            labelled.add(qid)
            if docs and not any(g > 0 for g in docs.values()):
                out.append(_warn("no_positive_label", f"query {qid!r} in split {split!r} has only grade-0 labels: "
                                 "mteb keeps it but it can never score", qid))
    for qid in c.queries:
        if qid not in labelled and qid not in labelled_elsewhere:
            out.append(_warn("unlabeled_query", f"query {qid!r} has no labels in any loaded split: "
                             "mteb drops queries without labels, so it is not evaluated", qid))
        if qid in c.corpus:
            out.append(_warn("query_id_equals_doc_id", f"query id {qid!r} is also a document id: BEIR/mteb "
                             "silently drop such hits when scoring; private-mteb keeps them (set "
                             "`ignore_identical_ids: true` in the task YAML to drop them)", qid))
    if doc_warnings is not None:
        out.extend(doc_warnings)
    else:
        seen_docs: dict[tuple[str, str], str] = {}
        for doc_id, doc in c.corpus.items():
            key, n = doc_key_and_tokens(doc["title"], doc["text"])
            if key == EMPTY_KEY:
                continue
            if key in seen_docs:
                out.append(duplicate_doc_warning(doc_id, key[0], seen_docs[key]))
            else:
                seen_docs[key] = doc_id
            if n > LONG_DOC_TOKENS:
                out.append(long_doc_warning(doc_id, n))
    seen: dict[str, str] = {}
    for qid, text in c.queries.items():
        key = " ".join(text.split())
        if key in seen:
            out.append(_warn("duplicate_query_text", f"query {qid!r} has the same text as {seen[key]!r}", qid))
        else:
            seen[key] = qid
    return out


#: example ids shown per warning kind (3 unless named): an empty document is listed by id, up to the error cap
EXAMPLES_SHOWN = {"empty_document": 20}


def summarize(c: Collection) -> dict[str, Any]:
    """Counts for the CLI: sizes per split and, per warning kind, a count with example ids (``EXAMPLES_SHOWN``)."""
    return {
        "name": c.name,
        "documents": len(c.corpus),
        "queries": len(c.queries),
        "splits": {s: {"queries": len(q), "judgments": sum(len(d) for d in q.values())}
                   for s, q in sorted(c.qrels.items())},
        "warnings": _per_kind(c.warnings),
        "complete_labels": len(c.complete_questions),  # questions whose labels are declared complete
    }


def _per_kind(found: list[CollectionWarning]) -> dict[str, dict[str, Any]]:
    """Per warning kind: count, explanation, example ids and where each is (``at``: 'file:line', '' if unknown)."""
    warnings: dict[str, dict[str, Any]] = {}
    for w in found:
        entry = warnings.setdefault(w.kind, {"count": 0, "examples": [], "at": [],
                                             "explanation": WARNING_KINDS.get(w.kind, w.kind)})
        entry["count"] += w.count
        ids = getattr(w, "ids", ()) or ((w.message,) if w.count == 1 else ())
        for n, i in enumerate(ids):
            if len(entry["examples"]) < EXAMPLES_SHOWN.get(w.kind, 3) and i not in entry["examples"]:
                entry["examples"].append(i)
                entry["at"].append(getattr(w, "at", "") if n == 0 else "")
    return warnings


def warning_lines(found: list[CollectionWarning]) -> list[str]:
    """One line per warning kind: 'warning KIND xN: why (e.g. d3 at corpus.jsonl:3, ...)'."""
    lines = []
    for kind, w in _per_kind(found).items():
        ex = ", ".join(f"{i} at {at}" if at else i for i, at in zip(w["examples"], w["at"]))
        lines.append(f"warning {kind} x{w['count']}: {w['explanation']} (e.g. {ex})")
    return lines


def format_summary(c: Collection) -> str:
    """``summarize`` as a few human-readable lines."""
    s = summarize(c)
    splits = ", ".join(f"{k}: {v['queries']} queries / {v['judgments']} judgments" for k, v in s["splits"].items())
    lines = [f"{s['name']}: {s['documents']} documents, {s['queries']} queries ({splits})"]
    if s["complete_labels"]:
        lines.append(f"  labels declared complete for {s['complete_labels']} of {s['queries']} queries")
    if not s["warnings"]:
        lines.append("  no warnings")
    lines += ["  " + line for line in warning_lines(c.warnings)]
    return "\n".join(lines)
