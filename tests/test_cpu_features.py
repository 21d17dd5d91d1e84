"""Fingerprints name what changes vectors (issue 28): bf16 / int8 backends are tied to the CPU features that decide
their numerics, so another machine's numbers are stale here; fp32 backends are not tied to the CPU."""

from __future__ import annotations

import pytest

from conftest import MINILM

AVX512 = frozenset({"fpu", "sse2", "avx2", "avx512f", "avx512bw", "avx512_vnni", "avx512_bf16"})
AVX2_ONLY = frozenset({"fpu", "sse2", "avx2"})


class Task:  # what run_identity reads of a task
    metadata = type("M", (), {"name": "T", "dataset": {"revision": "r"}, "main_score": "ndcg_at_10",
                              "prompt": None})()
    eval_splits = ["test"]
    k_values = [1, 10]


def _machine(monkeypatch, flags: frozenset[str], openvino: tuple[str, ...]) -> None:
    import runners.execution.backends.cpu_features as cpu

    monkeypatch.setattr(cpu, "cpuinfo_flags", lambda: flags)
    monkeypatch.setattr(cpu, "openvino_capabilities", lambda: openvino)


def _identities(backend: str, precision: str):
    from runners.config.model_spec import ModelSpec
    from runners.execution.candidates.candidates import candidate_from_spec
    from runners.execution.candidates.run_identity import run_identity

    cand = candidate_from_spec(ModelSpec(name=MINILM, label="m", backend=backend, precision=precision))
    return run_identity(cand, Task(), None), cand.cache_variant


@pytest.mark.parametrize("backend, precision", [("onnx", "int8"), ("openvino", "int8"), ("openvino", "bf16")])
def test_cpu_dependent_backends_get_another_fingerprint_on_another_cpu(monkeypatch, backend, precision):
    from runners.analysis.gate.history import identity_changes
    from runners.results.fingerprints import changed_parts

    _machine(monkeypatch, AVX512, ("BF16", "FP32", "INT8"))
    here, here_cache = _identities(backend, precision)
    assert "avx512_vnni" in here["candidate"]["cpu"]["flags"]
    _machine(monkeypatch, AVX2_ONLY, ("FP32", "INT8"))
    there, there_cache = _identities(backend, precision)
    assert here["fingerprint"] != there["fingerprint"]  # the stored result of the other machine re-runs
    assert changed_parts(here, there) == ["candidate.cpu"]
    assert here_cache != there_cache  # and its cached vectors are not reused
    parts, details = identity_changes(here, there)
    assert parts == ["encode settings"] and details[0].startswith("encode settings: cpu ")
    _machine(monkeypatch, frozenset(AVX512 | {"sse4_2", "aes"}), ("BF16", "FP32", "INT8"))
    assert _identities(backend, precision)[0]["fingerprint"] == here["fingerprint"]  # only deciding flags count


@pytest.mark.parametrize("backend, precision", [("torch", "fp32"), ("onnx", "fp32"), ("openvino", "fp32")])
def test_fp32_backends_do_not_depend_on_the_cpu(monkeypatch, backend, precision):
    _machine(monkeypatch, AVX512, ("BF16", "FP32", "INT8"))
    here = _identities(backend, precision)
    _machine(monkeypatch, AVX2_ONLY, ("FP32",))
    assert _identities(backend, precision) == here
    assert "cpu" not in here[0]["candidate"]


def test_features_are_read_from_this_machine():
    """The real readers: /proc/cpuinfo's flags and OpenVINO's own report of its CPU plugin."""
    import importlib.util
    from pathlib import Path

    from runners.execution.backends import cpu_features

    if Path("/proc/cpuinfo").exists():
        assert cpu_features.cpuinfo_flags()  # a Linux machine always lists some flags
    if importlib.util.find_spec("openvino") is not None:
        caps = cpu_features.openvino_capabilities()
        assert caps is not None and "FP32" in caps
        assert cpu_features.cpu_identity("openvino", "bf16")["openvino"] == list(caps)
