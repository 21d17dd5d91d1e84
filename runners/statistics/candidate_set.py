"""The candidates a command compares: ONE rule for `stats`, `check`, `labels`, `inspect`, `history`,
`experiments` and the report.

Why one rule: a "best" or "cheapest" verdict is only as good as the set it was drawn from. `stats` once
left out a config's experiment candidates while the report included them, so the two named different
best systems for the same config (issue 28). Every command now starts from `config_candidates` (the
config's `models:`, then its planned experiment candidates, in config order); `--models` narrows that
set, and `CandidateSet.among` words which set a sentence compared ("among the 5 candidates of demo.yaml").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config.benchmark import BenchmarkConfig
from ..config.experiments import plan_experiments
from ..results.store import load_candidates
from ..results.variants import shown_label
from .analysis_errors import AnalysisError


@dataclass(frozen=True)
class Candidate:
    """One candidate of a config: a model or an experiment candidate, as `run` filed it."""

    name: str
    label: str
    revision: str | None
    kind: str  # "model" | "hybrid" | "chunk" | "ann" | "rerank"
    params: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    base: str | None = None  # results name of the dense model an experiment is built on


def config_candidates(cfg: BenchmarkConfig, results_dir: Path | None = None) -> list[Candidate]:
    """The config's models, then its experiment candidates; revisions and labels as the run recorded them
    (labels shared by two candidates get their results name appended, so every row stays tellable)."""
    known = load_candidates(cfg.results_path if results_dir is None else results_dir)
    out = [Candidate(m.results_name, shown_label(known.get(m.results_name, {}).get("label") or m.default_label,
                                                 m.results_name),
                     known.get(m.results_name, {}).get("revision"), "model") for m in cfg.models]
    for p in plan_experiments(cfg):  # labels as every command prints them (results/variants.py shown_label)
        rec = known.get(p.name, {})
        out.append(Candidate(p.name, shown_label(rec.get("label") or p.label, p.name), rec.get("revision"), p.kind,
                             dict(p.params), p.base.results_name))
    labels = [c.label for c in out]
    return [c if labels.count(c.label) == 1 else Candidate(c.name, f"{c.label} [{c.name}]", c.revision, c.kind,
                                                           c.params, c.base) for c in out]


def config_names(cfg: BenchmarkConfig) -> list[str]:
    """Results names of the config's candidates (models, then experiments): what "the config's" means."""
    return [m.results_name for m in cfg.models] + [p.name for p in plan_experiments(cfg)]


def config_labels(cfg: BenchmarkConfig) -> list[str]:
    """Every label the config's candidates go by (as configured and as the last run filed them)."""
    labels = [m.default_label for m in cfg.models] + [p.label for p in plan_experiments(cfg)]
    known = load_candidates(cfg.results_path)
    return labels + [str(known[n]["label"]) for n in config_names(cfg) if known.get(n, {}).get("label")]


@dataclass(frozen=True)
class CandidateSet:
    """The results names a command compares, and which set they are (for the sentences that name it)."""

    names: tuple[str, ...]
    config: str  # the config's file name, e.g. "demo.yaml"
    total: int  # candidates of the config
    narrowed: bool  # chosen with --models

    @property
    def among(self) -> str:
        """How a verdict names the set it compared: 'among the 5 candidates of demo.yaml'."""
        n = len(self.names)
        if self.narrowed:
            return (f"among the {n} candidate{'s' * (n != 1)} chosen with --models "
                    f"({self.total} in {self.config})")
        return f"among the {n} candidate{'s' * (n != 1)} of {self.config}"

    @property
    def note(self) -> str:
        """One line saying the set was narrowed ('' when it is the config's whole set)."""
        if not self.narrowed:
            return ""
        return f"compared: {len(self.names)} of the {self.total} candidates of {self.config} (--models)"


def _config_file(cfg: BenchmarkConfig) -> str:
    return cfg.path.name if cfg.path is not None else cfg.name


def candidate_set(cfg: BenchmarkConfig, models: Sequence[str] | None = None, tasks: Iterable[str] = (),
                  hint: str | None = None) -> CandidateSet:
    """The config's candidates (models and experiments), or the `--models` names/labels; with `tasks`, each
    must have stored results on each task (else one line naming the missing ones and `hint`)."""
    from .per_query import require_results, resolve_models

    every = config_names(cfg)
    if models is not None:
        names = resolve_models(cfg.results_path, models)
        if not names:
            raise AnalysisError("--models: give at least one model name or label")
    else:
        names = every
    if not names:
        raise AnalysisError(f"{cfg.path or cfg.name}: no entries under 'models:' or 'experiments:' to compare: "
                            "add them, or name stored models with --models")
    hint = hint or f"run `private-mteb run -c {cfg.path}`"
    for task in tasks:
        require_results(cfg.results_path, names, task, hint=hint)
    chosen = tuple(dict.fromkeys(names))
    # --models naming exactly the config's set is not a narrowing: the verdict still covers all of them
    return CandidateSet(chosen, _config_file(cfg), len(every), models is not None and set(chosen) != set(every))


def config_task_names(cfg: BenchmarkConfig) -> list[str]:
    """The mteb names of the config's tasks (a task YAML's `name:`), without loading any data."""
    from ..config.task_lookup import task_name_for

    out = []
    for entry in cfg.tasks:
        try:
            out.append(task_name_for(entry, cfg))
        except Exception:  # noqa: BLE001 - a task whose name cannot be told is left out of the scope only
            continue
    return out


def in_scope(cfg: BenchmarkConfig, records: Iterable[Any]) -> list[Any]:
    """The history records of the config's candidates (by results name or label: a model swapped under one
    label keeps its timeline) on the config's tasks. Why: several configs may share one history folder, and
    `history`, `history accept` and `check --baseline history:*` of one config must not act on another's."""
    names, labels, tasks = set(config_names(cfg)), set(config_labels(cfg)), set(config_task_names(cfg))
    return [r for r in records
            if (r["candidate"].get("name") in names or r["candidate"].get("label") in labels)
            and (not tasks or r["task"] in tasks)]
