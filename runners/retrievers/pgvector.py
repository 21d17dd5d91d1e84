"""PostgreSQL + pgvector as a candidate: `factory: runners.retrievers.pgvector:make`.

    - name: northwind/pgvector-hnsw
      kind: retriever
      factory: runners.retrievers.pgvector:make
      factory_kwargs: {model: sentence-transformers/all-MiniLM-L6-v2, index: hnsw, m: 16, ef_construction: 64,
                       ef_search: 40, dsn: "postgresql://user@host/db"}

Each (task, split) gets a fresh table `<table>` (id text primary key, embedding vector(d)) loaded with
`COPY ... FORMAT BINARY` from the embedding cache; then one `SELECT ... ORDER BY embedding <op> $1 LIMIT k`
per query, as an application asks it. `<op>` is `<=>` (cosine distance; score = 1 - distance) for a cosine
model, `<#>` (negative inner product; score = -value) for a dot-product one.

* `index: flat`: no index, a sequential scan: exact search (reproduces the model's own run).
* `index: hnsw` (`m`, `ef_construction`, `ef_search` -> `SET hnsw.ef_search`, `iterative_scan` ->
  `SET hnsw.iterative_scan`) or `index: ivf` (ivfflat, `lists`, `probes` -> `SET ivfflat.probes`). The
  index is what answers: `enable_seqscan` is off for these sessions, so PostgreSQL's planner does not
  fall back to an exact scan on a small table. pgvector's HNSW returns at most `ef_search` rows per query
  unless `iterative_scan` is set, as in production: a top-100 with ef_search 40 has 40 documents.

Without `dsn`, an embedded server is started (runners/retrievers/pg_local.py; `pgdata`: its folder, else
a temporary one) and stopped when the retriever is closed or garbage-collected. The table is dropped then
unless `keep_table: true`.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .vector_db import VectorDBRetriever, require

OPS = {"cosine": ("<=>", "vector_cosine_ops"), "dot": ("<#>", "vector_ip_ops")}


class PgVectorRetriever(VectorDBRetriever):
    def __init__(self, embedder: Any, index: str = "flat", dsn: str | None = None, pgdata: str | None = None,
                 table: str = "private_mteb_docs", m: int = 16, ef_construction: int = 64,
                 ef_search: int | None = None, iterative_scan: str | None = None, lists: int = 100,
                 probes: int | None = None, keep_table: bool = False, limit: int | None = None) -> None:
        super().__init__(embedder, index, limit)
        psycopg = require("psycopg")
        require("pgvector.psycopg")
        from psycopg import sql

        self.table = sql.Identifier(table)
        self.m, self.ef_construction, self.ef_search = m, ef_construction, ef_search
        self.iterative_scan, self.lists, self.probes = iterative_scan, lists, probes
        self.local = None  # the embedded server this retriever started (runners/retrievers/pg_local.py)
        if dsn is None:
            from .pg_local import start

            self.local = start(pgdata)
            dsn = self.local.dsn
        stop: Callable[[], None] | None = self.local.stop if self.local is not None else None
        self.dsn = dsn
        try:
            self.conn = psycopg.connect(dsn, autocommit=True)
            self.conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            from pgvector.psycopg import register_vector

            register_vector(self.conn)
        except BaseException:
            if stop is not None:
                stop()
            raise
        self.server_version = self.conn.execute("SHOW server_version").fetchone()[0]
        self.pgvector_version = self.conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0]
        self.engine = f"PostgreSQL {self.server_version} + pgvector {self.pgvector_version}"
        self._finalizer = weakref.finalize(self, _close, self.conn, None if keep_table else self.table, stop)

    def close(self) -> None:
        self._finalizer()

    def write(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        from psycopg import sql

        op_class = sql.SQL(OPS[self.metric][1])
        t0 = time.perf_counter()
        with self.conn.cursor() as cur:
            cur.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(self.table))
            cur.execute(sql.SQL("CREATE TABLE {} (id text PRIMARY KEY, embedding vector({}))").format(
                self.table, sql.Literal(int(vectors.shape[1]))))
            with cur.copy(sql.SQL("COPY {} (id, embedding) FROM STDIN WITH (FORMAT BINARY)").format(self.table)) as cp:
                cp.set_types(["text", "vector"])
                for doc, vec in zip(ids, vectors):
                    cp.write_row([doc, vec])
            t1 = time.perf_counter()
            if self.index_kind == "hnsw":
                cur.execute(sql.SQL("CREATE INDEX ON {} USING hnsw (embedding {}) WITH (m = {}, ef_construction = {})")
                            .format(self.table, op_class, sql.Literal(self.m), sql.Literal(self.ef_construction)))
            elif self.index_kind == "ivf":
                cur.execute(sql.SQL("CREATE INDEX ON {} USING ivfflat (embedding {}) WITH (lists = {})")
                            .format(self.table, op_class, sql.Literal(max(1, min(self.lists, len(ids))))))
            cur.execute(sql.SQL("ANALYZE {}").format(self.table))
        self.timings.update(write=t1 - t0, build=time.perf_counter() - t1)

    def _session(self, cur: Any) -> None:
        """Search settings of this connection (SET applies to the session; autocommit)."""
        approximate = self.index_kind != "flat"
        cur.execute(f"SET enable_seqscan = {'off' if approximate else 'on'}")
        if self.index_kind == "hnsw":
            if self.ef_search is not None:
                cur.execute(f"SET hnsw.ef_search = {int(self.ef_search)}")
            if self.iterative_scan is not None:
                cur.execute("SELECT set_config('hnsw.iterative_scan', %s, false)", (self.iterative_scan,))
        if self.index_kind == "ivf" and self.probes is not None:
            cur.execute(f"SET ivfflat.probes = {int(self.probes)}")

    def query(self, vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        from psycopg import sql

        op = sql.SQL(OPS[self.metric][0])
        stmt = sql.SQL("SELECT id, embedding {op} %s AS d FROM {t} ORDER BY embedding {op} %s LIMIT %s").format(
            op=op, t=self.table)
        to_score = (lambda d: 1.0 - d) if self.metric == "cosine" else (lambda d: -d)
        out = []
        with self.conn.cursor() as cur:
            self._session(cur)
            for vec in vectors:
                cur.execute(stmt, (vec, vec, k), prepare=True)
                out.append([(doc, to_score(d)) for doc, d in cur.fetchall()])
        return out


def _close(conn: Any, table: Any, stop: Callable[[], None] | None) -> None:
    try:
        if table is not None and not conn.closed:
            from psycopg import sql

            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(table))
        conn.close()
    except Exception:  # the server may already be gone (process exit): nothing left to clean
        pass
    if stop is not None:
        stop()


def make(embedder: Any, model: str, index: str = "flat", **kwargs: Any) -> PgVectorRetriever:
    """The `factory:` entry point (`model` names the embedding model: the embedder brings its vectors)."""
    return PgVectorRetriever(embedder, index, **kwargs)
