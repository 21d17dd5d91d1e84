"""`private-mteb growth`: the corpus-growth curves of a config's `type: growth` experiments.

Computes what is missing (from cached vectors: the model's plain run fills the cache), then shows each
curve: metric per corpus fraction with 95% CIs, the trend per doubling and the extrapolation to 2x / 10x
(fractions above 1.0 are measured when the entry names `distractors:`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from .common import config_option, console, friendly_errors, load_config, offline_default


@friendly_errors
def growth_cmd(
    config: Optional[Path] = config_option("growth-demo.yaml"),
    metric: Optional[list[str]] = typer.Option(None, "--metric", "-m", help="default: the config's stats.metrics"),
    force: bool = typer.Option(False, "--force", help="recompute stored curves"),
    resamples: Optional[int] = typer.Option(None, "--resamples", min=100,
                                            help="default: the config's stats.resamples (as `experiments`)"),
    fmt: str = typer.Option("table", "--format", help="table|json"),
) -> None:
    """Score each growth entry's model on nested corpus subsets keeping every labelled document."""
    offline_default()
    if fmt not in ("table", "json"):
        raise typer.BadParameter(f"unknown format '{fmt}' (table|json)", param_hint="--format")
    from custom_tasks.errors import ConfigError

    cfg = load_config(config, demo="growth-demo.yaml")  # a bad entry stops here, before mteb and torch are imported
    from ..analysis.cost.growth_curve import format_growth, growth_curve
    from ..execution.measure.growth import run_growth
    from ..execution.encoding.progress import quiet_foreign_bars
    from ..results.store import read_json

    with quiet_foreign_bars():  # datasets' and mteb's per-subset bars would bury the curves
        records = run_growth(cfg, force=force)
    if not records:
        raise ConfigError(cfg.path, "no `type: growth` entry under experiments (e.g. {type: growth, model: <name>, "
                                  "fractions: [0.1, 0.25, 0.5, 1.0], repeats: 3})")
    curves = []
    for rec in records:
        data = read_json(rec.path)
        how = "stored" if rec.status == "skipped" else f"computed in {rec.seconds:.1f}s, {rec.encoded} texts encoded"
        if fmt == "table":
            console.print(f"{rec.label} on {rec.task}: {how}", style="dim")
        for m in metric or cfg.stats.metrics:
            curve = growth_curve(data, m, resamples or cfg.stats.resamples, cfg.stats.seed, cfg.stats.confidence)
            if fmt == "table":
                console.print(format_growth(curve), highlight=False, markup=False)
            else:
                curves.append({"status": rec.status, "seconds": rec.seconds, "encoded": rec.encoded,
                               **_curve_dict(curve)})
    if fmt == "json":
        from .common import print_json

        print_json({"curves": curves})


def _curve_dict(curve: Any) -> dict[str, Any]:
    """A GrowthCurve as plain JSON values: its fields, points and extrapolations as lists of rows."""
    from dataclasses import fields

    out = {f.name: getattr(curve, f.name) for f in fields(curve)}
    out["points"] = curve.points.to_dict(orient="records")
    out["extrapolated"] = curve.extrapolated.to_dict(orient="records")
    return out
