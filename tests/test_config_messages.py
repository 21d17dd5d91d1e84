"""Config validation messages (issue 19.9) and the YAML loader's refusal of aliases (issue 20.7).

Every problem names the YAML file and line, a misspelt key gets "did you mean", a file's problems are all
reported (20 lines at most, then a count), `tasks: []` and bad experiment entries stop before any model loads,
and YAML aliases (which can expand to gigabytes from a 1 kB file) are refused with one line.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import REPO, TINY_YAML, write_benchmark
from custom_tasks.config import TaskConfig
from custom_tasks.errors import ConfigError, ConfigProblems
from custom_tasks.yaml_io import loads
from runners.cli import app
from runners.config.benchmark import BenchmarkConfig

runner = CliRunner()


def _task(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "task.yaml"
    path.write_text("name: Demo\ndescription: a demo\n" + body)
    return path


@pytest.mark.parametrize("body, line, expected", [
    ("source:\n  format: beir-ish\n  path: kb\n", 4, "unknown format 'beir-ish' (did you mean 'beir'?)"),
    ("source:\n  format: beir\n  pth: kb\n", 5, "unknown key 'pth' (did you mean 'path'?)"),
    ("source:\n  format: evalset\n  corpus: c.jsonl\n  evalset: e.csv\n  tag_colums: [topic]\n", 7,
     "unknown key 'tag_colums' (did you mean 'tag_columns'?)"),
    ("main_scroe: ndcg_at_10\nsource:\n  format: beir\n  path: kb\n", 3,
     "unknown key 'main_scroe' (did you mean 'main_score'?)"),
    ("source:\n  format: tables\n  corpus: c\n  queries: q\n  qrels: r\n  columns:\n    doc_idd: id\n", 9,
     "unknown key 'columns.doc_idd' (did you mean 'doc_id'?)"),
])
def test_task_yaml_problem_names_the_file_line_and_closest_key(tmp_path, body, line, expected):
    path = _task(tmp_path, body)
    with pytest.raises(ConfigError) as e:
        TaskConfig.from_file(path)
    assert str(e.value) == f"{path}:{line}: {expected}" or str(e.value).startswith(f"{path}:{line}: {expected}")
    assert "missing key 'path'" not in str(e.value)  # the typo is the one problem, not two
    res = runner.invoke(app, ["tasks", "validate", str(path)])
    assert res.exit_code == 2 and f"{path}:{line}:" in res.output.replace("\n", "") and "Traceback" not in res.output


def test_every_problem_of_a_file_is_reported_capped_at_20(tmp_path):
    path = _task(tmp_path, "lables: human\nmain_scroe: x\nsource:\n  format: beir\n  pth: kb\n")
    with pytest.raises(ConfigProblems) as e:
        TaskConfig.from_file(path)
    lines = str(e.value).splitlines()
    assert lines == [f"{path}:3: unknown key 'lables' (did you mean 'labels'?)",
                     f"{path}:4: unknown key 'main_scroe' (did you mean 'main_score'?)",
                     f"{path}:7: unknown key 'pth' (did you mean 'path'?)"]
    many = _task(tmp_path, "".join(f"extra_{i}: 1\n" for i in range(25)) + "source: {format: beir, path: kb}\n")
    with pytest.raises(ConfigProblems) as e:
        TaskConfig.from_file(many)
    lines = str(e.value).splitlines()
    assert len(lines) == 21 and lines[0] == f"{many}:3: unknown key 'extra_0'"
    assert lines[-1] == f"{many}: ... and 5 more problem(s)"


def test_benchmark_keys_get_did_you_mean_and_lines(tmp_path):
    path = tmp_path / "bench.yaml"
    path.write_text(f"name: t\ntasks: [{TINY_YAML}]\nmodels:\n  - name: bm25\n    revison: x\n"
                    "stats:\n  resampels: 100\nmodelz: []\n")
    with pytest.raises(ConfigProblems) as e:
        BenchmarkConfig.from_file(path)
    assert str(e.value).splitlines() == [
        f"{path}:5: unknown key 'models.0.revison' (did you mean 'revision'?)",
        f"{path}:7: unknown key 'stats.resampels' (did you mean 'resamples'?)",
        f"{path}:8: unknown key 'modelz' (did you mean 'models'?)"]


def _cli_in_subprocess(args: list[str]) -> tuple[int, str, list[str]]:
    """(exit code, output, model libraries imported) of one CLI call in a fresh interpreter."""
    code = ("import sys, json\nfrom typer.testing import CliRunner\nfrom runners.cli import app\n"
            f"r = CliRunner().invoke(app, {args!r})\n"
            "heavy = sorted(m for m in ('torch', 'mteb', 'sentence_transformers') if m in sys.modules)\n"
            "print(json.dumps([r.exit_code, r.output, heavy]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return tuple(json.loads(out.stdout.strip().splitlines()[-1]))  # type: ignore[return-value]


def test_empty_tasks_and_bad_experiments_stop_before_any_model_loads(tmp_path):
    empty = write_benchmark(tmp_path, [], models=[{"name": "bm25"}])
    code, output, heavy = _cli_in_subprocess(["run", "-c", str(empty)])
    assert code == 2 and "tasks is empty" in output and len(output.strip().splitlines()) == 1
    assert heavy == []
    growth = write_benchmark(tmp_path, [str(TINY_YAML)], models=[{"name": "bm25"}],
                             experiments=[{"type": "growth", "model": "acme/m", "fractions": [0.5, 1.0, 2.0]}])
    for command in (["run", "-c", str(growth)], ["growth", "-c", str(growth)]):
        code, output, heavy = _cli_in_subprocess(command)
        assert code == 2 and "experiments[0] (growth): fractions [2.0] above 1.0 need 'distractors:'" in output
        assert f"{growth}:" in output and heavy == [], (command, output, heavy)


LAUGHS = "".join(f"  l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]\n" for i in range(1, 10))


def test_yaml_aliases_are_refused_with_one_line(tmp_path):
    path = write_benchmark(tmp_path, [str(TINY_YAML)], models=[{"name": "bm25"}])
    path.write_text(path.read_text() + "x_bomb:\n  l0: &l0 [lol]\n" + LAUGHS)  # ~1 kB, 9 nested levels
    assert path.stat().st_size < 2000
    for command in (["stats", "-c", str(path)], ["run", "-c", str(path)]):
        t0 = time.perf_counter()
        res = runner.invoke(app, command)
        assert time.perf_counter() - t0 < 10
        assert res.exit_code == 2, res.output
        assert res.output.strip().splitlines() == [
            f"error: {path}:{path.read_text().splitlines().index('  l1: &l1 [' + ', '.join(['*l0'] * 9) + ']') + 1}: "
            "invalid YAML: YAML alias '*l0' is not allowed in configs (aliases can expand without bound): write the "
            "value out instead"]
    task = tmp_path / "task.yaml"
    task.write_text(TINY_YAML.read_text() + "defaults: &d {a: 1}\nmore:\n  <<: *d\n")
    with pytest.raises(ConfigError, match=r"task.yaml:\d+: invalid YAML: YAML alias '\*d'"):
        TaskConfig.from_file(task)


def test_plain_yaml_still_reads_and_anchor_free_scalars_round_trip():
    assert loads("a: [1, 2]\nb: {c: d}\n") == {"a": [1, 2], "b": {"c": "d"}}
    assert loads("'*not-an-alias'") == "*not-an-alias"
    with pytest.raises(Exception, match="!!python"):
        loads("!!python/object/apply:os.system ['true']")


def test_stats_block_is_checked_when_read(tmp_path):
    path = tmp_path / "bench.yaml"
    path.write_text(f"name: t\ntasks: [{TINY_YAML}]\nmodels: [{{name: bm25}}]\nstats:\n  method: bcaa\n"
                    "  confidence: 95\n")
    with pytest.raises(ConfigProblems) as e:
        BenchmarkConfig.from_file(path)
    lines = str(e.value).splitlines()
    assert lines[0].startswith(f"{path}:5: stats.method: Input should be 'percentile' or 'bca'")
    assert lines[1].startswith(f"{path}:6: stats.confidence: Input should be less than 1")


def test_tasks_validate_json_lists_every_problem(tmp_path):
    path = _task(tmp_path, "lables: human\nmain_scroe: x\nsource:\n  format: beir\n  pth: kb\n")
    res = runner.invoke(app, ["tasks", "validate", str(path), "--format", "json"])
    assert res.exit_code == 2
    task = json.loads(res.output)["tasks"][0]
    assert task["errors"] == 3 and len(task["problems"]) == 3
    assert task["problems"][2] == f"{path}:7: unknown key 'pth' (did you mean 'path'?)"


def test_unknown_task_names_its_line_and_the_closest_task(tmp_path):
    path = write_benchmark(tmp_path, ["NorthwindKBRetrival"], models=[{"name": "bm25"}])
    line = path.read_text().splitlines().index("- NorthwindKBRetrival") + 1
    res = runner.invoke(app, ["run", "-c", str(path)])
    assert res.exit_code == 2
    assert (f"{path}:{line}: unknown task 'NorthwindKBRetrival' (did you mean 'NorthwindKBRetrieval'?)"
            in res.output.replace("\n", "")), res.output
    res = runner.invoke(app, ["tasks", "validate", "NorthwindKBRetrival"])
    assert res.exit_code == 2 and "(did you mean 'NorthwindKBRetrieval'?)" in res.output.replace("\n", "")


def test_every_yaml_read_goes_through_the_shared_loader():
    """One loader refuses aliases; a new `yaml.safe_load` elsewhere would read configs without that check."""
    import re

    pattern = re.compile(r"\byaml\.(safe_load|load|full_load|unsafe_load|compose|safe_load_all|load_all)\(")
    found = [f"{p.relative_to(REPO)}:{i}" for pkg in ("custom_tasks", "runners") for p in (REPO / pkg).rglob("*.py")
             if p.name != "yaml_io.py" for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if pattern.search(line)]
    assert found == [], f"read YAML with custom_tasks.yaml_io (read_yaml / loads) instead: {found}"


def test_a_key_written_twice_is_refused_at_its_second_line(tmp_path):
    path = tmp_path / "bench.yaml"
    path.write_text(f"name: t\ntasks: [{TINY_YAML}]\nmodels: [{{name: bm25}}]\ntasks: []\n")
    with pytest.raises(ConfigError, match=rf"bench.yaml:4: invalid YAML: key 'tasks' appears twice \(first on line 2\)"):
        BenchmarkConfig.from_file(path)
    assert loads("a: 1\nb: {a: 2}\n") == {"a": 1, "b": {"a": 2}}  # the same key in another mapping is fine
