"""`kind: endpoint` against a fake /v1/embeddings server on 127.0.0.1 (tests/fake_embeddings.py): the client's
batching, concurrency bound, retries with backoff, API key from the environment only, one-line errors; the
probe that detects a model swapped behind the same URL; prompts as a model setting (`@pr<hash>`, an mteb
experiment). The same against a real server (Infinity): tests/test_endpoint_server.py."""

from __future__ import annotations

import socket

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from custom_tasks.errors import ConfigError
from fake_embeddings import FakeEmbeddings, fake_vector
from runners.cli import app
from conftest import TINY_YAML as TINY
from runners.config.model_spec import ModelSpec

runner = CliRunner()




def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spec(url: str, **endpoint) -> ModelSpec:
    return ModelSpec(name="team/served", kind="endpoint", endpoint={"url": url, "model": "fake-embed-1", **endpoint})


def client(url: str, sleeps: list | None = None, **endpoint):
    from runners.execution.candidates.endpoint_candidate import EndpointClient

    return EndpointClient(spec(url, **endpoint), "bench.yaml", **({"sleep": sleeps.append} if sleeps is not None else {}))


def test_batches_in_order_with_bounded_concurrency(served) -> None:
    fake = FakeEmbeddings(delay_s=0.05)
    c = client(served(fake), batch_size=7, max_concurrency=3)
    texts = [f"text {i}" for i in range(40)]
    vectors = c.embed(texts)
    assert sorted(fake.batch_sizes) == sorted([7] * 5 + [5])
    assert vectors.dtype == np.float32 and vectors.shape == (40, 16)
    np.testing.assert_allclose(vectors, np.stack([fake_vector(0, t) for t in texts]), atol=1e-6)  # order kept
    assert fake.max_in_flight == 3 and c.stats.max_in_flight == 3


def test_retries_back_off_then_succeed(served) -> None:
    fake = FakeEmbeddings(fail_first=2, fail_status=503, retry_after=None)
    sleeps: list[float] = []
    c = client(served(fake), sleeps, backoff_s=0.5, max_retries=3)
    assert c.embed(["a"]).shape == (1, 16)
    assert sleeps == [0.5, 1.0] and c.stats.failures == {"http 503": 2} and fake.requests == 3
    fake = FakeEmbeddings(fail_first=1, fail_status=429, retry_after="7")
    sleeps = []
    client(served(fake), sleeps, backoff_s=0.1).embed(["a"])
    assert sleeps == [7.0]  # the server's Retry-After, longer than the backoff


def test_retries_spent_is_one_line(served) -> None:
    from runners.execution.candidates.endpoint_candidate import EndpointError

    fake = FakeEmbeddings(fail_first=100, fail_status=500, retry_after=None)
    sleeps: list[float] = []
    with pytest.raises(EndpointError) as e:
        client(served(fake), sleeps, max_retries=2, backoff_s=0.0).embed(["a"])
    assert fake.requests == 3 and len(sleeps) == 2
    assert str(e.value).count("\n") == 0 and "no answer after 3 attempt(s) (http 500)" in str(e.value)
    assert str(e.value).startswith("bench.yaml: model 'team/served': endpoint http://127.0.0.1:")


def test_api_key_comes_from_the_named_environment_variable(served, monkeypatch) -> None:
    fake = FakeEmbeddings(api_key="s3cret")
    url = served(fake)
    monkeypatch.setenv("TEAM_EMBED_KEY", "s3cret")
    client(url, api_key_env="TEAM_EMBED_KEY").embed(["a"])
    assert fake.auth_seen == ["Bearer s3cret"]
    monkeypatch.delenv("TEAM_EMBED_KEY")
    with pytest.raises(ConfigError, match="HTTP 401"):
        client(url, api_key_env="TEAM_EMBED_KEY").embed(["a"])
    assert fake.auth_seen[-1] is None  # no key set: none sent
    with pytest.raises(ValueError, match="NAME of an environment variable") as e:
        spec(url, api_key_env="sk-live-abc123!")  # a key pasted into the config is refused
    assert "sk-" not in str(e.value).split("input_value")[0]  # pydantic's own repr aside: no part of it shown


@pytest.mark.parametrize("case", ["unreachable", "not_found", "garbage"])
def test_a_broken_server_is_one_line(case, served) -> None:
    """The candidate is made (the run goes on with the others); loading it is the one-line error."""
    from runners.execution.candidates.endpoint_candidate import candidate

    url = {"unreachable": lambda: f"http://127.0.0.1:{_free_port()}/v1",
           "not_found": lambda: served(FakeEmbeddings()).replace("/v1", "/nothing"),
           "garbage": lambda: served(FakeEmbeddings(garbage=True))}[case]()
    broken = candidate(spec(url))
    assert broken.identity["probe"] is None
    with pytest.raises(ConfigError) as e:
        broken.load()
    line = str(e.value)
    assert "\n" not in line and url in line
    assert {"unreachable": "is unreachable", "not_found": "HTTP 404", "garbage": "did not answer embeddings JSON"}[case] in line


def test_probe_names_the_served_model_and_a_swap_changes_the_identity(served, tmp_path) -> None:
    from runners.execution.candidates.endpoint_candidate import _PROBES, candidate

    _PROBES.clear()
    fake = FakeEmbeddings()
    url = served(fake)

    class Cfg:
        path, cache_path = "bench.yaml", tmp_path / "cache"

    first = candidate(spec(url), cfg=Cfg())
    assert first.identity["served_model"] == "fake-embed-1" and fake.inputs[0].startswith("private-mteb probe")
    _PROBES.clear()  # a new process: the probe id is read back from the cache folder
    again = candidate(spec(url), cfg=Cfg())
    assert again.identity == first.identity and again.cache_variant == first.cache_variant
    fake.seed = 1  # another model behind the same URL and name
    swapped = candidate(spec(url), cfg=Cfg())
    assert swapped.identity["probe"] != first.identity["probe"] and swapped.cache_variant != first.cache_variant
    fake.model = "fake-embed-2"
    assert candidate(spec(url), cfg=Cfg()).identity["served_model"] == "fake-embed-2"


def test_probe_noise_keeps_its_id(tmp_path) -> None:
    from runners.execution.candidates.endpoint_candidate import _PROBES, probe_id

    _PROBES.clear()
    v = fake_vector(0, "x", 384).astype(np.float32)
    pid = probe_id("m", v, tmp_path)
    _PROBES.clear()
    assert probe_id("m", v + np.float32(1e-6), tmp_path) == pid  # a server's float noise: the same model
    assert probe_id("m", fake_vector(1, "x", 384).astype(np.float32), tmp_path) != pid


def test_endpoint_entry_settings() -> None:
    s = ModelSpec(name="team/e5", endpoint={"url": "http://127.0.0.1:7997/v1"}, prompts={"query": "query: ",
                                                                                        "document": "passage: "})
    assert s.resolved_kind == "endpoint" and s.endpoint.embeddings_url == "http://127.0.0.1:7997/v1/embeddings"
    assert s.results_name.startswith("team/e5@pr") and len(s.results_name) == len("team/e5@pr") + 8
    for bad, match in (({"max_seq_length": 128}, "cannot set max_seq_length"),
                       ({"kind": "sentence-transformers"}, "`endpoint:` is for kind endpoint")):
        with pytest.raises(ValueError, match=match):
            ModelSpec(name="x", endpoint={"url": "http://127.0.0.1:1/v1"}, **bad)
    with pytest.raises(ValueError, match="kind endpoint needs `endpoint:"):
        ModelSpec(name="x", kind="endpoint")
    with pytest.raises(ValueError, match="not an http"):
        ModelSpec(name="x", endpoint={"url": "127.0.0.1:7997"})


def test_prompts_are_a_variant_stored_as_an_mteb_experiment() -> None:
    from mteb.models.model_meta import ModelMeta

    from runners.execution.candidates.candidates import candidate_from_spec
    from runners.results.variants import experiment_name, variant_of

    plain = ModelSpec(name="sentence-transformers/all-MiniLM-L6-v2")
    e5 = plain.model_copy(update={"prompts": {"query": "query: ", "document": "passage: "}})
    other = plain.model_copy(update={"prompts": {"query": "query: "}})
    assert plain.results_name == "sentence-transformers/all-MiniLM-L6-v2"
    assert len({plain.results_name, e5.results_name, other.results_name}) == 3
    base, kwargs = variant_of(e5.results_name)
    assert base == plain.results_name and kwargs == {"prompts": e5.results_name.split("@pr")[1]}
    meta = ModelMeta.create_empty(overwrites={"name": base, "experiment_kwargs": kwargs})
    assert experiment_name(kwargs) == meta.experiment_name  # mteb's own folder name for the setting
    ident = candidate_from_spec(e5).identity
    assert ident["prompts"] == e5.prompts and "prompts" not in candidate_from_spec(plain).identity
    with pytest.raises(ValueError, match="prompts apply to models that encode"):
        ModelSpec(name="bm25", prompts={"query": "q: "})


def test_prompts_reach_the_sentence_transformers_model(minilm, recwarn) -> None:
    from mteb.types import PromptType

    from runners.execution.encoding.models import load_model

    prompts = {"query": "query: ", "Retrieval-document": "passage: "}
    model = load_model(ModelSpec(name="sentence-transformers/all-MiniLM-L6-v2", prompts=prompts))
    assert model.model_prompts == prompts
    assert not [w for w in recwarn if "Model prompts specified" in str(w.message)]  # asked for: no warning

    class Meta:
        name, type = "T", "Retrieval"

    from mteb.models.abs_encoder import get_prompt

    assert get_prompt(model.model_prompts, Meta, PromptType.query) == "query: "
    assert get_prompt(model.model_prompts, Meta, PromptType.document) == "passage: "  # by task type


def test_a_failing_endpoint_is_skipped_like_any_failing_model(tiny_copy, served, tmp_path) -> None:
    """A wrong URL (refused, 404) or retries spent mid-run fail that model only, one line each; BM25 still runs;
    exit 2 at the end (`run --help`)."""
    unreachable = f"http://127.0.0.1:{_free_port()}/v1"
    not_found = served(FakeEmbeddings()).replace("/v1", "/nothing")
    flaky = served(FakeEmbeddings(fail_after=3, fail_status=500, retry_after=None))  # the 3 probes, then 500s
    cfg = tmp_path / "bench.yaml"
    endpoints = [("wrong", unreachable, {}), ("missing", not_found, {}),
                 ("flaky", flaky, {"max_retries": 1, "backoff_s": 0})]
    cfg.write_text(yaml.safe_dump({"name": "e", "tasks": [str(tiny_copy)], "results_dir": str(tmp_path / "r"),
                                   "models": [{"name": "bm25"}] + [
                                       {"name": f"team/{label}", "label": label, "kind": "endpoint",
                                        "endpoint": {"url": url, **extra}} for label, url, extra in endpoints]}))
    r = runner.invoke(app, ["run", "-c", str(cfg)])
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and "done: BM25 on TinyKBRetrieval" in r.output
    failed = [line for line in r.output.splitlines() if line.startswith("failed:")]
    assert len(failed) == 3, r.output
    wrong, missing, flaky_line = failed
    assert wrong.startswith("failed: wrong on TinyKBRetrieval: ") and unreachable in wrong and "unreachable" in wrong
    assert missing.startswith("failed: missing on TinyKBRetrieval: ") and "HTTP 404" in missing
    assert flaky_line.startswith("failed: flaky on TinyKBRetrieval: ") and "no answer after 2 attempt(s) (http 500)" in flaky_line
    assert "crashed" not in r.output and "EndpointError" not in r.output  # the error's own line, no type name
    assert r.output.count(str(cfg)) == 3  # each failed line names the config once, nothing else repeats it


def test_a_pasted_key_is_never_printed(tmp_path) -> None:
    key = "sk-proj-" + "Q7x" * 20
    cfg = tmp_path / "bench.yaml"
    cfg.write_text(yaml.safe_dump({"name": "e", "tasks": [str(TINY)], "models": [
        {"name": "team/served", "endpoint": {"url": "http://127.0.0.1:1/v1", "api_key_env": key}}]}))
    r = runner.invoke(app, ["run", "-c", str(cfg)])
    assert r.exit_code == 2 and "api_key_env must be the NAME of an environment variable" in r.output, r.output
    assert not any(key[i:i + 6] in r.output for i in range(len(key) - 5)), r.output  # no 6 characters of it
    from runners.config.generator import GeneratorOptions  # the question writer's key: the same rule

    with pytest.raises(ValueError) as e:
        GeneratorOptions(endpoint="http://127.0.0.1:1/v1", model="m", api_key_env=key)
    shown = "; ".join(err["msg"] for err in e.value.errors())  # what a config error prints
    assert "NAME of an environment variable" in shown and not any(key[i:i + 6] in shown for i in range(len(key) - 5))


def test_latency_is_measured_as_served(served, tmp_path) -> None:
    """Each query the latency pass times is one request to the server (never the cache); the record names it."""
    from conftest import TINY_YAML, write_benchmark
    from runners.config.benchmark import BenchmarkConfig
    from runners.execution.measure.latency import LatencyOptions, measure
    from runners.execution.run import candidates_for, run_benchmark
    from runners.execution.tasks import load_task

    fake = FakeEmbeddings(delay_s=0.02)
    url = served(fake)
    path = write_benchmark(tmp_path, [str(TINY_YAML)], models=[
        {"name": "team/served", "kind": "endpoint", "label": "served", "endpoint": {"url": url, "model": "fake-embed-1"}}])
    cfg = BenchmarkConfig.from_file(path)
    assert [r.status for r in run_benchmark(cfg, show_progress=False)] == ["ran"]
    before = len(fake.batch_sizes)
    opts = LatencyOptions(queries=4, repeats=2, warmup=1, encode_sample=4)
    rec = measure(cfg, candidates_for(cfg), [load_task(t) for t in cfg.tasks], opts)[0]
    assert rec["measurable"] and rec["latency_ms"]["p50"] >= 15  # the server's 20 ms per request, as served
    # requests of one text: the probe, the warm-up query and the 4 x 2 timed ones (the cache holds every query)
    assert fake.batch_sizes[before:].count(1) >= 1 + 1 + 4 * 2
    encoder = next(f for f in rec["facts"] if f["part"] == "encoder")
    assert encoder["served_by"] == url + "/embeddings" and encoder["served_model"] == "fake-embed-1"
    assert encoder["requests"] >= 4 * 2 + 1


def test_the_benchmarks_max_seq_length_is_not_an_endpoints(tmp_path) -> None:
    from conftest import TINY_YAML, write_benchmark
    from runners.config.benchmark import BenchmarkConfig

    path = write_benchmark(tmp_path, [str(TINY_YAML)], encode={"max_seq_length": 128}, models=[
        {"name": "team/served", "endpoint": {"url": "http://127.0.0.1:1/v1"}}, {"name": "sentence-transformers/x"}])
    served, local = BenchmarkConfig.from_file(path).models
    assert served.max_seq_length is None and served.results_name == "team/served"
    assert local.max_seq_length == 128
