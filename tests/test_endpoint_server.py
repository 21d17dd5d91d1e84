"""`kind: endpoint` against a REAL OpenAI-compatible server started here on 127.0.0.1: Infinity (`infinity-emb`
from PyPI, its own virtual environment: tests/endpoint_server.py) serving the offline MiniLM folder.

On the demo knowledge base (178 documents, 247 questions): every vector the server returns is within cosine
0.9999 of the same model in process and the nDCG@10 of the two runs agree within 1e-4, with and without prompts;
a model swapped behind the same URL and served name (the same folder with CLS pooling) re-runs with its own
scores, the in-process model is reused; the server stopped, each served candidate fails with one line and the
others are still reported, exit 2. The same weights and name restarted with another max_seq_length (the issue's
stale 0.8096 where a fresh run gave 0.7386) is another identity: the long probes see the truncation.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from conftest import MINILM, REPO
from endpoint_server import Infinity, infinity_bin, infinity_venv
from runners.cli import app

pytestmark = pytest.mark.slow
runner = CliRunner()
PROMPTS = {"query": "query: ", "document": "passage: "}


@pytest.fixture(scope="module")
def infinity(tmp_path_factory):
    if infinity_bin() is None:
        why = (f"no Infinity server in {infinity_venv()}: scripts/infinity-venv.sh makes it (CI runs it; "
               "PRIVATE_MTEB_INFINITY_VENV points elsewhere)")
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    server = Infinity(log_dir=tmp_path_factory.mktemp("infinity-log"))
    yield server
    server.stop()


def _minilm_dir() -> Path:
    from runners.execution.encoding.offline_packages import offline_model_path

    return Path(offline_model_path(MINILM))


def _cls_pooling_copy(root: Path) -> Path:
    """The MiniLM folder with CLS pooling instead of mean: another model (its files linked, not copied)."""
    src, dst = _minilm_dir(), root / "minilm-cls"
    dst.mkdir()
    for f in src.iterdir():
        if f.is_file():
            (dst / f.name).symlink_to(f)
    (dst / "1_Pooling").mkdir()
    pooling = json.loads((src / "1_Pooling" / "config.json").read_text())
    pooling.update(pooling_mode_cls_token=True, pooling_mode_mean_tokens=False)
    (dst / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    return dst


def _bench(tmp_path: Path, url: str) -> Path:
    served = {"url": url, "model": "minilm", "batch_size": 32, "max_concurrency": 4, "timeout_s": 120}
    cfg = {"name": "served", "tasks": [str(REPO / "configs" / "tasks" / "northwind-kb.yaml")],
           "results_dir": str(tmp_path / "results"), "encode": {"batch_size": 32},
           "models": [{"name": MINILM, "label": "in-process"},
                      {"name": MINILM, "label": "in-process+prompts", "prompts": dict(PROMPTS)},
                      {"name": "team/minilm-served", "label": "served", "kind": "endpoint", "endpoint": served},
                      {"name": "team/minilm-served", "label": "served+prompts", "kind": "endpoint",
                       "endpoint": dict(served), "prompts": dict(PROMPTS)}]}
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _run(path: Path) -> dict[str, dict]:
    r = runner.invoke(app, ["run", "-c", str(path), "--format", "json"])
    assert r.exit_code == 0, r.output
    return {rec["label"]: rec for rec in json.loads(r.stdout)["records"]}


def test_served_model_equals_in_process_and_a_swap_reruns(infinity, tmp_path) -> None:
    from mteb.types import PromptType
    from sentence_transformers import SentenceTransformer

    from custom_tasks.config import TaskConfig
    from custom_tasks.sources import load_collection
    from runners.config.model_spec import ModelSpec
    from runners.execution.candidates.endpoint_candidate import EndpointClient

    url = infinity.start(_minilm_dir(), "minilm")
    bench = _bench(tmp_path, url)
    first = _run(bench)
    assert all(rec["status"] == "ran" for rec in first.values()), first
    for a, b in (("in-process", "served"), ("in-process+prompts", "served+prompts")):
        assert abs(first[a]["scores"]["ndcg_at_10"] - first[b]["scores"]["ndcg_at_10"]) <= 1e-4, (a, first)
    assert first["in-process"]["scores"]["ndcg_at_10"] != first["in-process+prompts"]["scores"]["ndcg_at_10"]

    # every vector: the server's against sentence-transformers' own, prompts put before the text as ST does
    task = TaskConfig.from_file(REPO / "configs" / "tasks" / "northwind-kb.yaml")
    coll = load_collection(task.source, task.base_dir, task.name)
    docs = [(d["title"] + " " + d["text"]).strip() for d in coll.corpus.values()]
    queries = list(coll.queries.values())
    st = SentenceTransformer(str(_minilm_dir()), device="cpu")
    client = EndpointClient(ModelSpec(name="x", kind="endpoint", endpoint={"url": url, "model": "minilm"}))
    for texts, prompt in ((docs, ""), (queries, ""), (queries, PROMPTS[PromptType.query.value])):
        mine = client.embed([prompt + t for t in texts])
        ref = st.encode(texts, prompt=prompt or None, convert_to_numpy=True)
        cos = (mine * ref).sum(1) / np.linalg.norm(mine, axis=1) / np.linalg.norm(ref, axis=1)
        assert cos.min() >= 0.9999, (prompt, float(cos.min()))

    again = _run(bench)  # nothing changed: all reused, the server only probed
    assert all(rec["status"] == "skipped" for rec in again.values()), again

    infinity.stop()  # another model behind the same URL and served name
    infinity.start(_cls_pooling_copy(tmp_path), "minilm")
    swapped = _run(bench)
    assert swapped["in-process"]["status"] == "skipped"
    for label in ("served", "served+prompts"):
        assert swapped[label]["status"] == "ran" and "candidate.probe" in swapped[label]["reason"], swapped[label]
        assert swapped[label]["scores"]["ndcg_at_10"] != first[label]["scores"]["ndcg_at_10"]
        assert swapped[label]["encoded"] > 0  # the old model's cached vectors were not read

    infinity.stop()
    r = runner.invoke(app, ["run", "-c", str(bench)])
    assert r.exit_code == 2 and "Traceback" not in r.output
    lines = [line for line in r.output.splitlines() if "unreachable" in line]
    assert len(lines) == 2 and all(str(bench) in line and url in line for line in lines), r.output
    assert all(line.startswith(("failed: served on", "failed: served+prompts on")) for line in lines), r.output


def _max_seq_length_copy(root: Path, n: int) -> Path:
    """The MiniLM folder (its files linked) with max_seq_length `n` in sentence_bert_config.json: the same weights
    and name, another truncation."""
    src, dst = _minilm_dir(), root / f"minilm-msl{n}"
    dst.mkdir(parents=True)
    for f in src.iterdir():
        (dst / f.name).symlink_to(f, target_is_directory=f.is_dir())
    (dst / "sentence_bert_config.json").unlink()
    conf = json.loads((src / "sentence_bert_config.json").read_text())
    (dst / "sentence_bert_config.json").write_text(json.dumps({**conf, "max_seq_length": n}))
    return dst


def test_a_server_restarted_with_another_max_seq_length_is_another_identity(infinity, tmp_path) -> None:
    from runners.config.model_spec import ModelSpec
    from runners.execution.candidates.endpoint_candidate import _PROBES, EndpointClient, candidate
    from runners.execution.remote.probe_text import SHORT_PROBE, probe_texts

    spec = ModelSpec(name="team/minilm-served", kind="endpoint", endpoint={"url": "http://127.0.0.1:1/v1"})

    class Cfg:
        path, cache_path = "bench.yaml", tmp_path / "cache"

    ids = {}
    for n in (256, 128, 256):
        url = infinity.start(_max_seq_length_copy(tmp_path / f"run{len(ids)}", n), "minilm")
        served = spec.model_copy(update={"endpoint": spec.endpoint.model_copy(update={"url": url, "model": "minilm"})})
        _PROBES.clear()  # each start a new process would be: the id read back from the cache folder
        cand = candidate(served, cfg=Cfg())
        short, medium = EndpointClient(served).embed([SHORT_PROBE, probe_texts()[1]])
        ids.setdefault(n, []).append((cand.identity, short, medium))
        infinity.stop()
    (first, short256, medium256), (again, _, _) = ids[256]
    cut, short128, medium128 = ids[128][0]
    assert float(short256 @ short128 / np.linalg.norm(short256) / np.linalg.norm(short128)) > 0.9999  # the short
    assert float(medium256 @ medium128 / np.linalg.norm(medium256) / np.linalg.norm(medium128)) < 0.999  # probe is blind
    assert cut["probe"] != first["probe"] and cut["served_model"] == first["served_model"]
    assert again == first  # the same settings again: the same identity, nothing re-run
