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
    blocked = _probe("from runners.execution.backends.telemetry_off import block_vendor_telemetry; block_vendor_telemetry()")
    assert blocked["ovc"] == "openvino.tools.ovc.telemetry_stub"
    assert blocked["nncf"] != "NNCFTelemetry"


def test_a_sender_loaded_first_gets_no_consent() -> None:
    import openvino_telemetry

    from runners.execution.backends.telemetry_off import block_vendor_telemetry

    saved = openvino_telemetry.Telemetry.init
    try:
        block_vendor_telemetry()
        t = object.__new__(openvino_telemetry.Telemetry)
        t.init("x", "1", "tid", "ga4", False, False)
        assert t.consent is False
    finally:
        openvino_telemetry.Telemetry.init = saved


ORT_PROBE = """
import os, pathlib, sys
{setup}
import numpy as np, onnx, onnxruntime as ort
from onnx import TensorProto, helper
graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
home = pathlib.Path(os.environ["HOME"])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(home / "m.onnx"))
ort.InferenceSession(str(home / "m.onnx"), providers=["CPUExecutionProvider"]).run(None, {{"x": np.ones(1, np.float32)}})
print((home / ".cache" / "Microsoft").exists())
"""


def test_onnxruntime_keeps_no_telemetry_state_once_runners_is_imported(tmp_path) -> None:
    """onnxruntime 1.32 writes a device id and a telemetry queue (sent to events.data.microsoft.com) unless
    ORT_DISABLE_TELEMETRY is set before its import; importing private-mteb sets it."""
    pytest.importorskip("onnxruntime", reason="the onnx extra is not installed")

    def probe(setup: str, home: str) -> bool:
        (tmp_path / home).mkdir()
        out = subprocess.run([sys.executable, "-c", ORT_PROBE.format(setup=setup)], cwd=REPO, capture_output=True,
                             text=True, timeout=300, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / home)})
        assert out.returncode == 0, out.stderr[-2000:]
        return out.stdout.strip().splitlines()[-1] == "True"

    assert probe("", "plain")  # the probe can see it: onnxruntime alone creates ~/.cache/Microsoft
    assert not probe("import runners", "ours")
