"""Candidates as values (issue 37): every kind is built from the config into one immutable value whose
fingerprint is the same in a fresh process and changes with each of its settings.

Fingerprints are computed by the one identity function (runners/execution/candidates/run_identity.py) on a copy
of the tiny task, with the machine facts pinned (tests/identity_cases.py) so a backend variant's fingerprint
does not depend on the machine running the test.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

import identity_cases as ic
from runners.config.benchmark import BenchmarkConfig

LOCAL = str(ic.FIXTURE / "local_model")
CROSS = str(ic.FIXTURE / "cross_encoder")
RUN = str(ic.FIXTURE / "run.trec")
URL = "http://127.0.0.1:7997/v1"
M = {"name": ic.MINILM, "label": "m"}

#: kind -> (its entry, the base models it needs, one change per setting it has); "@changed:<file>" stands for a
#: copy of that fixture file or folder whose content differs by one byte
MODELS: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {
    "mteb": (M, [{"max_seq_length": 64}, {"model_kwargs": {"truncate_dim": 64}}, {"prompts": {"query": "q: "}},
                 {"prompts": {"query": "query: "}}, {"backend": "onnx", "precision": "fp32"},
                 {"backend": "onnx", "precision": "int8"}, {"backend": "openvino", "precision": "fp32"},
                 {"backend": "openvino", "precision": "int8"}, {"backend": "openvino", "precision": "bf16"},
                 {"revision": "r2"}, {"kind": "sentence-transformers"}, {"trust_remote_code": True}]),
    "sentence-transformers": ({"name": "acme/local", "path": LOCAL},
                              [{"path": "@changed:local_model"}, {"revision": "r1"}, {"max_seq_length": 32},
                               {"backend": "onnx", "precision": "fp32"}]),
    "factory": ({"name": "acme/f", "factory": "tests.toy_encoders:make"},
                [{"factory": "tests.toy_encoders:other"}, {"factory_kwargs": {"dim": 4}}, {"max_seq_length": 32},
                 {"path": LOCAL}]),
    "run": ({"name": "acme/run", "kind": "run", "path": RUN}, [{"path": "@changed:run.trec"}, {"revision": "r2"}]),
    "retriever": ({"name": "acme/words", "kind": "retriever", "factory": "tests.toy_retrievers:make_words"},
                  [{"factory": "tests.toy_retrievers:make_exact"}, {"factory_kwargs": {"weight": 0.5}},
                   {"factory_kwargs": {"model": ic.MINILM}}, {"factory_kwargs": {"model": "m@msl"}},
                   {"path": LOCAL}]),
    "endpoint": ({"name": "acme/served", "kind": "endpoint", "endpoint": {"url": URL}},
                 [{"endpoint": {"url": "http://127.0.0.1:8000/v1"}}, {"endpoint": {"url": URL, "model": "m2"}},
                  {"endpoint": {"url": URL, "dimensions": 64}}, {"endpoint": {"url": URL, "similarity": "dot"}},
                  {"endpoint": {"url": URL, "request": {"query": {"input_type": "query"}}}},
                  {"prompts": {"query": "q: "}}]),
}
#: the `models:` every experiment variant is built with: `m`, the same with another max_seq_length, BM25
BASES = [M, {"name": ic.MINILM, "label": "m@msl", "max_seq_length": 64}, {"name": "bm25"}]
NOT_HNSW = {"M": None, "ef_search": None}  # None: the key removed from the entry
EXPERIMENTS: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {
    "hybrid": ({"type": "hybrid", "dense": "m", "fusion": "rrf"},
               [{"k": [20]}, {"fusion": "weighted", "alpha": [0.5]}, {"fusion": "weighted", "alpha": [0.7]},
                {"depth": 50}]),
    "chunk": ({"type": "chunk", "model": "m", "sizes": [64]},
              [{"sizes": [128]}, {"overlap": 8}, {"unit": "chars"}, {"title": "first"}]),
    "ann": ({"type": "ann", "model": "m", "index": "hnsw", "M": 16, "ef_search": [16]},
            [{"M": 8}, {"ef_construction": 80}, {"ef_search": [32]}, {"index": "ivf", **NOT_HNSW},
             {"index": "ivf", "nlist": 8, **NOT_HNSW}, {"index": "ivf", "nprobe": [2], **NOT_HNSW},
             {"index": "flat", **NOT_HNSW}, {"model": "m@msl"}]),
    "rerank": ({"type": "rerank", "first": "bm25", "reranker": {"name": "acme/ce", "path": CROSS}, "depth": [5]},
               [{"depth": [10]}, {"first": "m"}, {"reranker": {"name": "acme/ce", "path": CROSS, "max_length": 64}},
                {"reranker": {"name": "acme/ce", "path": "@changed:cross_encoder"}},
                {"reranker": {"name": "acme/ce2", "path": CROSS}},
                {"reranker": {"name": ic.MINILM, "kind": "bi-encoder"}}]),
}


def _changed(value: Any, tmp: Path) -> Any:
    """`@changed:<fixture>` -> a copy of the fixture file/folder with one file's content changed."""
    if isinstance(value, dict):
        return {k: _changed(v, tmp) for k, v in value.items()}
    if isinstance(value, str) and value.startswith("@changed:"):
        src, dest = ic.FIXTURE / value.split(":", 1)[1], tmp / ("changed-" + value.split(":", 1)[1])
        if not dest.exists():
            if src.is_dir():
                shutil.copytree(src, dest)
                target = sorted(dest.iterdir())[-1]
            else:
                shutil.copy(src, dest)
                target = dest
            target.write_bytes(target.read_bytes() + b"\n")
        return str(dest)
    return value


def _entry(entry: dict[str, Any], change: dict[str, Any], tmp: Path) -> dict[str, Any]:
    """The entry with one change (a None value removes the key), labelled `target`."""
    merged = {**entry, **_changed(change, tmp), "label": "target"}
    return {k: v for k, v in merged.items() if v is not None}


def _fingerprints(tmp: Path, models: list[dict[str, Any]], experiments: list[dict[str, Any]]) -> dict[str, str]:
    """label -> fingerprint on the tiny task, for every candidate of a config of these entries."""
    from runners.execution.candidates.run_identity import run_identity
    from runners.execution.run import candidates_for
    from runners.execution.tasks import load_task

    path = tmp / "bench.yaml"
    path.write_text(yaml.safe_dump({"name": "values", "tasks": [str(ic.TINY)], "results_dir": str(tmp / "results"),
                                    "cache_dir": str(tmp / "cache"), "models": models, "experiments": experiments}))
    cfg = BenchmarkConfig.from_file(path)
    task = load_task(cfg.tasks[0], cfg)
    return {c.label: run_identity(c, task, cfg.keep_top_k, cfg.cache_path)["fingerprint"] for c in candidates_for(cfg)}


def test_each_setting_of_each_kind_changes_its_fingerprint(tmp_path: Path, monkeypatch) -> None:
    ic.pinned_machine(monkeypatch)
    for kind, (entry, changes) in MODELS.items():
        prints = []
        for change in [{}, *changes]:
            varied = _entry(entry, change, tmp_path)
            prints.append(_fingerprints(tmp_path, [M, varied] if kind == "retriever" else [varied], [])["target"])
        same = [changes[i - 1] for i in range(1, len(prints)) if prints[i] in prints[:i]]
        assert not same, f"{kind}: these settings leave the fingerprint as it was: {same}"
    for kind, (entry, changes) in EXPERIMENTS.items():
        prints = []
        for change in [{}, *changes]:
            got = _fingerprints(tmp_path, BASES, [_entry(entry, change, tmp_path)])
            targets = [fp for label, fp in got.items() if label.startswith("target")]
            assert len(targets) == 1, (kind, change, sorted(got))
            prints.append(targets[0])
        same = [changes[i - 1] for i in range(1, len(prints)) if prints[i] in prints[:i]]
        assert not same, f"{kind}: these settings leave the fingerprint as it was: {same}"


def test_a_value_is_immutable_and_holds_its_parts(tmp_path: Path, monkeypatch) -> None:
    from runners.execution.run import candidates_for

    ic.pinned_machine(monkeypatch)
    path = ic.config(tmp_path)
    try:
        cands = {c.label: c for c in candidates_for(BenchmarkConfig.from_file(path))}
    finally:
        path.unlink()
    rerank = cands["MiniLM +bm25 rrf60 +rerank MiniLM-bi d5"].value
    with pytest.raises(dataclasses.FrozenInstanceError):
        rerank.name = "other"  # type: ignore[misc]
    hybrid = rerank.part("base")
    assert hybrid == cands["MiniLM +bm25 rrf60"].value  # a rerank holds its first stage's value, equal to it
    assert hybrid.part("base") == cands["MiniLM"].value and hybrid.part("sparse") == cands["BM25"].value
    assert cands["exact"].value.part("embedder") == cands["MiniLM"].value
    assert json.loads(rerank.canonical) == rerank.record()  # the canonical form is the record, sorted
    assert str(hybrid).startswith("hybrid private-mteb/all-MiniLM-L6-v2+bm25-rrf60@") and "<sparse: bm25" in str(hybrid)


_CHILD = """
import json, sys, tempfile
from pathlib import Path
sys.path[:0] = [{tests!r}, {repo!r}]
import pytest
import identity_cases as ic
from runners.config.benchmark import BenchmarkConfig
from runners.execution.candidates.run_identity import run_identity
from runners.execution.run import candidates_for
from runners.execution.tasks import load_task

ic.pinned_machine(pytest.MonkeyPatch())
with tempfile.TemporaryDirectory() as tmp:
    path = ic.config(Path(tmp))
    try:
        cfg = BenchmarkConfig.from_file(path)
        task = load_task(cfg.tasks[0], cfg)
        print(json.dumps({{c.label: [c.value.canonical, run_identity(c, task, None, cfg.cache_path)["fingerprint"]]
                          for c in candidates_for(cfg)}}))
    finally:
        path.unlink()
"""


@pytest.mark.slow
def test_every_fingerprint_is_the_same_after_a_process_restart(tmp_path: Path, monkeypatch) -> None:
    """Two fresh processes (other hash seeds: no set or dict order leaks in) give this process's fingerprints."""
    from runners.execution.candidates.run_identity import run_identity
    from runners.execution.run import candidates_for
    from runners.execution.tasks import load_task

    ic.pinned_machine(monkeypatch)
    path = ic.config(tmp_path)
    try:
        cfg = BenchmarkConfig.from_file(path)
        task = load_task(cfg.tasks[0], cfg)
        here = {c.label: [c.value.canonical, run_identity(c, task, None, cfg.cache_path)["fingerprint"]]
                for c in candidates_for(cfg)}
    finally:
        path.unlink()
    code = _CHILD.format(tests=str(ic.HERE), repo=str(ic.HERE.parent))
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600,
                             cwd=ic.HERE.parent)
        assert out.returncode == 0, out.stderr[-2000:]
        assert json.loads(out.stdout.strip().splitlines()[-1]) == here


def test_every_key_of_a_candidates_files_reads_the_identitys_weights_figure(tmp_path: Path, monkeypatch) -> None:
    """The embedding cache folder, the dedupe of loaded dense models, a reranker's score cache and a run file's memo
    are keyed by the identity's weights part (run_identity.value_weights); a file rewritten in the same process
    changes the identity and every key together."""
    from types import SimpleNamespace

    from runners.execution.cache.embedding_cache import wrap_cache
    from runners.execution.candidates.run_identity import run_identity, value_weights
    from runners.execution.run import candidates_for
    from runners.execution.tasks import load_task

    ic.pinned_machine(monkeypatch)
    local, run = tmp_path / "local_model", tmp_path / "run.trec"
    shutil.copytree(LOCAL, local)
    shutil.copy(RUN, run)
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump({"name": "keys", "tasks": [str(ic.TINY)], "results_dir": str(tmp_path / "r"),
                                    "cache_dir": str(tmp_path / "cache"),
                                    "models": [{"name": "acme/local", "path": str(local), "label": "local"},
                                               {"name": "acme/run", "kind": "run", "path": str(run), "label": "run"}]}))
    cfg = BenchmarkConfig.from_file(path)
    task = load_task(cfg.tasks[0], cfg)

    def figures() -> dict[str, tuple[str | None, str | None]]:
        out = {}
        for cand in candidates_for(cfg):
            weights = run_identity(cand, task, cfg.keep_top_k, cfg.cache_path)["candidate"]["weights"]
            out[cand.label] = (weights, value_weights(cand, cfg.cache_path))
        return out

    before = figures()
    assert all(w is not None and w == key for w, key in before.values()), before
    local_cand = next(c for c in candidates_for(cfg) if c.label == "local")
    wrapped = wrap_cache(SimpleNamespace(encode=None), local_cand, cfg.cache_path,
                         weights=value_weights(local_cand, cfg.cache_path))
    assert wrapped.store.folder.name == f"weights-{before['local'][0][:16]}"
    with open(local / "config.json", "a") as f:  # retrained, in the same process
        f.write(" ")
    after = figures()
    assert after["local"][0] != before["local"][0] and after["local"][0] == after["local"][1]
    assert after["run"] == before["run"]
