"""The statistics of intervals.py as pandas tables, for the report, experiments, growth and Python users.

Same numbers as intervals.py to the bit (the tables are built from its columns); only this module
imports pandas, so commands that print from intervals.py directly (`stats`, `check`) never load it.
Inputs: ``dict[str, pd.Series]`` mapping candidate name -> Series indexed by query_id.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, Hashable, Literal, Mapping, Sequence

import pandas as pd

from .intervals import PAIR_COLUMNS, CIMethod, _n_common, align_scores, ci_columns, pair_columns, tag_groups
from .power import power_line

PerQuery = Mapping[str, pd.Series]

__all__ = ["PerQuery", "align", "ci_table", "paired_tests", "power_report", "by_tag", "breakdown"]


def align(per_query: PerQuery, on_mismatch: Literal["warn", "raise"] = "warn") -> pd.DataFrame:
    """Inner-join candidates on query_id -> float frame (queries x candidates), sorted by id.

    Queries not scored by every candidate (or NaN) are dropped with a ``UserWarning``
    (``ValueError`` with ``on_mismatch="raise"``); see stats.align_scores.
    """
    a = align_scores(per_query, on_mismatch)
    return pd.DataFrame(a.x, index=pd.Index(a.ids), columns=a.names)


def ci_table(per_query: PerQuery, n_resamples: int = 10_000, confidence: float = 0.95,
             method: CIMethod = "percentile", seed: int = 0,
             on_mismatch: Literal["warn", "raise"] = "warn") -> pd.DataFrame:
    """Mean and bootstrap CI per candidate (input order), on the common queries.

    Columns: candidate, n_queries, mean, ci_low, ci_high, std (per-query SD, ddof=1).
    """
    a = align_scores(per_query, on_mismatch)
    return pd.DataFrame(ci_columns(a, n_resamples, confidence, method, seed))


def paired_tests(per_query: PerQuery, n_resamples: int = 10_000, seed: int = 0,
                 alpha: float = 0.05, metric: str = "score", method: CIMethod = "percentile",
                 on_mismatch: Literal["warn", "raise"] = "warn") -> pd.DataFrame:
    """Compare every pair of candidates (a before b in input order), diff = a - b: diff CI,
    randomization / t-test / Holm p-values, d_z and the verdict line (stats.pair_columns)."""
    cols = pair_columns(align_scores(per_query, on_mismatch), n_resamples, seed, alpha, metric, method)
    return pd.DataFrame(columns=PAIR_COLUMNS) if cols is None else pd.DataFrame(cols)


def power_report(per_query: PerQuery, metric: str = "score", alpha: float = 0.05,
                 power: float = 0.8, dist: Literal["t", "z"] = "t") -> tuple[float, str]:
    """MDD for this test set and its warning line -> ``(mdd, text)`` (power.power_line)."""
    return power_line(align_scores(per_query), metric, alpha, power, dist)


def by_tag(per_query: PerQuery, tags: pd.DataFrame, tag_column: str
           ) -> dict[Hashable, dict[str, pd.Series]]:
    """Split per-query scores by the values of one tag column (NaN tags skipped).

    Queries absent from ``tags`` belong to no subset; that is warned about so a
    typo'd id type (int vs str) cannot silently empty every subset.
    """
    if tag_column not in tags.columns:
        raise KeyError(f"tag column {tag_column!r} not in tags {list(tags.columns)}")
    col = tags[tag_column]
    all_ids = pd.Index([]).append([pd.Series(s).index for s in per_query.values()]).unique()
    unknown = all_ids.difference(tags.index)
    if len(unknown):
        warnings.warn(f"{len(unknown)} of {len(all_ids)} scored queries have no row in tags "
                      f"(e.g. {list(unknown[:3])}); they are in no {tag_column!r} subset",
                      UserWarning, stacklevel=2)
    col = col.dropna()  # pandas' idea of missing (NaT, pd.NA too), then stats.tag_groups' rule
    out: dict[Hashable, dict[str, pd.Series]] = {}
    for v, ids in tag_groups(zip(col.index, col.to_numpy())):
        out[v] = {name: s[s.index.isin(list(ids))] for name, s in per_query.items()}
    return out


def breakdown(per_query: PerQuery, tags: pd.DataFrame | None,
              func: Callable[..., pd.DataFrame], tag_columns: Sequence[str] | None = None,
              min_queries: int = 2, **kwargs: Any) -> pd.DataFrame:
    """Run a table function (``ci_table``, ``paired_tests``...) on all queries and
    on every tag subset; concatenate with a leading ``subset`` column
    ("all", "source=human", "topic=billing", ...).

    Subsets with fewer than ``min_queries`` queries are skipped with a warning
    rather than reported with meaningless intervals.
    """
    frames = [func(per_query, **kwargs).assign(subset="all")]
    cols = list(tags.columns) if tags is not None and tag_columns is None else (tag_columns or [])
    for c in cols:
        for v, sub in by_tag(per_query, tags, c).items():
            n_common = _n_common(sub)
            if n_common < min_queries:
                warnings.warn(f"subset {c}={v} has {n_common} queries (< {min_queries}); skipped",
                              UserWarning, stacklevel=2)
                continue
            frames.append(func(sub, **kwargs).assign(subset=f"{c}={v}"))
    out = pd.concat(frames, ignore_index=True)
    return out[["subset"] + [c for c in out.columns if c != "subset"]]
