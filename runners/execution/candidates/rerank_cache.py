"""Reranker scores kept on disk, keyed by (reranker identity, query text, document text).

One SQLite file per reranker identity (`<cache_dir>/rerank/<identity>.sqlite`; the identity hashes the
reranker's name, kind, settings and the content of its local weights): a row per (sha256 of the query text,
sha256 of the document text) pair, 16 bytes of sha256 over both as the key. A depth sweep (20, 50, 100) thus
scores each pair once, a re-run scores nothing, and any candidate reranking the same texts with the same
reranker reuses the scores. Writes are SQLite transactions (atomic; concurrent runs wait on its lock); a full
disk or a read-only folder is an `EnvironmentFault` (one line, exit 2).
"""

from __future__ import annotations

import errno
import hashlib
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path

from ...results.store import EnvironmentFault, environment_fault

Pair = tuple[str, str]
_CHUNK = 500  # keys per SELECT (SQLite's bound-parameter limit is 999 on old builds)


def text_hash(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def pair_key(query: str, doc: str) -> bytes:
    return hashlib.sha256(text_hash(query) + text_hash(doc)).digest()[:16]


def _fault(e: sqlite3.Error, path: Path) -> EnvironmentFault | None:
    text = str(e).lower()
    code = errno.ENOSPC if "full" in text else errno.EROFS if "readonly" in text or "read-only" in text else \
        errno.EACCES if "unable to open" in text or "permission" in text else None
    return None if code is None else environment_fault(OSError(code, text, str(path)), path)


class PairScoreCache:
    """Scores of one reranker: `scores(pairs, score_fn)` returns every pair's score, scoring only the new ones."""

    def __init__(self, folder: Path, identity: str) -> None:
        self.path = Path(folder) / "rerank" / f"{identity}.sqlite"
        self.scored = 0  # pairs the reranker scored through this object
        self.reused = 0  # pairs found in the cache
        self._db: sqlite3.Connection | None = None

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                db = sqlite3.connect(self.path, timeout=600)
                db.execute("CREATE TABLE IF NOT EXISTS scores (key BLOB PRIMARY KEY, score REAL NOT NULL)")
                db.commit()
            except OSError as e:
                raise (environment_fault(e, self.path) or e) from None
            except sqlite3.Error as e:
                raise (_fault(e, self.path) or e) from None
            self._db = db
        return self._db

    def lookup(self, keys: Sequence[bytes]) -> dict[bytes, float]:
        db, found = self._conn(), {}
        for i in range(0, len(keys), _CHUNK):
            part = list(keys[i:i + _CHUNK])
            rows = db.execute(f"SELECT key, score FROM scores WHERE key IN ({','.join('?' * len(part))})", part)
            found.update((bytes(k), float(s)) for k, s in rows)
        return found

    def store(self, items: dict[bytes, float]) -> None:
        db = self._conn()
        try:
            with db:  # one transaction: all rows or none
                db.executemany("INSERT OR REPLACE INTO scores (key, score) VALUES (?, ?)", list(items.items()))
        except sqlite3.Error as e:
            raise (_fault(e, self.path) or e) from None

    def scores(self, pairs: Sequence[Pair], score_fn: Callable[[list[Pair]], Sequence[float]]) -> list[float]:
        """Each pair's score; pairs not cached are scored once (duplicates among them too) and stored."""
        keys = [pair_key(q, d) for q, d in pairs]
        known = self.lookup(sorted(set(keys)))
        todo: dict[bytes, Pair] = {}
        for key, pair in zip(keys, pairs):
            if key not in known and key not in todo:
                todo[key] = pair
        if todo:
            new = [float(s) for s in score_fn(list(todo.values()))]
            if len(new) != len(todo):
                raise RuntimeError(f"the reranker returned {len(new)} scores for {len(todo)} pairs")
            fresh = dict(zip(todo, new))
            self.store(fresh)
            known.update(fresh)
        self.scored += len(todo)
        self.reused += len(set(keys)) - len(todo)
        return [known[k] for k in keys]

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
