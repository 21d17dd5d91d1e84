"""The model's tokenizer as a chunker needs it: token offsets, special tokens, the length limit.

A chunk is embedded as mteb's document string "title text", which the model wraps in special
tokens ([CLS] ... [SEP]) and truncates at its `max_seq_length`. A chunker that counts only the
text's tokens makes chunks the model silently cuts; this module gives it what to count.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

#: text -> (start, end) char offsets of each token (no special tokens)
OffsetsFn = Callable[[str], Sequence[tuple[int, int]]]


@dataclass(frozen=True)
class ModelTokens:
    """A model's (HF) tokenizer, usable as an OffsetsFn, with what the model adds around a text.

    `special`: tokens the model adds to one sequence (the tokenizer's num_special_tokens_to_add);
    `limit`: the model's max_seq_length (None when unknown), specials included.
    """

    tokenizer: Any
    special: int = 0
    limit: int | None = None

    def __call__(self, text: str) -> list[tuple[int, int]]:
        enc = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        return [tuple(o) for o in enc["offset_mapping"]]

    def count(self, text: str) -> int:
        """Tokens the model would see for `text` before truncation, special tokens included."""
        enc = self.tokenizer(text, add_special_tokens=True, verbose=False)
        ids = enc.get("input_ids") if hasattr(enc, "get") else None
        return len(ids) if ids is not None else len(self(text)) + self.special


def model_tokens(encoder: Any) -> ModelTokens | None:
    """The encoder's tokenizer, special-token count and limit, looked up through wrappers (None: no tokenizer)."""
    tok = find_attr(encoder, "tokenizer")
    if tok is None:
        return None
    add = getattr(tok, "num_special_tokens_to_add", None)
    special = int(add(pair=False)) if callable(add) else 0
    return ModelTokens(tok, special, max_seq_length(encoder))


def max_seq_length(encoder: Any) -> int | None:
    value = find_attr(encoder, "max_seq_length")
    return int(value) if isinstance(value, int) else None


def find_attr(obj: Any, name: str, depth: int = 4) -> Any:
    """obj.name, else look inside obj._model / obj.model (CachedEncoder -> mteb wrapper -> ST model)."""
    for _ in range(depth):
        if obj is None:
            return None
        inner = vars(obj) if hasattr(obj, "__dict__") else {}
        if type(obj).__name__ != "CachedEncoder":  # it forwards unknown attributes: look inside instead
            value = getattr(obj, name, None)
            if value is not None:
                return value
        obj = inner.get("_model") if inner.get("_model") is not None else inner.get("model")
    return None
