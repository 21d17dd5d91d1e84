"""A candidate as a value: one immutable description per config entry, built once from the config.

Every kind (a model and its variants: backend, precision, max_seq_length, model_kwargs, prompts; BM25; a
`factory:` encoder; a run file; a retriever; an endpoint; the experiments hybrid, chunking, ANN and rerank) is
a `CandidateValue`: its kind, results name, revision, label, its own settings, and the values it is made of
(`parts`: a rerank holds its first stage, a hybrid its dense model and BM25, a chunking/ANN variant its model,
a retriever its embedder). Nothing about a candidate is recomputed where it is needed: its canonical form
(`canonical`: the sorted JSON of `record()`) is what `run_identity.py` hashes, with the weights' and the data's
fingerprints and the machine facts of an exported backend, into the run identity that identity.json stores;
`str(value)` is the same description in one line, as printed.

The settings are those today's results were fingerprinted with (tests/test_identity_compat.py checks every kind
against identities recorded before candidates became values): a part that was not hashed then (a hybrid's
BM25) is held with `hashed=False`, so no stored result is re-run by the upgrade.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ...config.model_spec import ModelSpec, backend_tag
from ..backends.cpu_features import cpu_identity


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


@dataclass(frozen=True)
class Part:
    """A value a candidate is made of, under the role it plays (`base`, `embedder`, `sparse`); `hashed=False`:
    held for the reader and the runner, not part of the fingerprint (kept as it was before values)."""

    role: str
    value: CandidateValue | None
    hashed: bool = True


@dataclass(frozen=True)
class CandidateValue:
    """One candidate, described (never loaded): equal values are the same candidate, a changed setting another."""

    kind: str  # model kinds: mteb, sentence-transformers, factory, bm25, run, retriever, endpoint; experiments:
    name: str  # hybrid, chunk, ann, rerank.  `name` is the results name, `revision` the results folder below it
    revision: str
    label: str
    settings_json: str  # this value's own settings, canonical JSON (frozen: a dict would be mutable)
    parts: tuple[Part, ...] = ()
    weight_paths: tuple[str, ...] = ()  # local files whose content is part of the identity (the parts' included)
    cache_variant: str = ""  # embedding cache folder: what besides name, revision and weights changes a vector

    @property
    def settings(self) -> dict[str, Any]:
        return json.loads(self.settings_json)

    def part(self, role: str) -> CandidateValue | None:
        """The value playing `role` in this one (None when there is none)."""
        return next((p.value for p in self.parts if p.role == role), None)

    def record(self) -> dict[str, Any]:
        """The static identity record: own settings plus each hashed part's record under its role."""
        return {**self.settings, **{p.role: p.value.record() if p.value is not None else None
                                    for p in self.parts if p.hashed}}

    @property
    def canonical(self) -> str:
        """The canonical string of this candidate: what is stored (identity.json) and hashed (run_identity.py)."""
        return _canonical(self.record())

    def walk(self) -> Iterator[CandidateValue]:
        """This value, then the values it is made of, depth first."""
        yield self
        for p in self.parts:
            if p.value is not None:
                yield from p.value.walk()

    def __str__(self) -> str:
        """One line: `kind name@revision {own settings}` with its parts, e.g. `rerank ... <base: bm25 ...>`."""
        own = {k: v for k, v in self.settings.items() if v not in (None, {}, False) and k not in ("name", "revision",
                                                                                                   "kind")}
        parts = "".join(f" <{p.role}: {p.value}>" for p in self.parts if p.value is not None)
        return f"{self.kind} {self.name}@{self.revision} {_canonical(own)}{parts}"


def spec_settings(spec: ModelSpec, name: str, revision: str, kind: str) -> dict[str, Any]:
    """The config's settings of a model entry that can change an embedding (paths are hashed, not named).
    `prompts`, `endpoint` and a backend other than torch fp32 are recorded only when set, so the results of
    entries without them keep their fingerprints; the backend's machine facts are added by run_identity."""
    reference = (spec.backend or "torch", spec.precision or "fp32") == ("torch", "fp32")
    return {"name": name, "revision": revision, "kind": kind, "max_seq_length": spec.max_seq_length,
            "model_kwargs": spec.model_kwargs, "factory": spec.factory, "factory_kwargs": spec.factory_kwargs,
            "trust_remote_code": spec.trust_remote_code, "local": bool(spec.path),
            **({"prompts": spec.prompts} if spec.prompts else {}),
            **({"endpoint": spec.endpoint.identity()} if spec.endpoint is not None else {}),
            **({} if reference else {"backend": spec.backend, "precision": spec.precision})}


def spec_cache_variant(spec: ModelSpec, kind: str) -> str:
    """What besides name, revision and weights changes a vector, so that vectors of another setting are never reused:
    max_seq_length, and for a `factory:` model the factory and its kwargs (model_kwargs are in the name)."""
    parts = [f"max_seq_length={spec.max_seq_length}"] if spec.max_seq_length else []
    if kind == "factory":
        blob = json.dumps([spec.factory, spec.factory_kwargs], sort_keys=True, default=str).encode()
        parts.append(f"factory={hashlib.sha256(blob).hexdigest()[:12]}")
    if backend_tag(spec.backend, spec.precision):  # an exported / quantised copy: never the reference's vectors
        parts.append(f"backend={spec.backend},precision={spec.precision}")
        cpu = cpu_identity(spec.backend, spec.precision)
        if cpu:  # bf16 / int8 vectors of another CPU are another machine's vectors
            parts.append(f"cpu={hashlib.sha256(json.dumps(cpu, sort_keys=True).encode()).hexdigest()[:12]}")
    return ",".join(parts)


def model_value(spec: ModelSpec, name: str, revision: str, kind: str, *, extra: dict[str, Any] | None = None,
                parts: tuple[Part, ...] = (), weight_paths: tuple[str, ...] | None = None,
                cache_variant: str | None = None) -> CandidateValue:
    """The value of one `models:` entry (`extra`: facts its kind adds, e.g. an endpoint's probe)."""
    own = () if kind == "bm25" else ((spec.path,) if spec.path else ())
    return CandidateValue(
        kind=kind, name=name, revision=str(revision), label=spec.default_label,
        settings_json=_canonical({**spec_settings(spec, name, str(revision), kind), **(extra or {})}),
        parts=parts, weight_paths=own if weight_paths is None else weight_paths,
        cache_variant=spec_cache_variant(spec, kind) if cache_variant is None else cache_variant)


def experiment_value(name: str, label: str, experiment: str, params: dict[str, Any], base: CandidateValue, *,
                     strategy: Any = None, reranker: dict[str, Any] | None = None, extra_paths: tuple[str, ...] = (),
                     sparse: CandidateValue | None = None) -> CandidateValue:
    """An experiment on `base`: a hybrid (with BM25 as `sparse`), a chunking or ANN setting (`strategy`), or a
    rerank of `base` (its first stage) by `reranker` whose files are `extra_paths`; revision: the base's."""
    own: dict[str, Any] = {"name": name, "experiment": experiment, "params": params}
    if reranker is not None:
        own["reranker"] = reranker
    else:
        own["strategy"] = repr(strategy)
    parts = (Part("base", base),) + ((Part("sparse", sparse, hashed=False),) if sparse is not None else ())
    return CandidateValue(kind=experiment, name=name, revision=base.revision, label=label,
                          settings_json=_canonical(own), parts=parts, weight_paths=base.weight_paths + extra_paths)
