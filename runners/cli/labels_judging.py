"""`private-mteb labels serve|plan|agreement|merge`: judging in a browser, several raters, their agreement.

Thin over runners/labels/judging (the app) and runners/labels/raters (ratings, rater_agreement, label_merge); registered
on the `labels` sub-app by runners/cli/labels_command.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table
from rich.text import Text

from custom_tasks.readers._io import display_path

from .common import console, err_console, load_config, offline_default, print_json
from .labels_judge import config_models


def _decisive(config: Optional[Path], task: Optional[str], models: Optional[str], depth: int, split: str,
              seed: int, decide: Optional[str]) -> list[Any]:
    """The pool's pairs in the decisive order (runners/labels/pool/decisive_order.py) of the config's candidates."""
    from ..config.task_lookup import pick_task
    from ..labels.pool.decisive_order import config_decisive_order

    bench = load_config(config)
    names = config_models(bench, models)
    return config_decisive_order(bench, pick_task(bench, task), names, depth, split, seed, decide)


def _task_and_items(task: Optional[str], pool: Optional[Path], config: Optional[Path], depth: int,
                    models: Optional[str], split: str, seed: int) -> tuple[Any, Any, list[Any]]:
    """(task config, collection, items) from `--pool FILE` (its task from -t or the pool) or `--config`."""
    from ..statistics.analysis_errors import AnalysisError
    from ..labels.judging.items import items_for_config, items_for_pool

    if pool is not None and config is not None:
        raise AnalysisError("give --pool or --config, not both")
    if pool is not None:
        return items_for_pool(pool, task)
    bench = load_config(config)
    return items_for_config(bench, task, config_models(bench, models), depth, split, seed)


def _folder(cfg: Any, labels_dir: Optional[Path]) -> Path:
    from ..labels.raters.ratings import judging_dir

    return judging_dir(cfg, labels_dir)


def _sample(collection: Any, keys: list[Any], n: int, seed: int, stratify: Optional[str],
            split: str) -> tuple[dict[str, Any], list[Any]]:
    """(the plan's `sample` block, the pooled pairs of the sampled questions in the drawn order)."""
    from ..statistics.analysis_errors import AnalysisError
    from ..labels.pool.question_sample import draw_sample

    known = collection.complete_in(split)  # declared complete: nothing of theirs for people to judge
    questions = sorted(q for q in collection.qrels.get(split, {}) if q not in known)
    strata = None
    if stratify:
        tags = getattr(collection, "query_tags", {}) or {}
        strata = {q: str((tags.get(q) or {}).get(stratify, "")) for q in questions}
        if not any(strata.values()):
            raise AnalysisError(f"--stratify {stratify}: the questions of {collection.name} carry no such tag "
                                f"(tags: {', '.join(sorted({t for v in tags.values() for t in v})) or 'none'})")
    drawn, share = draw_sample(questions, n, seed, strata)
    pos, at = {q: i for i, q in enumerate(drawn)}, {k: i for i, k in enumerate(keys)}
    chosen = sorted((k for k in keys if k[1] in pos), key=lambda k: (pos[k[1]], at[k]))
    return {"questions": drawn, "of": len(questions), "seed": seed, "stratify": stratify, "strata": share,
            "split": split, **({"complete_left_out": len(known)} if known else {})}, chosen


LABELS_DIR = typer.Option(None, "--labels-dir", help="folder of the raters' files (default: labels/ of the project)")


def _serve_questions(task: Optional[str], rater: str, seed: int, host: str, port: int,
                     labels_dir: Optional[Path], announce: Any) -> None:
    """`labels serve --questions`: verify the task's generated questions (labels/judging/question_session.py)."""
    from custom_tasks.config import resolve_task_config
    from custom_tasks.sources import load_collection

    from ..labels.judging.question_items import source_without_added
    from ..labels.judging.server import open_question_session
    from ..labels.judging.server import serve as run_server

    if task is None:
        raise typer.BadParameter("name the task whose generated questions to verify: -t NAME", param_hint="--task")
    cfg = resolve_task_config(task)
    collection = load_collection(source_without_added(cfg), cfg.base_dir, cfg.name)
    s, token = open_question_session(cfg, collection, rater, _folder(cfg, labels_dir), seed)
    for w in s.warnings:
        err_console.print(Text.assemble(("warning:", "yellow"), f" {w}"))
    p = s.progress()
    console.print(Text(f"{cfg.name}: {p['total']} generated questions to verify, {p['done']} reviewed before; "
                       f"reviews -> {display_path(s.path)}"), highlight=False)
    console.print(Text("edited questions are redacted before they are written, as `questions sample` redacts a log "
                       f"(phone numbers in national form: {', '.join(s.redactor.phone_regions)})"), highlight=False)
    run_server(s, host, port, announce, token)


def _unverified_hint(cfg: Any) -> None:
    """In the grades mode, one line when generated questions still wait for a person (the question mode's job)."""
    from ..labels.judging.server import unverified_left

    n = unverified_left(cfg)
    if n:
        console.print(Text(f"{n} generated question(s) of {cfg.name} await verification: `private-mteb labels serve "
                           f"--questions -t {cfg.name} --rater NAME`"), highlight=False)


def register(app: typer.Typer) -> None:
    """Add the judging commands to the `labels` sub-app."""

    @app.command("serve")
    def serve(
        rater: str = typer.Option(..., "--rater", help="your name: your grades go to labels/<task>/<rater>.jsonl"),
        task: Optional[str] = typer.Option(None, "--task", "-t", help="task name or YAML (default: the pool's)"),
        pool: Optional[Path] = typer.Option(None, "--pool", help="a `labels pool` JSONL file"),
        config: Optional[Path] = typer.Option(None, "--config", "-c", help="pool this benchmark's candidates' top-k"),
        depth: int = typer.Option(10, "--depth", min=1, help="top-k of each candidate to pool (with --config)"),
        models: Optional[str] = typer.Option(None, "--models", help="a,b,...: candidates to pool (with --config)"),
        split: str = typer.Option("test", "--split"),
        seed: int = typer.Option(0, "--seed", help="seed of the item order"),
        host: str = typer.Option("127.0.0.1", "--host", help="interface to listen on (default: this machine only)"),
        port: int = typer.Option(8765, "--port", min=0, max=65535, help="0: any free port"),
        adjudicate: bool = typer.Option(False, "--adjudicate", help="judge the raters' disagreements (merge: "
                                                                    "adjudicated)"),
        labels_dir: Optional[Path] = LABELS_DIR,
        questions: bool = typer.Option(False, "--questions", help="verify the task's generated questions instead: "
                                       "accept / edit / reject each and grade its source passage (needs -t)"),
    ) -> None:
        """A local judging web app: one (question, document) pair at a time, keys 0/1/2, every grade fsynced;
        with --questions, one generated question and its source passage at a time, keys a/e/r."""
        offline_default()
        from ..labels.judging.server import is_loopback, open_session
        from ..labels.judging.server import serve as run_server

        def announce(url: str) -> None:
            console.print(Text(f"judging app: {url}   (Ctrl-C to stop; every grade is saved as you go)"),
                          highlight=False)
            console.file.flush()

        if not is_loopback(host):
            err_console.print(Text.assemble(("warning:", "yellow"), f" listening on {host}: anyone who can reach "
                                            "this machine and has the URL can read the documents and post grades"))
        if questions:
            if pool is not None or config is not None or adjudicate:
                raise typer.BadParameter("--questions verifies the task's generated questions: give -t alone, "
                                         "not --pool, --config or --adjudicate", param_hint="--questions")
            _serve_questions(task, rater, seed, host, port, labels_dir, announce)
            return
        cfg, collection, items = _task_and_items(task, pool, config, depth, models, split, seed)
        started = open_session(cfg, collection, items, rater, _folder(cfg, labels_dir), seed, adjudicate)
        s = started.session
        for w in s.warnings:
            err_console.print(Text.assemble(("warning:", "yellow"), f" {w}"))
        what = "disagreements to adjudicate" if adjudicate else ("items planned for you" if started.of_plan
                                                                else "items")
        console.print(Text(f"{cfg.name}: {len(s.items)} {what}, {started.resumed} judged before; grades -> "
                           f"{display_path(s.path)}"), highlight=False)
        from ..labels.judging.plan import read_plan

        planned = read_plan(_folder(cfg, labels_dir), cfg) if not adjudicate else None
        if planned is not None and planned.get("order") == "sample":  # the random sample keeps its drawn order
            n = len((planned.get("sample") or {}).get("questions", []))
            console.print(Text(f"order: the random sample of `labels plan --order sample` ({n} questions, seed "
                               f"{planned.get('seed')}): judge every pair of each question, in this order"),
                          highlight=False)
        elif config is not None and not adjudicate:  # the decisive order, re-planned after every grade (issue 39)
            from ..config.task_lookup import pick_task
            from ..labels.judging.live_plan import LivePlan

            bench = load_config(config)
            s.live = LivePlan.for_config(bench, pick_task(bench, task), config_models(bench, models), s, depth, split,
                                         seed)
            console.print(Text("order: decisive, re-planned after every grade from the candidates' rankings "
                               "(runners/labels/pool/replan_order.py); the page's panel says which verdicts are "
                               "settled, how likely each is to hold, and when every one reaches "
                               f"labels.confidence ({bench.labels.confidence:.0%}): judging can stop there"),
                          highlight=False)
        if not adjudicate:
            _unverified_hint(cfg)
        run_server(s, host, port, announce)

    @app.command("plan")
    def plan(
        raters: str = typer.Option(..., "--raters", help="ana,bo,cy"),
        overlap: float = typer.Option(0.2, "--overlap", help="share of the items (--order sample: of the questions) "
                                      "graded by two raters"),
        task: Optional[str] = typer.Option(None, "--task", "-t"),
        pool: Optional[Path] = typer.Option(None, "--pool", help="a `labels pool` JSONL file"),
        config: Optional[Path] = typer.Option(None, "--config", "-c", help="pool this benchmark's candidates' top-k"),
        depth: int = typer.Option(10, "--depth", min=1),
        models: Optional[str] = typer.Option(None, "--models"),
        split: str = typer.Option("test", "--split"),
        seed: int = typer.Option(0, "--seed"),
        labels_dir: Optional[Path] = LABELS_DIR,
        order: str = typer.Option("random", "--order", help="random | decisive: the pairs whose grade can move the "
                                                           "candidates' nDCG differences most first (needs -c) | "
                                                           "sample: every pooled pair of a random sample of "
                                                           "questions (prediction-powered verdicts; needs -c)"),
        questions: int = typer.Option(100, "--questions", min=1, help="--order sample: how many questions"),
        stratify: Optional[str] = typer.Option(None, "--stratify", help="--order sample: a question tag (topic, "
                                               "source, ...) to draw each of its values' share from"),
        decide: Optional[str] = typer.Option(None, "--decide", help="A,B (or A,B;C,D): weigh only these pairs of "
                                                                   "candidates in the decisive order"),
    ) -> None:
        """Share the items among raters so that `--overlap` of them get two raters (agreement is measured there)."""
        offline_default()
        from ..labels.judging.plan import make_plan, make_sample_plan, write_plan

        if order not in ("random", "decisive", "sample"):
            raise typer.BadParameter(f"unknown order '{order}' (random|decisive|sample)", param_hint="--order")
        if order in ("decisive", "sample") and config is None:
            raise typer.BadParameter(f"the {order} order reads the candidates' pool: give -c CONFIG",
                                     param_hint="--order")
        cfg, collection, items = _task_and_items(task, pool, config, depth, models, split, seed)
        names = [r.strip() for r in raters.split(",") if r.strip()]
        ranked = _decisive(config, task, models, depth, split, seed, decide) if order == "decisive" else None
        sample, keys = None, [it.key for it in items]
        if order == "sample":  # every pooled pair of a seeded, stratified random sample of questions
            sample, keys = _sample(collection, keys, questions, seed, stratify, split)
            sample["depth"] = depth
        share = make_sample_plan(keys, names, overlap) if sample else make_plan(
            keys, names, overlap, seed, order=None if ranked is None else [(split, w.query_id, w.doc_id) for w in ranked])
        path = write_plan(_folder(cfg, labels_dir), cfg, share, overlap, seed, order, sample)
        if sample:
            strata = ", ".join(f"{s} {n}" for s, n in sample["strata"].items())
            console.print(Text(f"random sample: {len(sample['questions'])} of {sample['of']} questions (seed {seed}"
                               + (f"; by {stratify}: {strata}" if stratify else "")
                               + (f"; {sample['complete_left_out']} questions with labels declared complete left "
                                  "out" if sample.get("complete_left_out") else "") + f"), {len(keys)} pooled pairs "
                               "to judge: people judge every pair of each sampled question (the prediction-powered "
                               "verdicts of `stats` rest on it)"), highlight=False)
            items = keys
        if ranked is not None:
            moving = sum(w.weight > 0 for w in ranked)
            console.print(Text(f"decisive order: {moving} of {len(ranked)} pairs can move a difference between the "
                               f"candidates (first), {len(ranked) - moving} sit at the same depth in every compared "
                               "candidate (last)"), highlight=False)
        doubled = len(items) and sum(len(v) for v in share.values()) - len(items)
        console.print(Text(f"{cfg.name}: {len(items)} items, {doubled} of them for two raters -> {display_path(path)}"),
                      highlight=False)
        for r, ks in share.items():
            console.print(Text(f"  {r}: {len(ks)} items   `private-mteb labels serve -t {cfg.name} "
                               f"{'--pool ' + str(pool) if pool else '-c ' + str(config or 'configs/benchmarks/demo.yaml')}"
                               f" --rater {r}`"), highlight=False)

    @app.command("agreement")
    def agreement_cmd(
        task: Optional[str] = typer.Option(None, "--task", "-t", help="task name (configs/tasks) or YAML path"),
        fmt: str = typer.Option("text", "--format", help="text|json|csv"),
        resamples: int = typer.Option(2000, "--resamples", min=100),
        seed: int = typer.Option(0, "--seed"),
        show: int = typer.Option(20, "--show", min=0, help="disagreements listed in text output"),
        labels_dir: Optional[Path] = LABELS_DIR,
        judge: bool = typer.Option(False, "--judge", help="the config's LLM judge vs the human grades: kappa, "
                                   "TPR/TNR, and the candidates' ranking under both (the -c config's judge)"),
        config: Optional[Path] = typer.Option(None, "--config", "-c", help="with --judge: the benchmark (its "
                                              "`judge:` and candidates)"),
        split: str = typer.Option("test", "--split", help="with --judge"),
        metric: Optional[str] = typer.Option(None, "--metric", help="with --judge: the metric candidates are "
                                             "ranked by (default: the task's main score)"),
    ) -> None:
        """Cohen's kappa per pair of raters, Krippendorff's alpha, 95% bootstrap CIs, the disagreements;
        with --judge: the LLM judge's grades against the human ones (runners/cli/labels_judge.py)."""
        if judge:
            from .labels_judge import judge_agreement_cmd

            judge_agreement_cmd(config, task, fmt, resamples, seed, labels_dir, split, metric)
            return
        if task is None:
            raise typer.BadParameter("name the task: -t NAME (or --judge -c BENCHMARK.yaml)", param_hint="--task")
        from custom_tasks.config import resolve_task_config
        from custom_tasks.sources import load_collection

        from ..statistics.analysis_errors import AnalysisError
        from ..labels.raters.rater_agreement import agreement
        from ..labels.raters.ratings import read_all

        if fmt not in ("text", "json", "csv"):
            raise typer.BadParameter(f"unknown format '{fmt}' (text|json|csv)", param_hint="--format")
        cfg = resolve_task_config(task)
        folder = _folder(cfg, labels_dir)
        files = read_all(cfg, folder)
        if not files:
            raise AnalysisError(f"{folder}: no rater's file yet: grade with `private-mteb labels serve -t {cfg.name} "
                                "--rater NAME`")
        queries = load_collection(cfg.source, cfg.base_dir, cfg.name).queries
        rep = agreement(cfg, files, queries, resamples, seed)
        for w in rep.warnings:
            err_console.print(Text.assemble(("warning:", "yellow"), f" {w}"))
        if fmt == "json":
            print_json(rep.as_dict())
        elif fmt == "csv":
            _print_csv(rep)
        else:
            _print_text(rep, show)


    @app.command("merge")
    def merge(
        task: str = typer.Option(..., "--task", "-t", help="task name (configs/tasks) or YAML path"),
        labels_dir: Optional[Path] = LABELS_DIR,
    ) -> None:
        """Merge the raters' grades (the YAML's `merge:` rule) into the task's labels file: what mteb scores."""
        from custom_tasks.config import resolve_task_config

        from ..labels.raters.label_merge import merge_into_labels

        cfg = resolve_task_config(task)
        r = merge_into_labels(cfg, _folder(cfg, labels_dir))
        for w in r.warnings:
            err_console.print(Text.assemble(("warning:", "yellow"), f" {w}"))
        console.print(Text(f"{cfg.name}: {r.merged} pair(s) merged by `merge: {cfg.merge}` ({r.changed} changed)"
                           + (f", {r.pending} disagreement(s) left for the adjudicator (`labels serve --adjudicate`)"
                              if r.pending else "") + f" -> {display_path(r.labels_path)}"), highlight=False)
        console.print(Text(f"data revision {r.old_revision} -> {r.new_revision}" + (
            ": `private-mteb run` re-scores every candidate (dense ones from cached vectors, nothing is encoded "
            "again)" if r.old_revision != r.new_revision else " (unchanged)")), highlight=False)


def _iv(iv: Any) -> str:
    return "n/a" if iv is None or iv.estimate != iv.estimate else f"{iv.estimate:.3f} [{iv.low:.3f}, {iv.high:.3f}]"


def _print_csv(rep: Any) -> None:
    import sys

    from ..results.spreadsheet import csv_text

    cols = ["statistic", "rater_a", "rater_b", "n", "estimate", "ci_low", "ci_high", "differ_by_two"]
    rows = []
    for p in rep.pairs:
        for name, iv in (("cohen_kappa", p.kappa), ("cohen_kappa_quadratic", p.kappa_quadratic)):
            rows.append([name, p.a, p.b, p.n, iv.estimate, iv.low, iv.high, p.differ_by_two])
    if rep.alpha is not None:
        rows.append(["krippendorff_alpha_ordinal", "all", "", rep.n_multi, rep.alpha.estimate, rep.alpha.low,
                     rep.alpha.high, rep.differ_by_two])
    sys.stdout.write(csv_text(cols, rows))


def _print_text(rep: Any, show: int) -> None:
    t = Table("rater", "graded", "skipped", "unsure", title=f"{rep.task}: raters ({rep.n_items} pairs graded, "
                                                            f"{rep.n_multi} by two or more)")
    for r, c in rep.raters.items():
        t.add_row(Text(r), str(c["graded"]), str(c["skip"]), str(c["unsure"]))
    console.print(t)
    if rep.pairs:
        t = Table("raters", "pairs", "kappa [95% CI]", "weighted kappa (quadratic) [95% CI]", "differ by 2",
                  title="Cohen's kappa per pair of raters (bootstrap over pairs)")
        for p in rep.pairs:
            t.add_row(Text(f"{p.a} / {p.b}"), str(p.n), _iv(p.kappa), _iv(p.kappa_quadratic), f"{p.differ_by_two:.1%}")
        console.print(t)
        console.print(Text(f"Krippendorff's alpha (ordinal), all raters: {_iv(rep.alpha)}"), highlight=False)
        for p in rep.pairs:
            t = Table(title=Text(f"{p.a} (rows) vs {p.b}"))
            t.add_column(Text(f"{p.a} \\ {p.b}"))
            for g in rep.scale:
                t.add_column(str(g))
            for g, row in zip(rep.scale, p.confusion):
                t.add_row(str(g), *[str(v) for v in row])
            console.print(t)
    console.print(Text(rep.sentence), highlight=False)
    if rep.disagreements and show:
        t = Table("query", "document", "grades", "question", title=f"disagreements to adjudicate "
                                                                    f"({len(rep.disagreements)}; widest first)")
        for d in rep.disagreements[:show]:
            t.add_row(Text(d["query_id"]), Text(d["doc_id"]), Text(", ".join(f"{r} {g}" for r, g in
                                                                             d["grades"].items())),
                      Text(d["query"][:70]))
        console.print(t)
        if len(rep.disagreements) > show:
            console.print(f"... {len(rep.disagreements) - show} more (--show N, or --format json)", highlight=False)
