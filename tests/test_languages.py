"""`languages:` of a task (issue 35): validated against mteb's own codes with the nearest valid one, part of the run
identity (mteb's BM25 takes its stemmer and stop words from it), and what BM25 then scores."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from custom_tasks import languages as langs
from custom_tasks.config import TaskConfig
from custom_tasks.errors import CollectionError
from runners.config.benchmark import BenchmarkConfig
from runners.execution.run import run_benchmark
from tests.conftest import write_benchmark
from tests.romanian_fixture import write_romanian_collection

BM25 = [{"name": "bm25", "label": "BM25"}]


def romanian_task(tmp_path: Path, languages: list[str] | None = None) -> Path:
    """The generated Romanian collection and a task YAML for it (``languages`` left out: the default)."""
    data = write_romanian_collection(tmp_path / "ro_kb")
    task = {"name": "RoKBRetrieval", "description": "generated Romanian procedures",
            "source": {"format": "beir", "path": "ro_kb"}}
    if languages is not None:
        task["languages"] = languages
    path = tmp_path / "ro.yaml"
    path.write_text(yaml.safe_dump(task, allow_unicode=True), encoding="utf-8")
    assert data.is_dir()
    return path


def set_languages(task_yaml: Path, languages: list[str]) -> None:
    data = yaml.safe_load(task_yaml.read_text(encoding="utf-8"))
    task_yaml.write_text(yaml.safe_dump({**data, "languages": languages}, allow_unicode=True), encoding="utf-8")


def bm25_run(tmp_path: Path, task_yaml: Path, folder: str = "results"):
    out = tmp_path / folder
    out.mkdir(exist_ok=True)
    cfg = BenchmarkConfig.from_file(write_benchmark(out, [str(task_yaml)], models=BM25))
    return run_benchmark(cfg, show_progress=False)[0]


def test_changed_languages_rerun_and_store_what_a_fresh_run_stores(tmp_path):
    """`init` used to write eng-Latn; a user corrects it to ron-Latn and runs again without --force: the stored
    English BM25 figure was reported as cached (a stale score). It must be re-run, equal to a fresh run."""
    task_yaml = romanian_task(tmp_path)  # no languages: the default, eng-Latn
    english = bm25_run(tmp_path, task_yaml)
    set_languages(task_yaml, ["ron-Latn"])
    again = bm25_run(tmp_path, task_yaml)
    fresh = bm25_run(tmp_path, task_yaml, folder=f"fresh-{time.monotonic_ns()}")
    assert again.status == "ran", again.reason
    assert again.scores["ndcg_at_10"] == pytest.approx(fresh.scores["ndcg_at_10"], abs=1e-12)
    assert again.scores["ndcg_at_10"] > english.scores["ndcg_at_10"] + 0.05  # the Romanian stemmer matters here
    assert bm25_run(tmp_path, task_yaml).status == "skipped"  # and an unchanged task is reused


def test_default_languages_keep_the_fingerprint_of_results_stored_before():
    """Spelling out the default changes nothing (results stored before languages counted stay reusable); any other
    list is another fingerprint; the order is not (mteb's BM25 reads the languages as a set)."""
    base = TaskConfig.model_validate({"name": "T", "description": "d", "source": {}})
    spelt = base.model_copy(update={"languages": ["eng-Latn"]})
    assert base.settings_fingerprint() == spelt.settings_fingerprint()
    seen = {base.settings_fingerprint()}
    for other in (["ron-Latn"], ["ron-Latn", "eng-Latn"], ["deu-Latn"], ["srp-Cyrl"], ["srp-Latn"]):
        fp = base.model_copy(update={"languages": other}).settings_fingerprint()
        assert fp not in seen, other
        seen.add(fp)
    swapped = base.model_copy(update={"languages": ["eng-Latn", "ron-Latn"]}).settings_fingerprint()
    assert swapped == base.model_copy(update={"languages": ["ron-Latn", "eng-Latn"]}).settings_fingerprint()


@pytest.mark.parametrize("given, nearest", [
    ("ro", "ron-Latn"), ("Romanian", "ron-Latn"), ("ro-RO", "ron-Latn"), ("de", "deu-Latn"), ("rum", "ron-Latn"),
    ("RON-latn", "ron-Latn"), ("ron", "ron-Latn"), ("German", "deu-Latn"), ("en_US", "eng-Latn"),
    ("zh-TW", "zho-Hant"), ("sr-Latn", "srp-Latn"), ("eng-Lat", "eng-Latn"), ("Greek", "ell-Grek"),
])
def test_invalid_codes_get_the_nearest_valid_one(given, nearest):
    assert langs.suggest(given) == nearest
    assert langs.problem(given) == f"`{given}`: did you mean `{nearest}`?"


def test_validity_is_mtebs_own():
    """The tables are mteb's (read without importing it): every code valid here passes mteb's check, and what
    mteb's BM25 knows a stemmer for is valid with its default script."""
    from mteb.languages import ISO_TO_LANGUAGE, ISO_TO_SCRIPT, PROGRAMMING_LANGS, check_language_code, language_label

    from custom_tasks.mteb_private import private

    bm25_languages = private("bm25_languages")

    assert langs.iso_to_language() == ISO_TO_LANGUAGE and langs.iso_to_script() == ISO_TO_SCRIPT
    assert langs.programming_languages() == frozenset(PROGRAMMING_LANGS)
    for code in ("ron-Latn", "eng-Latn", "zho-Hant", "python-Code", *(langs.with_script(i) for i in bm25_languages)):
        assert langs.is_valid(code), code
        check_language_code(code)
    for code in ("ron-Latn", "ell-Grek", "zho-Hant", "srp-Latn"):
        assert langs.language_name(code).split(" (")[0] in language_label(code), code
    for bad in ("ro", "ron", "Latn", "ron-Xxxx", "ron-Latn-RO", "klingon-Code"):
        assert not langs.is_valid(bad), bad


def test_an_invalid_code_is_one_line_naming_the_file(tmp_path):
    task_yaml = romanian_task(tmp_path, ["ro", "eng-Latn"])
    with pytest.raises(CollectionError) as err:
        TaskConfig.from_file(task_yaml)
    text = str(err.value)
    assert "\n" not in text and str(task_yaml.name) in text, text
    assert "`ro`: did you mean `ron-Latn`?" in text
    for bad, what in ((["Romanian"], "`Romanian`: did you mean `ron-Latn`?"), ([], "languages is empty"),
                      (["ron-Latn", "ron-Latn"], "lists ron-Latn twice")):
        set_languages(task_yaml, bad)
        with pytest.raises(CollectionError, match=what):
            TaskConfig.from_file(task_yaml)
