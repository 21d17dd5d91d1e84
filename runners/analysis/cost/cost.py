"""What a candidate costs, read from the latency pass's sidecars (`latency_<split>.json` in its run folder).

The measuring is runners/execution/measure/latency.py; here the stored figures become the cost columns of `stats`,
`experiments` and the report, the index size and encoding time at 10x / 100x the corpus (a plain
multiplication, said so) and the decision sentence: the cheapest candidate (lowest p50) not significantly
worse than the best, by the paired tests `stats` runs, or, with a margin, a non-inferiority test.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ...results.store import find_run, read_identity, read_json
from ...statistics.intervals import format_diff, format_number
from .latency_stats import paired_difference, percentile_ci

#: the cost columns every output carries when a latency pass stored figures (same names in JSON and CSV)
COST_COLUMNS = ["p50_ms", "p50_ci_low", "p50_ci_high", "p95_ms", "p95_ci_low", "p95_ci_high", "bytes_per_doc",
                "docs_per_s"]
ALL_COLUMNS = ["p50_ms", "p50_ci_low", "p50_ci_high", "p95_ms", "p95_ci_low", "p95_ci_high", "p99_ms", "spread", "qps",
               "bytes_per_doc", "docs_per_s", "docs_per_s_from", "n_docs", "dim", "parameters", "timed_queries",
               "overhead_ms", "load_avg_1m", "cores", "threads", "cpu", "torch", "blas", "measured_at", "p50_ratio",
               "note"]
SCALES = (10, 100)
STALE = "stale: timed for another setting than the stored scores (run `private-mteb latency`)"


def load_latency(results_dir: Path, model_name: str, task_name: str, split: str = "test",
                 subset: str | None = None) -> dict[str, Any] | None:
    """The stored latency record of one (candidate, task) (None when it was never measured).

    A record is current only when it timed the run whose scores are stored: its `fingerprint` equals the one in
    the run folder's identity.json. Otherwise (a setting changed and `run` re-ran it, or a record from before
    fingerprints were kept) it comes back with `stale` set, and `cost_row` withholds its figures."""
    folder = find_run(results_dir, model_name, task_name)
    path = folder / f"latency_{split}.json" if folder is not None else None
    if folder is None or path is None or not path.exists():
        return None
    try:
        subsets = read_json(path).get("subsets") or {}
    except (OSError, ValueError):
        return None
    rec = subsets.get(subset) if subset else next(iter(subsets.values()), None)
    if rec is None:
        return None
    stored = (read_identity(folder) or {}).get("fingerprint")
    if not stored or rec.get("fingerprint") != stored:
        return {**rec, "stale": STALE}
    return rec


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and math.isfinite(float(v)) else None


def cost_row(rec: dict[str, Any] | None, confidence: float = 0.95) -> dict[str, Any]:
    """One record -> the flat cost columns (None where not measured), and `note` saying why a number is missing.

    p50 and p95 carry percentile-bootstrap intervals over the timed queries (latency_stats.py); `_latency` holds
    what a paired comparison needs (the pass, its query ids, each query's time, the load and the cores), for
    `cheapest_not_worse`, never for output."""
    row: dict[str, Any] = {c: None for c in ALL_COLUMNS}
    if rec is None:
        row["note"] = "not measured (run `private-mteb latency`)"
        return row
    host = rec.get("machine") or {}
    row.update(load_avg_1m=_num((host.get("load_avg_1m") or {}).get("mean")), threads=host.get("threads"),
               cores=host.get("cores_usable") or host.get("cores"),
               cpu=host.get("cpu"), torch=host.get("torch"), blas=host.get("blas"),
               measured_at=(rec.get("pass") or {}).get("at"))
    if rec.get("stale"):
        row["note"] = str(rec["stale"])
        return row
    if not rec.get("measurable"):
        row["note"] = rec.get("note") or rec.get("error") or "not measured"
        return row
    lat, index = rec.get("latency_ms") or {}, rec.get("index") or {}
    facts = rec.get("facts") or []
    params = [f.get("parameters") for f in facts if isinstance(f.get("parameters"), int)]
    dims = [f.get("dim") for f in facts if f.get("part") == "encoder" and isinstance(f.get("dim"), int)]
    row.update(p50_ms=_num(lat.get("p50")), p95_ms=_num(lat.get("p95")), p99_ms=_num(lat.get("p99")),
               spread=_num(rec.get("spread")), qps=_num(rec.get("throughput_qps")),
               bytes_per_doc=_num(index.get("bytes_per_doc")), docs_per_s=_num(index.get("docs_per_s")),
               docs_per_s_from=_rate_source(index), n_docs=index.get("n_docs"), dim=dims[0] if dims else None,
               parameters=sum(params) if params else None, note=rec.get("note") or "")
    per_query = rec.get("query_ms")
    if isinstance(per_query, list) and per_query:
        for q, col in ((50, "p50"), (95, "p95")):
            ci = percentile_ci(per_query, q, confidence)
            row[f"{col}_ci_low"], row[f"{col}_ci_high"] = ci if ci else (None, None)
        info = rec.get("pass") or {}
        row.update(timed_queries=len(per_query), overhead_ms=_num((info.get("overhead_ms") or {}).get("subtracted")))
        row["_latency"] = {"pass": info.get("id"), "query_ids": info.get("query_ids"), "query_ms": per_query,
                           "load": row["load_avg_1m"], "cores": row["cores"]}
    return row


def _rate_source(index: dict[str, Any]) -> str | None:
    """Where docs/s came from: a dense encoder's cold run or sample (encode_rate.py), else the index build itself."""
    src, n = index.get("encode_rate_from"), index.get("encode_sample_docs")
    if not index.get("docs_per_s"):
        return None
    if not src:
        return "index build"
    return f"{src} ({n} documents)" if n else src


def cost_rows(results_dir: Path, task_name: str, names: list[str], labels: dict[str, str] | None = None,
              split: str = "test") -> list[dict[str, Any]]:
    """A row per candidate (results name), with `candidate` (its label) and p50 as a ratio to the first measured."""
    rows = []
    for name in names:
        row = cost_row(load_latency(results_dir, name, task_name, split))
        rows.append({"task": task_name, "candidate": (labels or {}).get(name, name), "model": name, **row})
    ref = next((r["p50_ms"] for r in rows if r["p50_ms"]), None)
    for r in rows:
        r["p50_ratio"] = r["p50_ms"] / ref if r["p50_ms"] and ref else None
    return rows


def any_measured(rows: list[dict[str, Any]]) -> bool:
    return any(r.get("p50_ms") is not None or r.get("note", "").startswith(("latency not measurable", "stale:"))
               for r in rows)


def at_scale(row: dict[str, Any], factors: tuple[int, ...] = SCALES) -> dict[str, Any]:
    """Index bytes and cold encoding seconds at `factors` x the corpus: bytes/doc and docs/s times n (linear)."""
    out: dict[str, Any] = {}
    n, per_doc, rate = row.get("n_docs"), row.get("bytes_per_doc"), row.get("docs_per_s")
    for f in factors:
        out[f"index_bytes_{f}x"] = per_doc * n * f if per_doc is not None and n else None
        out[f"encode_seconds_{f}x"] = n * f / rate if rate and n else None
    return out


def human_bytes(v: float | None) -> str:
    if v is None:
        return "–"
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(v) < 1024 or unit == "TB":
            return f"{v:.0f} {unit}" if unit == "B" else f"{v:.1f} {unit}"
        v /= 1024
    return f"{v:.1f} TB"


def human_seconds(v: float | None) -> str:
    if v is None:
        return "–"
    if v < 120:
        return f"{v:.1f} s"
    if v < 7200:
        return f"{v / 60:.1f} min"
    return f"{v / 3600:.1f} h"


def ms(v: float | None) -> str:
    return "–" if v is None else (f"{v:.2f}" if v < 10 else f"{v:.1f}")


def _pair(pairs: list[dict[str, Any]], a: str, b: str) -> dict[str, Any] | None:
    """The pair row of (a, b) oriented a - b."""
    for r in pairs:
        if r.get("subset", "all") != "all":
            continue
        if r["candidate_a"] == a and r["candidate_b"] == b:
            return r
        if r["candidate_a"] == b and r["candidate_b"] == a:
            return {**r, "candidate_a": a, "candidate_b": b, "diff": -r["diff"],
                    "diff_ci_low": -r["diff_ci_high"], "diff_ci_high": -r["diff_ci_low"]}
    return None


def latency_comparison(a: dict[str, Any], b: dict[str, Any], confidence: float = 0.95) -> dict[str, Any]:
    """Can the latency pass tell that cost row `a` is faster than `b`? It decides on the paired interleaved
    difference alone: both timed on the same queries of one pass, in rotating order per query, so a load that
    slows the machine slows both; `a` is faster when the bootstrap interval of the p50 difference (the same
    resampled queries for both) lies below 0, and the pass cannot tell when that interval reaches 0 (too wide for
    the difference). Why not the unpaired p50 intervals or the load average: a shared load widens each candidate's
    own interval and raises the load, but not the paired difference (5.9 [5.8, 6.0] ms against 20.7 [20.7, 20.8]
    ms on a machine loaded above its cores was "cannot tell"). `busy` says the load when it exceeded the cores
    (context for the sentence); `reason` says why the pass cannot tell (None: `a` is faster)."""
    la, lb = a.get("_latency") or {}, b.get("_latency") or {}
    out: dict[str, Any] = {"diff_ms": None, "diff_ci_low": None, "diff_ci_high": None, "reason": None, "busy": None}
    if not la.get("pass") or la.get("pass") != lb.get("pass") or la.get("query_ids") != lb.get("query_ids"):
        out["reason"] = "they were not timed in the same latency pass (run `private-mteb latency` with both)"
        return out
    pair = paired_difference(la["query_ms"], lb["query_ms"], 50, confidence)
    if pair is None:
        out["reason"] = "too few timed queries to compare"
        return out
    out.update(diff_ms=pair["diff"], diff_ci_low=pair["ci_low"], diff_ci_high=pair["ci_high"])
    load, cores = la.get("load"), la.get("cores")
    if load is not None and cores and load > cores:
        out["busy"] = f"the machine was busy (load average {load:.1f} above its {cores} cores)"
    if not (pair["ci_high"] < 0):
        out["reason"] = (f"the p50 difference {pair['diff']:+.2f} ms [{pair['ci_low']:+.2f}, {pair['ci_high']:+.2f}] "
                         f"(paired over {pair['n']} queries) includes 0" + (f"; {out['busy']}" if out["busy"] else ""))
    return out


def _busy(cmp: dict[str, Any]) -> str:
    """'; the machine was busy (...), which slowed both alike: the paired difference decides' when it was."""
    return (f"; {cmp['busy']}, which slowed both alike: the paired interleaved difference decides"
            if cmp.get("busy") else "")


def with_ci(row: dict[str, Any], col: str = "p50") -> str:
    """A table cell: the figure and its bootstrap interval, e.g. "4.77 [4.61, 5.02]"."""
    v, lo, hi = row.get(f"{col}_ms"), row.get(f"{col}_ci_low"), row.get(f"{col}_ci_high")
    return ms(v) + (f" [{ms(lo)}, {ms(hi)}]" if v is not None and lo is not None and hi is not None else "")


def _p50(row: dict[str, Any]) -> str:
    lo, hi = row.get("p50_ci_low"), row.get("p50_ci_high")
    return f"p50 {ms(row['p50_ms'])} ms" + (f" [{ms(lo)}, {ms(hi)}]" if lo is not None and hi is not None else "")


def cheapest_not_worse(intervals: list[dict[str, Any]], pairs: list[dict[str, Any]], costs: list[dict[str, Any]],
                       metric_label: str, margin: float | None = None,
                       confidence: float = 0.95, among: str = "") -> dict[str, Any] | None:
    """The cheapest candidate not significantly worse than the best by `metric`, with its sentence.

    Not worse, without `margin`: the paired test (Holm-corrected, as `stats` prints it) finds no significant
    difference, or the candidate is better. With `margin`: a non-inferiority test, the lower bound of the
    candidate - best difference's CI above -margin. Cheaper: `latency_comparison` can tell it is faster than the
    best (paired over the timed queries, intervals apart, a machine not busier than its cores); when the candidate
    with the lowest p50 is not, the sentence says the pass cannot tell, and recommends nothing on cost.
    `verdict`: "cheaper", "best is cheapest" or "cannot tell". None when no measured candidate has scores.
    `among` (CandidateSet.among) names the set the best was drawn from, e.g. "among the 5 candidates of x.yaml".
    """
    means = {r["candidate"]: r["mean"] for r in intervals if r.get("subset", "all") == "all"
             and _num(r.get("mean")) is not None}
    p50 = {r["candidate"]: r for r in costs if r.get("p50_ms") is not None and r["candidate"] in means}
    if not means or not p50:
        return None
    best = max(means, key=lambda c: means[c])
    ok: list[tuple[float, str, dict[str, Any] | None]] = []
    for cand, row in p50.items():
        if cand == best:
            ok.append((row["p50_ms"], cand, None))
            continue
        pr = _pair(pairs, cand, best)
        if pr is None:
            continue
        worse = (pr["diff_ci_low"] <= -margin) if margin is not None else (bool(pr["significant"]) and pr["diff"] < 0)
        if not worse:
            ok.append((row["p50_ms"], cand, pr))
    if not ok:
        return None
    ok.sort(key=lambda t: t[0])
    level = int(round(confidence * 100))
    where = f" {among}" if among else ""
    test = (f"non-inferiority test: lower bound of the {level}% CI of the difference above -{margin:g}"
            if margin is not None else "paired test, Holm-corrected")
    what = "not significantly worse than the best" if margin is None else f"non-inferior to the best (margin {margin:g})"
    best_row = p50.get(best)
    vs = _p50(best_row) if best_row is not None else "not measured"
    out: dict[str, Any] = {"best": best, "best_p50_ms": best_row["p50_ms"] if best_row else None, "margin": margin,
                           "test": test, "diff": 0.0, "diff_ci_low": None, "diff_ci_high": None,
                           "latency_diff_ms": None, "latency_diff_ci_low": None, "latency_diff_ci_high": None}
    _, pick, pr = ok[0]
    if pick == best:
        rival = ok[1] if len(ok) > 1 else None
        if rival is None:
            text = (f"the best candidate by {metric_label}{where}, {best}, is the only measured one {what.split(' than')[0]}"
                    f" ({vs})" if margin is None else
                    f"the best candidate by {metric_label}{where}, {best}, is the only measured non-inferior one "
                    f"(margin {margin:g}; {vs})")
            return {**out, "candidate": best, "p50_ms": best_row["p50_ms"], "verdict": "best is cheapest",
                    "sentence": text}
        cmp = latency_comparison(best_row, p50[rival[1]], confidence)
        out.update(latency_diff_ms=cmp["diff_ms"], latency_diff_ci_low=cmp["diff_ci_low"],
                   latency_diff_ci_high=cmp["diff_ci_high"])
        if cmp["reason"] is None:
            text = (f"the best candidate by {metric_label}{where}, {best}, is also the cheapest of those {what.split(' than')[0]}"
                    f" ({vs}; faster than {rival[1]} by {-cmp['diff_ms']:.2f} ms "
                    f"[{-cmp['diff_ci_high']:.2f}, {-cmp['diff_ci_low']:.2f}], paired over the timed queries{_busy(cmp)})")
            return {**out, "candidate": best, "p50_ms": best_row["p50_ms"], "verdict": "best is cheapest",
                    "sentence": text}
        text = (f"the best candidate by {metric_label}{where} is {best} ({vs}); the latency pass cannot tell whether it is "
                f"cheaper than {rival[1]} ({_p50(p50[rival[1]])}), {what}: {cmp['reason']}")
        return {**out, "candidate": None, "p50_ms": None, "verdict": "cannot tell", "sentence": text}
    cmp = latency_comparison(p50[pick], best_row, confidence) if best_row is not None else {
        "reason": f"{best} was not timed", "diff_ms": None, "diff_ci_low": None, "diff_ci_high": None}
    diff = (pr["diff"], pr["diff_ci_low"], pr["diff_ci_high"]) if pr else (0.0, None, None)
    out.update(diff=diff[0], diff_ci_low=diff[1], diff_ci_high=diff[2], latency_diff_ms=cmp["diff_ms"],
               latency_diff_ci_low=cmp["diff_ci_low"], latency_diff_ci_high=cmp["diff_ci_high"])
    best_of = f", the best{where}" if among else ""
    quality = (f"{metric_label} difference {format_diff(diff[0], diff[1], diff[2])}; {test}" if diff[1] is not None
               else f"{metric_label} difference {format_number(diff[0], 3, True)}; {test}")
    if cmp["reason"] is None:
        text = (f"the cheapest candidate {what} is {pick} ({_p50(p50[pick])} vs {vs} for {best}{best_of}, p50 difference "
                f"{cmp['diff_ms']:+.2f} ms [{cmp['diff_ci_low']:+.2f}, {cmp['diff_ci_high']:+.2f}] paired over the "
                f"timed queries{_busy(cmp)}; {quality})")
        return {**out, "candidate": pick, "p50_ms": p50[pick]["p50_ms"], "verdict": "cheaper", "sentence": text}
    text = (f"the latency pass cannot tell whether {pick} ({_p50(p50[pick])}), {what}, is cheaper than the best{where}, "
            f"{best} ({vs}): {cmp['reason']} ({quality})")
    return {**out, "candidate": None, "p50_ms": None, "verdict": "cannot tell", "sentence": text}


def attach(interval_rows: list[dict[str, Any]], costs: list[dict[str, Any]]) -> bool:
    """Add the cost columns to the 'all' interval row of each measured candidate (in place); True if any."""
    by_label = {r["candidate"]: r for r in costs}
    if not any_measured(costs):
        return False
    for row in interval_rows:
        c = by_label.get(row.get("candidate")) if row.get("subset", "all") == "all" else None
        for col in COST_COLUMNS:
            row[col] = c.get(col) if c else None
    return True
