"""`labels plan`: who judges what, so that a share of the items is graded by two raters (agreement needs it).

The items are shuffled with a seed; the first ``ceil(overlap * n)`` are given to two raters, the rest to one,
each time to the raters with the fewest items so far (ties in a rotating order), so loads stay within one item
of each other and every pair of raters shares some items. The plan is a JSON file next to the raters' files,
`labels/<task>/plan.json`, written atomically; `labels serve --rater NAME` serves NAME's share of it.

Three orders: `random` (the pool's pairs shuffled: agreement), `decisive` (the pairs that can move the candidates'
differences most first: the adversarial bounds settle soonest) and `sample` (every pooled pair of a seeded,
stratified random sample of questions, question by question: what prediction-powered verdicts need; the app
serves the plan's order for `decisive` and `sample`).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from custom_tasks.config import TaskConfig
from custom_tasks.readers._io import display_path

from ...statistics.analysis_errors import AnalysisError
from ...results.store import atomic_write_bytes
from ..pool.question_sample import PLAN_FILE
from ..raters.ratings import Key, check_rater_name

PLAN = PLAN_FILE


def make_plan(keys: list[Key], raters: list[str], overlap: float, seed: int = 0,
              order: list[Key] | None = None) -> dict[str, list[Key]]:
    """rater -> their items; ``overlap`` of the items (rounded up) go to two raters. With ``order`` (the decisive
    order, runners/labels/pool/decisive_order.py) the items are dealt in that order instead of shuffled, so each
    rater's share keeps it and the first items (the most decisive) are the ones two raters grade."""
    raters = _checked_raters(raters, overlap)
    ordered = sorted(set(keys))
    perm = np.random.default_rng([int(seed), 7]).permutation(len(ordered))
    if order is not None:
        index = {k: i for i, k in enumerate(ordered)}
        first = [index[k] for k in dict.fromkeys(order) if k in index]
        taken = set(first)
        perm = np.array(first + [int(i) for i in perm if i not in taken], dtype=np.int64)
    n_multi = math.ceil(overlap * len(ordered))
    share: dict[str, list[Key]] = {r: [] for r in raters}
    for pos, i in enumerate(perm):
        k = 2 if pos < n_multi else 1
        rotation = raters[pos % len(raters):] + raters[: pos % len(raters)]
        for r in sorted(rotation, key=lambda r: len(share[r]))[:k]:  # stable sort: rotation breaks ties
            share[r].append(ordered[i])
    return share


def _checked_raters(raters: list[str], overlap: float) -> list[str]:
    """The raters' names checked (each a valid, distinct name) with the share of items two of them grade."""
    raters = [check_rater_name(r) for r in raters]
    if len(set(r.lower() for r in raters)) != len(raters):
        raise AnalysisError(f"--raters {','.join(raters)}: a name is given twice")
    if not 0 <= overlap <= 1:
        raise AnalysisError(f"--overlap {overlap}: give a share between 0 and 1, e.g. 0.2")
    if overlap > 0 and len(raters) < 2:
        raise AnalysisError("--overlap needs at least two raters (--raters ana,bo)")
    return raters


def make_sample_plan(keys: list[Key], raters: list[str], overlap: float) -> dict[str, list[Key]]:
    """rater -> their items for `--order sample`: ``keys`` (the sampled questions' pooled pairs, in the drawn order)
    dealt a whole question at a time, so one person grades every pair of a question together and a question is
    judged whole as soon as its rater is through it; the first ``ceil(overlap * questions)`` questions go to two
    raters. Each question goes to the rater(s) with the fewest pairs so far (ties in the raters' order)."""
    raters = _checked_raters(raters, overlap)
    questions: dict[tuple[str, str], list[Key]] = {}
    for k in keys:
        questions.setdefault((k[0], k[1]), []).append(k)
    n_multi = math.ceil(overlap * len(questions))
    share: dict[str, list[Key]] = {r: [] for r in raters}
    for pos, pairs in enumerate(questions.values()):
        for r in sorted(raters, key=lambda r: len(share[r]))[:2 if pos < n_multi else 1]:
            share[r] += pairs
    return share


def write_plan(folder: Path, cfg: TaskConfig, share: dict[str, list[Key]], overlap: float, seed: int,
               order: str = "random", sample: dict[str, Any] | None = None) -> Path:
    """``sample``: the random sample of questions (`--order sample`, runners/labels/pool/question_sample.py),
    kept in the plan so `stats` knows which questions people judged whole."""
    path = Path(folder) / PLAN
    body = {"task": cfg.name, "overlap": overlap, "seed": seed, "order": order,
            "raters": {r: [list(k) for k in ks] for r, ks in share.items()}, **({"sample": sample} if sample else {})}
    atomic_write_bytes(path, (json.dumps(body, ensure_ascii=False, indent=1) + "\n").encode("utf-8"))
    return path


def read_plan(folder: Path, cfg: TaskConfig) -> dict[str, Any] | None:
    """The task's plan, or None when it has none."""
    path = Path(folder) / PLAN
    if not path.exists():
        return None
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
        raters = {r: [tuple(str(x) for x in k) for k in ks] for r, ks in body["raters"].items()}
    except (json.JSONDecodeError, KeyError, TypeError, AttributeError, UnicodeDecodeError):
        raise AnalysisError(f"{display_path(path)}: not a plan written by `labels plan`: make it again") from None
    if body.get("task") != cfg.name:
        raise AnalysisError(f"{display_path(path)}: a plan for task {str(body.get('task'))[:60]!r}, not {cfg.name!r}")
    return {**body, "raters": raters}


def rater_share(plan: dict[str, Any] | None, rater: str, folder: Path) -> set[Key] | None:
    """The keys a rater is to judge (None: no plan, everything)."""
    if plan is None:
        return None
    if rater not in plan["raters"]:
        raise AnalysisError(f"{display_path(Path(folder) / PLAN)} plans no items for {rater!r} (raters: "
                            f"{', '.join(plan['raters'])}): use one of those names or make the plan again")
    return set(plan["raters"][rater])
