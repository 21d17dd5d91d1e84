"""The machine facts of an exported backend: backend, precision, runtime versions, build method, CPU features.

A variant encoded by ONNX Runtime or OpenVINO is fingerprinted with these (torch fp32 adds nothing, so the
reference's fingerprints stay valid): the one identity function (execution/candidates/run_identity.py) adds
them to each value whose settings name such a backend; the exported copy's folder name (backend_build.py) uses
the same parts.
"""

from __future__ import annotations

from typing import Any

from ...results.fingerprints import canonical_hash
from .cpu_features import cpu_identity

#: the runtime packages whose version can change an exported model's vectors, per backend
BACKEND_RUNTIMES = {"onnx": ("onnxruntime", "onnx", "torch"), "openvino": ("openvino", "nncf", "onnx", "torch")}
#: how an exported copy is built and run where that is more than a conversion (change the name when the method
#: changes: the old method's results then never count as the new one's); openvino int8 also names its calibration
#: set (backend_build._quantise; backend_runtime.BF16_HINT: its non-quantised ops run in bf16)
BUILD_METHODS = {("openvino", "int8"): "nncf-ptq-transformer-2,bf16-hint"}


def build_method(backend: str | None, precision: str | None) -> str | None:
    """The build method of (backend, precision) for its fingerprint and its exported copy's name; None: a plain
    conversion (their fingerprints stay what they were)."""
    method = BUILD_METHODS.get((backend or "torch", precision or "fp32"))
    if method and (backend, precision) == ("openvino", "int8"):
        method += f"+calibration-{calibration_hash()}"
    return method


def calibration_hash() -> str:
    """Content hash of the int8 calibration set (a changed set rebuilds the copy and re-runs its results)."""
    from . import calibration_texts

    return canonical_hash(calibration_texts.calibration_texts(), 12)


def backend_identity(backend: str | None, precision: str | None) -> dict[str, Any]:
    """{} for the reference (torch fp32: existing fingerprints stay valid), else the backend, the precision and
    the versions of the packages that export and run it (an upgrade may change the vectors, so it re-runs), and
    for a backend whose numerics depend on the CPU (bf16, int8) the CPU features that decide them
    (cpu_features.py: another machine is another fingerprint)."""
    from importlib.metadata import PackageNotFoundError, version

    if (backend or "torch", precision or "fp32") == ("torch", "fp32"):
        return {}
    runtime = {}
    for package in BACKEND_RUNTIMES.get(backend or "torch", ()):
        try:
            runtime[package] = version(package)
        except PackageNotFoundError:
            runtime[package] = None
    method = build_method(backend, precision)
    cpu = cpu_identity(backend, precision)  # bf16 hint / int8 kernels: the CPU features that decide the numerics
    return {"backend": backend, "precision": precision, "runtime": runtime, **({"build": method} if method else {}),
            **({"cpu": cpu} if cpu else {})}
