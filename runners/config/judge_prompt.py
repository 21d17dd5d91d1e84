"""The judge's prompt and the strict reading of its answer.

The default is UMBRELA (Upadhyay et al., 2024; the prompt of TREC 2024 RAG's automatic judgments, after Thomas et
al.'s Bing prompt), with its 0-3 scale replaced by the task's own grade definitions, so an LLM grade means what a
human grade of the task means. The answer must be exactly `##final score: N` with N on the scale; anything else
is malformed (asked again, then unrateable), never guessed from the text around it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from custom_tasks.config import DEFAULT_GRADES
from custom_tasks.errors import ConfigError

UMBRELA = """Given a query and a passage, you must provide a score on an integer scale of {scale} with the following \
meanings:
{grades}

Important Instruction: Assign the highest category only if the passage is dedicated to the query and contains the \
exact answer; assign a middle category if the passage is related and presents something important for the query \
but not the whole answer; if none of the above satisfies give it category {lowest}.

Query: {query}
Passage: {passage}

Split this problem into steps:
Consider the underlying intent of the search.
Measure how well the content matches a likely intent of the query (M).
Measure how trustworthy the passage is (T).
Consider the aspects above and the relative importance of each, and decide on a final score (O). Final score must \
be an integer value only.
Do not provide any code in result. Provide each score in the format of: ##final score: score without providing any \
reasoning."""

_ANSWER = re.compile(r"\s*##\s*final score:\s*(\d+)\s*", re.IGNORECASE)


def task_grades(task_cfg: object) -> dict[int, str]:
    """The task's grade definitions (its YAML's `grades:`, by default the 2/1/0 scale people grade on too)."""
    grades = getattr(task_cfg, "grades", None)
    if isinstance(grades, Mapping) and grades:
        return {int(k): str(v) for k, v in grades.items()}
    return dict(DEFAULT_GRADES)


def load_template(prompt: str, base_dir: Path, config: Path | str | None) -> str:
    """The template text: UMBRELA, or a file (relative to the benchmark YAML) holding {query} and {passage}."""
    if prompt == "umbrela":
        return UMBRELA
    path = Path(prompt) if Path(prompt).is_absolute() else base_dir / prompt
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(config, f"judge.prompt: cannot read {path} ({e.strerror or e}): give `umbrela` or a "
                                  "template file holding {query} and {passage}") from None
    missing = [p for p in ("{query}", "{passage}") if p not in text]
    if missing:
        raise ConfigError(config, f"judge.prompt: {path} has no {' or '.join(missing)}: the template must place "
                                  "the question and the document")
    return text


def render(template: str, query: str, passage: str, grades: Mapping[int, str]) -> str:
    """The prompt for one pair. Placeholders are replaced literally (the texts may hold braces)."""
    ordered = sorted(grades, reverse=True)
    scale = "{" + ", ".join(str(g) for g in sorted(grades)) + "}"
    lines = "\n".join(f"{g} = {grades[g]}" for g in ordered)
    out = template
    for key, value in (("{scale}", scale), ("{grades}", lines), ("{lowest}", str(min(grades)))):
        out = out.replace(key, value)
    # the texts in one pass, so a document that itself contains "{query}" is not expanded
    parts = re.split(r"(\{query\}|\{passage\})", out)
    return "".join(query if p == "{query}" else passage if p == "{passage}" else p for p in parts)


def parse_answer(content: object, grades: Mapping[int, str]) -> int | None:
    """The grade of an answer that is exactly `##final score: N` with N on the scale, else None (malformed)."""
    if not isinstance(content, str):
        return None
    m = _ANSWER.fullmatch(content)
    if m is None:
        return None
    grade = int(m.group(1))
    return grade if grade in grades else None


def canonical_endpoint(url: str) -> str:
    """The chat-completions URL as the identity reads it: scheme and host lower-cased, the default port written out,
    no trailing slash; so `HTTP://Host:80/v1/` and `http://host/v1` are one server and `:8081` is another."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    host = (parts.hostname or "").lower()
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme.lower()}://{host}:{port}{parts.path.rstrip('/')}"


def judge_identity(model: str, template: str, grades: Mapping[int, str], temperature: float,
                   max_tokens: int, endpoint: str) -> str:
    """What a cached grade is tied to: the server that answered (its endpoint: another server answering under the
    same model name is another judge), the model, the prompt (template + scale) and the sampling parameters."""
    blob = "\x00".join([canonical_endpoint(endpoint), model, hashlib.sha256(template.encode()).hexdigest(),
                        repr(sorted(grades.items())), repr(float(temperature)), str(max_tokens)])
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]
