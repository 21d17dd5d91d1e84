"""`private-mteb labels judge`: LLM grades for the pooled pairs, through the config's `judge:` endpoint.

Thin over runners/labels/judge/judge_run.py (prompts, cache, the grades file) and judge_client.py (HTTP); the pool comes
from labels/pool/pool.py (the candidates' top-k no human graded) or a pool file. Nothing is sent unless the config
names `judge.endpoint`; the command says where the texts go before it sends any.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from rich.text import Text

from .common import config_option, console, err_console, load_config, offline_default


def config_models(cfg: object, models: Optional[str]) -> list[str]:
    """Results names: `--models a,b` (names or labels), else the config's models and experiment candidates
    (the one rule of every command: runners/statistics/candidate_set.py)."""
    from ..statistics.candidate_set import candidate_set

    return list(candidate_set(cfg, [m.strip() for m in models.split(",") if m.strip()] if models else None).names)


def judge_cmd(
    config: Optional[Path] = config_option(),
    task: Optional[str] = typer.Option(None, "--task", "-t", help="default: the config's only task"),
    pool: Optional[Path] = typer.Option(None, "--pool", help="a pool file (`labels pool` output); default: pool "
                                        "the candidates' stored top-k"),
    depth: int = typer.Option(10, "--depth", min=1, help="top-k of each candidate to pool (without --pool)"),
    also_judged: bool = typer.Option(False, "--also-judged", help="grade the human-graded pairs too (what "
                                     "`labels agreement --judge` compares)"),
    models: Optional[str] = typer.Option(None, "--models", help="a,b,...: names or labels (default: the config's)"),
    split: str = typer.Option("test", "--split"),
    fmt: str = typer.Option("text", "--format", help="text|json"),
    show_refused: int = typer.Option(0, "--show-refused", min=0, metavar="N",
                                     help="print the first N answers that brought no grade (out of format, not "
                                          "chat-completions JSON), escaped; shown only, never stored"),
) -> None:
    """Grade pooled (query, document) pairs with the config's LLM judge; grades kept apart from human ones."""
    offline_default()
    if fmt not in ("text", "json"):
        raise typer.BadParameter(f"unknown format '{fmt}' (text|json)", param_hint="--format")
    from custom_tasks.readers._io import display_path

    from ..statistics.per_query import task_config_collection
    from ..config.task_lookup import pick_task, task_config_for
    from ..labels.judge.judge_client import configured
    from ..labels.judge.judge_run import judge_pairs, judged_pairs_for
    from ..labels.notes.generator_guard import judge_warnings
    from ..labels.pool.pool import build_pool, read_pool_rows
    from .common import print_json

    cfg = load_config(config)
    config = cfg.path
    configured(cfg.judge, "judge", config)
    task_cfg = task_config_for(pick_task(cfg, task), cfg)
    collection = task_config_collection(task_cfg)  # human grades only: the pool is what no human graded
    names = config_models(cfg, models)
    rows = read_pool_rows(pool, collection) if pool else build_pool(cfg.results_path, collection, names, depth,
                                                                     split).rows
    pairs = judged_pairs_for(rows, collection, split, also_judged)
    quiet = fmt == "json"
    out = err_console if quiet else console
    out.print(Text(f"{collection.name}: {len(pairs)} pair(s) for judge {cfg.judge.model} at {cfg.judge.chat_url} "
                   "(query and document texts are sent there; cached grades are not asked again)"), soft_wrap=True)
    cands = [(m.results_name, m.default_label) for m in cfg.models]
    for line in judge_warnings(collection.name, cfg.judge.model, task_cfg.generated_by, cands):
        out.print(Text.assemble(("warning:", "yellow"), f" {line}"), soft_wrap=True)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, \
        TimeRemainingColumn

    with Progress(TextColumn("judging"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TimeRemainingColumn(), console=out, transient=True, disable=not out.is_terminal) as progress:
        bar = progress.add_task("judging", total=None)
        refused: list[dict[str, Any]] = []
        try:
            report = judge_pairs(pairs, collection, cfg, task_cfg, keep_refused=show_refused, refused=refused,
                                 on_progress=lambda done, total: progress.update(bar, completed=done, total=total))
        finally:  # also when the command stops on the first pair: what the judge said is why
            if not quiet:
                _print_refused(refused, show_refused)
    if quiet:
        print_json({"task": collection.name, **report.as_dict()})
        return
    grades = ", ".join(f"{g}: {n}" for g, n in sorted(report.grades.items(), reverse=True)) or "none"
    fails = ", ".join(f"{k} x{n}" for k, n in sorted(report.failures.items())) or "none"
    console.print(Text(f"{report.graded} graded ({grades}), {report.unrateable} unrateable, {report.cached} from the "
                       f"cache; {report.requests} request(s), at most {report.max_in_flight} at once; retried: "
                       f"{fails} -> {display_path(report.path)} (source {report.source}, judge {report.judge})"),
                  soft_wrap=True)
    if report.unrateable and not show_refused:
        console.print(Text(f"see what the judge answered for those: `private-mteb labels judge -c {config} "
                           "--show-refused 3`"), soft_wrap=True)
    if cfg.labels.fills:
        console.print(Text(f"labels.use_llm is {cfg.labels.use_llm}: the next `private-mteb run` scores on human + "
                           "these LLM grades (a new data revision)"), soft_wrap=True)
    elif cfg.labels.prediction_powered:
        console.print(Text("labels.use_llm is prediction_powered: scores stay on human grades; `stats` and `check` "
                           "add prediction-powered verdicts once people judge the sample of `labels plan --order "
                           "sample`"), soft_wrap=True)
    else:
        console.print(Text("scores still use human grades only (labels.use_llm: false); compare first: "
                           f"`private-mteb labels agreement --judge -c {config}`"), soft_wrap=True)


def _print_refused(refused: list[dict[str, Any]], asked: int) -> None:
    """The refused answers, one line each, quoted as JSON strings (line breaks and quotes escaped) and printed
    through the console, which shows any control character as an escape: a judge's answer is text nobody vetted."""
    import json

    if asked and not refused:
        console.print(Text("no refused answer to show"), soft_wrap=True)
    for n, r in enumerate(refused, 1):
        console.print(Text(f"refused answer {n}/{len(refused)} ({r['query_id']} / {r['doc_id']}, {r['kind']}): "
                               f"{json.dumps(r['answer'], ensure_ascii=False)}"), soft_wrap=True)


def _iv(iv: Any, pct: bool = False) -> str:
    if iv is None or iv.estimate != iv.estimate:
        return "n/a"
    f = (lambda x: f"{x:.1%}") if pct else (lambda x: f"{x:.3f}")
    return f"{f(iv.estimate)} [{f(iv.low)}, {f(iv.high)}]" if iv.low == iv.low else f(iv.estimate)


def judge_agreement_cmd(config: Optional[Path], task: Optional[str], fmt: str, resamples: int, seed: int,
                        labels_dir: Optional[Path], split: str = "test", metric: Optional[str] = None) -> None:
    """`labels agreement --judge`: the config's LLM judge against the human grades (label and system level)."""
    from rich.table import Table

    from ..config.task_lookup import pick_task
    from ..labels.judge.judge_agreement import judge_agreement
    from .common import print_json

    if fmt not in ("text", "json"):
        raise typer.BadParameter(f"unknown format '{fmt}' (text|json with --judge)", param_hint="--format")
    bench = load_config(config)  # the one discovery rule (runners/config/discovery.py), as `labels judge`
    rep = judge_agreement(bench, pick_task(bench, task), split, resamples, seed, metric, labels_dir=labels_dir)
    for w in rep.warnings:
        err_console.print(Text.assemble(("warning:", "yellow"), f" {w}"), soft_wrap=True)
    if fmt == "json":
        print_json(rep.as_dict())
        return
    lab = rep.labels
    console.print(Text(f"{rep.task}: {rep.source} (judge {rep.judge}) vs human grades on {lab.n if lab else 0} "
                       f"pairs; {rep.llm_only} more pair(s) graded by the LLM only, {rep.unrateable} unrateable"),
                  soft_wrap=True)
    if lab is not None:
        t = Table("statistic", "value [95% CI]", title="label level (bootstrap over pairs)")
        t.add_row("Cohen's kappa", _iv(lab.kappa))
        t.add_row("weighted kappa (quadratic)", _iv(lab.kappa_quadratic))
        t.add_row("accuracy", f"{lab.accuracy:.1%}")
        t.add_row(f"majority baseline (always {lab.majority_grade})", f"{lab.majority_accuracy:.1%} accuracy, kappa 0")
        t.add_row("TPR relevant (grade >= 1)", _iv(lab.tpr, True))
        t.add_row("TNR relevant (grade >= 1)", _iv(lab.tnr, True) if lab.human_counts.get(0) else
                  "n/a (no pair a human graded 0)")
        for g, d in sorted(lab.per_grade.items(), reverse=True):
            t.add_row(f"TPR / TNR grade {g} ({lab.human_counts[g]} human)", f"{_iv(d['tpr'], True)} / "
                                                                            f"{_iv(d['tnr'], True)}")
        if lab.ceiling is not None:
            c = lab.ceiling
            t.add_row(Text(f"human-human: {c['raters'][0]} / {c['raters'][1]} ({c['n']} pairs)"),
                      _iv(c["kappa_quadratic"]))
        else:
            t.add_row("human-human ceiling", "n/a (no two raters in labels/)")
        console.print(t)
        cm = Table(title="confusion (rows: human, columns: LLM)")
        cm.add_column("human \\ LLM")
        for g in lab.scale:
            cm.add_column(str(g))
        for g, row in zip(lab.scale, lab.confusion):
            cm.add_row(str(g), *[str(v) for v in row])
        console.print(cm)
    s = rep.system
    if s is not None:
        t = Table("candidate", "human only", "human + LLM",
                  title=f"system level: {s.metric} over {s.n_queries} queries ({s.llm_filled} pairs filled by the LLM)")
        for name, a, b in zip(s.candidates, s.human_means, s.mixed_means):
            t.add_row(Text(name), f"{a:.4f}", f"{b:.4f}")
        console.print(t)
        console.print(Text(f"Kendall's tau {s.tau:.3f} [{s.tau_low:.3f}, {s.tau_high:.3f}] (bootstrap over queries), "
                           f"tau-AP {s.tau_ap:.3f}; significant paired verdicts: {s.significant_human} -> "
                           f"{s.significant_mixed}" + (f"; flips: {'; '.join(s.flips)}" if s.flips else "")),
                      soft_wrap=True)
    console.print(Text(rep.sentence), soft_wrap=True)
