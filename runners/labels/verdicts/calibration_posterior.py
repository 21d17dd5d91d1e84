"""How uncertain the relevance probabilities are: draws from a hierarchical Dirichlet posterior (issue 47's stop).

confidence_stop.py gives every unjudged pooled pair P(human grade | its LLM grade, its group), learnt on the pairs
people judged. Taken as known, those probabilities make a verdict look surer than it is, in two ways that
benchmarks/bench_stopping.py measured (95%-likely verdicts held in only 87-94% of draws):
* the probabilities are estimated from a few hundred pairs, and every unjudged pair of a group shares the same
  estimate: its error moves them all together, which the independent-pairs variance never sees;
* a group with few or no judged pairs (the documents only the lexical candidate puts first, say, where an LLM judge
  errs differently) was given the pooled fit as if it were known to apply there.

So the probability that a verdict holds is averaged over draws of the probabilities themselves (the law of total
probability), from a hierarchy of Dirichlet-multinomial cells, one per (group, LLM grade or none):

    pooled      theta_g         ~ Dirichlet(PRIOR_POOLED * r + n_g)              r: the human grades' rates
    band        theta_{b,g}     ~ Dirichlet(s * theta_g + n_{b,g})                (best rank 1, 2-3, 4+)
    group       theta_{c|b,g}   ~ Dirichlet(s * theta_{b,g} + n_{c|b,g})          (which candidates retrieved it)

n are the judged pairs' human-grade counts in each cell. A group with many judged pairs is pinned by its own counts;
a group with few or none draws its probabilities around its parent's, as loosely as ``s`` = GROUP_PRIOR = 2
pseudo-pairs say: its parent's rates count as much as two judged pairs of its own. Loose on purpose. The groups
exist because a judge's errors may differ by group (the lexical bias), and the first judged pairs come from the
decisive order's first groups, not from all: an empirical-Bayes ``s`` (tried: the value maximising the groups'
Dirichlet-multinomial likelihood) judged the groups alike from the one group judged so far and stopped at 40 judged
pairs on a wrong verdict. With s = 2, benchmarks/bench_stopping.py measured (docs/judging.md) the 95% stop agreeing
with the full labels in 200 of 200 draws on the demo (a median 18% of its pool judged) and 97 of 100 on generated
collections (36%), the lexical judge included.
Each draw is conditional on its parent's draw (the parent's counts include the children's): a simplification of
the joint posterior.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

#: pseudo-pairs of the human grades' overall rates behind each LLM grade's pooled cell
PRIOR_POOLED = 2.0
#: ``s``: pseudo-pairs of its parent's rates behind a band's or a group's cell (module docstring)
GROUP_PRIOR = 2.0
#: smoothing of the overall rates, so a grade people never gave keeps a small probability
RATE_SMOOTHING = 0.5
DEFAULT_DRAWS = 64
#: the least Dirichlet parameter drawn with: a grade whose parent probability is ~0 stays possible, and numpy's
#: sampler stays finite
FLOOR = 1e-6


@dataclass
class CalibrationDraws:
    """``tables[b, cell]``: draw b's grade probabilities (aligned with the scale) of every cell; ``cell_of`` maps a
    pair to its cell; ``group_prior`` is the ``s`` used."""

    tables: np.ndarray
    cell_of: dict[tuple[str, str], int]
    group_prior: float


def calibration_draws(human: Mapping[tuple[str, str], int], llm: Mapping[tuple[str, str], int],
                      grid: Sequence[int], groups: Mapping[tuple[str, str], tuple[str, str]],
                      draws: int = DEFAULT_DRAWS, seed: int = 0, group_prior: float = GROUP_PRIOR) -> CalibrationDraws:
    """Draws of P(grade | cell) for every pair of ``groups`` (pair -> (its candidates|band group, its band)),
    learnt on ``human`` (judged pooled pairs' grades) against ``llm`` (the judge's grades; a pair without one is in
    the LLM grade "none"); probability vectors aligned with ``grid`` (module docstring)."""
    grid = sorted(int(g) for g in grid)
    col = {g: i for i, g in enumerate(grid)}
    m = len(grid)

    def llm_of(key: tuple[str, str]) -> Hashable:
        g = llm.get(key)
        return int(g) if g is not None and int(g) in col else None

    cells: dict[tuple[Hashable, str, str], np.ndarray] = {}
    for key, (group, band) in groups.items():
        cells.setdefault((llm_of(key), band, group), np.zeros(m))
    pooled: dict[Hashable, np.ndarray] = {}
    banded: dict[tuple[Hashable, str], np.ndarray] = {}
    total = np.zeros(m)
    for key, h in human.items():
        if int(h) not in col:
            continue
        g = llm_of(key)
        band_group = groups.get(key)
        one = np.eye(m)[col[int(h)]]
        total += one
        pooled[g] = pooled.get(g, np.zeros(m)) + one
        if band_group is not None:
            group, band = band_group
            banded[(g, band)] = banded.get((g, band), np.zeros(m)) + one
            cells[(g, band, group)] = cells.get((g, band, group), np.zeros(m)) + one
    rates = (total + RATE_SMOOTHING) / (total.sum() + RATE_SMOOTHING * m)

    zero = np.zeros(m)
    rng = np.random.default_rng([int(seed), 4747])
    pool_keys = sorted({g for g, _, _ in cells}, key=repr)
    band_keys = sorted({(g, b) for g, b, _ in cells}, key=repr)
    order = sorted(cells, key=repr)
    index = {c: i for i, c in enumerate(order)}
    theta = _dirichlet(rng, draws, np.stack([PRIOR_POOLED * rates + pooled.get(g, zero) for g in pool_keys]))
    of_pool = [pool_keys.index(g) for g, _ in band_keys]
    band_theta = _dirichlet(rng, draws, np.maximum(group_prior * theta[:, of_pool], FLOOR)
                            + np.stack([banded.get(gb, zero) for gb in band_keys]))
    of_band = [band_keys.index((g, band)) for g, band, _ in order]
    tables = _dirichlet(rng, draws, np.maximum(group_prior * band_theta[:, of_band], FLOOR)
                        + np.stack([cells[c] for c in order]))
    cell_of = {key: index[(llm_of(key), band, group)] for key, (group, band) in groups.items()}
    return CalibrationDraws(tables, cell_of, float(group_prior))


def _dirichlet(rng: np.random.Generator, draws: int, alpha: np.ndarray) -> np.ndarray:
    """``draws`` Dirichlet draws of every row of ``alpha`` ([rows, grades] alike for every draw, or [draws, rows,
    grades] one per draw): independent gammas normalised, shape [draws, rows, grades]."""
    shape = alpha.shape if alpha.ndim == 3 else (draws, *alpha.shape)
    g = rng.gamma(np.broadcast_to(alpha, shape))
    return g / g.sum(axis=-1, keepdims=True)
