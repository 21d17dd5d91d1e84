"""Issue 36 (daily loop): `cp -r results baseline` committed 27 MB (every ranking, the embedding cache) where the gate
reads per-query scores. `private-mteb baseline save DIR` keeps what `check` reads, and `check --baseline DIR` gives
the same verdict and the same figures as against the full results folder: unchanged, a grown corpus, a decay (exit 1).
bm25 and a word-count retriever on the 12-document tiny task: seconds."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import write_benchmark
from runners.analysis.gate import baseline_copy
from runners.statistics.analysis_errors import AnalysisError
from runners.cli import app
from runners.results.store import read_json

runner = CliRunner()
WORDS = {"name": "toy/words", "label": "Words", "kind": "retriever", "factory": "tests.toy_retrievers:make_words"}


def _run(cfg: Path) -> None:
    from runners.execution.candidates.experiment_candidates import clear_shared

    clear_shared()
    result = runner.invoke(app, ["run", "--config", str(cfg)])
    assert result.exit_code == 0, result.output


def _check(base: Path, cand: Path, tasks_dir: Path, *extra: str):
    return runner.invoke(app, ["check", "--baseline", str(base), "--candidate", str(cand), "--resamples", "2000",
                               *extra], terminal_width=300, env={"PRIVATE_MTEB_TASKS_DIR": str(tasks_dir)})


def _same_check(full: Path, small: Path, cand: Path, tasks_dir: Path) -> tuple[int, str]:
    """check against the full folder and the small one: the same exit code, lines and JSON figures."""
    a, b = _check(full, cand, tasks_dir), _check(small, cand, tasks_dir)
    assert a.exit_code == b.exit_code and a.exit_code in (0, 1), (a.output, b.output)
    assert a.output == b.output
    ja = json.loads(_check(full, cand, tasks_dir, "--format", "json").stdout)
    jb = json.loads(_check(small, cand, tasks_dir, "--format", "json").stdout)
    assert ja == jb
    return a.exit_code, a.output


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_small_baseline_gives_the_same_verdict_and_figures(tmp_path, tiny_copy):
    cfg = write_benchmark(tmp_path, [str(tiny_copy)], models=[{"name": "bm25", "label": "BM25"}, WORDS])
    _run(cfg)
    results = tmp_path / "results"
    (results / "private-mteb" / "embeddings").mkdir(exist_ok=True)  # what a full copy drags along
    (results / "private-mteb" / "embeddings" / "cache.bin").write_bytes(os.urandom(50_000))
    full = tmp_path / "base-full"
    shutil.copytree(results, full)
    out = runner.invoke(app, ["baseline", "save", str(tmp_path / "base"), "-c", str(cfg)])
    assert out.exit_code == 0, out.output
    assert "baseline saved to" in out.output and "2 run(s)" in out.output
    small = tmp_path / "base"
    files = _files(small)
    assert not any("embeddings" in f for f in files) and len(files) < len(_files(full))
    assert sum(1 for f in files if f.endswith("per_query_test.json.gz")) == 2  # packed (format 2)
    assert sum(1 for f in files if f.endswith("identity.json")) == 2
    for f in files:
        if f.endswith("rankings_test.json.gz"):
            cut, whole = read_json(small / f), read_json(full / f)
            assert cut["top_k"] == 10 and cut["corpus_ids"] == whole["corpus_ids"]
            assert all(len(r) <= 10 for r in cut["subsets"]["default"].values())
            assert any(len(r) > 10 for r in whole["subsets"]["default"].values())  # the cut did cut
    # unchanged run: both PASS, judged@10 printed from the cut rankings as from the full ones
    code, text = _same_check(full, small, results, tmp_path)
    assert code == 0 and "judged@10: baseline BM25" in text
    # documents added: the corpus change is told from the kept corpus ids, the same way
    data = tiny_copy.parent / "kb_tiny"
    queries = [json.loads(line) for line in (data / "queries.jsonl").read_text().splitlines()]
    with (data / "corpus.jsonl").open("a") as f:  # pages that answer each question better than its labelled one
        f.writelines(json.dumps({"_id": f"faq-{q['_id']}", "title": q["text"], "text": q["text"] * 3}) + "\n"
                     for q in queries)
    _run(cfg)
    code, text = _same_check(full, small, results, tmp_path)
    assert code == 1 and "FAIL" in text and "corpus: +10 documents" in " ".join(text.split())


def test_a_baseline_of_1190_questions_is_under_a_megabyte_and_checks_the_same(tmp_path):
    """Issue 46: `baseline save` wrote 4.4 MB for 1,190 questions: per-query files of 42 metrics as indented JSON,
    1.1 MB per candidate. Packed in columns and gzipped (format 2), every number is kept and read back as written:
    `check` against it gives the same verdict and figures as against the full results folder."""
    from chinese_fixture import write_chinese_collection
    from runners.results.per_query_pack import pack, unpack
    from runners.results.store import read_per_query

    write_chinese_collection(tmp_path / "zh", n_queries=1190)
    task = tmp_path / "zh.yaml"
    task.write_text(json.dumps({"name": "ZhBaseline", "description": "1,190 generated Chinese questions",
                                "source": {"format": "beir", "path": "zh"}, "splits": ["test"],
                                "license": "cc0-1.0", "labels": "human", "languages": ["zho-Hans"]}))
    cfg = write_benchmark(tmp_path, [str(task)], models=[{"name": "bm25", "label": "BM25"}, WORDS])
    _run(cfg)
    results = tmp_path / "results"
    out = runner.invoke(app, ["baseline", "save", str(tmp_path / "base"), "-c", str(cfg), "--format", "json"])
    assert out.exit_code == 0, out.output
    saved = json.loads(out.output)
    assert len(saved["runs"]) == 2 and saved["bytes"] < 1_000_000
    assert saved["bytes"] / 2 < 250_000  # per candidate: four candidates still under a megabyte
    assert read_json(tmp_path / "base" / baseline_copy.MARKER)["format"] == 2
    for packed in (tmp_path / "base").rglob("per_query_test.json.gz"):
        original = results / packed.relative_to(tmp_path / "base").with_suffix("")
        whole = read_json(original)
        assert read_per_query(packed) == whole and list(read_per_query(packed)["subsets"]["default"]) == list(
            whole["subsets"]["default"])  # the same numbers, keys and order
        assert unpack(pack(whole)) == whole and len(whole["subsets"]["default"]["ndcg_at_10"]) == 1190
    full = tmp_path / "base-full"
    shutil.copytree(results, full)
    code, text = _same_check(full, tmp_path / "base", results, tmp_path)
    assert code == 0 and "PASS" in text and "1190" in text


def test_save_replaces_its_own_baseline_atomically_and_refuses_other_folders(tmp_path, monkeypatch):
    from fake_results import scores, write_model

    results = tmp_path / "results"
    write_model(results, "acme/one", "T", scores(0.6, 1), "One")
    dest = tmp_path / "baseline"
    first = baseline_copy.save_baseline(results, dest)
    assert first.runs == [("acme/one", "T")] and first.size < 10_000
    umask = os.umask(0)
    os.umask(umask)
    assert dest.stat().st_mode & 0o777 == 0o777 & ~umask  # a folder to share, not mkdtemp's 0700
    write_model(results, "acme/two", "T", scores(0.5, 2), "Two")

    def broken(*args, **kwargs):
        raise OSError("disk gone mid-write")

    monkeypatch.setattr(baseline_copy, "_cut_rankings", broken)
    monkeypatch.setattr(baseline_copy, "_copy", broken)
    with pytest.raises(OSError):
        baseline_copy.save_baseline(results, dest)
    assert read_json(dest / baseline_copy.MARKER)["runs"] == [["acme/one", "T"]]  # the previous one, whole
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary folder left
    monkeypatch.undo()
    assert baseline_copy.save_baseline(results, dest).runs == [("acme/one", "T"), ("acme/two", "T")]
    other = tmp_path / "full-copy"
    shutil.copytree(results, other)
    with pytest.raises(AnalysisError, match="was not written by `private-mteb baseline save`"):
        baseline_copy.save_baseline(results, other)
    out = runner.invoke(app, ["baseline", "save", str(other), "--results", str(results)])
    assert out.exit_code == 2 and out.output.count("\n") == 1, out.output
    out = runner.invoke(app, ["baseline", "save", str(tmp_path / "b2"), "--results", str(tmp_path / "none")])
    assert out.exit_code == 2 and "nothing to save" in out.output
