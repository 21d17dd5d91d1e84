"""The report's public comparison kept by content (runners/analysis/compare/compare_cache.py): the kept numbers are exactly
build_comparison's (mteb's aggregation), any input change is a new computation, and a report that finds it imports
no mteb (issue 19 item 10: `report` under 5 s on the demo)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from runners.analysis.compare.compare import build_comparison
from runners.analysis.compare.compare_cache import CODE, cache_key, cached_comparison, from_record, to_record
from runners.analysis.compare.public import FolderSource, SnapshotSource
from tests.test_compare import BM25, MINILM, PRIVATE, TASK_A, TASK_B, _register_private_tasks, write_result

REPO = Path(__file__).resolve().parents[1]
MODELS = [MINILM, BM25, "acme/minilm-ft", "thenlper/gte-small"]


@pytest.fixture()
def results(tmp_path: Path) -> Path:
    _register_private_tasks()
    for model, (rev, scores) in PRIVATE.items():
        for task, score in scores.items():
            write_result(tmp_path, model, rev, task, score)
    (tmp_path / "private-mteb").mkdir()
    (tmp_path / "private-mteb" / "candidates.json").write_text(json.dumps({"acme/minilm-ft": {"public_name": MINILM}}))
    return tmp_path


def _build(results: Path, calls: list[int]):
    def build():
        calls.append(1)
        return build_comparison(results, SnapshotSource(), [TASK_A, TASK_B], MODELS, include_public_only=False)
    return build


def _same(a, b, exact: bool = True) -> None:
    """exact: a kept comparison read back; not exact: computed again, where mteb's means may move by an ulp
    (the order it sums the public tasks in follows its load order)."""
    for name in ("table", "ranks", "revisions"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name), check_exact=exact, rtol=1e-12)
    assert a.long_frame.equals(b.long_frame) if exact else a.long_frame.shape == b.long_frame.shape
    for name in ("private_tasks", "public_tasks", "public_set", "source", "agreement", "notes", "public_board_size",
                 "private_results_dir", "main_scores"):
        assert getattr(a, name) == getattr(b, name), name


def test_kept_comparison_is_exactly_mteb_s(results: Path) -> None:
    comp = _build(results, [])()
    assert comp.table["Mean (Private)"].notna().sum() >= 3 and comp.main_scores[TASK_A] == "ndcg_at_10"
    _same(from_record(json.loads(json.dumps(to_record(comp)))), comp)


def test_second_report_reads_it_and_any_change_recomputes(results: Path) -> None:
    calls: list[int] = []
    args = (results, SnapshotSource(), [None, None], [TASK_A, TASK_B], MODELS)
    first = cached_comparison(*args, _build(results, calls))
    _same(cached_comparison(*args, _build(results, calls)), first)
    assert len(calls) == 1
    kept = next((results / "private-mteb" / "cache").glob("compare-*.json.gz"))
    kept.write_bytes(b"not gzip")  # a damaged entry is computed again, never fatal
    _same(cached_comparison(*args, _build(results, calls)), first, exact=False)
    assert len(calls) == 2
    write_result(results, BM25, "0_3_0", TASK_A, 0.74)  # a re-run changed one score
    changed = cached_comparison(*args, _build(results, calls))
    assert len(calls) == 3 and changed.table.loc[BM25, TASK_A] == 0.74
    (results / "private-mteb" / "candidates.json").write_text("{}")  # a public name dropped
    cached_comparison(*args, _build(results, calls))
    other_models = (results, SnapshotSource(), [None, None], [TASK_A, TASK_B], MODELS[:2])
    cached_comparison(*other_models, _build(results, calls))
    assert len(calls) == 5
    assert cache_key(results, FolderSource(results), [], [TASK_A], MODELS) is None  # only snapshots are kept


def test_a_report_that_finds_it_imports_no_mteb(results: Path) -> None:
    calls: list[int] = []
    cached_comparison(results, SnapshotSource(), [None, None], [TASK_A, TASK_B], MODELS, _build(results, calls))
    probe = ("import sys, json\n"
             "from runners.analysis.compare.compare_cache import cached_comparison\n"
             "from runners.analysis.compare.public import SnapshotSource\n"
             f"c = cached_comparison({str(results)!r}, SnapshotSource(), [None, None], {[TASK_A, TASK_B]!r}, "
             f"{MODELS!r}, lambda: 1 / 0)\n"
             "print(json.dumps([round(float(c.table['Mean (Private)'].max()), 4), 'mteb' in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [0.815, False]


def test_the_code_the_key_covers_is_where_it_is_named() -> None:
    """The key hashes the code behind the kept numbers by path: after a module moves, each path must still name the
    module that computes them (compare.py, public.py, public_language.py and the task code), not a file gone."""
    assert [p.name for p in CODE] == ["compare_cache.py", "compare.py", "public.py", "public_language.py",
                                      "mteb_private.py", "task.py"]
    assert all(p.is_file() and p.resolve().is_relative_to(REPO) for p in CODE), CODE

