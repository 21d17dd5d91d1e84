"""`private-mteb history` (the run history as timelines) and `history accept`; the hook `run` calls after a run.

Thin over runners/analysis/gate/history.py (records), history_timeline.py (steps and paired tests) and
runners/results/history_store.py / mlflow_store.py (files and MLflow).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any, Optional

import typer

from .common import App, config_option, console, err_console, friendly_errors, load_config

app = App(help="The run history: per candidate x task, what changed at each run and what it did to the metric.")

CONFIG_OPTION = config_option()


def _warn(lines: list[str]) -> None:
    for line in lines:
        err_console.print(f"warning: {line}: skipped", highlight=False, markup=False, soft_wrap=True)


def _history_dir(cfg: Any) -> Path:
    from ..statistics.analysis_errors import AnalysisError

    if cfg.history_path is None:
        raise AnalysisError(f"{cfg.path}: no `history:` folder configured (e.g. `history: ../../history`): "
                            "add it, then run `private-mteb run`")
    return cfg.history_path


def corpus_size(task: Any) -> int | None:
    """Documents in a task's corpus (a private task's collection; None when it cannot be told cheaply)."""
    collection = getattr(task, "collection", None)
    try:
        return len(collection.corpus) if collection is not None else None
    except TypeError:
        return None


def after_run(cfg: Any, records: list[Any], cands: list[Any], tasks: list[Any], mlflow_uri: str | None,
              quiet: bool = False) -> None:
    """Append the run's records to the history (when configured) and log them to MLflow (when asked)."""
    uri = mlflow_uri or (cfg.mlflow.tracking_uri if cfg.mlflow else None)
    if cfg.history_path is None and not uri:
        return
    from ..analysis.gate.history import record_run

    revisions = {c.name: c.revision for c in cands}
    sizes = {t.metadata.name: corpus_size(t) for t in tasks}
    entries = [{"name": r.candidate, "label": r.label, "revision": revisions.get(r.candidate, ""), "task": r.task,
                "status": r.status, "corpus_size": sizes.get(r.task)} for r in records]
    written, damaged = record_run(cfg.history_path, cfg.results_path, entries, project_dir=cfg.base_dir,
                                  benchmark=cfg.name, n_resamples=cfg.stats.resamples, seed=cfg.stats.seed,
                                  confidence=cfg.stats.confidence)
    _warn(damaged)
    out = err_console if quiet else console
    if cfg.history_path is not None:
        out.print(f"history: {len(written)} record(s) appended to {cfg.history_path}"
                  + "".join(f"\n  {r['candidate']['label']} on {r['task']}: {', '.join(r['changed']) or 'nothing changed'}"
                            for r in written), highlight=False, markup=False)
    if uri and written:
        from ..results.mlflow_store import log_records

        experiment = cfg.mlflow.experiment if cfg.mlflow else "private-mteb"
        ids = log_records(written, uri, experiment)
        out.print(f"mlflow: {len(ids)} run(s) logged to {uri} (experiment '{experiment}')", highlight=False,
                  markup=False)


def attach_report(cfg: Any, mlflow_uri: Optional[str], path: Path) -> None:
    """The written report as an artifact of the newest MLflow run of each of the config's candidates x tasks."""
    from ..statistics.candidate_set import config_labels, config_task_names
    from ..results.mlflow_store import attach_to_latest

    uri = mlflow_uri or cfg.mlflow.tracking_uri
    experiment = cfg.mlflow.experiment if cfg.mlflow else "private-mteb"
    labels = list(dict.fromkeys(config_labels(cfg)))
    done = attach_to_latest(uri, experiment, [(label, t) for label in labels for t in config_task_names(cfg)], path)
    err_console.print(f"mlflow: {path.name} attached to {done} run(s) at {uri} (experiment '{experiment}')",
                      highlight=False, markup=False)


def history_check(baseline: str, config: Optional[Path], results: Path, candidate: Optional[str],
                  tasks: Optional[list[str]], **options: Any) -> Any:
    """`check --baseline history:last|history:accepted`: the gate against the history of -c CONFIG (default:
    the project's config), on its candidates and tasks (-t narrows them); the candidate is the results folder,
    another folder, or a model name or label in it (a label: the config's current candidate)."""
    from ..statistics.candidate_set import config_names, config_task_names
    from ..analysis.gate.history_gate import history_gate

    cfg = load_config(config)
    only, tasks = config_names(cfg), tasks or config_task_names(cfg) or None
    options.setdefault("accept", f"private-mteb history accept -c {shlex.quote(str(cfg.path))}")
    folder, model = results, None
    if candidate is not None:
        if Path(candidate).is_dir():
            folder = Path(candidate)
        else:
            model = candidate
    run, damaged = history_gate(baseline, cfg.history_path, folder, model=model, only=only, tasks=tasks, **options)
    _warn(damaged)
    return run


def _since(value: Optional[str]) -> Any:
    if value is None:
        return None
    from ..statistics.analysis_errors import AnalysisError
    from ..analysis.gate.history_timeline import parse_time

    try:
        return parse_time(value)
    except ValueError:
        raise AnalysisError(f"--since: '{value}' is not a date or time (e.g. 2026-11-01 or 2026-11-01T09:00)") from None


def _records(cfg: Any, from_mlflow: Optional[str], experiment: Optional[str]) -> tuple[list[dict], list[str]]:
    if from_mlflow:
        from ..results.mlflow_store import read_records

        return read_records(from_mlflow, experiment or (cfg.mlflow.experiment if cfg.mlflow else "private-mteb"))
    from ..results.history_store import HistoryStore

    read = HistoryStore(_history_dir(cfg)).read()
    return read.records, read.damaged


def _accepted(cfg: Any, records: list[dict]) -> dict[tuple[str, str], str]:
    if cfg.history_path is None:
        return {}
    from ..analysis.gate.history import accepted_map
    from ..results.history_store import HistoryStore

    return accepted_map(HistoryStore(cfg.history_path), records)


@app.callback(invoke_without_command=True)
@friendly_errors
def history_cmd(
    ctx: typer.Context,
    config: Optional[Path] = CONFIG_OPTION,
    fmt: str = typer.Option("text", "--format", help="text|json|csv"),
    since: Optional[str] = typer.Option(None, "--since", help="only records from this date/time on (UTC)"),
    model: Optional[list[str]] = typer.Option(None, "--model", "-m", help="candidate label or results name (repeatable)"),
    task: Optional[list[str]] = typer.Option(None, "--task", "-t", help="task name (repeatable)"),
    from_mlflow: Optional[str] = typer.Option(None, "--from-mlflow", help="read the records logged to this MLflow "
                                              "tracking URI instead of the history folder"),
    experiment: Optional[str] = typer.Option(None, "--experiment", help="MLflow experiment (default: the config's)"),
    resamples: int = typer.Option(10_000, "--resamples"),
    seed: int = typer.Option(0, "--seed"),
) -> None:
    """Per candidate x task: each run's main metric with its 95% CI, what changed since the run before
    (data, task settings, model, encode settings, experiment), whether the corpus grew, and a paired test on
    the queries both runs share (same id, text and labels)."""
    if ctx.invoked_subcommand is not None:
        return
    if fmt not in ("text", "json", "csv"):
        raise typer.BadParameter(f"unknown format '{fmt}' (text|json|csv)", param_hint="--format")
    from ..statistics.candidate_set import in_scope
    from ..analysis.gate.history_timeline import build_timelines, csv_rows, format_timelines

    cfg = load_config(config)
    config = cfg.path
    records, damaged = _records(cfg, from_mlflow, experiment)
    _warn(damaged)
    records = in_scope(cfg, records)  # the config's candidates and tasks: a shared history folder holds others
    timelines = build_timelines(records, since=_since(since), models=model, tasks=task,
                                accepted=_accepted(cfg, records), n_resamples=resamples, seed=seed)
    from ..analysis.gate.best import history_best

    best = history_best(cfg, records, [t.task for t in timelines])  # stats' verdict on the latest records
    looks = _looks(cfg, timelines)
    if fmt == "json":
        from .common import print_json

        print_json({"timelines": [t.to_dict() for t in timelines], "damaged": damaged,
                    "best": [{"task": t, "sentence": s} for t, s in best.items()], "looks": looks,
                    "source": from_mlflow or str(cfg.history_path)})
        return
    if fmt == "csv":  # RFC 4180 like every CSV of the project: CRLF records, line breaks in a cell quoted
        from ..analysis.gate.history_timeline import CSV_COLUMNS
        from ..results.spreadsheet import csv_text
        from .common import print_data

        print_data(csv_text(CSV_COLUMNS, ([row.get(c) for c in CSV_COLUMNS] for row in csv_rows(timelines))))
        return
    if not timelines:
        where = from_mlflow or cfg.history_path
        console.print(f"no history records of {cfg.path.name}'s candidates in {where} (match the filters)"
                      if records else
                      f"no history records in {where} yet: run `private-mteb run -c {config}`", highlight=False,
                      markup=False)
        return
    for line in format_timelines(timelines):
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    for task_name, sentence in best.items():
        console.print(f"{task_name}, latest records: {sentence}", highlight=False, markup=False, soft_wrap=True)
    for look in looks:  # how often `check` looked at each comparison, and which test decided (issue 40)
        console.print(look["line"], highlight=False, markup=False, soft_wrap=True)


def _looks(cfg: Any, timelines: list[Any]) -> list[dict[str, Any]]:
    """The gate's looks at each timeline's (candidate, task), kept in the history folder by `check`."""
    if cfg.history_path is None:
        return []
    from ..analysis.gate.gate_looks import history_looks
    from ..results.look_store import LookStore

    return history_looks(LookStore(cfg.history_path), [(t.candidate, t.task) for t in timelines])


@app.command("accept")
def accept_cmd(
    config: Optional[Path] = CONFIG_OPTION,
    model: Optional[list[str]] = typer.Option(None, "--model", "-m", help="candidate label or results name (default: all)"),
    task: Optional[list[str]] = typer.Option(None, "--task", "-t", help="task name (default: all)"),
    record: Optional[str] = typer.Option(None, "--record", help="a record id (default: the latest of each candidate x task)"),
    note: str = typer.Option("", "--note", help="why it is accepted (kept with the mark)"),
) -> None:
    """Mark records of the config's candidates and tasks as the accepted baseline (`check --baseline
    history:accepted` compares with them)."""
    from ..statistics.candidate_set import in_scope
    from ..statistics.analysis_errors import AnalysisError
    from ..results.history_store import HistoryStore

    cfg = load_config(config)
    config = cfg.path
    store = HistoryStore(_history_dir(cfg))
    read = store.read()
    _warn(read.damaged)
    chosen: dict[tuple[str, str], dict] = {}
    for r in in_scope(cfg, read.records):  # never another config's candidates sharing the history folder
        label, name = str(r["candidate"].get("label")), str(r["candidate"].get("name"))
        if model and label not in model and name not in model or task and r["task"] not in task:
            continue
        if record is None or r["id"] == record:
            chosen[(label, r["task"])] = r  # oldest first: the latest one wins
    if not chosen:
        what = f"record '{record}'" if record else "records"
        raise AnalysisError(f"{cfg.history_path}: no {what} of {cfg.path.name}'s candidates and tasks match "
                            f"(see `private-mteb history -c {config}`)")
    for (label, task_name), r in sorted(chosen.items()):
        store.accept(r, note)
        console.print(f"accepted: {label} on {task_name}: record {r['id']} ({r['time']})", highlight=False,
                      markup=False)

