"""`private-mteb backends`: the reference (torch fp32) and other encode backends on one task, drift measured.

Per backend: the speed ratio of a cold run (fresh embedding cache; exported copies built beforehand) to the
reference's, the max |cosine difference| of its vectors to the reference's (every query and document), the nDCG@10
difference with its paired CI and p (Holm over the backends), and the share of queries whose top-10 changed.
Results stay in the config's results folder under their own names (`<model>@onnx`, ...).
"""

from __future__ import annotations

import json
import os
import statistics
from pathlib import Path
from typing import Optional

import typer

from .common import console, err_console, friendly_errors, offline_default
from .inspect_command import CONFIG, TASK

ALL = "onnx,onnx-int8,openvino,openvino-bf16,openvino-int8"


def parse_variants(text: str) -> list[tuple[str, str]]:
    """'onnx,onnx-int8,openvino-bf16' -> [(onnx, fp32), (onnx, int8), (openvino, bf16)]."""
    out = []
    for item in (t.strip() for t in text.split(",")):
        if item:
            backend, _, precision = item.partition("-")
            out.append((backend, precision or "fp32"))
    return out


@friendly_errors
def backends_cmd(
    config: Path = CONFIG, task: Optional[str] = TASK,
    backends: str = typer.Option(ALL, "--backends", "-b",
                                 help="comma-separated backend[-precision] list, e.g. onnx,onnx-int8,openvino-bf16"),
    model: Optional[str] = typer.Option(None, "--model", help="the config's model to convert (default: its first "
                                                              "sentence-transformers model)"),
    repeats: int = typer.Option(1, "--repeats", min=1, help="cold runs per backend, interleaved; medians compared"),
    resamples: int = typer.Option(10_000, "--resamples", min=100),
    fmt: str = typer.Option("table", "--format", help="table|json"),
) -> None:
    """Measure how much faster and how different each encode backend is than torch fp32 on a task."""
    offline_default()
    from ..analysis.cost.drift import drift_rows
    from ..config.benchmark import BenchmarkConfig
    from ..config.task_lookup import pick_task, task_name_for
    from ..execution.backends.backend_build import require
    from ..execution.measure.backend_drift import max_cosine_difference, measure, variant_specs

    bench = BenchmarkConfig.from_file(config)
    entry = pick_task(bench, task)
    base = _base_model(bench, model)
    specs = variant_specs(base, parse_variants(backends))
    for spec in specs[1:]:
        require(spec.backend, spec.precision)  # one line, exit 2, before any work
    say = (lambda msg: err_console.print(msg, style="dim", highlight=False)) if fmt == "table" else None
    task_obj, runs = measure(bench, entry, specs, repeats, on_step=say)
    name = task_name_for(entry, bench)
    split = task_obj.metadata.eval_splits[0]
    ref = runs[0]
    rows = drift_rows(bench.results_path, name, ref.name, [r.name for r in runs[1:]], split=split,
                      n_resamples=resamples, seed=bench.stats.seed)
    ref_s = statistics.median(ref.seconds)
    out = []
    for run, row in zip(runs[1:], rows):
        out.append({**row, "backend": run.tag, "seconds": statistics.median(run.seconds), "runs_s": run.seconds,
                    "speed_ratio": statistics.median(run.seconds) / ref_s, "threads": run.threads,
                    "max_cos_diff": max_cosine_difference(ref.vectors, run.vectors)})
    load = os.getloadavg()[0]
    if fmt == "json":
        print(json.dumps({"task": name, "reference": ref.name, "reference_s": ref_s, "reference_runs_s": ref.seconds,
                          "texts": int(len(ref.vectors)), "load_average_1m": load, "backends": out}, indent=1))
        return
    console.print(f"{name}: {len(ref.vectors):,} texts (queries + documents); reference {ref.name} (torch fp32) "
                  f"cold run {ref_s:.1f} s, nDCG@10 {rows[0]['mean_ref'] if rows else ref.scores.get('ndcg_at_10', 0):.5f}; "
                  f"{repeats} run(s) each, interleaved; load average {load:.1f} on {os.cpu_count()} CPUs", highlight=False)
    console.print(f"{'backend':<15} {'seconds':>8} {'ratio':>6} {'max|cos diff|':>13} {'nDCG@10':>8} "
                  f"{'diff [95% CI]':>28} {'p (Holm)':>9} {'top-10 changed':>15}", highlight=False)
    from ..statistics.intervals import format_diff, format_p

    for r in out:
        ci = format_diff(r["diff"], r["diff_ci_low"], r["diff_ci_high"], 5)  # the figures every command prints
        console.print(f"{r['backend']:<15} {r['seconds']:>8.1f} {r['speed_ratio']:>5.2f}x {r['max_cos_diff']:>13.2e} "
                      f"{r['mean']:>8.5f} {ci:>28} {format_p(r['p_holm']):>9}{'*' if r['significant'] else ' '} "
                      f"{r['top10_changed']:>14.1%}", highlight=False)


def _base_model(bench, model: str | None):  # noqa: ANN001, ANN202 - config types imported lazily
    from custom_tasks.errors import ConfigError

    dense = [m for m in bench.models if m.resolved_kind in ("sentence-transformers", "mteb")]
    if model:
        dense = [m for m in bench.models if model in (m.name, m.label, m.results_name)]
    if not dense:
        raise ConfigError(bench.path, f"no sentence-transformers model {'named ' + repr(model) + ' ' if model else ''}"
                                      "in the config's models to convert")
    return dense[0]
