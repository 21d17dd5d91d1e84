"""Encode the texts missing from the embedding cache on a Ray cluster, before the ordinary evaluation.

`encode: {engine: ray, address: auto, actors: N, batch_size: B}`: the driver lists every text mteb
will ask the candidate to encode (each task's corpus and queries, built with mteb's own dataloaders,
keyed exactly like `CachedEncoder`), keeps those not in the store, and hands batches of B to N Ray
actors, each of which loads the model once. Every finished batch is written to the store as it
arrives (one atomic shard), so a killed driver or worker loses only the batches in flight; a rerun
finds the rest stored and resumes. mteb then evaluates as usual and finds every vector cached.
Ray is optional: imported here only, with a one-line error when missing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from custom_tasks.errors import ConfigError
from custom_tasks.mteb_private import create_dataloader, custom_collate_fn

from .embedding_cache import CachedEncoder, _to_numpy, text_key
from .progress import EncodeProgress, encoding

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


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError(None, "encode.engine 'ray' needs Ray: pip install 'private-mteb[ray]'") from None
    return ray


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


def _batches(jobs: list[EncodeJob], size: int) -> Iterator[tuple[EncodeJob, slice]]:
    for job in jobs:
        for start in range(0, len(job.texts), size):
            yield job, slice(start, start + size)


def ray_pre_encode(model: Any, load: Callable[[], Any], tasks: list[Any], *, address: str | None, actors: int,
                   batch_size: int, model_batch_size: int = 32,
                   progress: EncodeProgress | None = None) -> dict[str, float]:
    """Fill the cache of `model` (a CachedEncoder) for `tasks` on a Ray cluster; returns counts and seconds.

    `progress` (default: `model.progress`) gets one pass over all missing texts, advanced per finished batch."""
    if not isinstance(model, CachedEncoder):
        logger.info("encode.engine ray: %s is not a cached dense encoder; encoding locally", type(model).__name__)
        return {"texts": 0, "batches": 0, "seconds": 0.0}
    ray = _import_ray()
    t0 = time.perf_counter()
    store = model.store
    with store.lock():  # a concurrent run waits, then finds the vectors stored
        store.refresh()
        jobs = missing_jobs(model, tasks, model_batch_size)
        total = sum(len(j.texts) for j in jobs)
        if not total:
            return {"texts": 0, "batches": 0, "seconds": time.perf_counter() - t0}
        if not ray.is_initialized():
            ray.init(address=address or "auto", logging_level=logging.WARNING, log_to_driver=False)
        actor_cls = ray.remote(max_restarts=3, max_task_retries=3)(EncodeWorker)
        pool = [actor_cls.remote(load) for _ in range(max(1, actors))]
        pending = _batches(jobs, batch_size)
        in_flight: dict[Any, tuple[EncodeJob, slice, Any]] = {}
        n_batches = 0

        def submit(actor: Any) -> None:
            item = next(pending, None)
            if item is not None:
                job, sl = item
                ref = actor.encode.remote(job.texts[sl], job.task_metadata, job.hf_split, job.hf_subset,
                                          job.prompt_type, model_batch_size)
                in_flight[ref] = (job, sl, actor)

        for actor in pool:  # two batches queued per actor: no actor idles while the driver writes
            submit(actor)
            submit(actor)
        label = f"{model.label} on {len(tasks)} task(s) via Ray" if model.label else "Ray encode"
        with encoding(progress or model.progress, label, total) as bar:
            while in_flight:
                done, _ = ray.wait(list(in_flight), num_returns=1)
                job, sl, actor = in_flight.pop(done[0])
                vectors = ray.get(done[0])
                store.add(job.keys[sl], vectors)  # one atomic shard per finished batch
                model.encoded += len(vectors)
                n_batches += 1
                bar.advance(len(vectors))
                submit(actor)
        for actor in pool:
            ray.kill(actor)
    if len(store._shards) > COMPACT_ABOVE:  # takes the lock itself
        store.compact()
    return {"texts": total, "batches": n_batches, "seconds": time.perf_counter() - t0}
