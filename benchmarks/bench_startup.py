"""Start-up time of the analysis commands vs `python -c "import mteb"`, measured side by side.

Issue #10's target: `stats`, `check`, `tasks list`, `tasks stats` and `--help` take <= 0.25 of
the time `import mteb` takes, because they read stored results and never import torch. The
machine is noisy, so each command runs several times interleaved and the medians are compared.

    .venv/bin/python benchmarks/bench_startup.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
TINY = REPO / "tests" / "configs" / "kb_tiny.yaml"
CLI = [sys.executable, "-m", "runners.cli"]
TARGET = 0.25


def _time(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    took = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr[-500:]}")
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--smoke", action="store_true", help="tiny size, seconds (CI runs this: tests/test_benchmarks_smoke.py)")
    args = ap.parse_args()
    if args.smoke:
        args.repeats = 1
    tmp = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    cfg = tmp / "bench.yaml"
    cfg.write_text(yaml.safe_dump({"name": "startup", "tasks": [str(TINY)], "models": [{"name": "bm25"}],
                                   "results_dir": str(tmp / "results")}))
    subprocess.run(CLI + ["run", "-c", str(cfg)], cwd=REPO, check=True, capture_output=True)  # results to read
    shutil.copytree(tmp / "results", tmp / "baseline")
    commands = {
        'python -c "import mteb"': [sys.executable, "-c", "import mteb"],
        "private-mteb --help": CLI + ["--help"],
        "private-mteb tasks list": CLI + ["tasks", "list"],
        "private-mteb tasks stats": CLI + ["tasks", "stats", str(TINY)],
        "private-mteb stats": CLI + ["stats", "-c", str(cfg), "-t", "TinyKBRetrieval", "--resamples", "1000"],
        "private-mteb check": CLI + ["check", "--baseline", str(tmp / "baseline"), "--candidate",
                                     str(tmp / "results"), "--resamples", "1000"],
    }
    times: dict[str, list[float]] = {k: [] for k in commands}
    for _ in range(args.repeats):  # interleaved, so load spikes hit every command alike
        for name, cmd in commands.items():
            times[name].append(_time(cmd))
    ref = statistics.median(times['python -c "import mteb"'])
    print(f"{'command':<28} {'median s':>9} {'ratio to import mteb':>21}")
    worst = 0.0
    for name, ts in times.items():
        med = statistics.median(ts)
        ratio = med / ref
        if name != 'python -c "import mteb"':
            worst = max(worst, ratio)
        print(f"{name:<28} {med:>9.2f} {ratio:>21.3f}")
    print(f"worst ratio {worst:.3f} (target <= {TARGET}): {'OK' if worst <= TARGET else 'MISSED'}")


if __name__ == "__main__":
    main()
