"""Timelines of the run history: per candidate x task, what changed at each step and what it did.

Each step after the first is compared with the record before it: the fingerprint parts that changed
(history.identity_changes), whether the corpus grew, and a paired test of the main metric on the queries
both records share with the same id, text and labels (pairing.pair_queries: added, removed and changed
queries are counted, never paired by position): mean difference with its 95% bootstrap CI and a two-sided
sign-flip randomization p.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any

import numpy as np

from ...results.variants import shown_label
from ...statistics.intervals import format_diff, format_p, format_score, metric_label
from ...statistics.pairing import corpus_change, pair_queries
from ...statistics.resampling import bootstrap_ci, randomization_test
from .history import fingerprinted, record_changes


@dataclass
class Step:
    """One record in a timeline, compared with the record before it."""

    id: str
    time: str
    candidate: str
    model: str
    task: str
    metric: str
    mean: float
    ci_low: float
    ci_high: float
    corpus_size: int | None
    queries: int
    dataset_revision: str
    fingerprint: str
    git: str  # short commit, '+dirty' when the checkout had changes; '' outside git
    changed: list[str]  # parts of the fingerprint ('data', 'model', ...), ['first record'] or [] (none)
    changed_detail: list[str] = field(default_factory=list)
    corpus_delta: int | None = None  # documents added (negative: removed) since the previous record
    pairing: dict[str, Any] | None = None  # pairing.Pairing.to_dict() vs the previous record
    diff: float | None = None  # paired mean difference (this - previous) on the paired queries
    diff_ci: tuple[float, float] | None = None
    p_value: float | None = None
    significant: bool | None = None
    note: str = ""  # why no test (different main metric, too few paired queries)
    accepted: bool = False

    @property
    def shown(self) -> str:
        """The step's candidate as every command prints it: a timeline follows a label across settings, so each
        step says which one it ran (`MiniLM (max_seq_length 4)`; results/variants.py shown_label)."""
        return shown_label(self.candidate, self.model)

    @property
    def corpus_grew(self) -> bool:
        return bool(self.corpus_delta and self.corpus_delta > 0)

    def effect(self) -> str:
        """'+0.0123 [+0.0040, +0.0210], p=0.004: significant' or why there is no test."""
        if self.note:
            return self.note
        if self.diff is None or self.diff_ci is None or self.p_value is None:
            return ""
        verdict = ("significant " + ("improvement" if self.diff > 0 else "drop")) if self.significant \
            else "no significant change"
        return (f"{format_diff(self.diff, self.diff_ci[0], self.diff_ci[1], 4)} on "
                f"{self.pairing['paired'] if self.pairing else '?'} paired queries, {format_p(self.p_value)}: {verdict}")

    def what_changed(self) -> str:
        if self.changed == ["first record"]:
            return "first record"
        parts = list(self.changed) or ["nothing in the fingerprint (re-run)"]
        text = ", ".join(parts)
        if self.corpus_delta and self.corpus_size is not None:  # said as `check` says it (pairing.CorpusChange)
            text += f" ({corpus_change(self.corpus_size - self.corpus_delta, self.corpus_size).describe()})"
        return text

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["corpus_grew"] = self.corpus_grew
        out["shown"] = self.shown
        out["what_changed"] = self.what_changed()
        out["effect"] = self.effect()
        return out


@dataclass
class Timeline:
    candidate: str
    task: str
    metric: str
    steps: list[Step]

    def to_dict(self) -> dict[str, Any]:
        return {"candidate": self.candidate, "task": self.task, "metric": self.metric,
                "steps": [s.to_dict() for s in self.steps]}


def _git_text(git: Mapping[str, Any] | None) -> str:
    if not git or not git.get("commit"):
        return ""
    return str(git["commit"])[:8] + ("+dirty" if git.get("dirty") else "")


def compare_records(prev: Mapping[str, Any], cur: Mapping[str, Any], n_resamples: int = 10_000, seed: int = 0,
                    alpha: float = 0.05) -> dict[str, Any]:
    """Paired test of `cur` vs `prev` on the main metric: {pairing, diff, diff_ci, p_value, significant, note}."""
    metric_a, metric_b = (prev.get("per_query") or {}).get("metric"), (cur.get("per_query") or {}).get("metric")
    if metric_a != metric_b:
        return {"note": f"main metric changed ({metric_a} -> {metric_b}): not compared"}
    pairing = pair_queries(fingerprinted(prev), fingerprinted(cur), prev.get("dataset_revision"),
                           cur.get("dataset_revision"))
    a, b = fingerprinted(prev), fingerprinted(cur)
    ids = [q for q in pairing.paired if math.isfinite(a[q][1]) and math.isfinite(b[q][1])]
    out: dict[str, Any] = {"pairing": pairing.to_dict()}
    if len(ids) < 2:
        out["note"] = f"only {len(ids)} paired queries ({pairing.describe()}): not compared"
        return out
    d = np.array([b[q][1] - a[q][1] for q in ids])
    mean, lo, hi = bootstrap_ci(d, n_resamples, 1.0 - alpha, "percentile", seed)
    p = float(randomization_test(d, n_resamples, seed, alternative="two-sided")[0])
    out.update(diff=float(mean), diff_ci=(float(lo), float(hi)), p_value=p, significant=bool(p < alpha))
    return out


def _corpus_delta(prev: Mapping[str, Any], cur: Mapping[str, Any]) -> int | None:
    a, b = prev.get("corpus_size"), cur.get("corpus_size")
    return b - a if isinstance(a, int) and isinstance(b, int) else None


def build_timelines(records: Iterable[Mapping[str, Any]], *, since: datetime | None = None,
                    models: Sequence[str] | None = None, tasks: Sequence[str] | None = None,
                    accepted: Mapping[tuple[str, str], str] | None = None, n_resamples: int = 10_000,
                    seed: int = 0) -> list[Timeline]:
    """One timeline per (candidate label, task), oldest step first. Filters: `since` (steps at or after it;
    each is still compared with the record before it), `models` (labels or results names), `tasks`."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for r in sorted(records, key=lambda r: (str(r["time"]), str(r["id"]))):
        label = str(r["candidate"].get("label") or r["candidate"].get("name"))
        if models and label not in models and r["candidate"].get("name") not in models:
            continue
        if tasks and r["task"] not in tasks:
            continue
        groups.setdefault((label, r["task"]), []).append(r)
    out = []
    for (label, task), group in sorted(groups.items()):
        steps = []
        for i, cur in enumerate(group):
            if since is not None and parse_time(cur["time"]) < since:
                continue
            prev = group[i - 1] if i else None
            changed, detail = record_changes(prev, cur)
            main = (cur.get("per_query") or {}).get("metric") or cur.get("main_score") or "ndcg_at_10"
            m = (cur.get("metrics") or {}).get(main) or {}
            git = cur.get("git") or {}
            step = Step(id=str(cur["id"]), time=str(cur["time"]), candidate=label,
                        model=str(cur["candidate"].get("name")), task=task, metric=main,
                        mean=float(m.get("mean", float("nan"))), ci_low=float(m.get("ci_low", float("nan"))),
                        ci_high=float(m.get("ci_high", float("nan"))), corpus_size=cur.get("corpus_size"),
                        queries=int(cur.get("queries") or 0), dataset_revision=str(cur.get("dataset_revision")),
                        fingerprint=str(cur.get("fingerprint")), git=_git_text(git), changed=changed,
                        changed_detail=detail, accepted=bool(accepted and accepted.get((label, task)) == cur["id"]))
            if prev is not None:
                if git.get("commit") and (prev.get("git") or {}).get("commit") not in (None, git.get("commit")):
                    step.changed_detail.append(f"code: commit {str(prev['git']['commit'])[:8]} -> {str(git['commit'])[:8]}")
                step.corpus_delta = _corpus_delta(prev, cur)
                for key, value in compare_records(prev, cur, n_resamples, seed).items():
                    setattr(step, key, value)
            steps.append(step)
        if steps:
            out.append(Timeline(label, task, steps[-1].metric, steps))
    return out


def parse_time(text: str) -> datetime:
    """An ISO time or date (`2026-11-01`); naive ones are UTC."""
    when = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def format_timelines(timelines: Sequence[Timeline]) -> list[str]:
    """The text view: a header per timeline, one line per step and its details indented below."""
    lines: list[str] = []
    for tl in timelines:
        lines.append(f"{tl.task} — {tl.candidate}: {metric_label(tl.metric)} over time ({len(tl.steps)} records)")
        for s in tl.steps:
            when = parse_time(s.time).strftime("%Y-%m-%d %H:%M")
            docs = f"{s.corpus_size} docs" if s.corpus_size is not None else "? docs"
            grew = f" (+{s.corpus_delta})" if s.corpus_grew else (f" ({s.corpus_delta})" if s.corpus_delta else "")
            flag = " [accepted]" if s.accepted else ""
            flag += f"; as {s.shown}" if s.shown != tl.candidate else ""  # which setting of the label ran
            scores = f"{format_score(s.mean)} [{format_score(s.ci_low)}, {format_score(s.ci_high)}]"
            lines.append(f"  {when}  {s.git or '-':<14} {scores}  "
                         f"{docs}{grew}, {s.queries} queries  {s.what_changed()}{flag}")
            for d in s.changed_detail:
                lines.append(f"      {d}")
            if s.pairing and any(s.pairing.get(k) for k in ("added", "removed", "changed", "unverified")):
                lines.append(f"      queries: {s.pairing['description']}")
            if s.effect():
                lines.append(f"      effect: {s.effect()}")
    return lines


CSV_COLUMNS = ["candidate", "model", "task", "time", "git", "metric", "mean", "ci_low", "ci_high", "corpus_size",
               "corpus_delta", "corpus_grew", "queries", "dataset_revision", "fingerprint", "what_changed",
               "paired", "added", "removed", "changed_queries", "diff", "diff_ci_low", "diff_ci_high", "p_value",
               "significant", "accepted", "id"]


def csv_rows(timelines: Sequence[Timeline]) -> list[dict[str, Any]]:
    rows = []
    for tl in timelines:
        for s in tl.steps:
            p = s.pairing or {}
            rows.append({"candidate": s.candidate, "model": s.model, "task": s.task, "time": s.time, "git": s.git,
                         "metric": s.metric, "mean": s.mean, "ci_low": s.ci_low, "ci_high": s.ci_high,
                         "corpus_size": s.corpus_size, "corpus_delta": s.corpus_delta, "corpus_grew": s.corpus_grew,
                         "queries": s.queries, "dataset_revision": s.dataset_revision, "fingerprint": s.fingerprint,
                         "what_changed": s.what_changed(), "paired": p.get("paired"), "added": p.get("added"),
                         "removed": p.get("removed"), "changed_queries": p.get("changed"), "diff": s.diff,
                         "diff_ci_low": s.diff_ci[0] if s.diff_ci else None,
                         "diff_ci_high": s.diff_ci[1] if s.diff_ci else None, "p_value": s.p_value,
                         "significant": s.significant, "accepted": s.accepted, "id": s.id})
    return rows
