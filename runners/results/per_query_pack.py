"""The per-query file in columns, for a baseline to commit: the same numbers, a fraction of the bytes.

`run` writes ``per_query_<split>.json`` as ``{"subsets": {subset: {metric: {query id: score}}}}``, indented: every
query id is written once per metric (42 metrics), every score as a full-precision float, 1.1 MB for 1,190 questions
and one candidate. A baseline (`baseline save`, runners/analysis/gate/baseline_copy.py) keeps every metric (`check
--metric` may name any) but writes ``per_query_<split>.json.gz``: the ids once per subset, each metric a list in
that order, gzipped: about 40 kB. Reading it back gives the very dict `run` wrote (same keys, same order, same
floats: JSON round-trips a float exactly), so every reader of per-query scores sees no difference
(results/store.py `read_per_query`). A metric whose queries are not the subset's ids in the same order stays a dict.
"""

from __future__ import annotations

from typing import Any

#: the key that marks a packed file, and its version
PACKED = "packed_columns"
VERSION = 1


def pack(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (a per-query file's JSON) with each subset's ``{metric: {id: score}}`` as ids + score lists."""
    subsets: dict[str, Any] = {}
    for name, metrics in (data.get("subsets") or {}).items():
        first = next(iter(metrics.values()), {})
        ids = list(first) if isinstance(first, dict) else []
        columns: dict[str, Any] = {}
        for metric, scores in metrics.items():
            columns[metric] = [scores[q] for q in ids] if isinstance(scores, dict) and list(scores) == ids else scores
        subsets[name] = {"ids": ids, "metrics": columns}
    return {**data, "subsets": subsets, PACKED: VERSION}


def unpack(data: Any) -> Any:
    """The per-query JSON as `run` wrote it, from either form (anything else is returned as it is)."""
    if not isinstance(data, dict) or PACKED not in data:
        return data
    if data[PACKED] != VERSION:
        raise ValueError(f"per-query columns version {data[PACKED]} is newer than this private-mteb reads "
                         f"({VERSION}): upgrade private-mteb")
    subsets = {}
    for name, packed in data["subsets"].items():
        ids = packed["ids"]
        subsets[name] = {metric: dict(zip(ids, column, strict=True)) if isinstance(column, list) else column
                         for metric, column in packed["metrics"].items()}
    return {k: v for k, v in data.items() if k != PACKED} | {"subsets": subsets}
