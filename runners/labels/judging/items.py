"""What a rater judges: (question, document) pairs from a pool file or pooled from a benchmark's stored results.

Blind by design: an item carries the question and the document and nothing about which candidate found it,
at which rank or with which score; each rater sees the items in their own seeded random order (so nobody's
order follows the pool's, and a restart shows the same order). Texts come from the task's collection, never
from the pool file, so a pool edited by hand cannot show a rater something the task does not hold.
"""

from __future__ import annotations

import json
import re
import unicodedata
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from custom_tasks.collection import Collection
from custom_tasks.config import TaskConfig
from custom_tasks.readers._io import display_path

from ...statistics.analysis_errors import AnalysisError
from ..raters.ratings import Key

#: English words too common to mark in the document (used when the task's `languages:` include English)
STOPWORDS = frozenset("""a an and are as at be by can do does for from how i in is it its my of on or our that the
this to was we what when where which who why will with you your""".split())
#: ISO 639-3 -> bm25s's stop-word list of that language (the lists mteb's BM25 uses); a language without one gets
#: no stop words, only the length rule
_BM25S_STOPWORDS = {"deu": "GERMAN", "nld": "DUTCH", "fra": "FRENCH", "spa": "SPANISH", "por": "PORTUGUESE",
                    "ita": "ITALIAN", "rus": "RUSSIAN", "swe": "SWEDISH", "nob": "NORWEGIAN", "nno": "NORWEGIAN",
                    "nor": "NORWEGIAN", "dan": "DANISH", "tur": "TURKISH"}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_T = TypeVar("_T")


@dataclass(frozen=True)
class Item:
    key: Key
    query: str
    title: str
    text: str


def visible(text: str) -> str:
    """Control characters (an ANSI escape, a NUL) as their visible Unicode pictures (U+2400 + code): the
    rater sees that the document holds them, and neither a terminal nor the page acts on them."""
    return _CONTROL.sub(lambda m: chr(0x2421 if m.group() == "\x7f" else 0x2400 + ord(m.group())), text)


def words(text: str) -> list[str]:
    """The words of ``text``: runs of letters, combining marks, digits and connectors (Unicode categories L, M, N,
    Pc), NFC-normalised. Python's ``\\w`` leaves out combining marks, which would cut a Hindi word at each vowel sign;
    the page marks a term only between the same classes of characters (page.py), so both sides agree on a word."""
    out, cur = [], []
    for ch in unicodedata.normalize("NFC", text):
        if unicodedata.category(ch)[0] in "LMN" or unicodedata.category(ch) == "Pc":
            cur.append(ch)
        elif cur:
            out.append("".join(cur))
            cur = []
    if cur:
        out.append("".join(cur))
    return out


@lru_cache(maxsize=32)
def stopwords(languages: tuple[str, ...]) -> frozenset[str]:
    """The stop words of the task's languages (`eng-Latn` -> English ...): none for a language without a list, so
    no language's common words are assumed to be English ones."""
    codes = {code.split("-")[0] for code in languages}
    out = set(STOPWORDS) if "eng" in codes else set()
    if codes & _BM25S_STOPWORDS.keys():
        import bm25s.stopwords as lists

        for code in codes & _BM25S_STOPWORDS.keys():
            out |= {w.lower() for w in getattr(lists, f"STOPWORDS_{_BM25S_STOPWORDS[code]}")}
    return frozenset(out)


def question_terms(query: str, languages: tuple[str, ...] | list[str] = ("eng-Latn",)) -> list[str]:
    """The question's words worth marking in the document: lower-cased, not a stop word of the task's languages, at
    least 3 characters; longest first (the page tries them in this order)."""
    stop = stopwords(tuple(languages))
    found = {w for w in (x.lower() for x in words(query)) if len(w) >= 3 and w not in stop}
    return sorted(found, key=lambda w: (-len(w), w))


def json_lines(path: Path) -> Iterator[tuple[int, str]]:
    """The non-blank lines of a JSONL file (a pool, the added questions) with their line numbers, bytes that are not
    UTF-8 replaced: a file edited by hand still opens, and the caller names the line that is not what it expects."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                yield n, line


def _item(collection: Collection, key: Key) -> Item:
    split, qid, doc_id = key
    doc = collection.corpus[doc_id]
    return Item(key, collection.queries[qid], doc.get("title", "") or "", doc["text"])


def items_from_pool(path: Path, cfg: TaskConfig, collection: Collection) -> list[Item]:
    """The pairs of a `labels pool` JSONL file, checked against the task: one line naming the problem."""
    path = Path(path)
    where = display_path(path)
    if path.suffix.lower() not in (".jsonl", ".ndjson"):
        raise AnalysisError(f"{where}: give the pool's JSONL file (`labels pool` writes one next to the CSV)")
    if not path.is_file():
        raise AnalysisError(f"{where}: pool file not found (make one with `private-mteb labels pool`)")
    out, seen = [], set()
    for n, line in json_lines(path):
        try:
            row = json.loads(line)
            key = (str(row.get("split") or cfg.splits[0]), str(row["query_id"]), str(row["doc_id"]))
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError):
            raise AnalysisError(f"{where}:{n}: not a pool line (JSON with query_id and doc_id)") from None
        task = row.get("task")
        if task is not None and task != cfg.name:
            raise AnalysisError(f"{where}:{n}: a pool for task {str(task)[:60]!r}, not {cfg.name!r}: pass that "
                                "task with -t, or pool this one with `labels pool`")
        if key[2] not in collection.corpus or key[1] not in collection.queries:
            missing = "document" if key[2] not in collection.corpus else "query"
            raise AnalysisError(f"{where}:{n}: {missing} id {key[2] if missing == 'document' else key[1]!r} is "
                                f"not in task {cfg.name!r}: is this a pool for another task?")
        if key[0] not in collection.qrels:
            raise AnalysisError(f"{where}:{n}: split {key[0]!r} is not one of the task's ({collection.splits})")
        if key not in seen:
            seen.add(key)
            out.append(_item(collection, key))
    if not out:
        raise AnalysisError(f"{where}: the pool is empty: nothing to judge")
    return out


def items_from_keys(keys: list[Key], collection: Collection) -> list[Item]:
    return [_item(collection, k) for k in keys]


def seeded_order(items: list[_T], rater: str, seed: int, key: Callable[[_T], Any]) -> list[_T]:
    """``items`` sorted by ``key``, then shuffled by (seed, rater): stable across restarts, another order for each
    rater. Both modes of the app order their items this way (rater_order, question_items.question_order)."""
    ordered = sorted(items, key=key)
    perm = np.random.default_rng([int(seed), zlib.crc32(rater.encode())]).permutation(len(ordered))
    return [ordered[i] for i in perm]


def rater_order(items: list[Item], rater: str, seed: int = 0) -> list[Item]:
    """This rater's seeded random order (stable across restarts; different raters, different orders)."""
    return seeded_order(items, rater, seed, key=lambda it: it.key)


def items_for_pool(pool: Path, task: str | None) -> tuple[TaskConfig, Collection, list[Item]]:
    """(task config, collection, items) of `--pool FILE`: its task from ``task`` (`-t`) or the pool itself."""
    from custom_tasks.config import resolve_task_config
    from custom_tasks.sources import load_collection

    from ..pool.pool import pool_task

    task = task or pool_task(pool)
    if not task:
        raise AnalysisError(f"{pool}: the pool names no task: add --task")
    cfg = resolve_task_config(task)
    collection = load_collection(cfg.source, cfg.base_dir, cfg.name)
    return cfg, collection, items_from_pool(pool, cfg, collection)


def items_for_config(bench: Any, task: str | None, names: list[str], depth: int, split: str,
                     seed: int) -> tuple[TaskConfig, Collection, list[Item]]:
    """(task config, collection, items) of a benchmark: the unlabelled pairs of its candidates' stored top-k."""
    from ...config.task_lookup import pick_task, task_config_for
    from ..pool.judged import task_collection
    from ..pool.pool import build_pool

    entry = pick_task(bench, task)
    cfg = task_config_for(entry, bench)
    collection = task_collection(entry, bench, llm=False)  # pairs no human graded
    p = build_pool(bench.results_path, collection, names, depth, split, seed)
    if not p.rows:
        raise AnalysisError(f"the candidates' top-{depth} holds no unlabelled pair of {cfg.name}: nothing to judge")
    return cfg, collection, items_from_keys([(r["split"], r["query_id"], r["doc_id"]) for r in p.rows], collection)
