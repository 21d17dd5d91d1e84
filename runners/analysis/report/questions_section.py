"""The report's "Questions" section: where each task's questions come from and what that does to the verdict.

Per task with added questions or questions of several sources: the scored questions by source (human / log /
generated), those left out (unverified, rejected in review) and those awaiting judgment; the verdict on each
source with the warning when generated questions crown another candidate (generator_guard.source_verdict_lines);
the traffic-weighted mean next to the plain mean (question_notes.py has the formula). Counts and scores only.
"""

from __future__ import annotations

import re

from custom_tasks.readers.added_questions import source_kind

from ...config.benchmark import StatsOptions
from ...labels.notes.generator_guard import SOURCE_TAG, source_verdict_lines
from ...labels.notes.question_notes import count_lines, weighted_line, weighted_means
from ..page.blocks import Paragraph, Section
from ..page.data import TaskData, quiet
from ...statistics.stats_report import report_from_scores


def questions_section(tasks: list[TaskData], opts: StatsOptions, config: str, split: str = "test"
                      ) -> Section | None:
    """None when no task has added questions or questions of more than one source."""
    sec = Section("questions", "Questions")
    for td in tasks:
        c = td.collection
        if c is None:
            continue
        lines = count_lines(c, [split])
        if not lines:
            continue
        per_query = {label: {str(q): float(s) for q, s in series.items()}
                     for label, series in td.scores[td.main_metric].items()}
        blocks = [Paragraph(_sentence(line, td.name), "note") for line in lines]
        weighted = weighted_line(td.name, td.main_metric, weighted_means(per_query, c.query_tags))
        if weighted:
            blocks.append(Paragraph(_sentence(weighted, td.name), "text"))
        if len({source_kind(t.get(SOURCE_TAG)) for t in c.query_tags.values()}) > 1:
            n = len(per_query)
            among = f"among the {n} candidate{'s' * (n != 1)} of {config} with results"
            rep = quiet(report_from_scores, td.name, td.main_metric, per_query, opts.resamples, opts.seed,
                        opts.confidence, opts.method, ([SOURCE_TAG], c.query_tags))
            blocks += [Paragraph(_sentence(line, td.name), "verdict") for line in source_verdict_lines(rep, among)]
        sec.subsections.append(Section("questions-" + re.sub(r"[^a-z0-9]+", "-", td.name.lower()), td.name, blocks))
    return sec if sec.subsections else None


def _sentence(line: str, task: str) -> str:
    """A line of `stats` as a report sentence: the task prefix dropped (the subsection names it)."""
    line = line.replace(f"{task}: ", "", 1) if not line.startswith("warning: ") else \
        "Warning: " + line.removeprefix("warning: ").replace(f"{task}: ", "", 1)
    line = line[0].upper() + line[1:]
    return line if line.endswith(".") else line + "."
