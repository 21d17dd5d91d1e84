"""`private-mteb questions generate`: LLM-written questions from passages drawn across the corpus's topics.

Thin over runners/labels/questions/generate.py (guard, passages, filters, the added file). Nothing is sent unless the
config names `generator.endpoint`; the command says where the passages go before it sends any.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.text import Text

from .common import config_option, console, err_console, load_config, offline_default


def generate_cmd(
    config: Optional[Path] = config_option(),
    task: Optional[str] = typer.Option(None, "--task", "-t", help="default: the config's only task"),
    count: int = typer.Option(20, "--count", "-n", min=1, help="passages to write a question from (one each)"),
    clusters: Optional[int] = typer.Option(None, "--clusters", min=1,
                                           help="topic clusters the passages are drawn across (default: one per "
                                                "question, at most 20)"),
    seed: int = typer.Option(0, "--seed", help="the clusters and the passages drawn from them"),
    allow_same_family: Optional[str] = typer.Option(None, "--allow-same-family", metavar="REASON",
                                                    help="write with a generator of a candidate's or the production "
                                                         "LLM's family anyway; the reason is kept in provenance"),
    fmt: str = typer.Option("text", "--format", help="text|json"),
) -> None:
    """Generate questions with the config's `generator:`; stored unverified, awaiting review in `labels serve`."""
    offline_default()
    if fmt not in ("text", "json"):
        raise typer.BadParameter(f"unknown format '{fmt}' (text|json)", param_hint="--format")
    from custom_tasks.readers._io import display_path

    from ..config.task_lookup import pick_task, task_config_for
    from ..labels.judge.judge_client import configured
    from ..labels.questions.generate import check_guard, generate_questions
    from .common import print_json

    cfg = load_config(config)
    configured(cfg.generator, "generator", cfg.path)
    check_guard(cfg, allow_same_family)  # refused before anything is encoded or sent
    task_cfg = task_config_for(pick_task(cfg, task), cfg)
    quiet = fmt == "json"
    out = err_console if quiet else console
    out.print(Text(f"{task_cfg.name}: up to {count} passage(s) for generator {cfg.generator.model} at "
                   f"{cfg.generator.chat_url} (passage texts are sent there)"), soft_wrap=True)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("writing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=out,
                  transient=True, disable=not out.is_terminal) as progress:
        bar = progress.add_task("writing", total=None)
        report = generate_questions(cfg, task_cfg, count, seed, clusters, allow_same_family,
                                    on_progress=lambda done, total: progress.update(bar, completed=done, total=total))
    if report.override:
        out.print(Text.assemble(("warning:", "yellow"), f" generator {report.generator} is of the family of "
                                f"{', '.join(report.same_family)}; written anyway: {report.override!r} (kept in each "
                                "question's provenance)"), soft_wrap=True)
    if report.topic_warning:
        out.print(Text.assemble(("warning:", "yellow"), f" {report.topic_warning}"), soft_wrap=True)
    if quiet:
        print_json(report.as_dict())
        return
    shown = "MiniLM" if report.topic_model.endswith("all-MiniLM-L6-v2") else report.topic_model.split("/")[-1]
    console.print(Text(f"{report.asked} passage(s) drawn across {report.clusters} topic cluster(s) of "
                       f"{report.documents} document(s) ({shown} embeddings, seed {seed}); questions asked in "
                       f"{report.language} (task languages: {', '.join(task_cfg.languages)})"), soft_wrap=True)
    drops = ", ".join(f"{reason}: {n}" for reason, n in report.dropped.items()) or "none"
    fails = ", ".join(f"{k} x{n}" for k, n in sorted(report.failures.items())) or "none"
    console.print(Text(f"kept {report.kept} of {report.asked}; dropped: {drops}; {report.requests} request(s), "
                       f"retried: {fails}"), soft_wrap=True)
    if report.redacted:
        console.print(Text("personal data replaced in the kept questions: " + ", ".join(
            f"{kind} x{n}" for kind, n in sorted(report.redacted.items()))), soft_wrap=True)
    for ex in report.examples:
        what = f" ({ex['duplicates']}, Jaccard {ex['jaccard']:.2f})" if "duplicates" in ex else \
            f" ({ex['copied_words']} words copied)" if "copied_words" in ex else ""
        console.print(Text(f"  dropped: passage {ex['doc_id']}: {ex['reason']}{what}"), soft_wrap=True)
    if report.path is None:
        console.print("nothing written")
        return
    console.print(Text(f"-> {display_path(report.path)} (source {report.source}, verified: false): not scored until "
                       "a person accepts each question and grades its passage: `private-mteb labels serve "
                       f"--questions -t {task_cfg.name} --rater NAME`"), soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Adds `generate` to the `questions` command group."""
    app.command("generate")(generate_cmd)
