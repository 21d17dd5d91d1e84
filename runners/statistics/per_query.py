"""Stored results -> per-query score tables (one column per model), and the tags of each query.

Reads only what `run` stored (runners/results/store.py) and the task's own files: no model
library is imported, so analysis starts in well under a second. Every question the stored
results cannot answer (no results, unknown metric or model, damaged file) is an AnalysisError:
one line naming what is missing and what to do, never a KeyError deep inside pandas.
Scores are read into plain dicts (pandas Series only for the API functions that return them, with
pandas imported there): `stats` and `check` start without pandas.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from custom_tasks.config import find_task_configs, resolve_task_config

from ..results.store import find_run, load_candidates, per_query_path, read_json, read_per_query
from ..results.variants import shown_label
from .analysis_errors import AnalysisError

if TYPE_CHECKING:
    import pandas as pd

    from custom_tasks.collection import Collection
    from custom_tasks.config import TaskConfig

RUN_HINT = "run `private-mteb run` first"
T = TypeVar("T")

#: what `read_once` keeps: key -> value read; None outside it (then every call reads its files)
_ONCE: dict[tuple[Any, ...], Any] | None = None


@contextmanager
def read_once() -> Iterator[None]:
    """Inside, each per-query file (by path, mtime, size) and each task's collection is read once: what one
    `stats` / `check` invocation asks for per metric, per tag list and for judged@10. Nothing is kept after
    the outermost block, so a long-lived process never answers from files it read before."""
    global _ONCE
    outer = _ONCE
    if outer is None:
        _ONCE = {}
    try:
        yield
    finally:
        _ONCE = outer


def _once(key: tuple[Any, ...], read: Callable[[], T]) -> T:
    if _ONCE is None:
        return read()
    if key not in _ONCE:
        _ONCE[key] = read()
    return _ONCE[key]  # type: ignore[no-any-return]


def task_config_collection(cfg: TaskConfig) -> Collection:
    """The collection a task config points at (read once inside `read_once`)."""
    from custom_tasks.sources import load_collection  # lazy: only tasks that need their files read them

    key = ("collection", json.dumps(cfg.source, sort_keys=True, default=str), str(cfg.base_dir), cfg.name)
    return _once(key, lambda: load_collection(cfg.source, cfg.base_dir, cfg.name))


def all_models(results_dir: Path) -> list[str]:
    """Every model name the folder knows (candidates.json order, then any other mteb results)."""
    base = Path(results_dir) / "results"
    names = list(load_candidates(results_dir))
    if base.is_dir():
        for meta in sorted(base.glob("*/*/model_meta.json")):
            try:
                name = read_json(meta).get("name")
            except (OSError, ValueError):
                continue  # a damaged mteb meta file names no model; its runs are still found by name
            if name and name not in names:
                names.append(name)
    return names


def result_models(results_dir: Path, task_name: str) -> list[str]:
    """Model names with per-query scores for this task (in candidates.json order, then any others)."""
    return [n for n in all_models(results_dir) if find_run(results_dir, n, task_name) is not None]


def stored_label(results_dir: Path, model_name: str) -> str:
    """The label `run` filed the candidate under (the key a label names across settings: the gate's swap, the
    history's timelines); print `label_of` instead."""
    return load_candidates(results_dir).get(model_name, {}).get("label") or model_name


def label_of(results_dir: Path, model_name: str) -> str:
    """The candidate's label as every command prints it: with the encode settings it does not say
    (results/variants.py shown_label: `MiniLM (max_seq_length 128)`)."""
    return shown_label(stored_label(results_dir, model_name), model_name)


def find_model(results_dir: Path, key: str, names: Iterable[str] | None = None) -> str | None:
    """The stored model called ``key`` (its results name or its label), None if none is."""
    names = list(all_models(results_dir) if names is None else names)
    if key in names:
        return key
    return next((n for n in names if key in (stored_label(results_dir, n), label_of(results_dir, n))), None)


def resolve_models(results_dir: Path, keys: Iterable[str]) -> list[str]:
    """Results names for user-given names or labels (`--models a,b`); unknown ones -> AnalysisError."""
    names = all_models(results_dir)
    out = []
    for key in keys:
        found = find_model(results_dir, key, names)
        if found is None:
            known = ", ".join(label_of(results_dir, n) for n in names) or "none"
            raise AnalysisError(f"--models: no model '{key}' in {results_dir} (known: {known})")
        out.append(found)
    return out


def require_results(results_dir: Path, models: Iterable[str], task_name: str, hint: str = RUN_HINT) -> None:
    """Every named model has per-query results for the task, else one line naming the missing ones."""
    missing = [m for m in models if find_run(results_dir, m, task_name) is None]
    if missing:
        raise AnalysisError(f"no results for model(s) {', '.join(repr(m) for m in missing)} on task "
                            f"'{task_name}' in {results_dir}: {hint}")


def _close(metric: str, known: list[str]) -> str:
    guess = metric.strip().lower().replace("@", "_at_")
    hits = [guess] if guess in known else difflib.get_close_matches(metric, known, n=1, cutoff=0.5)
    return f"; did you mean '{hits[0]}'?" if hits else ""


def check_metric(metric: str, known: Iterable[str], where: str = "--metric") -> None:
    """Unknown metric names fail up front, with the closest stored one (`ndcg@10` -> `ndcg_at_10`)."""
    known = sorted(known)
    if metric not in known:
        raise AnalysisError(f"{where}: unknown metric '{metric}'{_close(metric, known)} "
                            f"(stored: {', '.join(k for k in known if '_at_' in k) or ', '.join(known)})")


def _per_query_file(results_dir: Path, model_name: str, task_name: str, split: str,
                    revision: str | None) -> tuple[Path, dict[str, Any]]:
    folder = find_run(results_dir, model_name, task_name, revision)
    if folder is None:
        raise AnalysisError(f"no results for model '{model_name}' on task '{task_name}' in {results_dir}: "
                            f"{RUN_HINT}")
    path = per_query_path(folder, split)
    if not path.exists():
        raise AnalysisError(f"{path}: no per-query scores for split '{split}': run the task with that split")
    try:
        st = path.stat()
        data = _once(("per_query", str(path.resolve()), st.st_mtime_ns, st.st_size), lambda: read_per_query(path))
        subsets = data["subsets"]
    except (ValueError, KeyError, TypeError) as e:
        raise AnalysisError(f"{path}: damaged per-query file ({type(e).__name__}): delete {folder} and "
                            f"re-run `private-mteb run`") from None
    return path, subsets


def stored_run_meta(results_dir: Path, model_name: str, task_name: str, split: str = "test",
                    revision: str | None = None) -> dict[str, Any]:
    """A stored run's own fields (model, fingerprint, the analyzer BM25 used, ...), without its scores."""
    path, _ = _per_query_file(results_dir, model_name, task_name, split, revision)
    st = path.stat()
    data = _once(("per_query", str(path.resolve()), st.st_mtime_ns, st.st_size), lambda: read_per_query(path))
    return {k: v for k, v in data.items() if k != "subsets"}


def load_fingerprinted(results_dir: Path, model_name: str, task_name: str, metric: str = "ndcg_at_10",
                       split: str = "test", revision: str | None = None, subset: str = "default"
                       ) -> tuple[str, dict[str, tuple[str | None, float]]]:
    """(data revision, {query id: (hash of its text and labels, score)}): one side of pairing.pair_queries.
    The hash is None for results stored before private-mteb kept query hashes (they still load)."""
    scores = load_score_map(results_dir, model_name, task_name, metric, split, revision, subset)
    path, _ = _per_query_file(results_dir, model_name, task_name, split, revision)
    st = path.stat()
    data = _once(("per_query", str(path.resolve()), st.st_mtime_ns, st.st_size), lambda: read_per_query(path))
    stored = data.get("query_hashes") if isinstance(data, dict) else None
    hashes = stored.get(subset) if isinstance(stored, dict) else None
    text = hashes.get("text", {}) if isinstance(hashes, dict) else {}
    labels = hashes.get("labels", {}) if isinstance(hashes, dict) else {}

    def fingerprint(q: str) -> str | None:
        t, lab = text.get(q), labels.get(q)
        return f"{t}:{lab}" if isinstance(t, str) and isinstance(lab, str) else None

    return path.parent.name, {q: (fingerprint(q), v) for q, v in scores.items()}


def stored_corpus(results_dir: Path, model_name: str, task_name: str, split: str = "test",
                  subset: str = "default", with_ids: bool = True) -> tuple[int | None, list[str] | None]:
    """(documents searched, their sorted ids) of a stored result; None for what results stored before
    private-mteb kept them lack. The ids live in the rankings file, read only when asked for."""
    path, _ = _per_query_file(results_dir, model_name, task_name, split, None)
    st = path.stat()
    data = _once(("per_query", str(path.resolve()), st.st_mtime_ns, st.st_size), lambda: read_per_query(path))
    count = ((data.get("corpus_documents") or {}) if isinstance(data, dict) else {}).get(subset)
    ids = None
    rankings = path.parent / f"rankings_{split}.json.gz"
    if with_ids and rankings.exists():
        try:
            stored = (read_json(rankings).get("corpus_ids") or {}).get(subset)
        except (ValueError, OSError, AttributeError):  # a damaged rankings file: counts still tell the change
            stored = None
        ids = [str(i) for i in stored] if isinstance(stored, list) else None
    return (count if isinstance(count, int) else (len(ids) if ids is not None else None)), ids


def stored_metrics(results_dir: Path, model_name: str, task_name: str, split: str = "test",
                   subset: str = "default") -> list[str]:
    """The metric names stored per query for one model and task."""
    _, subsets = _per_query_file(results_dir, model_name, task_name, split, None)
    return sorted(subsets.get(subset, {}))


def load_score_map(results_dir: Path, model_name: str, task_name: str, metric: str = "ndcg_at_10",
                   split: str = "test", revision: str | None = None, subset: str = "default") -> dict[str, float]:
    """Per-query scores of one model on one task, sorted by query id; missing, damaged or unknown ->
    AnalysisError."""
    path, subsets = _per_query_file(results_dir, model_name, task_name, split, revision)
    if subset not in subsets:
        raise AnalysisError(f"{path}: no subset '{subset}' (stored: {', '.join(subsets)})")
    check_metric(metric, subsets[subset])
    try:
        return {q: float("nan") if v is None else float(v) for q, v in sorted(subsets[subset][metric].items())}
    except (AttributeError, TypeError, ValueError) as e:
        raise AnalysisError(f"{path}: damaged per-query file ({type(e).__name__}): re-run `private-mteb run`") from None


def load_scores(results_dir: Path, model_name: str, task_name: str, metric: str = "ndcg_at_10",
                split: str = "test", revision: str | None = None, subset: str = "default") -> pd.Series:
    """`load_score_map` as a pandas Series named after the model."""
    import pandas as pd  # lazy: only the pandas API pays for it

    scores = load_score_map(results_dir, model_name, task_name, metric, split, revision, subset)
    return pd.Series(scores, name=model_name, dtype=float)  # already sorted by query id


def paired_query_scores(results_dir: Path, task_name: str, metric: str = "ndcg_at_10", split: str = "test",
                        models: list[str] | None = None) -> tuple[dict[str, dict[str, float]], str]:
    """(label -> {query id: score}, note) for the models' current results. When they differ in data revision or
    queries (pairing.py, each model against the first), only the queries unchanged for every model are kept and
    the note says so ('' when all were scored on the same data)."""
    from .pairing import pair_queries

    names = result_models(results_dir, task_name) if models is None else models
    sides = {label_of(results_dir, n): load_fingerprinted(results_dir, n, task_name, metric, split) for n in names}
    if not sides:
        raise AnalysisError(f"no per-query results for task '{task_name}' in {results_dir}: {RUN_HINT}")
    (ref_label, (ref_rev, ref)), *others = sides.items()
    keep, differ = set(ref), []
    for label, (rev, queries) in others:
        p = pair_queries(ref, queries, ref_rev, rev)
        keep &= set(p.paired)
        if not p.same_data:
            differ.append(f"{ref_label} vs {label}: {p.describe()}")
    if differ and not keep:
        raise AnalysisError(f"task '{task_name}': no query is unchanged for every model ({'; '.join(differ)}): "
                            "re-run the older results on the current data")
    scores = {label: {q: s for q, (_, s) in queries.items() if not differ or q in keep}
              for label, (_, queries) in sides.items()}
    note = (f"{task_name}: the models were scored on different data ({'; '.join(differ)}): compared on the "
            f"{len(keep)} queries unchanged for every model; re-run the older results to compare on all")
    return scores, note if differ else ""


def per_query_table(results_dir: Path, task_name: str, metric: str = "ndcg_at_10", split: str = "test",
                    models: list[str] | None = None) -> dict[str, pd.Series]:
    """label -> per-query scores as pandas Series (one model's `load_scores` each)."""
    names = result_models(results_dir, task_name) if models is None else models
    out = {label_of(results_dir, name): load_scores(results_dir, name, task_name, metric, split) for name in names}
    if not out:
        raise AnalysisError(f"no per-query results for task '{task_name}' in {results_dir}: {RUN_HINT}")
    return out


def query_tags(task: str) -> dict[str, dict[str, str]] | None:
    """query id -> {tag: value} of a private task's collection, by name or YAML path (None for public
    tasks / no tags)."""
    if task not in find_task_configs() and Path(task).suffix not in {".yaml", ".yml"}:
        return None
    return task_config_collection(resolve_task_config(task)).query_tags or None


def tag_names(tags: dict[str, dict[str, str]] | None) -> list[str]:
    """The tag names in order of first appearance (the columns `task_tags` has)."""
    return list(dict.fromkeys(k for t in (tags or {}).values() for k in t))


def task_tags(task: str) -> pd.DataFrame | None:
    """`query_tags` as a frame: one row per query (sorted), one column per tag."""
    tags = query_tags(task)
    if tags is None:
        return None
    import pandas as pd  # lazy: only the pandas API pays for it

    return pd.DataFrame.from_dict(tags, orient="index").sort_index()
