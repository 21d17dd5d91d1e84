"""`tasks validate` measures documents in the candidates' own tokens when it knows them (issue 35): words x 1.3 is a
lower bound made for English, and Romanian under MiniLM's tokenizer is about 2.5 tokens per word, so the estimate
flags a few documents where the model cuts many. Without candidates it says its count is a word estimate and for
which language."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from conftest import MINILM
from runners.cli import app
from tests.romanian_fixture import romanian_collection

WORDS = [60, 90, 120, 150, 200, 260, 320, 380, 420, 470]  # words per document (title included)


def _write(root: Path) -> tuple[Path, dict[str, str]]:
    """A Romanian BEIR collection of documents of WORDS words (fixture paragraphs joined) + its task YAML."""
    ro = romanian_collection(seed=3)
    pool = " ".join(f"{d['title']} {d['text']}" for d in ro.corpus.values()).split()
    docs = {f"d{i}": " ".join(pool[i * 500:i * 500 + n]) for i, n in enumerate(WORDS)}
    data = root / "ro_long"
    (data / "qrels").mkdir(parents=True)
    (data / "corpus.jsonl").write_text("".join(json.dumps({"_id": d, "title": "", "text": t}, ensure_ascii=False)
                                               + "\n" for d, t in docs.items()), encoding="utf-8")
    (data / "queries.jsonl").write_text(json.dumps({"_id": "q0", "text": "Cum aprob factura?"}, ensure_ascii=False)
                                        + "\n", encoding="utf-8")
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq0\td0\t2\n")
    task = root / "ro_long.yaml"
    task.write_text("name: RoLong\ndescription: long Romanian documents\nsource:\n  format: beir\n  path: ro_long\n"
                    "splits: [test]\nlanguages: [ron-Latn]\n")
    return task, docs


def _ids(summary: dict, kind: str) -> int:
    return summary["warnings"].get(kind, {}).get("count", 0)


def test_validate_counts_in_the_candidates_tokens(tmp_path: Path) -> None:
    from runners.execution.encoding.offline_packages import offline_model_path

    folder = offline_model_path(MINILM)
    if folder is None:
        pytest.skip("the offline MiniLM package is not installed")
    task, docs = _write(tmp_path)
    runner = CliRunner()

    # no candidates: the word estimate, which says what it is and for which language
    plain = runner.invoke(app, ["tasks", "validate", str(task)], env={"COLUMNS": "300"})
    assert plain.exit_code == 0, plain.output
    assert "word estimate" in plain.output and "ron-Latn text splits into more tokens per word" in plain.output
    js = json.loads(runner.invoke(app, ["tasks", "validate", str(task), "--format", "json"]).stdout)["tasks"][0]
    estimated = [d for d, t in docs.items() if max(len(t.split()) * 1.3, len(t) / 4) > 512]
    assert _ids(js["summary"], "long_document") == len(estimated) and js["document_lengths"].startswith("word")

    # MiniLM named: its own tokenizer (counted here with transformers, independently) and its own limit (256)
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    tokens = {d: len(tok(t, add_special_tokens=True, verbose=False)["input_ids"]) for d, t in docs.items()}
    cut = sorted(d for d, n in tokens.items() if n > 256)
    over_512 = {d for d, n in tokens.items() if n > 512}
    assert set(estimated) < over_512  # at its own 512, the estimate already misses documents ...
    assert len(cut) > len(estimated)  # ... and MiniLM cuts at 256, its own limit
    bench = tmp_path / "bench.yaml"
    bench.write_text(yaml.safe_dump({"name": "b", "tasks": [str(task)], "results_dir": str(tmp_path / "r"),
                                     "models": [{"name": MINILM, "label": "MiniLM"}]}))
    r = runner.invoke(app, ["tasks", "validate", "-c", str(bench), "--format", "json"])
    assert r.exit_code == 0, r.output
    exact = json.loads(r.stdout)["tasks"][0]
    assert exact["document_lengths"] == "tokenizers of MiniLM"
    assert _ids(exact["summary"], "long_document") == 0  # replaced by the exact count
    assert _ids(exact["summary"], "truncated_document") == len(cut)
    text = runner.invoke(app, ["tasks", "validate", "-c", str(bench)], env={"COLUMNS": "300"}).output
    longest = max(tokens, key=tokens.get)
    assert f"warning truncated_document x{len(cut)}" in text and "ron-Latn text splits" not in text
    from custom_tasks.sources import load_collection
    from runners.config.benchmark import BenchmarkConfig
    from runners.labels.lint.truncation import truncated_document_warnings

    c = load_collection({"format": "beir", "path": str(tmp_path / "ro_long")}, tmp_path, "RoLong")
    found, counted = truncated_document_warnings(c, BenchmarkConfig.from_file(bench))
    assert counted == ["MiniLM"] and sorted(w.ids[0] for w in found) == cut
    assert any(f"'{longest}' is {tokens[longest]} tokens for MiniLM (limit 256)" in w.message for w in found)
