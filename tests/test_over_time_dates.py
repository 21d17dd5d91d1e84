"""Issue 29 "readable dates on time axes": the over-time chart's x-axis read like "05:46.300000" (matplotlib's
default date formatter on records seconds apart). AutoDateLocator + ConciseDateFormatter: each tick says only
what changes, the rest is said once in the offset, at every span from a second to months."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest

from runners.analysis.gate.history_timeline import Step, Timeline
from runners.analysis.page.over_time_figures import over_time

START = datetime(2026, 12, 3, 5, 46, tzinfo=timezone.utc)
#: what ConciseDateFormatter writes: a year, a month, a day, hours:minutes, or seconds (with at most 3 decimals)
TICK = re.compile(r"^(\d{4}|[A-Z][a-z]{2}|\d{2}|\d{2}:\d{2}|\d{2}\.\d{1,3})$")


def _timeline(step: timedelta, n: int = 4) -> Timeline:
    steps = [Step(id=str(i), time=(START + step * i).isoformat(), candidate="prod", model="m", task="T",
                  metric="ndcg_at_10", mean=0.5 + 0.01 * i, ci_low=0.45, ci_high=0.62, corpus_size=100 + i,
                  queries=10, dataset_revision="r", fingerprint="f", git="",
                  changed=["first record"] if i == 0 else ["data"], changed_detail=[]) for i in range(n)]
    return Timeline("prod", "T", "ndcg_at_10", steps)


def _labels(step: timedelta) -> tuple[list[str], str]:
    fig = over_time([_timeline(step)], "nDCG@10")
    fig.canvas.draw()
    ax = fig.axes[0]
    return [t.get_text() for t in ax.get_xticklabels() if t.get_text()], ax.xaxis.get_offset_text().get_text()


@pytest.mark.parametrize("step, offset", [
    (timedelta(milliseconds=300), "2026-Dec-03 05:46"),  # a test suite's records: the case that read "05:46.300000"
    (timedelta(seconds=2), "2026-Dec-03 05:46"),
    (timedelta(hours=5), "2026-Dec-03"),
    (timedelta(days=9), "2026-Dec"),
    (timedelta(days=60), ""),  # months apart: the ticks name months and the year
])
def test_time_axis_ticks_are_readable_dates(step, offset):
    labels, shown = _labels(step)
    assert len(labels) >= 3, labels
    assert all(TICK.match(t) for t in labels), labels
    assert not any(re.search(r"\d{6}", t) for t in labels), labels  # no microseconds
    assert shown == offset
