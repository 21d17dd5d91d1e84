"""The CPU features that decide an encode backend's numerics, recorded in its run fingerprint.

Some exported backends compute different vectors on different CPUs, from the same files:

* OpenVINO bf16 (and int8, whose non-quantised operations run with the same bf16 hint, backend_runtime.BF16_HINT)
  computes in bf16 only where the CPU plugin reports BF16 among its `OPTIMIZATION_CAPABILITIES` (AVX-512 BF16 or
  AMX), else in f32; its int8 products take VNNI / AMX kernels where the CPU has them, AVX2 ones (whose
  u8*s8 pair sums saturate at 16 bits) elsewhere;
* ONNX Runtime int8 (`MatMulInteger`, dynamic quantisation) dispatches its kernels on the same instruction sets.

So a result of such a backend is tied to these features: another machine, or the same model on a CPU without
VNNI, gives another fingerprint, and the stale-score rule (candidates/run_identity.py) re-runs it rather than counting its numbers
as this machine's. fp32 backends (torch, ONNX fp32, OpenVINO fp32) compute in f32 everywhere and are not tied.
"""

from __future__ import annotations

import platform
from functools import lru_cache
from pathlib import Path
from typing import Any

#: (backend, precision) whose vectors depend on the CPU's instruction sets
CPU_DEPENDENT = {("onnx", "int8"), ("openvino", "bf16"), ("openvino", "int8")}
#: /proc/cpuinfo flags that select the bf16 / int8 kernels of ONNX Runtime (MLAS) and OpenVINO (oneDNN)
DECIDING_FLAGS = ("avx2", "avx512f", "avx512bw", "avx512_vnni", "avx_vnni", "avx512_bf16", "avx512_fp16",
                  "amx_tile", "amx_int8", "amx_bf16")
CPUINFO = Path("/proc/cpuinfo")


@lru_cache(maxsize=1)
def cpuinfo_flags() -> frozenset[str]:
    """The kernel's feature flags of this machine's CPU (empty where there is no /proc/cpuinfo)."""
    try:
        for line in CPUINFO.read_text(errors="replace").splitlines():
            if line.startswith(("flags", "Features")):  # x86 / arm
                return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


@lru_cache(maxsize=1)
def openvino_capabilities() -> tuple[str, ...] | None:
    """What OpenVINO's CPU plugin says it computes in (e.g. BF16, INT8, FP16); None where openvino cannot load."""
    try:
        from .telemetry_off import block_vendor_telemetry

        block_vendor_telemetry()
        import openvino as ov

        return tuple(sorted(str(c) for c in ov.Core().get_property("CPU", "OPTIMIZATION_CAPABILITIES")))
    except Exception:  # noqa: BLE001 - not installed / no CPU plugin: backend_build.require says so when it runs
        return None


def cpu_identities(pairs: list[tuple[str, str]]) -> dict[tuple[str, str], dict[str, Any] | None]:
    """`cpu_identity` of each (backend, precision), at once."""
    return {pair: cpu_identity(*pair) for pair in pairs}


def cpu_identity(backend: str | None, precision: str | None) -> dict[str, Any] | None:
    """The features of this CPU that decide (backend, precision)'s numerics; None where they decide nothing."""
    if (backend or "torch", precision or "fp32") not in CPU_DEPENDENT:
        return None
    flags = cpuinfo_flags()
    out: dict[str, Any] = {"arch": platform.machine(), "flags": [f for f in DECIDING_FLAGS if f in flags]}
    if backend == "openvino":
        out["openvino"] = list(openvino_capabilities() or ())
    return out
