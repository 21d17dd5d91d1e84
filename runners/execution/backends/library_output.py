"""The libraries' own output (progress bars, log lines) turned off unless the user asked for it (`--verbose`).

The lowest room holds it because both users are here or above: NNCF's quantisation bars while a backend copy
is built (backend_build), and every tqdm bar during a command (encoding.progress.quiet_foreign_bars).
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator
from typing import Any

VERBOSE_ENV = "PRIVATE_MTEB_VERBOSE"  # set by the CLI's --verbose: the libraries' own bars and logs are shown


def verbose() -> bool:
    """Whether the user asked for the libraries' own bars and logs (`private-mteb --verbose ...`)."""
    return os.environ.get(VERBOSE_ENV) == "1"


@contextlib.contextmanager
def forced_disable(cls: Any) -> Iterator[None]:
    """Every instance of `cls` (and of its subclasses) built in this block is built with disable=True."""
    raw = cls.__dict__.get("__init__")  # the descriptor itself (tqdm's is a partialmethod), put back as it was
    original = cls.__init__

    @functools.wraps(original)
    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs["disable"] = True
        original(self, *args, **kwargs)

    cls.__init__ = init
    try:
        yield
    finally:
        if raw is None:
            del cls.__init__
        else:
            cls.__init__ = raw


@contextlib.contextmanager
def quiet_nncf() -> Iterator[None]:
    """NNCF's "Statistics collection" / "Applying Smooth Quant" bars and its INFO lines (on stdout) off while
    it quantises (backend_build._quantise); no-op with --verbose."""
    if verbose():
        yield
        return
    import logging

    from nncf.common.logging import nncf_logger
    from nncf.common.logging.track_progress import track

    level, handlers = nncf_logger.level, list(nncf_logger.handlers)
    nncf_logger.setLevel(logging.ERROR)
    try:
        with forced_disable(track):
            yield
    finally:
        nncf_logger.setLevel(level)
        nncf_logger.handlers = handlers
