"""What `stats`, `check`, `run` and the report say about where a task's questions come from (issue 38).

A figure is only as good as the questions under it, so each command says, in a few lines: how many questions of
each source (human / log / generated) are scored; how many added ones are left out (generated and unverified,
rejected in review) and how many await judgment (not scored as 0: they have no graded document yet); the verdict
on each source when there are several, with a plain warning when the generated questions crown another candidate
than the real ones (generator_guard.source_verdict_lines); and, when the added questions carry traffic weights
(`tags.weight`, written by `questions sample`), the traffic-weighted mean next to the plain mean:

    traffic-weighted mean = sum_q w_q * s_q / sum_q w_q      over the scored questions q that carry a weight,

where w_q is the share of the log's traffic its stratum has, split among the questions drawn from that stratum
in proportion to their own searches (labels/questions/log_strata.weights; sum_q w_q over a stratum is its traffic
share) and s_q the question's score. Its plain mean is over the same
questions, so the two differ only by the weighting: a gap says the set over- or under-represents busy strata.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from custom_tasks.collection import Collection
from custom_tasks.readers.added_questions import source_kind

from ...statistics.analysis_errors import AnalysisError
from ...statistics.per_query import paired_query_scores
from ...config.benchmark import BenchmarkConfig
from ...config.task_lookup import task_config_for
from ..pool.judged import task_collection

WEIGHT_TAG = "weight"
KIND_ORDER = ("human", "log", "generated")


def scored_by_source(c: Collection, splits: Sequence[str] | None = None) -> Counter[str]:
    """Source kind -> how many questions have a graded document in the splits (all splits by default)."""
    scored: set[str] = set()
    for split, qrels in c.qrels.items():
        if splits is None or split in splits:
            scored |= {q for q, docs in qrels.items() if docs}
    return Counter(source_kind(c.query_tags.get(q, {}).get("source")) for q in scored)


def _kinds(counts: Mapping[str, int]) -> str:
    order = [k for k in KIND_ORDER if k in counts] + sorted(k for k in counts if k not in KIND_ORDER)
    return ", ".join(f"{k} {counts[k]}" for k in order)


def count_lines(c: Collection, splits: Sequence[str] | None = None) -> list[str]:
    """The scored questions per source, the added ones left out, and the ones awaiting judgment."""
    scored = scored_by_source(c, splits)
    added = c.added
    if added is None and len(scored) < 2:
        return []
    lines = [f"{c.name}: scored questions by source: {_kinds(scored) or 'none'}"]
    if added is not None:
        left = []
        if sum(added.unverified.values()):
            left.append(f"{sum(added.unverified.values())} generated unverified (verify them in `labels serve`, or "
                        "score them with `questions: {use_unverified: true}`)")
        if sum(added.rejected.values()):
            left.append(f"{sum(added.rejected.values())} rejected in review ({_kinds(added.rejected)})")
        if left:
            lines.append(f"{c.name}: left out: " + "; ".join(left))
        if c.awaiting_judgment():
            lines.append(awaiting_line(c))
    return lines


def awaiting_line(c: Collection) -> str:
    """'N questions await judgment' for a collection with added questions awaiting it ('' when none)."""
    awaiting = c.awaiting_judgment()
    n = len(awaiting)
    if not n:
        return ""
    kinds = Counter(source_kind(c.query_tags.get(q, {}).get("source")) for q in awaiting)
    return (f"{c.name}: {n} question{'s' if n != 1 else ''} await{'' if n != 1 else 's'} judgment ({_kinds(kinds)}; "
            "not scored): grade them with `labels pool` / `labels serve`")


def weight_of(tags: Mapping[str, Any]) -> float | None:
    """A question's traffic weight (``tags.weight``), None when absent or not a finite number > 0."""
    try:
        w = float(tags[WEIGHT_TAG])
    except (KeyError, TypeError, ValueError):
        return None
    return w if math.isfinite(w) and w > 0 else None


def weighted_means(per_query: Mapping[str, Mapping[str, float]], query_tags: Mapping[str, Mapping[str, Any]]
                   ) -> list[dict[str, Any]]:
    """Per candidate: the traffic-weighted mean and the plain mean over the scored questions with a weight (see
    the module docstring); [] when no scored question carries one."""
    out = []
    for label, scores in per_query.items():
        pairs = [(w, s) for q, s in scores.items() if math.isfinite(s)
                 and (w := weight_of(query_tags.get(q, {}))) is not None]
        if not pairs:
            continue
        total = sum(w for w, _ in pairs)
        out.append({"candidate": label, "n": len(pairs), "weighted": sum(w * s for w, s in pairs) / total,
                    "plain": sum(s for _, s in pairs) / len(pairs)})
    return out


def weighted_line(task: str, metric: str, rows: list[dict[str, Any]]) -> str:
    """One line: each candidate's traffic-weighted mean with its plain mean beside it ('' without weights)."""
    if not rows:
        return ""
    from ...statistics.intervals import format_score, metric_label

    cells = ", ".join(f"{r['candidate']} {format_score(r['weighted'])} (plain {format_score(r['plain'])})"
                      for r in rows)
    return (f"{task}: traffic-weighted {metric_label(metric)} over the {rows[0]['n']} questions with a traffic "
            f"weight: {cells}")


def question_lines(bench: BenchmarkConfig, entry: str, task_name: str, names: Sequence[str],
                   metric: str = "ndcg_at_10", split: str = "test") -> list[str]:
    """`stats`' question lines for one task entry: counts by source, left out, awaiting, traffic-weighted mean;
    [] for a public task or one whose files or results the command itself reports on."""
    try:
        cfg = task_config_for(entry, bench)
        c = task_collection(entry, bench)  # with the LLM grades its `labels:` policy scores on
    except Exception:  # a public task, or files `stats` complains about itself
        return []
    lines = count_lines(c, [split])
    try:
        per_query, _ = paired_query_scores(bench.results_path, task_name, metric, split, list(names))
    except AnalysisError:
        return lines
    line = weighted_line(task_name, metric, weighted_means(per_query, c.query_tags))
    return lines + ([line] if line else [])


def questions_json(bench: BenchmarkConfig, entries: Sequence[tuple[str, str]], names: Sequence[str],
                   split: str = "test") -> dict[str, Any]:
    """`stats --format json`'s `questions`: per task with added questions or several sources, the scored questions
    by source, those left out and awaiting judgment, and the traffic-weighted means (main metric)."""
    out: dict[str, Any] = {}
    for entry, task_name in entries:
        try:
            cfg = task_config_for(entry, bench)
            c = task_collection(entry, bench)
        except Exception:  # a public task, or files `stats` reports on itself
            continue
        if not count_lines(c, [split]):
            continue
        added = c.added
        doc: dict[str, Any] = {"scored_by_source": dict(scored_by_source(c, [split])),
                               "awaiting_judgment": len(c.awaiting_judgment()),
                               "left_out": {"unverified": dict(added.unverified) if added else {},
                                            "rejected": dict(added.rejected) if added else {}}}
        try:
            per_query, _ = paired_query_scores(bench.results_path, task_name, cfg.main_score, split, list(names))
            doc["traffic_weighted"] = {"metric": cfg.main_score, "candidates": weighted_means(per_query, c.query_tags)}
        except AnalysisError:
            pass
        out[task_name] = doc
    return out
