"""Issue 28 "corpus change in the gate": documents added, the same questions and labels -> `check` compares,
says the corpus change once ("corpus: +3 documents, −0 (12 → 15)"), and exits 1 only on a significant drop
beyond --max-drop; changed labels still exit 2, named once however many models share the change.
bm25 and a word-count retriever on the 12-document tiny task: seconds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from conftest import TINY_YAML, write_benchmark
from runners.cli import app

runner = CliRunner()
WORDS = {"name": "toy/words", "label": "Words", "kind": "retriever", "factory": "tests.toy_retrievers:make_words"}


def _project(tmp_path: Path, tiny_copy: Path) -> Path:
    return write_benchmark(tmp_path, [str(tiny_copy)], models=[{"name": "bm25", "label": "BM25"}, WORDS])


def _run(cfg: Path) -> None:
    from runners.execution.candidates.experiment_candidates import clear_shared

    clear_shared()
    result = runner.invoke(app, ["run", "--config", str(cfg)])
    assert result.exit_code == 0, result.output


def _add_docs(data: Path, docs: list[dict]) -> None:
    with (data / "corpus.jsonl").open("a") as f:
        f.writelines(json.dumps(d) + "\n" for d in docs)


def _check(base: Path, cand: Path, *extra: str):
    return runner.invoke(app, ["check", "--baseline", str(base), "--candidate", str(cand), "--resamples", "2000",
                               *extra], terminal_width=300)


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_added_documents_are_compared_and_said_once(tmp_path, tiny_copy):
    cfg = _project(tmp_path, tiny_copy)
    _run(cfg)
    base = tmp_path / "base-results"
    shutil.copytree(tmp_path / "results", base)
    data = tiny_copy.parent / "kb_tiny"
    _add_docs(data, [{"_id": f"memo-{i}", "title": "Canteen menu", "text": f"Soup of the day number {i}."}
                     for i in range(3)])
    _run(cfg)
    grew = _check(base, tmp_path / "results")
    assert grew.exit_code == 0, grew.output  # unrelated documents: no drop
    out = _flat(grew.output)
    assert out.count("corpus: +3 documents, −0 (12 → 15)") == 1, grew.output
    assert "the same 10 questions and labels: compared on all of them" in out
    assert "different" not in out and out.count("PASS") == 2
    doc = json.loads(_check(base, tmp_path / "results", "--format", "json").stdout)
    assert [d["corpus"]["added"] for d in doc["data"]] == [3, 3] and all(d["same_queries"] for d in doc["data"])
    # documents that answer every question better than its labelled page: the decay the gate exists to catch
    queries = [json.loads(line) for line in (data / "queries.jsonl").read_text().splitlines()]
    _add_docs(data, [{"_id": f"faq-{q['_id']}", "title": q["text"], "text": q["text"] * 3} for q in queries])
    _run(cfg)
    decayed = _check(base, tmp_path / "results")
    assert decayed.exit_code == 1, decayed.output
    out = _flat(decayed.output)
    assert out.count("corpus: +13 documents, −0 (12 → 25)") == 1 and "FAIL" in out


def test_changed_labels_exit_2_and_are_named_once(tmp_path, tiny_copy):
    cfg = _project(tmp_path, tiny_copy)
    _run(cfg)
    base = tmp_path / "base-results"
    shutil.copytree(tmp_path / "results", base)
    qrels = tiny_copy.parent / "kb_tiny" / "qrels" / "test.tsv"
    lines = qrels.read_text().splitlines()
    q, d, g = lines[1].split("\t")
    qrels.write_text("\n".join([lines[0], f"{q}\t{d}\t{1 if g == '2' else 2}", *lines[2:]]) + "\n")  # one grade
    _run(cfg)
    refused = _check(base, tmp_path / "results")
    assert refused.exit_code == 2, refused.output
    out = _flat(refused.output)
    assert "(BM25 -> BM25, Words -> Words)" in out and out.count("1 changed (text or labels)") == 1, refused.output
    allowed = _check(base, tmp_path / "results", "--allow-changed-data")
    assert allowed.exit_code == 0, allowed.output
    assert _flat(allowed.output).count("data differ") == 1, allowed.output



def test_results_stored_before_document_ids_still_compare(tmp_path):
    """Older results (no document counts or ids): the same hashed questions on another revision are compared,
    and the note says what cannot be told."""
    from fake_results import QUERIES, scores, write_model
    from runners.analysis.gate.gate import regression_gate

    for folder, ds in (("base", "ds1"), ("cand", "ds2")):
        path = write_model(tmp_path / folder, "acme/m", "T", scores(0.6, 1), dataset_revision=ds)
        data = json.loads(path.read_text())
        data["query_hashes"] = {"default": {"text": {q: f"t{q}" for q in QUERIES}, "labels": {q: "l" for q in QUERIES}}}
        path.write_text(json.dumps(data))
    run = regression_gate(str(tmp_path / "base"), str(tmp_path / "cand"), results_dir=tmp_path, n_resamples=200)
    assert run.passed and run.outcomes[0][3].n_queries == 10
    assert run.data_notes == ["T: corpus: changed (document counts not stored with these results: re-run to store "
                              "them); the same 10 questions and labels: compared on all of them"]
