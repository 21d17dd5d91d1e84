"""The public set `compare` (and the report's public section) uses when none is named: the private tasks' language.

A Romanian task compared with MTEB(eng, v2) says how English models rank on English data, not whether the board
predicts a Romanian collection. When no benchmark or public task is named, the public set is therefore chosen with
mteb's own language filters: among mteb's benchmarks, the one whose public retrieval tasks cover the private
tasks' languages (besides English), most specific first (fewest languages, then shown on the leaderboard, then most
such tasks); its retrieval tasks with those languages, each cut to those languages' subsets (mteb's
`filter_languages`, what its leaderboard's language filter does). No benchmark: mteb's public retrieval tasks in the
languages (`mteb.get_tasks(languages=...)`). None at all: said, and no public comparison is made up. English-only
private tasks keep MTEB(eng, v2).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

ENGLISH = "eng"


@dataclass
class LanguageSet:
    """Public tasks in the private tasks' languages, the label `compare` shows, and the sentence saying why."""

    tasks: list[Any]
    label: str
    note: str


def task_languages(tasks: Sequence[Any]) -> list[str]:
    """ISO 639-3 codes of the tasks' languages (a multilingual task: every subset's)."""
    codes: set[str] = set()
    for task in tasks:
        langs = task.metadata.eval_langs
        for lang in (sum(langs.values(), []) if isinstance(langs, dict) else langs):
            codes.add(lang.split("-")[0])
    return sorted(codes)


def language_public_set(private_tasks: Sequence[Any]) -> LanguageSet | None:
    """The public set in the private tasks' non-English languages; None when they are English only (or none)."""
    import mteb

    others = [code for code in task_languages(private_tasks) if code != ENGLISH]
    if not others:
        return None
    names, wanted = ", ".join(others), set(others)
    ranked = []
    for bench in mteb.get_benchmarks():
        hits = [t for t in bench.tasks if t.metadata.type == "Retrieval" and t.metadata.is_public
                and wanted & set(t.languages)]
        if not hits:
            continue
        covered = wanted & set().union(*(set(t.languages) for t in hits))
        n_langs = len({lang for t in bench.tasks for lang in t.languages})
        ranked.append(((-len(covered), n_langs, not bench.display_on_leaderboard, -len(hits), bench.name), bench, hits))
    if ranked:
        _, bench, hits = min(ranked, key=lambda r: r[0])
        tasks = [copy.deepcopy(t).filter_languages(others) for t in hits]
        listed = ", ".join(t.metadata.name for t in tasks)
        return LanguageSet(tasks, f"{bench.name} retrieval in {names}",
                           f"public set chosen by the private tasks' language ({names}): the retrieval tasks of "
                           f"{bench.name} in {names} ({listed}), only their {names} subsets; --benchmark NAME "
                           "compares with another set")
    tasks = [t for t in mteb.get_tasks(languages=others, task_types=["Retrieval"]) if t.metadata.is_public]
    if tasks:
        return LanguageSet(tasks, f"public retrieval tasks in {names}",
                           f"no mteb benchmark has retrieval tasks in {names}: public set: mteb's "
                           f"{len(tasks)} public retrieval task(s) in {names}")
    return LanguageSet([], f"none in {names}",
                       f"no public mteb benchmark or retrieval task is in {names}: private scores are shown without "
                       "a public comparison (--benchmark 'MTEB(eng, v2)' compares with English ones anyway)")
