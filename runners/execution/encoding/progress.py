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
import sys
from collections.abc import Iterator
from typing import Any, Protocol, runtime_checkable


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


def _forced_off(tqdm_cls: Any) -> Any:
    """A stand-in for a module's `tqdm` name that always builds a disabled bar."""

    def make(*args: Any, **kwargs: Any) -> Any:
        kwargs["disable"] = True
        return tqdm_cls(*args, **kwargs)

    return make


@contextlib.contextmanager
def quiet_foreign_bars(enabled: bool = True) -> Iterator[None]:
    """Silence the progress bars of datasets, huggingface_hub, transformers and bm25s for now; restore after.

    mteb's and sentence-transformers' bars are turned off through `show_progress_bar=False` by the caller
    (mteb.evaluate and encode_kwargs). mteb calls bm25s without a `show_progress` argument, so bm25s'
    module-level `tqdm` names are swapped for a disabled one, and put back on the way out.
    """
    if not enabled:
        yield
        return
    restore: list[Any] = []
    with contextlib.ExitStack() as stack:
        try:
            import datasets

            if datasets.is_progress_bar_enabled():
                datasets.disable_progress_bars()
                stack.callback(datasets.enable_progress_bars)
        except ImportError:
            pass
        try:
            from transformers.utils import logging as hf_logging  # "Loading weights" while a model loads;
            # first: on import it copies huggingface_hub's switch, which must still be on then

            if hf_logging.is_progress_bar_enabled():
                hf_logging.disable_progress_bar()
                stack.callback(hf_logging.enable_progress_bar)
        except ImportError:
            pass
        try:
            from huggingface_hub.utils import (are_progress_bars_disabled, disable_progress_bars,
                                               enable_progress_bars)

            if not are_progress_bars_disabled():
                disable_progress_bars()
                stack.callback(enable_progress_bars)
        except ImportError:
            pass
        for name in ("bm25s", "bm25s.tokenization", "bm25s.scoring"):
            module = sys.modules.get(name) if name != "bm25s" else _import_quietly("bm25s")
            original = getattr(module, "tqdm", None) if module is not None else None
            if original is not None and callable(original):
                setattr(module, "tqdm", _forced_off(original))
                restore.append((module, original))
        try:
            yield
        finally:
            for module, original in restore:
                module.tqdm = original


def _import_quietly(name: str) -> Any:
    """Import an optional module (so its bars can be silenced before mteb imports it), None if absent."""
    try:
        return __import__(name)
    except ImportError:
        return None
