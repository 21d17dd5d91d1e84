"""The public set `compare` (and the report's public section) uses when none is named: the private tasks' language.

A Romanian task compared with MTEB(eng, v2) says how English models rank on English data, not whether the board
predicts a Romanian collection. When no benchmark or public task is named, the public set is therefore chosen with
mteb's own language filters: among mteb's benchmarks, the one whose public retrieval tasks cover the private
tasks' languages (besides English), most specific first (fewest languages, then shown on the leaderboard, then most
such tasks); its retrieval tasks with those languages, each cut to those languages' subsets (mteb's
`filter_languages`, what its leaderboard's language filter does). No benchmark: mteb's public retrieval tasks in the
languages (`mteb.get_tasks(languages=...)`). None at all: said, and no public comparison is made up. English-only
private tasks keep MTEB(eng, v2).

Languages match by ISO 639-3 macro-language (custom_tasks/macro_languages.py): `init` writes ``zho-Hans`` where
mteb's Chinese tasks say ``cmn``, and Arabic tasks say ``ara``, ``arb`` or ``ary``; each code stands for its whole
macro-language, so ``zho-Hans`` and ``cmn-Hans`` choose the same set. Among benchmarks covering as many of the
languages, a general one comes before a domain one (every matching task legal, medical, financial, ...): MTEB(Law)
is not how a Chinese team's general collection is read, nor a medical set an Arabic one's. The note names the
domain benchmarks passed over, or says the chosen set is a domain one when no general one exists.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

ENGLISH = "eng"
#: mteb task domains that make a benchmark a domain one when every matching task has one of them
SPECIALISED = frozenset({"Legal", "Medical", "Financial", "Chemistry", "Programming", "Engineering", "Religious"})


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


def _domain(hits: Sequence[Any]) -> str:
    """The specialised domains of a benchmark's matching tasks when every one has some ('' for a general set)."""
    found = [SPECIALISED & set(t.metadata.domains or []) for t in hits]
    return ", ".join(sorted(set().union(*found))) if found and all(found) else ""


def _families(languages: Sequence[str]) -> set[str]:
    from custom_tasks.macro_languages import family

    return {family(code) for code in languages}


def language_public_set(private_tasks: Sequence[Any]) -> LanguageSet | None:
    """The public set in the private tasks' non-English languages; None when they are English only (or none)."""
    import mteb

    from custom_tasks.languages import iso_to_language
    from custom_tasks.macro_languages import members

    others = [code for code in task_languages(private_tasks) if code != ENGLISH]
    if not others:
        return None
    names, families = ", ".join(others), _families(others)
    known = iso_to_language()  # mteb's codes (SIL lists some it does not)
    codes = sorted({m for code in others for m in members(code) if m in known})  # each macro-language's codes
    wanted = set(codes)
    ranked = []
    for bench in mteb.get_benchmarks():
        hits = [t for t in bench.tasks if t.metadata.type == "Retrieval" and t.metadata.is_public
                and wanted & set(t.languages)]
        if not hits:
            continue
        covered = families & _families([lang for t in hits for lang in t.languages])
        n_langs = len({lang for t in bench.tasks for lang in t.languages})
        domain = _domain(hits)
        ranked.append(((-len(covered), bool(domain), n_langs, not bench.display_on_leaderboard, -len(hits),
                        bench.name), bench, hits, domain))
    if ranked:
        key, bench, hits, domain = min(ranked, key=lambda r: r[0])
        tasks = [copy.deepcopy(t).filter_languages(codes) for t in hits]
        listed = ", ".join(t.metadata.name for t in tasks)
        # the domain benchmarks that would have come first but for being domain ones: named, so the choice is read
        passed = sorted(f"{b.name} ({d})" for k, b, _, d in ranked if d and (k[0], *k[2:]) < (key[0], *key[2:]))
        why = (f"; a general benchmark before domain ones ({', '.join(passed)})" if passed and not domain
               else f"; a {domain} benchmark: mteb has no general one in {names}" if domain else "")
        return LanguageSet(tasks, f"{bench.name} retrieval in {names}",
                           f"public set chosen by the private tasks' language ({names}): the retrieval tasks of "
                           f"{bench.name} in {names} ({listed}), only their {names} subsets{why}; --benchmark NAME "
                           "compares with another set")
    tasks = [t for t in mteb.get_tasks(languages=codes, task_types=["Retrieval"]) if t.metadata.is_public]
    if tasks:
        return LanguageSet(tasks, f"public retrieval tasks in {names}",
                           f"no mteb benchmark has retrieval tasks in {names}: public set: mteb's "
                           f"{len(tasks)} public retrieval task(s) in {names}")
    return LanguageSet([], f"none in {names}",
                       f"no public mteb benchmark or retrieval task is in {names}: private scores are shown without "
                       "a public comparison (--benchmark 'MTEB(eng, v2)' compares with English ones anyway)")
