"""Encode counts of a search strategy are those of the (cached) encoder it wraps."""

from __future__ import annotations


class CountsFromInner:
    """For wrappers around a (cached) encoder: report its encode counts as their own.

    The runner reads `encoded` / `reused` off whatever model it evaluates; hybrid, chunked and ANN
    searches name the wrapped encoder in `_counts_from`.
    """

    _counts_from: str = "model"

    @property
    def encoded(self) -> int:
        return getattr(getattr(self, self._counts_from, None), "encoded", 0)

    @property
    def reused(self) -> int:
        return getattr(getattr(self, self._counts_from, None), "reused", 0)
