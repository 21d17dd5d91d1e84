"""A generated query log over the demo knowledge base (data/demo_kb), for `questions sample` (issue 38).

What a search log of an internal wiki looks like, made from a seed so a test knows every answer: queries about the
Northwind topics with Zipf-like frequencies (rank r drawn with weight 1/r^s: a few head queries, a long tail), exact
duplicates (the same text in many rows, and the same text re-cased or re-spaced), near duplicates (a typo, a word
added or dropped), a count column, timestamps, user and session ids, and planted personal data of every kind the
redactor knows next to clean look-alikes (scripts/query_log_planted.py). `QueryLog.planted` returns what was planted,
so a test asserts that no value survives in any file or output and that no look-alike was touched.

`make_query_log(n_rows, n_distinct, seed)` scales to the benchmark's 1,000,000 rows / 200,000 distinct queries:
rows are made and written in chunks (`QueryLog.write` streams CSV/TSV/JSONL/Parquet), never held all at once.
"""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from scripts.query_log_planted import CUSTOM_PATTERNS, PlantedQuery, planted_queries

#: topic of the demo KB (its document id prefix) -> what people type about it; most popular topic first
TOPICS: dict[str, list[str]] = {
    "vpn": ["vpn", "vpn not connecting", "northgate vpn mac", "install vpn windows", "vpn linux setup",
            "vpn error codes", "vpn split tunneling", "vpn while travelling"],
    "leave": ["pto", "how much pto do i get", "sick leave", "annual leave uk", "urlaub germany",
              "company holidays", "bereavement leave", "sabbatical", "unpaid leave", "jury duty leave"],
    "expense": ["expenses", "submit expense report ledgerly", "meal allowance", "per diem international",
                "lost receipt", "corporate credit card", "home office stipend", "mileage reimbursement",
                "who approves expenses"],
    "mfa": ["mfa", "reset mfa new phone", "yubikey setup", "mfa for contractors"],
    "pwd": ["forgot password", "password policy", "1password", "password reset"],
    "laptop": ["new laptop", "laptop stolen", "broken laptop screen", "return laptop when leaving",
               "linux laptop", "byod policy", "disk encryption fleetwatch"],
    "travel": ["book travel tripdesk", "flight class rules", "hotel limit", "visa for business trip",
               "travel insurance", "train travel europe", "conference budget"],
    "benefits": ["health insurance", "401k match", "uk pension", "learning budget", "wellness stipend",
                 "employee assistance program", "open enrollment"],
    "parental": ["parental leave", "maternity leave uk", "elternzeit", "back from parental leave",
                 "adoption support"],
    "deploy": ["deploy shipyard", "deploy freeze", "rollback deploy", "hotfix process"],
    "sso": ["keystone sso", "add app to keystone", "keystone login loop", "access denied keystone"],
    "wifi": ["wifi password", "guest wifi", "wifi slow", "hotel wifi captive portal"],
    "oncall": ["on call rotation", "on call pay", "on call handoff", "beacon notifications"],
    "incident": ["incident severity", "declare incident", "incident commander", "status page incident"],
    "fac": ["office hours", "lost badge", "book meeting room", "desk booking perch", "parking",
            "register visitor", "lost and found", "bike storage"],
    "remote": ["remote work policy", "work from another country", "anchor days", "internet allowance"],
    "sec": ["report phishing", "data classification", "usb drives allowed", "chatgpt allowed",
            "share files externally", "security training"],
    "print": ["add printer", "print release", "printer jam"],
    "perf": ["performance review", "self review tips", "promotion process", "pip"],
    "secrets": ["strongbox secrets", "rotate secret", "leaked secret in git"],
    "ci": ["forge ci", "flaky tests", "ci cache slow", "secrets in ci"],
    "payroll": ["payday", "payslip"],
}

#: each phrase of TOPICS -> the demo KB document that answers it (by its title): what a person who knows the
#: knowledge base grades 2; the docs walk's stand-in rater (scripts/questions_demo_rater.py) grades by it
ANSWERS: dict[str, str] = {
    "vpn": "kb-vpn-01", "vpn not connecting": "kb-vpn-05", "northgate vpn mac": "kb-vpn-02",
    "install vpn windows": "kb-vpn-03", "vpn linux setup": "kb-vpn-04", "vpn error codes": "kb-vpn-05",
    "vpn split tunneling": "kb-vpn-07", "vpn while travelling": "kb-vpn-08", "pto": "kb-leave-01",
    "how much pto do i get": "kb-leave-01", "sick leave": "kb-leave-04", "annual leave uk": "kb-leave-02",
    "urlaub germany": "kb-leave-03", "company holidays": "kb-leave-06", "bereavement leave": "kb-leave-07",
    "sabbatical": "kb-leave-09", "unpaid leave": "kb-leave-10", "jury duty leave": "kb-leave-08",
    "expenses": "kb-expense-01", "submit expense report ledgerly": "kb-expense-02", "meal allowance": "kb-expense-03",
    "per diem international": "kb-expense-04", "lost receipt": "kb-expense-05",
    "corporate credit card": "kb-expense-06", "home office stipend": "kb-expense-07",
    "mileage reimbursement": "kb-expense-10", "who approves expenses": "kb-expense-11", "mfa": "kb-mfa-01",
    "reset mfa new phone": "kb-mfa-02", "yubikey setup": "kb-mfa-03", "mfa for contractors": "kb-mfa-04",
    "forgot password": "kb-pwd-03", "password policy": "kb-pwd-01", "1password": "kb-pwd-04",
    "password reset": "kb-pwd-03", "new laptop": "kb-laptop-02", "laptop stolen": "kb-laptop-03",
    "broken laptop screen": "kb-laptop-05", "return laptop when leaving": "kb-laptop-04",
    "linux laptop": "kb-laptop-06", "byod policy": "kb-laptop-07", "disk encryption fleetwatch": "kb-laptop-08",
    "book travel tripdesk": "kb-travel-01", "flight class rules": "kb-travel-02", "hotel limit": "kb-travel-03",
    "visa for business trip": "kb-travel-04", "travel insurance": "kb-travel-05",
    "train travel europe": "kb-travel-06", "conference budget": "kb-travel-07", "health insurance": "kb-benefits-01",
    "401k match": "kb-benefits-02", "uk pension": "kb-benefits-03", "learning budget": "kb-benefits-05",
    "wellness stipend": "kb-benefits-06", "employee assistance program": "kb-benefits-07",
    "open enrollment": "kb-benefits-08", "parental leave": "kb-parental-01", "maternity leave uk": "kb-parental-02",
    "elternzeit": "kb-parental-03", "back from parental leave": "kb-parental-04",
    "adoption support": "kb-parental-05", "deploy shipyard": "kb-deploy-01", "deploy freeze": "kb-deploy-02",
    "rollback deploy": "kb-deploy-03", "hotfix process": "kb-deploy-04", "keystone sso": "kb-sso-01",
    "add app to keystone": "kb-sso-02", "keystone login loop": "kb-sso-03", "access denied keystone": "kb-sso-03",
    "wifi password": "kb-wifi-01", "guest wifi": "kb-wifi-02", "wifi slow": "kb-wifi-03",
    "hotel wifi captive portal": "kb-wifi-04", "on call rotation": "kb-oncall-01", "on call pay": "kb-oncall-02",
    "on call handoff": "kb-oncall-03", "beacon notifications": "kb-oncall-04", "incident severity": "kb-incident-01",
    "declare incident": "kb-incident-02", "incident commander": "kb-incident-03",
    "status page incident": "kb-incident-04", "office hours": "kb-fac-01", "lost badge": "kb-fac-02",
    "book meeting room": "kb-fac-03", "desk booking perch": "kb-fac-04", "parking": "kb-fac-05",
    "register visitor": "kb-fac-06", "lost and found": "kb-fac-09", "bike storage": "kb-fac-12",
    "remote work policy": "kb-remote-01", "work from another country": "kb-remote-02", "anchor days": "kb-remote-03",
    "internet allowance": "kb-remote-04", "report phishing": "kb-sec-01", "data classification": "kb-sec-02",
    "usb drives allowed": "kb-sec-11", "chatgpt allowed": "kb-sec-09", "share files externally": "kb-sec-08",
    "security training": "kb-sec-06", "add printer": "kb-print-01", "print release": "kb-print-02",
    "printer jam": "kb-print-03", "performance review": "kb-perf-01", "self review tips": "kb-perf-02",
    "promotion process": "kb-perf-05", "pip": "kb-perf-04", "strongbox secrets": "kb-secrets-01",
    "rotate secret": "kb-secrets-02", "leaked secret in git": "kb-secrets-03", "forge ci": "kb-ci-01",
    "flaky tests": "kb-ci-02", "ci cache slow": "kb-ci-03", "secrets in ci": "kb-ci-04", "payday": "kb-payroll-01",
    "payslip": "kb-payroll-01",
}

_PREFIXES = ["", "", "", "how do i ", "how to ", "where is ", "help ", "what is the ", "can i ", "policy "]
_SUFFIXES = ["", "", "", "?", " please", " urgent", " for contractors", " for managers", " 2026", " new hire",
             " not working", " faq"]
_CONTEXTS = ["", "", "", " portland", " austin", " london", " berlin", " mac", " windows", " iphone", " android",
             " linux", " remote", " part time", " intern", " manager"]
_EXTRA = ["", " again", " still", " asap", " today", " this week", " question", " issue", " info", " steps"]

COLUMNS = ("query", "count", "timestamp", "user_id", "session_id")
START = datetime(2026, 9, 1, tzinfo=timezone.utc)


@dataclass
class QueryLog:
    """A generated log: distinct clean queries in rank order, planted queries, and how to make its rows."""

    seed: int
    n_rows: int
    queries: list[str]                      # distinct clean queries, most frequent first
    topics: list[str]                       # topic of each query
    planted: list[PlantedQuery]
    exact_variants: list[tuple[str, str]]   # (query, the same after case/space/punctuation folding)
    near_duplicates: list[tuple[str, str]]  # (query, a typo / one word more)
    custom_patterns: tuple[str, ...] = CUSTOM_PATTERNS
    zipf_s: float = 1.07
    _fixed_rows: dict[int, str] = field(default_factory=dict)  # row -> query placed there (planted, variants)

    @property
    def sensitive(self) -> list[PlantedQuery]:
        """Planted values that must not survive anywhere (kind not None)."""
        return [p for p in self.planted if p.kind]

    @property
    def lookalikes(self) -> list[PlantedQuery]:
        """Planted clean values that must survive verbatim."""
        return [p for p in self.planted if p.kind is None]

    def rows(self, chunk: int = 100_000) -> Iterator[dict[str, list]]:
        """The log in column chunks (same seed, same rows), each a dict column -> list."""
        rng = np.random.default_rng(self.seed)
        weights = 1.0 / np.arange(1, len(self.queries) + 1) ** self.zipf_s
        cdf = np.cumsum(weights / weights.sum())
        # a logged query occurred at least once: each distinct query gets one row of its own, the other rows are
        # drawn by Zipf (so the log holds exactly len(queries) distinct clean queries, counts 1 + Zipf share)
        picks = np.minimum(np.searchsorted(cdf, rng.random(self.n_rows)), len(self.queries) - 1).astype(np.int32)
        free = np.setdiff1d(np.arange(self.n_rows), np.fromiter(self._fixed_rows, int, len(self._fixed_rows)))
        picks[rng.permutation(free)[:len(self.queries)]] = np.arange(len(self.queries), dtype=np.int32)
        n_users = max(20, self.n_rows // 25)
        elapsed = 0.0
        user, session, left_in_session = 0, "", 0
        for lo in range(0, self.n_rows, chunk):
            n = min(chunk, self.n_rows - lo)
            counts = np.where(rng.random(n) < 0.85, 1, rng.integers(2, 6, n))
            gaps = rng.exponential(40.0, n)
            users = rng.integers(0, n_users, n)
            session_len = rng.integers(1, 8, n)
            session_ids = rng.integers(0, 16 ** 10, n)
            seconds = elapsed + np.cumsum(gaps)
            elapsed = float(seconds[-1])
            stamps = np.datetime_as_string(np.datetime64(START.replace(tzinfo=None), "s")
                                           + seconds.astype("timedelta64[s]"), unit="s")
            out: dict[str, list] = {c: [] for c in COLUMNS}
            for i in range(n):
                row = lo + i
                if left_in_session == 0:
                    user, session, left_in_session = int(users[i]), f"s-{int(session_ids[i]):010x}", int(
                        session_len[i])
                left_in_session -= 1
                out["query"].append(self._fixed_rows.get(row) or self.queries[picks[row]])
                out["count"].append(int(counts[i]))
                out["timestamp"].append(stamps[i] + "Z")
                out["user_id"].append(f"u{user:06d}")
                out["session_id"].append(session)
            yield out

    def write(self, path: Path, columns: Mapping[str, str] | None = None) -> Path:
        """The log as CSV, TSV, JSONL or Parquet (by suffix), streamed; `columns` renames (e.g. query -> q)."""
        names = [(columns or {}).get(c, c) for c in COLUMNS]
        path.parent.mkdir(parents=True, exist_ok=True)
        suffix = path.suffix.lower()
        if suffix in (".csv", ".tsv"):
            with path.open("w", encoding="utf-8", newline="") as f:
                w = csv.writer(f, delimiter="\t" if suffix == ".tsv" else ",", lineterminator="\n")
                w.writerow(names)
                for ch in self.rows():
                    w.writerows(zip(*(ch[c] for c in COLUMNS)))
        elif suffix == ".jsonl":
            with path.open("w", encoding="utf-8") as f:
                for ch in self.rows():
                    for vals in zip(*(ch[c] for c in COLUMNS)):
                        f.write(json.dumps(dict(zip(names, vals)), ensure_ascii=False) + "\n")
        elif suffix == ".parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            writer = None
            try:
                for ch in self.rows():
                    table = pa.table({n: ch[c] for n, c in zip(names, COLUMNS)})
                    writer = writer or pq.ParquetWriter(path, table.schema)
                    writer.write_table(table)
            finally:
                if writer is not None:
                    writer.close()
        else:
            raise ValueError(f"{path.name}: write .csv, .tsv, .jsonl or .parquet")
        return path


def _typo(rng: random.Random, text: str) -> str:
    """Two neighbouring letters swapped inside the longest word (a typo, not a new query)."""
    words = text.split()
    i = max(range(len(words)), key=lambda k: len(words[k]))
    w = words[i]
    swaps = [j for j in range(1, len(w) - 2) if w[j] != w[j + 1]]
    if not swaps:
        return text + "s"
    j = rng.choice(swaps)
    words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2:]
    return " ".join(words)


def _distinct_queries(rng: random.Random, n_distinct: int) -> tuple[list[str], list[str]]:
    """Head: the bare topic phrases, most popular topic first; then variants (prefix, context, suffix, extra)."""
    queries, topics, seen = [], [], set()
    for rank in range(max(len(v) for v in TOPICS.values())):
        for topic, phrases in TOPICS.items():
            if rank < len(phrases) and phrases[rank] not in seen:
                seen.add(phrases[rank])
                queries.append(phrases[rank])
                topics.append(topic)
    names = list(TOPICS)
    topic_weights = [1.0 / (k + 1) for k in range(len(names))]
    tries = 0
    while len(queries) < n_distinct:
        tries += 1
        if tries > 50 * n_distinct:
            raise ValueError(f"cannot make {n_distinct} distinct queries from the topic phrases")
        topic = rng.choices(names, topic_weights)[0]
        q = (rng.choice(_PREFIXES) + rng.choice(TOPICS[topic]) + rng.choice(_CONTEXTS) + rng.choice(_EXTRA)
             + rng.choice(_SUFFIXES)).strip()
        if q not in seen:
            seen.add(q)
            queries.append(q)
            topics.append(topic)
    return queries[:n_distinct], topics[:n_distinct]


def make_query_log(n_rows: int = 5000, n_distinct: int | None = None, seed: int = 0,
                   per_kind: int = 4) -> QueryLog:
    """A log of `n_rows` rows over `n_distinct` clean queries (default n_rows // 5, at least the head phrases) plus
    the planted ones (`per_kind` valid values per kind, invalid checksums, look-alikes), each in 1-3 rows."""
    rng = random.Random(seed)
    head = sum(len(v) for v in TOPICS.values())
    queries, topics = _distinct_queries(rng, max(n_distinct or n_rows // 5, head))
    # exact variants and near duplicates of head queries, placed in the torso of the ranking
    exact, near = [], []
    for q in rng.sample(queries[:head], 12):
        exact.append((q, rng.choice([q.upper(), f"  {q}  ", q.capitalize() + "?", q.replace(" ", "  ")])))
    for q in rng.sample([q for q in queries[:head] if len(q) > 8], 12):
        near.append((q, rng.choice([_typo(rng, q), q + " please help", "the " + q])))
    torso = len(queries) // 10 + head
    for k, (q, v) in enumerate(exact + near):
        if v not in queries:
            pos = min(len(queries), head + k * max(1, (torso - head) // 24))
            queries.insert(pos, v)
            topics.insert(pos, topics[queries.index(q)])
    planted = planted_queries(rng, per_kind)
    # every planted query, exact variant and near duplicate sits in at least one row (every third in two), so a
    # small log holds them all whatever the draws
    fixed = [p.query for p in planted] + [v for _, v in exact + near]
    needed = sum(1 + (i % 3 == 0) for i in range(len(fixed)))
    if n_rows < needed + len(queries):
        raise ValueError(f"n_rows {n_rows}: {len(queries)} distinct queries and {needed} planted rows need "
                         f"{needed + len(queries)} rows or more")
    slots = iter(rng.sample(range(n_rows), needed))
    fixed_rows = {next(slots): q for i, q in enumerate(fixed) for _ in range(1 + (i % 3 == 0))}
    return QueryLog(seed=seed, n_rows=n_rows, queries=queries, topics=topics, planted=planted,
                    exact_variants=exact, near_duplicates=near, _fixed_rows=fixed_rows)
