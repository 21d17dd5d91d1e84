"""The ``source:`` mapping of a task YAML: typed, strictly checked, then handed to the right reader.

Strict (unknown keys are errors) because a misspelt key such as ``colums:`` would otherwise be ignored
silently and the defaults would read the wrong columns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .collection import Collection
from .errors import ConfigError
from .readers import get_reader
from .readers.extra_labels import merge_labels

FORMATS = ("beir", "trec", "tables", "evalset")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DocQueryColumns(_Strict):
    """Column names in the corpus and queries tables (BEIR names by default)."""

    doc_id: str = "_id"
    title: str = "title"
    text: str = "text"
    query_id: str = "_id"
    query: str = "text"


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


class _Source(_Strict):
    format: str
    encoding: str = "utf-8"
    splits: list[str] | None = None  # restrict to these splits; each must have labels
    labels_file: str | None = None  # pooled judgments merged into qrels (`private-mteb labels import`)


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


MODELS: dict[str, type[_Source]] = {
    "beir": BeirSource, "trec": TrecSource, "tables": TablesSource, "evalset": EvalsetSource,
}


def parse_source(source: Any, name: str) -> _Source:
    """Validate a ``source:`` mapping; any problem becomes one ConfigError line naming the key."""
    where = f"source of task {name!r}"
    if not isinstance(source, dict):
        raise ConfigError(where, f"`source:` must be a mapping, got {type(source).__name__}")
    fmt = source.get("format")
    if fmt is None:
        raise ConfigError(where, f"missing key 'format' (one of: {', '.join(FORMATS)})")
    if fmt not in MODELS:
        raise ConfigError(where, f"unknown format {fmt!r} (known formats: {', '.join(FORMATS)})")
    model = MODELS[fmt]
    try:
        return model.model_validate(source)
    except ValidationError as e:
        err = e.errors()[0]
        key = ".".join(str(p) for p in err["loc"])
        allowed = ", ".join(model.model_fields)
        if err["type"] == "extra_forbidden":
            problem = f"unknown key {key!r} for format {fmt} (allowed: {allowed})"
            if key.startswith("columns."):
                sub = model.model_fields["columns"].annotation
                problem = f"unknown key {key!r} (allowed columns: {', '.join(sub.model_fields)})"
        elif err["type"] == "missing":
            problem = f"missing key {key!r} (format {fmt} needs it)"
        else:
            problem = f"key {key!r}: {err['msg'].removeprefix('Value error, ')}"
        raise ConfigError(where, problem) from None


def load_collection(source: dict, base_dir: Path, name: str) -> Collection:
    """Read, validate and attach warnings to the collection a task YAML points at.

    ``source`` is the YAML's ``source:`` mapping; relative paths resolve against ``base_dir`` (the YAML's
    folder). Raises CollectionError (one line: file, line/row, problem) on bad input.
    """
    cfg = parse_source(source, name)
    collection = get_reader(cfg.format)(cfg, Path(base_dir), name)
    if cfg.labels_file:
        merge_labels(collection, cfg.labels_file, Path(base_dir))
    return collection
