"""The random sample of questions people judge for prediction-powered verdicts (`labels plan --order sample`).

Prediction-powered inference (runners/statistics/prediction_powered.py) corrects the LLM judge's grades on a
*random* sample of questions: the estimate is unbiased and its interval valid only because which questions people
judged was decided by a seeded draw, not by what they or the candidates found. So the sample is drawn here, once,
from a seed, and written into the task's plan file (`labels/<task>/plan.json`, beside the raters' files) with the
seed and the strata; people then judge **every pooled pair of each sampled question** (a question half judged is
not a sampled question: its metric under human grades is not known).

Stratified by a question tag the task has (`topic`, `source`, ...): each stratum gets its share of the sample by
largest remainder, at least one question where the stratum has any, drawn at random within it; so the sample's
strata match the test set's, and the simple-random-sample estimator stays (nearly) unbiased. The order the app
serves the sampled questions in is a seeded shuffle of the whole sample: stopping part way leaves a smaller
sample that is still random (within the rounding of the strata).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...statistics.analysis_errors import AnalysisError

#: the task's plan file (runners/labels/judging/plan.py writes it): the sample travels in its `sample` key
PLAN_FILE = "plan.json"


def allocate(sizes: Mapping[str, int], n: int) -> dict[str, int]:
    """Questions per stratum: proportional to its size by largest remainder (ties by name), at least one for each
    non-empty stratum while n allows, never more than it holds."""
    total = sum(sizes.values())
    if n >= total:
        return dict(sizes)
    exact = {s: n * c / total for s, c in sizes.items()}
    out = {s: min(sizes[s], max(1 if n >= len(sizes) else 0, math.floor(v))) for s, v in exact.items()}
    order = sorted(sizes, key=lambda s: (-(exact[s] - math.floor(exact[s])), s))
    while sum(out.values()) < n:
        grown = False
        for s in order:
            if sum(out.values()) < n and out[s] < sizes[s]:
                out[s] += 1
                grown = True
        if not grown:
            break
    while sum(out.values()) > n:  # the floor of one per stratum overshot: take from the largest
        s = max(out, key=lambda s: (out[s] - exact[s], s))
        out[s] -= 1
    return out


def draw_sample(questions: Sequence[str], n: int, seed: int = 0,
                strata: Mapping[str, str] | None = None) -> tuple[list[str], dict[str, int]]:
    """(the sampled question ids in the order to judge them, questions per stratum): ``n`` of ``questions`` drawn
    at random with ``seed``; with ``strata`` (question -> its tag value), stratified (module docstring)."""
    ids = sorted(set(questions))
    if n < 1:
        raise AnalysisError(f"--questions {n}: give how many questions people will judge, e.g. 100")
    if not ids:
        raise AnalysisError("no question to sample: the task has no labelled question on this split")
    rng = np.random.default_rng([int(seed), 47])
    groups: dict[str, list[str]] = {}
    for q in ids:
        groups.setdefault(str((strata or {}).get(q, "")) if strata is not None else "all", []).append(q)
    share = allocate({s: len(g) for s, g in sorted(groups.items())}, min(n, len(ids)))
    chosen = []
    for s in sorted(groups):
        g = groups[s]
        chosen += [g[i] for i in sorted(rng.choice(len(g), size=share[s], replace=False))]
    order = rng.permutation(len(chosen))
    return [chosen[i] for i in order], share


def read_sample(folder: Path) -> dict[str, Any] | None:
    """The `sample` block of a task's plan file (questions, seed, stratify, strata, depth) with ``pairs``: every
    (split, question, document) the plan gives any rater; None when the task has no plan or its plan is not a
    sample."""
    path = Path(folder) / PLAN_FILE
    if not path.is_file():
        return None
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise AnalysisError(f"{path}: not a plan written by `labels plan`: make it again") from None
    sample = body.get("sample") if isinstance(body, dict) else None
    if not isinstance(sample, dict) or not isinstance(sample.get("questions"), list):
        return None
    raters = body.get("raters") if isinstance(body.get("raters"), dict) else {}
    pairs = {tuple(str(x) for x in k) for ks in raters.values() if isinstance(ks, list) for k in ks
             if isinstance(k, list) and len(k) == 3}
    return {**sample, "questions": [str(q) for q in sample["questions"]], "pairs": sorted(pairs)}
