"""`compare` in the task's language (issue 35): with no public set named, the public tasks and benchmark are chosen
with mteb's own language filters from the private tasks' languages; English tasks keep MTEB(eng, v2); a language
mteb has nothing for is said, not compared with English tasks. Public results: ../shared/public-results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from custom_tasks.collection import Collection
from custom_tasks.config import TaskConfig
from custom_tasks.task import task_from_collection
from runners.analysis.compare.compare import build_comparison, to_json
from runners.analysis.compare.public import FolderSource

REPO = Path(__file__).resolve().parents[1]
PUBLIC = REPO.parent / "shared" / "public-results"
needs_public = pytest.mark.skipif(not (PUBLIC / "results").is_dir(), reason="../shared/public-results not present")
MINILM, MINILM_REV = "sentence-transformers/all-MiniLM-L6-v2", "8b3219a92973c328a8e22fadcfa821b5dc75636a"
BGE, BGE_REV = "BAAI/bge-small-en-v1.5", "5c38ec7c405ec4b44b94cc5a9bb96e735b38267a"


def private_results(root: Path, task: str, languages: list[str]) -> Path:
    """A registered private task in `languages` and two models' stored results for it (mteb's layout)."""
    coll = Collection(name=task, corpus={"d1": {"title": "", "text": "x"}}, queries={"q1": "x?"},
                      qrels={"test": {"q1": {"d1": 1}}})
    task_from_collection(coll, TaskConfig(name=task, description="fixture", source={"format": "beir", "path": "."},
                                          languages=languages))
    for model, rev, score in ((MINILM, MINILM_REV, 0.61), (BGE, BGE_REV, 0.66)):
        folder = root / "results" / model.replace("/", "__") / rev
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "model_meta.json").write_text(json.dumps({"name": model, "revision": rev}))
        (folder / f"{task}.json").write_text(json.dumps({
            "dataset_revision": "fixture", "task_name": task, "mteb_version": "2.26.24", "evaluation_time": 1.0,
            "kg_co2_emissions": None, "scores": {"test": [{"hf_subset": "default", "languages": languages,
                                                           "main_score": score, "ndcg_at_10": score}]}}))
    return root


@needs_public
@pytest.mark.parametrize("languages, public_set, tasks", [
    (["ron-Latn"], "MTEB(Europe, v1) retrieval in ron", ["BelebeleRetrieval", "WikipediaRetrievalMultilingual"]),
    (["ron-Latn", "eng-Latn"], "MTEB(Europe, v1) retrieval in ron", ["BelebeleRetrieval",
                                                                       "WikipediaRetrievalMultilingual"]),
    (["deu-Latn"], "MTEB(deu, v1) retrieval in deu", ["GerDaLIR", "GermanDPR", "GermanQuAD-Retrieval", "XMarket"]),
])
def test_the_public_set_is_in_the_tasks_language(tmp_path, languages, public_set, tasks):
    import mteb

    task = "LangFixture" + "".join(code[:3].capitalize() for code in languages)
    comp = build_comparison(private_results(tmp_path, task, languages), FolderSource(PUBLIC))
    assert comp.public_set == public_set and sorted(comp.public_tasks) == tasks
    assert any(n.startswith(f"public set chosen by the private tasks' language ({public_set.split(' in ')[-1]})")
               for n in comp.notes)
    bench = mteb.get_benchmark(public_set.split(" retrieval")[0])
    wanted = {lang.split("-")[0] for lang in languages} - {"eng"}
    expected = {t.metadata.name for t in bench.tasks if t.metadata.type == "Retrieval" and wanted & set(t.languages)}
    assert set(comp.public_tasks) == expected  # mteb's own language filter over the benchmark's tasks
    # ../shared/public-results holds English results only: said, no English task stands in
    assert not set(comp.public_tasks) & {"SciFact", "NFCorpus", "ArguAna"}
    assert any(n.startswith("no public scores for") for n in comp.notes)
    assert json.loads(to_json(comp))["public_set"] == public_set


@needs_public
def test_english_tasks_keep_mteb_eng_v2_and_a_named_benchmark_wins(tmp_path):
    eng = build_comparison(private_results(tmp_path / "e", "LangFixtureEng", ["eng-Latn"]), FolderSource(PUBLIC))
    assert eng.public_set == "MTEB(eng, v2) retrieval" and "ArguAna" in eng.public_tasks
    assert eng.table.loc[MINILM, "ArguAna"] > 0  # public scores found
    named = build_comparison(private_results(tmp_path / "r", "LangFixtureNamed", ["ron-Latn"]), FolderSource(PUBLIC),
                             benchmark="MTEB(eng, v2)")
    assert named.public_set == "MTEB(eng, v2) retrieval" and not any("chosen by" in n for n in named.notes)


@needs_public
def test_a_language_without_public_tasks_is_said(tmp_path):
    comp = build_comparison(private_results(tmp_path, "LangFixtureFao", ["fao-Latn"]), FolderSource(PUBLIC))
    assert comp.public_tasks == [] and comp.public_set == "none in fao"
    assert any(n.startswith("no public mteb benchmark or retrieval task is in fao") for n in comp.notes)
    assert list(comp.private_tasks) == ["LangFixtureFao"]
    assert comp.table.loc[BGE, "LangFixtureFao"] == pytest.approx(0.66)


def test_public_cells_are_the_languages_subsets_only(tmp_path):
    """A public result with Romanian and other subsets: the cell is the mean of the Romanian subsets (mteb's
    filter_languages + its leaderboard aggregation), the Bulgarian ones never count."""
    subsets = {"BelebeleRetrieval": {"ron_Latn-ron_Latn": 0.5, "ron_Latn-eng_Latn": 0.6, "eng_Latn-ron_Latn": 0.7,
                                     "bul_Cyrl-bul_Cyrl": 0.1},
               "WikipediaRetrievalMultilingual": {"ro": 0.8, "bg": 0.2}}
    public = tmp_path / "public"
    for model, rev, shift in ((MINILM, MINILM_REV, 0.0), (BGE, BGE_REV, 0.05)):
        folder = public / "results" / model.replace("/", "__") / rev
        folder.mkdir(parents=True)
        (folder / "model_meta.json").write_text(json.dumps({"name": model, "revision": rev}))
        for task, scores in subsets.items():
            (folder / f"{task}.json").write_text(json.dumps({
                "dataset_revision": "x", "task_name": task, "mteb_version": "2.26.24", "evaluation_time": 1.0,
                "kg_co2_emissions": None, "scores": {"test": [
                    {"hf_subset": sub, "languages": ["ron-Latn"], "main_score": s + shift, "ndcg_at_10": s + shift}
                    for sub, s in scores.items()]}}))
    comp = build_comparison(private_results(tmp_path / "private", "LangFixtureRonCells", ["ron-Latn"]),
                            FolderSource(public))
    assert comp.table.loc[MINILM, "BelebeleRetrieval"] == pytest.approx(0.6, abs=1e-9)
    assert comp.table.loc[BGE, "BelebeleRetrieval"] == pytest.approx(0.65, abs=1e-9)
    assert comp.table.loc[MINILM, "WikipediaRetrievalMultilingual"] == pytest.approx(0.8, abs=1e-9)
    assert comp.table.loc[BGE, "Mean (Public)"] == pytest.approx((0.65 + 0.85) / 2, abs=1e-9)


def _language_set(languages: list[str]):
    """The public set for one private task in ``languages`` (only its eval_langs is read: mteb's benchmarks decide)."""
    from types import SimpleNamespace

    from runners.analysis.compare.public_language import language_public_set

    return language_public_set([SimpleNamespace(metadata=SimpleNamespace(eval_langs=languages))])


def test_macro_language_codes_pick_the_same_public_benchmark():
    """Issue 46: `init` writes zho-Hans where mteb's Chinese tasks say cmn: zho-Hans was compared with a legal
    benchmark, cmn-Hans with MTEB(cmn). Both are Chinese (ISO 639-3 macro-language): the same general set."""
    zho, cmn = _language_set(["zho-Hans"]), _language_set(["cmn-Hans"])
    assert zho.label.split(" retrieval")[0] == cmn.label.split(" retrieval")[0] == "MTEB(cmn, v1)"
    assert [t.metadata.name for t in zho.tasks] == [t.metadata.name for t in cmn.tasks]
    assert "LeCaRDv2" not in [t.metadata.name for t in zho.tasks]


def test_a_general_benchmark_comes_before_a_domain_one_and_the_choice_is_said():
    """Arabic: MTEB(Medical, v1) has the fewest languages, a general multilingual set exists: that one, said."""
    ara = _language_set(["ara-Arab"])
    assert not ara.label.startswith("MTEB(Medical")
    assert "a general benchmark before domain ones (MTEB(Medical, v1) (Medical))" in ara.note
    assert _language_set(["arb-Arab"]).label.split(" retrieval")[0] == ara.label.split(" retrieval")[0]
