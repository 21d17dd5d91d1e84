"""Task YAML files: one per private collection, validated with pydantic."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import ConfigError

#: Where task YAML files live, relative to the repository root / working directory.
DEFAULT_TASKS_DIR = Path("configs/tasks")
TASKS_DIR_ENV = "PRIVATE_MTEB_TASKS_DIR"

ANNOTATIONS = {
    "human": "human-annotated",
    "expert": "expert-annotated",
    "llm": "LM-generated",
    "llm-reviewed": "LM-generated and reviewed",
    "derived": "derived",
}


class TaskConfig(BaseModel):
    """What a team writes in `configs/tasks/<name>.yaml`."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_.\-]*$")
    description: str
    source: dict[str, Any]
    languages: list[str] = ["eng-Latn"]
    domains: list[str] = []
    splits: list[str] = ["test"]
    main_score: str = "ndcg_at_10"
    license: str = "not specified"
    labels: str = "human"
    reference: str | None = None
    date: tuple[str, str] | None = None
    prompts: dict[str, str] | None = None
    ignore_identical_ids: bool = False
    # filled in by the loader, not by users
    path: Path | None = Field(default=None, exclude=True)

    @field_validator("prompts")
    @classmethod
    def _prompt_keys(cls, v: dict[str, str] | None) -> dict[str, str] | None:
        if v and set(v) - {"query", "document"}:
            raise ValueError(f"prompts keys must be 'query' and/or 'document', got {sorted(v)}")
        return v

    @field_validator("labels")
    @classmethod
    def _labels(cls, v: str) -> str:
        if v not in ANNOTATIONS and v not in ANNOTATIONS.values():
            raise ValueError(f"labels must be one of {sorted(ANNOTATIONS)}, got {v!r}")
        return v

    @property
    def base_dir(self) -> Path:
        return self.path.parent if self.path else Path.cwd()

    @property
    def annotations_creators(self) -> str:
        return ANNOTATIONS.get(self.labels, self.labels)

    @classmethod
    def from_file(cls, path: str | Path) -> TaskConfig:
        path = Path(path)
        data = _read_yaml(path)
        try:
            cfg = cls.model_validate(data)
        except ValidationError as e:
            raise ConfigError(path, _pydantic_message(e)) from None
        cfg.path = path.resolve()
        return cfg


def _read_yaml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ConfigError(path, "file not found")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(path, "not UTF-8 text") from None
    except yaml.YAMLError as e:
        line = getattr(getattr(e, "problem_mark", None), "line", None)
        raise ConfigError(path, f"invalid YAML: {getattr(e, 'problem', e)}", None if line is None else line + 1) from None
    if not isinstance(data, dict):
        raise ConfigError(path, "expected a mapping of keys (name, description, source, ...)")
    return data


def _pydantic_message(e: ValidationError) -> str:
    err = e.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "<root>"
    if err["type"] == "extra_forbidden":
        return f"unknown key '{loc}'"
    if err["type"] == "missing":
        return f"missing key '{loc}'"
    return f"{loc}: {err['msg']}"


def tasks_dir() -> Path:
    return Path(os.environ.get(TASKS_DIR_ENV, DEFAULT_TASKS_DIR))


def find_task_configs(directory: Path | None = None) -> dict[str, Path]:
    """Task name -> YAML path for every config in the tasks folder."""
    directory = directory or tasks_dir()
    found: dict[str, Path] = {}
    for path in sorted(directory.glob("*.y*ml")) if directory.is_dir() else []:
        data = _read_yaml(path)
        name = data.get("name") or path.stem
        found[str(name)] = path
    return found


def resolve_task_config(name_or_path: str | Path) -> TaskConfig:
    """A YAML path, or the name of a task in the tasks folder."""
    p = Path(name_or_path)
    if p.suffix in {".yaml", ".yml"} or p.is_file():
        return TaskConfig.from_file(p)
    configs = find_task_configs()
    if str(name_or_path) not in configs:
        known = ", ".join(configs) or "none"
        raise ConfigError(tasks_dir(), f"no task named '{name_or_path}' (known: {known})")
    return TaskConfig.from_file(configs[str(name_or_path)])
