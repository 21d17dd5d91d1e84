"""The filters every generated question passes before it is stored: the rules of `tasks lint`, applied at birth.

* copied wording: the question copies its source passage verbatim, by the lint's leakage rule
  (runners/labels/lint/lint.py `copied_run`: the whole question of >= 5 words, or a run of 8 of its words, after the one
  normalisation). Copied wording favours lexical search: the demo's LLM-written questions had BM25 beat MiniLM,
  its human ones the reverse.
* near-duplicates: the question is (nearly) the text of a question the task already has, or of one generated
  before it in this batch, by the lint's near-duplicate-question rule (4-character shingles, exact Jaccard >= 0.8,
  MinHash LSH only proposing pairs: runners/labels/lint/lint_text.py `near_pairs`). Duplicates inflate n.
Each dropped question is counted by reason; the reasons are the lint's, so `tasks lint` never finds in the stored
questions what this let through.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..lint.lint import LintSettings, copied_run
from ..lint.lint_text import char_shingles, near_pairs, words

COPIED = "copied wording"
DUP_EXISTING = "near-duplicate of an existing question"
DUP_GENERATED = "near-duplicate of another generated question"
NO_ANSWER = "no answer in the format"
REASONS = (NO_ANSWER, COPIED, DUP_EXISTING, DUP_GENERATED)


@dataclass
class Candidate:
    """One answered passage: the generated question and the text of the passage it was written from."""

    key: str
    question: str
    passage: str


@dataclass
class Verdict:
    """Which candidates are kept (in their order) and why each other one was dropped."""

    kept: list[str] = field(default_factory=list)
    dropped: dict[str, str] = field(default_factory=dict)  # key -> reason
    #: key -> (what it duplicates: an existing question id or another candidate's key, exact Jaccard)
    duplicates: dict[str, tuple[str, float]] = field(default_factory=dict)
    copied: dict[str, int] = field(default_factory=dict)  # key -> copied words

    def counts(self) -> Counter[str]:
        return Counter(self.dropped.values())


def filter_questions(candidates: Sequence[Candidate], existing: Mapping[str, str],
                     settings: LintSettings | None = None) -> Verdict:
    """Keep the candidates that copy no wording of their passage and duplicate no existing question (``existing``:
    id -> text) and no earlier kept candidate; a candidate that duplicates a dropped one is still kept (the first
    clean one of a group survives)."""
    settings = settings or LintSettings()
    out = Verdict()
    clean: list[Candidate] = []
    for c in candidates:
        run = copied_run(words(c.question), words(c.passage), settings)
        if run:
            out.dropped[c.key] = COPIED
            out.copied[c.key] = run
        else:
            clean.append(c)
    new = {f"\x00{c.key}": c for c in clean}  # a prefix no question id of a task has: the two id spaces never meet
    shingles = {i: char_shingles(words(t), settings.query_shingle) for i, t in existing.items()}
    shingles.update({k: char_shingles(words(c.question), settings.query_shingle) for k, c in new.items()})
    partners: dict[str, list[tuple[str, float]]] = {}
    for a, b, score in near_pairs(shingles, settings.query_threshold):
        partners.setdefault(a, []).append((b, score))
        partners.setdefault(b, []).append((a, score))
    kept: set[str] = set()
    for k, c in new.items():
        hits = partners.get(k, [])
        old = max(((o, s) for o, s in hits if o not in new), key=lambda x: (x[1], x[0]), default=None)
        twin = max(((o, s) for o, s in hits if o in kept), key=lambda x: (x[1], x[0]), default=None)
        if old is not None:
            out.dropped[c.key], out.duplicates[c.key] = DUP_EXISTING, old
        elif twin is not None:
            out.dropped[c.key], out.duplicates[c.key] = DUP_GENERATED, (new[twin[0]].key, twin[1])
        else:
            kept.add(k)
            out.kept.append(c.key)
    return out
