"""How encoding reports progress, and how the libraries' own progress bars are kept quiet during a run.

Encoding a corpus takes minutes; the user should see texts done / total, texts per second and an ETA
instead of silence (or mteb's, datasets' and bm25s' own bars fighting each other). Anything that encodes
texts (`CachedEncoder.encode`, the Ray engine, a bulk prefill) reports through `EncodeProgress`:

    progress.start("MiniLM on MyTask: documents", total=5000)   # one encode pass, `total` texts to encode
    progress.advance(256)                                       # after each finished chunk of texts
    progress.finish()                                           # the pass ended (also after an error)

Only texts actually encoded are counted (cache hits are not), so texts/s is the model's real speed.
A pass may be started with total=0 and never advanced. `NO_PROGRESS` is the default: it does nothing.
Encoders reach the progress of the run they serve through `current_progress()`, which `reporting_to(p)`
sets for the duration of a block (a context variable): an encoder shared by several candidates or runs
(experiments share one per model) never keeps a stale UI object. The UI implementation (a rich bar on a terminal, plain lines otherwise) lives in `runners/cli/`, which
owns the console; execution code only ever sees this protocol. `encoding(progress, label, total)` is the
context-manager form that guarantees `finish()`.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable

from ..backends.library_output import VERBOSE_ENV, forced_disable, verbose  # noqa: F401 - VERBOSE_ENV: the CLI's


@runtime_checkable
class EncodeProgress(Protocol):
    """Receives the progress of encode passes (see the module docstring for the call order)."""

    def start(self, label: str, total: int) -> None: ...

    def advance(self, n: int) -> None: ...

    def finish(self) -> None: ...


class NullProgress:
    """Reports nothing: the default wherever no UI is attached (library use, tests)."""

    def start(self, label: str, total: int) -> None:
        pass

    def advance(self, n: int) -> None:
        pass

    def finish(self) -> None:
        pass


NO_PROGRESS: EncodeProgress = NullProgress()
_CURRENT: contextvars.ContextVar[EncodeProgress] = contextvars.ContextVar("encode_progress", default=NO_PROGRESS)


def current_progress() -> EncodeProgress:
    """The progress of the run in this context (`NO_PROGRESS` outside `reporting_to`)."""
    return _CURRENT.get()


@contextlib.contextmanager
def reporting_to(progress: EncodeProgress | None) -> Iterator[None]:
    """Encode passes inside this block report to `progress` (None: leave the current one)."""
    if progress is None:
        yield
        return
    token = _CURRENT.set(progress)
    try:
        yield
    finally:
        _CURRENT.reset(token)


@contextlib.contextmanager
def encoding(progress: EncodeProgress | None, label: str, total: int) -> Iterator[EncodeProgress]:
    """`start` now, `finish` on the way out whatever happens; yields the progress to `advance`."""
    progress = progress or current_progress()
    progress.start(label, total)
    try:
        yield progress
    finally:
        progress.finish()


@contextlib.contextmanager
def quiet_foreign_bars(enabled: bool = True) -> Iterator[None]:
    """Silence the libraries' progress bars for now; restore after. No-op with --verbose.

    mteb's and sentence-transformers' own bars are also turned off through `show_progress_bar=False` by the
    caller; the bars a library builds without such an argument (mteb's hybrid "Indexing sub-models" /
    "Sub-models", bm25s, datasets, huggingface_hub, transformers' "Loading weights") are all tqdm's or its
    subclasses', so tqdm's class is made to build disabled bars inside this block and put back on the way out.
    Nothing heavy is imported here (a command that loads no model starts fast), and no library's own switch is
    flipped (transformers copies huggingface_hub's on import: a flipped one would outlive the block).
    private-mteb's own bars are rich's, never tqdm's.
    """
    if not enabled or verbose():
        yield
        return
    try:
        from tqdm import std as tqdm_std
    except ImportError:
        yield
        return
    with forced_disable(tqdm_std.tqdm):  # the libraries' own switches are left alone: nothing to restore
        yield
