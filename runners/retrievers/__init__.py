"""Retriever adapters for `kind: retriever` (runners/execution/candidates/retriever_candidate.py): real vector databases.

`pgvector` (PostgreSQL + pgvector, a server of yours or an embedded one) and `lancedb` (embedded). Each
writes the vectors of a model of the config, from private-mteb's embedding cache (an `Embedder`), into
the database and answers queries with the database's own search: exact (`index: flat`) or its ANN index.
They import no private-mteb layer: the embedder is handed to them (the `db` extra installs the clients).
"""
