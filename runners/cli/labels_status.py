"""`private-mteb labels status`: is each pair's nDCG@10 verdict settled whatever the unjudged pairs are?

Thin over runners/labels/verdicts/label_status.py (the bounds: runners/labels/pool/verdict_bounds.py); no model library
is loaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table
from rich.text import Text

from .common import config_option, console, friendly_errors, load_config, offline_default, results_option
from .labels_judge import config_models


def _held(p: float) -> str:
    """The verdicts' chance to hold all together as text, e.g. 'together: at least 93%' (ConfidenceReport.together)."""
    from ..labels.verdicts.confidence_stop import likely_percent

    return f"together: at least {likely_percent(p)}"


def register(app: typer.Typer) -> None:
    """Add `status` to the `labels` sub-app."""

    @app.command("status")
    @friendly_errors
    def status(
        config: Optional[Path] = config_option(),
        results: Optional[Path] = results_option(),
        task: Optional[str] = typer.Option(None, "--task", "-t", help="default: the config's only task"),
        models: Optional[str] = typer.Option(None, "--models", help="a,b,...: names or labels (default: the config's)"),
        k: int = typer.Option(10, "--k", "-k", min=1, help="nDCG cut-off and pool depth"),
        split: str = typer.Option("test", "--split"),
        fmt: str = typer.Option("table", "--format", help="table|json"),
    ) -> None:
        """For each pair of candidates: the nDCG@k difference now, its bounds over every grading of the unjudged
        pairs in the candidates' top-k, and whether the verdict is settled or the unjudged pairs could reverse it."""
        offline_default()
        if fmt not in ("table", "json"):
            raise typer.BadParameter(f"unknown format '{fmt}' (table|json)", param_hint="--format")
        from ..labels.verdicts.confidence_stop import likely_percent
        from ..labels.verdicts.label_status import label_status

        cfg = load_config(config, results)
        st = label_status(cfg, config_models(cfg, models), task, split, k)
        if fmt == "json":
            from .common import print_json

            print_json(st.as_dict())
            return
        t = Table("A", "B", f"nDCG@{k} A−B now", "lowest", "highest", "unjudged", "to settle", "likely to hold",
                  "more questions",
                  title=f"{st.task} — could the unjudged pairs change the verdict? ({split} split, "
                        f"{st.pool:,} unjudged pairs in the candidates' top-{k})")
        for p in st.pairs:
            n = st.to_settle.get((p.a, p.b))
            pc = st.confidence.of(p.a, p.b)
            more = st.resolve.count(p.a, p.b) if (p.a, p.b) in st.resolve.counts else "—"
            t.add_row(st.labels[p.a], st.labels[p.b], f"{p.now:+.4f}", f"{p.low:+.4f}", f"{p.high:+.4f}",
                      f"{p.unjudged:,}", "settled" if n == 0 else "never" if n is None else f"~{n:,}",
                      "—" if pc is None else likely_percent(pc.probability),
                      "never" if more is None else more if isinstance(more, str) else f"~{more:,}")
        console.print(t)
        if st.complete_sentence():  # questions declared complete: their unjudged pairs are known 0s above
            console.print(Text(st.complete_sentence() or ""), highlight=False)
        for p in st.pairs:
            console.print(Text(st.sentence(p)), highlight=False)
        console.print(Text(f"lowest/highest: the mean difference if every unjudged pair in the candidates' top-{k} "
                           "were graded against A / for A (any grade of the task's scale; the ideal DCG moves with "
                           "them). Settled is about the sign of the mean difference, not its significance. "
                           "To settle: judgments in the decisive order (`labels plan --order decisive`) until the bounds exclude 0, if each is "
                           "graded as today's scores count it (not relevant): a projection, redone as grades arrive."),
                      style="dim", highlight=False)
        c = st.confidence
        stop = (f"The verdicts are at least {c.level:.0%} likely to hold all together ({_held(c.together)}): judging "
                "can stop (labels.confidence)" if c.reached else
                f"The verdicts are not yet {c.level:.0%} likely to hold all together ({_held(c.together)}; "
                "labels.confidence)")
        how = (": judging can stop." if c.calibrated.known and c.pairs else
               "; pairs taken as independent given their LLM grade and group, the calibration's own uncertainty "
               f"included. {stop}." if c.pairs else ".")
        console.print(Text(f"Likely to hold: {c.calibrated.why}{how} More questions: {st.resolve.basis}.",
                           style="dim"), highlight=False)
