"""OpenVINO's converter and NNCF report usage by default; private-mteb's openvino backend must load neither sender."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import REPO

pytest.importorskip("openvino", reason="the openvino extra is not installed")
pytest.importorskip("nncf", reason="the openvino extra is not installed")

# a fresh process: NNCF stubs its telemetry by itself when pytest is imported, which would hide the default
PROBE = """
import json, sys
{setup}
import openvino, nncf
import openvino.tools.ovc.convert_impl as ovc
from nncf.telemetry import wrapper
print(json.dumps({{"ovc": ovc.tm.__name__, "nncf": type(wrapper.telemetry).__name__}}))
"""


def _probe(setup: str) -> dict[str, str]:
    out = subprocess.run([sys.executable, "-c", PROBE.format(setup=setup)], cwd=REPO, capture_output=True, text=True,
                         timeout=300, env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent-home"})
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_openvino_and_nncf_send_telemetry_by_default_and_not_after_the_block() -> None:
    default = _probe("")
    assert default == {"ovc": "openvino_telemetry", "nncf": "NNCFTelemetry"}  # the probe can see the sender
    blocked = _probe("from runners.execution.telemetry_off import block_vendor_telemetry; block_vendor_telemetry()")
    assert blocked["ovc"] == "openvino.tools.ovc.telemetry_stub"
    assert blocked["nncf"] != "NNCFTelemetry"


def test_a_sender_loaded_first_gets_no_consent() -> None:
    import openvino_telemetry

    from runners.execution.telemetry_off import block_vendor_telemetry

    saved = openvino_telemetry.Telemetry.init
    try:
        block_vendor_telemetry()
        t = object.__new__(openvino_telemetry.Telemetry)
        t.init("x", "1", "tid", "ga4", False, False)
        assert t.consent is False
    finally:
        openvino_telemetry.Telemetry.init = saved
