"""Section 8: where every number came from — package versions, data and model revisions, run dates,
run fingerprints (when the stored runs carry them), the config, and the command that made the report."""

from __future__ import annotations

import platform
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

from ...config.benchmark import BenchmarkConfig
from ..page import text
from ..page.blocks import Paragraph, Section, Table
from ..page.data import TaskData, run_record

PACKAGES = ("private-mteb", "mteb", "sentence-transformers", "transformers", "torch", "bm25s", "faiss-cpu",
            "numpy", "scipy", "pandas", "matplotlib")


def versions() -> list[list[str]]:
    """Installed versions, read from package metadata (nothing is imported, so no model library loads)."""
    rows = [["python", platform.python_version()]]
    for name in PACKAGES:
        try:
            rows.append([name, metadata.version(name)])
        except metadata.PackageNotFoundError:
            continue
    return rows


def _date(ts: object) -> str:
    if isinstance(ts, (int, float)):
        return datetime.fromtimestamp(ts, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return "—"


def provenance(cfg: BenchmarkConfig, tasks: list[TaskData], command: str, generated: datetime) -> Section:
    sec = Section("provenance", "Provenance")
    opts = cfg.stats
    where = str(cfg.path) if cfg.path is not None else "(in memory)"
    sec.blocks.append(Paragraph(
        f"Generated {generated.strftime('%Y-%m-%d %H:%M UTC')} by `{command}` from config {where} "
        f"(benchmark '{cfg.name}'), results folder {cfg.results_dir}. Statistics: {opts.resamples} resamples, "
        f"seed {opts.seed}, {opts.confidence:.0%} {opts.method} intervals. Read from stored results only; "
        "no model was loaded.", "note"))
    rows, fingerprints = [], False
    for td in tasks:
        rev = td.collection.content_hash() if td.collection is not None else None
        for c in td.candidates:
            rec = run_record(cfg.results_path, c, td.name, td.runs[c.label])
            fingerprints |= rec["fingerprint"] is not None
            stale = " (data changed since)" if rev and rec["dataset_revision"] != rev else ""
            rows.append([td.name, c.label, c.name, str(rec["revision"])[:12], rec["dataset_revision"] + stale,
                         _date(rec.get("date")), rec.get("mteb_version") or "—",
                         text.num(rec.get("evaluation_time"), 1) + " s" if rec.get("evaluation_time") else "—",
                         rec["fingerprint"] or "—"])
    header = ["task", "candidate", "model", "model revision", "data revision", "run date", "mteb",
              "run time", "fingerprint"]
    if not fingerprints:
        header, rows = header[:-1], [r[:-1] for r in rows]
    sec.subsections.append(Section("provenance-runs", "Stored runs", [Table(header, rows)]))
    sec.subsections.append(Section("provenance-versions", "Installed packages",
                                   [Table(["package", "version"], versions())]))
    return sec
