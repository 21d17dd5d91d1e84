"""`private-mteb report`: one self-contained HTML page (or its Markdown twin) from stored results only; the
sections live here (one module each), what they are made of in page/; no model is loaded (docs/report.md)."""

from __future__ import annotations

import os
import warnings
from datetime import datetime, timezone
from pathlib import Path

from ...config.benchmark import BenchmarkConfig
from ...results.store import atomic_write_bytes
from ..page.blocks import Report, Section
from ..page.data import config_candidates, load_task, resolve_baseline
from ..page.html import render_html
from ..page.markdown import render_markdown
from ..plot_text import literal_text
from . import sections
from .cost_section import cost_section
from .experiments_section import experiments
from .labels_section import labels_section
from .over_time import over_time_section
from .provenance import provenance
from .public_section import public_section
from .questions_section import questions_section
from .tasks_section import tasks_section

__all__ = ["build_report", "render", "write_report", "Report"]


@literal_text()  # labels, tag values and names in figures are drawn as typed (no `$...$` math)
def build_report(cfg: BenchmarkConfig, *, baseline: str | None = None, show_text: bool = False,
                 tags: list[str] | None = None, public: str | None = None, with_public: bool = True,
                 worst: int = 5, command: str = "private-mteb report", split: str = "test",
                 margin: float | None = None) -> Report:
    """Every section whose data exists; raises FileNotFoundError when the config has no stored result."""
    results_dir = cfg.results_path
    tasks, stored = _stored(cfg, list(cfg.stats.tags) if tags is None else tags, split)
    if not tasks:
        raise FileNotFoundError(f"no stored results for the candidates of {cfg.path or cfg.name} in {results_dir}: "
                                "run `private-mteb run` first")
    ctx = sections.Context(cfg.stats, results_dir, resolve_baseline(stored, baseline), show_text, worst, split)
    nums = [sections.task_numbers(td, ctx) for td in tasks]
    config = cfg.path.name if cfg.path else cfg.name  # the set the summary's best is drawn from
    parts: list[Section | None] = [sections.summary(nums, config), sections.results_table(nums, ctx),
                                   tasks_section(tasks, results_dir, split, cfg.models),
                                   sections.forest(nums, ctx), sections.per_query(nums, ctx), labels_section(nums, bench=cfg),
                                   questions_section(tasks, cfg.stats, config, split),
                                   experiments(cfg, tasks, stored), cost_section(cfg, tasks, nums, margin),
                                   over_time_section(cfg, [(td.name, td.main_metric) for td in tasks])]
    if with_public:
        try:
            parts.append(public_section(results_dir, tasks, stored, public))
        except Exception as e:  # noqa: BLE001 — the public side is context; its failure must not sink the report
            warnings.warn(f"private-vs-public section left out: {e}", UserWarning, stacklevel=2)
    parts.append(sections.worst_queries(nums, ctx))
    generated = datetime.now(timezone.utc)
    parts.append(provenance(cfg, tasks, command, generated))
    n_q = ", ".join(f"{td.name}: {len(next(iter(td.scores[td.main_metric].values())))} queries" for td in tasks)
    subtitle = (f"benchmark '{cfg.name}' · {len(stored)} candidates · {n_q} · "
                f"generated {generated.strftime('%Y-%m-%d %H:%M UTC')} from stored results")
    return Report(f"private-mteb report: {cfg.name}", subtitle, [p for p in parts if p is not None])


def keep_public_comparison(cfg: BenchmarkConfig, split: str = "test") -> None:
    """Compute and keep the report's private-vs-public comparison now (`run` calls it: mteb is loaded there
    anyway), so the `report` that follows reads it instead of importing mteb (issue 19: report under 5 s)."""
    from .public_section import public_comparison

    tasks, stored = _stored(cfg, list(cfg.stats.tags), split)
    if tasks:
        public_comparison(cfg.results_path, tasks, stored)


def _stored(cfg: BenchmarkConfig, tags: list[str], split: str) -> tuple[list, list]:
    """The tasks with stored results and the candidates stored for at least one of them."""
    cands = config_candidates(cfg, cfg.results_path)
    tasks = [td for td in (load_task(cfg, t, cands, tags, split) for t in cfg.tasks) if td is not None]
    return tasks, [c for c in cands if any(c in td.candidates for td in tasks)]


def render(report: Report, fmt: str) -> str:
    if fmt == "html":
        return render_html(report)
    if fmt in ("md", "markdown"):
        return render_markdown(report)
    raise ValueError(f"unknown report format '{fmt}' (html|md)")


def format_for(path: Path) -> str:
    """html for .html/.htm, md for .md/.markdown; anything else is a one-line error."""
    suffix = path.suffix.lower()
    if suffix in (".html", ".htm"):
        return "html"
    if suffix in (".md", ".markdown"):
        return "md"
    raise ValueError(f"{path}: the output must end in .html or .md")


def write_report(report: Report, path: Path, fmt: str | None = None) -> Path:
    """Render and write atomically: a reader never sees half a report."""
    path = Path(path)
    atomic_write_bytes(path, render(report, fmt or format_for(path)).encode("utf-8"))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)  # a report is for sharing: the usual file mode, not the temp file's 0600
    return path
