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

from ..results.store import find_run, read_identity, read_json

#: the cost columns every output carries when a latency pass stored figures (same names in JSON and CSV)
COST_COLUMNS = ["p50_ms", "p95_ms", "bytes_per_doc", "docs_per_s"]
ALL_COLUMNS = ["p50_ms", "p95_ms", "p99_ms", "spread", "qps", "bytes_per_doc", "docs_per_s", "docs_per_s_from", "n_docs",
               "dim",
               "parameters", "load_avg_1m", "threads", "cpu", "torch", "blas", "measured_at", "p50_ratio", "note"]
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


def cost_row(rec: dict[str, Any] | None) -> dict[str, Any]:
    """One record -> the flat cost columns (None where not measured), and `note` saying why a number is missing."""
    row: dict[str, Any] = {c: None for c in ALL_COLUMNS}
    if rec is None:
        row["note"] = "not measured (run `private-mteb latency`)"
        return row
    host = rec.get("machine") or {}
    row.update(load_avg_1m=_num((host.get("load_avg_1m") or {}).get("mean")), threads=host.get("threads"),
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


def cheapest_not_worse(intervals: list[dict[str, Any]], pairs: list[dict[str, Any]], costs: list[dict[str, Any]],
                       metric_label: str, margin: float | None = None,
                       confidence: float = 0.95, among: str = "") -> dict[str, Any] | None:
    """The cheapest candidate (lowest p50) not significantly worse than the best by `metric`, with its sentence.

    Without `margin`: not worse = the paired test (Holm-corrected, as `stats` prints it) finds no significant
    difference, or the candidate is better. With `margin`: a non-inferiority test, the lower bound of the
    candidate - best difference's CI above -margin. None when fewer than one measured candidate has scores.
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
    _, pick, pr = min(ok, key=lambda t: t[0])
    best_p50 = p50[best]["p50_ms"] if best in p50 else None
    level = int(round(confidence * 100))
    where = f" {among}" if among else ""
    test = (f"non-inferiority test: lower bound of the {level}% CI of the difference above -{margin:g}"
            if margin is not None else "paired test, Holm-corrected")
    if pick == best:
        text = (f"the best candidate by {metric_label}{where}, {best}, is also the cheapest of those not "
                f"significantly worse (p50 {ms(p50[best]['p50_ms'])} ms)") if margin is None else (
                f"the best candidate by {metric_label}{where}, {best}, is also the cheapest non-inferior one "
                f"(margin {margin:g}; p50 {ms(p50[best]['p50_ms'])} ms)")
        diff = None
    else:
        what = ("not significantly worse than the best" if margin is None
                else f"non-inferior to the best (margin {margin:g})")
        vs = f"{ms(best_p50)} ms" if best_p50 is not None else "not measured"
        diff = (pr["diff"], pr["diff_ci_low"], pr["diff_ci_high"])
        best_of = f", the best{where}" if among else ""
        text = (f"the cheapest candidate {what} is {pick} (p50 {ms(p50[pick]['p50_ms'])} ms vs {vs} for {best}"
                f"{best_of}, {metric_label} difference {diff[0]:+.3f} [{diff[1]:+.3f}, {diff[2]:+.3f}]; {test})")
    return {"candidate": pick, "best": best, "p50_ms": p50[pick]["p50_ms"], "best_p50_ms": best_p50,
            "diff": diff[0] if diff else 0.0, "diff_ci_low": diff[1] if diff else None,
            "diff_ci_high": diff[2] if diff else None, "margin": margin, "test": test, "sentence": text}


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
