"""The console side of `execution.progress.EncodeProgress`: what the user sees while texts are encoded.

On a terminal: a rich bar per encode pass (texts done / total, texts/s, ETA) under the run's
candidates x tasks bar. Elsewhere (CI logs, pipes): no bar, a plain line every `every` seconds of a
long pass, and `summary()` gives the one line the run prints per (candidate, task) when it is done.
"""

from __future__ import annotations

import time

from rich.console import Console
from rich.progress import Progress, ProgressColumn, Task, TaskID, TimeRemainingColumn
from rich.text import Text

from .terminal import visible


def texts_per_second(task: Task) -> float | None:
    """rich's recent-speed estimate; until it has two samples, the pass's average so far."""
    speed = task.finished_speed or task.speed
    if speed is None and task.completed and task.elapsed:
        speed = task.completed / task.elapsed
    return speed


class TextsPerSecond(ProgressColumn):
    """The speed of an encode pass in texts/s (blank for the run's other bars)."""

    def render(self, task: Task) -> Text:
        if not task.fields.get("texts"):
            return Text("")
        speed = texts_per_second(task)
        return Text(f"{speed:,.1f} texts/s" if speed else "… texts/s", style="progress.data.speed")


class Eta(TimeRemainingColumn):
    """rich's time remaining; for an encode pass, from `texts_per_second` as soon as one chunk is done."""

    def render(self, task: Task) -> Text:
        speed = texts_per_second(task) if task.fields.get("texts") and task.total else None
        if task.time_remaining is not None or not speed or task.finished:
            return super().render(task)
        left = int((task.total - task.completed) / speed)
        return Text(f"{left // 3600}:{left % 3600 // 60:02d}:{left % 60:02d}", style="progress.remaining")


class ConsoleEncodeProgress:
    """Draws encode passes into `progress` (live) or as plain lines on `console`; sums texts and seconds."""

    def __init__(self, progress: Progress, console: Console, *, live: bool, every: float = 30.0) -> None:
        self.progress, self.console, self.live, self.every = progress, console, live, every
        self._bar: TaskID | None = None
        self._label, self._total, self._done, self._t0, self._last_line = "", 0, 0, 0.0, 0.0
        self.texts, self.seconds = 0, 0.0  # since the last summary()

    def start(self, label: str, total: int) -> None:
        self._label, self._total, self._done = label, total, 0
        self._t0 = self._last_line = time.perf_counter()
        if self.live:
            if self._bar is None:
                self._bar = self.progress.add_task(visible(label), total=total, texts=True)
            self.progress.reset(self._bar, total=total, description=f"  {visible(label)}", visible=True)

    def advance(self, n: int) -> None:
        self._done += n
        if self.live and self._bar is not None:
            self.progress.advance(self._bar, n)
            return
        now = time.perf_counter()
        if now - self._last_line >= self.every:
            self._last_line = now
            rate = self._done / max(now - self._t0, 1e-9)
            self.console.print(f"  encoding {self._label}: {self._done}/{self._total} texts, {rate:,.1f} texts/s")

    def finish(self) -> None:
        self.texts += self._done
        self.seconds += time.perf_counter() - self._t0
        self._done = 0
        if self.live and self._bar is not None:
            self.progress.update(self._bar, visible=False)

    def summary(self) -> str:
        """'encoded N texts in S s, R texts/s' for the passes since the last call ('' if none encoded)."""
        texts, seconds = self.texts, self.seconds
        self.texts, self.seconds = 0, 0.0
        if not texts:
            return ""
        return f"{texts} texts in {seconds:.1f}s, {texts / max(seconds, 1e-9):,.1f} texts/s"
