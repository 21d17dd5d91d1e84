"""Which queries of two stored results may be compared score for score, and what changed between them.

Pure functions on plain dicts (no file reading, no pandas): `check`, `stats` and the run history use them.

Each side is ``{query id: (fingerprint, score)}`` plus its data revision. The fingerprint is the hash of
the query's text and labels stored with the per-query scores (per_query.load_fingerprinted); None when
the result was stored before private-mteb kept them.

A query is **paired** when both sides have its id and the same fingerprint. On the same data revision
an unknown fingerprint is still paired by id (same revision = same data); across revisions it cannot be
verified and is left out (``unverified``). ``added`` / ``removed`` are ids only the candidate / only the
baseline has; ``changed`` are ids on both sides whose text or labels differ.

    >>> p = pair_queries({"a": ("h1", .5), "b": ("h2", .4)}, {"a": ("h1", .6), "c": ("h3", .1)}, "r1", "r2")
    >>> p.paired, p.added, p.removed, p.same_data
    (('a',), ('c',), ('b',), False)
    >>> p.describe()
    'data revision r1 -> r2: 1 query added, 1 removed, 0 changed (text or labels); 1 unchanged paired'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: one stored result: query id -> (fingerprint of its text and labels, or None; score)
Fingerprinted = Mapping[str, tuple[str | None, Any]]

__all__ = ["CorpusChange", "Fingerprinted", "Pairing", "corpus_change", "pair_queries"]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word.replace('query', 'queries')}"


@dataclass(frozen=True)
class Pairing:
    """What `pair_queries` found. Ids are sorted."""

    paired: tuple[str, ...]  # same id, same fingerprint (or unknown fingerprint on the same revision)
    added: tuple[str, ...]  # only in the candidate
    removed: tuple[str, ...]  # only in the baseline
    changed: tuple[str, ...]  # in both, text or labels differ
    unverified: tuple[str, ...]  # in both, a fingerprint unknown and the revisions differ: not paired
    unknown: int  # paired by id alone (a fingerprint unknown on the same revision)
    base_revision: str | None = None
    cand_revision: str | None = None

    @property
    def revision_changed(self) -> bool:
        return (self.base_revision is not None and self.cand_revision is not None
                and self.base_revision != self.cand_revision)

    @property
    def same_queries(self) -> bool:
        """Every query on both sides, with the same text and labels: each score pairs with its own question,
        whatever happened to the documents (a corpus change is the decay a gate must see, not a reason to stop)."""
        return not (self.added or self.removed or self.changed or self.unverified)

    @property
    def corpus_only(self) -> bool:
        """The data revision changed but no query or label did: the documents changed (or texts of them)."""
        return self.revision_changed and self.same_queries

    @property
    def same_data(self) -> bool:
        """Same revision and the same queries: every score pairs with its own question."""
        return not (self.revision_changed or self.added or self.removed or self.changed or self.unverified)

    def describe(self) -> str:
        """One line: the revisions and counts (``same data revision r1: all 300 queries paired``)."""
        if self.revision_changed:
            head = f"data revision {self.base_revision} -> {self.cand_revision}"
        else:
            head = f"same data revision {self.base_revision}" if self.base_revision else "data revision unknown"
        if self.same_data:
            text = f"{head}: all {_plural(len(self.paired), 'query')} paired"
        elif self.corpus_only:
            text = f"{head}: the same {_plural(len(self.paired), 'query')} and labels, all paired"
        else:
            text = (f"{head}: {_plural(len(self.added), 'query')} added, {len(self.removed)} removed, "
                    f"{len(self.changed)} changed (text or labels); {len(self.paired)} unchanged paired")
        if self.unverified:
            text += (f"; {len(self.unverified)} left out: no stored query hash to compare (results stored "
                     "before private-mteb kept them; re-run to store them)")
        if self.unknown:
            text += f"; {self.unknown} paired by id only (no stored query hash; same data revision)"
        return text

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready counts (not the id lists)."""
        return {"base_revision": self.base_revision, "cand_revision": self.cand_revision,
                "same_data": self.same_data, "same_queries": self.same_queries, "paired": len(self.paired), "added": len(self.added),
                "removed": len(self.removed), "changed": len(self.changed), "unverified": len(self.unverified),
                "paired_by_id_only": self.unknown, "description": self.describe()}


def pair_queries(base: Fingerprinted, cand: Fingerprinted, base_revision: str | None = None,
                 cand_revision: str | None = None) -> Pairing:
    """Pair the queries of a baseline and a candidate result (see the module docstring)."""
    same_rev = base_revision is not None and base_revision == cand_revision
    paired, changed, unverified = [], [], []
    unknown = 0
    for q in sorted(set(base) & set(cand)):
        hb, hc = base[q][0], cand[q][0]
        if hb is None or hc is None:
            if same_rev:
                paired.append(q)
                unknown += 1
            else:
                unverified.append(q)
        elif hb == hc:
            paired.append(q)
        else:
            changed.append(q)
    return Pairing(tuple(paired), tuple(sorted(set(cand) - set(base))), tuple(sorted(set(base) - set(cand))),
                   tuple(changed), tuple(unverified), unknown, base_revision, cand_revision)


def _docs(n: int) -> str:
    return "document" if abs(n) == 1 else "documents"


def _count(n: int | None) -> str:
    return "?" if n is None else f"{n:,}"


@dataclass(frozen=True)
class CorpusChange:
    """How the documents differ between two stored results: counts, and the ids added / removed when both
    sides stored their document ids (results from before that, and history records, have counts only)."""

    base_documents: int | None
    cand_documents: int | None
    added: int | None = None
    removed: int | None = None

    def describe(self) -> str:
        """``corpus: +3 documents, −0 (1,398 → 1,401)``; with counts only ``corpus: +3 documents net (...)``."""
        sizes = f"({_count(self.base_documents)} → {_count(self.cand_documents)})"
        if self.added is not None and self.removed is not None:
            return f"corpus: +{self.added:,} {_docs(self.added)}, −{self.removed:,} {sizes}"
        if self.base_documents is not None and self.cand_documents is not None:
            delta = self.cand_documents - self.base_documents
            return f"corpus: {delta:+,} {_docs(delta)} net {sizes}"
        return "corpus: changed (document counts not stored with these results: re-run to store them)"

    @property
    def ids_changed(self) -> bool | None:
        """Documents added or removed (None: not known, the ids or counts were not stored)."""
        if self.added is not None and self.removed is not None:
            return bool(self.added or self.removed)
        if self.base_documents is not None and self.cand_documents is not None:
            return self.base_documents != self.cand_documents or None  # equal counts may still hide swaps
        return None

    def to_dict(self) -> dict[str, Any]:
        return {"base_documents": self.base_documents, "cand_documents": self.cand_documents,
                "added": self.added, "removed": self.removed, "description": self.describe()}


def corpus_change(base_documents: int | None, cand_documents: int | None, base_ids: list[str] | None = None,
                  cand_ids: list[str] | None = None) -> CorpusChange:
    """The CorpusChange of two sides; ids (when both are known) give the added / removed counts.

    >>> corpus_change(3, 4, ["a", "b", "c"], ["a", "b", "c", "d"]).describe()
    'corpus: +1 document, −0 (3 → 4)'
    >>> corpus_change(1398, 1401).describe()
    'corpus: +3 documents net (1,398 → 1,401)'
    """
    if base_ids is None or cand_ids is None:
        return CorpusChange(base_documents, cand_documents)
    b, c = set(base_ids), set(cand_ids)
    return CorpusChange(len(b), len(c), len(c - b), len(b - c))
