"""Task YAML files: one per private collection, validated with pydantic."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import (AnyUrl, BaseModel, ConfigDict, Field, PastDate, TypeAdapter, ValidationError, ValidationInfo,
                      field_validator, model_validator)

from .bm25_analyzer import BM25Settings, token_identity
from .config_problems import did_you_mean, messages, problems, raise_problems
from .errors import ConfigError
from .languages import check_languages
from .macro_languages import folded_analyzer_language
from .mteb_names import DEFAULT_K_VALUES, DOMAINS, LICENSES, closest, closest_score_name, retrieval_score_names
from .path_names import check_name
from .sources import source_problems
from .yaml_io import read_yaml

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


#: The default relevance scale (like ir_datasets' ``qrels_defs``): shown wherever a person grades.
DEFAULT_GRADES: dict[int, str] = {2: "answers the question", 1: "partly answers or gives needed context",
                                  0: "not relevant"}
#: the languages of a task YAML that names none
DEFAULT_LANGUAGES: list[str] = ["eng-Latn"]
#: How several raters' grades of one pair become the grade mteb scores (`private-mteb labels merge`).
MERGE_RULES = ("median", "majority", "adjudicated")


class QuestionSettings(BaseModel):
    """`questions:` of a task YAML: how its added questions (`source.added_questions`) count."""

    model_config = ConfigDict(extra="forbid")

    #: score generated questions nobody verified yet (default: left out and counted; they measure the LLM)
    use_unverified: bool = False


class TaskConfig(BaseModel):
    """What a team writes in `configs/tasks/<name>.yaml`.

    Checked here against what mteb accepts (main_score vs k_values, license, domains, dates, URLs), so
    `tasks validate` rejects what `run` would otherwise reject late, after encoding the whole corpus.
    """

    model_config = ConfigDict(extra="forbid")

    name: str  # letters, digits, '_', '.', '-' (checked below): it names result files and folders
    description: str
    source: dict[str, Any]
    #: ISO 639-3 + script codes (custom_tasks/languages.py): mteb's BM25 picks its stemmer and stop words from them
    languages: list[str] = Field(default_factory=lambda: list(DEFAULT_LANGUAGES))
    domains: list[str] = []
    splits: list[str] = ["test"]
    #: cut-offs of every @k metric; None: mteb's default (1, 3, 5, 10, 20, 100, 1000). Before main_score,
    #: whose validator reads it.
    k_values: list[int] | None = None
    main_score: str = Field(default="ndcg_at_10", validate_default=True)  # checked against k_values, too
    license: str = "not specified"
    labels: str = "human"
    #: every relevant document of every question is labelled (a known-item export: each question's answer is
    #: known), so a document nobody judged is known not relevant: no unjudged mark, no open verdict over unjudged
    #: pairs, no pooling suggestion. The same as every question declaring it in a `complete_labels` column of the
    #: questions (it travels in ``source:`` to the loader, which fills Collection.complete_questions: one set read
    #: everywhere). Notes only: scores count an unjudged document as not relevant either way, so it is not part of
    #: the task's identity (settings_fingerprint leaves it out).
    complete_labels: bool = False
    #: the model that wrote the LLM-generated questions (e.g. openai/gpt-4o): candidates of its family are flagged
    generated_by: str | None = None
    reference: str | None = None
    date: tuple[str, str] | None = None
    prompts: dict[str, str] | None = None
    ignore_identical_ids: bool = False
    #: grade -> what it means; the judging app shows it and accepts only these grades
    grades: dict[int, str] = Field(default_factory=lambda: dict(DEFAULT_GRADES))
    #: several raters' grades of a pair -> the one mteb scores
    merge: Literal["median", "majority", "adjudicated"] = "median"
    #: BM25's analyzer (stemmer, stop words, case, tokens); each key left out: the language's default, as mteb
    #: chooses it (bm25_analyzer.py)
    bm25: BM25Settings | None = None
    #: how added questions count (generated ones unverified: left out unless use_unverified)
    questions: QuestionSettings | None = None
    # filled in by the loader, not by users
    path: Path | None = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _questions_into_source(self) -> TaskConfig:
        """The loader sees only ``source:``: the YAML's `questions.use_unverified` and `complete_labels` travel in
        it."""
        if self.questions is not None and self.questions.use_unverified and isinstance(self.source, dict):
            self.source = {**self.source, "use_unverified": True}
        if self.complete_labels and isinstance(self.source, dict):
            self.source = {**self.source, "complete_labels": True}
        return self

    @field_validator("languages")
    @classmethod
    def _languages(cls, v: list[str]) -> list[str]:
        return check_languages(v)  # mteb's codes only: BM25 reads its stemmer and stop words from them

    @field_validator("prompts")
    @classmethod
    def _prompt_keys(cls, v: dict[str, str] | None) -> dict[str, str] | None:
        if v and set(v) - {"query", "document"}:
            raise ValueError(f"prompts keys must be 'query' and/or 'document', got {sorted(v)}")
        for key, prompt in (v or {}).items():
            if not prompt.strip():
                raise ValueError(f"prompts.{key} is empty: write the instruction or remove the key")
        return v

    @field_validator("grades", mode="before")
    @classmethod
    def _grades(cls, v: Any) -> Any:
        if not isinstance(v, dict):
            raise ValueError("grades must be a mapping {grade: meaning}, e.g. {2: answers the question, "
                             "1: partly answers, 0: not relevant}")
        for key, meaning in v.items():
            if isinstance(key, bool) or not isinstance(key, int) or key < 0:
                raise ValueError(f"grades: {key!r} is not a whole number >= 0 (grades are integers: 0, 1, 2, ...)")
            if not isinstance(meaning, str) or not meaning.strip():
                raise ValueError(f"grades: {key} needs a meaning, e.g. {key}: \"answers the question\"")
        if len(v) < 2:
            raise ValueError(f"grades must define at least two levels, got {sorted(v)}")
        return dict(sorted(v.items(), reverse=True))

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_.\-]*", v):
            raise ValueError(f"name {ascii(v)[:80]} must start with a letter and hold only letters, digits, '_', "
                             "'.' and '-' (it names result files and folders)")
        return check_name(v, "name")  # and fit in a file name

    @field_validator("splits")
    @classmethod
    def _splits(cls, v: list[str]) -> list[str]:
        if not v:
            raise ValueError("splits is empty: list at least one split to evaluate, e.g. [test]")
        if any(not s.strip() for s in v):
            raise ValueError(f"splits {v} contains an empty name")
        for s in v:  # per_query_<split>.json, rankings_<split>.json.gz
            check_name(s, "splits: split")
        if len(set(v)) != len(v):
            raise ValueError(f"splits {v} lists a split twice")
        return v

    @field_validator("k_values")
    @classmethod
    def _k_values(cls, v: list[int] | None) -> list[int] | None:
        if v is None:
            return v
        if any(k < 1 for k in v) or len(set(v)) != len(v):
            raise ValueError(f"k_values {v} must be distinct whole numbers >= 1")
        if 1 not in v:
            raise ValueError(f"k_values {v} must include 1: mteb always reports accuracy (= recall_at_1) and "
                             "fails after encoding everything without it")
        return sorted(v)

    @field_validator("main_score")
    @classmethod
    def _main_score(cls, v: str, info: ValidationInfo) -> str:
        if "k_values" not in info.data:  # k_values itself is invalid: that error is reported
            return v
        k_values = info.data["k_values"] or DEFAULT_K_VALUES
        if v not in retrieval_score_names(k_values):
            raise ValueError(f"main_score '{v}' is not a score mteb reports for k_values {list(k_values)} "
                             f"(closest: '{closest_score_name(v, k_values)}'; valid: ndcg/map/recall/precision/"
                             "mrr/hit_rate_at_<k>, accuracy, nauc_<metric>_at_<k>_<max|std|diff1>)")
        return v

    @field_validator("license")
    @classmethod
    def _license(cls, v: str) -> str:
        if v not in LICENSES and not _is_url(v):
            near = closest(v, LICENSES, cutoff=0.6)
            raise ValueError(f"license '{v}' is not one mteb accepts: use an id such as cc-by-4.0 or apache-2.0, "
                             f"a URL, or 'not specified'" + (f" (closest: '{near}')" if near else ""))
        return v

    @field_validator("domains")
    @classmethod
    def _domains(cls, v: list[str]) -> list[str]:
        for d in v:
            if d not in DOMAINS:
                raise ValueError(f"domains: '{d}' is not an mteb domain (closest: '{closest(d, DOMAINS)}')")
        return v

    @field_validator("reference")
    @classmethod
    def _reference(cls, v: str | None) -> str | None:
        if v is not None and not _is_url(v):
            raise ValueError(f"reference '{v}' is not a URL (mteb wants e.g. https://wiki.example.com/kb)")
        return v

    @field_validator("date", mode="before")
    @classmethod
    def _date(cls, v: Any) -> Any:
        if not isinstance(v, (list, tuple)):
            return v  # pydantic reports the shape
        out = [d.isoformat() if isinstance(d, dt.date) else d for d in v]  # unquoted YAML dates
        for d in out:
            try:
                TypeAdapter(PastDate).validate_python(d)
            except ValidationError:
                raise ValueError(f"date '{d}' is not a date in the past as YYYY-MM-DD (mteb rejects it)") from None
        return out

    @field_validator("labels")
    @classmethod
    def _labels(cls, v: str) -> str:
        if v not in ANNOTATIONS and v not in ANNOTATIONS.values():
            raise ValueError(f"labels must be one of {sorted(ANNOTATIONS)}, got {v!r}")
        return v

    @property
    def effective_k_values(self) -> tuple[int, ...]:
        """The k-values mteb scores at: the YAML's ``k_values`` or mteb's default."""
        return tuple(self.k_values) if self.k_values is not None else DEFAULT_K_VALUES

    def settings_fingerprint(self) -> str:
        """Short hash of the settings that change a score without changing the data.

        The dataset revision (the collection's content hash) says the data is the same; it does not see
        ``splits``, ``main_score``, ``k_values``, ``prompts``, ``ignore_identical_ids`` or ``languages`` (mteb's
        BM25 takes its stemmer and stop words from them), each of which changes what mteb reports for the same
        data. A stored result may be reused only when this matches too. Order-free settings are sorted, so
        reordering YAML lists or keys does not change the hash; naming mteb's default k-values explicitly does not
        either. ``languages`` is a set to mteb's BM25 (one language or several: bm25_analyzer.analyzer_language), so it is
        sorted too, and it is hashed only when
        it is not the default ``[eng-Latn]``, so results stored before it counted keep their fingerprint.
        Metadata (description, license, ...) is left out.
        """
        settings = {
            "v": 1,
            "splits": sorted(self.splits),
            "main_score": self.main_score,
            "k_values": sorted(self.effective_k_values),
            "prompts": dict(sorted((self.prompts or {}).items())),
            "ignore_identical_ids": self.ignore_identical_ids,
        }
        if self.languages != DEFAULT_LANGUAGES:  # results stored with the default before this counted stay valid
            settings["languages"] = sorted(self.languages)
            chosen = folded_analyzer_language(self.languages)
            if chosen:  # dialects folded / a non-Latin script kept from English: not mteb's choice, a new score
                settings["analyzer_language"] = chosen
        if self.bm25 is not None and self.bm25.written():  # only what the block sets: no block, same hash as before
            settings["bm25"] = {k: sorted(v) if isinstance(v, list) else v for k, v in self.bm25.written().items()}
            if settings["bm25"].get("normalize") or settings["bm25"].get("fold_accents"):
                from .normalize import VERSION  # what the normaliser does is part of the score it gives

                settings["bm25"]["normalizer"] = VERSION
        tokens = token_identity(self.languages, self.bm25)  # a measured default tokenizer, a segmenter's version
        if tokens is not None:
            settings["bm25_tokens"] = tokens
        if self.grades != DEFAULT_GRADES:  # what a grade means is part of the data (results made before re-run)
            settings["grades"] = {str(k): v for k, v in sorted(self.grades.items())}
        canonical = json.dumps(settings, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]

    @property
    def grade_scale(self) -> list[int]:
        """The grades in ascending order (the ordinal scale kappa and alpha are computed on)."""
        return sorted(self.grades)

    @property
    def base_dir(self) -> Path:
        return self.path.parent if self.path else Path.cwd()

    @property
    def annotations_creators(self) -> str:
        return ANNOTATIONS.get(self.labels, self.labels)

    @classmethod
    def from_file(cls, path: str | Path) -> TaskConfig:
        """Read and check a task YAML, its ``source:`` too: every problem of the file is reported, each with
        its line (see config_problems)."""
        path = Path(path)
        data, node = read_yaml(path, "name, description, source, ...")
        found, cfg = [], None
        try:
            cfg = cls.model_validate(data)
        except ValidationError as e:
            found = problems(e, cls, node)
        if "source" in data:
            found += source_problems(data["source"], node)
        raise_problems(path, sorted(found, key=lambda p: p[0] or 0))
        assert cfg is not None
        cfg.path = path.resolve()
        return cfg


def _read_yaml(path: Path) -> dict[str, Any]:
    return read_yaml(path, "name, description, source, ...")[0]


def _is_url(value: str) -> bool:
    """mteb's StrURL test (pydantic AnyUrl)."""
    try:
        TypeAdapter(AnyUrl).validate_python(value)
    except ValidationError:
        return False
    return True


def _pydantic_message(e: ValidationError) -> str:
    """The first problem of a validation error as one line (config_problems.messages has them all)."""
    return messages(e)[0][1]


PROJECT_ENV = "PRIVATE_MTEB_PROJECT"


def project_root(start: Path | None = None) -> Path:
    """The project a command works in: $PRIVATE_MTEB_PROJECT (or `--project`), else the nearest folder
    from `start` (default: the current folder) upward that has a `configs/` folder, like git finds
    `.git`; else `start` itself. Commands therefore work from any sub-folder of a project."""
    if os.environ.get(PROJECT_ENV):
        return Path(os.environ[PROJECT_ENV]).expanduser().resolve()
    here = (start or Path.cwd()).resolve()
    for folder in [here, *here.parents]:
        if (folder / "configs").is_dir():
            return folder
    return here


def tasks_dir() -> Path:
    """$PRIVATE_MTEB_TASKS_DIR, else `configs/tasks` of the project root."""
    if os.environ.get(TASKS_DIR_ENV):
        return Path(os.environ[TASKS_DIR_ENV])
    return project_root() / DEFAULT_TASKS_DIR


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
        near = did_you_mean(str(name_or_path), list(configs))
        raise ConfigError(tasks_dir(), f"no task named '{name_or_path}'{near} (known: {known})")
    return TaskConfig.from_file(configs[str(name_or_path)])
