"""Section 6: private vs public, through runners.analysis.compare.compare (the numbers `compare` prints).

mteb is imported only when this section's comparison is computed (compare loads results with mteb's own code);
with the shipped snapshot (the default) the result is kept by content (compare_cache), so a report on unchanged
results imports no mteb. The public scores need no network.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from custom_tasks.config import TaskConfig

from ..page import text
from ..page.blocks import Figure, Paragraph, Section, Table
from ..page.data import Candidate, TaskData
from ..page.svg import figure_svg


def _register(configs: list[TaskConfig | None]) -> None:
    """compare resolves private tasks through mteb's registry: the configured ones, and tasks named by YAML path."""
    from custom_tasks.mteb_private import tasks_registry
    from custom_tasks.task import register, register_all, task_class

    register_all()
    for tc in configs:
        if tc is not None and tc.name not in tasks_registry():
            register(task_class(tc))


def public_comparison(results_dir: Path, tasks: list[TaskData], cands: list[Candidate], public: str | None = None,
                      ) -> Any:
    """The comparison the section shows: kept by content (compare_cache), computed with mteb when not kept."""
    from ..compare.compare import Comparison, build_comparison
    from ..compare.compare_cache import cached_comparison
    from ..compare.public import resolve_public_source

    source = resolve_public_source(public)
    names, models = [td.name for td in tasks], [c.name for c in cands]

    def build() -> Comparison:
        _register([td.config for td in tasks])
        return build_comparison(results_dir, source, names, models, include_public_only=False)

    return cached_comparison(results_dir, source, [td.config for td in tasks], names, models, build)


def public_section(results_dir: Path, tasks: list[TaskData], cands: list[Candidate], public: str | None = None,
                   ) -> Section | None:
    """Scatter of public mean vs private mean (with private CI whiskers) and the rank-correlation sentence."""
    from ..compare.compare import PRIVATE_MEAN, PRIVATE_RANK, PUBLIC_MEAN, PUBLIC_RANK
    from ..compare.compare_plot import comparison_figure, private_intervals

    comp = public_comparison(results_dir, tasks, cands, public)
    both = comp.table[comp.table[PRIVATE_MEAN].notna() & comp.table[PUBLIC_MEAN].notna()]
    if both.empty:
        return None
    labels = {c.name: c.label for c in cands}
    kinds = {c.name: c.kind for c in cands}
    cis = private_intervals(comp)
    sec = Section("public", "Private vs public leaderboard")
    sec.blocks.append(Paragraph(text.sentence(comp.agreement.sentence), "verdict"))
    fig = comparison_figure(comp, cis)
    sec.blocks.append(Figure(figure_svg(fig, "public"), f"public mean ({comp.public_set}) vs private mean, "
                             "private 95% bootstrap interval as whiskers", "private vs public scatter"))
    rows: list[list[str]] = []
    for model, r in comp.table.iterrows():
        if kinds.get(str(model)) != "model":  # experiments have no public counterpart
            continue
        ci = cis.get(str(model))
        priv = text.num(r[PRIVATE_MEAN]) + (f" [{ci[0]:.4f}, {ci[1]:.4f}]" if ci else "")
        rows.append([labels.get(str(model), str(model)), priv, _rank(r[PRIVATE_RANK]), text.num(r[PUBLIC_MEAN]),
                     _rank(r[PUBLIC_RANK]), str(r["public_name"]) if isinstance(r["public_name"], str) else "—"])
    board = f"public leaderboard rank ({comp.public_set}, {comp.public_board_size} models)"
    sec.blocks.append(Table(["candidate", "private mean [95% CI]", "rank among your candidates", "public mean",
                             board, "public entry"], rows))
    sec.blocks.append(Paragraph(f"Public scores: {comp.source}; public set: {comp.public_set}. "
                                + " ".join(text.sentence(n) for n in comp.notes), "note"))
    return sec


def _rank(v: Any) -> str:
    try:
        return str(int(v))
    except (TypeError, ValueError):
        return "—"
