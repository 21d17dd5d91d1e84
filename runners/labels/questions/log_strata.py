"""Strata of a query log, their share of the traffic, the allocation of a sample over them, and the draw.

A plain random sample of distinct queries is mostly tail (rare queries are most of the distinct ones); a sample
of searches is mostly a few head queries. Web search teams and TREC's Million Query track stratify instead: by
frequency band (head, torso, tail) and here also by topic (k-means over the queries' embeddings), then keep each
stratum's share of the traffic so a score can be re-weighted to what users actually search.

Bands are cut where the cumulative traffic of the queries, most searched first, reaches the given shares (thirds
by default), stated as count thresholds. Topics need vectors: at most ``embed_limit`` queries are embedded, split
over the bands (each band whole when it fits in its part, else a seeded random subset of it: two-phase sampling,
whose topic shares estimate the band's; every band keeps a part). Each written question carries ``weight`` = its
stratum's traffic share x its count / the counts of its stratum's sample, so sum(weight x score) / sum(weight)
estimates the traffic-weighted mean.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

BANDS = ("head", "torso", "tail")


@dataclass
class Bands:
    """Each query's band and the count thresholds that cut them."""

    of: dict[str, str]
    head_min: int
    torso_min: int
    traffic: dict[str, int] = field(default_factory=dict)
    distinct: dict[str, int] = field(default_factory=dict)

    def lines(self, total: int, shares: Sequence[float] | None) -> list[str]:
        how = (f"cut where the most searched queries reach {shares[0]:.0%} and {shares[1]:.0%} of the searches"
               if shares else "count thresholds given")
        out = [f"frequency bands ({how}): head = searched >= {self.head_min} times, torso >= {self.torso_min}, "
               f"tail below"]
        for b in BANDS:
            out.append(f"  {b}: {self.distinct.get(b, 0)} distinct queries, {self.traffic.get(b, 0)} searches "
                       f"({self.traffic.get(b, 0) / max(total, 1):.1%})")
        return out


def frequency_bands(counts: Mapping[str, int], shares: Sequence[float] | None = (1 / 3, 2 / 3),
                    thresholds: tuple[int, int] | None = None) -> Bands:
    """Head/torso/tail by cumulative traffic ``shares`` (or the given count ``thresholds``); queries with the same
    count always share a band."""
    order = sorted(counts, key=lambda k: (-counts[k], k))
    total = sum(counts.values())
    if thresholds is None:
        head_min = torso_min = 1
        cum, seen_head = 0, False
        for k in order:
            cum += counts[k]
            if not seen_head and cum >= (shares or (1 / 3, 2 / 3))[0] * total:
                head_min, seen_head = counts[k], True
            if cum >= (shares or (1 / 3, 2 / 3))[1] * total:
                torso_min = counts[k]
                break
        if torso_min >= head_min:  # ties at the cut: the torso starts below the head
            torso_min = max(1, head_min - 1) if head_min > 1 else 1
    else:
        head_min, torso_min = thresholds
    of = {k: "head" if counts[k] >= head_min else "torso" if counts[k] >= torso_min else "tail" for k in order}
    bands = Bands(of, head_min, torso_min)
    for k, b in of.items():
        bands.traffic[b] = bands.traffic.get(b, 0) + counts[k]
        bands.distinct[b] = bands.distinct.get(b, 0) + 1
    return bands


def _rng(seed: int, name: str) -> np.random.Generator:
    """One generator per (seed, stratum): a stratum's draw does not depend on the others'."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def embedded_subset(bands: Bands, limit: int, seed: int) -> list[str]:
    """The queries embedded for topics: ``limit`` split over the bands (``embed_quota``), each band whole when it
    fits in its part, else a seeded random subset of it (a band's subset stands for the band: its topic shares are
    estimated from it)."""
    members = {b: sorted(k for k, band in bands.of.items() if band == b) for b in BANDS}
    quota = embed_quota({b: len(m) for b, m in members.items() if m}, limit)
    chosen: list[str] = []
    for b in BANDS:
        picked_members = members[b]
        if len(picked_members) > quota.get(b, 0):
            picked = _rng(seed, f"embed-{b}").choice(len(picked_members), quota[b], replace=False)
            picked_members = [picked_members[i] for i in sorted(picked.tolist())]
        chosen += picked_members
    return chosen


def embed_quota(sizes: Mapping[str, int], limit: int) -> dict[str, int]:
    """How many queries of each band are embedded: equal parts of ``limit``, a band smaller than its part taken
    whole and the room it leaves split over the others (water-filling). Every non-empty band gets at least one,
    even past a tiny limit: a band left out would vanish from the sample and its traffic from the weights (filling
    head, then torso, then tail in order left the tail out whenever head + torso exceeded the limit)."""
    left, quota, room = dict(sizes), {}, max(limit, len(sizes))
    while left:
        part = room // len(left)
        small = {b: n for b, n in left.items() if n <= part}
        if not small:
            spare = room - part * len(left)
            for i, b in enumerate(b for b in BANDS if b in left):  # the remainder to the most searched bands
                quota[b] = part + (1 if i < spare else 0)
            break
        for b, n in small.items():
            quota[b], room = n, room - n
            del left[b]
    return quota


def topics(vectors: np.ndarray, k: int, seed: int) -> np.ndarray:
    """k-means cluster of each (L2-normalised) vector: spherical clusters of meaning; labels as given by scipy."""
    from scipy.cluster.vq import kmeans2

    k = max(1, min(k, len(vectors)))
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    _, labels = kmeans2(unit.astype(np.float64), k, iter=20, minit="++", seed=seed)
    return labels


@dataclass
class Stratum:
    name: str
    band: str
    topic: str
    units: list[str]  # its embedded queries, sorted
    share: float  # of all searches (estimated for a subsampled band)
    allocated: int = 0
    drawn: list[str] = field(default_factory=list)


def strata(bands: Bands, keys: list[str], labels: np.ndarray, counts: Mapping[str, int]) -> list[Stratum]:
    """Band x topic strata; topics renamed t1, t2, ... by traffic (largest first) so names do not depend on
    scipy's numbering."""
    traffic_of = np.zeros(int(labels.max(initial=0)) + 1)
    for key, lab in zip(keys, labels.tolist()):
        traffic_of[lab] += counts[key]
    rank = {int(lab): i + 1 for i, lab in enumerate(sorted(range(len(traffic_of)), key=lambda t: (-traffic_of[t], t)))}
    total = sum(counts.values())
    members: dict[tuple[str, str], list[str]] = {}
    for key, lab in zip(keys, labels.tolist()):
        members.setdefault((bands.of[key], f"t{rank[int(lab)]}"), []).append(key)
    out = []
    for b in BANDS:
        seen = sum(counts[k] for (band, _), ks in members.items() if band == b for k in ks)
        for (band, topic), ks in sorted(members.items(), key=lambda x: (x[0][0], int(x[0][1][1:]))):
            if band != b or not seen:
                continue
            share = bands.traffic.get(b, 0) / total * sum(counts[k] for k in ks) / seen
            out.append(Stratum(f"{band}/{topic}", band, topic, sorted(ks), share))
    return out


def allocate(n: int, groups: list[Stratum], equal: bool = False) -> None:
    """``n`` questions over the strata, proportional to traffic share (or equal), largest remainder rounding, each
    capped at its size (a stratum smaller than its quota is taken whole and the rest re-shared)."""
    active = [s for s in groups if s.units and (equal or s.share > 0)]
    left = min(n, sum(len(s.units) for s in active))
    while active and left > 0:
        base = {s.name: 1.0 if equal else s.share for s in active}
        total = sum(base.values())
        quota = {s.name: left * base[s.name] / total for s in active}
        full = [s for s in active if quota[s.name] >= len(s.units)]
        if full:
            for s in full:
                s.allocated = len(s.units)
                left -= s.allocated
            active = [s for s in active if s not in full]
            continue
        floors = {s.name: int(quota[s.name]) for s in active}
        rest = left - sum(floors.values())
        order = sorted(active, key=lambda s: (-(quota[s.name] - floors[s.name]), s.name))
        for i, s in enumerate(order):
            s.allocated = floors[s.name] + (1 if i < rest else 0)
        break


def draw(groups: list[Stratum], seed: int) -> None:
    """A simple random sample of ``allocated`` queries per stratum (seeded per stratum), in key order."""
    for s in groups:
        picked = _rng(seed, s.name).choice(len(s.units), s.allocated, replace=False) if s.allocated else []
        s.drawn = [s.units[i] for i in sorted(int(i) for i in picked)]


def weights(s: Stratum, counts: Mapping[str, int]) -> dict[str, float]:
    """Each drawn query's share of all searches: its stratum's share split by the drawn queries' counts."""
    drawn = sum(counts[k] for k in s.drawn)
    return {k: s.share * counts[k] / drawn for k in s.drawn} if drawn else {}


Embedder = Callable[[list[str]], np.ndarray]
