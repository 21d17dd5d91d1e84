"""Run by tests/test_ray.py INSIDE a network namespace with a 2-node Ray cluster on loopback.

Not collected on its own (no `test_` prefix): it needs RAY_TEST_ADDRESS, set by the outer test.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Any

import numpy as np
import pytest

from runners.config.benchmark import BenchmarkConfig
from runners.execution.run import run_benchmark
from runners.execution.encoding.synthetic import SyntheticEncoder
from runners.execution.cache.vector_store import VectorStore
from tests.conftest import MINILM, REPO, TINY_YAML, write_benchmark

ADDRESS = os.environ.get("RAY_TEST_ADDRESS", "")
pytestmark = pytest.mark.skipif(not ADDRESS, reason="needs the cluster tests/test_ray.py starts")
SYN = {"name": "synthetic/hash", "factory": "runners.execution.encoding.synthetic:make_encoder", "revision": "1",
       "factory_kwargs": {"dim": 32}}
SLOW = {"name": "synthetic/slow", "factory": "tests.ray_inner_encode:slow_encoder", "revision": "1"}


class SlowEncoder(SyntheticEncoder):
    """The synthetic encoder, 0.4 s per call: slow enough to kill the driver between batches."""

    def encode(self, inputs: Any, **kwargs: Any) -> np.ndarray:
        time.sleep(0.4)
        return super().encode(inputs, **kwargs)


def slow_encoder() -> SlowEncoder:
    return SlowEncoder(dim=16, name="synthetic/slow")


def _cfg(tmp_path, name: str, model: dict, engine: str, **encode: Any) -> BenchmarkConfig:
    folder = tmp_path / name
    folder.mkdir()
    return BenchmarkConfig.from_file(write_benchmark(folder, [str(TINY_YAML)], models=[model], encode={
        "engine": engine, **({"address": ADDRESS, "actors": 2, "ray_batch_size": 4} if engine == "ray" else {}),
        **encode}))


def _stores(cfg: BenchmarkConfig) -> list[VectorStore]:
    return [VectorStore(p.parent) for p in sorted(cfg.cache_path.rglob("shard-*.keys.npy"))[:1]]


def _compare(tmp_path, model: dict, atol: float) -> None:
    ray_cfg, local_cfg = _cfg(tmp_path, "ray", model, "ray"), _cfg(tmp_path, "local", model, "local")
    ray_rec = run_benchmark(ray_cfg, show_progress=False)[0]
    local_rec = run_benchmark(local_cfg, show_progress=False)[0]
    assert local_rec.encoded > 0  # the record counts what the cluster encoded, as a local run counts its own
    assert (ray_rec.encoded, ray_rec.reused) == (local_rec.encoded, local_rec.reused)
    (ray_store,), (local_store,) = _stores(ray_cfg), _stores(local_cfg)
    keys = local_store._unique_keys()
    assert len(ray_store) == len(keys)
    np.testing.assert_allclose(ray_store.get(keys), local_store.get(keys), atol=atol, rtol=0)
    for metric in ("ndcg_at_10", "map_at_10", "mrr_at_10", "recall_at_100"):
        assert ray_rec.scores[metric] == pytest.approx(local_rec.scores[metric], abs=1e-12 if atol == 0 else 1e-5)


def test_ray_vectors_and_scores_equal_the_local_run(tmp_path):
    _compare(tmp_path, SYN, atol=0)


def test_actors_request_a_cpu_each_and_encode_on_both_nodes(tmp_path):
    """Where the batches ran, as the actors report it: both nodes, every try (packing put both on one node)."""
    import ray

    from runners.execution.cache.embedding_cache import CachedEncoder
    from runners.execution.distributed.ray_encode import actor_options, ray_pre_encode
    from runners.execution.tasks import load_task

    task = load_task(str(TINY_YAML))
    alive = {n["NodeID"] for n in ray.nodes() if n["Alive"]} if ray.is_initialized() else set()
    for attempt in range(3):
        model = CachedEncoder(SyntheticEncoder(dim=8), VectorStore(tmp_path / f"store{attempt}"))
        report = ray_pre_encode(model, lambda: SyntheticEncoder(dim=8), [task], address=ADDRESS, actors=2,
                                batch_size=2, connect_timeout=30)
        alive = alive or {n["NodeID"] for n in ray.nodes() if n["Alive"]}
        assert len(alive) == 2 and set(report.nodes) == alive, (attempt, report.nodes)
        assert all(n > 0 for n in report.nodes.values()) and report.texts == 22 == sum(report.nodes.values())
        assert report.per_task == {task.metadata.name: 22} and report.actors == 2
    options, group = actor_options(ray, 2, gpu=False)
    try:
        assert [o["num_cpus"] for o in options] == [1, 1] and group is not None  # STRICT_SPREAD: one per node
    finally:
        from ray.util.placement_group import remove_placement_group

        remove_placement_group(group)
    options, group = actor_options(ray, 5, gpu=False)  # more actors than free CPUs: capped, never stuck
    assert len(options) == 2 and group is not None
    remove_placement_group(group)


_DRIVER = """
import sys
from runners.config.benchmark import BenchmarkConfig
from runners.execution.run import run_benchmark
run_benchmark(BenchmarkConfig.from_file(sys.argv[1]), show_progress=False)
"""


def test_a_killed_driver_loses_only_batches_in_flight_and_the_rerun_resumes(tmp_path):
    cfg = _cfg(tmp_path, "kill", SLOW, "ray", ray_batch_size=2)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", _DRIVER, str(cfg.path)], cwd=REPO, env=env)
    deadline = time.time() + 120
    while len(list(cfg.cache_path.rglob("shard-*.keys.npy"))) < 2 and time.time() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    (store,) = _stores(cfg)
    stored = len(store)
    assert 4 <= stored < 22  # 12 documents + 10 queries: some batches stored, not all
    rec = run_benchmark(cfg, show_progress=False)[0]
    assert rec.status == "ran" and (rec.encoded, rec.reused) == (22 - stored, stored)  # the rest, on the cluster
    store.refresh()
    assert len(store) == 22


@pytest.mark.skipif(not os.environ.get("RAY_TEST_MINILM"), reason="set RAY_TEST_MINILM=1 (slower)")
def test_minilm_on_ray_equals_local_to_1e6(tmp_path):
    _compare(tmp_path, {"name": MINILM}, atol=1e-6)
