"""Every script in benchmarks/ imports and runs at a tiny size, so a moved module never silently breaks one.

Scripts are discovered automatically: every `benchmarks/*.py` whose name does not start with `_`. What a
benchmark script must offer to pass (add the same to a new one):

* importable without side effects: the work happens in `main()` under `if __name__ == "__main__":`;
* a `--smoke` flag: the whole code path of the script (the same functions, imports, child processes and
  printed table as a real run) at the tiniest size, e.g. the 12-page task tests/configs/kb_tiny.yaml, a few
  thousand synthetic documents, one repeat. It uses only what the repository ships or generates (never
  ../shared, nothing downloaded), writes only to temporary folders (never a README figure or a tracked
  file), and finishes in ~10 s of its own work on 2 shared cores: every script's smoke run together must
  stay under ~2 minutes;
* exit 0 when it ran; exit 77 (automake's "skipped") with one line on stderr saying why when this machine
  lacks something optional the benchmark needs (an extra, root for a Ray cluster): the test then skips
  with that line, and fails under PRIVATE_MTEB_REQUIRE_OPTIONAL_TESTS=1 like every optional test.
  Not meeting a performance target is not a failure here (the figures at this size mean nothing).

To share the cost of importing torch/mteb, one child process imports them once, then runs each script in
turn with `runpy` as `__main__` (argv `[script, "--smoke"]`; cwd, argv, sys.path and os.environ restored
after each), its output captured at the file-descriptor level so child processes' output is kept too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(p for p in (REPO / "benchmarks").glob("*.py") if not p.name.startswith("_"))
SKIP_EXIT = 77
PER_SCRIPT_S = 300  # one script's limit on a loaded machine; all of them take ~2 minutes on an idle 2-core one
pytestmark = pytest.mark.slow


def _run_all(scripts: list[str], out: str) -> None:
    """In the child: run each script as __main__ with --smoke; write {name: {rc, seconds, output}} to `out`."""
    import runpy
    import signal
    import tempfile
    import time
    import traceback

    import mteb  # noqa: F401 - imported once for all scripts
    import sentence_transformers  # noqa: F401

    def _alarm(signum, frame):
        raise TimeoutError(f"--smoke ran past {PER_SCRIPT_S} s")

    signal.signal(signal.SIGALRM, _alarm)
    report = {}
    for script in scripts:
        saved = (os.getcwd(), list(sys.argv), list(sys.path), dict(os.environ))
        log = tempfile.TemporaryFile()
        sys.stdout.flush(), sys.stderr.flush()
        fds = os.dup(1), os.dup(2)
        os.dup2(log.fileno(), 1), os.dup2(log.fileno(), 2)
        t0, rc = time.perf_counter(), 0
        signal.alarm(PER_SCRIPT_S)
        try:
            sys.argv = [script, "--smoke"]
            runpy.run_path(script, run_name="__main__")
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            if not isinstance(e.code, int) and e.code is not None:
                print(e.code, file=sys.stderr)
        except BaseException:  # noqa: BLE001 - reported as the script's failure
            traceback.print_exc()
            rc = 1
        finally:
            signal.alarm(0)
            _kill_descendants()  # what a timed-out script left running
            sys.stdout.flush(), sys.stderr.flush()
            os.dup2(fds[0], 1), os.dup2(fds[1], 2)
            os.close(fds[0]), os.close(fds[1])
            os.chdir(saved[0])
            sys.argv[:], sys.path[:] = saved[1], saved[2]
            os.environ.clear()
            os.environ.update(saved[3])
        log.seek(0)
        output = log.read().decode(errors="replace")
        report[Path(script).name] = {"rc": rc, "seconds": round(time.perf_counter() - t0, 1), "output": output}
        print(f"{Path(script).name}: exit {rc}, {report[Path(script).name]['seconds']} s", flush=True)
    Path(out).write_text(json.dumps(report))


def _kill_descendants() -> None:
    """SIGKILL every process this driver started (children of children included), found through /proc."""
    import signal

    parent: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    mine, grew = {os.getpid()}, True
    while grew:
        more = {pid for pid, ppid in parent.items() if ppid in mine} - mine
        mine |= more
        grew = bool(more)
    for pid in mine - {os.getpid()}:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


@pytest.fixture(scope="module")
def smoke_runs(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("bench-smoke") / "report.json"
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "TQDM_DISABLE": "1"}
    proc = subprocess.run([sys.executable, __file__, str(out), *map(str, SCRIPTS)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=PER_SCRIPT_S * len(SCRIPTS) + 120)
    assert proc.returncode == 0 and out.exists(), f"the smoke driver failed:\n{proc.stderr[-3000:]}"
    return json.loads(out.read_text())


def test_scripts_are_discovered():
    names = {p.name for p in SCRIPTS}
    assert {"bench_runner.py", "bench_backends.py", "bench_stats.py"} <= names


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_offers_smoke_flag(script: Path):
    assert "--smoke" in script.read_text(encoding="utf-8"), (
        f"{script.name} has no --smoke option: see this test's docstring for what a benchmark script must offer")


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_runs_at_tiny_size(script: Path, smoke_runs: dict):
    run = smoke_runs[script.name]
    tail = run["output"][-4000:]
    if run["rc"] == SKIP_EXIT:
        pytest.skip(f"{script.name} --smoke: " + (run["output"].strip().splitlines() or ["exit 77"])[-1])
    assert run["rc"] == 0, f"{script.name} --smoke exited {run['rc']} after {run['seconds']} s:\n{tail}"


if __name__ == "__main__":
    _run_all(sys.argv[2:], sys.argv[1])
