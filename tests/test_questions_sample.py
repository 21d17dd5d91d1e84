"""`questions sample` (issue 38): a query log -> redacted, merged, stratified questions added to a task.

What must hold: the sample's stratum counts are the stated allocation; exact and near duplicates are merged with
their counts summed; no planted personal value (nor a user id) is left in the written file or the output; a re-run
with the same seed writes the same bytes; every drop/merge rule is printed and can be changed; bad input is one
line naming the file. Quick tests use a deterministic hash encoder for the topic vectors (the allocation does not
depend on what the topics mean); the slow one runs the real command with the offline MiniLM.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import REPO, TINY_YAML, write_benchmark
from runners.cli import app
from runners.labels.questions.log_aggregate import Rules
from runners.labels.questions.log_reader import detect_columns
from runners.labels.questions.log_sample import SampleParams, sample_log, sample_questions
from runners.labels.questions.log_strata import Stratum, allocate
from runners.labels.questions.redact import Redactor

PERSONAL = ["maria.popescu@example.com", "+40 721 234 567", "4111 1111 1111 1111", "RO49AAAA1B31007593840000",
            "192.168.14.201", "1960529460011", "+44 20 5118 6857"]  # the last: "possible", not "valid" (issue 46)
USERS = ["user-7731", "sess-a9f3e1"]


def hash_embed(texts: list[str]) -> np.ndarray:
    from runners.execution.encoding.synthetic import synthetic_vectors

    return synthetic_vectors(texts, dim=16)


def _log(path: Path, rows: list[tuple[str, int]]) -> Path:
    lines = ["search_term,hits,timestamp,user_id"]
    for i, (q, n) in enumerate(rows):
        quoted = '"' + q.replace('"', '""') + '"'
        lines.append(f"{quoted},{n},2026-0{1 + i % 9}-1{i % 10}T10:00:00Z,{USERS[i % 2]}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _task(tmp_path: Path, name: str = "task") -> Path:
    folder = tmp_path / name
    shutil.copytree(REPO / "tests" / "fixtures" / "kb_tiny", folder / "kb_tiny")
    yaml_path = folder / "kb_tiny.yaml"
    yaml_path.write_text(TINY_YAML.read_text().replace("../fixtures/kb_tiny", "kb_tiny"))
    return yaml_path


def _traffic(n: int = 40) -> list[tuple[str, int]]:
    """A Zipf-like log over distinct questions, with exact (case, spacing) and near (typo) duplicates of the first."""
    words = ["vpn", "password", "laptop", "expense", "leave", "badge", "printer", "wifi", "payroll", "backup",
             "mailbox", "calendar", "invoice", "onboarding", "firewall", "monitor", "license", "travel", "desk", "keys"]
    rows = [(f"{words[i % 20]} {words[(i // 20 + i * 7 + 3) % 20]} {'help' if i < 20 else 'settings'}",
             max(1, 400 // (i + 1))) for i in range(n)]
    rows[0] = ("how do i reset my vpn password", 400)
    rows += [("How do I reset my  VPN password?", 50), ("how do i reset my vpn pasword", 7)]
    return rows


def test_stratum_counts_equal_the_stated_allocation(tmp_path: Path) -> None:
    log = _log(tmp_path / "log.csv", _traffic())
    cfg = _task(tmp_path)
    for allocation in ("proportional", "equal"):
        params = SampleParams(size=17, allocation=allocation, seed=3, topics=3, date="2026-12-05")
        out, _ = sample_questions(log, cfg, params, Redactor(), hash_embed, write=False)
        drawn = Counter(r["tags"]["stratum"] for r in out.rows)
        assert sum(drawn.values()) == 17
        assert drawn == Counter({s.name: s.allocated for s in out.strata if s.allocated}), allocation
        shown = [ln for ln in out.lines if ln.startswith("  ") and "sampled" in ln]
        assert {ln.split()[0]: int(ln.split()[-1]) for ln in shown} == {s.name: s.allocated for s in out.strata}
        assert abs(sum(r["tags"]["weight"] for r in out.rows) - sum(s.share for s in out.strata if s.allocated)) < 1e-4


def test_allocation_rounds_by_largest_remainder_and_caps_small_strata() -> None:
    groups = [Stratum("head/t1", "head", "t1", ["a"], 0.5), Stratum("torso/t1", "torso", "t1", list("bcdefgh"), 0.3),
              Stratum("tail/t1", "tail", "t1", list("ijklmnopqrstuvwxyz"), 0.2)]
    allocate(10, groups)
    # head is capped at its one query; the 9 left are shared 0.3 : 0.2 -> 5.4 : 3.6 -> 5 : 4 (largest remainder)
    assert [s.allocated for s in groups] == [1, 5, 4]
    allocate(9, groups, equal=True)
    assert [s.allocated for s in groups] == [1, 4, 4]


def test_exact_and_near_duplicates_are_merged_with_their_counts(tmp_path: Path) -> None:
    log = _log(tmp_path / "log.csv", _traffic())
    cols = detect_columns(log)
    assert (cols.query, cols.count, cols.time, cols.unread) == ("search_term", "hits", "timestamp", ("user_id",))
    params = SampleParams(size=100, seed=0, topics=1, date="2026-12-05", rules=Rules())
    out = sample_log(log, cols, _cfg(_task(tmp_path)), params, Redactor(), None)
    vpn = [r for r in out.rows if "reset my vpn" in r["query"].lower()]
    assert len(vpn) == 1  # case/spacing variant (exact) and the typo (near) folded into the most searched spelling
    assert vpn[0]["query"] == "how do i reset my vpn password"
    assert vpn[0]["provenance"]["searches"] == 400 + 50 + 7
    assert out.agg.near_merged == 1 and out.agg.near_examples[0][1] == "how do i reset my vpn pasword"
    assert len(out.rows) == 40
    assert sum(r["provenance"]["searches"] for r in out.rows) == out.agg.searches - sum(out.agg.dropped.values())


def test_near_duplicates_do_not_chain() -> None:
    """A query is folded only into a query it is itself near: b ~ a and c ~ b, but c is not near a, so c stays."""
    from runners.labels.questions.log_aggregate import Aggregate, merge_near_duplicates

    agg = Aggregate()
    for text, n in (("reset the vpn password", 50), ("reset the vpn password now", 20),
                    ("reset the vpn password now please", 5)):
        agg.entries[text] = [n, {text: n}]
    merge_near_duplicates(agg, Rules(near_threshold=0.75))
    assert {k: agg.count(k) for k in agg.entries} == {"reset the vpn password": 70,
                                                       "reset the vpn password now please": 5}


def _cfg(path: Path):
    from custom_tasks.config import TaskConfig

    return TaskConfig.from_file(path)


def test_rules_are_printed_and_changeable(tmp_path: Path) -> None:
    log = _log(tmp_path / "log.csv", [("www.northwind.com", 30), ("ok", 9), ("expense report deadline", 5),
                                      (PERSONAL[0], 4), ("", 3)])
    cfg = _task(tmp_path)
    base = ["questions", "sample", str(log), "-t", str(cfg), "--topics", "1", "--dry-run", "--date", "2026-12-05"]
    r = CliRunner().invoke(app, base)
    assert r.exit_code == 0, r.output
    assert "navigational: 30 searches" in r.output and "too short: 9 searches" in r.output
    assert "too short after redaction: 4 searches" in r.output and "empty: 3 searches" in r.output
    assert "(https?://|www\\.)" in r.output  # the rule itself is shown
    r = CliRunner().invoke(app, base + ["--navigational", "", "--min-chars", "2"])
    assert r.exit_code == 0, r.output
    dropped = next(ln for ln in r.output.splitlines() if ln.startswith("dropped:"))
    assert "navigational" not in dropped and "3 questions drawn" in r.output


def test_no_personal_value_or_user_id_is_written_or_shown(tmp_path: Path) -> None:
    rows = [(f"question about {kind} {v} please", 3) for kind, v in zip("abcdefg", PERSONAL, strict=True)]
    rows += [("parental leave policy", 20), ("order NW-2045 status", 4)]  # a product code is not personal
    log = _log(tmp_path / "log.csv", rows)
    cfg = _task(tmp_path)
    r = CliRunner().invoke(app, ["questions", "sample", str(log), "-t", str(cfg), "--topics", "1", "-n", "50",
                                 "--date", "2026-12-05"])
    assert r.exit_code == 0, r.output
    written = (cfg.parent / json.loads(json.dumps(_added(cfg)))).read_text(encoding="utf-8")
    for value in PERSONAL + USERS:
        assert value not in written and value not in r.output, value
    assert "NW-2045" in written and "[EMAIL]" in written
    assert "user_id" in r.output  # named as never read, its values are not


def _added(cfg: Path) -> str:
    import yaml

    return yaml.safe_load(cfg.read_text())["source"]["added_questions"]


def test_written_questions_await_judgment_with_provenance(tmp_path: Path) -> None:
    from custom_tasks.config import TaskConfig
    from custom_tasks.sources import load_collection

    log = _log(tmp_path / "log.csv", _traffic())
    cfg = _task(tmp_path)
    r = CliRunner().invoke(app, ["questions", "sample", str(log), "-t", str(cfg), "--topics", "1", "-n", "5",
                                 "--date", "2026-12-05", "--seed", "4"])
    assert r.exit_code == 0, r.output
    rows = [json.loads(x) for x in (cfg.parent / _added(cfg)).read_text().splitlines()]
    assert len(rows) == 5 and all(x["tags"]["source"] == "log" and x["relevant"] == {} for x in rows)
    prov = rows[0]["provenance"]
    assert prov["date"] == "2026-12-05" and len(prov["log_sha256"]) == 64 and prov["parameters"]["seed"] == 4
    task = TaskConfig.from_file(cfg)
    coll = load_collection(task.source, task.base_dir, task.name)
    assert {x["query_id"] for x in rows} <= set(coll.queries)  # read back with the task's own questions
    assert not any(x["query_id"] in q for q in coll.qrels.values() for x in rows)  # not scored: awaiting judgment
    # a second sample of the same log adds only questions the task does not have yet
    again = CliRunner().invoke(app, ["questions", "sample", str(log), "-t", str(cfg), "--topics", "1", "-n", "5",
                                     "--date", "2026-12-05", "--seed", "4"])
    assert again.exit_code == 0, again.output
    assert "already a question of the task: " in again.output


@pytest.mark.parametrize("content, name, says", [
    ("a,b\n1,2\n", "log.csv", "no query column found"),
    ("search_term,hits\nvpn setup guide,many\n", "log.csv", "is not a whole number"),
    ('[{"query": "x"}]', "log.json", "cannot be read in chunks"),
])
def test_bad_logs_are_one_line_naming_the_file(tmp_path: Path, content: str, name: str, says: str) -> None:
    log = tmp_path / name
    log.write_text(content)
    r = CliRunner().invoke(app, ["questions", "sample", str(log), "-t", str(_task(tmp_path)), "--topics", "1"])
    assert r.exit_code == 2, r.output
    assert says in r.output and name in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("name, content, where", [
    ("log.csv", "search_term,hits\nvpn setup guide,3\nexpense report,many\n", "log.csv:3:"),  # header = line 1
    ("log.tsv", "search_term\thits\nvpn setup guide\t3\nexpense report\t-2\n", "log.tsv:3:"),
    ("log.jsonl", '{"query": "vpn setup guide", "count": 3}\n{"query": "expense report", "count": "x"}\n',
     "log.jsonl:2:"),
])
def test_a_bad_count_names_its_line_in_the_file(tmp_path: Path, name: str, content: str, where: str) -> None:
    """The line an editor opens: a CSV/TSV's header is its line 1, so its first row is line 2."""
    log = tmp_path / name
    log.write_text(content)
    r = CliRunner().invoke(app, ["questions", "sample", str(log), "-t", str(_task(tmp_path)), "--topics", "1"])
    assert r.exit_code == 2, r.output
    assert where in r.output and "is not a whole number" in r.output, r.output


@pytest.mark.parametrize("name, content, says", [
    ("log.csv", "query,count\ncaf\xe9 menu,3\n".encode("latin-1"), ["log.csv:2:", "not valid utf-8", "UTF-8"]),
    ("log.jsonl", b'not json\n{"query": "vpn"}\n', ["log.jsonl:1:", "malformed JSON"]),
    ("log.parquet", b"\x00\x01 not parquet", ["log.parquet", "cannot read Parquet"]),
])
def test_an_unreadable_log_says_why(tmp_path: Path, name: str, content: bytes, says: list[str]) -> None:
    """Not 'no rows could be read' for a file full of rows: the reader's own reason (encoding, bad JSON line)."""
    log = tmp_path / name
    log.write_bytes(content)
    r = CliRunner().invoke(app, ["questions", "sample", str(log), "-t", str(_task(tmp_path)), "--topics", "1"])
    assert r.exit_code == 2, r.output
    assert all(s in r.output for s in says) and "Traceback" not in r.output, r.output
    assert "encoding: latin-1` (or the right one) to the source" not in r.output  # a log has no source YAML key


def test_a_bad_count_cell_is_not_shown(tmp_path: Path) -> None:
    """A count column named wrongly (here the user column) must not print a cell: a log's cells may be personal."""
    log = _log(tmp_path / "log.csv", [("vpn setup guide", 3)]).read_text().replace("user-7731", "ana@example.org")
    (tmp_path / "log.csv").write_text(log)
    task = _task(tmp_path)
    for column, says in (("user_id", "text, not a number"), ("hits", None)):
        r = CliRunner().invoke(app, ["questions", "sample", str(tmp_path / "log.csv"), "-t", str(task),
                                     "--topics", "1", "--count-column", column, "--dry-run"])
        if says is None:
            assert r.exit_code == 0, r.output
            continue
        assert r.exit_code == 2 and says in r.output and "is not a whole number" in r.output, r.output
        assert "ana@example.org" not in r.output and "ana@" not in r.output


def test_a_bad_navigational_pattern_is_a_usage_error(tmp_path: Path) -> None:
    log = _log(tmp_path / "log.csv", _traffic())
    r = CliRunner().invoke(app, ["questions", "sample", str(log), "-t", str(_task(tmp_path)), "--topics", "1",
                                 "--navigational", "(", "--dry-run"])
    assert r.exit_code == 2, r.output
    assert "--navigational" in r.output and "internal error" not in r.output and "Traceback" not in r.output


def test_query_column_told_from_values_in_parquet_and_jsonl(tmp_path: Path) -> None:
    import pandas as pd

    frame = pd.DataFrame({"Frage": ["wie beantrage ich urlaub", "vpn zugang einrichten"] * 3,
                          "sitzung": ["s1", "s2", "s3", "s4", "s5", "s6"]})
    for path in (tmp_path / "log.parquet", tmp_path / "log.jsonl"):
        frame.to_parquet(path) if path.suffix == ".parquet" else frame.to_json(path, orient="records", lines=True)
        cols = detect_columns(path)
        assert cols.query == "Frage" and "text" in cols.how["query"]
        out = sample_log(path, cols, _cfg(_task(tmp_path, path.suffix[1:])), SampleParams(topics=1), Redactor(), None)
        assert sorted(r["provenance"]["searches"] for r in out.rows) == [3, 3]


@pytest.mark.slow  # the offline MiniLM encodes the topic vectors (~20 s on a shared CPU)
def test_same_seed_gives_byte_identical_output(tmp_path: Path) -> None:
    log = _log(tmp_path / "log.csv", _traffic() + [(f"my mail is {PERSONAL[0]} help", 2)])
    outputs, files = [], []
    for run in ("a", "b"):
        cfg = _task(tmp_path, run)
        bench = write_benchmark(cfg.parent, [str(cfg)], models=[{"name": "bm25"}])
        r = CliRunner().invoke(app, ["questions", "sample", str(log), "-t", str(cfg), "-c", str(bench), "-n", "12",
                                     "--topics", "3",
                                     "--seed", "7", "--date", "2026-12-05"])
        assert r.exit_code == 0, r.output
        files.append((cfg.parent / _added(cfg)).read_bytes())
        outputs.append(r.output.replace(str(cfg.parent), "TASK").split("vectors:")[0])
    assert files[0] == files[1] and outputs[0] == outputs[1]
    assert b"maria" not in files[0] and "k-means (k=3, seed 7)" in outputs[0]


def test_bulk_near_pairs_are_the_lints_pairs() -> None:
    """near_pairs_bulk (the log's near-duplicates, in bounded memory) finds exactly what the lint's near_pairs does,
    which itself equals an all-pairs exact search here."""
    from runners.labels.lint.lint_text import jaccard, near_pairs, near_pairs_bulk

    rng = np.random.default_rng(5)
    base = [frozenset(f"s{x}" for x in rng.integers(0, 400, 40)) for _ in range(30)]
    sets = {"empty": frozenset()}
    for i, b in enumerate(base):
        sets[f"a{i}"] = b
        sets[f"b{i}"] = frozenset(b - set(sorted(b)[: int(rng.integers(0, 12))]))
    ids = sorted(k for k in sets if sets[k])
    for threshold in (0.5, 0.8):
        brute = {(a, b) for i, a in enumerate(ids) for b in ids[i + 1:] if jaccard(sets[a], sets[b]) >= threshold}
        bulk = near_pairs_bulk(sets, sets.__getitem__, threshold)
        assert bulk == near_pairs(sets, threshold) and {(a, b) for a, b, _ in bulk} == brute and brute


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_generated_log_leaves_no_planted_value_and_merges_duplicates(tmp_path: Path, suffix: str) -> None:
    """The issue's generated log (scripts/query_log_generator.py): every planted personal value redacted in the written
    file and the output, the clean look-alikes kept verbatim, no user or session id anywhere, exact variants and
    near-duplicates (at the printed threshold) folded into one question."""
    from runners.labels.lint.lint_text import char_shingles, jaccard, words
    from scripts.query_log_generator import make_query_log

    log = make_query_log(n_rows=3000, seed=0)
    path = log.write(tmp_path / f"log{suffix}")
    cfg = _task(tmp_path)
    args = ["questions", "sample", str(path), "-t", str(cfg), "--topics", "1", "-n", "100000", "--date", "2026-12-05"]
    for pattern in log.custom_patterns:
        args += ["--redact", pattern]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    written = (cfg.parent / _added(cfg)).read_text(encoding="utf-8")
    for p in log.sensitive:
        assert p.value not in written and p.value not in r.output, (p.kind, p.query)
    for p in log.lookalikes:
        assert p.value in written, p.query
    ids = {v for chunk in log.rows() for col in ("user_id", "session_id") for v in chunk[col]}
    assert not [i for i in ids if i in written or i in r.output]
    texts = {json.loads(line)["query"] for line in written.splitlines()}
    keys = {" ".join(words(t)) for t in texts}
    for q, variant in log.exact_variants:
        assert " ".join(words(variant)) == " ".join(words(q)) and (q in texts) != (variant in texts), (q, variant)
    near = [(q, v) for q, v in log.near_duplicates
            if jaccard(char_shingles(words(q), 4), char_shingles(words(v), 4)) >= 0.8]
    assert near and not [(q, v) for q, v in near if " ".join(words(q)) in keys and " ".join(words(v)) in keys]
    assert "near-duplicates: " in r.output and " <- " in r.output


def test_every_band_is_embedded_when_the_embed_limit_is_below_head_and_torso() -> None:
    """Two-phase sampling must keep every band in the frame: with head + torso over --embed-limit the tail (a third
    of the searches) vanished from the sample and from the weights. The limit is split over the bands (a band
    under its part whole, the room it leaves to the others); every band whole when all fit."""
    from runners.labels.questions.log_strata import Bands, embedded_subset

    of = {**{f"h{i}": "head" for i in range(8)}, **{f"o{i:03d}": "torso" for i in range(133)},
          **{f"t{i:03d}": "tail" for i in range(710)}}
    bands = Bands(of=of, head_min=78, torso_min=7)
    keys = embedded_subset(bands, 100, seed=0)
    per_band = Counter(of[k] for k in keys)
    assert len(keys) == 100 and per_band == {"head": 8, "torso": 46, "tail": 46}, per_band
    assert embedded_subset(bands, 100, seed=0) == keys  # seeded
    assert sorted(embedded_subset(bands, 5_000, seed=0)) == sorted(of)  # all fit: all whole
    assert Counter(of[k] for k in embedded_subset(bands, 1, seed=0)) == {"head": 1, "torso": 1, "tail": 1}
