"""The ``source:`` mapping of a task YAML: typed, strictly checked, then handed to the right reader.

Strict (unknown keys are errors) because a misspelt key such as ``colums:`` would otherwise be ignored
silently and the defaults would read the wrong columns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .collection import Collection
from .config_problems import Problem, did_you_mean, messages, raise_problems
from .yaml_io import line_at
from .readers import get_reader
from .readers._io import as_id
from .readers.extra_labels import merge_labels

FORMATS = ("beir", "trec", "tables", "evalset", "judgments")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DocQueryColumns(_Strict):
    """Column names in the corpus and queries tables (BEIR names by default)."""

    doc_id: str = "_id"
    title: str = "title"
    text: str = "text"
    query_id: str = "_id"
    query: str = "text"
    #: the questions' yes/no column declaring a question's labels complete; unmapped, one named `complete_labels`
    #: is read where present
    complete_labels: str | None = None


class TableColumns(DocQueryColumns):
    """Adds the qrels table's column names (BEIR qrels header by default)."""

    qrels_query_id: str = "query-id"
    qrels_doc_id: str = "corpus-id"
    grade: str = "score"


class EvalsetColumns(_Strict):
    """Corpus columns plus the one-row-per-question evalset columns."""

    doc_id: str = "_id"
    title: str = "title"
    text: str = "text"
    query_id: str = "query_id"
    query: str = "query"
    relevant: str = "relevant"
    tags: str = "tags"
    evidence: str = "evidence"
    complete_labels: str | None = None  # as DocQueryColumns.complete_labels


class _Source(_Strict):
    format: str
    encoding: str = "utf-8"
    splits: list[str] | None = None  # restrict to these splits; each must have labels
    labels_file: str | None = None  # pooled judgments merged into qrels (`private-mteb labels import`)
    #: the export's grades -> private-mteb's (>= 0, higher = more relevant), e.g. {1: 2, 2: 1, 3: 0, 4: 0} when
    #: 1 means best; every grade in the labels must be a key. Applied while reading, so the mapped grades are
    #: what the data revision (content hash) covers and a changed map re-scores every stored result.
    grades_map: dict[str, int] | None = None
    #: questions added later (a query-log sample, generated questions: `questions sample|generate`), a JSONL file
    #: read with the task's own questions (readers/added_questions.py)
    added_questions: str | None = None
    #: score generated questions nobody verified yet; set by the task YAML's `questions: {use_unverified: true}`
    use_unverified: bool = False
    #: every question of the task's own files has complete labels; set by the task YAML's `complete_labels: true`
    complete_labels: bool = False

    @field_validator("grades_map", mode="before")
    @classmethod
    def _grades_map(cls, value: Any) -> Any:
        if value is None:
            return value
        if not isinstance(value, dict) or not value:
            raise ValueError("must be a non-empty mapping {export grade: grade}, e.g. {1: 2, 2: 1, 3: 0, 4: 0}")
        out: dict[str, int] = {}
        for k, v in value.items():
            key = as_id(k)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{k!r} maps to {v!r}: grades are whole numbers >= 0 (2 = answers it, 1 = partly, "
                                 "0 = not relevant)")
            if not key or key in out:
                raise ValueError(f"key {k!r} is empty or repeated")
            out[key] = v
        return out


def _check_qrels(value: Any) -> Any:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and value and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        return value
    raise ValueError("must be a file path or a non-empty {split: file} mapping")


class BeirSource(_Source):
    format: Literal["beir"]
    path: str
    tag_fields: list[str] = Field(default_factory=list)


class _QrelsSource(_Source):
    """Shared keys of the formats with separate corpus, queries and qrels files."""

    corpus: str
    queries: str
    qrels: Any  # a file, or {split: file}
    split: str = "test"  # the split of a single qrels file
    tag_columns: list[str] = Field(default_factory=list)

    @field_validator("qrels")
    @classmethod
    def _qrels_shape(cls, value: Any) -> Any:
        return _check_qrels(value)


class TrecSource(_QrelsSource):
    format: Literal["trec"]
    columns: DocQueryColumns = Field(default_factory=DocQueryColumns)


class TablesSource(_QrelsSource):
    format: Literal["tables"]
    split_column: str | None = None
    columns: TableColumns = Field(default_factory=TableColumns)


class EvalsetSource(_Source):
    format: Literal["evalset"]
    corpus: str
    evalset: str
    split: str = "test"
    split_column: str | None = None
    default_grade: int = Field(default=1, ge=0)
    columns: EvalsetColumns = Field(default_factory=EvalsetColumns)
    tag_columns: list[str] = Field(default_factory=list)


class JudgmentColumns(DocQueryColumns):
    """Corpus columns plus the flat judgments table's: question id (optional), question, document id, grade."""

    query_id: str = "query_id"
    query: str = "query"
    qrels_doc_id: str = "doc_id"
    grade: str = "grade"


class JudgmentsSource(_Source):
    """A corpus and one judgments table, one row per judged pair; the questions are derived from it."""

    format: Literal["judgments"]
    corpus: str
    judgments: str
    split: str = "test"
    split_column: str | None = None
    tag_columns: list[str] = Field(default_factory=list)
    columns: JudgmentColumns = Field(default_factory=JudgmentColumns)


MODELS: dict[str, type[_Source]] = {
    "beir": BeirSource, "trec": TrecSource, "tables": TablesSource, "evalset": EvalsetSource,
    "judgments": JudgmentsSource,
}


def parse_source(source: Any, name: str) -> _Source:
    """Validate a ``source:`` mapping; problems become a ConfigError naming the key (every problem, each
    on its line). A task YAML's source is checked when the YAML is read (TaskConfig.from_file, with its path
    and lines); this names the task for a source built in code."""
    raise_problems(f"source of task {name!r}", source_problems(source))
    return MODELS[source["format"]].model_validate(source)


def source_problems(source: Any, node: Any = None) -> list[Problem]:
    """(line, problem) per problem of a ``source:`` mapping; ``node``: the task YAML's composed root."""
    at = ["source"]
    if not isinstance(source, dict):
        return [(line_at(node, at), f"`source:` must be a mapping, got {type(source).__name__}")]
    fmt = source.get("format")
    if fmt is None:
        return [(line_at(node, at), f"missing key 'format' (one of: {', '.join(FORMATS)})")]
    if fmt not in MODELS:
        near = did_you_mean(str(fmt), FORMATS)
        return [(line_at(node, [*at, "format"]), f"unknown format {fmt!r}{near} (known formats: {', '.join(FORMATS)})")]
    model = MODELS[fmt]
    try:
        model.model_validate(source)
    except ValidationError as e:
        out = []
        for loc, msg, is_key in messages(e, model):
            key = ".".join(str(p) for p in loc)
            if is_key and not loc[:-1] and "did you mean" not in msg:
                msg = f"{msg} for format {fmt} (allowed: {', '.join(model.model_fields)})"
            elif is_key and loc[0] == "columns" and "did you mean" not in msg:
                sub = model.model_fields["columns"].annotation
                msg = f"{msg} (allowed columns: {', '.join(sub.model_fields)})"
            elif msg.startswith("missing key"):
                msg = f"{msg} (format {fmt} needs it)"
            elif not msg.startswith("unknown key"):
                msg = f"key {key!r}: {msg.removeprefix(key + ': ')}"
            out.append((line_at(node, [*at, *loc], key=is_key), msg))
        return out
    return []


def load_collection(source: dict, base_dir: Path, name: str) -> Collection:
    """Read, validate and attach warnings to the collection a task YAML points at.

    ``source`` is the YAML's ``source:`` mapping; relative paths resolve against ``base_dir`` (the YAML's
    folder). Raises CollectionError (one line: file, line/row, problem) on bad input.
    """
    cfg = parse_source(source, name)
    collection = get_reader(cfg.format)(cfg, Path(base_dir), name)
    if cfg.complete_labels:  # the task-level declaration is every one of its own questions declaring it
        collection.complete_questions = set(collection.queries)
    if cfg.added_questions:  # before the labels file, which may grade them (`labels import` of a pool)
        from .readers.added_questions import finish_added, merge_added

        merge_added(collection, cfg.added_questions, Path(base_dir), cfg.use_unverified, cfg.splits)
    if cfg.labels_file:
        merge_labels(collection, cfg.labels_file, Path(base_dir))
    if collection.added is not None:
        finish_added(collection)
    return collection
