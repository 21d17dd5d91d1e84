"""Measured: a served model restarted with another max_seq_length is re-run, never a stale score (issue 46).

A real server (Infinity from .venv-infinity, scripts/infinity-venv.sh; tests/endpoint_server.py) serves the offline
MiniLM on one port of 127.0.0.1 under one served name, from a folder whose sentence_bert_config.json says
`max_seq_length` 256, then (restarted) 128, then 256 again: the same weights, name and URL each time. After each
start `private-mteb run` scores the demo knowledge base (NorthwindKBRetrieval) with one `kind: endpoint` candidate
into the same results folder, and the script prints what `run` did (ran or cached), nDCG@10 and why it ran. With
the probe of one short text, the second run found its stored 256 result current and kept its score; the long probes
see the truncation change, so it runs again and reports the 128 score.

    python benchmarks/bench_endpoint_truncation.py [--smoke]

--smoke: the same path on the 12-page task tests/configs/kb_tiny.yaml (tests/test_benchmarks_smoke.py); exit 77
(skipped) without Infinity.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="the tiny task instead of the demo's")
    args = parser.parse_args()
    import yaml
    from typer.testing import CliRunner

    from endpoint_server import Infinity, infinity_bin, infinity_venv
    from runners.cli import app
    from test_endpoint_server import _max_seq_length_copy

    if infinity_bin() is None:  # optional: 77 = skipped (tests/test_benchmarks_smoke.py)
        print(f"no Infinity in {infinity_venv()}: run scripts/infinity-venv.sh", file=sys.stderr)
        return 77
    task = ROOT / "tests" / "configs" / "kb_tiny.yaml" if args.smoke else ROOT / "configs" / "tasks" / "northwind-kb.yaml"
    tmp = Path(tempfile.mkdtemp(prefix="endpoint-truncation-"))
    server = Infinity(log_dir=tmp)
    cfg = {"name": "served", "tasks": [str(task)],
           "results_dir": str(tmp / "results"),
           "models": [{"name": "team/minilm-served", "label": "served", "kind": "endpoint",
                       "endpoint": {"url": server.url, "model": "minilm", "timeout_s": 300}}]}
    (tmp / "bench.yaml").write_text(yaml.safe_dump(cfg))
    try:
        for i, n in enumerate((256, 128, 256)):
            server.start(_max_seq_length_copy(tmp / f"model{i}", n), "minilm")
            try:
                r = CliRunner().invoke(app, ["run", "-c", str(tmp / "bench.yaml"), "--format", "json"])
                rec = json.loads(r.stdout)["records"][0]
            finally:
                server.stop()
            what = "cached" if rec["status"] == "skipped" else rec["status"]
            why = f" ({rec['reason']})" if rec["reason"] else ""
            print(f"served with max_seq_length {n}: {what}, nDCG@10 {rec['scores']['ndcg_at_10']:.4f}{why}",
                  flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
