"""A query log reduced to its distinct questions with their traffic: redacted, normalised, filtered, merged.

Order matters and is the privacy guarantee: every raw query is redacted (redact.py) before it is normalised,
counted, kept or shown, so nothing later (the sample, the report, the examples printed) can hold a personal
value. A query that redaction leaves too short is dropped and counted, not written as "reset [EMAIL]".

Exact duplicates are merged on the lint's normalised text (runners/labels/lint/lint_text.py: markup, NFKC, case folding,
word tokens), their counts summed; near-duplicates on the lint's character-shingle Jaccard with MinHash LSH as the
blocking step (`near_pairs_bulk`: the lint's `near_pairs` in bounded memory, same pairs, so a threshold means
what it means in `tasks lint`). Only a dict of
normalised text -> count is held, so memory follows the distinct queries, not the log's rows.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..lint.lint_text import char_shingles, near_pairs_bulk, words

#: the Redactor's replacement tokens ([EMAIL], [PHONE], ...): kept apart from words a user typed
PLACEHOLDER = re.compile(r"\[([A-Z_]+)\]")
#: queries that go to a place rather than ask a question (a bare URL or host name); language-neutral shapes only
NAVIGATIONAL = (r"(https?://|www\.)\S*", r"[\w-]+(\.[\w-]+)*\.[a-z]{2,6}(/\S*)?")
#: spellings of one question kept per normalised text (the most frequent is written): bounded memory per query
MAX_VARIANTS = 4


@dataclass(frozen=True)
class Rules:
    """What is dropped and merged; printed by `questions sample` and changeable there (--min-chars ...)."""

    min_chars: int = 3  # letters/digits left once the redaction tokens are taken out
    navigational: tuple[str, ...] = NAVIGATIONAL  # regular expressions matched against the whole query
    near_threshold: float = 0.8  # character-shingle Jaccard (the lint's default for near-duplicate questions)
    shingle: int = 4  # characters per shingle (the lint's default)
    seed: int = 1  # MinHash permutations

    def lines(self) -> list[str]:
        nav = ", ".join(self.navigational) or "none"
        return [f"drop rules: empty; under {self.min_chars} letters/digits (redaction tokens not counted); "
                f"navigational (whole query matches one of: {nav})",
                f"merge rules: same normalised text (NFKC, case folding, words: the lint's); near-duplicates at "
                f"{self.shingle}-character-shingle Jaccard >= {self.near_threshold:.2f} (MinHash LSH, then exact)"]


@dataclass
class Aggregate:
    """Distinct questions (normalised text -> [searches, {spelling: searches}]) and what was counted on the way."""

    entries: dict[str, list[Any]] = field(default_factory=dict)
    rows: int = 0
    searches: int = 0
    redacted: Counter = field(default_factory=Counter)  # kind -> searches whose query held one
    dropped: Counter = field(default_factory=Counter)  # reason -> searches
    dropped_distinct: Counter = field(default_factory=Counter)  # reason -> distinct raw queries
    near_groups: int = 0
    near_merged: int = 0  # distinct questions folded into another
    near_examples: list[list[str]] = field(default_factory=list)

    def count(self, key: str) -> int:
        return int(self.entries[key][0])

    def text(self, key: str) -> str:
        """The spelling written and shown: the most frequent one (ties: the smallest)."""
        variants: dict[str, int] = self.entries[key][1]
        return min(variants, key=lambda v: (-variants[v], v))


def _key(text: str) -> str:
    """The normalised text two duplicates share; a redaction token stays a token of its own (_email_)."""
    return " ".join(words(PLACEHOLDER.sub(lambda m: f" _{m.group(1).lower()}_ ", text)))


class Filters:
    """The drop rules of ``Rules`` compiled once: None (kept) or the reason a query is dropped."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.nav = [re.compile(p, re.IGNORECASE) for p in rules.navigational]

    def reason(self, text: str, was_redacted: bool) -> str | None:
        if not text:
            return "empty"
        letters = sum(ch.isalnum() for ch in PLACEHOLDER.sub(" ", text))
        if letters < self.rules.min_chars:
            return "too short after redaction" if was_redacted else "too short"
        if any(p.fullmatch(text) for p in self.nav):
            return "navigational"
        return None


def aggregate(chunks: Iterable[tuple[list[str], list[int]]], redactor: Any, rules: Rules) -> Aggregate:
    """Redact, filter and count every (query, count) of the log's chunks; each distinct raw query of a chunk is
    redacted once (head queries repeat thousands of times)."""
    out = Aggregate()
    filters = Filters(rules)
    for queries, counts in chunks:
        out.rows += len(queries)
        per: dict[str, int] = {}
        for q, c in zip(queries, counts):
            per[q] = per.get(q, 0) + c
        for raw, n in per.items():
            out.searches += n
            if n == 0:
                continue
            found = redactor.redact(raw)
            for kind, k in found.counts.items():
                if k:
                    out.redacted[kind] += n
            text = " ".join(found.text.split())
            why = filters.reason(text, any(found.counts.values()))
            key = _key(text) if why is None else ""
            if why is None and not key:
                why = "too short"
            if why is not None:
                out.dropped[why] += n
                out.dropped_distinct[why] += 1
                continue
            entry = out.entries.get(key)
            if entry is None:
                out.entries[key] = [n, {text: n}]
                continue
            entry[0] += n
            variants = entry[1]
            if text in variants or len(variants) < MAX_VARIANTS:
                variants[text] = variants.get(text, 0) + n
    return out


def merge_near_duplicates(agg: Aggregate, rules: Rules, examples: int = 3) -> None:
    """Fold near-duplicates into the most searched query they are near (counts summed, the kept one's spellings
    written); ``agg.near_examples`` keeps the largest groups' spellings (already redacted) for the report.

    Not the connected groups the lint reports (``groups``): in a log, "install vpn" ~ "can i install vpn" ~ "can i
    install vpn again" chain into queries the threshold never called alike. Here the most searched query not yet
    folded keeps the queries that are near *it* (pairs at the threshold, exactly), then the next, so every folded
    query is within the threshold of the one it is counted under.
    """
    k = rules.shingle
    pairs = near_pairs_bulk(agg.entries, lambda key: char_shingles(key.split(), k), rules.near_threshold,
                            seed=rules.seed)
    near: dict[str, list[str]] = {}
    for a, b, _ in pairs:
        near.setdefault(a, []).append(b)
        near.setdefault(b, []).append(a)
    folded: set[str] = set()
    merged: list[tuple[int, list[str]]] = []
    for keep in sorted(near, key=lambda m: (-agg.count(m), m)):
        if keep in folded:
            continue
        members = sorted(m for m in near[keep] if m not in folded and m in agg.entries and m != keep)
        if not members:
            continue
        members.sort(key=lambda m: (-agg.count(m), m))
        shown = [agg.text(keep)] + [agg.text(m) for m in members[:2]]
        folded.add(keep)
        for m in members:
            folded.add(m)
            agg.entries[keep][0] += agg.entries.pop(m)[0]
            agg.near_merged += 1
        agg.near_groups += 1
        merged.append((agg.count(keep), shown))
    merged.sort(key=lambda x: (-x[0], x[1]))
    agg.near_examples = [shown for _, shown in merged[:examples]]


def drop_known(agg: Aggregate, known_texts: Iterable[str]) -> int:
    """Remove questions the task already has (same normalised text); returns how many searches they carried."""
    gone = 0
    for text in known_texts:
        entry = agg.entries.pop(_key(text), None)
        if entry is not None:
            gone += entry[0]
            agg.dropped_distinct["already a question of the task"] += 1
    if gone:
        agg.dropped["already a question of the task"] += gone
    return gone
