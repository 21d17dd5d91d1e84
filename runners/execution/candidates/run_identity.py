"""The run identity of (candidate, task): computed here, in `run_identities`, and nowhere else.

A stored result is reused only when its fingerprint equals the one the current config gives, so no change of
data, task settings, encode settings, local weights or experiment parameters ever returns a stale score. The
fingerprint hashes:

* task: the data's fingerprint and the task's settings (results/fingerprints.py `task_identity`);
* candidate: the value's canonical record (candidate_value.py: every setting of the entry and of the values it
  is made of), for each value encoded by an exported backend (not torch fp32) the machine facts that can change
  its numbers (backends/backend_facts.py: runtime versions, build method, CPU features), and the content hash of
  the local files (weights, run file, reranker: results/fingerprints.py `weights_fingerprint`);
* output: the stored ranking depth (`keep_top_k`, by default all of mteb's top_k: the task's largest k).

The runner (reuse), a rerank (is its first stage's stored list current?), the latency pass (is a figure
current?) all call it (`run_identity` is it for one pair); history and the report read the record it stored
(identity.json).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ...results.fingerprints import IDENTITY_VERSION, stored_depth, task_identity, weights_fingerprint
from ..backends.backend_facts import backend_identity


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
        trees.append((value.weight_paths, nodes))
    # 2. what the machine, the local files and the tasks contribute, each asked once (plain loops: a
    # comprehension is a call of this module's, and the walk of a config visits each room once, in order)
    machine: dict[tuple[str, str], dict[str, Any]] = {}
    for _, nodes in trees:
        for _, own in nodes:
            pair = (own["backend"], own["precision"]) if "backend" in own else None
            if pair is not None and pair not in machine:
                machine[pair] = backend_identity(*pair)
    weights: dict[tuple[str, ...], str | None] = {}
    for paths, _ in trees:
        if paths not in weights:
            weights[paths] = weights_fingerprint(paths, memo_dir)
    depths, task_parts = [], []
    for task in tasks:
        depths.append(stored_depth(keep_top_k, task))
        task_parts.append(task_identity(task))
    # 3. the records, hashed as results/fingerprints.canonical_hash hashes (sorted keys, compact, sha256[:16])
    out = []
    for paths, nodes in trees:
        records: dict[tuple[str, ...], dict[str, Any]] = {}
        for path, own in nodes:
            node = {**own, **(machine[(own["backend"], own["precision"])] if "backend" in own else {})}
            records[path] = node
            if path:
                records[path[:-1]][path[-1]] = node
        candidate = {**records[()], "weights": weights[paths]}
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
