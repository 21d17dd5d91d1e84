"""Does a chunk fit the model? The string a chunk is embedded as, and what a split must warn about.

mteb embeds a document (so a chunk) as "title text"; the model adds its special tokens and
truncates at max_seq_length. A split records each chunk's real length so that a chunk the model
would cut is said, with counts, instead of silently truncated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .tokens import ModelTokens


class ChunkShape(Protocol):
    """What a split's warnings read of a chunker (``chunking.Chunker``, which imports this module)."""

    size: int
    overlap: int
    unit: str

    def cap(self, limit: int | None = None) -> int: ...


def document_string(title: str, text: str) -> str:
    """The string mteb embeds for a document (mteb._create_dataloaders): "title text", stripped."""
    return (title + " " + text).strip() if title else text


@dataclass
class SplitReport:
    """What a split found that a user must hear about: titles leaving no room, chunk lengths."""

    documents: int = 0
    no_room: list[int] = field(default_factory=list)  # title tokens of documents whose title leaves no room
    lengths: list[int] = field(default_factory=list)  # tokens of each chunk as embedded, specials included

    def warnings(self, chunker: ChunkShape, tokens: ModelTokens | None) -> list[tuple[str, str]]:
        """(kind, message) pairs, each with counts; none when every chunk fits the model."""
        if tokens is None:
            return []
        out = []
        limit, cap = tokens.limit, chunker.cap(tokens.limit)
        if limit and chunker.unit == "tokens" and chunker.size > limit:
            out.append(("chunk_size_above_limit",
                        f"chunk size {chunker.size} tokens is above the model's max_seq_length {limit}: chunks are "
                        f"made {limit} tokens long instead (special tokens and title included)"))
        if self.no_room:
            out.append(("title_leaves_no_room",
                        f"{len(self.no_room)} of {self.documents} documents have a title of {min(self.no_room)}-"
                        f"{max(self.no_room)} tokens that leaves no room for text in a {cap}-token chunk "
                        f"({tokens.special} special tokens, overlap {chunker.overlap}): their chunks are cut "
                        "without counting the title and exceed that length"))
        over = [n for n in self.lengths if limit and n > limit]
        if over:
            out.append(("chunk_over_limit",
                        f"{len(over)} of {len(self.lengths)} chunks are longer than the model's max_seq_length "
                        f"{limit} (longest {max(over)} tokens, special tokens included): the model truncates them"))
        return out
