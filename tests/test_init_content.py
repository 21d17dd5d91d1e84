"""Issue 36 (daily loop): `init` refused a flat judgments table (`question_id, question, doc_id, grade`: one row per
judged pair, the most common export shape), and files or columns whose names are not English got no draft at all.
Now the questions are derived from such a table (`format: judgments`), and a column no name matches is told from its
values (init_roles.py): ids look like ids and are referenced across files, grades are small whole numbers that repeat,
document texts are long, a question is shorter text. What cannot be placed stops init with one line naming it."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from custom_tasks.config import TaskConfig
from custom_tasks.errors import CollectionError
from custom_tasks.query_ids import ContentIds
from custom_tasks.sources import load_collection
from runners.cli import app

runner = CliRunner()
TOPICS = ["leave", "VPN", "printer", "salary", "password", "laptop", "travel", "canteen", "parking", "remote work"]


def _write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def _docs(n_topics: int = 10) -> list[tuple[str, str, str]]:
    return [(f"D{i * 3 + j}", f"{t} policy part {j + 1}", f"This page describes {t} in detail. " * 6
             + f"Section {j} says who approves {t} and how long it takes.")
            for i, t in enumerate(TOPICS[:n_topics]) for j in range(3)]


def _pairs(n_topics: int = 10) -> list[tuple[str, str, str, int]]:
    out = []
    for k, t in enumerate(TOPICS[:n_topics]):
        q = f"How do I request {t} here?"
        out += [(f"Q{k + 1}", q, f"D{k * 3}", 2), (f"Q{k + 1}", q, f"D{k * 3 + 1}", 1),
                (f"Q{k + 1}", q, f"D{(k * 3 + 5) % 30}", 0)]
    return out


def _init(project: Path, folder: Path):
    return runner.invoke(app, ["init", str(folder), "--project", str(project)], terminal_width=250)


def _loaded(project: Path):
    cfg = TaskConfig.from_file(project / "configs" / "tasks" / "export.yaml")
    return cfg.source, load_collection(cfg.source, cfg.base_dir, cfg.name)


def test_flat_judgments_table_with_english_names(tmp_path):
    export = tmp_path / "export"
    export.mkdir()
    _write_csv(export / "corpus.csv", ["doc_id", "title", "text"], [list(d) for d in _docs()])
    _write_csv(export / "judgments.csv", ["question_id", "question", "doc_id", "grade"], [list(p) for p in _pairs()])
    out = _init(tmp_path, export)
    assert out.exit_code == 0, out.output
    assert "detected format: judgments" in out.output and "told from the values" not in out.output
    source, c = _loaded(tmp_path)
    assert source["columns"]["query_id"] == "question_id" and source["judgments"].endswith("judgments.csv")
    assert sorted(c.queries) == sorted(f"Q{k}" for k in range(1, 11)) and c.queries["Q2"] == "How do I request VPN here?"
    assert c.qrels["test"]["Q2"] == {"D3": 2, "D4": 1, "D8": 0}


@pytest.mark.parametrize("lang", ["de", "ro"])
def test_columns_named_in_other_languages_are_told_from_their_values(tmp_path, lang):
    export = tmp_path / "export"
    export.mkdir()
    if lang == "de":  # CSV, German names: Dokument-ID, Inhalt, Frage-Nr, Frage, Note
        _write_csv(export / "dokumente.csv", ["Dokument-ID", "Titel", "Inhalt"], [list(d) for d in _docs()])
        _write_csv(export / "bewertungen.csv", ["Frage-Nr", "Frage", "Dokument-ID", "Note", "Thema"],
                   [[*p, p[1].split()[-2]] for p in _pairs()])
        want = {"doc_id": "Dokument-ID", "text": "Inhalt", "title": "Titel", "query_id": "Frage-Nr", "query": "Frage",
                "qrels_doc_id": "Dokument-ID", "grade": "Note"}
    else:  # JSONL corpus, CSV judgments with a diacritic in the file name; numeric question ids
        with (export / "documente.jsonl").open("w", encoding="utf-8") as f:
            f.writelines(json.dumps({"cod": d, "titlu": t, "conținut": x}, ensure_ascii=False) + "\n"
                         for d, t, x in _docs())
        _write_csv(export / "evaluări.csv", ["nr", "întrebare", "document", "nota"],
                   [[p[0][1:], *p[1:]] for p in _pairs()])
        want = {"doc_id": "cod", "text": "conținut", "title": "titlu", "query_id": "nr", "query": "întrebare",
                "qrels_doc_id": "document", "grade": "nota"}
    out = _init(tmp_path, export)
    assert out.exit_code == 0, out.output
    assert "detected format: judgments" in out.output and "told from the values (no name matched):" in out.output
    told = " ".join(out.output.split())
    assert f"grade = {want['grade']}: small whole numbers that repeat (0, 1, 2)" in told
    assert f"qrels_doc_id = {want['qrels_doc_id']}: 100% of its values are document ids" in told
    source, c = _loaded(tmp_path)
    assert source["format"] == "judgments" and source["columns"] == want
    assert len(c.corpus) == 30 and len(c.queries) == 10 and sum(len(d) for d in c.qrels["test"].values()) == 30
    if lang == "de":
        assert source["tag_columns"] == ["Thema"] and c.query_tags["Q2"] == {"Thema": "VPN"}
    text = (tmp_path / "configs" / "tasks" / "export.yaml").read_text(encoding="utf-8")
    assert "(detected); told from their values: " in text  # the YAML says how, beside the columns


def test_a_column_it_cannot_place_stops_init_with_one_line_naming_it(tmp_path):
    export = tmp_path / "export"
    export.mkdir()
    with (export / "documente.jsonl").open("w", encoding="utf-8") as f:
        f.writelines(json.dumps({"cod": d, "conținut": x}, ensure_ascii=False) + "\n" for d, _, x in _docs())
    answers = {p[0]: f"You fill in the form for {p[1].split()[-2]} on the intranet" for p in _pairs()}
    _write_csv(export / "evaluări.csv", ["nr", "întrebare", "răspuns", "document", "nota"],
               [[p[0], p[1], answers[p[0]], p[2], p[3]] for p in _pairs()])
    out = _init(tmp_path, export)
    assert out.exit_code == 2 and "Traceback" not in out.output
    first = out.output.splitlines()[0]
    assert first.startswith("error: ") and "query in evaluări.csv (equally likely: întrebare, răspuns" in first
    assert (tmp_path / "configs" / "tasks" / "export.yaml").read_text().startswith("# DRAFT")


def test_judgments_without_question_ids_and_a_reused_id(tmp_path):
    (tmp_path / "c.csv").write_text("_id,text\n" + "".join(f"D{i},text number {i} here\n" for i in range(6)))
    (tmp_path / "j.csv").write_text("query,doc_id,grade\nwhat is two?,D2,2\nwhat is one?,D1,1\nwhat is  two?,D3,1\n")
    src = {"format": "judgments", "corpus": "c.csv", "judgments": "j.csv"}
    c = load_collection(src, tmp_path, "T")
    ids = ContentIds()
    two, one = ids.next_id("what is two?"), ids.next_id("what is one?")
    assert c.queries == {two: "what is two?", one: "what is one?"}  # the same text is the same question
    assert c.qrels["test"] == {two: {"D2": 2, "D3": 1}, one: {"D1": 1}}
    (tmp_path / "j.csv").write_text("query_id,query,doc_id,grade\nq1,what is two?,D2,2\nq1,what is one?,D1,1\n"
                                    "q2,what?,D9,1\n")
    with pytest.raises(CollectionError) as e:
        load_collection(src, tmp_path, "T")
    msg = str(e.value)
    assert "j.csv:3: question 'q1' has another text here than at line 2" in msg
    assert "j.csv:4: label for unknown document 'D9'" in msg
    cfg = yaml.safe_load(yaml.safe_dump({"source": {**src, "columns": {"query": "frage"}}}))
    with pytest.raises(CollectionError, match="frage"):
        load_collection(cfg["source"], tmp_path, "T")


def test_separate_question_and_label_tables_named_in_german(tmp_path):
    """`format: tables` with no English name anywhere: the labels reference the corpus' and the questions' ids."""
    export = tmp_path / "export"
    export.mkdir()
    _write_csv(export / "dokumente.csv", ["Schlüssel", "Inhalt"], [[d, x] for d, _, x in _docs()])
    questions = {p[0]: p[1] for p in _pairs()}
    _write_csv(export / "fragen.csv", ["Nr", "Frage"], [[q, t] for q, t in questions.items()])
    _write_csv(export / "bewertungen.csv", ["Frage-Nr", "Dokument", "Note"], [[p[0], p[2], p[3]] for p in _pairs()])
    out = _init(tmp_path, export)
    assert out.exit_code == 0, out.output
    source, c = _loaded(tmp_path)
    assert source["format"] == "tables" and source["columns"] == {
        "doc_id": "Schlüssel", "text": "Inhalt", "query_id": "Nr", "query": "Frage", "qrels_query_id": "Frage-Nr",
        "qrels_doc_id": "Dokument", "grade": "Note"}
    assert c.qrels["test"]["Q2"] == {"D3": 2, "D4": 1, "D8": 0}
    assert "qrels_query_id = Frage-Nr: 100% of its values are question ids of fragen.csv" in " ".join(out.output.split())


def test_an_evalset_named_in_german_is_told_from_its_values(tmp_path):
    """One row per question with a column listing the relevant documents ('D3:2; D4:1'), no English name."""
    export = tmp_path / "export"
    export.mkdir()
    _write_csv(export / "dokumente.csv", ["Schlüssel", "Inhalt"], [[d, x] for d, _, x in _docs()])
    rows = {}
    for q, text, d, g in _pairs():
        rows.setdefault(q, [q, text, []])[2].append(f"{d}:{g}")
    _write_csv(export / "auswertung.csv", ["Nr", "Frage", "Relevante Dokumente"],
               [[q, t, "; ".join(r)] for q, t, r in rows.values()])
    out = _init(tmp_path, export)
    assert out.exit_code == 0, out.output
    source, c = _loaded(tmp_path)
    assert source["format"] == "evalset" and source["columns"] == {
        "doc_id": "Schlüssel", "text": "Inhalt", "query": "Frage", "relevant": "Relevante Dokumente", "query_id": "Nr"}
    assert c.qrels["test"]["Q2"] == {"D3": 2, "D4": 1, "D8": 0}
    assert "relevant = Relevante Dokumente: lists of document ids (100% of them in the corpus)" in \
        " ".join(out.output.split())

