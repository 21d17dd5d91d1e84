"""Private scores side by side with the public MTEB leaderboard, and whether the board predicts your data.

Private and public results go through the code the leaderboard itself runs, so a cell here is the number the
leaderboard shows: `select_tasks` (each task's evaluation split and subsets), `join_revisions` (which revision
counts), the long results frame, the per-task pivot (partial split/subset coverage nulled), skipna=False means
and the long-form Borda rank (mteb.benchmarks._create_table). Only two things are added: a mean over the
columns a model does have when it lacks some (flagged, never silently compared), and the rank correlation.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl

from custom_tasks import mteb_private

from ...results.store import load_candidates
from .public import REVISION_POLICY, PublicSource, resolve_public_source
from .public_language import language_public_set

DEFAULT_BENCHMARK = "MTEB(eng, v2)"
PRIVATE_MEAN, PUBLIC_MEAN = "Mean (Private)", "Mean (Public)"
PRIVATE_RANK, PUBLIC_RANK, BORDA = "Rank (Private)", "Rank (Public)", "Rank (Borda)"
PRIVATE_FLAG, PUBLIC_FLAG = "private_incomplete", "public_incomplete"


@dataclass
class Agreement:
    """How well the public mean ranks models the way your private mean does."""

    n: int
    models: list[str]
    kendall_tau: float | None = None
    kendall_p: float | None = None
    spearman_rho: float | None = None
    spearman_p: float | None = None
    excluded: list[str] = field(default_factory=list)
    sentence: str = ""


@dataclass
class Comparison:
    table: pd.DataFrame  # index: model; task scores, means, Borda ranks, flags, public_name, public_revision
    ranks: pd.DataFrame  # rank of each model within each task column (1 = best)
    private_tasks: list[str]
    public_tasks: list[str]
    public_set: str  # e.g. "MTEB(eng, v2) retrieval"
    source: str
    revisions: pd.DataFrame  # model, task, revision, public: the revision each cell came from
    agreement: Agreement
    notes: list[str]
    long_frame: pl.DataFrame  # mteb's long results frame the table was computed from
    private_results_dir: Path | None = None  # where per-query scores (for the plot's CI whiskers) live
    public_board_size: int = 0  # public entries the public ranks are taken over (not only the rows shown)
    main_scores: dict[str, str] = field(default_factory=dict)  # task -> its metadata main_score (plots need no mteb)


def _registry() -> dict[str, Any]:
    return mteb_private.tasks_registry()


def _is_private(name: str) -> bool:
    cls = _registry().get(name)
    return cls is not None and not cls.metadata.is_public


def resolve_tasks(tasks: str | Sequence[str] | None = None, benchmark: str | None = None
                  ) -> tuple[list[str], list[Any], str, bool]:
    """(private task names asked for, public task objects, label of the public set, whether it was named).

    `tasks` may be a benchmark name, or task names mixing private and public ones; without public names the
    retrieval tasks of `benchmark` (default MTEB(eng, v2)) are the public set, as on that leaderboard tab.
    """
    import mteb

    from custom_tasks.task import register_all

    register_all()  # private tasks are never in mteb's registry until registered: `-t <private task>` needs them
    if isinstance(tasks, str):
        try:
            mteb.get_benchmark(tasks)
            benchmark, tasks = tasks, None
        except KeyError:
            tasks = [t.strip() for t in tasks.split(",") if t.strip()]
    names = list(tasks or [])
    private = [t for t in names if _is_private(t)]
    public_names = [t for t in names if t not in private]
    named = bool(benchmark or public_names)
    public: dict[str, Any] = {}
    labels = []
    if benchmark or not public_names:
        try:
            bench = mteb.get_benchmark(benchmark or DEFAULT_BENCHMARK)
        except KeyError:
            raise ValueError(f"unknown benchmark {benchmark!r} (try 'MTEB(eng, v2)', 'BEIR', 'NanoBEIR')") from None
        public.update({t.metadata.name: t for t in bench.tasks if t.metadata.type == "Retrieval"})
        labels.append(f"{bench.name} retrieval")
    for name in public_names:
        try:
            public.setdefault(name, mteb.get_task(name))
        except KeyError:
            raise ValueError(f"unknown task {name!r}: neither a public mteb task nor a configured private task") from None
    if public_names:
        labels.append(", ".join(public_names))
    return private, list(public.values()), " + ".join(labels), named


def public_name_map(results_dir: str | Path, public_names: Mapping[str, str] | None = None) -> dict[str, str]:
    """Private model name -> public model name: candidates.json (written by the runner), then overrides."""
    mapping = {n: str(i["public_name"]) for n, i in load_candidates(Path(results_dir)).items() if i.get("public_name")}
    mapping.update(public_names or {})
    return mapping


def _empty() -> Any:
    from mteb.results import BenchmarkResults

    return BenchmarkResults.model_construct(model_results=[], benchmark=None)


def load_private(results_dir: str | Path, requested: Sequence[str] = ()) -> tuple[Any, list[str], list[str]]:
    """Private results (mteb ResultCache layout) for configured private tasks: (results, task names, notes)."""
    import mteb

    from custom_tasks.task import register_project_tasks

    root, notes = Path(results_dir), []
    folders = register_project_tasks(root)
    if not (root / "results").is_dir():
        return _empty(), list(requested), [f"no private results in {root} (expected {root}/results/...): run the benchmark first"]
    cache = mteb.ResultCache(root)
    found = set(cache.get_task_names(include_remote=False))
    unknown = sorted(n for n in found if n not in _registry())
    if unknown:
        notes.append(f"results for {', '.join(unknown)} skipped: no such task in {' or '.join(map(str, folders))} "
                     "(pass -c BENCHMARK.yaml, whose tasks are known from anywhere, or --project DIR)")
    private = sorted(n for n in found if _is_private(n))
    if requested:
        notes += [f"no private results for {t}" for t in requested if t not in private]
        private = list(requested)
    results = cache.load_results(tasks=private, include_remote=False) if private else _empty()
    return results, private, notes


def _data_version_notes(results: Any) -> list[str]:
    """Models scored on different versions of the same private data cannot be compared fairly."""
    versions: dict[str, set[str]] = {}
    for mr in results:
        for tr in mr.task_results:
            versions.setdefault(tr.task_name, set()).add(tr.dataset_revision)
    return [f"{t}: models were scored on different versions of the data ({', '.join(sorted(v))}); re-run them"
            for t, v in sorted(versions.items()) if len(v) > 1]


def _long_frame(results: Any, tasks: Sequence[Any]) -> pl.DataFrame:
    """mteb's leaderboard frame (select_tasks + join_revisions); NaN = not evaluated, so it becomes null."""
    if not results.model_results or not tasks:
        return pl.DataFrame()
    long = mteb_private.results_to_long_frame(results, list(tasks))
    return long.with_columns(pl.col("score").fill_nan(None)) if long.height else long


def _summary(long: pl.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(cells, per-model mean + Borda) with mteb's pivot, skipna=False mean and long-form Borda."""
    pivot = mteb_private.build_per_task_pivot(long) if long.height else None
    if pivot is None:
        return pd.DataFrame(), pd.DataFrame(columns=["mean", "borda"], dtype=float)
    per_task, cols = pivot
    agg = per_task.select("model_name", mteb_private.skipna_false_mean(cols).alias("mean"))
    agg = agg.join(mteb_private.borda_rank_from_long(long, n_models=per_task.height), on="model_name", how="left")
    cells = per_task.drop("_experiment_id", strict=False).to_pandas().groupby("model_name").first()
    agg_pd = agg.rename({"Rank (Borda)": "borda"}).to_pandas().groupby("model_name").first()
    return cells, agg_pd


def _means(cells: pd.DataFrame, agg: pd.DataFrame, columns: list[str], index: pd.Index) -> tuple[pd.Series, pd.Series]:
    """mteb's strict mean where a model has every column; else the mean over what it has, flagged."""
    sub = cells.reindex(index=index, columns=columns)
    strict = agg["mean"].reindex(index)
    means, flags = [], []
    for model in index:
        row = sub.loc[model].dropna()
        incomplete = bool(len(row)) and len(row) < len(columns)
        value = strict.get(model)
        if value is None or pd.isna(value):
            value = mteb_private.recompute_lenient_means(row.to_dict(), {})[1] if len(row) else None
        means.append(math.nan if value is None else float(value))
        flags.append(incomplete)
    return pd.Series(means, index=index, dtype=float), pd.Series(flags, index=index, dtype=bool)


def _revision_label(revs: pd.Series) -> str | None:
    counts = Counter(r if not (len(r) == 40 and r.isalnum()) else r[:10] for r in revs.dropna())
    if not counts:
        return None
    if len(counts) == 1:
        return next(iter(counts))
    return ", ".join(f"{r} ×{n}" for r, n in counts.most_common())


def build_comparison(private_results_dir: str | Path = "results", public_source: PublicSource | str | Path | None = None,
                     tasks: str | Sequence[str] | None = None, models: Sequence[str] | None = None,
                     public_names: Mapping[str, str] | None = None, *, benchmark: str | None = None,
                     include_public_only: bool = True) -> Comparison:
    """Everything `compare` shows. Public-only models (no private scores) add context unless turned off."""
    from mteb.results import BenchmarkResults

    source = public_source if hasattr(public_source, "load") else resolve_public_source(public_source)  # type: ignore[arg-type]
    requested, public_tasks, public_set, named = resolve_tasks(tasks, benchmark)
    priv, private_names, notes = load_private(private_results_dir, requested)
    private_tasks = [_registry()[n]() for n in private_names if n in _registry()]
    in_language = None if named else language_public_set(private_tasks)  # none named: the tasks' language's
    if in_language is not None:
        public_tasks, public_set = in_language.tasks, in_language.label
        notes.append(in_language.note)
    notes += _data_version_notes(priv)
    wanted = set(models or [])
    mapping = public_name_map(private_results_dir, public_names)
    priv_mrs = [mr for mr in priv if not wanted or mr.model_name in wanted or mapping.get(mr.model_name) in wanted]
    private_models = sorted({mr.model_name for mr in priv_mrs})

    load_all = include_public_only and not wanted
    # Every public entry is loaded even when only some are shown: "public rank" is the rank on the public
    # board (the source's models), never the rank among the models this table happens to show.
    pub = source.load(public_tasks, None).select_tasks(public_tasks).join_revisions()
    have = {mr.model_name for mr in pub}
    resolved: dict[str, str | None] = {}  # private model -> the public entry it is compared with
    for m in private_models:
        p = mapping.get(m, m)
        if p not in have and p != m and m in have:
            notes.append(f"public name {p!r} of {m} not in the public results; matched {m} by its own name")
            p = m
        resolved[m] = p if p in have else None
    shown = {mr.model_name for mr in pub if mr.model_name in private_models or mr.model_name in wanted or load_all}
    pub_mrs = [mr.model_copy(update={"model_name": m}) for mr in pub for m, p in resolved.items()
               if p == mr.model_name and m != p]
    pub_mrs += [mr for mr in pub if mr.model_name in shown]
    # Public means and ranks are over public entries, each once, so a stand-in never shifts the board's ranks.
    pub_rank = pub

    combined = BenchmarkResults.model_construct(model_results=[*priv_mrs, *pub_mrs], benchmark=None)
    long = _long_frame(combined, [*private_tasks, *public_tasks])
    cells, agg_all = _summary(long)
    _, agg_priv = _summary(long.filter(~pl.col("is_public")) if long.height else long)
    _, agg_pub = _summary(_long_frame(pub_rank, public_tasks))

    priv_cols = [t.metadata.name for t in private_tasks]
    pub_cols = [t.metadata.name for t in public_tasks]
    index = pd.Index(sorted(cells.index), name="model")
    public_key = pd.Index([resolved.get(m) or m for m in index])
    table = cells.reindex(index=index, columns=priv_cols + pub_cols).astype(float)
    ranks = table.rank(ascending=False, method="min").astype("Int64")
    table[PRIVATE_MEAN], table[PRIVATE_FLAG] = _means(cells, agg_priv, priv_cols, index)
    table[PRIVATE_RANK] = agg_priv["borda"].reindex(index).astype("Int64")
    agg_pub = agg_pub.reindex(public_key).set_axis(index)
    table[PUBLIC_MEAN], table[PUBLIC_FLAG] = _means(cells, agg_pub, pub_cols, index)
    table[PUBLIC_RANK] = agg_pub["borda"].astype("Int64")
    table[BORDA] = agg_all["borda"].reindex(index).astype("Int64")
    table["public_name"] = [resolved[m] if m in resolved else m if m in have else None for m in index]
    revisions = (long.select("model_name", "task_name", "model_revision", "is_public").unique().sort("model_name", "task_name")
                 .to_pandas().rename(columns={"model_name": "model", "task_name": "task", "model_revision": "revision",
                                              "is_public": "public"}) if long.height else
                 pd.DataFrame(columns=["model", "task", "revision", "public"]))
    pub_revs = revisions[revisions["public"].astype(bool)]
    table["public_revision"] = [_revision_label(pub_revs.loc[pub_revs["model"] == m, "revision"]) for m in index]
    order = table.sort_values([PRIVATE_MEAN, PUBLIC_MEAN], ascending=False, na_position="last").index
    table, ranks = table.loc[order], ranks.loc[order]

    missing_pub = [t for t in pub_cols if table[t].isna().all()] if len(table) else pub_cols
    if missing_pub:
        hint = " (the snapshot is small: pass --public <results folder> for more)" if "snapshot" in source.label else ""
        notes.append(f"no public scores for {', '.join(missing_pub)} among the models shown{hint}")
    notes.append(f"revisions: {REVISION_POLICY}")
    comp = Comparison(table, ranks, priv_cols, pub_cols, public_set, source.label, revisions,
                      agreement(table), notes, long, Path(private_results_dir),
                      public_board_size=len({mr.model_name for mr in pub}),
                      main_scores={t.metadata.name: t.metadata.main_score for t in [*private_tasks, *public_tasks]})
    return comp


def compare_table(private_results_dir: str | Path = "results", public_source: PublicSource | str | Path | None = None,
                  tasks: str | Sequence[str] | None = None, models: Sequence[str] | None = None,
                  public_names: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The comparison as one DataFrame (rows = models); task lists, source and notes in `.attrs`."""
    comp = build_comparison(private_results_dir, public_source, tasks, models, public_names)
    table = comp.table.copy()
    table.attrs.update(private_tasks=comp.private_tasks, public_tasks=comp.public_tasks, public_set=comp.public_set,
                       source=comp.source, notes=comp.notes, agreement=comp.agreement.sentence)
    return table


def strength(tau: float) -> str:
    """Plain-words band of a rank correlation: strong >= 0.7, moderate >= 0.4, weak > 0.1, else none."""
    a = abs(tau)
    return "strongly" if a >= 0.7 else "moderately" if a >= 0.4 else "weakly" if a > 0.1 else ""


def describe_agreement(tau: float | None, n: int, rho: float | None = None) -> str:
    if n < 3 or tau is None:
        return f"too few models with both private and public scores to tell ({n}): choose on your own data"
    if math.isnan(tau):
        return f"cannot tell: the {n} models tie on one side: choose on your own data"
    band = strength(tau)
    verb = f"agrees {band} with" if tau > 0 and band else f"disagrees {band} with" if band else "shows no clear relation to"
    advice = "a fair shortlist, still confirm on your own data" if tau >= 0.7 else "choose on your own data"
    rho_txt = f", Spearman {rho:.2f}" if rho is not None and not math.isnan(rho) else ""
    return f"public ranking {verb} yours: Kendall tau {tau:.2f}{rho_txt} over {n} models: {advice}"


def agreement(table: pd.DataFrame) -> Agreement:
    """Kendall/Spearman between public and private means over models with both, complete on both sides."""
    from scipy.stats import kendalltau, spearmanr

    if table.empty:
        return Agreement(0, [], sentence=describe_agreement(None, 0))
    both = table[table[PRIVATE_MEAN].notna() & table[PUBLIC_MEAN].notna()]
    ok = both[~both[PRIVATE_FLAG] & ~both[PUBLIC_FLAG]]
    excluded = sorted(set(both.index) - set(ok.index))
    res = Agreement(len(ok), list(ok.index), excluded=excluded)
    if res.n >= 3:
        k, s = kendalltau(ok[PUBLIC_MEAN], ok[PRIVATE_MEAN]), spearmanr(ok[PUBLIC_MEAN], ok[PRIVATE_MEAN])
        res.kendall_tau, res.kendall_p = float(k.statistic), float(k.pvalue)
        res.spearman_rho, res.spearman_p = float(s.statistic), float(s.pvalue)
    res.sentence = describe_agreement(res.kendall_tau, res.n, res.spearman_rho)
    if excluded:
        res.sentence += f" ({len(excluded)} model(s) with incomplete scores left out)"
    return res


# --- text formats ------------------------------------------------------------------------------------------


def _fmt(v: Any, digits: int = 3) -> str:
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA else f"{v:.{digits}f}"


def display_rows(comp: Comparison, brief: bool = False) -> tuple[list[str], list[list[str]], list[str]]:
    """(header, rows, footnotes) for terminal and markdown: 'score (rank)', missing '—', 'mean*' if incomplete."""
    t, tasks = comp.table, comp.private_tasks + ([] if brief else comp.public_tasks)
    header = ["model", *tasks, PRIVATE_MEAN, PRIVATE_RANK, PUBLIC_MEAN, PUBLIC_RANK, "public revision"]
    rows = []
    for model, r in t.iterrows():
        cells = [f"{_fmt(r[c])} ({comp.ranks.at[model, c]})" if not pd.isna(r[c]) else "—" for c in tasks]
        pm = _fmt(r[PRIVATE_MEAN]) + ("*" if r[PRIVATE_FLAG] else "")
        qm = _fmt(r[PUBLIC_MEAN]) + ("*" if r[PUBLIC_FLAG] else "")
        pub = r["public_name"]
        name = str(model) + (f" → {pub}" if isinstance(pub, str) and pub != model else "")
        rows.append([name, *cells, pm, _fmt_rank(r[PRIVATE_RANK]), qm, _fmt_rank(r[PUBLIC_RANK]), r["public_revision"] if isinstance(r["public_revision"], str) else "—"])
    notes = [f"public scores: {comp.source}; public set: {comp.public_set}"]
    if t[[PRIVATE_FLAG, PUBLIC_FLAG]].any().any():
        notes.append("* mean over the tasks the model has, not all of them; not comparable with complete means")
    notes.append("cells: main score (rank in column); Rank = Borda rank as on the leaderboard; — = no result")
    return header, rows, notes + [f"agreement: {comp.agreement.sentence}"] + comp.notes


def _fmt_rank(v: Any) -> str:
    return "—" if pd.isna(v) else str(int(v))


def to_markdown(comp: Comparison, brief: bool = False) -> str:
    """A Markdown table for a PR comment; model and task names are literal (markdown_text.md_text)."""
    from ..markdown_text import md_text

    header, rows, notes = display_rows(comp, brief)
    lines = ["| " + " | ".join(md_text(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(md_text(str(c)) for c in row) + " |" for row in rows]
    return "\n".join(lines + [""] + [f"- {md_text(n)}" for n in notes]) + "\n"


def to_csv(comp: Comparison) -> str:
    """CSV for people: model names and other text cells neutralised (runners/results/spreadsheet.py)."""
    from ...results.spreadsheet import frame_csv

    ranks = comp.ranks.add_suffix(" rank")
    return frame_csv(pd.concat([comp.table, ranks], axis=1), index=True)


def to_json(comp: Comparison) -> str:
    def clean(v: Any) -> Any:
        return None if v is pd.NA or (isinstance(v, float) and math.isnan(v)) else v.item() if hasattr(v, "item") else v

    rows = [{"model": m, **{k: clean(v) for k, v in r.items()},
             "ranks": {c: clean(comp.ranks.at[m, c]) for c in comp.ranks.columns}} for m, r in comp.table.iterrows()]
    a = comp.agreement
    out = {"source": comp.source, "public_set": comp.public_set, "private_tasks": comp.private_tasks,
           "public_tasks": comp.public_tasks, "rows": rows, "notes": comp.notes,
           "agreement": {k: clean(v) for k, v in a.__dict__.items()},
           "revisions": comp.revisions.to_dict(orient="records")}
    return json.dumps(out, indent=1, ensure_ascii=False)
