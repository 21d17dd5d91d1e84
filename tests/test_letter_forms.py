"""`tasks validate` warns when documents and questions write the same letters two ways (issue 35): Romanian ș ț
(comma below) in the documents, ş ţ (cedilla) in the questions; with the count of each form on each side and the
first `file:line` that uses it."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from custom_tasks.sources import load_collection
from runners.cli import app
from tests.romanian_fixture import write_romanian_collection

COMMA, CEDILLA = "șțȘȚ", "şţŞŢ"


def _load(folder: Path):
    return load_collection({"format": "beir", "path": str(folder)}, folder.parent, "Ro")


def _mixed(c) -> list[str]:
    return [w.message for w in c.warnings if w.kind == "mixed_letter_forms"]


def _count_and_first(path: Path, letters: str) -> tuple[int, int]:
    """Independently: letters of ``letters`` in the texts of a BEIR jsonl file, and the first line holding one."""
    total, first = 0, 0
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        row = json.loads(line)
        k = sum(ch in letters for ch in row.get("title", "") + row["text"])
        total += k
        first = first or (n if k else 0)
    return total, first


def test_questions_in_cedilla_against_documents_in_comma_below(tmp_path: Path) -> None:
    folder = write_romanian_collection(tmp_path / "ro", query_letters="cedilla")
    [message] = _mixed(_load(folder))
    docs, first_doc = _count_and_first(folder / "corpus.jsonl", COMMA)
    qs, first_q = _count_and_first(folder / "queries.jsonl", CEDILLA)
    assert docs > 100 and qs > 10
    assert f"documents: comma below (ș ț) x{docs:,} (first at " in message
    assert f"corpus.jsonl:{first_doc});" in message
    assert f"questions: cedilla (ş ţ) x{qs} (first at " in message and f"queries.jsonl:{first_q});" in message
    assert "retype the other form as comma below (ș ț)" in message


def test_one_form_on_both_sides_is_quiet(tmp_path: Path) -> None:
    assert _mixed(_load(write_romanian_collection(tmp_path / "a"))) == []
    both_cedilla = write_romanian_collection(tmp_path / "b", query_letters="cedilla", doc_letters="cedilla")
    assert _mixed(_load(both_cedilla)) == []


def test_documents_mixing_both_forms_are_named(tmp_path: Path) -> None:
    folder = write_romanian_collection(tmp_path / "ro", doc_letters="mixed")
    [message] = _mixed(_load(folder))
    docs_comma, _ = _count_and_first(folder / "corpus.jsonl", COMMA)
    docs_cedilla, first = _count_and_first(folder / "corpus.jsonl", CEDILLA)
    assert f"documents: comma below (ș ț) x{docs_comma:,} (first at " in message
    assert f"cedilla (ş ţ) x{docs_cedilla:,} (first at " in message and f"corpus.jsonl:{first});" in message


def test_validate_prints_it(tmp_path: Path) -> None:
    write_romanian_collection(tmp_path / "ro", query_letters="cedilla")
    (tmp_path / "ro.yaml").write_text("name: Ro\ndescription: generated Romanian\nsource:\n  format: beir\n"
                                      "  path: ro\nsplits: [test]\n")
    r = CliRunner().invoke(app, ["tasks", "validate", str(tmp_path / "ro.yaml")], env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    assert "warning mixed_letter_forms x1" in r.output and "queries.jsonl:" in r.output


def test_a_corpus_in_the_disk_store_is_counted_while_streaming_and_when_reused(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PRIVATE_MTEB_CORPUS_CACHE", str(tmp_path / "cache"))
    folder = write_romanian_collection(tmp_path / "ro", query_letters="cedilla")
    monkeypatch.setenv("PRIVATE_MTEB_STORE_MIN_DOCS", "1000000000")
    in_memory = _load(folder)
    monkeypatch.setenv("PRIVATE_MTEB_STORE_MIN_DOCS", "0")  # every corpus goes to the disk store
    first, again = _load(folder), _load(folder)  # built while streaming, then reused from its meta.json
    assert type(in_memory.corpus) is dict
    assert type(first.corpus) is not dict
    assert _mixed(first) == _mixed(again) == _mixed(in_memory) != []
