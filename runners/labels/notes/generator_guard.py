"""Generator guard: questions written by an LLM flatter models of that LLM's family.

A task YAML may name `generated_by:` (the model that wrote its LLM questions). `stats` then breaks
scores down by `source` by default when questions of more than one kind exist (human, log, generated: `llm` or
`llm:<model>`; also for `labels: llm` and for tasks with added questions), says the verdict on each source, warns
when the generated questions crown another candidate than the real ones, and warns for every
candidate of the generator's family (same organisation prefix `org/`, or same first name token).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from custom_tasks.readers.added_questions import source_kind

if TYPE_CHECKING:
    import pandas as pd

    from ...statistics.stats_report import StatsReport

SOURCE_TAG = "source"


def family(name: str) -> str:
    """`openai/gpt-4o` -> `openai`; `gpt-4o` -> `gpt`; `qwen2.5:7b` -> `qwen` (lower case, a version number
    after a name of 3+ letters dropped, as Ollama and vLLM names write it): what "same family" compares."""
    name = name.strip().lower()
    if "/" in name:
        return name.split("/", 1)[0]
    head = re.split(r"[-_.:\s]", name, maxsplit=1)[0]
    m = re.fullmatch(r"([a-z]{3,})\d+", head)
    return m.group(1) if m else head


def same_family(candidate: str, generator: str) -> bool:
    return bool(generator.strip()) and family(candidate) == family(generator)


def generator_warnings(task: str, generated_by: str | None, candidates: Iterable[tuple[str, str]]) -> list[str]:
    """One line per (results name, label) candidate of the generator's family."""
    if not generated_by:
        return []
    return [f"{task}: {label} is of the family of {generated_by}, which wrote this task's LLM questions: its score "
            f"on them is probably flattered; compare on the human questions (--by {SOURCE_TAG})"
            for name, label in candidates if same_family(name, generated_by) or same_family(label, generated_by)]


def judge_warnings(task: str, judge_model: str | None, generated_by: str | None,
                   candidates: Iterable[tuple[str, str]]) -> list[str]:
    """One line per candidate of the LLM judge's family (its grades may favour it), and one when the judge is of
    the family that wrote the task's questions (it grades its own writing)."""
    if not judge_model:
        return []
    out = [f"{task}: {label} is of the family of the judge {judge_model}: LLM grades may favour it; compare its "
           "ranking under human-only labels (`labels agreement --judge`)"
           for name, label in candidates if same_family(name, judge_model) or same_family(label, judge_model)]
    if generated_by and same_family(judge_model, generated_by):
        out.append(f"{task}: the judge {judge_model} is of the family of {generated_by}, which wrote this task's LLM "
                   "questions: it grades its own family's writing")
    return out


def same_family_refusals(generator: str, candidates: Iterable[str], production_llm: str | None) -> list[str]:
    """Why `questions generate` refuses ``generator``: one phrase per candidate name (or the production LLM) of its
    family. Questions an LLM writes flatter its own family (the candidates' scores on them are inflated), and a
    production LLM of the generator's family would be evaluated on questions its relatives wrote."""
    out = [f"candidate {c}" for c in dict.fromkeys(candidates) if c and same_family(c, generator)]
    if production_llm and same_family(production_llm, generator):
        out.append(f"production_llm {production_llm}")
    return out


def default_tags(tags: list[str], query_tags: pd.DataFrame | Mapping[str, Mapping[str, Any]] | None) -> list[str]:
    """`tags` plus `source` when the task has both human and llm questions (and `source` is not there).
    `query_tags`: query id -> {tag: value} (what `stats` passes: no pandas), or a frame of them."""
    if SOURCE_TAG in tags or query_tags is None:
        return list(tags)
    if hasattr(query_tags, "columns"):  # a pandas frame, one column per tag
        found = query_tags[SOURCE_TAG].dropna() if SOURCE_TAG in query_tags.columns else []
    else:
        found = [t[SOURCE_TAG] for t in query_tags.values() if t.get(SOURCE_TAG) is not None]
    kinds = {source_kind(str(v)) for v in found}
    return [*tags, SOURCE_TAG] if len(kinds) > 1 else list(tags)


def source_verdict_lines(rep: StatsReport, among: str) -> list[str]:
    """The best sentence on each `source=` subset of a report broken down by source (two or more), and a plain
    warning when the best candidate on the generated questions is not the best on the real ones (log, human)."""
    from ...statistics.stats_report import best_sentence

    subsets = list(dict.fromkeys(r["subset"] for r in rep.interval_rows
                                 if str(r.get("subset", "")).startswith(f"{SOURCE_TAG}=")))
    small = [(name, n) for name, n in rep.skipped_subsets if name.startswith(f"{SOURCE_TAG}=")]
    if len(subsets) + len(small) < 2:
        return []
    lines, best = [], {}
    for sub in subsets:
        sentence = best_sentence(rep, among, sub)
        if sentence:
            lines.append(f"{rep.task}: on {sub}: {sentence}")
            rows = [r for r in rep.interval_rows if r.get("subset") == sub and r.get("mean") == r.get("mean")]
            best[sub] = max(rows, key=lambda r: r["mean"])["candidate"]
    lines += [f"{rep.task}: on {name}: {n} question{'s' if n != 1 else ''}, too few for a verdict (in 'all' only)"
              for name, n in small]
    generated = {b for s, b in best.items() if source_kind(s.split("=", 1)[1]) == "generated"}
    real = {b for s, b in best.items() if source_kind(s.split("=", 1)[1]) != "generated"}
    if generated and real and generated != real:
        lines.append(f"warning: {rep.task}: the generated questions make {', '.join(sorted(generated))} the best, "
                     f"the real ones {', '.join(sorted(real))}: the verdict differs by source; trust the real "
                     "questions (generated ones copy the documents' wording and flatter some models)")
    return lines
