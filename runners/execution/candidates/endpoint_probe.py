"""The probe id of an embedding endpoint: what the server answered to the probe texts (remote/probe_text.py),
as a stable id in the run identity and the cache folder's name.

The answer is one vector per probe text the server embedded, plus the probes it refused (a server that refuses
inputs over its limit, e.g. OpenAI or vLLM answering HTTP 400, still answers the shorter probes; which ones it
refuses is part of the answer). An answer within cosine 1e-5 of one seen before under this results name, probe
by probe, with the same refusals, keeps that id (a server's batch-dependent float noise is not a new model); any
other answer is a new id. The answers seen are kept in `endpoint-probes.json` of the embedding cache folder, so
the id is the same in the next process. One answered probe and no refusal gives the id the single probe gave
before the long probes, so stored identities of that form are unchanged (tests/test_identity_compat.py).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from ...results.store import atomic_write_json, read_json

PROBE_FILE = "endpoint-probes.json"
PROBE_COSINE = 1 - 1e-5
_PROBES: dict[str, list[tuple[str, np.ndarray, tuple[str, ...]]]] = {}  # results name -> answers seen (process)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Every probe's vector of `a` within cosine 1e-5 of `b`'s."""
    if a.shape != b.shape:
        return False
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    cos = (a64 * b64).sum(1) / np.maximum(np.linalg.norm(a64, axis=1) * np.linalg.norm(b64, axis=1), 1e-30)
    return bool((cos >= PROBE_COSINE).all())


def _from_disk(entry: Any) -> tuple[str, np.ndarray, tuple[str, ...]] | None:
    if not isinstance(entry, dict) or "id" not in entry:
        return None
    if "vectors" in entry:
        vectors = np.asarray(entry["vectors"], np.float32)
    elif "vector" in entry:  # written before the long probes: one probe
        vectors = np.asarray([entry["vector"]], np.float32)
    else:
        return None
    return str(entry["id"]), vectors, tuple(str(r) for r in entry.get("refused", []))


def probe_id(name: str, vectors: np.ndarray, memo_dir: Path | None, refused: tuple[str, ...] = ()) -> str:
    """A stable id of the probes' answer under this results name (module docstring): an earlier id when every
    vector is within cosine 1e-5 of the one it was given for and the refusals are the same, else a hash of the
    vectors rounded to 4 decimals (and of the refusals, when any)."""
    vectors = np.atleast_2d(np.asarray(vectors, np.float32))
    refused = tuple(refused)
    known = list(_PROBES.get(name, []))
    path = Path(memo_dir) / PROBE_FILE if memo_dir is not None else None
    disk: dict[str, Any] = {}
    if path is not None and path.is_file():
        try:
            loaded = read_json(path)
            disk = loaded if isinstance(loaded, dict) else {}
        except (OSError, ValueError):
            disk = {}
        entries = disk.get(name, [])
        known += [seen for seen in map(_from_disk, entries if isinstance(entries, list) else []) if seen is not None]
    for pid, seen, seen_refused in known:
        if seen_refused == refused and _same(vectors, seen):
            _remember(name, pid, vectors, refused)
            return pid
    digest = hashlib.sha256(np.round(vectors.astype(np.float64), 4).astype(np.float32).tobytes())
    if refused:
        digest.update(("|refused:" + ",".join(refused)).encode())
    pid = digest.hexdigest()[:16]
    _remember(name, pid, vectors, refused)
    if path is not None:
        kept = [e for e in disk.get(name, []) if isinstance(e, dict)] if isinstance(disk.get(name), list) else []
        kept.append({"id": pid, "vectors": [[float(x) for x in row] for row in vectors], "refused": list(refused)})
        try:  # a memo only: unwritable means a (spurious) new id next time, never a stale score
            atomic_write_json(path, {**disk, name: kept[-16:]})
        except OSError:
            pass
    return pid


def _remember(name: str, pid: str, vectors: np.ndarray, refused: tuple[str, ...]) -> None:
    seen = _PROBES.setdefault(name, [])
    if all(p != pid for p, _, _ in seen):
        seen.append((pid, vectors, refused))
