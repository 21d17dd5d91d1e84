"""The run identity of (candidate, task): computed here, in `run_identity`, and nowhere else.

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
current?) all call this one function; history and the report read the record it stored (identity.json).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...results.fingerprints import IDENTITY_VERSION, canonical_hash, stored_depth, task_identity, weights_fingerprint
from ..backends.backend_facts import backend_identity
from .candidate_value import CandidateValue


def run_identity(cand: Any, task: Any, keep_top_k: int | None, memo_dir: Path | None = None) -> dict[str, Any]:
    """The full identity record of (candidate, task); its `fingerprint` decides whether a result is reusable.

    `cand` is a CandidateValue or a Candidate holding one. The depth is recorded as the number it resolves to,
    so `keep_top_k: 1000` and the default agree."""
    value: CandidateValue = getattr(cand, "value", cand)

    def resolved(v: CandidateValue) -> dict[str, Any]:  # the record, with each exported backend's machine facts
        own = v.settings
        facts = backend_identity(own["backend"], own["precision"]) if "backend" in own else {}
        return {**own, **facts, **{p.role: resolved(p.value) if p.value is not None else None
                                   for p in v.parts if p.hashed}}

    body = {"v": IDENTITY_VERSION, "task": task_identity(task),
            "candidate": {**resolved(value), "weights": weights_fingerprint(value.weight_paths, memo_dir)},
            "keep_top_k": stored_depth(keep_top_k, task)}
    return {"fingerprint": canonical_hash(body), **body}
