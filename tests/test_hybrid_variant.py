"""A hybrid (or a chunking / ANN experiment) on a model variant runs the variant, not the plain model of its name.

Experiments on the same model share its dense candidate; they were keyed by the model's bare name, so
`dense: MiniLM@msl8` listed after an experiment on the plain MiniLM ran the plain model under the variant's
results name. Checked on the tiny task with the offline MiniLM: the variant's hybrid ranks as the same hybrid in
a config of its own, differs from the plain model's, and its identity records the variant's settings.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from conftest import MINILM, TINY_YAML
from runners.config.benchmark import BenchmarkConfig
from runners.execution.candidates import experiment_candidates as ex
from runners.results.store import find_run, load_rankings, read_identity

PLAIN = {"name": MINILM, "label": "MiniLM"}
VARIANT = {"name": MINILM, "label": "MiniLM@msl8", "max_seq_length": 8}


def _hybrid(dense: str) -> dict:
    return {"type": "hybrid", "dense": dense, "fusion": "weighted", "alpha": [0.5]}


def _run(tmp: Path, models: list[dict], experiments: list[dict]) -> BenchmarkConfig:
    from runners.execution.run import run_benchmark

    tmp.mkdir()
    path = tmp / "bench.yaml"
    path.write_text(yaml.safe_dump({"name": "v", "tasks": [str(TINY_YAML)], "results_dir": str(tmp / "results"),
                                    "cache_dir": str(tmp / "cache"), "models": [*models, {"name": "bm25"}],
                                    "experiments": experiments}))
    cfg = BenchmarkConfig.from_file(path)
    ex.clear_shared()
    records = run_benchmark(cfg, show_progress=False)
    assert all(r.status == "ran" for r in records), [(r.label, r.status, r.reason) for r in records]
    return cfg


def _hybrid_of(cfg: BenchmarkConfig, variant: bool) -> tuple[dict, dict]:
    """(rankings, identity) of the hybrid on the plain model or on the variant."""
    name = "private-mteb/all-MiniLM-L6-v2" + ("@msl8" if variant else "") + "+bm25-w0.5"
    folder = find_run(cfg.results_path, name, "TinyKBRetrieval")
    assert folder is not None, name
    return load_rankings(cfg.results_path, name, "TinyKBRetrieval"), read_identity(folder)


def test_a_hybrid_on_a_variant_runs_the_variant_after_a_hybrid_on_the_plain_model(tmp_path: Path) -> None:
    both = _run(tmp_path / "both", [PLAIN, VARIANT], [_hybrid("MiniLM"), _hybrid("MiniLM@msl8")])
    alone = _run(tmp_path / "alone", [VARIANT], [_hybrid("MiniLM@msl8")])
    plain_ranks, plain_id = _hybrid_of(both, variant=False)
    ranks, identity = _hybrid_of(both, variant=True)
    alone_ranks, alone_id = _hybrid_of(alone, variant=True)
    assert ranks != plain_ranks  # 8 tokens of each text: other dense scores, other fused scores
    assert ranks == alone_ranks
    assert identity["candidate"]["base"]["max_seq_length"] == 8
    assert plain_id["candidate"]["base"]["max_seq_length"] is None
    assert identity["fingerprint"] == alone_id["fingerprint"]
    ex.clear_shared()


def test_chunking_and_ann_on_a_variant_are_built_on_the_variant(tmp_path: Path) -> None:
    """The same rule for every experiment on a dense model (nothing is run: the values say what would be)."""
    from runners.execution.run import candidates_for

    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump({
        "name": "v", "tasks": [str(TINY_YAML)], "results_dir": str(tmp_path / "results"), "models": [PLAIN, VARIANT],
        "experiments": [{"type": "ann", "model": "MiniLM", "index": "flat"},
                        {"type": "ann", "model": "MiniLM@msl8", "index": "flat"},
                        {"type": "chunk", "model": "MiniLM", "sizes": [64]},
                        {"type": "chunk", "model": "MiniLM@msl8", "sizes": [64]}]}))
    built = {c.name: c for c in candidates_for(BenchmarkConfig.from_file(path)) if c.kind in ("ann", "chunk")}
    assert len(built) == 4, sorted(built)
    for name, cand in built.items():
        base = cand.value.part("base")
        assert (base.settings["max_seq_length"] == 8) == ("@msl8" in name), (name, base)
        assert cand.info["base"] == base.name and cand.info["base_label"] == base.label
