"""`check --baseline history:last` / `history:accepted`: the gate against the run history, no baseline folder.

For every (model, task) stored in the candidate results folder, the baseline is a history record of the same
candidate (label) and task:
* `history:last` — the newest record whose fingerprint differs from the candidate's (the run that just wrote
  its own record is not its own baseline); when every record has the candidate's fingerprint, the newest one;
* `history:accepted` — the record most recently marked by `private-mteb history accept`.
Queries are paired by id, text and labels (pairing.py). A history baseline is usually of other data (the
corpus grew since), so the gate decides on the unchanged queries and says how many; none unchanged, no
record, or an unknown spec is an AnalysisError (exit 2). The decision itself is gate.regression_check.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...results.history_store import HistoryStore, stored_result
from ...results.look_store import LookStore
from ...results.variants import shown_label
from ...statistics.analysis_errors import AnalysisError
from ...statistics.pairing import corpus_change, pair_queries
from ...statistics.per_query import RUN_HINT, all_models, find_model, label_of, result_models, stored_corpus, stored_label
from .gate import GateRun, check_options
from .gate_looks import looked_check
from .history import fingerprinted, identity_changes, identity_of, result_fingerprinted

SPECS = ("history:last", "history:accepted")


def is_history_spec(baseline: str) -> bool:
    return baseline.startswith("history:")


def _baseline_record(store: HistoryStore, spec: str, label: str, name: str, task: str,
                     fingerprint: str | None) -> Mapping[str, Any] | None:
    records = store.read(label, task).records or [r for r in store.read(task=task).records
                                                  if r["candidate"].get("name") == name]
    if not records:
        return None
    if spec == "history:accepted":
        wanted = store.accepted_id(str(records[-1]["candidate"].get("label")), task)
        return next((r for r in reversed(records) if r["id"] == wanted), None)
    other = [r for r in records if r.get("fingerprint") != fingerprint]
    return (other or records)[-1]


def history_gate(baseline: str, history_dir: Path | None, results_dir: Path, *, model: str | None = None,
                 only: list[str] | None = None,
                 tasks: list[str] | None = None, metric: str = "ndcg_at_10", max_drop: float = 0.01,
                 alpha: float = 0.05, split: str = "test", n_resamples: int = 10_000, seed: int = 0,
                 allow_missing: bool = False, accept: str = "private-mteb history accept", mode: str = "fixed"
                 ) -> tuple[GateRun, list[str]]:
    """(the gate's outcomes, damaged history files seen) for every stored (model, task) of `results_dir`
    (`model`: one model name or label; `only`: these results names, e.g. the config's current candidates;
    `tasks`: these tasks, e.g. the config's). `accept`: the command that marks a record, shown for each
    (candidate, task) that has no accepted one, e.g. `private-mteb history accept -c bench.yaml`. `mode`: fixed or
    anytime (gate_looks.py); each decision is a look kept in the history folder (results/look_store.py)."""
    if baseline not in SPECS:
        raise AnalysisError(f"--baseline: unknown history baseline '{baseline}' (use {' or '.join(SPECS)})")
    check_options(max_drop, alpha, n_resamples, mode)
    if history_dir is None:
        raise AnalysisError(f"--baseline {baseline}: the config has no `history:` folder (e.g. `history: "
                            "../../history`): add it and run `private-mteb run`, or pass -c CONFIG")
    if not Path(results_dir).is_dir():
        raise AnalysisError(f"--candidate: results folder {results_dir} does not exist ({RUN_HINT})")
    store = HistoryStore(history_dir)
    names = all_models(results_dir)
    if model is not None:
        # a label names the config's current candidate first (a model swapped under one label is not the old one)
        found = find_model(results_dir, model, [n for n in names if n in only]) if only is not None else None
        found = found or find_model(results_dir, model, names)
        if found is None:
            raise AnalysisError(f"--candidate: no model '{model}' in {results_dir}")
        names = [found]
    elif only is not None:
        names = [n for n in names if n in only]
    wanted = tasks or sorted({p.name for p in (Path(results_dir) / "private-mteb" / "runs").glob("*/*/*") if p.is_dir()})
    damaged = list(store.read().damaged)
    outcomes, pairings, notes, missing = [], [], [], []
    for task in wanted:
        for name in [n for n in names if n in result_models(results_dir, task)]:
            stored = stored_result(results_dir, name, task, split)
            if stored is None:
                continue
            label, shown = stored_label(results_dir, name), label_of(results_dir, name)  # key, and what is printed
            base = _baseline_record(store, baseline, label, name, task, stored.identity.get("fingerprint"))
            if base is None:
                missing.append((label, task))
                continue
            base_metric = (base.get("per_query") or {}).get("metric")
            if base_metric != metric:
                raise AnalysisError(f"--metric: history records keep per-query scores of the main metric only "
                                    f"({base_metric} for {label} on {task}): use --metric {base_metric}")
            if metric not in stored.scores:
                raise AnalysisError(f"--metric: {label} on {task} has no per-query '{metric}' in {results_dir}")
            cand = result_fingerprinted(stored, metric)
            p = pair_queries(fingerprinted(base), cand, base.get("dataset_revision"), stored.dataset_revision)
            if not p.paired:
                raise AnalysisError(f"{task}: no query of {label} is unchanged since history record {base['id']} "
                                    f"({p.describe()}): nothing to decide on")
            changed = ", ".join(identity_changes(identity_of(base), stored.identity)[0]) or "nothing in the fingerprint"
            corpus = ""
            if p.revision_changed:  # records keep the corpus size, not its ids: the net change, said as check says it
                size = base.get("corpus_size")
                corpus = "; " + corpus_change(size if isinstance(size, int) else None,
                                              stored_corpus(results_dir, name, task, split, with_ids=False)[0]).describe()
            notes.append(f"{task}: {shown}: baseline = history record of {str(base['time'])[:19]} "
                         f"({'accepted' if baseline == 'history:accepted' else 'latest other'}); changed since: "
                         f"{changed}; {p.describe()}{corpus}")
            base_scores, cand_scores = fingerprinted(base), cand
            result = looked_check({q: base_scores[q][1] for q in p.paired}, {q: cand_scores[q][1] for q in p.paired},
                                  metric, store=LookStore(history_dir), label=label, task=task,
                                  baseline_id=f"history:{base['id']}", mode=mode,
                                  baseline_shown=f"history record of {str(base['time'])[:19]} ({baseline})",
                                  max_drop=max_drop, alpha=alpha,
                                  n_resamples=n_resamples, seed=seed)
            base_shown = shown_label(str(base["candidate"].get("label") or label), str(base["candidate"].get("name")))
            outcomes.append((task, f"{base_shown} ({baseline}, {str(base['time'])[:10]})", shown, result))
            pairings.append(p)
    if not outcomes and not missing:
        raise AnalysisError(f"--candidate: no per-query results in {results_dir}{' for ' + ', '.join(tasks) if tasks else ''}: {RUN_HINT}")
    if missing and (not allow_missing or not outcomes):
        what = "no accepted history record" if baseline == "history:accepted" else "no history record"
        if baseline == "history:accepted":
            where = "; ".join(f"{label} on task {task} (mark it: `{accept} -m {shlex.quote(label)} -t {task}`)"
                              for label, task in missing)
            hint = "accept the record that is the normal, or pass -t for the tasks that have one"
        else:
            where = "; ".join(f"{label} on task {task}" for label, task in missing)
            hint = "run `private-mteb run` with `history:` configured first"
        raise AnalysisError(f"{what} in {history_dir} for: {where}: {hint}"
                            + (" (or pass --allow-missing to check only the rest)" if outcomes else ""))
    return GateRun(outcomes, [f"{label} on {task}" for label, task in missing], [], pairings, notes), damaged

