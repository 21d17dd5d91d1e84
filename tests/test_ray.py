"""The Ray engine on a real 2-node cluster that this test starts and stops itself.

Ray binds to the machine's external interface unless confined, so the whole Ray part (head node,
second node, driver = the inner pytest run) runs inside a new network namespace (`unshare -n`) with
only loopback up, and a new PID namespace so `ray stop` sees only this cluster's processes.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from tests.conftest import REPO

PORT = 6391


def _why_not() -> str:
    if importlib.util.find_spec("ray") is None:
        return "ray is not installed (pip install 'private-mteb[ray]')"
    if os.geteuid() != 0:
        return "needs root for unshare -n (a private network namespace)"
    for tool in ("unshare", "ip"):
        if shutil.which(tool) is None:
            return f"needs '{tool}' (apt-get install util-linux iproute2)"
    return ""


@pytest.mark.slow
@pytest.mark.skipif(bool(_why_not()), reason=_why_not() or "ok")
def test_ray_engine_on_a_two_node_cluster_in_a_network_namespace():
    ray_bin = os.path.join(os.path.dirname(sys.executable), "ray")
    tmp = tempfile.mkdtemp(prefix="rayt-")
    node = (f"--node-ip-address=127.0.0.1 --num-cpus=1 --object-store-memory=100000000 "
            f"--disable-usage-stats")
    script = f"""
set -u
ip link set lo up
export PYTHONPATH={REPO} RAY_USAGE_STATS_ENABLED=0
{ray_bin} start --head --port={PORT} {node} --include-dashboard=false --temp-dir={tmp} >{tmp}/head.log 2>&1 || {{ cat {tmp}/head.log; exit 3; }}
{ray_bin} start --address=127.0.0.1:{PORT} {node} >{tmp}/node.log 2>&1 || {{ cat {tmp}/node.log; exit 3; }}
RAY_TEST_ADDRESS=127.0.0.1:{PORT} {sys.executable} -m pytest -q -p no:cacheprovider -x {REPO}/tests/ray_inner_encode.py
rc=$?
{ray_bin} stop --force >/dev/null 2>&1
exit $rc
"""
    try:
        out = subprocess.run(["unshare", "-n", "-p", "-f", "--mount-proc", "bash", "-c", script], cwd=REPO,
                             capture_output=True, text=True, timeout=900)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    assert " passed" in out.stdout and "failed" not in out.stdout
