"""Descriptive statistics of a collection (what `private-mteb tasks stats` prints)."""

from __future__ import annotations

from pathlib import Path
from statistics import mean, median
from typing import Any

from .collection import Collection
from .config import resolve_task_config
from .sources import load_collection


def describe(collection: Collection) -> dict[str, Any]:
    """Counts, text lengths (characters and words) and labels per query, per split."""
    doc_chars = [len(d.get("title", "")) + len(d["text"]) for d in collection.corpus.values()]
    doc_words = [len(d["text"].split()) + len(d.get("title", "").split()) for d in collection.corpus.values()]
    out: dict[str, Any] = {
        "documents": len(collection.corpus),
        "queries (all)": len(collection.queries),
        "documents with title": sum(1 for d in collection.corpus.values() if d.get("title")),
        "document chars mean": mean(doc_chars) if doc_chars else 0.0,
        "document chars median": float(median(doc_chars)) if doc_chars else 0.0,
        "document chars max": max(doc_chars, default=0),
        "document words mean": mean(doc_words) if doc_words else 0.0,
    }
    for split in collection.splits:
        qrels = collection.qrels[split]
        qlens = [len(collection.queries[q]) for q in qrels]
        positives = [sum(1 for g in d.values() if g > 0) for d in qrels.values()]
        grades: dict[int, int] = {}
        for d in qrels.values():
            for g in d.values():
                grades[g] = grades.get(g, 0) + 1
        out[f"{split}: queries"] = len(qrels)
        out[f"{split}: judgments"] = sum(len(d) for d in qrels.values())
        out[f"{split}: query chars mean"] = mean(qlens) if qlens else 0.0
        out[f"{split}: relevant docs per query mean"] = mean(positives) if positives else 0.0
        out[f"{split}: relevant docs per query max"] = max(positives, default=0)
        out[f"{split}: queries with >1 relevant doc"] = sum(1 for p in positives if p > 1)
        out[f"{split}: queries with no positive label"] = sum(1 for p in positives if p == 0)
        out[f"{split}: grade counts"] = ", ".join(f"{g}: {n}" for g, n in sorted(grades.items()))
        if collection.spans.get(split):
            out[f"{split}: queries with evidence spans"] = len(collection.spans[split])
    tag_names = sorted({k for tags in collection.query_tags.values() for k in tags})
    for tag in tag_names:
        values: dict[str, int] = {}
        for tags in collection.query_tags.values():
            if tag in tags:
                values[str(tags[tag])] = values.get(str(tags[tag]), 0) + 1
        out[f"tag '{tag}'"] = ", ".join(f"{v}: {n}" for v, n in sorted(values.items()))
    for kind, n in sorted(collection.warning_counts().items()):
        out[f"warning: {kind}"] = n
    return out


def collection_stats(name_or_path: str | Path) -> dict[str, Any]:
    cfg = resolve_task_config(name_or_path)
    return describe(load_collection(cfg.source, cfg.base_dir, cfg.name))
