"""`private-mteb latency -c CONFIG` (and `run --latency`): each candidate's search timed one query at a time.

A thin layer over runners/execution/measure/latency.py; the rows shown are read back through runners/analysis/cost/cost.py,
the same columns `stats`, `experiments` and the report show.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table
from rich.text import Text

from .common import (config_option, console, err_console, friendly_errors, load_config, offline_default,
                     results_option)

FORMATS = ("table", "json", "csv")
LATENCY_DEFAULTS = {"queries": 12, "repeats": 2, "warmup": 1, "encode_sample": 32, "threads": None}


def latency_options(queries: int, repeats: int, warmup: int, encode_sample: int, threads: Optional[int]) -> Any:
    from ..execution.measure.latency import LatencyOptions

    return LatencyOptions(queries=queries, repeats=repeats, warmup=warmup, encode_sample=encode_sample,
                          threads=threads)


def measure_rows(cfg: Any, cands: list[Any], tasks: list[Any], opts: Any) -> list[dict[str, Any]]:
    """Run the pass; one flat row per (candidate, task) (analysis.cost's columns), ratios to the first measured."""
    from ..analysis.cost.cost import cost_row
    from ..results.variants import shown_label
    from ..execution.measure.latency import measure

    records = measure(cfg, cands, tasks, opts)
    rows = []
    for task in {r["task"]: None for r in records}:
        mine = [r for r in records if r["task"] == task]
        task_rows = [{"task": task, "candidate": shown_label(r["label"], r["candidate"]), "model": r["candidate"],
                      **cost_row(r)} for r in mine]  # the label every command prints
        for r in task_rows:
            r.pop("_latency", None)  # the per-query times stay in the record (latency_<split>.json)
        ref = next((r["p50_ms"] for r in task_rows if r["p50_ms"]), None)
        for r in task_rows:
            r["p50_ratio"] = r["p50_ms"] / ref if r["p50_ms"] and ref else None
        rows += task_rows
    return rows


def print_rows(rows: list[dict[str, Any]], records_note: str = "") -> None:
    from ..analysis.cost.cost import human_bytes, ms, with_ci

    def num(v: Any, f: str = "{:.1f}") -> str:
        return "–" if v is None else f.format(v)

    ref = next((r["candidate"] for r in rows if r["p50_ms"]), "")
    for task in {r["task"]: None for r in rows}:
        t = Table("candidate", "p50 ms [95% CI]", "p95 ms [95% CI]", "p99 ms", "spread", f"p50 / {ref}"[:40],
                  "q/s batched", "docs/s", "bytes/doc", "dim", "params", title=f"{task}: latency one query at a time")
        notes = []
        for r in (x for x in rows if x["task"] == task):
            if r["p50_ms"] is None:
                t.add_row(r["candidate"], *["–"] * 10)
                notes.append(f"{r['candidate']}: {r['note']}")
                continue
            if r.get("note"):
                notes.append(f"{r['candidate']}: {r['note']}")
            if r.get("docs_per_s_from") and r["docs_per_s_from"] != "index build":
                notes.append(f"{r['candidate']}: docs/s from the {r['docs_per_s_from']}")
            t.add_row(r["candidate"], with_ci(r, "p50"), with_ci(r, "p95"), ms(r["p99_ms"]),
                      num(100 * r["spread"] if r["spread"] is not None else None, "{:.0f}%"),
                      num(r["p50_ratio"], "{:.2f}x"), num(r["qps"]), num(r["docs_per_s"]),
                      human_bytes(r["bytes_per_doc"]), num(r["dim"], "{}"),
                      num(r["parameters"] / 1e6 if r["parameters"] else None, "{:.1f}M"))
        console.print(t)
        for n in notes:
            console.print(n, highlight=False, markup=False)
    first = rows[0] if rows else {}
    if first:
        console.print(Text.assemble(("machine:", "bold"), f" {first.get('cpu')}, {first.get('threads')} torch "
                                    f"thread(s), torch {first.get('torch') or '?'} with {first.get('blas') or '?'} "
                                    f"BLAS; load average (1 min) during the pass {first.get('load_avg_1m') or 0:.1f}"
                                    f" on {first.get('cores') or '?'} cores — on a busy machine read the ratios, not"
                                    " the milliseconds"), highlight=False)
        overhead = next((r.get("overhead_ms") for r in rows if r.get("overhead_ms") is not None), None)
        if overhead is not None:
            console.print(f"each query: the fastest of its repeats, less the pass's own overhead (a null candidate "
                          f"interleaved with these: p50 {overhead:.2f} ms, subtracted); intervals: bootstrap over "
                          f"the {first.get('timed_queries')} timed queries", highlight=False, markup=False)
    if records_note:
        console.print(records_note, highlight=False, markup=False)


def output(rows: list[dict[str, Any]], fmt: str) -> None:
    if fmt == "json":
        from .common import print_json

        print_json({"latency": rows})
    elif fmt == "csv":
        import pandas as pd

        from ..results.spreadsheet import frame_csv
        from .common import print_data

        print_data(frame_csv(pd.DataFrame(rows)))
    else:
        print_rows(rows)


@friendly_errors
def latency_cmd(
    config: Optional[Path] = config_option(),
    results: Optional[Path] = results_option(),
    models: Optional[str] = typer.Option(None, "--models", help="a,b,...: only these candidates (names or labels)"),
    queries: int = typer.Option(LATENCY_DEFAULTS["queries"], "--queries", min=1, help="queries timed per repetition (evenly spaced sample)"),
    repeats: int = typer.Option(LATENCY_DEFAULTS["repeats"], "--repeats", min=1, help="repetitions over the sample"),
    warmup: int = typer.Option(LATENCY_DEFAULTS["warmup"], "--warmup", min=0, help="queries run untimed first, per candidate"),
    encode_sample: int = typer.Option(LATENCY_DEFAULTS["encode_sample"], "--encode-sample", min=1,
                                      help="documents encoded cold (cache bypassed) to measure docs/s"),
    threads: Optional[int] = typer.Option(None, "--threads", min=1, help="torch threads during the pass "
                                          "(default: torch's; 1 gives steadier figures on a shared machine)"),
    fmt: str = typer.Option("table", "--format", help="table|json|csv"),
) -> None:
    """Query latency as served (p50/p95/p99, one query at a time, candidates interleaved), batched q/s,
    docs/s encoded cold and index bytes per document; stored beside each candidate's scores."""
    offline_default()
    if fmt not in FORMATS:
        raise typer.BadParameter(f"unknown format '{fmt}' ({'|'.join(FORMATS)})", param_hint="--format")
    cfg = load_config(config, results)
    config = cfg.path
    from ..execution.encoding.progress import quiet_foreign_bars
    from ..execution.run import candidates_for
    from ..execution.tasks import check_tasks, load_task

    cfg.check_model_paths()
    check_tasks(cfg)
    tasks = [load_task(t, cfg) for t in cfg.tasks]
    cands = candidates_for(cfg)
    if models is not None:
        wanted = {m.strip() for m in models.split(",") if m.strip()}
        unknown = wanted - {c.name for c in cands} - {c.label for c in cands}
        if unknown:
            raise typer.BadParameter(f"not a candidate of {config}: {', '.join(sorted(unknown))} (known: "
                                     f"{', '.join(c.label for c in cands)})", param_hint="--models")
        cands = [c for c in cands if c.name in wanted or c.label in wanted]
    for cand in cands:
        if cand.check is not None:
            cand.check(tasks)
    if fmt == "table":
        err_console.print(f"latency pass: {len(cands)} candidate(s) x {len(tasks)} task(s), {queries} queries x "
                          f"{repeats} repetitions after {warmup} warm-up", highlight=False, markup=False)
    with quiet_foreign_bars():
        rows = measure_rows(cfg, cands, tasks, latency_options(queries, repeats, warmup, encode_sample, threads))
    output(rows, fmt)
