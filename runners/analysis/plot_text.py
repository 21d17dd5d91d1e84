"""Plot text is literal: labels, tag values and model names never reach matplotlib's math-text parser.

matplotlib reads text between two `$` as TeX math by default, so a label such as `acme_$env_$v2` either
renders as math or stops the figure with a parse error. Every figure of the report and of
`compare --plot` is built and saved inside `literal_text()`: `$`, `\\`, `_`, `^` and braces render as typed.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

#: matplotlib settings under which every string is drawn as typed
LITERAL_TEXT = {"text.parse_math": False, "text.usetex": False}


@contextmanager
def literal_text() -> Iterator[None]:
    """Text created or drawn inside is literal (also usable as a decorator: `@literal_text()`)."""
    from matplotlib import rc_context

    with rc_context(LITERAL_TEXT):
        yield
