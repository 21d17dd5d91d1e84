"""The mark `stats` and `check` print under a verdict the unjudged pairs could reverse (issue 39).

A score counts an unjudged document in a candidate's top-k as not relevant. So every verdict between two
candidates rests in part on pairs nobody graded. This module says, for a pair of candidates on one task, how many
unjudged (question, document) pairs sit in each one's top-k and whether their grades could reverse the sign of the
nDCG@k difference: the exact adversarial bounds of runners/labels/pool/verdict_bounds.py (the ones `labels status`
prints), so "settled" is printed only when no grading of the unjudged pairs reverses or ties the verdict.

What is assumed is said once, above the marks (`ASSUMED`): a score counts an unjudged document as not relevant,
and the bounds are the worst case over their grades, so a verdict they could reverse is not called "open" in every
line. Questions whose labels are declared complete (a `complete_labels` column of the questions, or the task's
`complete_labels: true` for all of them: Collection.complete_questions) have no unjudged pair that could matter:
their unlabelled documents are known 0s. When every question declares it there is no mark at all, one line saying
so (`COMPLETE`); when some do, one line says how many (`complete_line`, both in judged.py) and the marks count
the others' pairs.

One verdict: the line names the candidate ahead first, so `stats` (candidates in the config's order) and `check`
(baseline, then candidate) print the same line for the same pair.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set

from ...statistics.analysis_errors import AnalysisError
from ..pool.judged import COMPLETE, complete_line, known_zeros, ranked_ids  # noqa: F401 — said with the marks
from ..pool.verdict_bounds import PairBound, pair_bounds

Ranking = Mapping[str, Mapping[str, float]]

#: said once per task above its marks (stats, check): what the scores assume of the pairs nobody judged
ASSUMED = ("assumed: scores count a document nobody judged as not relevant (the task does not declare "
           "`complete_labels: true`); each `unjudged:` line gives the worst case over their grades")
#: the same, when some questions declare complete labels: what is assumed holds of the others only
ASSUMED_OTHERS = ("assumed: on the questions that do not declare `complete_labels`, scores count a document nobody "
                  "judged as not relevant; each `unjudged:` line gives the worst case over their grades")


def assumed_line(declared: str) -> str:
    """What the marks assume: ``ASSUMED``, or ``ASSUMED_OTHERS`` when ``declared`` (complete_line's text) says some
    questions declare complete labels."""
    return ASSUMED_OTHERS if declared else ASSUMED

def unjudged_in_top(ranking: Ranking, qrels: Mapping[str, Mapping[str, int]], k: int = 10) -> int:
    """(question, document) pairs in the ranking's top-k that carry no label, over the labelled questions."""
    return sum(1 for q in qrels for d in ranked_ids(ranking.get(q, {}))[:k] if d not in qrels[q])


def _signed(x: float) -> str:
    """+0.1234; a -0.0000 (a tiny negative) is +0.0000, so both orders of a pair print the same characters."""
    text = f"{x:+.4f}"
    return "+0.0000" if text == "-0.0000" else text


def mark_line(label_a: str, label_b: str, pb: PairBound, n_a: int, n_b: int, k: int = 10) -> str:
    """One line for the pair, the same whichever candidate comes first (module docstring)."""
    if pb.now < 0 or (pb.now == 0 and label_b < label_a):  # the one ahead (or, tied, the first by name) first
        label_a, label_b, n_a, n_b = label_b, label_a, n_b, n_a
        now, low, high = -pb.now, -pb.high, -pb.low
    else:
        now, low, high = pb.now, pb.low, pb.high
    lead = (f"{label_a} leads {label_b} on nDCG@{k} by {_signed(now)}" if now else
            f"{label_a} and {label_b} tie on nDCG@{k}")
    where = f"with {n_a:,} and {n_b:,} unjudged pairs in their top-{k}"
    span = f"{_signed(low)} to {_signed(high)}"
    if pb.verdict in ("A", "B"):
        return f"unjudged: {lead} {where}: settled, whatever their grades (the difference stays in {span})"
    if pb.verdict == "tie":
        return f"unjudged: {lead} {where}: settled, every grading of them leaves the tie"
    change = "reverse it" if now else "break the tie"
    return (f"unjudged: {lead} {where}: in the worst case their grades could {change} (the difference could be "
            f"anywhere in {span}; `labels status` says how many judgments would settle it)")


def mark_lines(rankings: Mapping[str, Ranking], labels: Mapping[str, str], qrels: Mapping[str, Mapping[str, int]],
               scale: Sequence[int], k: int = 10, pairs: Sequence[tuple[str, str]] | None = None,
               known: Set[str] = frozenset()) -> list[str]:
    """The mark of every pair of `rankings`' candidates (results name -> query -> {doc: score}), or of `pairs`;
    `labels`: results name -> the label commands print; `known`: questions whose labels are declared complete
    (their unlabelled documents are known 0s: no unjudged pair). [] when a question's pool is too large to bound."""
    qrels = known_zeros(qrels, rankings.values(), known, k)
    names = list(rankings)
    chosen = list(pairs) if pairs is not None else [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    counts = {n: unjudged_in_top(rankings[n], qrels, k) for n in names}
    out = []
    for a, b in chosen:
        if labels[b] < labels[a]:  # bounded in one order whatever the caller's, so both print the same digits
            a, b = b, a
        try:
            (pb,) = pair_bounds({a: rankings[a], b: rankings[b]}, qrels, scale, k)
        except AnalysisError:  # thousands of unjudged documents in one question: no exact bound in reasonable time
            return []
        out.append(mark_line(labels[a], labels[b], pb, counts[a], counts[b], k))
    return out


def task_scale(task: str, qrels: Mapping[str, Mapping[str, int]], bench: object | None = None) -> list[int]:
    """The task's grade scale (its YAML's `grades:`), else the grades its labels use, with 0."""
    try:
        from ...config.task_lookup import task_config_for

        return sorted(task_config_for(task, bench).grades)  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 — a public task: the grades its labels hold
        return sorted({0} | {g for docs in qrels.values() for g in docs.values()})


def config_marks(bench: object, entry: str, models: Sequence[str], k: int = 10, split: str = "test") -> list[str]:
    """`stats`' marks: every pair of `models` (results names) on one task entry of a config, from the stored
    rankings and the labels `run` scored; [] when rankings are not stored (older runs), the task has no labels or
    every question's labels are declared complete."""
    from ...statistics.per_query import label_of
    from ..pool.judged import stored_rankings, task_collection

    collection = task_collection(entry, bench)  # type: ignore[arg-type]
    qrels = collection.qrels.get(split)
    known = collection.complete_in(split)
    if not qrels or len(models) < 2 or len(known) >= len(qrels):
        return []
    results = bench.results_path  # type: ignore[attr-defined]
    try:
        rankings = {m: stored_rankings(results, m, collection.name, split)[0] for m in models}
    except AnalysisError:
        return []
    return mark_lines(rankings, {m: label_of(results, m) for m in models}, qrels, task_scale(entry, qrels, bench), k,
                      known=known)


def complete_questions(entry: str, bench: object | None = None, split: str = "test") -> set[str]:
    """The split's questions of a task entry whose labels are declared complete (Collection.complete_in: the task's
    `complete_labels: true` or each question's column); empty for a public task."""
    try:
        from ..pool.judged import task_collection

        return task_collection(entry, bench).complete_in(split)  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 — a public task: nothing declared
        return set()


def config_labels(bench: object, split: str = "test") -> tuple[dict[str, dict[str, dict[str, int]]] | None,
                                                               dict[str, list[int]] | None,
                                                               dict[str, set[str]] | None]:
    """(task name -> labels, task name -> grade scale, task name -> its questions whose labels are declared
    complete) of a config's tasks, as `stats` reads them, for `check`; (None, None, None) when a task cannot be read
    (a public one: the gate then looks tasks up by name)."""
    from ..pool.judged import task_collection

    qrels, scales, complete = {}, {}, {}
    try:
        for entry in bench.tasks:  # type: ignore[attr-defined]
            collection = task_collection(entry, bench)  # type: ignore[arg-type]
            if split in collection.qrels:
                qrels[collection.name] = collection.qrels[split]
                scales[collection.name] = task_scale(entry, collection.qrels[split], bench)
            complete[collection.name] = collection.complete_in(split)
    except Exception:  # noqa: BLE001 — a public task or files the gate itself will name: judged@10 as before
        return None, None, None
    return qrels, scales, complete
