"""Quiet by default (issue 29): a hybrid run, an ONNX int8 run and `backends` with OpenVINO int8 print only
private-mteb's own lines; the libraries' bars and logs (mteb's hybrid "Indexing sub-models", transformers'
"Loading weights", NNCF's quantisation bars, bm25s' DEBUG, onnxruntime's root-logger warning) need --verbose."""

from __future__ import annotations

import importlib.util
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import MINILM, REPO, TINY_YAML

#: what the libraries print on their own (seen on main before this change)
FOREIGN = ("Indexing sub-models", "Sub-models", "Loading weights", "Statistics collection", "Smooth Quant",
           "Bias correction", "DEBUG:", "INFO:", "WARNING:", "it/s]", "pre-processing before quantization")
HAS_ORT = importlib.util.find_spec("onnxruntime") is not None and importlib.util.find_spec("onnx") is not None
HAS_OV = all(importlib.util.find_spec(m) is not None for m in ("openvino", "nncf", "onnx"))


def _cli(tmp: Path, *args: str) -> tuple[str, str]:
    """A fresh `private-mteb` process (as a user starts it): (stdout, stderr)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "PRIVATE_MTEB_EXPORT_CACHE": str(tmp / "exported"),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    env.pop("PRIVATE_MTEB_VERBOSE", None)
    proc = subprocess.run([sys.executable, "-m", "runners.cli", *args], cwd=tmp, env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout, proc.stderr


def _config(tmp: Path, models: list[dict], experiments: list[dict] | None = None) -> Path:
    path = tmp / "bench.yaml"
    path.write_text(yaml.safe_dump({"name": "quiet", "tasks": [str(TINY_YAML)], "models": models,
                                    "experiments": experiments or [], "results_dir": "results"}))
    return path


def _foreign(text: str) -> list[str]:
    return [m for m in FOREIGN if m in text]


@pytest.mark.slow  # MiniLM encodes the tiny task twice, in two fresh processes
def test_a_hybrid_run_prints_only_its_own_lines_and_verbose_shows_mteb_bars(tmp_path):
    cfg = _config(tmp_path, [{"name": MINILM, "label": "MiniLM"}, {"name": "bm25", "label": "BM25"}],
                  [{"type": "hybrid", "dense": MINILM, "fusion": "rrf", "k": [60]}])
    out, err = _cli(tmp_path, "run", "-c", str(cfg))
    assert err == "" and _foreign(out) == [], err + out
    assert "done: MiniLM +bm25 rrf60 on TinyKBRetrieval" in out
    out, err = _cli(tmp_path, "--verbose", "run", "-c", str(cfg), "--force")
    assert "Indexing sub-models" in err and "Sub-models" in err  # the test can see them: they were there


@pytest.mark.slow  # a real ONNX export + onnxruntime int8 quantisation of MiniLM
@pytest.mark.skipif(not HAS_ORT, reason="onnxruntime not installed (pip install 'private-mteb[onnx]')")
def test_an_onnx_int8_run_prints_only_its_own_lines(tmp_path):
    cfg = _config(tmp_path, [{"name": MINILM, "label": "MiniLM-int8", "backend": "onnx", "precision": "int8"},
                             {"name": "bm25", "label": "BM25"}])
    out, err = _cli(tmp_path, "run", "-c", str(cfg))
    assert err == "" and _foreign(out) == [], err + out
    assert "done: MiniLM-int8 on TinyKBRetrieval" in out and "done: BM25 on TinyKBRetrieval" in out


@pytest.mark.slow  # NNCF post-training quantisation of MiniLM, then the drift measurement
@pytest.mark.skipif(not HAS_OV, reason="openvino/nncf not installed (pip install 'private-mteb[openvino]')")
def test_backends_with_openvino_int8_prints_only_its_own_lines(tmp_path):
    cfg = _config(tmp_path, [{"name": MINILM, "label": "MiniLM"}])
    out, err = _cli(tmp_path, "backends", "-c", str(cfg), "-b", "openvino-int8", "--resamples", "200")
    assert _foreign(err) == [] and _foreign(out) == [], err + out
    assert "openvino-int8" in out
    own = ("preparing ", "run 1/1: ")  # the command's own progress lines
    assert all(line.startswith(own) for line in err.splitlines() if line.strip()), err


def test_foreign_log_records_are_dropped_and_ours_are_one_line(capsys):
    """The CLI's root handler: bm25s' DEBUG and a root-logger warning dropped; ours as `warning: ...`."""
    from runners.cli.quiet import quiet_output

    with quiet_output(verbose=False):
        logging.getLogger("bm25s").setLevel(logging.DEBUG)
        logging.getLogger("bm25s").debug("Building index from IDs objects")
        logging.warning("Please consider to run pre-processing before quantization")  # onnxruntime does this
        logging.getLogger("sentence_transformers").info("Load pretrained SentenceTransformer")
        logging.getLogger("runners.execution.backend_build").warning("exported model X: damaged; rebuilding it")
        from tqdm.auto import tqdm

        assert tqdm(range(3), desc="Indexing sub-models").disable
    err = capsys.readouterr().err
    assert err == "warning: exported model X: damaged; rebuilding it\n"
    assert not any(isinstance(h, logging.StreamHandler) and h.stream is sys.stderr
                   for h in logging.getLogger().handlers)  # no default handler installed by logging.warning
    with quiet_output(verbose=True):
        logging.getLogger("sentence_transformers").info("Load pretrained SentenceTransformer")
        from tqdm.auto import tqdm

        assert not tqdm(range(3), desc="shown", file=sys.stdout).disable
    assert "INFO:sentence_transformers: Load pretrained SentenceTransformer" in capsys.readouterr().err


@pytest.mark.skipif(importlib.util.find_spec("lancedb") is None, reason="the lancedb extra is not installed")
def test_lancedb_rust_warnings_need_verbose(tmp_path):
    """LanceDB's Rust logger writes `[time WARN  lance::...]` to stderr past Python's logging (creating a table,
    a search that selects columns): quiet_output holds it at error unless --verbose (seen in docs/candidates.md)."""
    code = ("import sys, tempfile\nfrom runners.cli.quiet import quiet_output\n"
            "with quiet_output(sys.argv[1] == 'verbose'):\n"
            "    import lancedb\n"
            "    db = lancedb.connect(tempfile.mkdtemp(dir=sys.argv[2]))\n"
            "    t = db.create_table('x', data=[{'vector': [0.1, 0.2], 'id': 1}])\n"
            "    t.search([0.1, 0.2]).select(['id']).limit(1).to_list()\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("LANCEDB_LOG", None)
    runs = {mode: subprocess.run([sys.executable, "-c", code, mode, str(tmp_path)], env=env, capture_output=True,
                                 text=True, timeout=120) for mode in ("quiet", "verbose")}
    assert runs["quiet"].returncode == 0, runs["quiet"].stderr
    assert "WARN" not in runs["quiet"].stderr and "lance::" not in runs["quiet"].stderr, runs["quiet"].stderr
    assert "lance::" in runs["verbose"].stderr  # the same calls do warn: the test can see what it silences
