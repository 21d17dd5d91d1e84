"""Distractor documents for a growth curve beyond the corpus: another collection's documents.

`distractors:` names a task YAML (its collection's documents, in any input format, checked like any
collection; its queries and labels are ignored) or a corpus file (JSONL/CSV/TSV/Parquet with _id, title,
text, as a BEIR corpus). Every distractor id is prefixed with `distractor:` so it can never be taken for
a corpus document; a corpus id that already has the prefixed form is an error. Texts stay as they are,
so the embedding cache (keyed by text) encodes each distractor once, for every later curve too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from custom_tasks.errors import ConfigError

PREFIX = "distractor:"
YAML = {".yaml", ".yml"}


@dataclass(frozen=True)
class Distractors:
    path: Path
    docs: dict[str, dict[str, str]]  # prefixed id -> {"title", "text"}, in the file's order
    content_hash: str  # changes when any id, title or text changes: the curve is computed again


def _read_docs(path: Path) -> dict[str, dict[str, str]]:
    if path.suffix.lower() in YAML:
        from custom_tasks.config import TaskConfig
        from custom_tasks.sources import load_collection

        tc = TaskConfig.from_file(path)
        return dict(load_collection(tc.source, tc.base_dir, tc.name).corpus.items())
    from custom_tasks.readers._io import read_table
    from custom_tasks.readers.tables import load_corpus
    from custom_tasks.validate import CollectionBuilder

    b = CollectionBuilder(path.stem)
    load_corpus(b, read_table(path, "utf-8", "distractor corpus"), "_id", "title", "text")
    return b.corpus


def content_hash(docs: Mapping[str, Mapping[str, str]]) -> str:
    h = hashlib.sha256()
    for doc_id, d in docs.items():
        h.update(json.dumps([doc_id, d.get("title", ""), d["text"]], ensure_ascii=False).encode())
    return h.hexdigest()[:16]


def load_distractors(path: Path, corpus: Mapping[str, object], where: Path | None,
                     seen: dict[Path, tuple[dict[str, dict[str, str]], str]] | None = None) -> Distractors:
    """Read and prefix the distractor documents; a missing file or an id clash is a ConfigError on `where`.

    `seen` (one growth run's reads, by resolved path) lets every entry and task of the run share one read;
    the next run reads the file again, so an edited collection is never answered from an old read.
    """
    if not path.is_file():
        raise ConfigError(where or path, f"distractors file {path} not found (a task YAML or a corpus "
                                         "file with _id, title, text; relative to the benchmark file)")
    key = path.resolve()
    if seen is not None and key in seen:
        docs, digest = seen[key]
    else:
        docs = {f"{PREFIX}{d}": v for d, v in _read_docs(path).items()}
        digest = content_hash(docs)
        if seen is not None:
            seen[key] = (docs, digest)
    clash = [d for d in docs if d in corpus]
    if clash:
        raise ConfigError(where or path, f"corpus ids {clash[:3]} clash with the prefixed distractor ids of {path}: "
                                         f"rename those documents (ids starting with '{PREFIX}' are reserved)")
    if not docs:
        raise ConfigError(where or path, f"distractors file {path} holds no document")
    return Distractors(path, docs, digest)
