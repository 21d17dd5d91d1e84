"""`generator:` and `production_llm:` of a benchmark YAML: the LLM that writes questions (`questions generate`).

Nothing is sent anywhere unless a config names `generator.endpoint`, an OpenAI-compatible chat-completions server,
as the judge's (judge.py): the same client, retry policy and identity. The prompt is a template the team can
replace (a file beside the config); the default asks for one question in the task's language, in the asker's own
words, because generated questions that copy the document's wording favour lexical search (issue 38).
`production_llm:` names the LLM the team's product runs: a generator of its family (or of a candidate's) is refused,
since questions an LLM writes flatter its own family.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import Field, field_validator

from custom_tasks.errors import ConfigError

from .endpoint import key_env_name
from .judge import JudgeOptions

#: the environment variable holding the generator's API key unless `api_key_env` names another
GENERATOR_API_KEY_ENV = "PRIVATE_MTEB_GENERATOR_API_KEY"
#: a question longer than this (characters) is not a search question: the answer is malformed, asked again
MAX_QUESTION_CHARS = 300

DEFAULT_PROMPT = """You write test questions for a search engine over a collection of documents.
Read the passage and write ONE question in {language} that a real user of this collection might type into \
the search box, and that this passage answers.
Use your own words: do not copy phrases from the passage, and do not mention "the passage" or "the document".
Answer with the question only, on one line, without quotes or numbering.

Passage: {passage}"""

_LABEL = re.compile(r"^(?:question|q)\s*[:.)-]\s*", re.IGNORECASE)
_QUOTES = "\"'“”„«»‘’`"


class GeneratorOptions(JudgeOptions):
    """`generator: {endpoint, model, prompt, temperature, max_tokens, api_key_env, ...}` (the judge's fields)."""

    #: `default` (DEFAULT_PROMPT) or a template file (relative to the benchmark YAML) holding {passage} and
    #: optionally {language} (the task's language names) and {title}
    prompt: str = "default"
    temperature: float = Field(default=0.7, ge=0.0, le=2.0)
    max_tokens: int = Field(default=96, ge=1, le=4096)
    #: the environment variable holding the API key (sent as `Authorization: Bearer`); never the key itself
    api_key_env: str = GENERATOR_API_KEY_ENV

    @field_validator("api_key_env")
    @classmethod
    def _key_env(cls, v: str) -> str:
        return key_env_name(v, GENERATOR_API_KEY_ENV)


def load_generator_template(prompt: str, base_dir: Path, config: Path | str | None) -> str:
    """The template text: DEFAULT_PROMPT, or a file (relative to the benchmark YAML) holding {passage}."""
    if prompt == "default":
        return DEFAULT_PROMPT
    path = Path(prompt) if Path(prompt).is_absolute() else base_dir / prompt
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(config, f"generator.prompt: cannot read {path} ({e.strerror or e}): give `default` or a "
                                  "template file holding {passage}") from None
    if "{passage}" not in text:
        raise ConfigError(config, f"generator.prompt: {path} has no {{passage}}: the template must place the "
                                  "document the question is written from")
    return text


def render_generator(template: str, passage: str, title: str, language: str) -> str:
    """The prompt for one passage; placeholders replaced literally and in one pass (a text may hold braces)."""
    values = {"{passage}": passage, "{title}": title, "{language}": language}
    parts = re.split(r"(\{passage\}|\{title\}|\{language\})", template)
    return "".join(values.get(p, p) for p in parts)


def parse_question(content: object) -> str | None:
    """The question of an answer: one non-empty line (surrounding quotes and a `Question:` label removed), at most
    MAX_QUESTION_CHARS; anything else (several lines, an essay, nothing) is malformed: None, asked again."""
    if not isinstance(content, str):
        return None
    text = content.strip()
    if not text or "\n" in text:
        return None
    text = _LABEL.sub("", text).strip().strip(_QUOTES).strip()
    if not text or len(text) > MAX_QUESTION_CHARS:
        return None
    return text
