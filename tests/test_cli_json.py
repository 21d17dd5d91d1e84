"""`--format json`: exactly one JSON document on stdout (NaN -> null) for run, check, tasks, experiments."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from runners.cli import app
from tests.conftest import TINY_YAML
from tests.fake_results import scores, write_config, write_model

runner = CliRunner()
TINY = "TinyKBRetrieval"


def _results(tmp_path, name="results", models=(("acme/one", 0.8, "One"), ("acme/two", 0.5, "Two"))):
    results = tmp_path / name
    for i, (model, mean, label) in enumerate(models):
        write_model(results, model, TINY, scores(mean, i + 1), label)
    return results


def test_check_json(tmp_path):
    base = _results(tmp_path, "base", models=(("acme/one", 0.8, "One"),))
    cand = _results(tmp_path, "cand", models=(("acme/one", 0.3, "One"),))
    result = runner.invoke(app, ["check", "--baseline", str(base), "--candidate", str(cand), "--resamples", "200",
                                 "--format", "json"])
    assert result.exit_code == 1, result.output
    doc = json.loads(result.stdout)
    assert doc["passed"] is False and doc["skipped"] == []
    assert doc["outcomes"][0]["task"] == TINY and doc["outcomes"][0]["passed"] is False
    twin = _results(tmp_path, "twin", models=(("acme/one", 0.8, "One"),))
    same = runner.invoke(app, ["check", "--baseline", str(base), "--candidate", str(twin), "--resamples", "200",
                               "--format", "json"])
    assert same.exit_code == 0, same.output
    assert json.loads(same.stdout)["passed"] is True


def test_experiments_json(tmp_path):
    results = _results(tmp_path)
    cfg = write_config(tmp_path / "bench.yaml", results, [TINY],
                       [{"name": "acme/one", "label": "One"}, {"name": "acme/two", "label": "Two"}])
    result = runner.invoke(app, ["experiments", "-c", str(cfg), "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["experiments"]
    assert isinstance(rows, list) and rows and isinstance(rows[0], dict)


def test_tasks_stats_json():
    result = runner.invoke(app, ["tasks", "stats", str(TINY_YAML), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["stats"] and all(not isinstance(v, float) or v == v for v in doc["stats"].values())


def test_tasks_validate_json_one_task():
    result = runner.invoke(app, ["tasks", "validate", str(TINY_YAML), "--format", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["passed"] is True and doc["tasks"][0]["task"] == TINY
    assert doc["tasks"][0]["errors"] == 0 and isinstance(doc["tasks"][0]["warnings"], int)


def test_tasks_validate_all_lists_every_problem(tmp_path, monkeypatch):
    import shutil

    tasks = tmp_path / "tasks"
    tasks.mkdir()
    data = tmp_path / "kb_tiny"
    shutil.copytree(TINY_YAML.parent.parent / "fixtures" / "kb_tiny", data)
    good = TINY_YAML.read_text().replace("../fixtures/kb_tiny", str(data))
    (tasks / "good.yaml").write_text(good)
    (tasks / "bad1.yaml").write_text(good.replace("TinyKBRetrieval", "BadOne").replace(str(data), str(tmp_path / "nope1")))
    (tasks / "bad2.yaml").write_text(good.replace("TinyKBRetrieval", "BadTwo").replace(str(data), str(tmp_path / "nope2")))
    monkeypatch.setenv("PRIVATE_MTEB_TASKS_DIR", str(tasks))
    result = runner.invoke(app, ["tasks", "validate"])
    out = result.output
    assert result.exit_code == 2, out
    assert "Traceback" not in out
    assert "BadOne" in out and "BadTwo" in out and "ok TinyKBRetrieval" in out, out
    assert "2 of 3 task(s) failed" in out
    doc = json.loads(runner.invoke(app, ["tasks", "validate", "--format", "json"]).stdout)
    assert doc["failed"] == 2 and sorted(t["ok"] for t in doc["tasks"]) == [False, False, True]


# --- issue 19 item 8: --format json on labels judged, growth, tasks list; every table command offers it ----------

#: commands that print no table (they write files, or one line): exempt from --format json, and checked to
#: build no rich Table
NO_TABLE = {"report": "writes report.html / report.md", "labels pool": "writes the pool files",
            "labels import": "merges grades into the labels file", "history accept": "records one decision",
            "labels serve": "serves the judging app (prints its URL)", "labels plan": "writes the plan file",
            "labels merge": "merges the raters' grades into the labels file",
            "questions sample": "appends the sampled questions; prints its rules and counts as lines"}


def _commands():
    import typer.main

    def walk(cmd, path):
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                yield from walk(sub, [*path, name])
        else:
            yield " ".join(path), cmd

    return dict(walk(typer.main.get_command(app), []))


def test_every_command_that_prints_a_table_offers_format_json():
    import inspect

    missing = []
    for name, cmd in _commands().items():
        fmt = next((p for p in cmd.params if "--format" in getattr(p, "opts", [])), None)
        if name in NO_TABLE:
            assert "Table(" not in inspect.getsource(cmd.callback), f"{name} builds a table: give it --format json"
            continue
        if fmt is None or "json" not in (fmt.help or ""):
            missing.append(name)
    assert not missing, f"commands without --format json: {missing}"


def test_tasks_list_json():
    result = runner.invoke(app, ["tasks", "list", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["tasks"]
    assert any(r["task"] == "NorthwindKBRetrieval" and r["format"] and isinstance(r["splits"], list) for r in rows)


def test_labels_judged_json(tmp_path):
    from runners.results.store import atomic_write_json, run_dir
    from tests.fake_results import QUERIES

    results = _results(tmp_path, models=(("acme/one", 0.8, "One"),))
    ranked = {q: {"vpn-mac": 0.9, "nowhere": 0.5} for q in QUERIES}
    atomic_write_json(run_dir(results, "acme/one", "r1", TINY, "ds1") / "rankings_test.json.gz",
                      {"top_k": 100, "subsets": {"default": ranked}}, compress=True)
    cfg = write_config(tmp_path / "bench.yaml", results, [str(TINY_YAML)], [{"name": "acme/one", "label": "One"}])
    result = runner.invoke(app, ["labels", "judged", "-c", str(cfg), "--format", "json"])
    assert result.exit_code == 0, result.output
    (task,) = json.loads(result.stdout)["tasks"]
    assert task["task"] == TINY and task["rows"][0]["candidate"] == "One" and task["rows"][0]["k"] == 10
    assert 0 < task["rows"][0]["judged"] < 1


def test_growth_json(tmp_path):
    from tests.conftest import write_benchmark
    from tests.growth_fixture import write_growth_task

    bow = {"name": "test/bow", "factory": "tests.growth_fixture:make_encoder", "revision": "r1"}
    cfg = write_benchmark(tmp_path, [str(write_growth_task(tmp_path))], models=[bow],
                          experiments=[{"type": "growth", "model": "test/bow", "fractions": [0.25, 1.0], "repeats": 1}])
    result = runner.invoke(app, ["growth", "-c", str(cfg), "--format", "json", "-m", "ndcg_at_10",
                                 "--resamples", "200"])
    assert result.exit_code == 0, result.output
    (curve,) = json.loads(result.stdout)["curves"]
    assert curve["model"] == "test/bow" and curve["metric"] == "ndcg_at_10" and curve["status"] == "ran"
    assert [p["fraction"] for p in curve["points"]] == [0.25, 1.0] and len(curve["extrapolated"]) == 2
