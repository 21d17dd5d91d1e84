"""A candidate as a value: one immutable description per config entry, built once from the config.

Every kind (a model and its variants: backend, precision, max_seq_length, model_kwargs, prompts; BM25; a
`factory:` encoder; a run file; a retriever; an endpoint; the experiments hybrid, chunking, ANN and rerank) is
a `CandidateValue`: its kind, results name, revision, label, its own settings, and the values it is made of
(`parts`: a rerank holds its first stage, a hybrid its dense model and BM25, a chunking/ANN variant its model,
a retriever its embedder). Nothing about a candidate is recomputed where it is needed: its canonical form
(`canonical`: the sorted JSON of `record()`) is what `run_identity.py` hashes, with the weights' and the data's
fingerprints and the machine facts of an exported backend, into the run identity that identity.json stores;
`str(value)` is the same description in one line, as the runner logs it when the candidate runs.

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

from ...config.candidate_facts import SpecFacts


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


def model_value(f: SpecFacts, revision: str, cpu: dict[str, Any] | None = None, *, extra: dict[str, Any] | None = None,
                parts: tuple[Part, ...] = (), weight_paths: tuple[str, ...] | None = None,
                cache_variant: str | None = None) -> CandidateValue:
    """The value of one `models:` entry from its facts (config/candidate_facts.py) and its revision; `cpu`: the
    CPU features that decide an exported bf16/int8 backend's vectors (they name its cache folder); `extra`: the
    facts its kind adds, e.g. an endpoint's probe."""
    variant = list(f.cache_parts)
    if cpu:  # bf16 / int8 vectors of another CPU are another machine's vectors
        variant.append(f"cpu={hashlib.sha256(json.dumps(cpu, sort_keys=True).encode()).hexdigest()[:12]}")
    return CandidateValue(
        kind=f.kind, name=f.results_name, revision=str(revision), label=f.label,
        settings_json=_canonical({**f.settings, "revision": str(revision), **(extra or {})}),
        parts=parts, weight_paths=f.weight_paths if weight_paths is None else weight_paths,
        cache_variant=",".join(variant) if cache_variant is None else cache_variant)


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
