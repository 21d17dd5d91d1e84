"""`tasks validate` warns when documents and questions write the same letters two ways (issue 35): Romanian ș ț
(comma below) in the documents, ş ţ (cedilla) in the questions; with the count of each form on each side and the
first `file:line` that uses it."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from custom_tasks.letter_forms import FormCounts, for_languages
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
    assert (f"the collection mostly writes comma below (ș ț) ({docs:,} of {docs + qs:,} letters): retype the {qs} "
            "cedilla (ş ţ) letters as comma below (ș ț)") in message


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


# Arabic text with a few Persian letters (issue 46): the advice follows the counts, the task's own pairs come first
AR_DOCS = ["يذهب الطلاب إلى المكتبة كل يوم لكي يقرؤوا الكتب", "كتب المعلم الدرس على اللوح في الصباح الباكر",
           "يكمل الباحث تحليل البيانات قبل نهاية الأسبوع"]
AR_PERSIAN = "یذهب الطلاب إلى المکتبة"  # one document typed on a Persian keyboard: ی and ک
AR_QUESTIONS = ["متى يذهب الطلاب إلى المكتبة", "ماذا كتب المعلم على اللوح"]


def _arabic_forms(romanian: str = "") -> FormCounts:
    forms = FormCounts()
    for n, text in enumerate([*AR_DOCS * 40, AR_PERSIAN, romanian], start=1):
        forms.add("documents", text, lambda n=n: f"corpus.jsonl:{n}")
    for n, text in enumerate(AR_QUESTIONS * 10, start=1):
        forms.add("questions", text, lambda n=n: f"queries.jsonl:{n}")
    return forms


def _letters(texts: list[str], chars: str) -> int:
    return sum(ch in chars for t in texts for ch in t)


def test_the_advice_follows_the_counts_not_the_first_form_listed() -> None:
    [w] = _arabic_forms().warnings()
    arabic = _letters(AR_DOCS * 40 + AR_QUESTIONS * 10, "يك")
    persian = _letters([AR_PERSIAN], "یک")
    assert arabic > 500 and persian == 2
    assert (f"the collection mostly writes Arabic (ي ك) ({arabic:,} of {arabic + persian:,} letters): retype the 2 "
            "Persian (ی ک) letters as Arabic (ي ك)") in w.message
    in_documents = arabic - _letters(AR_QUESTIONS * 10, "يك")
    assert w.message.startswith(f"Arabic-script yeh and kaf: documents: Arabic (ي ك) x{in_documents:,}")
    assert "as Persian" not in w.message


def test_the_task_languages_pairs_come_first() -> None:
    romanian = "ședință " * 400 + "şedinţă"  # more Romanian letters than Arabic ones, both families mixed
    found = _arabic_forms(romanian).warnings()
    assert [w.family for w in found] == ["Romanian ș ț", "Arabic-script yeh and kaf"]  # no language: most letters
    arabic_task = for_languages(list(found), ["arb-Arab"])
    assert [w.family for w in arabic_task] == ["Arabic-script yeh and kaf", "Romanian ș ț"]
    assert [w.family for w in for_languages(list(found), ["ron-Latn"])] == ["Romanian ș ț", "Arabic-script yeh and kaf"]


def test_a_language_whose_own_form_is_the_minority_is_told_both() -> None:
    [w] = for_languages(_arabic_forms().warnings(), ["fas-Arab"])
    assert w.message.startswith("Arabic-script yeh and kaf: documents: Persian (ی ک) x2")  # its own form first
    assert "retype the 2 Persian (ی ک) letters as Arabic (ي ك)" in w.message
    assert "the task's language normally writes Persian (ی ک)" in w.message


def test_validate_names_an_arabic_tasks_pairs_first(tmp_path: Path) -> None:
    data = tmp_path / "ar"
    data.mkdir()
    docs = [*AR_DOCS, AR_PERSIAN, "ședință şedinţă ședință"]
    (data / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"d{i}", "text": t}, ensure_ascii=False) + "\n"
                                               for i, t in enumerate(docs)), encoding="utf-8")
    (data / "queries.jsonl").write_text("".join(json.dumps({"_id": f"q{i}", "text": t}, ensure_ascii=False) + "\n"
                                                for i, t in enumerate(AR_QUESTIONS)), encoding="utf-8")
    (data / "qrels").mkdir()
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq0\td0\t1\nq1\td1\t1\n")
    (tmp_path / "ar.yaml").write_text("name: Ar\ndescription: Arabic\nsource:\n  format: beir\n  path: ar\n"
                                      "languages: [arb-Arab]\nsplits: [test]\n", encoding="utf-8")
    r = CliRunner().invoke(app, ["tasks", "validate", str(tmp_path / "ar.yaml")], env={"COLUMNS": "400"})
    assert r.exit_code == 0, r.output
    line = next(x for x in r.output.splitlines() if "mixed_letter_forms" in x)
    assert "Romanian" not in line.split("(e.g.")[0]  # the explanation names no language
    assert line.index("Arabic-script yeh and kaf") < line.index("Romanian ș ț")
    assert "retype the 2 Persian (ی ک) letters as Arabic (ي ك)" in line
