"""The question writer of `questions generate`: the LLM judge's client (judge_client.py) reading another answer.

One client for both, so the generator gets the judge's guarantees unchanged: the request goes to the configured
endpoint only (no proxy, no redirect), the key from an environment variable only, the same retry policy (a
transport failure, a 408/429/5xx, a body that is not chat-completions JSON, or an answer out of format is asked
again with backoff, then the passage is counted as unanswered, never guessed), the first prompt asked alone so a
broken endpoint stops the command with one line, and no error body kept. Only the answer differs: one question on
one line (config/generator.py `parse_question`) instead of `##final score: N`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ...config.generator import GeneratorOptions, parse_question
from .judge_client import ChatJudge


class ChatWriter(ChatJudge):
    """Asks `generator.endpoint` for one question per prompt; `grade_all` gives each prompt's question
    (``Outcome.grade``: the question text, None when every answer was refused)."""

    SECTION = "generator"
    FORMAT = "one question on one line"

    def __init__(self, opts: GeneratorOptions, config: Any = None, sleep: Callable[[float], None] = time.sleep,
                 keep_refused: int = 0) -> None:
        super().__init__(opts, {}, config, sleep=sleep, keep_refused=keep_refused)

    def _parse(self, content: str) -> str | None:
        return parse_question(content)
