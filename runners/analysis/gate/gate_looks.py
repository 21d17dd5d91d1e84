"""The gate's decision with its looks counted: fixed-sample (gate.regression_check) or anytime (confseq.py).

Every decision of `check` on a (candidate, task, baseline) is a look, kept in the look store
(runners/results/look_store.py). A look at data already looked at (the same per-query differences, e.g. CI re-run
on the same commit) is not a new look: the same numbers give the same verdict and spend no error rate. The
verdict says which look it is and which test decided; a fixed-sample verdict after earlier looks says that its
error rate holds only for the first look. The anytime mode (`check --sequential`, `stats: {gate: anytime}`) orders
the queries as they arrived over the looks (confseq.arrival_order) and fails only when the confidence sequence's
lower bound of the drop is above zero and the drop exceeds max_drop, the same two conditions as the fixed gate.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import replace
from typing import Any

import numpy as np

from ...results.look_store import Looks, LookStore
from ...results.store import EnvironmentFault
from ...statistics.confseq import arrival_order, drop_lower_bounds
from ...statistics.intervals import Scores, align_scores, format_number, format_score, metric_label
from .gate_check import GateResult, query_counts, regression_check

__all__ = ["MODES", "anytime_check", "data_digest", "looked_check", "history_looks", "looks_note", "looks_summary"]

MODES = ("fixed", "anytime")
ANYTIME_QUESTION = "anytime-valid one-sided bound: a confidence sequence, valid at every look"


def data_digest(diffs: dict[str, float]) -> str:
    """What a look looked at: the per-query differences, by id (17 significant digits: the float exactly)."""
    text = json.dumps(sorted((str(q), f"{v:.17g}") for q, v in diffs.items()))
    return hashlib.sha256(text.encode()).hexdigest()


def anytime_check(baseline: Scores, candidate: Scores, metric: str, order: list[str], max_drop: float = 0.01,
                  alpha: float = 0.05) -> GateResult:
    """The gate with the drop's lower bound from the confidence sequence over the queries in `order`."""
    aligned = align_scores({"baseline": baseline, "candidate": candidate})
    x = aligned.x
    d_by_id = dict(zip(map(str, aligned.ids), x[:, 0] - x[:, 1]))
    d = np.array([d_by_id[q] for q in order if q in d_by_id])
    n = d.size
    drop = float(x[:, 0].mean() - x[:, 1].mean())
    bound = float(drop_lower_bounds(d, alpha)[-1])
    improved, degraded = int(np.count_nonzero(d < 0)), int(np.count_nonzero(d > 0))
    counts = query_counts(improved, degraded, n - improved - degraded)
    f3 = format_number
    means = x.mean(axis=0)
    head = f"{metric_label(metric)} {format_score(means[0])} → {format_score(means[1])}"
    what = f"{1 - alpha:.0%} anytime bound over {n} queries in arrival order"
    if bound <= -1:  # the sequence has not left its trivial bound yet
        least = f"no informative {what} yet: too few queries for this --alpha"
    else:
        least = f"at least {f3(bound)} ({what})"
    significant = bound > 0
    too_big = drop > max_drop
    if too_big and significant:
        reason = (f"FAIL: {head}, dropped by {f3(drop)} (> allowed {f3(max_drop)}), {least}; the drop is "
                  f"significant ({ANYTIME_QUESTION}); queries {counts}")
    elif too_big:
        reason = (f"PASS: {head}, drop {f3(drop)} exceeds {f3(max_drop)} but is not significant "
                  f"({ANYTIME_QUESTION}; the drop could be as small as "
                  + (f"{f3(bound)}" if bound > -1 else "any") + f"): could be noise; queries {counts}")
    elif drop > 0:
        reason = (f"PASS: {head}, drop {f3(drop)} is within the allowed {f3(max_drop)} ({ANYTIME_QUESTION}; "
                  f"{least}); queries {counts}")
    elif not np.any(d != 0):
        reason = f"PASS: {head}, did not drop (identical on every one of the {n} queries)"
    else:
        reason = (f"PASS: {head}, did not drop (change {f3(0.0 - drop, signed=True)}, {ANYTIME_QUESTION}); "
                  f"queries {counts}")
    return GateResult(passed=not (too_big and significant), drop=drop, bound=bound if bound > -1 else -math.inf,
                      p_value=math.nan, reason=reason, n_queries=int(n), metric=metric, max_drop=float(max_drop),
                      alpha=float(alpha), improved=improved, degraded=degraded, tied=n - improved - degraded,
                      mean_baseline=float(means[0]), mean_candidate=float(means[1]), mode="anytime")


def looks_note(looks: int, mode: str, alpha: float) -> str:
    """`look 3 at this comparison, decided by ...`; a fixed-sample verdict after earlier looks says what it is worth."""
    if mode == "anytime":
        return f"look {looks} at this comparison; decided by the anytime bound (valid at every look)"
    if looks > 1:
        return (f"looked at {looks} times: the {alpha:.0%} error rate holds only for the first look; "
                "use --sequential")
    return "look 1 at this comparison; decided by the fixed-sample test"


def looked_check(baseline: Scores, candidate: Scores, metric: str, *, store: LookStore | None, label: str,
                 task: str, baseline_id: str, baseline_shown: str = "", mode: str = "fixed",
                 max_drop: float = 0.01, alpha: float = 0.05,
                 n_resamples: int = 10_000, seed: int = 0) -> GateResult:
    """The gate on one (candidate, task, baseline) in `mode`, the look recorded in `store` (None: not counted).
    `baseline_id` identifies the baseline (its name and data, or a history record); `baseline_shown` is how
    `history` names it."""
    if mode not in MODES:
        raise ValueError(f"gate mode must be one of {MODES}, got {mode!r}")
    diffs = {str(q): float(baseline[q]) - float(candidate[q]) for q in baseline if q in candidate
             if not (math.isnan(float(baseline[q])) or math.isnan(float(candidate[q])))}
    digest = data_digest(diffs)
    past = store.read(label, task, baseline_id) if store is not None else None
    earlier = past.arrived if past is not None else []
    order = arrival_order(diffs, earlier, seed)
    if mode == "anytime":
        result = anytime_check(baseline, candidate, metric, order, max_drop, alpha)
    else:
        result = regression_check(baseline, candidate, metric, max_drop=max_drop, alpha=alpha,
                                  n_resamples=n_resamples, seed=seed)
    seen = [look.get("data") for look in past.looks] if past is not None else []
    new_look = digest not in seen
    looks = len(set(seen)) + (1 if new_look else 0)
    note = looks_note(looks, mode, alpha)
    if store is not None and new_look:
        known = set(earlier)
        try:
            store.append(label, task, baseline_id, {"data": digest, "mode": mode, "n_queries": len(order),
                                                    "baseline_shown": baseline_shown or baseline_id,
                                                    "new_queries": [q for q in order if q not in known],
                                                    "passed": result.passed, "drop": result.drop,
                                                    "bound": result.bound if math.isfinite(result.bound) else None})
        except (OSError, EnvironmentFault) as e:  # the verdict stands; that it was not counted is said
            why = str(e).splitlines()[0] if str(e) else type(e).__name__
            note += f" (this look was not counted: cannot write to {store.root}: {why})"
    return replace(result, looks=looks, reason=f"{result.reason}; {note}")


def looks_summary(looks: Looks, alpha: float = 0.05) -> str:
    """`vs BASELINE: looked at 12 times (11 fixed-sample, 1 anytime); the latest, on 300 queries, decided by the
    anytime bound: FAIL`, and what a fixed-sample verdict after repeated looks is worth."""
    if not looks.looks:
        return ""
    n = len({look.get("data") for look in looks.looks})
    last = looks.looks[-1]
    modes = [str(look.get("mode")) for look in looks.looks]
    counts = ", ".join(f"{modes.count(m)} {'fixed-sample' if m == 'fixed' else m}" for m in MODES if m in modes)
    test = "the anytime bound" if last.get("mode") == "anytime" else "the fixed-sample test"
    line = (f"vs {last.get('baseline_shown') or last.get('baseline')}: looked at {n} time{'s' if n != 1 else ''} "
            f"({counts}); the latest ({str(last.get('time'))[:10]}, {last.get('n_queries')} queries) decided by "
            f"{test}: {'PASS' if last.get('passed') else 'FAIL'}")
    if last.get("mode") != "anytime" and n > 1:
        line += f"; {looks_note(n, 'fixed', alpha)}"
    return line


def history_looks(store: LookStore, pairs: list[tuple[str, str]], alpha: float = 0.05) -> list[dict[str, Any]]:
    """Per (candidate label, task) of `pairs` and each baseline it was checked against: the looks so far
    (`history` prints them under the timelines: how often the gate looked and which test decided)."""
    out = []
    for label, task in dict.fromkeys(pairs):
        for found in store.comparisons(label, task):
            if found.looks:
                last = found.looks[-1]
                out.append({"candidate": label, "task": task, "baseline": last.get("baseline_shown"),
                            "looks": len({look.get("data") for look in found.looks}), "mode": last.get("mode"),
                            "passed": last.get("passed"), "line": f"{task} — {label}: check "
                            + looks_summary(found, alpha)})
    return out
