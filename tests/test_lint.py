"""`tasks lint` on a generated collection with planted problems: each is found, nothing else is (issue 32).

The collection is built from random whole words of MiniLM's vocabulary (one token each), so a document's token
count is known, and random documents/questions share no long runs of words: every finding must be a planted one.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from conftest import MINILM
from custom_tasks.config import TaskConfig
from runners.labels.lint.lint import LintSettings, lint_collection
from runners.labels.lint.lint_text import jaccard, near_pairs, word_shingles, words
from custom_tasks.sources import load_collection
from runners.cli import app

N_DOCS, N_QUERIES = 120, 40
LONG = {"d010": 400, "d011": 300}  # planted long documents (words = tokens + 2 specials), both relevant
#: planted findings and the ids they must name
EXACT = ("d003", "d120")  # d120: d003 in upper case with extra punctuation; q03 judges d003 only
NEAR = ("d005", "d121")  # d121: d005 with 2 words replaced
EMPTY = "d122"  # only punctuation
COPIED = {"q30": "whole", "q31": "run"}  # q30 is 10 words of its document; q31 holds a 9-word run of it
NEAR_QUERIES = {("q07", "q32"), ("q08", "q33"), ("q09", "q34")}  # +1 word, a typo, case/punctuation only


def _vocab() -> list[str]:
    from runners.execution.encoding.offline_packages import offline_model_path

    folder = offline_model_path(MINILM)
    if folder is None:
        pytest.skip("the offline MiniLM package is not installed")
    lines = (Path(folder) / "vocab.txt").read_text(encoding="utf-8").splitlines()
    return sorted({w for w in lines if w.isalpha() and w.isascii() and w.islower() and len(w) >= 5})


def make_collection(root: Path) -> Path:
    """BEIR files + a task YAML with the planted problems; returns the YAML path."""
    rng = np.random.default_rng(7)
    vocab = _vocab()

    def text(n: int) -> list[str]:
        return [vocab[i] for i in rng.integers(0, len(vocab), n)]

    sizes = {**LONG, "d005": 80}  # 80 words, 2 replaced: 3-word shingle Jaccard 72/84 = 0.857
    docs = {f"d{i:03d}": text(sizes.get(f"d{i:03d}", int(rng.integers(40, 80)))) for i in range(N_DOCS)}
    queries = {f"q{i:02d}": text(int(rng.integers(8, 14))) for i in range(N_QUERIES)}
    qrels = {f"q{i:02d}": {f"d{i:03d}": 2} for i in range(N_QUERIES)}
    qrels["q10"], qrels["q11"] = {"d010": 2}, {"d011": 1}
    qrels["q12"] = {"d012": 2, "d013": 1}
    near = list(docs["d005"])
    near[10], near[30] = "zzplanted", "zzchanged"
    corpus = [{"_id": d, "title": "", "text": " ".join(w)} for d, w in docs.items()]
    corpus += [{"_id": "d120", "title": "", "text": " ".join(docs["d003"]).upper().replace(" ", " , ") + " !!"},
               {"_id": "d121", "title": "", "text": " ".join(near)},
               {"_id": EMPTY, "title": "", "text": "--- *** ... ---"}]
    qtext = {q: " ".join(w) for q, w in queries.items()}
    qtext["q30"] = " ".join(docs["d030"][5:15])
    qtext["q31"] = " ".join(text(3) + docs["d031"][20:29] + text(3))
    qtext["q32"] = qtext["q07"] + " please"
    w = qtext["q08"].split()
    w[2] = w[2][:2] + w[2][3] + w[2][2] + w[2][4:]  # swap two letters: a typo
    qtext["q33"] = " ".join(w)
    qtext["q34"] = qtext["q09"].upper() + "?"
    for q, d in (("q30", "d030"), ("q31", "d031"), ("q32", "d007"), ("q33", "d008"), ("q34", "d009")):
        qrels[q] = {d: 2}
    data = root / "planted"
    (data / "qrels").mkdir(parents=True)
    (data / "corpus.jsonl").write_text("".join(json.dumps(c) + "\n" for c in corpus))
    (data / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in qtext.items()))
    (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{q}\t{d}\t{g}\n" for q, labels in qrels.items() for d, g in labels.items()))
    cfg = root / "planted.yaml"
    cfg.write_text(yaml.safe_dump({"name": "PlantedLint", "description": "planted lint problems",
                                   "source": {"format": "beir", "path": "planted"}, "license": "cc0-1.0"}))
    return cfg


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    return make_collection(tmp_path)


def _collection(cfg_path: Path):
    cfg = TaskConfig.from_file(cfg_path)
    return load_collection(cfg.source, cfg.base_dir, cfg.name)


def _by_check(report) -> dict:
    return {f.check: f for f in report.findings}


def test_finds_each_planted_problem_and_nothing_else(planted: Path) -> None:
    found = _by_check(lint_collection(_collection(planted)))
    assert set(found) == {"exact_duplicate_documents", "near_duplicate_documents", "twin_label_conflicts",
                          "leaked_questions", "near_duplicate_questions", "unreachable_documents"}
    assert [d["documents"] for d in found["exact_duplicate_documents"].details] == [list(EXACT)]
    assert [d["documents"] for d in found["near_duplicate_documents"].details] == [list(NEAR)]
    conflicts = {(d["query"], tuple(sorted(d["grades"].items(), key=str))) for d in found["twin_label_conflicts"].details}
    assert conflicts == {("q03", (("d003", 2), ("d120", None))), ("q05", (("d005", 2), ("d121", None)))}
    leaks = {d["query"]: (d["copied_words"], d["query_words"]) for d in found["leaked_questions"].details}
    assert leaks == {"q30": (10, 10), "q31": (9, 15)}
    assert found["leaked_questions"].examples[0].startswith("q30 ")  # the whole-question copy is worst
    assert {tuple(d["queries"]) for d in found["near_duplicate_questions"].details} == NEAR_QUERIES
    assert found["near_duplicate_questions"].details[0]["queries"] == ["q09", "q34"]  # Jaccard 1.0 first
    assert found["unreachable_documents"].examples == [EMPTY]
    for f in found.values():
        assert f.count == len(f.details) and f.action and f.examples


def test_thresholds_are_exact_jaccard_not_estimates(planted: Path) -> None:
    """The reported near-duplicate pair carries its exact shingle Jaccard, and a threshold just above it drops it."""
    c = _collection(planted)
    exact = jaccard(word_shingles(words(c.corpus["d005"]["text"]), 3), word_shingles(words(c.corpus["d121"]["text"]), 3))
    near = _by_check(lint_collection(c))["near_duplicate_documents"].details[0]
    assert near["jaccard"] == round(exact, 4)
    above = lint_collection(c, LintSettings(doc_threshold=exact + 1e-6))
    assert "near_duplicate_documents" not in _by_check(above)


def test_near_pairs_match_brute_force_on_random_sets() -> None:
    """LSH is only the blocking step: the pairs equal an all-pairs exact search."""
    rng = np.random.default_rng(3)
    base = [frozenset(f"s{x}" for x in rng.integers(0, 400, 60)) for _ in range(12)]
    sets = {}
    for i, b in enumerate(base):
        sets[f"a{i}"] = b
        drop = set(sorted(b)[: int(rng.integers(0, 12))])
        sets[f"b{i}"] = frozenset(b - drop)
    ids = sorted(sets)
    brute = {(a, b) for i, a in enumerate(ids) for b in ids[i + 1:] if jaccard(sets[a], sets[b]) >= 0.8}
    assert brute and {(a, b) for a, b, _ in near_pairs(sets, 0.8)} == brute


def _lint_json(planted: Path, tmp_path: Path, models: list[dict]) -> dict:
    bench = tmp_path / f"bench{len(list(tmp_path.glob('bench*')))}.yaml"
    bench.write_text(yaml.safe_dump({"name": "b", "tasks": [str(planted)], "results_dir": str(tmp_path / "r"),
                                     "models": models}))
    r = CliRunner().invoke(app, ["tasks", "lint", str(planted), "-c", str(bench), "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["tasks"][0]


def _truncation(report: dict) -> dict:
    return {f["check"]: f["details"][0] for f in report["findings"] if f["check"].startswith("truncation")}


def test_truncation_counts_in_the_models_own_tokens(planted: Path, tmp_path: Path) -> None:
    report = _lint_json(planted, tmp_path, [{"name": MINILM, "label": "MiniLM"}, {"name": "bm25"}])
    # MiniLM's own limit (256, from its sentence_bert_config.json): only the planted long documents, whose
    # tokens are their words + [CLS] + [SEP]; both are relevant
    full = _truncation(report)["truncation[MiniLM]"]
    assert (full["max_seq_length"], full["documents_over"], full["relevant_over"]) == (256, 2, 2)
    assert [(d["document"], d["tokens"]) for d in full["documents"]] == [("d010", 402), ("d011", 302)]
    c = _collection(planted)
    relevant = {d for labels in c.qrels["test"].values() for d, g in labels.items() if g > 0}
    assert full["relevant"] == len(relevant) and full["relevant_share"] == round(2 / len(relevant), 6)
    assert "truncation[BM25]" in report["skipped"]
    # a config's max_seq_length 64: every document over 62 words, counted independently here
    short = _truncation(_lint_json(planted, tmp_path, [{"name": MINILM, "label": "M64", "max_seq_length": 64}]))
    over = [d for d, doc in c.corpus.items() if len(doc["text"].split()) + 2 > 64 and d != EMPTY]
    assert short["truncation[M64]"]["documents_over"] == len(over) > 5
    # --format json lists every cut document (issue 36: it listed the five longest), longest first
    listed = short["truncation[M64]"]["documents"]
    assert sorted(d["document"] for d in listed) == sorted(over)
    assert [d["tokens"] for d in listed] == sorted((d["tokens"] for d in listed), reverse=True)
    assert short["truncation[M64]"]["share"] == round(len(over) / len(c.corpus), 6)


def _store(results: Path, model: str, task: str, rankings: dict) -> None:
    from runners.results.store import atomic_write_json, run_dir, task_result_path

    atomic_write_json(task_result_path(results, model, "r1", task), {"dataset_revision": "d1"})
    atomic_write_json(run_dir(results, model, "r1", task, "d1") / "rankings_test.json.gz",
                      {"top_k": 100, "subsets": {"default": rankings}}, compress=True)


def test_pooling_suggestion_counts_unjudged_hits_of_every_candidate(planted: Path, tmp_path: Path) -> None:
    from runners.labels.lint.lint_pool import pooling_finding

    c = _collection(planted)
    results = tmp_path / "results"
    docs = sorted(c.corpus)
    # A: q01's top-10 is its judged document + 9 unjudged; B adds 3 more unjudged for q01 and covers q02 with 4
    a = {"q01": {d: 100 - i for i, d in enumerate(["d001"] + docs[20:29])}}
    b = {"q01": {d: 100 - i for i, d in enumerate(docs[27:37])}, "q02": {d: 10 - i for i, d in enumerate(docs[40:44])}}
    _store(results, "m/a", c.name, a)
    _store(results, "m/b", c.name, b)
    f = pooling_finding(results, c, ["m/a", "m/b"], LintSettings())
    assert {r["query"]: r["unjudged_in_top"] for r in f.details} == {"q01": 9 + 8}  # q02: 4 < 5; q12 has 2 judged
    f = pooling_finding(results, c, ["m/a", "m/b"], LintSettings(pool_min_unjudged=4))
    assert {r["query"]: r["unjudged_in_top"] for r in f.details} == {"q01": 17, "q02": 4}


def _tree_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        h.update(str(p.relative_to(folder)).encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


def test_cli_text_strict_and_read_only(planted: Path) -> None:
    before = _tree_digest(planted.parent)
    r = CliRunner().invoke(app, ["tasks", "lint", str(planted)])
    assert r.exit_code == 0, r.output
    for check in ("exact_duplicate_documents", "leaked_questions", "near_duplicate_questions", "worst:", "do:"):
        assert check in r.output
    strict = CliRunner().invoke(app, ["tasks", "lint", str(planted), "--strict"])
    assert strict.exit_code == 1
    assert _tree_digest(planted.parent) == before  # lint wrote nothing


def test_strict_passes_on_a_clean_collection(tmp_path: Path) -> None:
    from conftest import TINY_YAML

    r = CliRunner().invoke(app, ["tasks", "lint", str(TINY_YAML), "--strict", "--format", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["findings"] == 0


def test_bad_format_is_one_line_exit_2(planted: Path) -> None:
    r = CliRunner().invoke(app, ["tasks", "lint", str(planted), "--format", "xml"])
    assert r.exit_code == 2 and "text|json" in r.output


@pytest.mark.slow  # a real run (BM25): mteb's import alone takes ~30 s on a shared CPU
def test_run_prints_one_lint_line_per_task(planted: Path, tmp_path: Path) -> None:
    bench = tmp_path / "bench.yaml"
    bench.write_text(yaml.safe_dump({"name": "b", "tasks": [str(planted)], "results_dir": str(tmp_path / "r"),
                                     "models": [{"name": "bm25"}]}))
    r = CliRunner().invoke(app, ["run", "-c", str(bench)])
    assert r.exit_code == 0, r.output
    lines = [ln for ln in r.output.splitlines() if ln.startswith("lint ")]
    assert lines == ["lint PlantedLint: exact duplicate documents: 1, near duplicate documents: 1, twin label "
                     "conflicts: 2, leaked questions: 2, near duplicate questions: 3, unreachable documents: 1 "
                     "(details: private-mteb tasks lint PlantedLint)"]
