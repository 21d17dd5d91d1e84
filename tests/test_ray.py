"""The Ray engine on a real 2-node cluster that this test starts and stops itself.

The cluster (head node, second node, driver = the inner pytest run) lives inside a network namespace
with only loopback up and a new PID namespace (tests/ray_cluster.py): Ray never sees a real interface.
"""

from __future__ import annotations

import sys

import pytest

from tests.conftest import REPO
from tests.ray_cluster import run_in_cluster, run_in_namespace, why_not


@pytest.mark.slow
@pytest.mark.skipif(bool(why_not()), reason=why_not() or "ok")
def test_ray_engine_on_a_two_node_cluster_in_a_network_namespace():
    out = run_in_cluster(f"{sys.executable} -m pytest -q -p no:cacheprovider -x {REPO}/tests/ray_inner_encode.py",
                         timeout=900)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    assert " passed" in out.stdout and "failed" not in out.stdout


@pytest.mark.slow
@pytest.mark.skipif(bool(why_not()), reason=why_not() or "ok")
def test_every_address_form_fails_within_connect_timeout_in_a_network_namespace():
    out = run_in_namespace(f"RAY_NS_TEST=1 {sys.executable} -m pytest -q -p no:cacheprovider -x "
                           f"{REPO}/tests/ray_inner_connect.py", timeout=400)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    assert " passed" in out.stdout and "failed" not in out.stdout and "skipped" not in out.stdout
