"""The report's "Labels" section: how much of each score rests on labels, who judged, and how alike.

Per task: judged@10 per candidate (the share of its top-10 that carries a label, as in the results table),
the raters of `labels/<task>/` with how much each judged, and their agreement (weighted kappa per pair of
raters and Krippendorff's alpha, each with its 95% bootstrap interval) in one plain sentence; with a `judge:` in
the benchmark and its grades stored, the LLM judge against the human grades (`labels agreement --judge`); and
`labels status` (issue 39): per pair of candidates, the nDCG@10 difference, its bounds over every grading of the
unjudged pairs, settled/open and the judgments estimated to settle it (one line instead when the task declares
`complete_labels: true`); with `labels: {use_llm: prediction_powered}`, the prediction-powered figures and verdicts
`stats` prints (runners/labels/judge/ppi_verdicts.py). Shown only for tasks that have judged@10 numbers, raters'
files or LLM grades; no document or question text appears.
"""

from __future__ import annotations

import math
import re

from ...labels.raters.rater_agreement import agreement
from ...labels.raters.ratings import judging_dir, read_all
from ..page.blocks import Paragraph, Section, Table

RESAMPLES = 2000


def _ci(iv: object) -> str:
    est, low, high = (getattr(iv, k, math.nan) for k in ("estimate", "low", "high"))
    return "n/a" if est != est else f"{est:.2f} [{low:.2f}, {high:.2f}]"


def labels_section(all_numbers: list, seed: int = 0, bench: object = None) -> Section | None:
    """None when no task has coverage numbers, raters or LLM grades."""
    sec = Section("labels", "Labels")
    for tn in all_numbers:
        td = tn.td
        blocks: list = []
        if tn.judged:
            blocks.append(Table(["candidate", "judged@10"], [[c, f"{v:.2f}"] for c, v in tn.judged.items()],
                                f"{td.name}: share of each candidate's top-10 with a label"))
        files = read_all(td.config, judging_dir(td.config)) if td.config is not None else []
        files = [f for f in files if f.judgments]
        if files:
            rep = agreement(td.config, files, None, RESAMPLES, seed)
            blocks.append(Table(["rater", "graded", "skipped", "unsure"],
                                [[r, str(c["graded"]), str(c["skip"]), str(c["unsure"])]
                                 for r, c in rep.raters.items()],
                                f"{td.name}: who judged how much ({rep.n_items} pairs graded, {rep.n_multi} by two "
                                "or more raters)"))
            if rep.pairs:
                rows = [[f"{p.a} / {p.b}", str(p.n), _ci(p.kappa), _ci(p.kappa_quadratic), f"{p.differ_by_two:.0%}"]
                        for p in rep.pairs]
                blocks.append(Table(["raters", "pairs", "kappa [95% CI]", "weighted kappa [95% CI]",
                                     "differ by two grades"], rows,
                                    f"{td.name}: agreement on the pairs graded twice (bootstrap over pairs, "
                                    f"{RESAMPLES} resamples)"))
                blocks.append(Paragraph(f"Krippendorff's alpha (ordinal) over all {len(rep.raters)} raters: "
                                        f"{_ci(rep.alpha)} on {rep.n_multi} pairs; {rep.differ_by_two:.0%} of them "
                                        "differ by two grades or more.", "note"))
            sentence = rep.sentence
            blocks.append(Paragraph(sentence[0].upper() + sentence[1:] + ".", "verdict"))
            if rep.warnings:
                blocks.append(Paragraph(f"{len(rep.warnings)} line(s) of the raters' files were skipped (broken or "
                                        f"outside the scale); `private-mteb labels agreement -t {td.name}` names "
                                        "them.", "note"))
        collection = getattr(td, "collection", None)
        if collection is not None:  # labels declared complete, for every question or some
            from ...labels.notes.unjudged_mark import complete_line

            line = complete_line(len(collection.complete_in("test")), len(collection.qrels.get("test", {})))
            blocks += [Paragraph(line[0].upper() + line[1:] + ".", "note")] if line else []
        blocks += _status_blocks(bench, td) if tn.judged else []
        blocks += _judge_blocks(bench, td, seed)
        blocks += _ppi_blocks(bench, td)
        if blocks:
            sec.subsections.append(Section("labels-" + re.sub(r"[^a-z0-9]+", "-", td.name.lower()), td.name, blocks))
    return sec if sec.subsections else None


def _status_blocks(bench: object, td: object) -> list:
    """`labels status` of the task's candidates (runners/labels/verdicts/label_status.py); [] without a benchmark, with
    fewer than two candidates or without stored rankings."""
    from ...labels.verdicts.label_status import label_status
    from ...statistics.analysis_errors import AnalysisError

    names = [c.name for c in getattr(td, "candidates", [])]
    entry = next((e for e in getattr(bench, "tasks", []) if _task_name(e, bench) == td.name), None)  # type: ignore
    if bench is None or entry is None or len(names) < 2:
        return []
    try:
        st = label_status(bench, names, entry)  # type: ignore[arg-type]
    except AnalysisError:
        return []
    rows = [[st.labels[p.a], st.labels[p.b], f"{p.now:+.4f}", f"{p.low:+.4f}", f"{p.high:+.4f}", f"{p.unjudged:,}",
             "settled" if (n := st.to_settle.get((p.a, p.b))) == 0 else "never" if n is None else f"~{n:,}"]
            for p in st.pairs]
    return [Table(["A", "B", f"nDCG@{st.k} A−B now", "lowest", "highest", "unjudged", "to settle"], rows,
                  f"{td.name}: could the unjudged pairs change the verdict? ({st.pool:,} unjudged pairs in the "
                  f"candidates' top-{st.k}; `private-mteb labels status`)"),
            Paragraph(" ".join(st.sentence(p)[0].upper() + st.sentence(p)[1:] + "." for p in st.pairs), "note")]


def _ppi_blocks(bench: object, td: object) -> list:
    """The prediction-powered figures `stats` prints (runners/labels/judge/ppi_verdicts.py), as a table, when the
    config admits LLM grades for inference (`labels: {use_llm: prediction_powered}`); its header says so."""
    from ...labels.judge.ppi_verdicts import ppi_report

    names = [c.name for c in getattr(td, "candidates", [])]
    entry = next((e for e in getattr(bench, "tasks", []) if _task_name(e, bench) == td.name), None)  # type: ignore
    if bench is None or entry is None or not names:
        return []
    rep = ppi_report(bench, entry, names)
    if rep is None:
        return []
    if rep.why_not:
        return [Paragraph(rep.lines()[0], "note")]
    iv = rep.interval
    rows = [[label, iv((e.estimate, e.low, e.high)), iv(e.llm_only), iv(e.human_only), str(e.n_labelled), ""]
            for label, e in rep.means.items()]
    rows += [[f"{a} − {b}", iv((e.estimate, e.low, e.high), True), iv(e.llm_only, True), iv(e.human_only, True),
              str(e.n_labelled), rep.verdict(a, b, e)] for (a, b), e in rep.pairs.items()]
    from ...statistics.intervals import metric_label

    return [Table(["candidate / pair", f"prediction-powered {metric_label(rep.metric)} [CI]", "LLM-only [CI]", "human-only [CI]",
                   "n", "verdict"], rows, f"{td.name}: {rep.header()}")]


def _task_name(entry: str, bench: object) -> str | None:
    from ...config.task_lookup import task_name_for

    try:
        return task_name_for(entry, bench)  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001 — an entry that cannot be read is not this task
        return None


def _judge_blocks(bench: object, td: object, seed: int) -> list:
    """The LLM judge vs the human grades (labels agreement --judge), when the benchmark has a judge with grades."""
    from custom_tasks.llm_labels import llm_labels_path

    cfg = getattr(td, "config", None)
    if getattr(bench, "judge", None) is None or cfg is None or cfg.path is None or \
            not llm_labels_path(cfg.path).is_file():
        return []
    from ...labels.judge.judge_agreement import judge_agreement

    rep = judge_agreement(bench, str(cfg.path), n_resamples=RESAMPLES, seed=seed)
    out: list = []
    lab = rep.labels
    if lab is not None:
        rows = [["Cohen's kappa", _ci(lab.kappa)], ["weighted kappa (quadratic)", _ci(lab.kappa_quadratic)],
                ["TPR relevant (grade >= 1)", _ci(lab.tpr)], ["TNR relevant (grade >= 1)", _ci(lab.tnr)],
                ["accuracy (majority baseline)", f"{lab.accuracy:.0%} ({lab.majority_accuracy:.0%}: always "
                                                 f"{lab.majority_grade})"]]
        out.append(Table(["statistic", "value [95% CI]"], rows, f"{td.name}: {rep.source} vs human grades on "
                                                                  f"{lab.n} pairs"))
    if rep.system is not None:
        s = rep.system
        out.append(Table(["candidate", f"{s.metric} human only", f"{s.metric} human + LLM"],
                         [[c, f"{a:.4f}", f"{b:.4f}"] for c, a, b in zip(s.candidates, s.human_means, s.mixed_means)],
                         f"{td.name}: the candidates under human-only and human + LLM labels ({s.llm_filled} pairs "
                         "filled by the LLM)"))
    sentence = rep.sentence
    out.append(Paragraph(sentence[0].upper() + sentence[1:] + ".", "verdict"))
    return out
