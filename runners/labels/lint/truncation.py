"""Truncation check of `tasks lint -c` and `tasks validate -c`: the documents each candidate cuts at its
max_seq_length, in its own tokens (validate's word estimate is only a lower bound: Romanian text under MiniLM's
tokenizer is about 2.5 tokens per word, English scientific abstracts about 1.6, not the 1.3 it assumes).

A model embeds only its first max_seq_length tokens (special tokens included) of mteb's document string
"title text"; an answer past that point is invisible to it. Counting needs each model's own tokenizer, so this
lives in the execution layer, which knows where a model's files are (an explicit `path:`, an installed offline
package, else the local Hugging Face cache; never a download). The tokenizer is the model's `tokenizer.json`
read with the `tokenizers` library (no torch), or transformers' AutoTokenizer when that file is missing.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from custom_tasks.collection import Collection, CollectionWarning

from .lint import EXAMPLES, Finding
from custom_tasks.validate import IdWarning

from ...config.benchmark import BenchmarkConfig
from ...config.model_spec import ENCODES_NOTHING, ModelSpec
from ...execution.encoding.models import offline_copy
from ...search.chunk_fit import document_string

CountFn = Callable[[Sequence[str]], list[int]]
_BATCH = 512


def model_folder(spec: ModelSpec) -> Path | None:
    """The local folder of a model's files (path, offline package, HF cache), None when none is on this machine."""
    if spec.path:
        return Path(spec.path)
    local = offline_copy(spec.name)
    if local:
        return Path(local)
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(spec.name, revision=spec.revision, local_files_only=True))
    except Exception:  # noqa: BLE001 - not in the cache (or not a hub name): the check says it was skipped
        return None


def seq_limit(spec: ModelSpec, folder: Path) -> int | None:
    """max_seq_length as the model runs: the config's, else sentence-transformers', else the tokenizer's."""
    if spec.max_seq_length:
        return spec.max_seq_length
    for name, key in (("sentence_bert_config.json", "max_seq_length"), ("tokenizer_config.json", "model_max_length")):
        try:
            value = json.loads((folder / name).read_text(encoding="utf-8")).get(key)
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(value, int) and 0 < value < 1_000_000:  # transformers writes 1e30 for "no limit"
            return value
    return None


def token_counter(folder: Path) -> CountFn:
    """texts -> tokens each would be before truncation, special tokens included."""
    if (folder / "tokenizer.json").is_file():
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tok.no_truncation()  # the file may carry a truncation setting: counts must be of the whole text
        tok.no_padding()
        return lambda texts: [len(e.ids) for e in tok.encode_batch(list(texts), add_special_tokens=True)]
    from transformers import AutoTokenizer

    auto = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    return lambda texts: [len(ids) for ids in auto(list(texts), add_special_tokens=True, verbose=False)["input_ids"]]


def document_lengths(collection: Collection, count: CountFn) -> dict[str, int]:
    """Tokens of every document's "title text" string, in corpus order."""
    ids = list(collection.corpus)
    out: dict[str, int] = {}
    for start in range(0, len(ids), _BATCH):
        chunk = ids[start:start + _BATCH]
        texts = [document_string(collection.corpus[d].get("title") or "", collection.corpus[d]["text"])
                 for d in chunk]
        out.update(zip(chunk, count(texts)))
    return out


def truncation_finding(collection: Collection, label: str, limit: int, lengths: dict[str, int]) -> Finding | None:
    """The share of documents, and of relevant ones, longer than ``limit`` tokens (None when none is)."""
    relevant = {d for s in collection.splits for labels in collection.qrels[s].values()
                for d, g in labels.items() if g > 0}
    over = sorted((d for d, n in lengths.items() if n > limit), key=lambda d: (-lengths[d], d))
    if not over:
        return None
    rel_over = [d for d in over if d in relevant]
    share = len(over) / len(lengths)
    rel_share = len(rel_over) / len(relevant) if relevant else 0.0
    return Finding(f"truncation[{label}]",
                   f"{label} (max_seq_length {limit}) cuts {len(over)} of {len(lengths)} documents ({share:.1%}) "
                   f"and {len(rel_over)} of {len(relevant)} relevant ones ({rel_share:.1%})",
                   len(over), [f"{d} ({lengths[d]} tokens)" for d in (rel_over or over)[:EXAMPLES]],
                   "score chunks (an experiment `{type: chunk, model: ..., sizes: [...]}`) or prefer a model with a longer limit; "
                   "an answer past the limit is invisible to this model",
                   [{"model": label, "max_seq_length": limit, "documents_over": len(over), "share": round(share, 6),
                     "relevant_over": len(rel_over), "relevant": len(relevant), "relevant_share": round(rel_share, 6),
                     "documents": [{"document": d, "tokens": lengths[d]} for d in over]}])


def candidate_lengths(collection: Collection, bench: BenchmarkConfig
                      ) -> tuple[list[tuple[str, int, dict[str, int]]], dict[str, str]]:
    """([(label, max_seq_length, tokens per document)] of every candidate whose tokenizer is on this machine,
    skipped: candidate -> why); the same tokenizer files count once, whatever the limit."""
    counted, skipped = [], {}
    cache: dict[Path, dict[str, int]] = {}
    for spec in bench.models:
        label = spec.default_label
        if spec.resolved_kind in ENCODES_NOTHING or spec.resolved_kind == "factory":
            skipped[f"truncation[{label}]"] = f"kind {spec.resolved_kind}: no tokenizer to count with"
            continue
        folder = model_folder(spec)
        if folder is None:
            skipped[f"truncation[{label}]"] = "model files not on this machine (no path, offline package or cache)"
            continue
        limit = seq_limit(spec, folder)
        if limit is None:
            skipped[f"truncation[{label}]"] = "no max_seq_length in the config or the model's files"
            continue
        key = folder.resolve()
        if key not in cache:
            cache[key] = document_lengths(collection, token_counter(folder))
        counted.append((label, limit, cache[key]))
    return counted, skipped


def truncation_findings(collection: Collection, bench: BenchmarkConfig) -> tuple[list[Finding], dict[str, str]]:
    """(findings, skipped: candidate -> why) for every candidate of ``bench`` that encodes text."""
    counted, skipped = candidate_lengths(collection, bench)
    found = [truncation_finding(collection, label, limit, lengths) for label, limit, lengths in counted]
    return [f for f in found if f is not None], skipped


def truncated_document_warnings(collection: Collection, bench: BenchmarkConfig
                                ) -> tuple[list[CollectionWarning], list[str]]:
    """`tasks validate -c`: (a ``truncated_document`` warning per document longer than some candidate's
    max_seq_length in that candidate's own tokens, the labels counted). No candidate counted: ([], [])."""
    counted, _ = candidate_lengths(collection, bench)
    out: list[CollectionWarning] = []
    for doc_id in collection.corpus:
        over = [(lengths[doc_id], label, limit) for label, limit, lengths in counted if lengths[doc_id] > limit]
        if over:
            shown = ", ".join(f"{n} tokens for {label} (limit {limit})" for n, label, limit in over)
            out.append(IdWarning("truncated_document", f"document {doc_id!r} is {shown}: its end is never embedded",
                                 ids=(doc_id,)))
    return out, [label for label, _, _ in counted]


def attach(report: Any, collection: Collection, bench: BenchmarkConfig) -> None:
    """Add the truncation findings and skips of ``bench``'s candidates to a ``LintReport``."""
    found, skipped = truncation_findings(collection, bench)
    report.findings.extend(found)
    report.skipped.update(skipped)
