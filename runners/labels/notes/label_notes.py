"""What `stats` (and check/report/inspect) say about the labels behind the scores, in a few lines.

judged@10 of every candidate with the below-the-baseline warning (judged.py), the mark of each pair's nDCG@10
verdict that the unjudged pairs in their top-10 could reverse (unjudged_mark.py, the same line `check` prints,
under one line saying what they assume; one line instead when every question's labels are declared complete, one
line saying how many above them when some questions' are: unjudged_mark.complete_line),
and the generator guard
(generator_guard.py): the default `source` breakdown and the same-family warning; the questions by source, those
left out or awaiting judgment and the traffic-weighted mean (question_notes.py); when LLM grades count
(`labels: {use_llm: fill_unjudged}`), which judge's, and the warning for candidates of the judge's family.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...statistics.analysis_errors import AnalysisError
from ...statistics.per_query import label_of, query_tags
from ...config.benchmark import BenchmarkConfig
from ...config.task_lookup import task_config_for
from ..pool.judged import judged_for_config, judged_line
from .generator_guard import default_tags, generator_warnings, judge_warnings
from .question_notes import question_lines


def stats_tags(entry: str, tags: list[str], bench: BenchmarkConfig | None = None) -> list[str]:
    """A config's default tags, plus `source` when the task says LLMs wrote questions (`generated_by:` or
    `labels: llm...`) or has added questions, and its questions are of more than one source kind."""
    try:
        cfg = task_config_for(entry, bench)
        if not cfg.generated_by and not cfg.labels.startswith("llm") and not cfg.source.get("added_questions"):
            return list(tags)
        found = query_tags(entry)
    except Exception:  # a public task, or one whose files the stats report itself will complain about
        return list(tags)
    return default_tags(tags, found)


def label_notes(bench: BenchmarkConfig, entry: str, models: Sequence[str], k: int = 10) -> list[str]:
    """judged@k line, its warnings and the generator warnings for one task entry ([] for public tasks)."""
    try:
        cfg = task_config_for(entry, bench)
    except Exception:
        return []
    lines = []
    try:
        rep = judged_for_config(bench, list(models), (k,), tasks=[entry])[0]
    except AnalysisError:
        rep = None  # results without stored rankings (older runs): no judged@k, the stats stand
    from .unjudged_mark import COMPLETE, complete_line

    declared = complete_line(*_declared(bench, entry))
    if declared == COMPLETE:  # every relevant document labelled: judged@k and the marks say nothing
        lines.append(COMPLETE)
    elif rep is not None:
        lines += [declared] if declared else []  # some questions complete: how many, above what counts the others
        lines.append(judged_line(rep, k))
        lines += [f"warning: {w}" for w in rep.warnings]
        from .unjudged_mark import assumed_line, config_marks

        marks = config_marks(bench, entry, list(models), k)
        lines += [assumed_line(declared)] + marks if marks else []  # what they assume, once per task
    lines += question_lines(bench, entry, cfg.name, models, cfg.main_score)  # by source, awaiting, weighted
    cands = [(m, label_of(bench.results_path, m)) for m in models]
    lines += [f"warning: {w}" for w in generator_warnings(cfg.name, cfg.generated_by, cands)]
    if bench.labels.fills and bench.judge is not None:
        lines.append(f"labels: human grades + {bench.judge.source} grades of the pairs no human graded "
                     f"(labels.use_llm: {bench.labels.use_llm}); check them first: `labels agreement --judge`")
        lines += [f"warning: {w}" for w in judge_warnings(cfg.name, bench.judge.model, cfg.generated_by, cands)]
    return lines


def _declared(bench: BenchmarkConfig, entry: str, split: str = "test") -> tuple[int, int]:
    """(questions whose labels are declared complete, scored questions) of the task's split; (0, 0) unread."""
    from ..pool.judged import task_collection

    try:
        collection = task_collection(entry, bench)
    except Exception:  # noqa: BLE001 — files the stats report itself complains about
        return 0, 0
    return len(collection.complete_in(split)), len(collection.qrels.get(split, {}))
