"""Judging without a browser: grade definitions in the YAML, the plan, raters' files (broken lines named and
skipped), `labels agreement` against scikit-learn / krippendorff, the merge rules, `labels merge` changing the
data revision, and bad input as one line with exit 2."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from custom_tasks.config import DEFAULT_GRADES, TaskConfig
from custom_tasks.errors import ConfigError
from custom_tasks.sources import load_collection
from judging_fixture import write_task
from runners.labels.raters.ratings import merge_grades, read_rater_file
from runners.cli import app
from runners.labels.judging.plan import make_plan

runner = CliRunner()
TASK = "TinyKBRetrieval"


def _invoke(args: list[str]) -> tuple[int, str]:
    r = runner.invoke(app, [str(a) for a in args])
    assert "Traceback" not in r.output, r.output
    return r.exit_code, r.output


def _write(folder: Path, rater: str, grades: dict[tuple[str, str], int | None], extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{rater}.jsonl"
    rows = [{"task": TASK, "split": "test", "query_id": q, "doc_id": d, "grade": g,
             "status": "graded" if g is not None else "skip", "rater": rater,
             "time": f"2026-01-01T10:{i // 60:02d}:{i % 60:02d}+00:00"} for i, ((q, d), g) in enumerate(grades.items())]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + extra)
    return path


@pytest.fixture
def task(tmp_path):
    return write_task(tmp_path, n_pool=60)


def _pairs(pool: Path) -> list[tuple[str, str]]:
    return [(r["query_id"], r["doc_id"]) for r in map(json.loads, pool.read_text().splitlines())]


def _two_raters(yaml_path: Path, pool: Path, seed: int = 0) -> tuple[Path, np.ndarray, np.ndarray]:
    pairs = _pairs(pool)[:50]
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, len(pairs))
    b = np.where(rng.random(len(pairs)) < 0.3, rng.integers(0, 3, len(pairs)), a)
    folder = yaml_path.parent / "labels" / TASK
    _write(folder, "ana", dict(zip(pairs, a.tolist())))
    _write(folder, "bo", dict(zip(pairs[:40], b[:40].tolist())))  # bo graded 40 of them
    return folder, a[:40], b[:40]


# --- grade definitions --------------------------------------------------------------------------------------

def _yaml(tmp_path: Path, extra: str) -> Path:
    p = tmp_path / "t.yaml"
    p.write_text("name: T\ndescription: d\nsource: {format: beir, path: kb}\n" + extra)
    return p


def test_default_scale_and_custom_grades_change_the_settings(tmp_path):
    default = TaskConfig.from_file(_yaml(tmp_path, ""))
    assert default.grades == DEFAULT_GRADES and default.grade_scale == [0, 1, 2] and default.merge == "median"
    custom = TaskConfig.from_file(_yaml(tmp_path, "grades: {3: perfect, 2: good, 1: fair, 0: bad}\nmerge: majority\n"))
    assert custom.grade_scale == [0, 1, 2, 3] and custom.merge == "majority"
    assert custom.settings_fingerprint() != default.settings_fingerprint()  # results made before are re-scored
    same = TaskConfig.from_file(_yaml(tmp_path, "grades: {0: not relevant, 1: partly answers or gives needed "
                                                "context, 2: answers the question}\n"))
    assert same.settings_fingerprint() == default.settings_fingerprint()  # the default, spelt out


@pytest.mark.parametrize("extra, message", [
    ("grades: {2: relevant}\n", "at least two levels"),
    ("grades: {high: yes, 0: no}\n", "'high' is not a whole number"),
    ("grades: {1.5: yes, 0: no}\n", "is not a whole number"),
    ("grades: {-1: yes, 0: no}\n", "is not a whole number >= 0"),
    ("grades: {1: '', 0: no}\n", "needs a meaning"),
    ("grades: [0, 1]\n", "must be a mapping"),
    ("merge: mean\n", "'median', 'majority' or 'adjudicated'"),
])
def test_bad_grades_are_one_line_naming_the_yaml_line(tmp_path, extra, message):
    with pytest.raises(ConfigError) as e:
        TaskConfig.from_file(_yaml(tmp_path, extra))
    assert message in str(e.value) and "t.yaml:4" in str(e.value) and "\n" not in str(e.value)


# --- plan ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n, overlap", [(100, 0.2), (37, 0.5), (10, 0.0), (9, 1.0)])
def test_plan_gives_the_overlap_two_raters_and_balances_loads(n, overlap):
    keys = [("test", f"q{i}", f"d{i}") for i in range(n)]
    share = make_plan(keys, ["ana", "bo", "cy"], overlap, seed=3)
    counts = {k: sum(k in set(v) for v in share.values()) for k in keys}
    assert all(c >= 1 for c in counts.values())
    assert sum(c >= 2 for c in counts.values()) == math.ceil(overlap * n)
    loads = [len(v) for v in share.values()]
    assert max(loads) - min(loads) <= 1
    if overlap:
        pairs = {tuple(sorted(r for r, v in share.items() if k in v)) for k in keys if counts[k] == 2}
        assert len(pairs) == 3 or math.ceil(overlap * n) < 3  # every pair of raters shares items
    assert make_plan(keys, ["ana", "bo", "cy"], overlap, seed=3) == share


def test_plan_cli_and_serve_uses_the_share(task, tmp_path):
    yaml_path, pool = task
    code, out = _invoke(["labels", "plan", "-t", yaml_path, "--pool", pool, "--raters", "ana,bo,cy",
                         "--overlap", "0.2"])
    assert code == 0, out
    plan = json.loads((yaml_path.parent / "labels" / TASK / "plan.json").read_text())
    assert sum(len(v) for v in plan["raters"].values()) == 60 + 12
    from runners.labels.judging.items import items_from_pool
    from runners.labels.judging.server import open_session

    cfg = TaskConfig.from_file(yaml_path)
    coll = load_collection(cfg.source, cfg.base_dir, cfg.name)
    s = open_session(cfg, coll, items_from_pool(pool, cfg, coll), "bo", yaml_path.parent / "labels" / TASK)
    try:
        assert s.of_plan and sorted(it.key for it in s.session.items) == sorted(map(tuple, plan["raters"]["bo"]))
    finally:
        s.session.close()
    code, out = _invoke(["labels", "serve", "-t", yaml_path, "--pool", pool, "--rater", "dee"])
    assert code == 2 and "plans no items for 'dee'" in out


# --- raters' files and agreement ------------------------------------------------------------------------------

def test_agreement_json_equals_scikit_learn_and_krippendorff(task):
    sk = pytest.importorskip("sklearn.metrics")
    kr = pytest.importorskip("krippendorff")
    yaml_path, pool = task
    folder, a, b = _two_raters(yaml_path, pool)
    code, out = _invoke(["labels", "agreement", "-t", yaml_path, "--format", "json", "--resamples", "300"])
    assert code == 0, out
    rep = json.loads(out)
    pair = rep["pairs"][0]
    assert (pair["a"], pair["b"], pair["n"]) == ("ana", "bo", 40)
    assert pair["kappa"]["estimate"] == pytest.approx(sk.cohen_kappa_score(a, b), abs=1e-9)
    assert pair["kappa_quadratic"]["estimate"] == pytest.approx(sk.cohen_kappa_score(a, b, weights="quadratic"),
                                                                abs=1e-9)
    assert pair["kappa_quadratic"]["low"] <= pair["kappa_quadratic"]["estimate"] <= pair["kappa_quadratic"]["high"]
    assert pair["confusion"] == sk.confusion_matrix(a, b, labels=[0, 1, 2]).tolist()
    ana = read_rater_file(folder / "ana.jsonl", TaskConfig.from_file(yaml_path)).graded
    m = np.array([[v for v in ana.values()], [*b.tolist(), *[np.nan] * 10]], dtype=float)
    assert rep["alpha"]["estimate"] == pytest.approx(kr.alpha(reliability_data=m, level_of_measurement="ordinal"),
                                                     abs=1e-9)
    assert rep["differ_by_two"] == pytest.approx(float(np.mean(np.abs(a - b) >= 2)))
    assert len(rep["disagreements"]) == int((a != b).sum())
    assert rep["n_items"] == 50 and rep["n_multi"] == 40
    assert rep["sentence"].startswith("two raters agree")


def test_agreement_text_and_csv(task):
    yaml_path, pool = task
    _two_raters(yaml_path, pool)
    code, out = _invoke(["labels", "agreement", "-t", yaml_path, "--resamples", "200"])
    assert code == 0, out
    assert "weighted kappa" in out and "Krippendorff's alpha" in out and "disagreements to adjudicate" in out
    assert "ana (rows) vs bo" in out
    code, out = _invoke(["labels", "agreement", "-t", yaml_path, "--format", "csv", "--resamples", "200"])
    assert code == 0 and out.splitlines()[0].startswith("statistic,rater_a,rater_b,n,estimate")
    assert len(out.strip().splitlines()) == 4  # two kappas and alpha


def test_a_broken_line_is_named_and_skipped_and_the_rest_kept(task):
    yaml_path, pool = task
    folder, _, _ = _two_raters(yaml_path, pool)
    with open(folder / "bo.jsonl", "a") as f:
        f.write('{"task": "TinyKBRetrieval", "split": "test", "query_id": "q1"\n')  # edited by hand
        f.write(json.dumps({"task": TASK, "split": "test", "query_id": "q2", "doc_id": "vpn-mac", "grade": 5,
                            "status": "graded", "rater": "bo"}) + "\n")
    code, out = _invoke(["labels", "agreement", "-t", yaml_path, "--format", "json", "--resamples", "100"])
    assert code == 0
    assert "bo.jsonl:41: not a JSON line" in out and "bo.jsonl:42: grade 5 is outside the task's scale [0, 1, 2]" in out
    assert json.loads(out[out.index("{"):])["pairs"][0]["n"] == 40  # the other lines are kept


@pytest.mark.parametrize("rule, grades, want", [
    ("median", [0, 2], 0), ("median", [1, 2, 2], 2), ("majority", [0, 0, 2], 0), ("majority", [0, 2], 0),
    ("majority", [1, 2, 2, 0], 2), ("adjudicated", [2, 2], 2), ("adjudicated", [0, 2], None),
])
def test_merge_rules(rule, grades, want):
    assert merge_grades(grades, rule) == want
    assert merge_grades([0, 2], "adjudicated", adjudicated=1) == 1


def test_merge_writes_every_rating_and_changes_the_data_revision(task):
    yaml_path, pool = task
    folder, a, b = _two_raters(yaml_path, pool)
    cfg = TaskConfig.from_file(yaml_path)
    before = load_collection(cfg.source, cfg.base_dir, cfg.name)
    code, out = _invoke(["labels", "merge", "-t", yaml_path])
    assert code == 0, out
    assert f"data revision {before.content_hash()} ->" in out and "re-scores every candidate" in out
    cfg = TaskConfig.from_file(yaml_path)
    assert cfg.source["labels_file"] == "kb.labels.jsonl"
    rows = [json.loads(x) for x in (yaml_path.parent / "kb.labels.jsonl").read_text().splitlines()]
    assert len(rows) == 50 and {r["source"] for r in rows} == {"judged"}
    two = [r for r in rows if len(r["ratings"]) == 2]
    assert len(two) == 40 and all({x["rater"] for x in r["ratings"]} == {"ana", "bo"} and
                                  all(x["time"] for x in r["ratings"]) for r in two)
    assert all(r["grade"] == min(x["grade"] for x in r["ratings"]) for r in two)  # median of two: the lower
    after = load_collection(cfg.source, cfg.base_dir, cfg.name)
    for r in rows:  # the merged grade is what mteb scores
        assert after.qrels["test"][r["query_id"]][r["doc_id"]] == r["grade"]
    code, out = _invoke(["labels", "merge", "-t", yaml_path])
    assert code == 0 and "(unchanged)" in out


def test_adjudicated_merge_waits_for_the_adjudicator(task):
    yaml_path, pool = task
    yaml_path.write_text(yaml_path.read_text() + "merge: adjudicated\n")
    folder, a, b = _two_raters(yaml_path, pool)
    code, out = _invoke(["labels", "merge", "-t", yaml_path])
    n_dis = int((a != b).sum())
    assert code == 0 and f"{n_dis} disagreement(s) left for the adjudicator" in out
    pairs = _pairs(pool)[:40]
    first = next(p for p, x, y in zip(pairs, a, b) if x != y)
    _write(folder, "adjudication", {first: 1})
    _invoke(["labels", "merge", "-t", yaml_path])
    rows = {(r["query_id"], r["doc_id"]): r for r in map(json.loads, (yaml_path.parent / "kb.labels.jsonl")
                                                         .read_text().splitlines())}
    assert rows[first]["grade"] == 1 and any(x.get("adjudicated") for x in rows[first]["ratings"])
    assert len(rows) == 50 - n_dis + 1


# --- bad input: one line, exit 2 ------------------------------------------------------------------------------

def test_a_pool_for_another_task_is_refused(task, tmp_path):
    yaml_path, pool = task
    other = tmp_path / "other.jsonl"
    other.write_text(pool.read_text().replace(TASK, "NorthwindKBRetrieval"))
    code, out = _invoke(["labels", "serve", "-t", yaml_path, "--pool", other, "--rater", "ana"])
    assert code == 2 and "a pool for task 'NorthwindKBRetrieval', not 'TinyKBRetrieval'" in out
    assert len(out.strip().splitlines()) == 1
    unnamed = tmp_path / "unnamed.jsonl"
    unnamed.write_text(json.dumps({"query_id": "q1", "doc_id": "no-such-doc"}) + "\n")
    code, out = _invoke(["labels", "serve", "-t", yaml_path, "--pool", unnamed, "--rater", "ana"])
    assert code == 2 and "is this a pool for another task?" in out


def test_a_grade_outside_the_scale_is_refused_on_import(task, tmp_path):
    yaml_path, pool = task
    q, d = _pairs(pool)[0]
    filled = tmp_path / "filled.jsonl"
    filled.write_text(json.dumps({"query_id": q, "doc_id": d, "grade": 3}) + "\n")
    code, out = _invoke(["labels", "import", filled, "-t", yaml_path])
    assert code == 2 and "grade 3 is outside the task's scale [0, 1, 2]" in out and "filled.jsonl:1" in out


def test_a_rater_name_may_not_take_another_raters_file(task):
    yaml_path, pool = task
    _write(yaml_path.parent / "labels" / TASK, "ana", {_pairs(pool)[0]: 2})
    code, out = _invoke(["labels", "serve", "-t", yaml_path, "--pool", pool, "--rater", "Ana"])
    assert code == 2 and "belongs to 'ana'" in out
    for bad in ("../ana", "adjudication", ""):
        code, out = _invoke(["labels", "serve", "-t", yaml_path, "--pool", pool, "--rater", bad])
        assert code == 2 and "--rater" in out


def test_a_server_refuses_a_grade_outside_the_scale(task):
    from starlette.testclient import TestClient

    from runners.labels.judging.app import make_app
    from runners.labels.judging.items import items_from_pool
    from runners.labels.judging.server import open_session

    yaml_path, pool = task
    cfg = TaskConfig.from_file(yaml_path)
    coll = load_collection(cfg.source, cfg.base_dir, cfg.name)
    s = open_session(cfg, coll, items_from_pool(pool, cfg, coll), "ana", yaml_path.parent / "labels" / TASK)
    app, token = make_app(s.session)
    try:
        client = TestClient(app, headers={"X-Judging-Token": token})
        for body in ({"index": 0, "grade": 3}, {"index": 0, "grade": True}, {"index": 0, "grade": "2"},
                     {"index": 99, "grade": 2}, {"index": 0, "grade": 1, "status": "maybe"}):
            assert client.post("/api/judge", json=body).status_code == 400, body
        assert client.post("/api/judge", json={"index": 0, "grade": 1}).status_code == 200
    finally:
        s.session.close()
    assert len((yaml_path.parent / "labels" / TASK / "ana.jsonl").read_text().splitlines()) == 1


def test_serve_from_a_config_pools_the_candidates_top_k_itself(task, tmp_path):
    """`labels serve -c CONFIG --depth k`: the unlabelled pairs of the candidates' stored top-k, no pool file."""
    from fake_results import QUERIES, scores, write_config, write_model
    from runners.cli.labels_judging import _task_and_items
    from runners.results.store import atomic_write_json, run_dir

    yaml_path, _ = task
    results = tmp_path / "results"
    docs = ["vpn-mac", "pwd", "wifi", "printer", "deploy"]
    for seed, name in enumerate(("acme/one", "acme/two")):
        write_model(results, name, TASK, scores(0.6, seed), name)
        order = docs if seed == 0 else docs[::-1]
        rankings = {q: {d: 1.0 - i / 10 for i, d in enumerate(order)} for q in QUERIES}
        atomic_write_json(run_dir(results, name, "r1", TASK, "ds1") / "rankings_test.json.gz",
                          {"top_k": 100, "subsets": {"default": rankings}}, compress=True)
    bench = write_config(tmp_path / "bench.yaml", results, [str(yaml_path)],
                         [{"name": "acme/one", "label": "One"}, {"name": "acme/two", "label": "Two"}])
    cfg, coll, items = _task_and_items(None, None, bench, 2, None, "test", 0)
    want = {("test", q, d) for q in QUERIES for d in (docs[:2] + docs[::-1][:2]) if d not in coll.qrels["test"][q]}
    assert {it.key for it in items} == want and len(items) == len(want)
    assert cfg.name == TASK


def test_another_host_needs_host_and_gets_a_warning(task):
    """Loopback by default (the URL of every other test is 127.0.0.1); `--host 0.0.0.0` warns before serving."""
    import os
    import subprocess
    import sys

    from conftest import REPO
    from runners.labels.judging.server import is_loopback

    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5")
    yaml_path, pool = task
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
    # the non-loopback bind happens inside a network namespace of its own (no interface but a down lo), so the
    # test never listens on this machine's real interfaces
    import shutil

    if not shutil.which("unshare") or subprocess.run(["unshare", "-n", "true"]).returncode != 0:
        pytest.skip("unshare -n (util-linux, root) is needed to bind a non-loopback address in isolation")
    proc = subprocess.Popen(["unshare", "-n", sys.executable, "-m", "runners.cli", "labels", "serve", "-t", str(yaml_path), "--pool",
                             str(pool), "--rater", "ana", "--host", "0.0.0.0", "--port", "0"], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = ""
    try:
        for line in proc.stdout:
            seen += line
            if "judging app: http://0.0.0.0:" in line:
                break
    finally:
        proc.terminate()
        proc.wait(10)
    assert "warning: listening on 0.0.0.0: anyone who can reach this machine" in seen, seen
    assert "judging app: http://0.0.0.0:" in seen


def _client(yaml_path: Path, pool: Path, rater: str, adjudicate: bool = False):
    from starlette.testclient import TestClient

    from runners.labels.judging.app import make_app
    from runners.labels.judging.items import items_from_pool
    from runners.labels.judging.server import open_session

    cfg = TaskConfig.from_file(yaml_path)
    coll = load_collection(cfg.source, cfg.base_dir, cfg.name)
    s = open_session(cfg, coll, items_from_pool(pool, cfg, coll), rater, yaml_path.parent / "labels" / TASK,
                     adjudicate=adjudicate)
    app, token = make_app(s.session)
    return s.session, TestClient(app, headers={"X-Judging-Token": token})


def test_the_screen_is_blind(task):
    """An item carries the question, the document and the rater's own judgment: no candidate, rank or score."""
    yaml_path, pool = task
    session, client = _client(yaml_path, pool, "ana")
    try:
        item = client.get("/api/item/0").json()
        # key: (split, question id, document id), which the page sends back with the grade (a re-planned order
        # can move items: the server refuses a grade whose pair is no longer at that place); no candidate in it
        assert set(item) == {"index", "key", "query", "title", "text", "terms", "grade", "status", "progress"}
        page = client.get("/").text
        assert "nonce-" in client.get("/").headers["content-security-policy"]
        assert "answers the question" in page and "not relevant" in page  # the grade definitions
    finally:
        session.close()


def test_adjudication_serves_the_disagreements_and_decides_them(task):
    yaml_path, pool = task
    yaml_path.write_text(yaml_path.read_text() + "merge: adjudicated\n")
    folder, a, b = _two_raters(yaml_path, pool)
    session, client = _client(yaml_path, pool, "cy", adjudicate=True)
    try:
        assert len(session.items) == int((a != b).sum())  # only the disagreements
        for i in range(len(session.items)):
            assert client.post("/api/judge", json={"index": i, "grade": 1}).status_code == 200
    finally:
        session.close()
    adj = lines_of(folder / "adjudication.jsonl")
    assert {r["rater"] for r in adj} == {"cy"} and len(adj) == int((a != b).sum())
    code, out = _invoke(["labels", "merge", "-t", yaml_path])
    assert code == 0 and "left for the adjudicator" not in out
    rows = [json.loads(x) for x in (yaml_path.parent / "kb.labels.jsonl").read_text().splitlines()]
    decided = [r for r in rows if any(x.get("adjudicated") for x in r["ratings"])]
    assert len(rows) == 50 and len(decided) == int((a != b).sum()) and {r["grade"] for r in decided} == {1}


def lines_of(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def test_judged_from_pool_is_the_labels_file_and_the_raters_never_the_collections_own_labels(task):
    """The calibration sample of `labels status` (label_merge.judged_from_pool): grades people gave to pooled pairs
    (the raters' files, and once merged or imported the labels file), never the collection's own labels."""
    from runners.labels.raters.label_merge import judged_from_pool

    yaml_path, pool = task
    cfg = TaskConfig.from_file(yaml_path)
    own = load_collection(cfg.source, cfg.base_dir, cfg.name).qrels["test"]
    assert judged_from_pool(cfg, "test") == {}  # nobody judged from the pool: the own labels are not a sample of it
    folder, a, b = _two_raters(yaml_path, pool)
    merged = {(q, d): g for (s, q, d), g in merge_all_for(cfg, folder).items() if s == "test"}
    assert judged_from_pool(cfg, "test") == merged and len(merged) == 50
    assert not any(d in own.get(q, {}) for q, d in merged)  # pooled pairs only
    code, out = _invoke(["labels", "merge", "-t", yaml_path])
    assert code == 0, out
    shutil.rmtree(folder)  # the raters' files gone: the labels file still says what people judged from the pool
    assert judged_from_pool(TaskConfig.from_file(yaml_path), "test") == merged


def merge_all_for(cfg: TaskConfig, folder: Path) -> dict:
    from runners.labels.raters.label_merge import merged_for_task

    return merged_for_task(cfg, folder)[0].grades
