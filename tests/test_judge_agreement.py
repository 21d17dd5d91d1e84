"""`labels agreement --judge`: the LLM judge vs human grades, at the label and the system level (issue 32).

Kappa and TPR/TNR equal scikit-learn, Kendall's tau equals scipy (both imported here only), tau-AP equals its
definition worked by hand, and the rescored human-only means equal the stored mteb scores of a real run.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score, recall_score
from typer.testing import CliRunner

from runners.labels.judge.judge_agreement import (JudgeAgreementReport, SystemAgreement, label_agreement,
                                                  verdict_sentence)
from runners.labels.judge.rank_agreement import kendall_tau_b, tau_ap
from runners.cli import app

SCALE = [0, 1, 2]


def _random_grades(seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    human = rng.choice(SCALE, size=n, p=[0.5, 0.2, 0.3])
    noise = rng.random(n) < 0.35
    return human, np.where(noise, rng.choice(SCALE, size=n), human)


@pytest.mark.parametrize("seed", range(20))
def test_kappa_and_rates_equal_scikit_learn(seed: int) -> None:
    human, llm = _random_grades(seed, int(np.random.default_rng(seed).integers(15, 200)))
    lab = label_agreement(human, llm, SCALE, n_resamples=100, seed=seed)
    assert abs(lab.kappa.estimate - cohen_kappa_score(human, llm)) < 1e-9
    assert abs(lab.kappa_quadratic.estimate - cohen_kappa_score(human, llm, weights="quadratic")) < 1e-9
    rel_h, rel_l = (human >= 1).astype(int), (llm >= 1).astype(int)
    assert abs(lab.tpr.estimate - recall_score(rel_h, rel_l, pos_label=1)) < 1e-9
    assert abs(lab.tnr.estimate - recall_score(rel_h, rel_l, pos_label=0)) < 1e-9
    for g in SCALE:
        hg, lg = (human == g).astype(int), (llm == g).astype(int)
        if hg.any() and (1 - hg).any():
            assert abs(lab.per_grade[g]["tpr"].estimate - recall_score(hg, lg, pos_label=1)) < 1e-9
            assert abs(lab.per_grade[g]["tnr"].estimate - recall_score(hg, lg, pos_label=0)) < 1e-9
    assert lab.kappa.low <= lab.kappa.estimate <= lab.kappa.high
    counts = np.bincount(human, minlength=3)
    assert lab.majority_accuracy == counts.max() / len(human)
    assert lab.majority_grade == max(SCALE, key=lambda g: (counts[g], g))


@pytest.mark.parametrize("seed", range(30))
def test_kendall_tau_equals_scipy_with_ties(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 12))
    x, y = rng.integers(0, 5, n).astype(float), rng.integers(0, 5, n).astype(float)  # ties on both sides
    expected = kendalltau(x, y).statistic
    got = kendall_tau_b(x, y)
    assert (np.isnan(expected) and np.isnan(got)) or abs(got - expected) < 1e-9


def _tau_ap_paper(truth: list[str], evaluated: list[str]) -> Fraction:
    """tau-AP as Yilmaz, Aslam & Robertson (2008, "A new rank correlation coefficient for information retrieval",
    eq. 3) define it, written here apart from the product, in exact fractions: with the items in the order of the
    *evaluated* list (the system's), tau_AP = 2/(N-1) * sum_{i=2..N} C(i)/(i-1) - 1, where C(i) is the number of
    items above rank i of the evaluated list that the actual (true) ranking also places above the item at rank i."""
    pos = {item: r for r, item in enumerate(truth)}
    n = len(evaluated)
    total = sum(Fraction(sum(pos[a] < pos[evaluated[i]] for a in evaluated[:i]), i) for i in range(1, n))
    return Fraction(2, n - 1) * total - 1


def _scores(order: list[str], names: list[str]) -> list[float]:
    """Scores (higher = better) that rank ``names`` in ``order``."""
    return [float(len(order) - order.index(x)) for x in names]


def test_tau_ap_by_hand() -> None:
    ref = [4.0, 3.0, 2.0, 1.0]  # A > B > C > D
    assert tau_ap(ref, ref) == 1.0 and tau_ap(ref, ref[::-1]) == -1.0
    # a swap at the top costs more than one at the bottom (Kendall's tau: 2/3 for both)
    top, bottom = [3.0, 4.0, 2.0, 1.0], [4.0, 3.0, 1.0, 2.0]
    assert abs(tau_ap(ref, top) - 1 / 3) < 1e-12  # 2/3 * (0/1 + 2/2 + 3/3) - 1
    assert abs(tau_ap(ref, bottom) - (2 / 3 * (1 + 1 + 2 / 3) - 1)) < 1e-12
    assert abs(kendall_tau_b(ref, top) - kendall_tau_b(ref, bottom)) < 1e-12


def test_tau_ap_orders_by_the_evaluated_ranking() -> None:
    """Humans rank A > B > C > D > E, the LLM grades rank A > B > E > C > D (one candidate moved up two places).
    Ordered by the evaluated (LLM) list: C(2..5) = 1/1, 2/2, 2/3, 3/4, so tau-AP = 1/2 * (1 + 1 + 2/3 + 3/4) - 1 =
    17/24 = 0.7083; ordering by the human list instead gives 1/2 * (1 + 1 + 1 + 2/4) - 1 = 0.75, the old answer."""
    names = list("ABCDE")
    truth, evaluated = list("ABCDE"), list("ABECD")
    assert _tau_ap_paper(truth, evaluated) == Fraction(17, 24)
    got = tau_ap(_scores(truth, names), _scores(evaluated, names))
    assert round(got, 4) == 0.7083 and abs(got - 17 / 24) < 1e-12
    # the paper's point, on five items: the same Kendall's tau, a swap at the top costs more than one at the bottom
    top, bottom = list("BACDE"), list("ABCED")
    assert _tau_ap_paper(truth, top) == Fraction(1, 2) and _tau_ap_paper(truth, bottom) == Fraction(7, 8)
    assert tau_ap(_scores(truth, names), _scores(top, names)) == pytest.approx(0.5, abs=1e-12)
    assert tau_ap(_scores(truth, names), _scores(bottom, names)) == pytest.approx(0.875, abs=1e-12)


@pytest.mark.parametrize("seed", range(25))
def test_tau_ap_equals_the_papers_definition(seed: int) -> None:
    """Random permutations of 3..9 candidates: the product's tau-AP equals the definition above (not symmetric)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 10))
    names = [f"c{i}" for i in range(n)]
    truth, evaluated = list(rng.permutation(names)), list(rng.permutation(names))
    got = tau_ap(_scores(truth, names), _scores(evaluated, names))
    assert abs(got - float(_tau_ap_paper(truth, evaluated))) < 1e-12


def _report(kw: tuple[float, float, float], ceiling: float | None, tau: float, flips: list[str]) -> JudgeAgreementReport:
    from runners.labels.raters.agreement import Interval

    human, llm = _random_grades(0, 50)
    lab = label_agreement(human, human, SCALE, 100)
    lab.kappa_quadratic = Interval(*kw, 50, 100)
    lab.accuracy = 1.0
    if ceiling is not None:
        lab.ceiling = {"raters": ["ana", "bo"], "n": 40, "kappa_quadratic": Interval(ceiling, 0.5, 0.7, 40, 100)}
    sys_ = SystemAgreement("ndcg_at_10", list("ABCDE"), 100, [0.5] * 5, [0.5] * 5, tau, 0.8, 1.0, tau, 30, flips)
    return JudgeAgreementReport("T", "j", "llm:m", lab, sys_)


def test_verdict_sentence_says_it_plainly() -> None:
    same = verdict_sentence(_report((0.58, 0.49, 0.66), 0.63, 1.0, []))
    assert same == ("LLM labels agree with humans about as well as humans agree with each other (weighted kappa "
                    "0.58 [0.49, 0.66] vs 0.63, 50 pairs); the ranking of 5 candidates is unchanged (tau 1.00 [0.80, "
                    "1.00]); no significant verdict flips")
    worse = verdict_sentence(_report((0.30, 0.20, 0.40), 0.63, 0.6, ["A vs B: A better -> no significant difference"]))
    assert "less well than humans agree" in worse and "changes (tau 0.60" in worse and "1 significant verdict" in worse
    alone = verdict_sentence(_report((0.30, 0.20, 0.40), None, 1.0, []))
    assert "agree fairly with humans" in alone and "no two human raters" in alone


# ------------------------------------------------------------------------------------------- end to end


def _rater_file(folder: Path, task: str, rater: str, grades: dict[tuple[str, str], int]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{rater}.jsonl").write_text("".join(
        json.dumps({"task": task, "split": "test", "query_id": q, "doc_id": d, "grade": g, "status": "graded",
                    "rater": rater, "time": "2026-12-01T10:00:00"}) + "\n" for (q, d), g in grades.items()))


@pytest.mark.slow  # a real BM25 run (mteb's import alone takes ~30 s on a shared CPU)
def test_agreement_end_to_end_on_a_real_run(tiny_copy: Path, tmp_path: Path) -> None:
    from custom_tasks.config import TaskConfig
    from custom_tasks.sources import load_collection
    from fake_judge import FakeJudge
    from test_judge import bench, judge, truth_rule, write_pool

    cfg = TaskConfig.from_file(tiny_copy)
    c = load_collection(cfg.source, cfg.base_dir, cfg.name)
    fake = FakeJudge(rule=truth_rule(c))
    server, url = fake.start()
    try:
        path = bench(tmp_path, tiny_copy, url)
        data = yaml.safe_load(path.read_text())
        data["models"] = [{"name": "bm25"}]
        path.write_text(yaml.safe_dump(data))
        assert CliRunner().invoke(app, ["run", "-c", str(path)]).exit_code == 0
        judge(path, write_pool(tmp_path, c), "--also-judged")
    finally:
        server.shutdown()
        server.server_close()
    pairs = sorted((q, d) for q, docs in c.qrels["test"].items() for d in docs)
    ana = {p: c.qrels["test"][p[0]][p[1]] for p in pairs}
    bo = {p: (0 if i % 3 == 0 else g) for i, (p, g) in enumerate(ana.items())}
    _rater_file(tmp_path / "labels" / cfg.name, cfg.name, "ana", ana)
    _rater_file(tmp_path / "labels" / cfg.name, cfg.name, "bo", bo)
    r = CliRunner().invoke(app, ["labels", "agreement", "--judge", "-c", str(path), "--format", "json",
                                 "--labels-dir", str(tmp_path / "labels"), "--resamples", "200"])
    assert r.exit_code == 0, r.output
    rep = json.loads(r.stdout)
    lab = rep["labels"]
    human = [c.qrels["test"][q][d] for q, d in pairs]
    llm = [0 if (q, d) == ("q1", "vpn-win") else c.qrels["test"][q][d] for q, d in pairs]  # the injected disagreement
    assert lab["n"] == 12 and lab["confusion"] == confusion(human, llm)
    assert abs(lab["kappa_quadratic"]["estimate"] - cohen_kappa_score(human, llm, weights="quadratic")) < 1e-9
    ceiling = cohen_kappa_score([ana[p] for p in pairs], [bo[p] for p in pairs], weights="quadratic")
    assert rep["labels"]["ceiling"]["raters"] == ["ana", "bo"]
    assert abs(rep["labels"]["ceiling"]["kappa_quadratic"]["estimate"] - ceiling) < 1e-9
    # system level: under human labels the rescored mean is the stored mteb score, to 1e-9
    from runners.results.store import load_per_query

    stored = load_per_query(tmp_path / "results", "mteb/baseline-bm25s", cfg.name, "ndcg_at_10")
    assert abs(rep["system"]["human_means"][0] - float(stored.mean())) < 1e-9
    assert rep["system"]["llm_filled"] == 108 and rep["llm_only"] == 108
    assert rep["sentence"].startswith("LLM labels agree with humans")
    # the report's Labels section shows it (and no text of the collection)
    html = tmp_path / "r.html"
    r = CliRunner().invoke(app, ["report", "-c", str(path), "-o", str(html)])
    assert r.exit_code == 0, r.output
    body = html.read_text()
    assert "llm:fake-judge-1 vs human grades on 12 pairs" in body and "LLM labels agree with humans" in body


def confusion(a: list[int], b: list[int]) -> list[list[int]]:
    out = [[0] * 3 for _ in range(3)]
    for x, y in zip(a, b):
        out[x][y] += 1
    return out


def test_agreement_without_a_judge_or_grades_is_one_line(tiny_copy: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "b.yaml"
    cfg.write_text(yaml.safe_dump({"name": "b", "tasks": [str(tiny_copy)], "models": [{"name": "bm25"}],
                                   "results_dir": str(tmp_path / "r")}))
    r = CliRunner().invoke(app, ["labels", "agreement", "--judge", "-c", str(cfg)])
    assert r.exit_code == 2 and "no `judge:`" in r.output and "Traceback" not in r.output
    data = yaml.safe_load(cfg.read_text())
    data["judge"] = {"endpoint": "http://127.0.0.1:9/v1", "model": "m"}
    cfg.write_text(yaml.safe_dump(data))
    r = CliRunner().invoke(app, ["labels", "agreement", "--judge", "-c", str(cfg), "--format", "json"])
    assert r.exit_code == 0, r.output  # nothing graded yet: said, not a crash
    rep = json.loads(r.stdout)
    assert rep["labels"] is None and "labels judge --also-judged" in rep["sentence"]
