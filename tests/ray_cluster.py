"""A 2-node Ray cluster on loopback, inside a new network + PID namespace, for tests and benchmarks.

Ray binds to the machine's external interface unless confined, so everything Ray (head node, second
node, the driver command) runs inside `unshare -n` with only loopback up, and in a new PID namespace:
`ray stop` then sees only this cluster's processes, and whatever is left dies with the namespace
(also when the caller kills `unshare` on a timeout: `--kill-child`).
Used by tests/test_ray.py and benchmarks/bench_ray.py; never start Ray outside such a namespace.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PORT = 6391


@functools.lru_cache(maxsize=1)
def why_not() -> str:
    """Why a cluster cannot be started here ('' when it can)."""
    if importlib.util.find_spec("ray") is None:
        return "ray is not installed (pip install 'private-mteb[ray]')"
    for tool in ("unshare", "ip"):
        if shutil.which(tool) is None:
            return f"needs '{tool}' (apt-get install util-linux iproute2)"
    probe = subprocess.run(["unshare", *_flags(), "true"], capture_output=True, timeout=30)
    if probe.returncode != 0:
        return ("needs root, or unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1), "
                "for unshare -n (a private network namespace)")
    return ""


def _flags() -> list[str]:
    """Network + PID namespace; a non-root user also gets a user namespace where it is root (`-r`)."""
    return ["-n", "-p", "-f", "--kill-child", "--mount-proc"] + ([] if os.geteuid() == 0 else ["-r"])


def _script(command: str, tmp: str, port: int, object_store_bytes: int) -> str:
    ray_bin = shlex.quote(os.path.join(os.path.dirname(sys.executable), "ray"))
    q_tmp = shlex.quote(tmp)
    node = (f"--node-ip-address=127.0.0.1 --num-cpus=1 --object-store-memory={object_store_bytes} "
            f"--disable-usage-stats")
    return f"""
set -u
ip link set lo up
export PYTHONPATH={shlex.quote(str(REPO))} RAY_USAGE_STATS_ENABLED=0
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
{ray_bin} start --head --port={port} {node} --include-dashboard=false --temp-dir={q_tmp} >{q_tmp}/head.log 2>&1 \\
  || {{ cat {q_tmp}/head.log; exit 3; }}
{ray_bin} start --address=127.0.0.1:{port} {node} >{q_tmp}/node.log 2>&1 || {{ cat {q_tmp}/node.log; exit 3; }}
export RAY_TEST_ADDRESS=127.0.0.1:{port}
{command}
rc=$?
{ray_bin} stop --force >/dev/null 2>&1
exit $rc
"""


def run_in_namespace(command: str, *, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """The shell `command` in the same kind of namespace (loopback only, own PIDs), with no cluster started."""
    script = f"""
set -u
ip link set lo up
export PYTHONPATH={shlex.quote(str(REPO))} RAY_USAGE_STATS_ENABLED=0
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
{command}
"""
    return subprocess.run(["unshare", *_flags(), "bash", "-c", script], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout)


def run_in_cluster(command: str, *, port: int = PORT, timeout: float = 900, capture: bool = True,
                   object_store_bytes: int = 100_000_000) -> subprocess.CompletedProcess[str]:
    """Start the cluster (1 CPU per node), run the shell `command` with RAY_TEST_ADDRESS set, stop it.

    Exit status 3 means a node did not start (its log is in the output).
    """
    tmp = tempfile.mkdtemp(prefix="rayt-")  # short: Ray's socket paths live under it
    try:
        return subprocess.run(["unshare", *_flags(), "bash", "-c",
                               _script(command, tmp, port, object_store_bytes)],
                              cwd=REPO, capture_output=capture, text=True, timeout=timeout)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
