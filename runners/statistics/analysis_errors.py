"""The one error type of the analysis layer: a question the stored results cannot answer.

Missing results, an unknown metric, tag or model, a damaged per-query file, an option out of
range: all are the user's to fix, so the CLI prints the message as one line and exits 2
(never 1, which `check` reserves for a real regression).
"""

from __future__ import annotations


class AnalysisError(ValueError):
    """One line naming the file, model, task or option and what to do."""
