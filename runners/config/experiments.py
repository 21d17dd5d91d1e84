"""The `experiments:` entries of a benchmark config and the candidates they expand to.

Pure data: parsing a config and naming its candidates loads no model library, so analysis
commands can find an experiment's stored results without importing torch. Each entry sweeps
one parameter and expands to one candidate per value. A hybrid is a system of its own, named
`private-mteb/<model>+bm25-<tag>`; a chunking or ANN setting is an experiment of its model, named
`<model>@chunk<tag>` / `<model>@<index tag>` (runners/results/variants.py turns the tag into mteb's
experiment_kwargs):

  - {type: hybrid, dense: <model>, fusion: rrf, k: [20, 60]}
  - {type: hybrid, dense: <model>, fusion: weighted, alpha: [0.3, 0.5, 0.7]}
  - {type: chunk, model: <model>, unit: tokens, sizes: [128, 256, 512], overlap: 32}
  - {type: chunk, ..., score: chunk}   # chunk-level task <Task>@chunks256-32
  - {type: ann, model: <model>, index: hnsw, M: 16, ef_search: [16, 64, 256]}
  - {type: ann, model: <model>, index: ivf, nlist: 64, nprobe: [1, 8]}
  - {type: ann, model: <model>, index: flat}
  - {type: growth, model: <model>, fractions: [0.1, 0.25, 0.5, 1.0], repeats: 3, seed: 0}
                                       # corpus-growth curve (no candidates: runners/execution/measure/growth.py)
  - {type: growth, model: <model>, fractions: [0.5, 1.0, 2.0, 4.0], distractors: other_kb.yaml}
                                       # beyond 1.0: the corpus plus another collection's documents
  - {type: rerank, first: BM25, reranker: <cross-encoder | {name, kind: bi-encoder}>, depth: [20, 50, 100]}
                                       # the first stage's stored top-depth reordered (runners/config/rerank.py)
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from custom_tasks.config_problems import raise_problems
from custom_tasks.errors import ConfigError

from ..search.chunking import Chunker
from .benchmark import BenchmarkConfig
from .experiment_entries import TYPES, AnnEntry, ChunkEntry, GrowthEntry, HybridEntry, entry_base
from .experiment_entries import validated_entries
from .model_spec import ModelSpec, with_backend
from .planned import PREFIX, PlannedCandidate  # PlannedCandidate, TYPES, entry_base: callers import them from here
from .rerank import RerankEntry, plan_rerank


def distractors_path(cfg: BenchmarkConfig, entry: GrowthEntry) -> Path | None:
    """The entry's distractor file, relative to the benchmark file like every path in a config."""
    if not entry.distractors:
        return None
    p = Path(entry.distractors).expanduser()
    return p if p.is_absolute() else cfg.base_dir / p


def parse_experiments(cfg: BenchmarkConfig) -> list[HybridEntry | ChunkEntry | AnnEntry | GrowthEntry | RerankEntry]:
    """Validate every `experiments:` entry; bad ones are one ConfigError naming each position (a config read
    from a file was checked when read, with line numbers: BenchmarkConfig.from_file)."""
    entries, found = validated_entries(cfg.experiments)
    if found:
        raise_problems(cfg.path, found)
    return list(entries)


def base_spec(cfg: BenchmarkConfig, name: str) -> ModelSpec:
    """The base model's entry under `models:` (by name or label), else a plain entry for the name."""
    found = next((m for m in cfg.models if name in (m.name, m.label)), None)
    return found or with_backend(ModelSpec(name=name, max_seq_length=cfg.encode.max_seq_length), cfg.encode.backend,
                                 cfg.encode.precision)


def plan_entry(entry: HybridEntry | ChunkEntry | AnnEntry, base: ModelSpec) -> list[PlannedCandidate]:
    """One candidate per swept value (chunk-level entries have none: they make tasks instead)."""
    short = base.results_name.split("/")[-1]  # a non-default encode variant names its experiments too
    base_label = entry.label or base.default_label
    out: list[PlannedCandidate] = []

    def add(tag: str, label: str, strategy: Any, params: dict[str, Any]) -> None:
        name = f"{PREFIX}/{short}{tag}" if isinstance(entry, HybridEntry) else f"{base.results_name}@{tag}"
        out.append(PlannedCandidate(name, f"{base_label} {label}", entry.type, base, strategy, params))

    if isinstance(entry, HybridEntry):
        for v in entry.values:
            tag = entry.tag(v)
            add(f"+bm25-{tag}", f"+bm25 {tag}", (entry.fusion, v, entry.depth),
                {"fusion": entry.fusion, "value": v, "depth": entry.depth})
    elif isinstance(entry, ChunkEntry) and entry.score == "document":
        for ch in entry.chunkers():
            unit = "" if ch.unit == "tokens" else "c"
            label = f"chunk={ch.size}{unit}/{ch.overlap}{unit}" + ("" if ch.title == "every" else " title-first")
            add(f"chunk{ch.tag}", label, ch, {"unit": ch.unit, "size": ch.size, "overlap": ch.overlap,
                                                "title": ch.title})
    elif isinstance(entry, AnnEntry):
        for p in entry.params():
            params = {("index" if k == "kind" else k): v for k, v in dataclasses.asdict(p).items()}
            add(p.tag, p.tag.replace("-", " "), p, params)
    return out


def plan_experiments(cfg: BenchmarkConfig) -> list[PlannedCandidate]:
    """All document-level experiment candidates of a config, named, deduplicated, nothing loaded."""
    entries = parse_experiments(cfg)
    planned = [p for e in entries if not isinstance(e, RerankEntry) for p in plan_entry(e, base_spec(cfg, entry_base(e)))]
    planned += [p for e in entries if isinstance(e, RerankEntry) for p in plan_rerank(cfg, e, planned)]  # last: they read
    # their first stage's stored rankings, which run before them
    names = [p.name for p in planned] + [m.results_name for m in cfg.models]  # one model, two settings: two names
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ConfigError(cfg.path, f"experiments give the same candidate twice: {dup}")
    return planned


def chunk_task_name(task_name: str, chunker: Chunker) -> str:
    return f"{task_name}@chunks{chunker.tag}"


def chunk_level_entries(cfg: BenchmarkConfig) -> list[ChunkEntry]:
    return [e for e in parse_experiments(cfg) if isinstance(e, ChunkEntry) and e.score == "chunk"]


def growth_entries(cfg: BenchmarkConfig) -> list[GrowthEntry]:
    return [e for e in parse_experiments(cfg) if isinstance(e, GrowthEntry)]
