"""Encode the texts missing from the embedding cache on a Ray cluster, before the ordinary evaluation.

`encode: {engine: ray, address: auto, actors: N, batch_size: B}`: the driver lists every text mteb
will ask the candidate to encode (each task's corpus and queries, built with mteb's own dataloaders,
keyed exactly like `CachedEncoder`), keeps those not in the store, and hands batches of B to N Ray
actors, each of which loads the model once. Every actor requests one CPU (and one GPU when
`encode.device` is cuda), so Ray never packs more actors on a node than it has; with at least as many
such nodes as actors, a STRICT_SPREAD placement group puts each actor on its own node, otherwise they
are scheduled with SPREAD. Each batch reports the node it ran on (`RayEncodeReport.nodes`). Every
finished batch is written to the store as it arrives (one atomic shard), so a killed driver or worker
loses only the batches in flight; a rerun finds the rest stored and resumes. mteb then evaluates as
usual and finds every vector cached. Ray is optional; connecting is ray_connect.py's.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from custom_tasks.mteb_private import create_dataloader, custom_collate_fn

from ..cache.embedding_cache import CachedEncoder, _to_numpy, text_key
from ..encoding.progress import EncodeProgress, encoding
from .ray_connect import connect, import_ray

logger = logging.getLogger(__name__)
COMPACT_ABOVE = 64  # shards: merge the many per-batch shards into one at the end of a job


@dataclass
class EncodeJob:
    """Texts of one (task, split, subset, prompt type) still missing from the store."""

    task_metadata: Any
    hf_split: str
    hf_subset: str
    prompt_type: Any
    texts: list[str]
    keys: list[bytes]


@dataclass
class RayEncodeReport:
    """What the cluster encoded: texts per task name and per node id, batches, actors, seconds."""

    texts: int = 0
    batches: int = 0
    seconds: float = 0.0
    actors: int = 0
    per_task: dict[str, int] = field(default_factory=dict)
    nodes: dict[str, int] = field(default_factory=dict)

    def note(self) -> str:
        return (f"{self.texts} texts encoded on Ray ({self.actors} actor(s) on {len(self.nodes)} node(s))"
                if self.texts else "")


def missing_jobs(model: CachedEncoder, tasks: list[Any], batch_size: int) -> list[EncodeJob]:
    """What mteb would encode for these tasks and the store does not hold (each key once)."""
    from mteb.types import PromptType

    seen: set[bytes] = set()
    jobs = []
    for task in tasks:
        if not getattr(task, "data_loaded", True):
            task.load_data()
        for subset, splits in task.dataset.items():
            for split in task.eval_splits:
                data = splits.get(split)
                if data is None:
                    continue
                for column, ptype in (("corpus", PromptType.document), ("queries", PromptType.query)):
                    loader = create_dataloader(data[column], task_metadata=task.metadata, prompt_type=ptype,
                                               batch_size=batch_size)
                    texts: list[str] = list(loader.dataset["text"])
                    pkey = model._prompt_key(task.metadata, ptype)
                    keys = [text_key(pkey, t) for t in texts]
                    new = [i for i, k in enumerate(keys) if k not in seen and not seen.add(k)]
                    miss = model.store.missing([keys[i] for i in new]) if new else []
                    rows = [new[i] for i in miss]
                    if rows:
                        jobs.append(EncodeJob(task.metadata, split, subset, ptype, [texts[i] for i in rows],
                                              [keys[i] for i in rows]))
    return jobs


class EncodeWorker:
    """The body of a Ray actor: loads the model once, encodes batches like `CachedEncoder` does."""

    def __init__(self, load: Callable[[], Any]) -> None:
        self.model = load()

    def encode(self, texts: list[str], task_metadata: Any, hf_split: str, hf_subset: str, prompt_type: Any,
               batch_size: int) -> np.ndarray:
        from datasets import Dataset
        from torch.utils.data import DataLoader

        loader = DataLoader(Dataset.from_dict({"text": texts}), batch_size=batch_size,
                            collate_fn=custom_collate_fn(), shuffle=False)
        out = self.model.encode(loader, task_metadata=task_metadata, hf_split=hf_split, hf_subset=hf_subset,
                                prompt_type=prompt_type, batch_size=batch_size)
        return _to_numpy(out)

    def node(self) -> str:
        """The id of the Ray node this actor runs on (inside Ray), else ''."""
        try:
            import ray

            return ray.get_runtime_context().get_node_id() if ray.is_initialized() else ""
        except ImportError:
            return ""

    def encode_on_node(self, *args: Any) -> tuple[str, np.ndarray]:
        """`encode`, and the node it ran on."""
        return self.node(), self.encode(*args)


def _batches(jobs: list[EncodeJob], size: int) -> Iterator[tuple[EncodeJob, slice]]:
    for job in jobs:
        for start in range(0, len(job.texts), size):
            yield job, slice(start, start + size)


def actor_options(ray: Any, actors: int, gpu: bool) -> tuple[list[dict[str, Any]], Any]:
    """Ray options per actor (1 CPU, + 1 GPU when `gpu`) and the placement group to remove afterwards (or None).

    At most as many actors as the cluster has CPUs (GPUs): an actor that can never be placed would hold its
    queued batches forever. One actor per node (a STRICT_SPREAD placement group; its actors wait until it is
    placed, as any Ray task waits for resources) when enough nodes have a CPU (GPU), else SPREAD.
    """
    from ray.util.placement_group import placement_group
    from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

    unit = "GPU" if gpu else "CPU"
    total = int(ray.cluster_resources().get(unit, 0))
    if total < actors:
        logger.warning("encode.actors %d: the Ray cluster has %d %s(s); starting %d actor(s)", actors, total,
                       unit, max(1, total))
        actors = max(1, total)
    nodes = [n for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get(unit, 0) >= 1]
    base: dict[str, Any] = {"num_cpus": 1, **({"num_gpus": 1} if gpu else {})}
    if 1 < actors <= len(nodes):
        group = placement_group([{"CPU": 1.0, **({"GPU": 1.0} if gpu else {})}] * actors, strategy="STRICT_SPREAD")
        return [{**base, "scheduling_strategy": PlacementGroupSchedulingStrategy(
            group, placement_group_bundle_index=i)} for i in range(actors)], group
    return [{**base, "scheduling_strategy": "SPREAD"} for _ in range(actors)], None


def ray_pre_encode(model: Any, load: Callable[[], Any], tasks: list[Any], *, address: str | None, actors: int,
                   batch_size: int, model_batch_size: int = 32, connect_timeout: float = 30.0, gpu: bool = False,
                   config: Path | str | None = None, progress: EncodeProgress | None = None) -> RayEncodeReport:
    """Fill the cache of `model` (a CachedEncoder) for `tasks` on a Ray cluster; returns what the cluster encoded.

    `progress` (default: `model.progress`) gets one pass over all missing texts, advanced per finished batch.
    Connecting is bounded by `connect_timeout` seconds (ray_connect.py); `config` is named in its errors."""
    report = RayEncodeReport()
    if not isinstance(model, CachedEncoder):
        logger.info("encode.engine ray: %s is not a cached dense encoder; encoding locally", type(model).__name__)
        return report
    ray = import_ray(config)
    t0 = time.perf_counter()
    store = model.store
    with store.lock():  # a concurrent run waits, then finds the vectors stored
        store.refresh()
        jobs = missing_jobs(model, tasks, model_batch_size)
        total = sum(len(j.texts) for j in jobs)
        if not total:
            report.seconds = time.perf_counter() - t0
            return report
        connect(ray, address, connect_timeout, config)
        options, group = actor_options(ray, actors, gpu)
        actor_cls = ray.remote(max_restarts=3, max_task_retries=3)(EncodeWorker)
        pool = [actor_cls.options(**opts).remote(load) for opts in options]
        pending = _batches(jobs, batch_size)
        in_flight: dict[Any, tuple[EncodeJob, slice, Any]] = {}

        def submit(actor: Any) -> None:
            item = next(pending, None)
            if item is not None:
                job, sl = item
                ref = actor.encode_on_node.remote(job.texts[sl], job.task_metadata, job.hf_split, job.hf_subset,
                                                  job.prompt_type, model_batch_size)
                in_flight[ref] = (job, sl, actor)

        for actor in pool:  # two batches queued per actor: no actor idles while the driver writes
            submit(actor)
            submit(actor)
        label = f"{model.label} on {len(tasks)} task(s) via Ray" if model.label else "Ray encode"
        try:
            with encoding(progress or model.progress, label, total) as bar:
                while in_flight:
                    done, _ = ray.wait(list(in_flight), num_returns=1)
                    job, sl, actor = in_flight.pop(done[0])
                    node, vectors = ray.get(done[0])
                    store.add(job.keys[sl], vectors)  # one atomic shard per finished batch
                    model.encoded += len(vectors)
                    name = job.task_metadata.name
                    report.per_task[name] = report.per_task.get(name, 0) + len(vectors)
                    report.nodes[node] = report.nodes.get(node, 0) + len(vectors)
                    report.batches += 1
                    bar.advance(len(vectors))
                    submit(actor)
        finally:
            for actor in pool:
                ray.kill(actor)
            if group is not None:
                from ray.util.placement_group import remove_placement_group

                remove_placement_group(group)
    if len(store._shards) > COMPACT_ABOVE:  # takes the lock itself
        store.compact()
    report.texts, report.actors, report.seconds = total, len(pool), time.perf_counter() - t0
    logger.info("Ray encoded %d texts in %d batches on %d node(s): %s", total, report.batches, len(report.nodes),
                report.nodes)
    return report
