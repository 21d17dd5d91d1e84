"""`private-mteb tasks list|validate|stats|lint`: the private collections of configs/tasks/."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table
from rich.text import Text

from .common import App, console, friendly_errors
from .tasks_lint import tasks_lint

app = App(no_args_is_help=True, help="Private collections registered in configs/tasks/.")


@app.command("list")
@friendly_errors
def tasks_list(fmt: str = typer.Option("table", "--format", help="table|json")) -> None:
    """List the private tasks in configs/tasks/."""
    from custom_tasks.config import TaskConfig, find_task_configs, tasks_dir
    from custom_tasks.errors import ConfigError

    if fmt not in ("table", "json"):
        raise typer.BadParameter(f"unknown format '{fmt}' (table|json)", param_hint="--format")
    found = find_task_configs()
    if not found:
        raise ConfigError(tasks_dir(), "no task configs here: run from a project folder (one with configs/tasks/), "
                                       "pass --project DIR, or set PRIVATE_MTEB_TASKS_DIR")
    rows = []
    for name, path in found.items():
        cfg = TaskConfig.from_file(path)
        rows.append({"task": name, "format": str(cfg.source.get("format")), "splits": list(cfg.splits),
                     "labels": cfg.labels, "config": str(path)})
    if fmt == "json":
        from .common import print_json

        print_json({"tasks": rows})
        return
    table = Table("task", "format", "splits", "labels", "config")
    for r in rows:
        table.add_row(r["task"], r["format"], ",".join(r["splits"]), r["labels"], r["config"])
    console.print(table)


@app.command("validate")
@friendly_errors
def tasks_validate(
    target: Optional[str] = typer.Argument(None, help="task name or YAML path; default: all"),
    config: Optional[Path] = typer.Option(None, "--config", "-c", help="benchmark config: names are looked up in "
                                          "its project; default targets: its tasks"),
    fmt: str = typer.Option("table", "--format", help="table|json"),
) -> None:
    """Read and check collections (default: every task); one line per problem, warnings counted; exit 2 if any failed."""
    from custom_tasks.config import find_task_configs, resolve_task_config
    from custom_tasks.errors import ConfigError
    from custom_tasks.letter_forms import for_languages
    from custom_tasks.sources import load_collection
    from custom_tasks.validate import format_summary, summarize

    from .common import EXIT_BAD_INPUT, err_console, error_line, print_json

    if fmt not in ("table", "json"):
        raise typer.BadParameter(f"unknown format '{fmt}' (table|json)", param_hint="--format")
    as_json = fmt == "json"
    bench = None
    if config is not None:
        from ..config.benchmark import BenchmarkConfig
        from ..config.task_lookup import task_config_for

        bench = BenchmarkConfig.from_file(config)
    targets = [target] if target else list(bench.tasks) if bench else [str(p) for p in find_task_configs().values()]
    if not targets:
        raise typer.BadParameter("no task configs found in configs/tasks/")
    if target and bench is None and not _looks_like_yaml(target) and not find_task_configs():
        from custom_tasks.config import tasks_dir

        raise ConfigError(tasks_dir(), f"no task named '{target}' (looked for configs/tasks in this folder and every "
                                       "folder above it: none found); run from the project folder or point at it: "
                                       f"private-mteb --project DIR tasks validate {target}, or "
                                       f"tasks validate {target} -c BENCHMARK.yaml")
    results, failed = [], 0
    infos = _candidate_infos(bench) if bench is not None else {}
    for t in targets:
        name = t
        try:
            cfg = task_config_for(t, bench) if bench is not None else resolve_task_config(t)
            name = cfg.name
            collection = load_collection(cfg.source, cfg.base_dir, cfg.name)
            missing = [s for s in cfg.splits if s not in collection.qrels]
            if missing:
                raise ConfigError(cfg.path, f"split(s) {missing} have no labels (found: {collection.splits})")
            counted = _count_in_tokens(collection, bench) if bench is not None else []
        except Exception as e:  # noqa: BLE001 - every task is checked; each problem is one line
            if target and not as_json:
                raise  # one named task: the usual one-line error
            failed += 1
            line = error_line(e)[1]
            problems = getattr(e, "problems", None)  # every problem of a YAML file: one entry each
            shown = line.splitlines()
            n_warn, warn_lines = getattr(e, "warnings", (0, []))  # found in the rows read, shown with the errors
            if warn_lines:  # the message ends with them: JSON lists them apart from the problems
                shown = shown[:-len(warn_lines) - 1]
            results.append({"task": name, "ok": False, "errors": len(problems) if problems else len(shown),
                            "warnings": n_warn, "warning_lines": warn_lines, "problems": shown})
            if not as_json:
                err_console.print(Text.assemble(("error:", "bold red"), f" {name}: {line}"), soft_wrap=True)
            continue
        collection.warnings = for_languages(collection.warnings, cfg.languages)  # the task's own letters first
        summary = summarize(collection)
        n_warn = sum(w["count"] for w in summary["warnings"].values())
        basis, note = _length_basis(cfg.languages, counted)
        fit = _language_fit(bench, infos, cfg.name, cfg.languages) if bench is not None else []
        tokens = _word_tokens_warning(cfg)
        results.append({"task": cfg.name, "ok": True, "errors": 0, "warnings": n_warn + bool(tokens),
                        "revision": collection.content_hash(), "summary": summary, "document_lengths": basis,
                        **({"bm25_tokens": tokens} if tokens else {}),
                        **({"model_languages": fit} if bench is not None else {})})
        if not as_json:
            console.print(Text.assemble(("ok", "green"), f" {cfg.name} (revision {collection.content_hash()})"))
            console.print(format_summary(collection), highlight=False)
            if tokens:
                console.print(Text.assemble(("  warning:", "bold yellow"), f" {tokens}"), soft_wrap=True)
            if note:
                console.print(Text(f"  {note}", style="dim"), soft_wrap=True)
            for line in fit:
                console.print(Text(f"  warning: {line}", style="yellow"), soft_wrap=True)
    if as_json:
        print_json({"tasks": results, "failed": failed, "passed": failed == 0})
    elif len(targets) > 1:
        console.print(f"{len(targets) - failed} of {len(targets)} task(s) valid", highlight=False)
    if failed:
        if not as_json and len(targets) > 1:
            err_console.print(Text.assemble(("error:", "bold red"), f" {failed} of {len(targets)} task(s) failed "
                                            "validation"))
        raise typer.Exit(EXIT_BAD_INPUT)


def _candidate_infos(bench: object) -> dict[str, dict]:
    """What the run would know of each candidate (its languages from mteb's metadata), nothing loaded."""
    from ..execution.run import candidates_for

    return {c.name: c.info for c in candidates_for(bench)}


def _language_fit(bench: object, infos: dict[str, dict], task: str, languages: list[str]) -> list[str]:
    """With -c: one warning per candidate model that does not know the task's language (config/model_languages.py)."""
    from ..config.model_languages import config_language_lines

    return config_language_lines(bench.models, infos, {task: languages})  # type: ignore[attr-defined]


def _count_in_tokens(collection: object, bench: object) -> list[str]:
    """With -c, documents are measured in each candidate's own tokens (labels/lint/truncation.py): its
    ``truncated_document`` warnings replace the word estimate's ``long_document`` ones when some candidate's
    tokenizer is on this machine; otherwise the estimate stays (it says it is one)."""
    from ..labels.lint.truncation import truncated_document_warnings

    found, counted = truncated_document_warnings(collection, bench)  # type: ignore[arg-type]
    if counted:
        warnings = collection.warnings  # type: ignore[attr-defined]
        warnings[:] = [w for w in warnings if w.kind != "long_document"] + found
    return counted


def _word_tokens_warning(cfg: object) -> str:
    """The line saying BM25 would cut a script written without spaces into word tokens ('' when it would not):
    the analyzer (and mteb's table behind it) is resolved only for a task in such a script."""
    from custom_tasks.macro_languages import no_space_script, word_tokens_warning

    languages = list(getattr(cfg, "languages", []))
    if not any(no_space_script(code) for code in languages):
        return ""
    from custom_tasks.bm25_analyzer import resolve_analyzer

    analyzer = resolve_analyzer(languages, getattr(cfg, "bm25", None))
    return word_tokens_warning(languages, analyzer.tokenizer, getattr(cfg, "path", None) or "the task's YAML")


def _length_basis(languages: list[str], counted: list[str]) -> tuple[str, str]:
    """(how document lengths were counted, a note when a non-English task has only the English word estimate)."""
    if counted:
        names = ", ".join(counted)
        return f"tokenizers of {names}", f"document lengths: counted in the tokenizer of {names}"
    other = [lang for lang in languages if not lang.startswith("eng-")]
    basis = "word estimate (max(words x 1.3, chars / 4), made for English text)"
    if not other:
        return basis, ""
    return basis, (f"document lengths: a {basis}; {', '.join(other)} text splits into more tokens per word, so "
                   "long documents may go unflagged: -c CONFIG counts them in each candidate's own tokenizer")


def _looks_like_yaml(target: str) -> bool:
    return Path(target).suffix in (".yaml", ".yml") or Path(target).is_file()


@app.command("stats")
@friendly_errors
def tasks_stats(
    name: str = typer.Argument(..., help="task name or YAML path"),
    fmt: str = typer.Option("table", "--format", help="table|json"),
) -> None:
    """Counts, text lengths and labels per query."""
    from custom_tasks.stats import collection_stats

    from .common import print_json

    if fmt not in ("table", "json"):
        raise typer.BadParameter(f"unknown format '{fmt}' (table|json)", param_hint="--format")
    stats = collection_stats(name)
    if fmt == "json":
        print_json({"task": name, "stats": stats})
        return
    table = Table("statistic", "value", title=f"{name}")
    for key, value in stats.items():
        table.add_row(key, f"{value:.1f}" if isinstance(value, float) else str(value))
    console.print(table)


app.command("lint")(friendly_errors(tasks_lint))
