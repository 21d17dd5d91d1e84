"""The run identity of (candidate, task): computed here, in `run_identities`, and nowhere else.

A stored result is reused only when its fingerprint equals the one the current config gives, so no change of
data, task settings, encode settings, local weights or experiment parameters ever returns a stale score. The
fingerprint hashes:

* task: the data's fingerprint and the task's settings (results/fingerprints.py `task_identity`);
* candidate: the value's canonical record (candidate_value.py: every setting of the entry and of the values it
  is made of), for each value encoded by an exported backend (not torch fp32) the machine facts that can change
  its numbers (backends/backend_facts.py: runtime versions, build method, CPU features), and the content hash of
  the local files (weights, run file, reranker: `value_weights`);
* output: the stored ranking depth (`keep_top_k`, by default all of mteb's top_k: the task's largest k).

The runner (reuse), a rerank (is its first stage's stored list current?), the latency pass (is a figure
current?) all call it (`run_identity` is it for one pair); history and the report read the record it stored
(identity.json).

The weights part is computed in `value_weights` (results/fingerprints.py `weights_fingerprint` of the value's
local files) and nowhere else in the candidates: the identity, the embedding cache folder (`wrap_cache` is handed
the figure by its caller: the cache room sits below this one), the process-wide dedupe of loaded dense models
(experiment_candidates.py), a reranker's pair-score cache (`reranker_cache_id`) and a run file's read memo all
read this same figure, so a key cannot disagree with the identity about which files a candidate is.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...results.fingerprints import IDENTITY_VERSION, canonical_hash, stored_depth, task_identity, weights_fingerprint
from ..backends.backend_facts import backend_identity


def value_weights(cand: Any, memo_dir: Path | None = None, *, paths: Sequence[str] | None = None) -> str | None:
    """The weights part of a candidate's identity: the content hash of its value's local files (None: it has none).

    `cand` is a CandidateValue or a Candidate holding one; `paths` instead hashes those files (a reranker's own, a
    run file). `memo_dir` only says where the per-file digests are remembered (the figure never depends on it).
    Not memoised by path here: a file rewritten in a long-lived process must change the figure, and
    `weights_fingerprint` already re-reads only files whose (size, mtime) changed, so a repeat costs a few stats."""
    if paths is None:
        paths = getattr(getattr(cand, "value", cand), "weight_paths", ())
    return weights_fingerprint(tuple(paths), memo_dir)


def reranker_cache_id(value: Any, memo_dir: Path | None = None) -> str:
    """The pair-score cache of a rerank value's reranker: its settings and the content of its files (the value's
    files beyond its first stage's), so every depth of a sweep, and every first stage, shares one cache."""
    base = value.part("base")
    own = value.weight_paths[len(base.weight_paths) if base is not None else 0:]
    return canonical_hash({**value.settings["reranker"], "weights": value_weights(value, memo_dir, paths=own)}, 24)


def run_identities(cands: list[Any], tasks: list[Any], keep_top_k: int | None,
                   memo_dir: Path | None = None) -> list[list[dict[str, Any]]]:
    """The identity record of every (candidate, task), `[candidate][task]`: the one place a run identity is made.

    `cands` are CandidateValues or Candidates holding one. Each input is gathered once, room by room: the values'
    records, the machine facts of their exported backends, the local files' and the tasks' fingerprints; then
    each record is assembled and hashed here. The depth is recorded as the number it resolves to, so
    `keep_top_k: 1000` and the default agree."""
    # 1. each value's nodes (itself and its hashed parts, depth first) with where they sit in its record
    trees = []
    for cand in cands:
        value = getattr(cand, "value", cand)
        nodes, stack = [], [((), value)]
        while stack:
            path, node = stack.pop()
            own = json.loads(node.settings_json)
            nodes.append((path, own))
            for part in reversed(node.parts):
                if part.hashed and part.value is not None:
                    stack.append(((*path, part.role), part.value))
                elif part.hashed:
                    own[part.role] = None
        trees.append((value, nodes))
    # 2. what the machine, the local files and the tasks contribute, each asked once (plain loops: a
    # comprehension is a call of this module's, and the walk of a config visits each room once, in order)
    machine: dict[tuple[str, str], dict[str, Any]] = {}
    for _, nodes in trees:
        for _, own in nodes:
            pair = (own["backend"], own["precision"]) if "backend" in own else None
            if pair is not None and pair not in machine:
                machine[pair] = backend_identity(*pair)
    weights: dict[tuple[str, ...], str | None] = {}
    for value, _ in trees:  # value_weights' own call, inline (calling back into this room between the results
        if value.weight_paths not in weights:  # room's calls would be a climb of the walk, tests/test_config_walk.py)
            weights[value.weight_paths] = weights_fingerprint(tuple(value.weight_paths), memo_dir)
    depths, task_parts = [], []
    for task in tasks:
        depths.append(stored_depth(keep_top_k, task))
        task_parts.append(task_identity(task))
    # 3. the records, hashed as results/fingerprints.canonical_hash hashes (sorted keys, compact, sha256[:16])
    out = []
    for value, nodes in trees:
        records: dict[tuple[str, ...], dict[str, Any]] = {}
        for path, own in nodes:
            node = {**own, **(machine[(own["backend"], own["precision"])] if "backend" in own else {})}
            records[path] = node
            if path:
                records[path[:-1]][path[-1]] = node
        candidate = {**records[()], "weights": weights[value.weight_paths]}
        row = []
        for task_part, depth in zip(task_parts, depths):
            body = {"v": IDENTITY_VERSION, "task": task_part, "candidate": candidate, "keep_top_k": depth}
            text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
            row.append({"fingerprint": hashlib.sha256(text.encode()).hexdigest()[:16], **body})
        out.append(row)
    return out


def run_identity(cand: Any, task: Any, keep_top_k: int | None, memo_dir: Path | None = None) -> dict[str, Any]:
    """The identity record of one (candidate, task) (run_identities); its `fingerprint` decides reuse."""
    return run_identities([cand], [task], keep_top_k, memo_dir)[0][0]
