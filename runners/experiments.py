"""Experiments (hybrid search, chunking, ANN indexes) as candidates scored exactly like models.

A benchmark YAML lists them under `experiments:`; each entry sweeps one parameter and expands
to one `Candidate` per value, named `private-mteb/<model>...` with the dense model's revision.
They run through `run_benchmark` / `evaluate_one` like any model (results + per-query files),
and share the dense model's embedding cache, so no text is encoded twice:

  - {type: hybrid, dense: <model>, fusion: rrf, k: [20, 60]}
  - {type: hybrid, dense: <model>, fusion: weighted, alpha: [0.3, 0.5, 0.7]}
  - {type: chunk, model: <model>, unit: tokens, sizes: [128, 256, 512], overlap: 32}
  - {type: chunk, ..., score: chunk}   # chunk-level task <Task>@chunks256-32 (see run_chunk_level)
  - {type: ann, model: <model>, index: hnsw, M: 16, ef_search: [16, 64, 256]}
  - {type: ann, model: <model>, index: ivf, nlist: 64, nprobe: [1, 8]}
  - {type: ann, model: <model>, index: flat}
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator, model_validator

from custom_tasks.config import _pydantic_message
from custom_tasks.errors import ConfigError

from .ann import AnnSearch, IndexParams, load_ann_agreement
from .candidates import Candidate, candidate_from_spec
from .chunking import Chunker, ChunkedSearch, chunk_level_collection, token_offsets
from .config import BenchmarkConfig
from .hybrid import HybridRetriever, fusion_tag
from .models import BM25_ALIASES, BM25_NAME, ModelSpec

logger = logging.getLogger(__name__)
PREFIX = "private-mteb"


def _listify(v: Any) -> Any:
    return v if isinstance(v, list) else [v]


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: str | None = None  # replaces the base model's label in front of the experiment tag


class HybridEntry(_Entry):
    type: Literal["hybrid"]
    dense: str
    sparse: Literal["bm25"] = "bm25"
    fusion: Literal["rrf", "weighted"] = "rrf"
    k: list[Annotated[int, Field(ge=0)]] = [60]
    alpha: list[Annotated[float, Field(ge=0.0, le=1.0)]] = [0.5]
    depth: Annotated[int, Field(gt=0)] | None = None  # list length per retriever before fusion

    _lists = field_validator("k", "alpha", mode="before")(_listify)

    @model_validator(mode="after")
    def _param_fits_fusion(self) -> HybridEntry:
        wrong = "alpha" if self.fusion == "rrf" else "k"
        if wrong in self.model_fields_set:
            raise ValueError(f"'{wrong}' does not apply to fusion '{self.fusion}' (rrf takes k, weighted takes alpha)")
        return self

    @property
    def values(self) -> list[float]:
        return list(self.k) if self.fusion == "rrf" else list(self.alpha)


class ChunkEntry(_Entry):
    type: Literal["chunk"]
    model: str
    unit: Literal["tokens", "chars"] = "tokens"
    sizes: list[Annotated[int, Field(gt=0)]]
    overlap: Annotated[int, Field(ge=0)] = 0
    title: Literal["every", "first"] = "every"
    score: Literal["document", "chunk"] = "document"

    _lists = field_validator("sizes", mode="before")(_listify)

    @model_validator(mode="after")
    def _overlap_below_size(self) -> ChunkEntry:
        if self.overlap >= min(self.sizes):
            raise ValueError(f"overlap {self.overlap} must be smaller than every size {self.sizes}")
        return self

    def chunkers(self) -> list[Chunker]:
        return [Chunker(s, self.overlap, self.unit, self.title) for s in self.sizes]


class AnnEntry(_Entry):
    type: Literal["ann"]
    model: str
    index: Literal["flat", "hnsw", "ivf"]
    M: Annotated[int, Field(gt=1)] = 16
    ef_construction: Annotated[int, Field(gt=0)] = 40
    ef_search: list[Annotated[int, Field(gt=0)]] = [64]
    nlist: Annotated[int, Field(gt=0)] = 64
    nprobe: list[Annotated[int, Field(gt=0)]] = [8]

    _lists = field_validator("ef_search", "nprobe", mode="before")(_listify)

    @model_validator(mode="after")
    def _params_fit_index(self) -> AnnEntry:
        own = {"flat": set(), "hnsw": {"M", "ef_construction", "ef_search"}, "ivf": {"nlist", "nprobe"}}
        other = ({"M", "ef_construction", "ef_search", "nlist", "nprobe"} - own[self.index]) & self.model_fields_set
        if other:
            raise ValueError(f"{sorted(other)} do not apply to index '{self.index}'")
        return self

    def params(self) -> list[IndexParams]:
        if self.index == "hnsw":
            return [IndexParams("hnsw", M=self.M, ef_construction=self.ef_construction, ef_search=e)
                    for e in self.ef_search]
        if self.index == "ivf":
            return [IndexParams("ivf", nlist=self.nlist, nprobe=p) for p in self.nprobe]
        return [IndexParams("flat")]


Experiment = Annotated[Union[HybridEntry, ChunkEntry, AnnEntry], Field(discriminator="type")]
_ADAPTER: TypeAdapter[Any] = TypeAdapter(Experiment)
TYPES = ("hybrid", "chunk", "ann")


def parse_experiments(cfg: BenchmarkConfig) -> list[HybridEntry | ChunkEntry | AnnEntry]:
    """Validate every `experiments:` entry; a bad one is a ConfigError naming its position."""
    out = []
    for i, raw in enumerate(cfg.experiments):
        where = f"experiments[{i}]"
        if not isinstance(raw, dict) or raw.get("type") not in TYPES:
            got = raw.get("type") if isinstance(raw, dict) else raw
            raise ConfigError(cfg.path, f"{where}: 'type' must be one of {', '.join(TYPES)} (got {got!r})")
        try:
            entry = _ADAPTER.validate_python(raw)
        except ValidationError as e:
            t = raw["type"]
            msg = _pydantic_message(e).removeprefix(f"{t}.").removeprefix(f"{t}: ").replace(f"'{t}.", "'")
            msg = msg.replace("Value error, ", "")
            raise ConfigError(cfg.path, f"{where} ({raw['type']}): {msg}") from None
        base = entry.dense if isinstance(entry, HybridEntry) else entry.model
        if base in BM25_ALIASES:
            raise ConfigError(cfg.path, f"{where} ({raw['type']}): the base model must be a dense model, not BM25")
        out.append(entry)
    return out


# ---------------------------------------------------------------- shared dense encoders
_RAW: dict[tuple[str, str, str], Any] = {}
_CACHED: dict[tuple[str, str, str, str], Any] = {}


def shared_raw(dense: Candidate) -> Any:
    """The dense model, loaded once per process for all experiments built on it."""
    key = (dense.name, dense.revision, dense.cache_variant)
    if key not in _RAW:
        _RAW[key] = dense.load()
    return _RAW[key]


def shared_encoder(dense: Candidate, cache_path: Path) -> Any:
    """The dense model wrapped in the SAME embedding cache folder as its plain run (run.wrap_cache)."""
    from .run import wrap_cache

    key = (dense.name, dense.revision, dense.cache_variant, str(Path(cache_path).resolve()))
    if key not in _CACHED:
        _CACHED[key] = wrap_cache(shared_raw(dense), dense, cache_path)
    return _CACHED[key]


def clear_shared() -> None:
    """Forget loaded models and caches (tests, long-lived processes)."""
    _RAW.clear()
    _CACHED.clear()


def _meta(encoder: Any, name: str, revision: str) -> Any:
    return encoder.mteb_model_meta.model_copy(update={"name": name, "revision": revision})


# ---------------------------------------------------------------- candidates
def dense_candidate(cfg: BenchmarkConfig, name: str) -> Candidate:
    """The base model's own Candidate: its `models:` entry when listed (by name or label), else the name."""
    spec = next((m for m in cfg.models if name in (m.name, m.label)), None) or ModelSpec(name=name)
    return candidate_from_spec(spec, cfg.encode.device, cfg.encode.max_seq_length)


def expand(entry: HybridEntry | ChunkEntry | AnnEntry, dense: Candidate, cache_path: Path,
           results_dir: Path | None = None) -> list[Candidate]:
    """One candidate per swept value (chunk-level entries have none: they make tasks instead)."""
    short = dense.name.split("/")[-1]
    base_label = entry.label or dense.label
    info = {"experiment": entry.type, "base": dense.name, "base_revision": dense.revision, "base_label": dense.label}

    def cand(tag: str, label: str, make: Any, params: dict[str, Any]) -> Candidate:
        name = f"{PREFIX}/{short}{tag}"
        return Candidate(name=name, revision=dense.revision, label=f"{base_label} {label}",
                         load=lambda: make(shared_encoder(dense, cache_path), name), kind=entry.type,
                         cacheable=False, info={**info, **params})

    out: list[Candidate] = []
    if isinstance(entry, HybridEntry):
        for v in entry.values:
            tag = fusion_tag(entry.fusion, v) + (f"-d{entry.depth}" if entry.depth else "")

            def make(enc: Any, name: str, v: float = v) -> Any:
                import mteb

                return HybridRetriever(enc, mteb.get_model(BM25_NAME), entry.fusion, v,
                                       _meta(enc, name, dense.revision), entry.depth)
            out.append(cand(f"+bm25-{tag}", f"+bm25 {tag}", make, {"fusion": entry.fusion, "value": v}))
    elif isinstance(entry, ChunkEntry) and entry.score == "document":
        for ch in entry.chunkers():
            unit = "" if ch.unit == "tokens" else "c"
            label = f"chunk={ch.size}{unit}/{ch.overlap}{unit}" + ("" if ch.title == "every" else " title-first")

            def make(enc: Any, name: str, ch: Chunker = ch) -> Any:
                return ChunkedSearch(enc, ch, _meta(enc, name, dense.revision))
            out.append(cand(f"-chunk{ch.tag}", label, make, {"unit": ch.unit, "size": ch.size,
                                                             "overlap": ch.overlap, "title": ch.title}))
    elif isinstance(entry, AnnEntry):
        for p in entry.params():

            def make(enc: Any, name: str, p: IndexParams = p) -> Any:
                return AnnSearch(enc, p, _meta(enc, name, dense.revision), results_dir)
            params = {("index" if k == "kind" else k): v for k, v in dataclasses.asdict(p).items()}
            out.append(cand(f"-{p.tag}", p.tag.replace("-", " "), make, params))
    return out


def candidates_from_experiments(cfg: BenchmarkConfig) -> list[Candidate]:
    """All doc-level experiment candidates of a benchmark config (nothing is loaded here)."""
    cands: list[Candidate] = []
    for entry in parse_experiments(cfg):
        dense = dense_candidate(cfg, entry.dense if isinstance(entry, HybridEntry) else entry.model)
        cands += expand(entry, dense, cfg.cache_path, cfg.results_path)
    names = [c.name for c in cands] + [m.name for m in cfg.models]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ConfigError(cfg.path, f"experiments give the same candidate twice: {dup}")
    return cands


# ---------------------------------------------------------------- chunk-level scoring
def chunk_task_name(task_name: str, chunker: Chunker) -> str:
    return f"{task_name}@chunks{chunker.tag}"


def chunk_level_runs(cfg: BenchmarkConfig, tasks: list[Any]) -> list[tuple[Candidate, list[Any]]]:
    """(dense candidate, chunk-level tasks) per `score: chunk` entry; registers the tasks in mteb."""
    from custom_tasks.task import task_from_collection

    out = []
    for entry in parse_experiments(cfg):
        if not (isinstance(entry, ChunkEntry) and entry.score == "chunk"):
            continue
        dense = dense_candidate(cfg, entry.model)
        offsets = token_offsets(shared_encoder(dense, cfg.cache_path)) if entry.unit == "tokens" else None
        made = []
        for task in tasks:
            if getattr(task, "collection", None) is None and getattr(task, "task_config", None) is not None:
                task.load_data()
            collection = getattr(task, "collection", None)
            if collection is None or not collection.spans:
                logger.warning("%s has no evidence spans: no chunk-level scoring", task.metadata.name)
                continue
            for ch in entry.chunkers():
                name = chunk_task_name(task.metadata.name, ch)
                coll = chunk_level_collection(collection, ch, offsets, name)
                if not coll.qrels:
                    continue
                note = "; ".join(w.message for w in coll.warnings)
                tcfg = task.task_config.model_copy(update={
                    "name": name, "splits": [s for s in task.task_config.splits if s in coll.qrels],
                    "description": f"{task.metadata.description} Chunk level ({ch.tag}). {note}".strip()})
                made.append(task_from_collection(coll, tcfg))
        # the plain model's own candidate, sharing the process-wide loaded model
        out.append((dataclasses.replace(dense, load=lambda d=dense: shared_raw(d)), made))
    return out


def run_chunk_level(cfg: BenchmarkConfig, tasks: list[Any] | None = None, **run_kwargs: Any) -> list[Any]:
    """Evaluate each `score: chunk` entry's model on its chunk-level tasks (RunRecords)."""
    from .run import load_task, run_benchmark

    tasks = tasks if tasks is not None else [load_task(t) for t in cfg.tasks]
    plain = cfg.model_copy(update={"experiments": []})  # no recursion through run_benchmark hooks
    records = []
    for dense, chunk_tasks in chunk_level_runs(cfg, tasks):
        if chunk_tasks:
            records += run_benchmark(plain, candidates=[dense], tasks=chunk_tasks, **run_kwargs)
    return records


# ---------------------------------------------------------------- reporting
def _task_name(name: str) -> str:
    from custom_tasks.config import TaskConfig

    return TaskConfig.from_file(name).name if Path(name).suffix in {".yaml", ".yml"} else name


def experiment_table(results_dir: Path, cfg: BenchmarkConfig, metrics: list[str] | None = None,
                     split: str = "test") -> pd.DataFrame:
    """Every base model and experiment candidate: mean [95% bootstrap CI] per metric, and for
    experiments the paired difference vs the plain dense base (bootstrap CI, randomization p,
    Holm over the experiments of one task and metric), plus ANN overlap@k vs exact search."""
    from .stats import ci_table, holm, paired_tests
    from .store import load_per_query

    st = cfg.stats
    metrics = metrics or list(st.metrics)
    rows: list[dict[str, Any]] = []
    bases = [candidate_from_spec(m, cfg.encode.device, cfg.encode.max_seq_length) for m in cfg.models]
    exps = candidates_from_experiments(cfg)
    for entry in parse_experiments(cfg):
        d = dense_candidate(cfg, entry.dense if isinstance(entry, HybridEntry) else entry.model)
        if all(d.name != b.name for b in bases):
            bases.append(d)
    pairs = [(t, c) for t in map(_task_name, cfg.tasks) for c in bases + exps]
    for entry in parse_experiments(cfg):
        if isinstance(entry, ChunkEntry) and entry.score == "chunk":
            d = dense_candidate(cfg, entry.model)
            pairs += [(chunk_task_name(_task_name(t), ch), dataclasses.replace(d, label=f"{d.label} (chunk level)"))
                      for t in cfg.tasks for ch in entry.chunkers()]

    def scores(c: Candidate, task: str, metric: str) -> pd.Series | None:
        try:
            return load_per_query(results_dir, c.name, task, metric, split, revision=c.revision)
        except (FileNotFoundError, KeyError):
            return None

    for metric in metrics:
        block: list[dict[str, Any]] = []
        for task, c in pairs:
            s = scores(c, task, metric)
            if s is None:
                continue
            ci = ci_table({c.label: s}, st.resamples, st.confidence, st.method, st.seed).iloc[0]
            row = {"task": task, "candidate": c.label, "model": c.name, "kind": c.kind, "metric": metric,
                   "n_queries": int(ci["n_queries"]), "mean": ci["mean"], "ci_low": ci["ci_low"],
                   "ci_high": ci["ci_high"], "base": None}
            base_name = c.info.get("base")
            base = next((b for b in bases if b.name == base_name), None) if c.kind in TYPES else None
            b_scores = scores(base, task, metric) if base is not None else None
            if b_scores is not None:
                pt = paired_tests({c.label: s, base.label: b_scores}, st.resamples, st.seed, 1 - st.confidence,
                                  metric, st.method).iloc[0]
                row.update(base=base.label, base_mean=pt["mean_b"], diff=pt["diff"], diff_ci_low=pt["diff_ci_low"],
                           diff_ci_high=pt["diff_ci_high"], p=pt["p_randomization"])
            if c.kind == "ann":
                rec = load_ann_agreement(results_dir, c.name, task, split, c.revision)
                row.update((rec or {}).get("summary", {}))
            block.append(row)
        tested = [r for r in block if r.get("p") is not None]
        for t in {r["task"] for r in tested}:
            group = [r for r in tested if r["task"] == t]
            for r, adj in zip(group, holm([r["p"] for r in group])):
                r["p_holm"], r["significant"] = float(adj), bool(adj < 1 - st.confidence)
        rows += block
    return pd.DataFrame(rows)


def format_experiment_table(df: pd.DataFrame) -> str:
    """Plain-text view: mean [CI], diff vs base [CI] with Holm p, overlap@k vs exact search."""
    if df.empty:
        return "(no experiment results)"
    lines = []
    for (task, metric), g in df.groupby(["task", "metric"], sort=False):
        lines.append(f"{task} — {metric}")
        for r in g.itertuples(index=False):
            cell = f"  {r.candidate:<38} {r.mean:.4f} [{r.ci_low:.4f}, {r.ci_high:.4f}]"
            if isinstance(getattr(r, "base", None), str):
                cell += (f"  vs {r.base}: {r.diff:+.4f} [{r.diff_ci_low:+.4f}, {r.diff_ci_high:+.4f}]"
                         f" p_holm={r.p_holm:.3f}{' *' if r.significant else ''}")
            for k in ("index_overlap_at_10", "index_overlap_at_100"):
                v = getattr(r, k, None)
                if v is not None and v == v:
                    cell += f"  {k.replace('index_overlap_at_', 'overlap@')} vs exact={v:.3f}"
            lines.append(cell)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """`python -m runners.experiments -c configs/benchmarks/experiments-demo.yaml`: print the table."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("-c", "--config", default="configs/benchmarks/experiments-demo.yaml")
    ap.add_argument("--metric", action="append", help="metric(s); default: the config's stats.metrics")
    ap.add_argument("--csv", help="also write the table to this CSV file")
    args = ap.parse_args(argv)
    cfg = BenchmarkConfig.from_file(args.config)
    df = experiment_table(cfg.results_path, cfg, args.metric)
    print(format_experiment_table(df))
    if args.csv:
        df.to_csv(args.csv, index=False)


if __name__ == "__main__":
    main()
