"""Complete labels declared per question (issue 47): a `complete_labels` column of the questions (true/false, yes/no,
1/0, empty) says a question's every relevant document is labelled. Its unjudged pairs are then known 0s: no unjudged
mark, no pool row, no pooling suggestion, no open bound; the other questions keep theirs. The task's
`complete_labels: true` is every question declaring it: the same set (Collection.complete_questions), the same
output. A bad value is one line naming the file and line, exit 2."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from custom_tasks.collection import Collection
from custom_tasks.llm_labels import with_llm_labels
from custom_tasks.sources import load_collection
from runners.cli import app
from runners.config.benchmark import BenchmarkConfig
from runners.execution.run import run_benchmark
from runners.labels.notes.unjudged_mark import ASSUMED, ASSUMED_OTHERS, COMPLETE
from runners.labels.pool.judged import complete_line, judged_scores, known_zeros, ranked_ids, stored_rankings
from tests.conftest import REPO, TINY_YAML, write_benchmark

flat = lambda out: " ".join(out.split())  # noqa: E731  (rich wraps long lines)
TINY = REPO / "tests" / "fixtures" / "kb_tiny"
HALF = {"q1", "q3", "q5", "q7", "q9"}


def _queries(folder: Path, values: dict[str, object]) -> None:
    """kb_tiny's queries.jsonl with `complete_labels` set as given (a question not named: no field)."""
    rows = [json.loads(line) for line in (TINY / "queries.jsonl").read_text().splitlines() if line.strip()]
    for r in rows:
        if r["_id"] in values:
            r["complete_labels"] = values[r["_id"]]
    (folder / "queries.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """The tiny task run once; `declare(questions, task=False)` rewrites its questions file or YAML (notes only:
    the stored runs stay valid, the data revision does not see the declaration)."""
    base = tmp_path_factory.mktemp("complete-questions")
    shutil.copytree(TINY, base / "kb_tiny")
    yaml_path = base / "kb_tiny.yaml"
    plain = TINY_YAML.read_text().replace("../fixtures/kb_tiny", "kb_tiny")
    yaml_path.write_text(plain)
    path = write_benchmark(base, [str(yaml_path)])
    run_benchmark(BenchmarkConfig.from_file(path), show_progress=False)

    def declare(questions: set[str], task: bool = False) -> None:
        _queries(base / "kb_tiny", {q: True for q in questions})
        yaml_path.write_text(plain + ("complete_labels: true\n" if task else ""))

    return path, declare


def _out(*args: str) -> str:
    r = CliRunner().invoke(app, list(args))
    assert r.exit_code in (0, 1), r.output
    return r.output


def _status(path: Path) -> dict:
    return json.loads(_out("labels", "status", "-c", str(path), "--format", "json"))


def _unjudged(path: Path, skip: set[str], k: int = 10) -> int:
    """Unjudged pairs in the candidates' top-k, counted here from the stored rankings and the fixture's labels."""
    results = BenchmarkConfig.from_file(path).results_path
    qrels: dict[str, set[str]] = {}
    for line in (TINY / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        q, d, _ = line.split("\t")
        qrels.setdefault(q, set()).add(d)
    pairs = set()
    for dirname in (results / "results").glob("*"):
        model = json.loads(next(dirname.glob("*/model_meta.json")).read_text())["name"]
        rankings, _ = stored_rankings(results, model, "TinyKBRetrieval")
        pairs |= {(q, d) for q in qrels if q not in skip for d in ranked_ids(rankings.get(q, {}))[:k]
                  if d not in qrels[q]}
    return len(pairs)


def test_some_questions_complete_keep_the_others_marks(ran):
    path, declare = ran
    declare(set())
    none = _status(path)
    assert none["complete_labels"] == {"questions": 0, "of": 10}
    assert none["unjudged_in_pool"] == _unjudged(path, set()) > 0
    declare(HALF)
    half = _status(path)
    assert half["complete_labels"] == {"questions": 5, "of": 10}
    assert half["unjudged_in_pool"] == _unjudged(path, HALF) > 0  # the others' pairs stay, theirs are known 0s
    assert half["unjudged_in_pool"] < none["unjudged_in_pool"]
    assert half["confidence"]["basis"] == none["confidence"]["basis"]  # calibrated on people's grades, not the 0s
    for p, q in zip(half["pairs"], none["pairs"]):
        assert p["difference"] == pytest.approx(q["difference"])  # the scores do not change
        assert p["unjudged"] <= q["unjudged"]
    stats = flat(_out("stats", "-c", str(path), "-m", "ndcg_at_10", "--resamples", "200"))
    assert "labels: complete for 5 of 10 questions" in stats and flat(COMPLETE) not in stats
    assert flat(ASSUMED_OTHERS) in stats and flat(ASSUMED) not in stats, stats  # the others' assumption, said so
    assert re.search(r"unjudged: \S.* unjudged pairs in their top-10", stats), stats
    check = flat(_out("check", "-c", str(path), "--baseline", "BM25", "--candidate", "MiniLM", "--resamples", "200"))
    assert "labels: complete for 5 of 10 questions" in check and "judged@10" in check and flat(ASSUMED) not in check
    lint = json.loads(_out("tasks", "lint", "-c", str(path), "--format", "json"))
    (found,) = [f for t in lint["tasks"] for f in t["findings"] if f["check"] == "pooling_suggested"]
    suggested = {r["query"] for r in found["details"]}
    assert suggested and not suggested & HALF, found  # suggested for the others only
    out = path.parent / "pool.csv"
    shown = flat(_out("labels", "pool", "-c", str(path), "-o", str(out)))
    rows = [json.loads(line) for line in out.with_suffix(".jsonl").read_text().splitlines()]
    assert rows and not {r["query_id"] for r in rows} & HALF
    assert len(rows) == _unjudged(path, HALF) and "5 questions left out" in shown
    declare(set())


def test_every_question_declared_is_the_task_declaring_it(ran):
    path, declare = ran
    outputs = []
    for questions, task in ((set(), True), ({f"q{i}" for i in range(1, 11)}, False)):
        declare(questions, task)
        status = _out("labels", "status", "-c", str(path))
        as_json = _status(path)
        stats = flat(_out("stats", "-c", str(path), "-m", "ndcg_at_10", "--resamples", "200"))
        assert as_json["unjudged_in_pool"] == 0 and all(p["verdict"] == "settled" for p in as_json["pairs"])
        assert flat(COMPLETE) in stats and "unjudged" not in stats and "judged@10" not in stats, stats
        outputs.append((status, as_json, stats))
    assert outputs[0] == outputs[1]
    declare(set())


def _tables(tmp_path: Path, cells: list[str], mapped: str | None = None) -> Path:
    """A tables-format task whose queries.csv has a `complete_labels` column holding ``cells``."""
    data = tmp_path / "kb"
    data.mkdir()
    (data / "corpus.csv").write_text("_id,text\nd1,vpn setup\nd2,password reset\nd3,leave policy\n")
    (data / "queries.csv").write_text("_id,text,complete_labels\n" + "".join(
        f"q{i},question {i},{c}\n" for i, c in enumerate(cells, 1)))
    (data / "qrels.csv").write_text("query-id,corpus-id,score\n" + "".join(
        f"q{i},d{1 + i % 3},2\n" for i in range(1, len(cells) + 1)))
    columns = f"\n  columns: {{complete_labels: {mapped}}}" if mapped else ""
    yaml_path = tmp_path / "t.yaml"
    yaml_path.write_text("name: T\ndescription: d\nsource:\n  format: tables\n  corpus: kb/corpus.csv\n"
                         f"  queries: kb/queries.csv\n  qrels: kb/qrels.csv{columns}\n")
    return yaml_path


def test_the_values_a_column_may_hold(tmp_path):
    cells = ["true", "yes", "1", "TRUE", " Yes ", "false", "no", "0", ""]
    yaml_path = _tables(tmp_path, cells)
    from custom_tasks.config import TaskConfig

    cfg = TaskConfig.from_file(yaml_path)
    c = load_collection(cfg.source, cfg.base_dir, cfg.name)
    assert c.complete_questions == {"q1", "q2", "q3", "q4", "q5"}
    shown = flat(_out("tasks", "validate", str(yaml_path)))
    assert "labels declared complete for 5 of 9 queries" in shown


@pytest.mark.parametrize("value", ["maybe", "2", "yes please"])
def test_a_bad_value_is_one_line_and_exit_2(tmp_path, value):
    yaml_path = _tables(tmp_path, ["yes", value, ""])
    r = CliRunner().invoke(app, ["tasks", "validate", str(yaml_path)])
    assert r.exit_code == 2, r.output
    problem = [line for line in r.output.splitlines() if "complete_labels" in line]
    assert len(problem) == 1 and "queries.csv:3" in problem[0] and "write true or false" in problem[0], r.output
    assert "Traceback" not in r.output and "unknown query" not in r.output  # the question is kept: no echo


def test_a_mapped_column_must_be_there(tmp_path):
    yaml_path = _tables(tmp_path, ["yes", "no"], mapped="all_answers_known")
    r = CliRunner().invoke(app, ["tasks", "validate", str(yaml_path)])
    assert r.exit_code == 2 and "all_answers_known" in r.output and "Traceback" not in r.output, r.output
    text = (tmp_path / "kb" / "queries.csv").read_text().replace("complete_labels", "all_answers_known")
    (tmp_path / "kb" / "queries.csv").write_text(text)
    from custom_tasks.config import TaskConfig

    cfg = TaskConfig.from_file(yaml_path)
    assert load_collection(cfg.source, cfg.base_dir, cfg.name).complete_questions == {"q1"}


def test_a_judgments_table_declares_it_on_any_row_of_the_question(tmp_path):
    (tmp_path / "corpus.csv").write_text("_id,text\nd1,vpn\nd2,password\nd3,leave\n")
    (tmp_path / "j.csv").write_text("query_id,query,doc_id,grade,complete_labels\na,vpn?,d1,2,\na,vpn?,d2,0,yes\n"
                                    "b,password?,d2,2,no\n")
    c = load_collection({"format": "judgments", "corpus": "corpus.csv", "judgments": "j.csv"}, tmp_path, "T")
    assert c.complete_questions == {"a"}


def test_the_declaration_is_not_in_the_data_revision(tmp_path):
    shutil.copytree(TINY, tmp_path / "kb")
    before = load_collection({"format": "beir", "path": "kb"}, tmp_path, "T")
    _queries(tmp_path / "kb", {"q1": True, "q2": "no"})
    after = load_collection({"format": "beir", "path": "kb"}, tmp_path, "T")
    task = load_collection({"format": "beir", "path": "kb", "complete_labels": True}, tmp_path, "T")
    assert after.complete_questions == {"q1"} and task.complete_questions == set(task.queries)
    assert before.content_hash() == after.content_hash() == task.content_hash()  # scores do not change


def test_known_zeros_and_judged_share():
    qrels = {"a": {"d1": 2}, "b": {"d2": 1}}
    rankings = [{"a": {"d1": 3.0, "d3": 2.0, "d4": 1.0}, "b": {"d2": 2.0, "d5": 1.0}}, {"a": {"d6": 1.0}}]
    filled = known_zeros(qrels, rankings, {"a"}, k=2)
    assert filled == {"a": {"d1": 2, "d3": 0, "d6": 0}, "b": {"d2": 1}}  # top-2 only, a human grade kept
    assert qrels == {"a": {"d1": 2}, "b": {"d2": 1}}  # not changed in place
    assert judged_scores(rankings[0], qrels, 2, known={"a"}) == {"a": 1.0, "b": 0.5}  # b's d5: unjudged
    assert judged_scores(rankings[0], qrels, 3) == {"a": pytest.approx(1 / 3), "b": 0.5}
    assert complete_line(0, 10) is None and complete_line(10, 10) == COMPLETE
    assert complete_line(3, 10).startswith("labels: complete for 3 of 10 questions")


def test_llm_grades_never_fill_a_complete_question():
    c = Collection("T", {"d1": {"title": "", "text": "x"}, "d2": {"title": "", "text": "y"}}, {"a": "?", "b": "?"},
                   {"test": {"a": {"d1": 2}, "b": {"d1": 2}}}, complete_questions={"a"})
    filled, used = with_llm_labels(c, {("test", "a", "d2"): 2, ("test", "b", "d2"): 1}, "judge", "fill_unjudged")
    assert filled.qrels["test"] == {"a": {"d1": 2}, "b": {"d1": 2, "d2": 1}} and used.llm == 1


@pytest.mark.parametrize("order", ["decisive", "sample"])
def test_labels_plan_leaves_complete_questions_out(ran, tmp_path, order):
    path, declare = ran
    declare(HALF)
    extra = ["--questions", "3"] if order == "sample" else []
    out = flat(_out("labels", "plan", "-c", str(path), "--raters", "ana,bo", "--order", order, "--labels-dir",
                    str(tmp_path), *extra))
    plan = json.loads(next(tmp_path.rglob("plan.json")).read_text())
    planned = {k[1] for keys in plan["raters"].values() for k in keys}
    assert planned and not planned & HALF, out
    if order == "sample":
        assert plan["sample"]["of"] == 5 and not set(plan["sample"]["questions"]) & HALF
        assert "5 questions with labels declared complete left out" in out
    declare(set())
