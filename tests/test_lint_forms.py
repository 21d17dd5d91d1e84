"""`tasks lint` compares what a reader reads (issues 35, 36): a document retyped with the other Romanian letter forms
is a duplicate of its original, a question copied in either form is a leak, and "<" / ">" in prose are not markup
(only tags that are tags are removed)."""

from __future__ import annotations

from custom_tasks.collection import Collection
from runners.labels.lint.lint import lint_collection
from runners.labels.lint.lint_text import words
from custom_tasks.markup import strip_markup
from tests.romanian_fixture import retyped_duplicate, romanian_collection, to_cedilla


def _collection(corpus: dict[str, str], queries: dict[str, str], qrels: dict[str, dict[str, int]]) -> Collection:
    return Collection(name="T", corpus={d: {"title": "", "text": t} for d, t in corpus.items()}, queries=queries,
                      qrels={"test": qrels})


def _findings(c: Collection) -> dict[str, list[dict]]:
    return {f.check: f.details for f in lint_collection(c).findings}


def _romanian() -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, int]]]:
    ro = romanian_collection(seed=0, n_docs=40, n_queries=20)
    corpus = {d: f"{doc['title']} {doc['text']}" for d, doc in ro.corpus.items()}
    return corpus, dict(ro.queries), dict(ro.qrels)


def test_a_document_retyped_with_the_other_letter_forms_is_a_duplicate() -> None:
    corpus, queries, qrels = _romanian()
    original = next(d for d, t in corpus.items() if any(c in t for c in "șț"))
    corpus["retyped"] = retyped_duplicate(corpus[original])
    assert corpus["retyped"] != corpus[original]
    found = _findings(_collection(corpus, queries, qrels))
    assert found["exact_duplicate_documents"] == [{"documents": sorted([original, "retyped"])}]
    assert "near_duplicate_documents" not in found


def test_leaked_questions_are_found_whatever_letter_forms_the_questions_use() -> None:
    corpus, queries, qrels = _romanian()
    leaking = [d for d, t in corpus.items() if sum(c in "șț" for c in t) >= 3][:6]
    for i, d in enumerate(leaking):  # a question that is a sentence of its relevant document, 10 words
        queries[f"leak{i}"] = " ".join(corpus[d].split()[2:12])
        qrels[f"leak{i}"] = {d: 2}
    comma = _findings(_collection(corpus, queries, qrels))["leaked_questions"]
    cedilla_queries = {q: to_cedilla(t) for q, t in queries.items()}
    assert any(cedilla_queries[f"leak{i}"] != queries[f"leak{i}"] for i in range(len(leaking)))
    cedilla = _findings(_collection(corpus, cedilla_queries, qrels))["leaked_questions"]
    assert {r["query"] for r in comma} == {r["query"] for r in cedilla} >= {f"leak{i}" for i in range(len(leaking))}


QUEUE_A = "The queue depth is < 500 items while the nightly export runs and the alert clears at > 200 items"
QUEUE_B = "The queue depth is < 900 requests during peak load so the pager fires and clears at > 200 items"


def test_less_and_greater_signs_in_prose_are_not_markup() -> None:
    assert strip_markup(QUEUE_A) == QUEUE_A
    assert words(QUEUE_A) != words(QUEUE_B)
    corpus = {"a": QUEUE_A, "b": QUEUE_B, "c": "Unrelated text about printers and toner cartridges in the office"}
    queries = {"q1": "500 items while the nightly export runs and the alert", "q2": "printer toner"}
    qrels = {"q1": {"a": 2, "b": 0}, "q2": {"c": 2}}
    found = _findings(_collection(corpus, queries, qrels))
    assert "exact_duplicate_documents" not in found and "twin_label_conflicts" not in found
    assert [(r["query"], r["document"], r["copied_words"]) for r in found["leaked_questions"]] == [("q1", "a", 10)]


def test_real_tags_are_still_removed() -> None:
    html = "<p>Aspirin <i>reduces</i> fever in adults within an hour, the <a href='/trial'>trial</a> showed.</p>"
    plain = "Aspirin reduces fever in adults within an hour, the trial showed."
    xml = '<sec id="s1"><title>Aspirin</title> reduces fever in adults within an hour, the trial showed.</sec>'
    assert words(html) == words(plain) == words(xml)
    assert words("H<sub>2</sub>O &amp; CO<sub>2</sub>") == ["h2o", "co2"]
    assert words("if i<n and n>0 then stop") == ["if", "i", "n", "and", "n", "0", "then", "stop"]
    assert words("<!-- note --><?xml version='1.0'?><!DOCTYPE html>") == []
    found = _findings(_collection({"a": html, "b": plain, "c": "Printers and toner cartridges in the office"},
                                  {"q": "printer toner"}, {"q": {"c": 2}}))
    assert found["exact_duplicate_documents"] == [{"documents": ["a", "b"]}]
