"""Regression gate: should a candidate run block a merge/deploy vs. a baseline?

A gate that fails on every dip would fail on noise (a 300-query test set has
~0.01-0.03 of sampling noise on nDCG@10); a gate that ignores significance
would be flaky. So the gate fails ONLY when both hold:

1. the observed drop (baseline mean - candidate mean) is larger than
   ``max_drop`` (practically relevant), and
2. the drop is statistically significant: a ONE-SIDED paired sign-flip
   randomization test of H0 "mean(baseline - candidate) <= 0" gives p < alpha.
   The bound printed with it is that same test inverted (a one-sided lower
   confidence bound of the drop, level 1 - alpha): p < alpha exactly when the
   bound is above zero, so the printed figure never contradicts the verdict.

Note that (2) tests drop > 0, not drop > max_drop: the margin is a
practical-relevance filter on the point estimate. All metrics are assumed
higher-is-better (true for nDCG, MRR, MAP, recall, precision).

A gate must never pass what it did not check: every (model, task) of the baseline must be in
the candidate (`allow_missing` lists what it skips instead), and a bad option, metric or folder
is an AnalysisError (exit 2), never confused with a regression (exit 1).

Scores are plain dicts and arrays (stats/intervals.py), never pandas, so `check` starts fast.
"""
from __future__ import annotations

import math
import os
from collections.abc import Container, Iterator, Mapping, Set
from dataclasses import dataclass, field
from pathlib import Path

from ...results.look_store import LookStore
from ...results.store import SIDE, find_run
from ...statistics.analysis_errors import AnalysisError
from ...statistics.pairing import CorpusChange, Pairing, corpus_change, pair_queries
from ...statistics.per_query import (RUN_HINT, all_models, find_model, label_of, load_fingerprinted, read_once, result_models,
                        stored_corpus, stored_label)
from .gate_check import GateResult, regression_check
from .gate_looks import MODES, looked_check

__all__ = ["GateResult", "GateRun", "regression_check", "regression_gate"]  # GateResult, regression_check: gate_check.py


@dataclass(frozen=True)
class GateRun:
    """What `regression_gate` compared (iterate: (task, baseline label, candidate label, result))
    and what it skipped because the candidate lacks it (only with ``allow_missing``)."""

    outcomes: list[tuple[str, str, str, GateResult]]
    skipped: list[str] = field(default_factory=list)
    #: judged@10 of baseline and candidate per task, and the "probably underestimated" warning when the
    #: candidate's is clearly lower (lines to print; empty for public tasks or runs without stored rankings)
    judged: list[str] = field(default_factory=list)
    #: per compared (task, baseline, candidate): which queries were paired (pairing.py), same order as outcomes
    pairings: list[Pairing] = field(default_factory=list)
    #: lines saying where the data differ and on how many queries the gate decided (--allow-changed-data),
    #: and how the corpus changed; each said once per task
    data_notes: list[str] = field(default_factory=list)
    #: per compared pair (same order as outcomes): how the documents differ; None on the same data revision
    corpora: list[CorpusChange | None] = field(default_factory=list)

    def __iter__(self) -> Iterator[tuple[str, str, str, GateResult]]:
        return iter(self.outcomes)

    def __len__(self) -> int:
        return len(self.outcomes)

    @property
    def passed(self) -> bool:
        return all(r.passed for *_, r in self.outcomes)


def check_options(max_drop: float, alpha: float, n_resamples: int, mode: str = "fixed") -> None:
    """Out-of-range options are the user's error (exit 2), not a regression (exit 1)."""
    if mode not in MODES:
        raise AnalysisError(f"stats: gate: must be one of {', '.join(MODES)} (fixed: one look; anytime: "
                            f"valid over every look, `check --sequential`), got '{mode}'")
    if not (math.isfinite(max_drop) and max_drop >= 0):
        raise AnalysisError(f"--max-drop must be a number >= 0 (the largest tolerated drop of the mean), got {max_drop}")
    if not 0 < alpha < 1:
        raise AnalysisError(f"--alpha must be between 0 and 1 (e.g. 0.05), got {alpha}")
    if n_resamples < 1:
        raise AnalysisError(f"--resamples must be >= 1 (e.g. 10000), got {n_resamples}")


def _looks_like_path(target: str, results_dir: Path) -> bool:
    return ("/" in target or os.sep in target or target in (".", "..") or Path(target).exists()
            or Path(target) == Path(results_dir))


def _resolve(target: str, results_dir: Path, option: str) -> tuple[Path, str | None]:
    """A results folder, or a model name/label inside `results_dir`; anything else is said as such."""
    p = Path(target)
    if p.is_dir():
        return p, None
    if Path(results_dir).is_dir() and find_model(results_dir, target) is not None:
        return Path(results_dir), target
    if _looks_like_path(target, results_dir):
        if p.exists():
            raise AnalysisError(f"{option}: {target} is a file, not a results folder")
        raise AnalysisError(f"{option}: results folder {target} does not exist")
    if not Path(results_dir).is_dir():
        raise AnalysisError(f"{option}: '{target}' is neither a results folder nor a model in {results_dir} "
                            f"(results folder {results_dir} does not exist; see --results)")
    known = ", ".join(label_of(results_dir, n) for n in all_models(results_dir)) or "none"
    raise AnalysisError(f"{option}: '{target}' is neither a results folder nor a model in {results_dir} "
                        f"(known models: {known})")


def _baseline_runs(base_dir: Path, base_key: str | None, tasks: list[str] | None,
                   only: Container[str] | None = None,
                   swapped: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """(task, model) of everything the baseline has (of `tasks`, when given; of the config's candidates
    `only`, when given, and the baseline models a candidate of `swapped` (label -> current name) replaced
    under the same label): all of it is checked."""
    out = []
    for task in tasks or sorted(_tasks_with_runs(base_dir)):
        models = result_models(base_dir, task)
        if base_key is not None:
            found = find_model(base_dir, base_key, models)
            models = [found] if found else []
        elif only is not None:
            models = [m for m in models if m in only or _replaced(m, stored_label(base_dir, m), models, swapped)]
        if not models and tasks:
            whose = f" of model '{base_key}'" if base_key else ""
            raise AnalysisError(f"--task: the baseline has no results{whose} for task '{task}' in {base_dir}")
        out += [(task, m) for m in models]
    if not out:
        whose = f" of model '{base_key}'" if base_key else " of the config's candidates" if only is not None else ""
        raise AnalysisError(f"--baseline: no per-query results{whose} in {base_dir}: nothing to check ({RUN_HINT})")
    return out


def _replaced(model: str, label: str, models: list[str], swapped: Mapping[str, str] | None) -> bool:
    """Whether a baseline model is a config candidate's predecessor: its label now names another results name
    (`swapped`: label -> current name) that the baseline does not have itself."""
    current = (swapped or {}).get(label)
    return current is not None and current != model and current not in models


@read_once()  # each task's collection read once, not once per compared model
def regression_gate(baseline: str, candidate: str = "results", *, results_dir: Path = Path("results"),
                    tasks: list[str] | None = None, metric: str = "ndcg_at_10", max_drop: float = 0.01,
                    alpha: float = 0.05, split: str = "test", n_resamples: int = 10_000,
                    seed: int = 0, allow_missing: bool = False, allow_changed_data: bool = False,
                    qrels: Mapping[str, Mapping[str, Mapping[str, int]]] | None = None,
                    only: Container[str] | None = None, mode: str = "fixed",
                    looks: LookStore | None = None, scales: Mapping[str, list[int]] | None = None,
                    complete: Container[str] | None = None) -> GateRun:
    """Compare candidate vs baseline on every (model, task) the baseline has.

    Each side is a results folder (then models are matched by name) or a model name/label in
    `results_dir` (e.g. yesterday's fine-tune vs today's). What the candidate lacks is an
    AnalysisError naming it, unless `allow_missing` (then it is listed in `GateRun.skipped`).
    Queries are paired by id and the hash of their text and labels (pairing.py). Documents added or removed
    with the same questions and labels pair every query: the gate compares (that decay is what it is for) and
    `GateRun.data_notes` says how the corpus changed, once per task. When questions or labels differ, that is
    an AnalysisError counting what changed, unless `allow_changed_data` (then the gate decides on the unchanged
    queries and `GateRun.data_notes` says on how many).
    `qrels` (task -> labels) gives judged@10 its labels; by default a task is looked up by name in configs/tasks;
    `scales` (task -> its grade scale) bounds the unjudged pairs' grades (default: the task's YAML, else its labels').
    `complete`: a mapping task -> its questions whose labels are declared complete (a `complete_labels` column, or
    the task's `complete_labels: true` for all: unjudged_mark.config_labels; a plain container of task names: every
    question of those; default: the collection of the task found by name says): their unjudged pairs are known 0s; one line instead of judged@10 and
    the unjudged marks when every question declares it, one line saying how many above them when some do.
    `only`: results names to check (a config's candidates, candidate_set.config_names); default: all.
    `mode`: fixed (one look) or anytime (confseq.py); `looks`: where each decision is counted (gate_looks.py), per
    candidate label, task and baseline (its model and folder, relative to the working directory: CI's checkout
    path does not split the count; new questions scored on both sides continue the same comparison).
    """
    check_options(max_drop, alpha, n_resamples, mode)
    base_dir, base_model = _resolve(baseline, results_dir, "--baseline")
    cand_dir, cand_model = _resolve(candidate, results_dir, "--candidate")
    if base_dir.resolve() == cand_dir.resolve() and base_model is None and cand_model is None:
        raise AnalysisError("--baseline and --candidate are the same results folder: name a model or another folder")
    base_key = base_model or cand_model
    # the config's candidates by label: one swapped under its label (another model, another setting) is
    # checked against what the label named in the baseline, never the old one's results left in the folder
    swapped = {} if only is None else {stored_label(cand_dir, n): n for n in all_models(cand_dir) if n in only}
    pairs, missing = [], []
    for task, b in _baseline_runs(base_dir, base_key, tasks, only, swapped):
        if cand_model is not None:
            names = result_models(cand_dir, task)
            c = (find_model(cand_dir, cand_model, [n for n in names if n in only]) if only is not None else None) \
                or find_model(cand_dir, cand_model, names)
        elif only is not None and b not in only:
            c = swapped[stored_label(base_dir, b)]
            c = c if find_run(cand_dir, c, task) is not None else None
        else:
            c = b if find_run(cand_dir, b, task) is not None else None
        if c is None:
            missing.append(f"model '{cand_model or b}' on task '{task}'")
        else:
            pairs.append((task, b, c))
    where = f"{cand_dir}" + (f" (model '{cand_model}')" if cand_model else "")
    if missing and not allow_missing:
        raise AnalysisError(f"the candidate {where} lacks what the baseline has: {'; '.join(missing)}: "
                            "run them, or pass --allow-missing to check only the rest")
    if not pairs:
        raise AnalysisError(f"nothing to compare: the candidate {where} has none of the baseline's results")
    sides = [(load_fingerprinted(base_dir, b, task, metric, split), load_fingerprinted(cand_dir, c, task, metric, split))
             for task, b, c in pairs]
    pairings = [pair_queries(bq, cq, rb, rc) for (rb, bq), (rc, cq) in sides]
    corpora = [_corpus_change(base_dir, b, cand_dir, c, task, split) if p.revision_changed else None
               for (task, b, c), p in zip(pairs, pairings)]
    # what stops the gate: queries or labels changed (a corpus change alone is compared: the decay to catch)
    differ = _once_per_task([(task, f"{label_of(base_dir, b)} -> {label_of(cand_dir, c)}", _data_text(p, ch))
                             for (task, b, c), p, ch in zip(pairs, pairings, corpora) if not p.same_queries])
    if differ and not allow_changed_data:
        raise AnalysisError(f"baseline and candidate were scored on different questions or labels: "
                            f"{'; '.join(differ)}: re-run the baseline on the current data, or pass "
                            "--allow-changed-data to decide on the unchanged queries only")
    out, notes_seen = [], []
    for (task, b, c), p, ch, ((_, bq), (_, cq)) in zip(pairs, pairings, corpora, sides):
        if not p.paired:
            raise AnalysisError(f"task '{task}': no query is unchanged between baseline and candidate "
                                f"({p.describe()}): nothing to decide on; re-run the baseline on the current data")
        if p.same_data and p.unknown:
            notes_seen.append(f"{task}: {p.unknown} of {len(p.paired)} queries paired by id only: stored without "
                              "query hashes (older results), on the same data revision")
        if p.corpus_only:
            what = ch.describe() if ch else "corpus changed"
            if ch is not None and ch.ids_changed is False:
                what += ", the same document ids (their texts, or another split's questions, changed)"
            notes_seen.append(f"{task}: {what}; the same {len(p.paired)} questions and labels: compared on all of them")
        elif not p.same_data:
            notes_seen.append(f"{task}: data differ ({_data_text(p, ch)}): decided on the {len(p.paired)} unchanged "
                              "queries (--allow-changed-data)")
        result = looked_check({q: bq[q][1] for q in p.paired}, {q: cq[q][1] for q in p.paired}, metric,
                              store=looks, label=stored_label(cand_dir, c), task=task,
                              baseline_id=f"{b} in {os.path.relpath(base_dir.resolve())}",
                              baseline_shown=f"{label_of(base_dir, b)} in {base_dir}", mode=mode,
                              max_drop=max_drop, alpha=alpha, n_resamples=n_resamples, seed=seed)
        out.append((task, label_of(base_dir, b), label_of(cand_dir, c), result))
    from ...labels.notes.unjudged_mark import COMPLETE, assumed_line, complete_line

    notes: list[str] = []
    for (task, b, c), p in zip(pairs, pairings):
        labels = _task_qrels(task, split, qrels)
        if labels and not p.same_data:  # judged@10 on the queries the gate decided on, as the scores
            paired = set(p.paired)
            labels = {q: docs for q, docs in labels.items() if q in paired}
        known = _complete_of(task, split, complete, labels)
        declared = complete_line(len(known), len(labels or {}) or len(known))
        if declared and f"{task}: {declared}" not in notes:  # said once per task
            notes.append(f"{task}: {declared}")
        if declared == COMPLETE:
            continue
        found = judged_notes(task, base_dir, b, cand_dir, c, labels, split, seed, scale=(scales or {}).get(task),
                             known=known)
        first = next((i for i, n in enumerate(found) if n.startswith(f"{task}: unjudged: ")), None)
        assumed = f"{task}: {assumed_line(declared)}"
        if first is not None and assumed not in notes:  # what the marks assume, once per task
            found.insert(first, assumed)
        notes += found
    data_notes = list(dict.fromkeys(notes_seen))  # one line per task and change, however many models share it
    return GateRun(out, missing, notes, pairings, data_notes, corpora)


def _corpus_change(base_dir: Path, base: str, cand_dir: Path, cand: str, task: str, split: str) -> CorpusChange:
    """How the documents of two stored results differ (ids read only here, when the revisions differ)."""
    (nb, ids_b), (nc, ids_c) = stored_corpus(base_dir, base, task, split), stored_corpus(cand_dir, cand, task, split)
    return corpus_change(nb, nc, ids_b, ids_c)


def _data_text(p: Pairing, change: CorpusChange | None) -> str:
    """The query counts, and the corpus change when documents were added or removed (or it cannot be told)."""
    return p.describe() + (f"; {change.describe()}" if change is not None and change.ids_changed is not False else "")


def _once_per_task(items: list[tuple[str, str, str]]) -> list[str]:
    """`task (A -> A, B -> B): what changed`: a change every model of a task shares is said (and counted) once."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for task, who, text in items:
        grouped.setdefault((task, text), []).append(who)
    return [f"{task} ({', '.join(who)}): {text}" for (task, text), who in grouped.items()]


def _complete_of(task: str, split: str, given: Mapping[str, Set[str]] | Container[str] | None,
                 labels: Mapping[str, Mapping[str, int]] | None) -> set[str]:
    """The task's questions (among ``labels``' when given) whose labels are declared complete (`complete`)."""
    if isinstance(given, Mapping):
        known = set(given.get(task, ()))
    elif given is not None:  # task names: every question of theirs
        known = set(labels or ()) if task in given else set()
    else:
        from ...labels.notes.unjudged_mark import complete_questions

        known = complete_questions(task, None, split)
    return known & set(labels) if labels is not None else known


def _task_qrels(task: str, split: str, given: Mapping[str, Mapping[str, Mapping[str, int]]] | None
                ) -> Mapping[str, Mapping[str, int]] | None:
    if given is not None:
        return given.get(task)
    try:
        from ...labels.pool.judged import task_collection

        return task_collection(task).qrels.get(split)
    except Exception:  # noqa: BLE001 — a public task or data moved: the gate stands without judged@10
        return None


def judged_notes(task: str, base_dir: Path, base: str, cand_dir: Path, cand: str,
                 qrels: Mapping[str, Mapping[str, int]] | None, split: str = "test", seed: int = 0,
                 k: int = 10, scale: list[int] | None = None, known: Set[str] = frozenset()) -> list[str]:
    """`task: judged@10: baseline B 0.95, candidate C 0.70`, when C is clearly lower the warning, and the mark
    of the verdict the unjudged pairs could reverse (unjudged_mark.py: the line `stats` prints for the pair);
    ``known``: the questions whose labels are declared complete (their unjudged documents are known 0s)."""
    from ...labels.pool.judged import DEFAULT_MARGIN, _below_baseline, judged_scores, nan_mean, stored_rankings

    if not qrels:
        return []
    try:
        sb = judged_scores(stored_rankings(base_dir, base, task, split)[0], qrels, k, known)
        sc = judged_scores(stored_rankings(cand_dir, cand, task, split)[0], qrels, k, known)
    except AnalysisError:  # runs stored before rankings were
        return []
    lb, lc = label_of(base_dir, base), label_of(cand_dir, cand)
    lines = [f"{task}: judged@{k}: baseline {lb} {nan_mean(sb):.2f}, candidate {lc} {nan_mean(sc):.2f}"]
    warning = _below_baseline(cand_dir, task, sc, sb, cand, base, k, DEFAULT_MARGIN, seed, labels=(lc, lb))
    lines += [f"warning: {warning}"] if warning else []
    if lb != lc:  # could the unjudged pairs reverse baseline vs candidate? (the line `stats` prints too)
        from ...labels.notes.unjudged_mark import mark_lines, task_scale

        rankings = {"b": stored_rankings(base_dir, base, task, split)[0],
                    "c": stored_rankings(cand_dir, cand, task, split)[0]}
        grades = scale or task_scale(task, qrels)
        lines += [f"{task}: {m}" for m in mark_lines(rankings, {"b": lb, "c": lc}, qrels, grades, k, known=known)]
    return lines


def _tasks_with_runs(results_dir: Path) -> set[str]:
    base = Path(results_dir) / SIDE / "runs"
    return {p.name for p in base.glob("*/*/*") if p.is_dir()}
