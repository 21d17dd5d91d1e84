"""Per-query tables -> intervals for every model, paired tests for every pair, a power sentence.

The models compared are the ones asked for (a config's candidates, or `--models`), never
"whatever is in the folder": Holm's correction and the power sentence depend on that set.
Computed as plain rows (intervals.py), without pandas, so `stats` starts fast; `intervals` / `pairs`
give the same rows as pandas frames (csv / markdown output, Python users).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .analysis_errors import AnalysisError
from . import intervals as stats
from .per_query import paired_query_scores, query_tags, tag_names
from .power import power_line

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class StatsReport:
    task: str
    metric: str
    interval_rows: list[dict[str, Any]]  # subset, candidate, n_queries, mean, ci_low, ci_high, std
    pair_rows: list[dict[str, Any]]  # subset + stats.PAIR_COLUMNS; [] with one model
    power: str
    n_queries: int
    #: '' when every model was scored on the same data; else which data differ and on how many queries
    #: the models were compared (per_query.paired_query_scores)
    data_note: str = ""
    #: tag subsets with scored queries but too few for an interval: (name, queries), e.g. ("source=llm:x", 1)
    skipped_subsets: list[tuple[str, int]] = field(default_factory=list)

    @property
    def intervals(self) -> pd.DataFrame:
        """The interval rows as a frame (what `stats_frames.breakdown(..., ci_table)` returns)."""
        import pandas as pd  # lazy: table and json output never need it

        return pd.DataFrame(self.interval_rows)

    @property
    def pairs(self) -> pd.DataFrame:
        """The pair rows as a frame (empty with one model)."""
        import pandas as pd  # lazy: table and json output never need it

        return pd.DataFrame(self.pair_rows)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (NaN -> None): one entry of `stats --format json`."""
        return {"task": self.task, "metric": self.metric, "n_queries": self.n_queries,
                "intervals": _records(self.interval_rows), "pairs": _records(self.pair_rows), "power": self.power,
                "data_note": self.data_note or None}


def _records(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    def plain(v: Any) -> Any:
        return None if isinstance(v, float) and not math.isfinite(v) else v

    return [{k: plain(v) for k, v in row.items()} for row in rows]


def select_tags(task: str, tags: list[str] | None, strict: bool = True,
                name: str | None = None) -> tuple[list[str], dict[str, dict[str, str]]] | None:
    """The task's tag names to break down by and its query tags; an unknown tag is an error naming the
    known ones (`strict`, for `--by`) or is left out (a config's default tags need not fit every task)."""
    if not tags:
        return None
    found = query_tags(task)
    known = tag_names(found)
    unknown = [t for t in tags if t not in known]
    if unknown and strict:
        raise AnalysisError(f"--by: task '{name or task}' has no query tag {', '.join(map(repr, unknown))} "
                            f"(known tags: {', '.join(known) or 'none'})")
    kept = [t for t in tags if t in known]
    return (kept, found) if found is not None and kept else None


def stats_report(results_dir: Path, task_name: str, metric: str = "ndcg_at_10", split: str = "test",
                 n_resamples: int = 10_000, seed: int = 0, confidence: float = 0.95, method: str = "percentile",
                 tags: list[str] | None = None, models: list[str] | None = None,
                 strict_tags: bool = True, task_source: str | None = None) -> StatsReport:
    """Intervals for every model and paired tests for every pair, optionally broken down by tags
    (read from `task_source`, the task's name or YAML path, default `task_name`)."""
    selected = select_tags(task_source or task_name, tags, strict_tags, task_name)
    per_query, data_note = paired_query_scores(results_dir, task_name, metric, split, models)
    return report_from_scores(task_name, metric, per_query, n_resamples, seed, confidence, method, selected,
                              data_note)


def report_from_scores(task_name: str, metric: str, per_query: dict[str, dict[str, float]],
                       n_resamples: int = 10_000, seed: int = 0, confidence: float = 0.95,
                       method: str = "percentile",
                       selected: tuple[list[str], dict[str, dict[str, str]]] | None = None,
                       data_note: str = "") -> StatsReport:
    """The StatsReport of per-query scores (label -> {query id: score}, in the set's order), wherever they were
    read from: stored results (`stats_report`) or history records (analysis/gate/best.py), so both give one verdict."""
    label = stats.metric_label(metric)
    intervals: list[dict[str, Any]] = []
    pairs: list[dict[str, Any]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        aligned = stats.align_scores(per_query)
        skipped: list[tuple[str, int]] = []
        subsets = [("all", per_query)] + (stats.tag_subsets(per_query, selected[1], selected[0], skipped=skipped)
                                          if selected else [])
        for subset, scores in subsets:
            a = aligned if subset == "all" else stats.align_scores(scores)
            counts = stats.bootstrap_counts(len(a.ids), n_resamples, seed)  # one matrix for intervals and pairs
            intervals += stats.rows_of(stats.ci_columns(a, n_resamples, confidence, method, seed,  # type: ignore[arg-type]
                                                        counts=counts), subset)
            if len(per_query) > 1:
                cols = stats.pair_columns(a, n_resamples, seed, metric=label, method=method,  # type: ignore[arg-type]
                                          counts=counts)
                pairs += stats.rows_of(cols, subset) if cols else []
        _, power = power_line(aligned, metric=label)
    return StatsReport(task_name, metric, intervals, pairs, power, len(aligned.ids), data_note, skipped)


def best_sentence(rep: StatsReport, among: str, subset: str = "all") -> str:
    """The best candidate of `rep` on all queries (or on one `subset`, e.g. 'source=log'), and whether it is
    detectably better than the runner-up by the same Holm-corrected paired test the table prints; `among` names
    the set compared (CandidateSet.among), so a reader knows which candidates the verdict covers. '' when nothing
    has a mean."""
    label = stats.metric_label(rep.metric)
    rows = sorted((r for r in rep.interval_rows if r.get("subset", "all") == subset
                   and isinstance(r.get("mean"), float) and math.isfinite(r["mean"])),
                  key=lambda r: -r["mean"])
    if not rows:
        return ""
    best = rows[0]
    head = (f"best by {label} {among}: {best['candidate']} at {stats.format_score(best['mean'])} "
            f"[{stats.format_score(best['ci_low'])}, {stats.format_score(best['ci_high'])}]")
    if len(rows) < 2:
        return head
    second = rows[1]["candidate"]
    pair = next((p for p in rep.pair_rows if p.get("subset", "all") == subset
                 and {p["candidate_a"], p["candidate_b"]} == {best["candidate"], second}), None)
    if pair is None:
        return head
    if pair["verdict"] == stats.identical_text(pair["candidate_a"], pair["candidate_b"], label, pair["n"]):
        return f"{head}; the runner-up {second} scores the same on every query: the two are identical on this test set"
    sign = 1.0 if pair["candidate_a"] == best["candidate"] else -1.0
    lo, hi = sorted((sign * pair["diff_ci_low"], sign * pair["diff_ci_high"]))
    diff = f"{stats.format_diff(sign * pair['diff'], lo, hi, 4)}, {stats.format_p(pair['p_holm'])} Holm"
    if pair["significant"]:
        return f"{head}; detectably better than the runner-up {second} ({diff})"
    return f"{head}; NOT detectably better than the runner-up {second} ({diff}): the two are tied on this test set"
