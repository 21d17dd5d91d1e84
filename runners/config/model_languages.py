"""Does a candidate's model know the task's language? One line per mismatch, for `tasks validate -c`, `run` and
the report.

A dense model trained on English text scores a Chinese collection near zero (all-MiniLM-L6-v2: nDCG@10 0.24 on
Chinese, 0.04 on Arabic, where BM25 scores 0.95 and 0.93), and nothing in the numbers says why. mteb's model
metadata lists the languages each model was trained on (``ModelMeta.languages``, ISO 639-3 + script codes); an
entry may declare its own (`languages:` in the benchmark config, which wins). This module compares the two and
says so: it is pure data (no model library), the callers hand it what they looked up.

Languages are compared as an analyzer or a tokenizer sees them: by macro-language, and without the script (mteb's
metadata writes some languages in a script they are not written in, e.g. multilingual-e5-small's `ara-Latn`,
`jpn-Latn`, `tha-Latn`; the model still read Arabic, Japanese and Thai text). `cmn`, `wuu`, `yue` are `zho`;
`arb`, `ary`, `arz` are `ara` (SIL's macro-language table, read by custom_tasks/macro_languages.py).

BM25 is never warned about (its analyzer follows the task's languages, custom_tasks/bm25_analyzer.py); a model
whose languages are unknown (not in mteb's registry, none declared) is said once, not silently passed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from custom_tasks.macro_languages import family

#: kinds whose languages are not a model's: BM25 follows the task's analyzer
NOT_A_MODEL = frozenset({"bm25"})
#: kinds that encode text with a model of their own: their languages unknown is said (a run file's or a retriever's
#: system is not private-mteb's to know: checked only when its entry declares `languages:`)
ENCODERS = frozenset({"mteb", "sentence-transformers", "factory", "endpoint"})


def macro_language(code: str) -> str:
    """``cmn-Hans`` -> ``zho``; ``ara-Arab`` -> ``ara``; ``eng-Latn`` -> ``eng`` (the script is dropped; ISO 639-3's
    macro-language table, custom_tasks/macro_languages.py)."""
    return family(code.split("-", 1)[0].lower())


@dataclass(frozen=True)
class ModelLanguages:
    """What is known of one candidate's languages: `languages` None when nothing is (no metadata, none declared)."""

    label: str
    kind: str
    languages: tuple[str, ...] | None
    source: str = "mteb's model metadata"  # or "its `languages:` entry", "multilingual-e5-small's metadata"


def entry_languages(spec: Any, info: dict[str, Any] | None) -> ModelLanguages | None:
    """One `models:` entry's languages: its `languages:`, else what the run recorded of it (`info`: the candidate's
    info, or its line of candidates.json: mteb's metadata); None for a kind nothing is said of (BM25; a run file or
    retriever that declares none)."""
    kind = spec.resolved_kind
    if kind in NOT_A_MODEL:
        return None
    label = spec.default_label
    if spec.languages:
        return ModelLanguages(label, kind, tuple(spec.languages), "its `languages:` entry")
    info = info or {}
    langs = info.get("languages")
    if langs:
        return ModelLanguages(label, kind, tuple(langs), str(info.get("languages_source") or "mteb's model metadata"))
    return ModelLanguages(label, kind, None) if kind in ENCODERS else None


def _language_words(codes: Sequence[str]) -> str:
    """A model's languages as people read them: English names for a few, a count for many."""
    from custom_tasks.languages import iso_to_language

    names = iso_to_language()
    langs = sorted({macro_language(c) for c in codes})
    if len(langs) > 3:
        return f"{len(langs)} languages"
    return ", ".join(names.get(lang, lang).split(" (")[0] for lang in langs)


def mismatch(model: ModelLanguages, task: str, task_languages: Sequence[str]) -> str | None:
    """One line when the model does not cover a language of the task (None when it does, or cannot be told)."""
    if model.kind in NOT_A_MODEL or model.languages is None or not task_languages:
        return None
    known = {macro_language(c) for c in model.languages}
    missing = [c for c in task_languages if macro_language(c) not in known]
    if not missing:
        return None
    return (f"{model.label} is trained on {_language_words(model.languages)} ({model.source}); this task ({task}) "
            f"is {', '.join(missing)}: its scores say little about this collection; a multilingual model fits it "
            "(docs/candidates.md#multilingual-model)")


def language_fit_lines(models: Sequence[ModelLanguages], tasks: dict[str, Sequence[str]]) -> list[str]:
    """Every mismatch of every (model, task), one line each, then one line per model whose languages are unknown
    (said once, whatever the number of tasks, when some task is not in English). Nothing for BM25, nor for a model
    that covers the tasks."""
    lines = []
    for model in models:
        for task, langs in tasks.items():
            line = mismatch(model, task, langs)
            if line:
                lines.append(line)
    other = any(macro_language(c) != "eng" for langs in tasks.values() for c in langs)
    for model in models:  # unknown: said where it matters, a task in a language other than English
        if other and model.kind not in NOT_A_MODEL and model.languages is None:
            lines.append(f"{model.label}: its languages are unknown (not in mteb's registry, no `languages:` in its "
                         "entry): declare them (e.g. languages: [eng-Latn]) to have them checked against the tasks'")
    return lines


def config_language_lines(models: Sequence[Any], infos: dict[str, dict[str, Any]],
                          tasks: dict[str, Sequence[str]]) -> list[str]:
    """`language_fit_lines` of a config's `models:` entries; `infos`: results name -> what the run knows of the
    candidate (Candidate.info at run time, candidates.json for the report)."""
    found = []
    for spec in models:
        info = infos.get(spec.results_name) or next((i for n, i in infos.items() if n.split("@")[0] == spec.name), None)
        entry = entry_languages(spec, info)
        if entry is not None:
            found.append(entry)
    return language_fit_lines(found, tasks)
