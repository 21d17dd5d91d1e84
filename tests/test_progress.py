"""Encoding progress (issue #11): what a run shows while it encodes, and the libraries' bars kept quiet."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from runners.cli import app
from tests.conftest import MINILM, REPO, write_benchmark

runner = CliRunner()
DEMO_TASK = "NorthwindKBRetrieval"
DEMO_TEXTS = 425  # the demo's 178 documents + 247 queries, all distinct
SYN = {"name": "synthetic/hash", "factory": "runners.execution.encoding.synthetic:make_encoder", "revision": "1",
       "factory_kwargs": {"dim": 32}, "label": "synth"}
SPEED = re.compile(r"encoding: (\d+) texts in ([\d.]+)s, ([\d,.]+) texts/s")


class Recorder:
    """An EncodeProgress that remembers every call."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def start(self, label: str, total: int) -> None:
        self.calls.append(("start", label, total))

    def advance(self, n: int) -> None:
        self.calls.append(("advance", n))

    def finish(self) -> None:
        self.calls.append(("finish",))


def test_run_on_demo_prints_texts_per_second_and_final_counts(tmp_path):
    """Not a terminal: one plain line per (candidate, task) with texts, seconds, texts/s and the counts."""
    cfg = write_benchmark(tmp_path, [DEMO_TASK], [SYN])
    first = runner.invoke(app, ["run", "--config", str(cfg)])
    assert first.exit_code == 0, first.output
    done = [line for line in first.output.splitlines() if line.strip().startswith("done:")]
    assert len(done) == 1 and f"(encoded {DEMO_TEXTS}, reused 0)" in done[0]
    texts, seconds, rate = SPEED.search(done[0]).groups()
    assert int(texts) == DEMO_TEXTS and float(seconds) >= 0 and float(rate.replace(",", "")) > 0
    assert "it/s" not in first.output and "examples/s" not in first.output  # no foreign tqdm bars

    again = runner.invoke(app, ["run", "--config", str(cfg), "--force"])  # every vector now cached
    assert again.exit_code == 0, again.output
    assert f"(encoded 0, reused {DEMO_TEXTS})" in again.output and "texts/s" not in again.output


def test_cached_encoder_reports_chunks_and_keeps_vectors(tmp_path):
    """Missing texts go out longest first in whole batches; the result is in input order, as one call gives."""
    from datasets import Dataset
    from mteb.types import PromptType
    from torch.utils.data import DataLoader

    from custom_tasks.mteb_private import custom_collate_fn
    from runners.execution.cache.embedding_cache import CHUNK_BATCHES, CachedEncoder, EmbeddingStore
    from runners.execution.encoding.synthetic import make_encoder, synthetic_vectors

    texts = [f"text {'x' * (i % 7)} {i}" for i in range(51)]  # lengths vary: the encode order is not the input's
    texts[10] = texts[20]  # the same text twice is encoded once
    loader = DataLoader(Dataset.from_dict({"text": texts}), batch_size=4, collate_fn=custom_collate_fn())
    meta = type("Meta", (), {"name": "T", "prompt": None})()
    enc = CachedEncoder(make_encoder(dim=8), EmbeddingStore(tmp_path / "store"), label="m")
    enc.progress = rec = Recorder()
    out = enc.encode(loader, task_metadata=meta, hf_split="test", hf_subset="default",
                     prompt_type=PromptType.document)
    assert np.array_equal(out, synthetic_vectors(texts, 8))
    unique = len(set(texts))
    assert rec.calls[0] == ("start", "m on T documents", unique) and rec.calls[-1] == ("finish",)
    steps = [c[1] for c in rec.calls if c[0] == "advance"]
    assert sum(steps) == unique and all(n == 4 * CHUNK_BATCHES for n in steps[:-1])
    assert (enc.encoded, enc.reused) == (unique, len(texts) - unique)

    rec.calls.clear()  # all cached now: a pass of nothing is not even started
    enc.encode(loader, task_metadata=meta, hf_split="test", hf_subset="default", prompt_type=PromptType.document)
    assert rec.calls == []


def test_shared_encoder_reports_to_the_run_in_progress(tmp_path):
    """No progress set on the encoder (experiments share one): passes go to the run's, never to a stale one."""
    from datasets import Dataset
    from mteb.types import PromptType
    from torch.utils.data import DataLoader

    from custom_tasks.mteb_private import custom_collate_fn
    from runners.execution.cache.embedding_cache import CachedEncoder, EmbeddingStore
    from runners.execution.encoding.progress import current_progress, reporting_to
    from runners.execution.encoding.synthetic import make_encoder

    enc = CachedEncoder(make_encoder(dim=8), EmbeddingStore(tmp_path / "store"))
    meta = type("Meta", (), {"name": "T", "prompt": None})()

    def encode(texts: list[str]) -> None:
        loader = DataLoader(Dataset.from_dict({"text": texts}), batch_size=2, collate_fn=custom_collate_fn())
        enc.encode(loader, task_metadata=meta, hf_split="test", hf_subset="default", prompt_type=PromptType.query)

    first, second = Recorder(), Recorder()
    with reporting_to(first):
        encode(["a", "b", "c"])
    with reporting_to(second):
        encode(["c", "d"])
    encode(["e"])  # outside any run: nobody is told
    assert first.calls == [("start", "T queries", 3), ("advance", 3), ("finish",)]
    assert second.calls == [("start", "T queries", 1), ("advance", 1), ("finish",)]
    assert type(current_progress()).__name__ == "NullProgress"


def test_plain_lines_for_a_long_pass_and_summary():
    from rich.console import Console
    from rich.progress import Progress

    from runners.cli.encode_progress import ConsoleEncodeProgress

    buf = io.StringIO()
    console = Console(file=buf, width=200)
    bar = ConsoleEncodeProgress(Progress(console=console), console, live=False, every=0.0)
    bar.start("m on T documents", 10)
    bar.advance(4)
    bar.advance(6)
    bar.finish()
    lines = buf.getvalue().splitlines()
    assert lines[0].startswith("  encoding m on T documents: 4/10 texts,") and lines[0].endswith("texts/s")
    assert "10/10 texts" in lines[1]
    assert SPEED.search("encoding: " + bar.summary()).group(1) == "10"
    assert bar.summary() == ""  # counted once


def test_live_bar_shows_speed_and_eta_after_the_first_chunk():
    import time

    from rich.console import Console
    from rich.progress import Progress

    from runners.cli.encode_progress import ConsoleEncodeProgress, Eta, TextsPerSecond

    console = Console(file=io.StringIO(), width=200)
    progress = Progress(console=console)
    bar = ConsoleEncodeProgress(progress, console, live=True)
    bar.start("m on T documents", 100)
    task = progress.tasks[-1]
    assert TextsPerSecond().render(task).plain == "… texts/s"
    time.sleep(0.05)
    bar.advance(40)  # one chunk: rich has a single sample, so its own speed and ETA are still unknown
    speed = TextsPerSecond().render(task).plain
    assert re.fullmatch(r"[\d,]+\.\d texts/s", speed) and re.fullmatch(r"\d+:\d\d:\d\d", Eta().render(task).plain)
    bar.finish()
    assert not task.visible and bar.summary().startswith("40 texts in ")
    assert console.file.getvalue() == ""  # live mode prints no plain lines


def test_quiet_foreign_bars_restores_library_state():
    import bm25s
    import bm25s.tokenization
    from datasets.utils.tqdm import tqdm as datasets_tqdm
    from huggingface_hub.utils import tqdm as hub_tqdm
    from mteb.models import hybrid_wrappers

    from runners.execution.encoding.progress import quiet_foreign_bars

    from transformers.utils import logging as hf_logging

    def bars() -> list[bool]:  # disabled?, per library: bm25s, mteb's hybrid, datasets, huggingface_hub, transformers
        made = [bm25s.tokenization.tqdm([1, 2]), hybrid_wrappers.tqdm([1, 2], desc="Sub-models"),
                datasets_tqdm([1, 2]), hub_tqdm([1, 2]), hf_logging.tqdm([1, 2])]
        return [bool(getattr(b, "disable", True)) for b in made]

    from tqdm import std

    before, init = bars(), std.tqdm.__dict__["__init__"]
    assert before == [False] * 5
    with quiet_foreign_bars():
        assert bars() == [True] * 5
    assert bars() == before and std.tqdm.__dict__["__init__"] is init
    with quiet_foreign_bars(enabled=False):
        assert bars() == before


@pytest.mark.slow
def test_real_demo_run_shows_minilm_speed(tmp_path):
    """The shipped demo config (MiniLM + BM25), results redirected: MiniLM's encoding line, BM25 encodes nothing."""
    demo = yaml.safe_load((REPO / "configs" / "benchmarks" / "demo.yaml").read_text())
    assert demo["models"][0]["name"] == MINILM
    demo["results_dir"] = str(tmp_path / "results")
    cfg = tmp_path / "demo.yaml"
    cfg.write_text(yaml.safe_dump(demo))
    result = runner.invoke(app, ["run", "--config", str(cfg)])
    assert result.exit_code == 0, result.output
    done = {line.split(" on ")[0].strip(): line for line in result.output.splitlines() if "done:" in line}
    minilm = done["done: all-MiniLM-L6-v2"]
    assert f"(encoded {DEMO_TEXTS}, reused 0)" in minilm and int(SPEED.search(minilm).group(1)) == DEMO_TEXTS
    assert "(encoded 0, reused 0)" in done["done: BM25"] and "texts/s" not in done["done: BM25"]
