"""The generated query log (scripts/query_log_generator.py) is what issue 38's tests need, and the redactor clears it:
every planted personal value gone from every format, counted as its kind, no look-alike or clean query touched."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from runners.labels.questions.redact import KINDS, Redactor
from scripts.query_log_generator import COLUMNS, TOPICS, make_query_log

FORMATS = ("csv", "tsv", "jsonl", "parquet")


@pytest.fixture(scope="module")
def log():
    return make_query_log(n_rows=6000, seed=7)


def _read(path: Path) -> pd.DataFrame:
    if path.suffix == ".parquet":
        return pd.read_parquet(path)
    if path.suffix == ".jsonl":
        return pd.read_json(path, lines=True, dtype={"user_id": str, "session_id": str})
    return pd.read_csv(path, sep="\t" if path.suffix == ".tsv" else ",", keep_default_na=False,
                       dtype={"user_id": str, "session_id": str})


def _compact(value: str) -> str:
    return re.sub(r"[ -]", "", value)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_planted_value_is_redacted_in_every_format_and_no_lookalike_is(log, fmt: str, tmp_path: Path) -> None:
    df = _read(log.write(tmp_path / f"log.{fmt}"))
    assert list(df.columns) == list(COLUMNS) and len(df) == log.n_rows
    redactor = Redactor(list(log.custom_patterns))
    texts, total = redactor.redact_all(df["query"].astype(str))
    blob = "\n".join(texts)
    left = [p.kind for p in log.sensitive if p.value in blob or _compact(p.value) in _compact(blob)]
    assert left == [], f"{len(left)} planted values survived (kinds {sorted(set(left))})"
    kept = [p.value for p in log.lookalikes if p.value not in blob]
    assert kept == [], f"look-alikes redacted: {kept}"
    # counted as their kind: each planted query holds one value, and it sits in its rows
    rows_of = Counter(df["query"])
    expected = Counter()
    for p in log.sensitive:
        expected[p.kind] += rows_of[p.query]
    assert total == expected
    assert set(expected) == set(KINDS), "a kind without a planted value"


def test_clean_queries_are_never_redacted(log) -> None:
    redactor = Redactor(list(log.custom_patterns))
    touched = [q for q in log.queries if redactor.redact(q).redacted]
    assert touched == []


def test_each_planted_query_is_counted_as_its_own_kind(log) -> None:
    redactor = Redactor(list(log.custom_patterns))
    wrong = [(p.kind, dict(redactor.redact(p.query).counts)) for p in log.planted
             if redactor.redact(p.query).counts != (Counter({p.kind: 1}) if p.kind else Counter())]
    assert wrong == []
    # the invalid checksums come in both forms of the stated rule: kept verbatim, and a long run -> digits
    digits_rule = [p for p in log.planted if p.kind == "digits" and not p.query.startswith(("order", "ticket",
                                                                                          "customer"))]
    assert len(digits_rule) >= 3 and len([p for p in log.lookalikes if "declined again" in p.query]) == 1


def test_same_seed_same_bytes_other_seed_other_log(tmp_path: Path) -> None:
    for fmt in FORMATS:
        a = make_query_log(n_rows=3000, seed=3).write(tmp_path / "a" / f"log.{fmt}")
        b = make_query_log(n_rows=3000, seed=3).write(tmp_path / "b" / f"log.{fmt}")
        c = make_query_log(n_rows=3000, seed=4).write(tmp_path / "c" / f"log.{fmt}")
        digest = [hashlib.sha256(p.read_bytes()).hexdigest() for p in (a, b, c)]
        assert digest[0] == digest[1] != digest[2], fmt


def test_frequencies_are_zipf_like_over_the_demo_topics(log, tmp_path: Path) -> None:
    df = _read(log.write(tmp_path / "log.csv"))
    counts = df["query"].value_counts().to_numpy()
    # every distinct clean query is in the log at least once, plus the planted ones
    assert df["query"].nunique() == len(log.queries) + len({p.query for p in log.planted})
    # rank-frequency of the head on a log-log scale: a straight line of slope about -s (the tail is floored at 1)
    ranks = np.arange(1, 31)
    slope = np.polyfit(np.log(ranks), np.log(counts[:30] - 1), 1)[0]
    assert -1.4 < slope < -0.75, slope
    assert counts[0] > 10 * counts[29]
    # topics of the demo knowledge base: each one's share falls with its popularity rank
    topic_of = dict(zip(log.queries, log.topics))
    share = Counter(topic_of[q] for q in df["query"] if q in topic_of)
    assert set(share) == set(TOPICS)
    top = [t for t, _ in share.most_common(3)]
    assert top == list(TOPICS)[:3]
    kb = (Path(__file__).resolve().parents[1] / "data" / "demo_kb" / "corpus.jsonl").read_text(encoding="utf-8")
    assert all(f'"kb-{t}-' in kb for t in TOPICS), "a topic that is not a document prefix of data/demo_kb"


def test_duplicates_ids_times_and_counts(log, tmp_path: Path) -> None:
    df = _read(log.write(tmp_path / "log.jsonl", columns={"query": "search_term", "count": "hits"}))
    assert {"search_term", "hits"} <= set(df.columns)
    queries = set(df["search_term"])
    for q, v in log.exact_variants:
        assert q in queries and v in queries and q != v
        assert " ".join(v.lower().strip(" ?").split()) == q  # the same query once case, spaces, "?" are folded
    for q, v in log.near_duplicates:
        assert q in queries and v in queries and q != v
    assert df["hits"].min() == 1 and df["hits"].max() > 1
    assert pd.to_datetime(df["timestamp"]).is_monotonic_increasing
    assert df["user_id"].str.fullmatch(r"u\d{6}").all() and df["session_id"].str.fullmatch(r"s-[0-9a-f]{10}").all()
    # a session belongs to one user
    assert (df.groupby("session_id")["user_id"].nunique() == 1).all()


def test_too_few_rows_for_the_plants_is_one_error() -> None:
    with pytest.raises(ValueError, match="rows or more"):
        make_query_log(n_rows=100)


def test_the_demo_query_log_is_the_generators_output(tmp_path: Path) -> None:
    """data/demo_kb/query_log.csv is made by scripts/make_demo_query_log.py and nothing else (same seed, same bytes)."""
    import importlib.util

    script = Path(__file__).resolve().parents[1] / "scripts" / "make_demo_query_log.py"
    spec = importlib.util.spec_from_file_location("make_query_log", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    made = make_query_log(n_rows=module.ROWS, seed=module.SEED).write(tmp_path / "query_log.csv")
    assert made.read_bytes() == (script.parents[1] / "data" / "demo_kb" / "query_log.csv").read_bytes()


def test_every_topic_phrase_names_a_demo_document_of_its_topic() -> None:
    import json

    from scripts.query_log_generator import ANSWERS

    corpus = Path(__file__).resolve().parents[1] / "data" / "demo_kb" / "corpus.jsonl"
    ids = {json.loads(line)["_id"] for line in corpus.read_text(encoding="utf-8").splitlines() if line}
    for topic, phrases in TOPICS.items():
        for phrase in phrases:
            assert ANSWERS[phrase] in ids and ANSWERS[phrase].startswith(f"kb-{topic}-"), phrase
    assert len(ANSWERS) == sum(len(p) for p in TOPICS.values())
