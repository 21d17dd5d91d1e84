"""The fingerprints a run identity is made of, and how a stored identity record is read.

The identity itself is computed in one function, runners/execution/candidates/run_identity.py; this module
holds what it hashes with (`canonical_hash`), the data's and the task's fingerprint (`task_identity`), the
local files' (`weights_fingerprint`), the stored depth, and which parts of two records differ
(`changed_parts`). Its fingerprint covers:

* task: the dataset revision (content hash of the collection), the TaskConfig's
  `settings_fingerprint()` when the task has one, and eval splits, main score, k-values, prompts and
  `ignore_identical_ids` as mteb sees them;
* candidate: results name, revision, kind, max_seq_length, model_kwargs, factory + factory_kwargs,
  trust_remote_code, experiment parameters (and the base model's identity for experiments), and for a
  local model the content hash of its files (weights, config, tokenizer); for an encode backend other than
  torch fp32, the backend, precision, the versions of the packages that export and run it and the build
  method where it is more than a conversion (openvino int8: NNCF post-training quantisation + calibration set),
  and for bf16 / int8 the CPU features that decide their numerics (cpu_features.py): those facts are
  runners/execution/backends/backend_facts.py's;
* output: the stored ranking depth (`keep_top_k`, by default all of mteb's top_k: the task's largest k).

Hashing a local model folder reads every byte once; the digest of each file is remembered by
(path, size, mtime) in `<cache_dir>/weights-fingerprints.json`, so an unchanged model costs a few
`stat` calls.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .store import atomic_write_json, file_digest, read_json

IDENTITY_VERSION = 1
MEMO_FILE = "weights-fingerprints.json"
#: files of a model folder that never change an embedding
_SKIP_NAMES = {"README.md", "LICENSE", ".gitattributes"}
_MEMO: dict[str, str] = {}  # "path|size|mtime_ns" -> sha256, process-wide


def canonical_hash(obj: Any, length: int = 16) -> str:
    data = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(data.encode()).hexdigest()[:length]


def _files(root: Path) -> Iterable[Path]:
    if root.is_file():
        yield root
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.startswith(".") and name not in _SKIP_NAMES and not name.endswith((".lock", ".tmp")):
                yield Path(dirpath) / name


def weights_fingerprint(paths: Sequence[str], memo_dir: Path | None = None) -> str | None:
    """Content hash of local model files (None when there are none); unchanged files are not re-read."""
    if not paths:
        return None
    memo_path = Path(memo_dir) / MEMO_FILE if memo_dir else None
    disk: dict[str, str] = {}
    if memo_path is not None and memo_path.exists():
        try:
            loaded = read_json(memo_path)
            disk = loaded if isinstance(loaded, dict) else {}
        except (OSError, ValueError):
            disk = {}
    new = False
    parts = []
    for p in paths:
        root = Path(p).resolve()
        if not root.exists():
            parts.append([str(p), "missing"])
            continue
        for f in _files(root):
            st = f.stat()
            key = f"{f}|{st.st_size}|{st.st_mtime_ns}"
            digest = _MEMO.get(key) or disk.get(key)
            if digest is None:
                digest = file_digest(f) or "unreadable"
                new = True
            _MEMO[key] = digest
            disk[key] = digest
            rel = f.name if root.is_file() else f.relative_to(root).as_posix()
            parts.append([rel, digest])
    if new and memo_path is not None:
        try:  # a memo only: a read-only cache folder just means hashing again next time
            atomic_write_json(memo_path, disk)
        except Exception:
            pass
    return canonical_hash(parts, 32)


def task_identity(task: Any) -> dict[str, Any]:
    """Everything about a task that changes its scores for a given model."""
    meta = task.metadata
    cfg = getattr(task, "task_config", None)
    settings = getattr(cfg, "settings_fingerprint", None)
    out = {
        "name": meta.name,
        "dataset_revision": str(meta.dataset.get("revision")),
        "settings": settings() if callable(settings) else None,
        "splits": list(task.eval_splits),
        "main_score": meta.main_score,
        "k_values": list(getattr(task, "k_values", []) or []),
        "prompt": meta.prompt,
        "ignore_identical_ids": bool(getattr(task, "ignore_identical_ids", False)),
    }
    used = getattr(task, "labels_used", None)
    if used and used.get("use_llm"):  # LLM grades count: which, recorded with the result (absent otherwise, so
        out["labels"] = used          # results scored on human grades keep their fingerprint)
    return out


def stored_depth(keep_top_k: int | None, task: Any) -> int:
    """Documents stored per query: `keep_top_k`, or (None) every document mteb ranked and scored.

    mteb retrieves its top_k = the task's largest k value, and its @k metrics read that list; storing all of
    it is what lets `export run` -> `kind: run` (and a rerank of the stored list) give the same @1000."""
    if keep_top_k is not None:
        return int(keep_top_k)
    k_values = list(getattr(task, "k_values", None) or [])
    return max(k_values) if k_values else 1000  # mteb's default k values end at 1000


def changed_parts(old: dict[str, Any] | None, new: dict[str, Any]) -> list[str]:
    """Which parts of an identity differ (for a log line saying why a result is re-run)."""
    if not old:
        return ["no identity recorded"]
    out = []
    for part in ("task", "candidate"):
        a, b = old.get(part) or {}, new.get(part) or {}
        out += [f"{part}.{k}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    if old.get("keep_top_k") != new.get("keep_top_k"):
        out.append("keep_top_k")
    return out or ["fingerprint"]
