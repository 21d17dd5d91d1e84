"""`questions sample`: a query log -> a stratified, redacted sample of questions added to a task, awaiting judgment.

The steps, each in its module: read the log in chunks (log_reader.py), redact / filter / merge (log_aggregate.py),
band and cluster into strata, allocate and draw (log_strata.py), and append the rows (added_store.py). This module
wires them and writes the report, which holds counts, thresholds and redacted examples only.

Same log + same parameters (seed, date) -> the same bytes: every step is ordered (sorted keys, seeded generators
per stratum), vectors come from the embedding cache, and the date is a parameter.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from custom_tasks.config import TaskConfig

from .log_aggregate import Aggregate, Rules, aggregate, drop_known, merge_near_duplicates
from .log_reader import LogColumns, LogSpan, read_log
from .log_strata import (Bands, Embedder, Stratum, allocate, draw, embedded_subset, frequency_bands, strata, topics,
                         weights)

SHOWN_EXAMPLES = 3


@dataclass(frozen=True)
class SampleParams:
    """Everything that decides which questions are drawn; written into each row's provenance."""

    size: int = 100
    allocation: Literal["proportional", "equal"] = "proportional"
    seed: int = 0
    topics: int = 8
    band_shares: tuple[float, float] = (1 / 3, 2 / 3)
    band_counts: tuple[int, int] | None = None  # explicit count thresholds (head >=, torso >=) instead of shares
    embed_limit: int = 5_000
    date: str = ""  # ISO date of the sample (provenance)
    model: str = ""  # the embedding model of the topics
    split: str | None = None  # the task split the questions join (needed when the task has several)
    rules: Rules = field(default_factory=Rules)

    def provenance(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k not in ("date", "rules", "split")}
        out["band_shares"] = [round(s, 6) for s in self.band_shares]
        out["rules"] = {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self.rules).items()}
        return out


@dataclass
class SampleOutcome:
    """The rows to append and what the report says about how they were chosen."""

    rows: list[dict[str, Any]]
    lines: list[str]
    agg: Aggregate
    bands: Bands
    strata: list[Stratum]
    log_sha256: str


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def query_id(key: str) -> str:
    """A stable id from the normalised text: the same question sampled twice gets the same id."""
    return "log-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


def _topic_labels(agg: Aggregate, bands: Bands, params: SampleParams, embed: Embedder | None
                  ) -> tuple[list[str], np.ndarray, str]:
    """The embedded queries, their topic labels and the line saying how topics were made."""
    if embed is None or params.topics <= 1:
        keys = sorted(agg.entries)
        return keys, np.zeros(len(keys), dtype=np.int64), "topics: none (one topic: --topics 1 or no embedder)"
    keys = embedded_subset(bands, params.embed_limit, params.seed)
    vectors = embed([agg.text(k) for k in keys])
    labels = topics(vectors, params.topics, params.seed)
    sub = "" if len(keys) == len(agg.entries) else (
        f", embedded {len(keys)} of {len(agg.entries)} (--embed-limit {params.embed_limit} split over the "
        f"bands: each band whole when it fits in its part, else a random subset whose topic shares stand for it)")
    return keys, labels, (f"topics: k-means (k={int(labels.max(initial=0)) + 1}, seed {params.seed}) on the "
                          f"query vectors of {params.model or 'the embedder'}{sub}")


def sample_log(log: Path, cols: LogColumns, task: TaskConfig, params: SampleParams, redactor: Any,
               embed: Embedder | None, known_texts: list[str] = ()) -> SampleOutcome:
    """The sample of ``log`` for ``task`` (nothing written: ``write_sample`` appends the rows)."""
    span = LogSpan()
    digest = file_sha256(log)
    agg = aggregate(read_log(log, cols, span), redactor, params.rules)
    merge_near_duplicates(agg, params.rules, SHOWN_EXAMPLES)
    drop_known(agg, known_texts)
    counts = {k: agg.count(k) for k in sorted(agg.entries)}
    bands = frequency_bands(counts, None if params.band_counts else params.band_shares, params.band_counts)
    if not counts:
        return SampleOutcome([], _report(log, cols, span, agg, bands, [], "", params, redactor), agg, bands, [], digest)
    keys, labels, topic_line = _topic_labels(agg, bands, params, embed)
    groups = strata(bands, keys, labels, counts)
    allocate(params.size, groups, equal=params.allocation == "equal")
    draw(groups, params.seed)
    prov = {"log": log.name, "log_sha256": digest, "log_span": span.text(), "command": "questions sample",
            "date": params.date, "parameters": params.provenance()}
    rows = []
    for s in groups:
        for key, w in weights(s, counts).items():
            row: dict[str, Any] = {"query_id": query_id(key), "query": agg.text(key), "relevant": {},
                                   "tags": {"source": "log", "stratum": s.name, "band": s.band,
                                            "weight": float(f"{w:.6g}")},
                                   "provenance": {**prov, "searches": counts[key]}}
            if params.split:
                row["split"] = params.split
            rows.append(row)
    lines = _report(log, cols, span, agg, bands, groups, topic_line, params, redactor)
    return SampleOutcome(rows, lines, agg, bands, groups, digest)


def _report(log: Path, cols: LogColumns, span: LogSpan, agg: Aggregate, bands: Bands, groups: list[Stratum],
            topic_line: str, params: SampleParams, redactor: Any) -> list[str]:
    """What the user reads: counts, rules, thresholds, allocation; the only texts are redacted questions."""
    out = [f"read {log.name}: {agg.rows} rows, {agg.searches} searches"
           + (f", {span.text()}" if span.text() else "") + f"; columns: {cols.describe()}"]
    kinds = ", ".join(f"{k} {n}" for k, n in sorted(agg.redacted.items(), key=lambda x: (-x[1], x[0])))
    out.append(f"redacted before anything else (searches whose query held the kind; values never shown): "
               f"{kinds or 'nothing found'}")
    regions = getattr(redactor, "phone_regions", None)
    if regions:
        out.append(f"  phone numbers in national form read as: {', '.join(regions)} (--phone-region); long digit "
                   f"runs from {getattr(redactor, 'min_digits', '?')} digits")
    out += params.rules.lines()
    dropped = "; ".join(f"{why}: {n} searches ({agg.dropped_distinct[why]} distinct)"
                        for why, n in sorted(agg.dropped.items()))
    out.append(f"dropped: {dropped or 'none'}")
    out.append(f"near-duplicates: {agg.near_groups} group(s), {agg.near_merged} question(s) merged into the most "
               f"searched of their group")
    for ex in agg.near_examples:
        out.append(f"  e.g. {ex[0]!r} <- " + ", ".join(repr(t) for t in ex[1:]))
    out.append(f"distinct questions left: {len(agg.entries)}")
    out += bands.lines(sum(bands.traffic.values()), None if params.band_counts else params.band_shares)
    if not groups:
        out.append("nothing left to sample")
        return out
    out.append(topic_line)
    how = "proportional to the searches" if params.allocation == "proportional" else "equal per stratum"
    drawn = sum(s.allocated for s in groups)
    out.append(f"allocation ({how}; a stratum smaller than its share is taken whole), {drawn} of {params.size} asked, "
               f"seed {params.seed}:")
    for s in groups:
        out.append(f"  {s.name:<12} share {s.share:7.2%}  queries {len(s.units):>7}  sampled {s.allocated:>4}")
    return out


def write_sample(task_yaml: Path, outcome: SampleOutcome) -> Path | None:
    """Append the rows to the task's added questions (a new data revision; nothing existing is rewritten)."""
    if not outcome.rows:
        return None
    from .added_store import append_questions

    return append_questions(task_yaml, outcome.rows)


def sample_questions(log: Path, task_yaml: Path, params: SampleParams, redactor: Any, embed: Embedder | None,
                     columns: dict[str, str | None] | None = None, write: bool = True
                     ) -> tuple[SampleOutcome, Path | None]:
    """The whole of `questions sample` as an API: columns detected (or named in ``columns``), questions the task
    already has left out, the sample drawn and, with ``write``, appended. Returns the outcome and the file."""
    from custom_tasks.sources import load_collection

    from .log_reader import detect_columns

    task = TaskConfig.from_file(task_yaml)
    cols = detect_columns(log, **(columns or {}))
    known = list(load_collection(task.source, task.base_dir, task.name).queries.values())
    outcome = sample_log(log, cols, task, params, redactor, embed, known)
    return outcome, (write_sample(task_yaml, outcome) if write else None)
