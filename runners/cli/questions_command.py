"""`private-mteb questions sample|generate`: questions from real traffic, over runners/labels/questions/ (issue 38).

Thin: options become a ``SampleParams`` and a ``Redactor``; the API (runners/labels/questions/log_sample.py) does the
work and returns the report lines printed here. Every rule that drops, merges or bands a query is an option and is
printed, so a reader can see (and change) why a query is or is not in the sample.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Optional

import typer

from .common import App, config_option, console, friendly_errors, offline_default
from .questions_generate import register as register_generate

app = App(no_args_is_help=True, help="Questions from a query log (sample) for a task: redacted, stratified, added "
                                     "as questions awaiting judgment.")


def _pair(value: str, what: str, cast: type) -> tuple:
    try:
        a, b = (cast(x) for x in value.split(","))
    except ValueError:
        raise typer.BadParameter(f"{value!r}: give two numbers, e.g. {what}") from None
    return a, b


def _cache_root(config: Optional[Path]) -> Path:
    """The benchmark config's embedding cache (found as every command finds it), else the project's default."""
    from custom_tasks.config import project_root
    from custom_tasks.errors import ConfigError

    from .common import load_config

    try:
        return load_config(config).cache_path
    except ConfigError:
        if config is not None:
            raise
        return project_root() / "results" / "private-mteb" / "embeddings"


@app.command("sample")
@friendly_errors
def sample_cmd(
    log: Path = typer.Argument(..., help="the query log: CSV, TSV, JSONL or Parquet with a query column (and "
                                         "optionally a count, a timestamp; user/session columns are never read)"),
    task: str = typer.Option(..., "--task", "-t", help="task name (configs/tasks) or YAML path"),
    config: Optional[Path] = config_option(),
    size: int = typer.Option(100, "--size", "-n", min=1, help="questions to draw"),
    allocation: str = typer.Option("proportional", "--allocation",
                                   help="proportional (to each stratum's searches) | equal (per stratum)"),
    seed: int = typer.Option(0, "--seed", help="seeds the topic clusters and the draw: same seed, same sample"),
    topics: int = typer.Option(8, "--topics", min=1, help="k-means topic clusters per band (1: no topics)"),
    model: Optional[str] = typer.Option(None, "--model",
                                        help="the embedding model of the topic clusters (vectors via the embedding "
                                             "cache; default: all-MiniLM-L6-v2 for English, the multilingual "
                                             "extra's model for another language)"),
    embed_limit: int = typer.Option(5_000, "--embed-limit", min=1,
                                    help="at most this many queries embedded for topics (a band too large is "
                                         "subsampled at random)"),
    bands: str = typer.Option("0.3333,0.6667", "--bands",
                              help="head,torso cut as shares of the searches (most searched first)"),
    band_counts: Optional[str] = typer.Option(None, "--band-counts",
                                              help="HEAD,TORSO count thresholds (searched >= HEAD times: head) "
                                                   "instead of --bands"),
    min_chars: int = typer.Option(3, "--min-chars", help="drop queries with fewer letters/digits (after "
                                                         "redaction)"),
    navigational: Optional[list[str]] = typer.Option(None, "--navigational",
                                                     help="regex: a whole query matching it is navigational and "
                                                          "dropped (repeatable; replaces the default URL/host "
                                                          "shapes; '' keeps every query)"),
    near: float = typer.Option(0.8, "--near-threshold", min=0.0, max=1.0,
                               help="character-shingle Jaccard at which two queries are near-duplicates (merged)"),
    redact: Optional[list[str]] = typer.Option(None, "--redact", help="your own regex of personal data "
                                                                      "(repeatable)"),
    phone_region: Optional[list[str]] = typer.Option(None, "--phone-region",
                                                     help="country whose national phone numbers are redacted "
                                                          "(repeatable; default US, GB, DE, RO)"),
    query_column: Optional[str] = typer.Option(None, "--query-column"),
    count_column: Optional[str] = typer.Option(None, "--count-column"),
    time_column: Optional[str] = typer.Option(None, "--time-column"),
    split: Optional[str] = typer.Option(None, "--split", help="the split the questions join (tasks with several)"),
    date: Optional[str] = typer.Option(None, "--date", help="the sample's date in its provenance (YYYY-MM-DD; "
                                                            "default today, UTC)"),
    dry_run: bool = typer.Option(False, "--dry-run", help="print what would be drawn, write nothing"),
) -> None:
    """Draw a stratified sample of a query log's questions and add them to the task (awaiting judgment)."""
    from custom_tasks.config import resolve_task_config

    from ..labels.questions.log_aggregate import NAVIGATIONAL, Rules
    from ..labels.questions.log_embed import CacheEmbedder
    from ..labels.questions.log_sample import SampleParams, sample_questions
    from ..labels.questions.redact import DEFAULT_PHONE_REGIONS, Redactor

    offline_default()
    if allocation not in ("proportional", "equal"):
        raise typer.BadParameter("proportional or equal", param_hint="--allocation")
    shares = _pair(bands, "--bands 0.33,0.67", float)
    if not 0 < shares[0] < shares[1] <= 1:
        raise typer.BadParameter("two shares 0 < head < torso <= 1", param_hint="--bands")
    counts = _pair(band_counts, "--band-counts 100,10", int) if band_counts else None
    day = date or dt.datetime.now(dt.timezone.utc).date().isoformat()
    try:
        dt.date.fromisoformat(day)
    except ValueError:
        raise typer.BadParameter(f"{day!r} is not YYYY-MM-DD", param_hint="--date") from None
    cfg = resolve_task_config(task)
    if len(cfg.splits) > 1 and split not in cfg.splits:
        raise typer.BadParameter(f"{cfg.name} has splits {', '.join(cfg.splits)}: name one", param_hint="--split")
    nav = tuple(p for p in navigational if p) if navigational is not None else NAVIGATIONAL
    for i, pattern in enumerate(nav, 1):
        try:
            re.compile(pattern)
        except re.error as e:
            raise typer.BadParameter(f"pattern {i} ({pattern!r}) is not a regular expression: {e}",
                                     param_hint="--navigational") from None
    rules = Rules(min_chars=min_chars, navigational=nav, near_threshold=near)
    if model is None and topics > 1:
        from ..labels.questions.log_embed import topic_model

        model, warning = topic_model(list(cfg.languages))
        if warning:
            console.print(f"warning: {warning}", style="yellow", highlight=False, markup=False, soft_wrap=True)
    model = model or ""

    params = SampleParams(size=size, allocation=allocation, seed=seed, topics=topics, band_shares=shares,  # type: ignore[arg-type]
                          band_counts=counts, embed_limit=embed_limit, date=day, model=model if topics > 1 else "",
                          split=split if len(cfg.splits) > 1 else None, rules=rules)
    try:
        redactor = Redactor(redact or (), phone_regions=phone_region or DEFAULT_PHONE_REGIONS)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="--redact/--phone-region") from None
    embed = CacheEmbedder(cfg, _cache_root(config), model) if topics > 1 else None
    columns = {"query": query_column, "count": count_column, "time": time_column}
    outcome, written = sample_questions(log, cfg.path, params, redactor, embed, columns, write=not dry_run)
    for line in outcome.lines:
        console.print(line, highlight=False, markup=False, soft_wrap=True)
    if embed is not None and embed.encoded + embed.reused:
        console.print(f"vectors: {embed.describe()}", highlight=False, markup=False, soft_wrap=True)
    if dry_run or written is None:
        console.print(f"{len(outcome.rows)} questions drawn; nothing written" + (" (--dry-run)" if dry_run else ""),
                      highlight=False)
        return
    console.print(f"wrote {len(outcome.rows)} questions (source: log, awaiting judgment) -> {written}: a new data "
                  f"revision. Judge them: `private-mteb labels pool -t {cfg.name}` then `labels serve`",
                  highlight=False, markup=False, soft_wrap=True)


register_generate(app)
