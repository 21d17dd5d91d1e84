"""Benchmark YAML files (`configs/benchmarks/*.yaml`): which candidates run on which tasks."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from custom_tasks.config import TASKS_DIR_ENV, find_task_configs, project_root, tasks_dir
from custom_tasks.config_problems import problems, raise_problems
from custom_tasks.errors import ConfigError
from custom_tasks.yaml_io import line_at, read_yaml

from ..search.params import LARGE_CORPUS_DOCS  # default `encode.large_corpus_docs` (search reads it too)
from .generator import GeneratorOptions
from .judge import JudgeOptions, LabelsOptions
from .model_spec import ENCODES_NOTHING, Backend, ModelSpec, Precision, with_backend

DEFAULT_BENCHMARK = Path("configs/benchmarks/demo.yaml")


class EncodeOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    batch_size: int = 32
    device: str | None = None
    max_seq_length: int | None = None
    engine: Literal["local", "ray"] = "local"  # ray: missing texts are encoded on a Ray cluster first
    address: str | None = None  # Ray: "auto" (a cluster this machine belongs to), "host:6379" or "ray://host:10001"
    connect_timeout: float = Field(default=30.0, gt=0)  # Ray: seconds to connect to `address`, then exit 2
    actors: int = Field(default=2, ge=1)  # Ray actors, each loads the model once
    ray_batch_size: int = Field(default=1024, ge=1)  # texts per Ray task; each finished one is cached at once
    large_corpus_docs: int = Field(default=LARGE_CORPUS_DOCS, ge=0)  # from this many documents: block-wise search from the cache
    backend: Backend = "torch"  # onnx / openvino: an exported copy of the model; results named <model>@onnx...
    precision: Precision = "fp32"  # int8 / bf16 (which backend offers which: model_spec.BACKENDS)


class StatsOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    resamples: int = Field(default=10_000, ge=1)  # bootstrap / permutation resamples
    seed: int = 0
    confidence: float = Field(default=0.95, gt=0.0, lt=1.0)
    method: Literal["percentile", "bca"] = "percentile"
    metrics: list[str] = ["ndcg_at_10"]
    tags: list[str] = []  # query tags to break scores down by (docs/statistics.md: the stats: block)
    #: the gate's test (docs/gate.md): fixed (one look) or anytime (a confidence sequence, valid over every look)
    gate: Literal["fixed", "anytime"] = "fixed"


class MlflowOptions(BaseModel):
    """`mlflow: {tracking_uri, experiment}`: log each (candidate, task) of a run as an MLflow run."""

    model_config = ConfigDict(extra="forbid")

    tracking_uri: str
    experiment: str = "private-mteb"


class BenchmarkConfig(BaseModel):
    """Candidates x tasks, encode options and where results go."""

    model_config = ConfigDict(extra="forbid")

    name: str = "benchmark"
    description: str = ""
    models: list[ModelSpec] = []
    experiments: list[dict[str, Any]] = []
    tasks: list[str]
    encode: EncodeOptions = EncodeOptions()
    results_dir: str = "results"
    cache_dir: str | None = None
    keep_top_k: int | None = Field(None, ge=1)  # None: all of mteb's top_k (the task's largest k) is stored
    history: str | None = None  # the run history folder (relative to this file); none: no history kept
    mlflow: MlflowOptions | None = None
    stats: StatsOptions = StatsOptions()
    judge: JudgeOptions | None = None  # the LLM that grades pooled pairs (`labels judge`); none: nothing is sent
    labels: LabelsOptions = LabelsOptions()  # whether LLM grades count in scoring
    generator: GeneratorOptions | None = None  # the LLM that writes questions (`questions generate`)
    #: the LLM the team's product runs: `questions generate` refuses a generator of its family (generator guard)
    production_llm: str | None = None
    path: Path | None = None

    @field_validator("tasks")
    @classmethod
    def _some_task(cls, v: list[str]) -> list[str]:
        if not v:
            raise ValueError("tasks is empty: list at least one task (a name from configs/tasks/ or a task YAML path)")
        return v

    @model_validator(mode="after")
    def _something_to_run(self) -> BenchmarkConfig:
        if not self.models and not self.experiments:
            raise ValueError("needs at least one entry under 'models' or 'experiments'")
        if self.encode.max_seq_length:  # the benchmark default is part of each model's identity and results name
            self.models = [m if m.max_seq_length or m.resolved_kind in ENCODES_NOTHING | {"endpoint"}  # a server's own
                           else m.model_copy(update={"max_seq_length": self.encode.max_seq_length})
                           for m in self.models]
        self.models = [with_backend(m, self.encode.backend, self.encode.precision) for m in self.models]
        names = [m.name + (m.label or "") for m in self.models]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ValueError(f"model listed twice: {sorted(dup)}")
        stored = [(m.results_name, m.revision) for m in self.models]
        same = sorted({n for n, r in stored if stored.count((n, r)) > 1})
        if same:
            raise ValueError(f"models {same} are listed twice with the same results name and revision: they would "
                             "overwrite each other's results; give each a different name or revision")
        if self.labels.use_llm and self.judge is None:
            raise ValueError(f"labels.use_llm: {self.labels.use_llm} needs a `judge:` (whose grades to use)")
        return self

    @property
    def base_dir(self) -> Path:
        """Relative paths in a config (results_dir, cache_dir, task YAML paths) resolve against the
        folder of the file that names them, as in task YAMLs; a config built in code uses the cwd."""
        return self.path.resolve().parent if self.path is not None else Path.cwd()

    @property
    def results_path(self) -> Path:
        return Path(os.path.normpath(self.base_dir / self.results_dir))  # no "configs/benchmarks/../.." in messages

    @property
    def history_path(self) -> Path | None:
        return Path(os.path.normpath(self.base_dir / self.history)) if self.history else None

    @property
    def cache_path(self) -> Path:
        return Path(os.path.normpath(self.base_dir / self.cache_dir)) if self.cache_dir else self.results_path / "private-mteb" / "embeddings"

    def check_model_paths(self) -> None:
        """Every model `path:` exists: checked before a run starts, not when that candidate loads minutes later
        (analysis commands do not check: they read stored results, the folder may be gone since)."""
        for index, spec in enumerate(self.models):
            if spec.path and not Path(spec.path).expanduser().exists():
                where = self.path or "benchmark config"
                hint = "" if Path(spec.path).is_absolute() else f" (relative paths resolve against {self.base_dir})"
                line = _model_key_line(self.path, index, "path") if self.path else None
                raise ConfigError(where, f"models[{index}] '{spec.name}': path '{spec.path}' does not exist{hint}: "
                                         "fix `path:` or remove the entry", line)

    @classmethod
    def from_file(cls, path: str | Path) -> BenchmarkConfig:
        path = Path(path)
        if not path.is_file() and not path.is_absolute() and (project_root() / path).is_file():
            path = project_root() / path  # e.g. the default configs/benchmarks/demo.yaml from a sub-folder
        if not path.is_file():
            from .discovery import not_found_hint

            raise ConfigError(path, not_found_hint(path))
        data, node = read_yaml(path, "models, tasks, ...")
        found, cfg = [], None
        try:
            cfg = cls.model_validate(data)
        except ValidationError as e:
            found = problems(e, cls, node)
        if isinstance(data.get("experiments"), list):  # before any model loads, with every other problem
            from .experiment_entries import experiment_problems

            found += experiment_problems(data["experiments"], node)
        raise_problems(path, sorted(found, key=lambda p: p[0] or 0))
        assert cfg is not None
        cfg.path = path
        cfg.tasks = [_resolve_task_entry(t, path.resolve().parent) for t in cfg.tasks]
        cfg.models = [_resolve_model_path(m, path) for m in cfg.models]
        return cfg


def _resolve_model_path(spec: ModelSpec, config: Path) -> ModelSpec:
    """A relative model `path:` resolves against the benchmark file's folder like every path in a config;
    one that only exists relative to the cwd (what older configs relied on) is kept as written."""
    given = Path(spec.path or "")
    if not spec.path or given.is_absolute():
        return spec
    here = (config.resolve().parent / given).resolve()
    if not here.exists() or (Path.cwd() / given).resolve() == here:
        return spec
    return spec.model_copy(update={"path": str(here)})


def _model_key_line(config: Path, index: int, key: str) -> int | None:
    """1-based line of `models[index].key` in the YAML file (None if it cannot be told)."""
    try:
        return line_at(read_yaml(config, "models, tasks, ...")[1], ["models", index, key])
    except Exception:  # noqa: BLE001 - a line number is a nicety; the message stands without it
        return None


def _resolve_task_entry(entry: str, here: Path) -> str:
    """A task entry as an absolute YAML path when it is a private task, so every command finds it from
    any folder: a relative YAML path resolves against the benchmark file's folder (then the cwd), a name
    known to the current project stays a name, else it resolves against the `configs/tasks` of the
    benchmark's project (from its folder upward, like git finds `.git`; $PRIVATE_MTEB_TASKS_DIR
    overrides). Anything else is left for mteb's registry."""
    path = Path(entry)
    if path.suffix in {".yaml", ".yml"}:
        for candidate in ([path] if path.is_absolute() else [here / path, Path.cwd() / path]):
            if candidate.is_file():
                return str(candidate.resolve())
        return entry
    if entry in find_task_configs():  # the current project knows it: keep the name as written
        return entry
    folders = [tasks_dir()] if os.environ.get(TASKS_DIR_ENV) else [
        d / "configs" / "tasks" for d in [here, *here.parents] if (d / "configs" / "tasks").is_dir()]
    for folder in folders:
        found = find_task_configs(folder).get(entry)
        if found is not None:
            return str(Path(found).resolve())
    return entry
