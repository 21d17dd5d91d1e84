"""History records: one (candidate, task) measurement, built from a stored result, and what changed between two.

A record (written by runners/results/history_store.py, one file each) holds: time, the project's git commit
and dirty flag, the run fingerprint with its parts (identity.py) and which of them changed since the previous
record of the same candidate and task, the data revision, corpus size and query count, every stored metric's
mean with its bootstrap CI (resampling.py), and the per-query main-metric scores with each query's text and
labels hashes (never text), so two records pair a query only when its id, text and labels are the same
(pairing.py).

Timelines are keyed by the candidate's label (the config's `label:`, else the last part of its results name):
an entry whose `name:` or `path:` changes under the same label is one timeline with a "model" step.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ...results.history_store import (RECORD_VERSION, HistoryStore, StoredResult, git_state, new_record_id,
                                     stored_result, utc_now)
from ...statistics.resampling import bootstrap_counts, ci_from_boot

#: the parts of a run fingerprint a history step names, in the order they are told
PARTS = ("data", "task settings", "model", "encode settings", "experiment")
_ENCODE_KEYS = {"max_seq_length", "model_kwargs", "keep_top_k", "cpu"}  # cpu: bf16/int8 kernels
_EXPERIMENT_KEYS = {"experiment", "params", "strategy"}


def _short(value: Any, width: int = 40) -> str:
    text = "none" if value is None else str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _part_of(key: str) -> str:
    """identity key ('task.dataset_revision', 'candidate.base.weights', 'keep_top_k') -> the part it belongs to."""
    if key == "task.dataset_revision":
        return "data"
    if key.startswith("task."):
        return "task settings"
    leaf = key.split(".")[-1]
    if leaf in _ENCODE_KEYS:
        return "encode settings"
    if leaf in _EXPERIMENT_KEYS:
        return "experiment"
    return "model"


def _flat(identity: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in ("task", "candidate"):
        for key, value in (identity.get(part) or {}).items():
            if key == "base" and isinstance(value, Mapping):
                out.update({f"{part}.base.{k}": v for k, v in value.items()})
            else:
                out[f"{part}.{key}"] = value
    out["keep_top_k"] = identity.get("keep_top_k")
    return out


def identity_changes(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """(parts that changed, in PARTS order; one 'part: key old -> new' line per changed key).

    No previous identity -> (['first record'], []); same fingerprint -> ([], [])."""
    if not old:
        return ["first record"], []
    if old.get("fingerprint") and old.get("fingerprint") == new.get("fingerprint"):
        return [], []
    a, b = _flat(old), _flat(new)
    details, parts = [], set()
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            part = _part_of(key)
            parts.add(part)
            name = key.split(".", 1)[-1] if key != "keep_top_k" else key
            details.append(f"{part}: {name} {_short(a.get(key))} -> {_short(b.get(key))}")
    return [p for p in PARTS if p in parts] or ["fingerprint"], details


def identity_of(record: Mapping[str, Any]) -> dict[str, Any]:
    """A record's run identity; for a result stored without identity.json, what the record itself tells."""
    identity = record.get("identity")
    if identity:
        return dict(identity)
    cand = record.get("candidate") or {}
    return {"task": {"dataset_revision": record.get("dataset_revision")},
            "candidate": {"name": cand.get("name"), "revision": cand.get("revision")}}


def record_changes(previous: Mapping[str, Any] | None, current: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """`identity_changes` between two records (the previous one None: the first record)."""
    return identity_changes(None if previous is None else identity_of(previous), identity_of(current))


def metric_summaries(scores: Mapping[str, Mapping[str, float]], n_resamples: int = 10_000, seed: int = 0,
                     confidence: float = 0.95) -> dict[str, dict[str, float]]:
    """metric -> {mean, ci_low, ci_high, n} with percentile bootstrap CIs: one counts matrix for every
    metric whose queries are all scored (the usual case), the others on their own scored queries."""
    out: dict[str, dict[str, float]] = {}
    names = sorted(scores)
    if not names:
        return out
    ids = sorted(scores[names[0]])
    full = [m for m in names if sorted(scores[m]) == ids]
    x = np.array([[_num(scores[m][q]) for m in full] for q in ids], dtype=np.float64).reshape(len(ids), len(full))
    finite = np.all(np.isfinite(x), axis=0)
    together = [m for m, ok in zip(full, finite) if ok]
    if together and ids:
        cols = x[:, [full.index(m) for m in together]]
        boot = bootstrap_counts(len(ids), n_resamples, seed) @ cols / len(ids)
        low, high = ci_from_boot(boot, cols, confidence, "percentile")
        for j, m in enumerate(together):
            out[m] = {"mean": float(cols[:, j].mean()), "ci_low": float(low[j]), "ci_high": float(high[j]),
                      "n": len(ids)}
    for m in names:
        if m in out:
            continue
        vals = np.array([v for v in (_num(s) for s in scores[m].values()) if math.isfinite(v)])
        if vals.size == 0:
            out[m] = {"mean": float("nan"), "ci_low": float("nan"), "ci_high": float("nan"), "n": 0}
            continue
        boot = bootstrap_counts(vals.size, n_resamples, seed) @ vals[:, None] / vals.size
        low, high = ci_from_boot(boot, vals[:, None], confidence, "percentile")
        out[m] = {"mean": float(vals.mean()), "ci_low": float(low[0]), "ci_high": float(high[0]), "n": int(vals.size)}
    return out


def _num(v: Any) -> float:
    try:
        return float("nan") if v is None else float(v)
    except (TypeError, ValueError):
        return float("nan")


def build_record(results_dir: Path, model_name: str, label: str, task: str, *, revision: str = "",
                 corpus_size: int | None = None, git: dict[str, Any] | None = None, status: str = "ran",
                 benchmark: str = "", previous: Mapping[str, Any] | None = None, split: str = "test",
                 n_resamples: int = 10_000, seed: int = 0, confidence: float = 0.95) -> dict[str, Any] | None:
    """The history record of the stored result of `model_name` on `task` (None when nothing is stored)."""
    stored = stored_result(results_dir, model_name, task, split)
    if stored is None:
        return None
    identity = stored.identity
    main = (identity.get("task") or {}).get("main_score") or "ndcg_at_10"
    if main not in stored.scores:
        main = "ndcg_at_10" if "ndcg_at_10" in stored.scores else sorted(stored.scores)[0]
    per_query = stored.scores[main]
    ids = sorted(per_query)
    when = utc_now()
    record = {
        "v": RECORD_VERSION, "id": new_record_id(when), "time": when.isoformat(), "git": git,
        "benchmark": benchmark, "status": status,
        "candidate": {"name": model_name, "label": label, "revision": revision or (identity.get("candidate") or {}).get("revision")},
        "task": task, "split": split, "main_score": main,
        "fingerprint": identity.get("fingerprint"), "identity": identity,
        "previous": (previous or {}).get("id"), "changed": [], "changed_detail": [],
        "dataset_revision": stored.dataset_revision, "corpus_size": corpus_size, "queries": len(ids),
        "metrics": metric_summaries(stored.scores, n_resamples, seed, confidence),
        "ci": {"confidence": confidence, "resamples": n_resamples, "seed": seed, "method": "percentile"},
        "per_query": {"metric": main, "ids": ids, "text": [stored.text_hashes.get(q) for q in ids],
                      "labels": [stored.label_hashes.get(q) for q in ids],
                      "scores": [None if not math.isfinite(_num(per_query[q])) else _num(per_query[q]) for q in ids]},
    }
    record["changed"], record["changed_detail"] = record_changes(previous, record)
    return record


def fingerprinted(record: Mapping[str, Any]) -> dict[str, tuple[str | None, float]]:
    """A record's per-query scores as one side of pairing.pair_queries: {id: (text:labels hash or None, score)}."""
    pq = record.get("per_query") or {}
    ids, scores = pq.get("ids") or [], pq.get("scores") or []
    text = pq.get("text") or [None] * len(ids)
    labels = pq.get("labels") or [None] * len(ids)
    out = {}
    for q, t, lab, s in zip(ids, text, labels, scores):
        out[str(q)] = (_fingerprint(t, lab), _num(s))
    return out


def _fingerprint(text: Any, labels: Any) -> str | None:
    """The key pairing.pair_queries compares: text and labels hash together (None when either is unknown)."""
    return f"{text}:{labels}" if isinstance(text, str) and isinstance(labels, str) else None


def result_fingerprinted(stored: StoredResult, metric: str) -> dict[str, tuple[str | None, float]]:
    """A stored result's per-query `metric` as one side of pairing.pair_queries (as `fingerprinted` for a record)."""
    return {str(q): (_fingerprint(stored.text_hashes.get(q), stored.label_hashes.get(q)), _num(v))
            for q, v in stored.scores[metric].items()}


def accepted_map(store: HistoryStore, records: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], str]:
    """(candidate label, task) -> the record id `history accept` marked last (only those with a mark)."""
    keys = {(str(r["candidate"].get("label")), str(r["task"])) for r in records}
    return {k: rid for k in sorted(keys) if (rid := store.accepted_id(*k))}


def latest(records: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    found = list(records)
    return found[-1] if found else None


def record_run(history_dir: Path | None, results_dir: Path, entries: Iterable[Mapping[str, Any]], *,
               project_dir: Path | None = None, benchmark: str = "", n_resamples: int = 10_000, seed: int = 0,
               confidence: float = 0.95) -> tuple[list[dict[str, Any]], list[str]]:
    """One record per completed (candidate, task) of a run, appended to `history_dir` when given (else only
    built, e.g. for MLflow); returns (records, damaged history files seen).

    `entries`: {name, label, revision, task, status ('ran' | 'skipped'), corpus_size}. A reused result
    ('skipped') is recorded only when the latest record of that candidate and task has another fingerprint
    (or there is none; without a history folder: never): re-running an unchanged config adds nothing.
    """
    store = HistoryStore(history_dir) if history_dir is not None else None
    git = git_state(project_dir) if project_dir is not None else None
    written: list[dict[str, Any]] = []
    damaged: list[str] = []
    for e in entries:
        if e.get("status") not in ("ran", "skipped") or (store is None and e.get("status") != "ran"):
            continue
        previous = None
        if store is not None:
            seen = store.read(e["label"], e["task"])
            damaged += [d for d in seen.damaged if d not in damaged]
            previous = latest(seen.records)
        record = build_record(results_dir, e["name"], e["label"], e["task"], revision=e.get("revision", ""),
                              corpus_size=e.get("corpus_size"), git=git, status=str(e["status"]),
                              benchmark=benchmark, previous=previous, n_resamples=n_resamples, seed=seed,
                              confidence=confidence)
        if record is None:
            continue
        if e["status"] == "skipped" and previous is not None and previous.get("fingerprint") == record["fingerprint"]:
            continue
        if store is not None:
            store.append(record)
        written.append(record)
    return written, damaged
