"""Guess a collection's format and column names from the files in a folder, for `private-mteb init`.

Only the first rows of each table are looked at. The guess is written into a commented task YAML that
the user reviews; `tasks validate` (run right after) reads every row and reports whatever was wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from custom_tasks.errors import ConfigError

from .init_columns import (TABLES, UNKNOWN, DOC_ID, TEXT, QUERY_ID, QUERY, RELEVANT, GRADE, QREL_QUERY, QREL_DOC,
                           CORPUS_NAMES, QUERY_NAMES, QRELS_NAMES, columns_of, corpus_columns, Detected,
                           fill_unknown, grades_of, is_trec_qrels, named, pick, sample, split_of, tag_candidates)


def detect(data_dir: Path) -> Detected:
    """Detect beir, evalset, trec, tables or judgments in ``data_dir``; ConfigError naming the folder when unsure.
    Columns no name matched are told from their values, and the YAML's `columns:` comment says how."""
    det = _detect(data_dir)
    if det.how and "columns" in det.notes:
        det.notes["columns"] += "; told from their values: " + "; ".join(f"{r} = {h}" for r, h in det.how.items())
    return det


def _detect(data_dir: Path) -> Detected:
    data_dir = Path(data_dir).resolve()
    if not data_dir.is_dir():
        raise ConfigError(data_dir, "not a folder: give the folder that holds your corpus and questions")
    files = sorted(p for p in data_dir.iterdir() if p.is_file() and not p.name.startswith("."))
    beir = _detect_beir(data_dir)
    if beir:
        return beir
    tables = {p: sample(p) for p in files if p.suffix.lower() in TABLES}
    tables = {p: rows for p, rows in tables.items() if rows}
    corpus = _find_corpus(tables)
    if corpus is None:
        shown = _files_and_columns(files, tables) or "no files"
        raise ConfigError(data_dir, f"cannot find a corpus table (found: {shown}); a corpus needs a document id "
                                    "and a text column: name it corpus.json/.jsonl/.csv/.parquet (then init writes a "
                                    "`columns:` stanza to fill in), or write the task YAML by hand (see docs/collections.md)")
    rest = {p: r for p, r in tables.items() if p != corpus}
    for p, rows in rest.items():
        if pick(columns_of(rows), RELEVANT) and pick(columns_of(rows), QUERY):
            return _evalset(corpus, tables[corpus], p, rows)
    det = _judgments_table(corpus, tables[corpus], rest) or _evalset_by_content(corpus, tables[corpus], rest)
    if det is not None:
        return det
    trec = [p for p in files if p.suffix.lower() not in TABLES and is_trec_qrels(p)]
    queries = next((p for p in rest if named(p, QUERY_NAMES)), None)
    if trec and queries:
        return _trec(corpus, tables[corpus], queries, rest[queries], trec)
    qrels = next((p for p, rows in rest.items() if pick(columns_of(rows), QREL_DOC) and pick(columns_of(rows), GRADE)
                  and p != queries), None)
    qrels = qrels or next((p for p in rest if p != queries and named(p, QRELS_NAMES)), None)
    queries = queries or next((p for p in rest if p != qrels and pick(columns_of(rest[p]), QUERY)), None)
    if not (qrels and queries):  # no name says which: the labels reference the corpus' ids and hold grades
        qrels, queries = _tables_by_content(corpus, tables[corpus], rest, qrels, queries)
    if qrels and queries:
        return _tables(corpus, tables[corpus], queries, rest[queries], qrels, rest[qrels])
    shown = _files_and_columns(files, tables)
    raise ConfigError(data_dir, f"found the corpus {corpus.name} but no questions with labels among: {shown} "
                                "(needed: an evalset table with a question and a relevant-documents column; or TREC "
                                "qrels + a queries table; or a queries table (id, question) and a labels table "
                                "(question id, document id, grade); a file named queries.* and one named qrels.* or "
                                "labels.* get a `columns:` stanza to fill in)")


def _files_and_columns(files: list[Path], tables: dict[Path, list[dict[str, Any]]]) -> str:
    """'corpus.json (columns: id, body), notes.txt' for the messages: what init found in each file."""
    return ", ".join(f"{p.name} (columns: {', '.join(columns_of(tables[p]))})" if p in tables else p.name
                     for p in files)


def _find_corpus(tables: dict[Path, list[dict[str, Any]]]) -> Path | None:
    by_name = [p for p in tables if named(p, CORPUS_NAMES) and pick(columns_of(tables[p]), TEXT)]
    if by_name:
        return by_name[0]
    found = next((p for p, rows in tables.items() if pick(columns_of(rows), TEXT) and pick(columns_of(rows), DOC_ID)
                  and not pick(columns_of(rows), RELEVANT) and not pick(columns_of(rows), QUERY, exclude=("text",))), None)
    return found or next((p for p in tables if named(p, CORPUS_NAMES)), None) or _corpus_by_content(tables)


def _corpus_by_content(tables: dict[Path, list[dict[str, Any]]]) -> Path | None:
    """No name says which: the table with the longest texts beside a column of unique ids (init_roles)."""
    from .init_roles import corpus_text, profiles

    best: tuple[float, Path] | None = None
    for p, rows in tables.items():
        prof = profiles(rows)
        text = corpus_text(prof, set()).column
        if text and any(c.is_id and c.unique for c in prof.values()) and (best is None or prof[text].mean_len > best[0]):
            best = (prof[text].mean_len, p)
    return best[1] if best else None


def _detect_beir(data_dir: Path) -> Detected | None:
    qrels = sorted((data_dir / "qrels").glob("*.tsv")) if (data_dir / "qrels").is_dir() else []
    if not ((data_dir / "corpus.jsonl").is_file() and (data_dir / "queries.jsonl").is_file() and qrels):
        return None
    splits = [p.stem for p in qrels]
    rows = sample(data_dir / "queries.jsonl")
    tags = tag_candidates(rows, {"_id", "text", "title"})
    source: dict[str, Any] = {"format": "beir", "path": data_dir}
    notes = {"format": "detected: corpus.jsonl, queries.jsonl and qrels/<split>.tsv (the BEIR layout)",
             "path": "the BEIR folder"}
    if tags:
        source["tag_fields"] = tags
        notes["tag_fields"] = "query fields copied into tags, for `stats --by ...`"
    return Detected("beir", source, notes, ["test"] if "test" in splits else splits[:1])


def _evalset(corpus: Path, crows: list, evalset: Path, rows: list, det: Detected | None = None,
             told: dict[str, str | None] | None = None) -> Detected:
    """``told``: the query and relevant columns when told from the values (``det`` says how)."""
    cols = columns_of(rows)
    det = det or Detected("evalset", {})
    where = {r: (corpus, crows) for r in ("doc_id", "text", "title")}
    where.update({r: (evalset, rows) for r in ("query", "relevant")})
    columns = fill_unknown(det, {**corpus_columns(crows, det), "query": pick(cols, QUERY),
                                 "relevant": pick(cols, RELEVANT), **(told or {})}, where)
    qid = pick(cols, QUERY_ID, exclude=(columns["query"],))
    if qid is None and columns["query"] != UNKNOWN and det.how:  # columns told from values: the id too
        from .init_roles import profiles, question_id

        qid = det.by_content("query_id", question_id(profiles(rows), rows, columns["query"], set(columns.values())))
    if qid:
        columns["query_id"] = qid
    source: dict[str, Any] = {"format": "evalset", "corpus": corpus, "evalset": evalset}
    notes = {"format": f"detected: {evalset.name} has one row per question with its relevant documents",
             "corpus": "documents", "evalset": "questions and the ids (optionally :grade) of their answers",
             "columns": "column names in your files (detected; the defaults need no entry)"}
    split_col = pick(cols, ["split"])
    splits = ["test"]
    if split_col:
        source["split_column"] = split_col
        notes["split_column"] = "which split each question belongs to"
        values = sorted({str(r.get(split_col)) for r in rows if r.get(split_col) not in (None, "")})
        splits = ["test"] if "test" in values or not values else values[:1]
    source["columns"] = columns
    tags = tag_candidates(rows, set(columns.values()) | {split_col or ""})
    if tags:
        source["tag_columns"] = tags
        notes["tag_columns"] = "columns copied into query tags, for `stats --by ...`"
    det.source, det.notes, det.splits = source, notes, splits
    return det


def _trec(corpus: Path, crows: list, queries: Path, qrows: list, qrels: list[Path]) -> Detected:
    qcols = columns_of(qrows)
    det = Detected("trec", {})
    where = {**{r: (corpus, crows) for r in ("doc_id", "text", "title")},
             **{r: (queries, qrows) for r in ("query_id", "query")}}
    columns = fill_unknown(det, {**corpus_columns(crows, det), "query_id": pick(qcols, QUERY_ID),
                                  "query": pick(qcols, QUERY)}, where)
    by_split = {split_of(p): p for p in qrels}
    source: dict[str, Any] = {"format": "trec", "corpus": corpus, "queries": queries,
                              "qrels": by_split if len(by_split) > 1 else qrels[0], "columns": columns}
    if len(by_split) == 1:
        source["split"] = next(iter(by_split))
    notes = {"format": f"detected: TREC qrels lines `qid 0 docid grade` in {', '.join(p.name for p in qrels)}",
             "corpus": "documents", "queries": "questions", "qrels": "labels, per split",
             "columns": "column names in the corpus and queries tables (detected)"}
    tags = tag_candidates(qrows, set(columns.values()))
    if tags:
        source["tag_columns"] = tags
        notes["tag_columns"] = "query columns copied into tags, for `stats --by ...`"
    splits = list(by_split)
    det.source, det.notes, det.splits = source, notes, ["test"] if "test" in splits else splits[:1]
    return det


def _tables(corpus: Path, crows: list, queries: Path, qrows: list, qrels: Path, rrows: list) -> Detected:
    qcols, rcols = columns_of(qrows), columns_of(rrows)
    det = Detected("tables", {})
    where = {**{r: (corpus, crows) for r in ("doc_id", "text", "title")},
             **{r: (queries, qrows) for r in ("query_id", "query")},
             **{r: (qrels, rrows) for r in ("qrels_query_id", "qrels_doc_id", "grade")}}
    doc_cols = corpus_columns(crows, det)
    columns = fill_unknown(det, {**doc_cols, **_table_roles(det, (corpus, doc_cols["doc_id"]), (queries, qrows), rrows)},
                           where)
    det.grades = grades_of(rrows, columns["grade"]) if columns["grade"] != UNKNOWN else []
    source: dict[str, Any] = {"format": "tables", "corpus": corpus, "queries": queries, "qrels": qrels}
    notes = {"format": f"detected: separate corpus ({corpus.name}), queries ({queries.name}) and labels "
                       f"({qrels.name}) tables", "corpus": "documents", "queries": "questions",
             "qrels": "one row per (question, document, grade)",
             "columns": "column names in the three tables (detected)"}
    split_col = pick(rcols, ["split"])
    splits = ["test"]
    if split_col:
        source["split_column"] = split_col
        notes["split_column"] = "the labels table's column naming each row's split"
        values = sorted({str(r.get(split_col)) for r in rrows if r.get(split_col) not in (None, "")})
        splits = ["test"] if "test" in values or not values else values[:1]
    source["columns"] = columns
    tags = tag_candidates(qrows, set(columns.values()))
    if tags:
        source["tag_columns"] = tags
        notes["tag_columns"] = "query columns copied into tags, for `stats --by ...`"
    det.source, det.notes, det.splits = source, notes, splits
    return det


def _judgments_table(corpus: Path, crows: list, rest: dict[Path, list[dict[str, Any]]]) -> Detected | None:
    """A flat judgments table (one row per judged pair: question id, question, document id, grade), told by names
    or by content: a column of the corpus' ids, a grade column and a question text column in one table."""
    from .init_roles import all_ids, grade, profiles, question, question_id, reference

    det = Detected("judgments", {})
    doc_cols = corpus_columns(crows, det)
    ids = all_ids(corpus, doc_cols["doc_id"]) if doc_cols["doc_id"] else set()
    for path, rows in rest.items():
        cols, prof = columns_of(rows), profiles(rows)
        roles: dict[str, str | None] = {"qrels_doc_id": pick(cols, QREL_DOC), "grade": pick(cols, GRADE),
                                        "query": pick(cols, QUERY, exclude=("text",))}
        trial = Detected("judgments", {})
        if roles["qrels_doc_id"] is None and ids:
            roles["qrels_doc_id"] = trial.by_content("qrels_doc_id", reference(prof, ids, set(), "document ids of "
                                                                               f"{corpus.name}"))
        used = {c for c in roles.values() if c}
        if roles["grade"] is None:
            roles["grade"] = trial.by_content("grade", grade(prof, used))
        used |= {roles["grade"]} if roles["grade"] else set()
        if roles["query"] is None:
            roles["query"] = trial.by_content("query", question(prof, used))
        if not (roles["qrels_doc_id"] and roles["grade"] and (roles["query"] or trial.tied.get("query"))):
            continue  # not a judgments table (a queries or labels table of another format)
        det.how.update(trial.how)
        det.tied.update(trial.tied)
        used |= {roles["query"]} if roles["query"] else set()
        qid = pick(cols, QUERY_ID + QREL_QUERY, exclude=tuple(used))
        if qid is None and roles["query"]:
            qid = det.by_content("query_id", question_id(prof, rows, roles["query"], used))
        return _judgments(det, corpus, crows, doc_cols, path, rows, roles, qid)
    return None


def _judgments(det: Detected, corpus: Path, crows: list, doc_cols: dict[str, str | None], path: Path, rows: list,
               roles: dict[str, str | None], qid: str | None) -> Detected:
    where = {**{r: (corpus, crows) for r in ("doc_id", "text", "title")},
             **{r: (path, rows) for r in ("query", "qrels_doc_id", "grade")}}
    columns = fill_unknown(det, {**doc_cols, "query": roles["query"], "qrels_doc_id": roles["qrels_doc_id"],
                                 "grade": roles["grade"]}, where)
    if qid:
        columns["query_id"] = qid
    det.grades = grades_of(rows, columns["grade"]) if columns["grade"] != UNKNOWN else []
    source: dict[str, Any] = {"format": "judgments", "corpus": corpus, "judgments": path}
    det.notes = {"format": f"detected: {path.name} has one row per judged (question, document) pair: the questions "
                           "are derived from it", "corpus": "documents", "judgments": "one row per judged pair",
                 "columns": "column names in your files (detected)"}
    split_col = pick(columns_of(rows), ["split"])
    if split_col:
        source["split_column"] = split_col
        det.notes["split_column"] = "which split each judged pair belongs to"
        values = sorted({str(r.get(split_col)) for r in rows if r.get(split_col) not in (None, "")})
        det.splits = ["test"] if "test" in values or not values else values[:1]
    source["columns"] = columns
    varying = set(columns_of(rows)) - _per_question(rows, columns.get("query_id") or columns["query"])
    tags = tag_candidates(rows, set(columns.values()) | {split_col or ""} | varying)
    if tags:
        source["tag_columns"] = tags
        det.notes["tag_columns"] = "columns copied into question tags, for `stats --by ...`"
    det.source = source
    return det


def _per_question(rows: list[dict[str, Any]], key: str) -> set[str]:
    """Columns with one value per question in a judgments table (a topic, a source): the tag candidates."""
    first: dict[tuple[str, Any], Any] = {}
    varying = set()
    for r in rows:
        for c, v in r.items():
            if first.setdefault((c, r.get(key)), v) != v:
                varying.add(c)
    return set(columns_of(rows)) - varying


def _tables_by_content(corpus: Path, crows: list, rest: dict[Path, list[dict[str, Any]]], qrels: Path | None,
                       queries: Path | None) -> tuple[Path | None, Path | None]:
    """(labels, questions) tables told from their values: the labels have a column of the corpus' ids and a
    grade column; the questions, unique ids and one text column."""
    from .init_roles import all_ids, grade, id_column, profiles, question, reference

    doc_id = corpus_columns(crows, Detected("tables", {}))["doc_id"]
    ids = all_ids(corpus, doc_id) if doc_id else set()
    for p, rows in rest.items():
        prof = profiles(rows)
        if qrels is None and p != queries and reference(prof, ids, set(), "").column and grade(prof, set()).column:
            qrels = p
        elif queries is None and p != qrels and question(prof, set()).column and id_column(prof, set(), True, "").column:
            queries = p
    return qrels, queries


def _table_roles(det: Detected, corpus: tuple[Path, str | None], queries: tuple[Path, list], rrows: list
                 ) -> dict[str, str | None]:
    """The questions' and labels' columns of `format: tables`: by name, else told from the values
    (``corpus``: its file and id column; ``queries``: its file and sampled rows)."""
    qrows = queries[1]
    from .init_roles import all_ids, grade, id_column, profiles, question, reference

    qcols, rcols = columns_of(qrows), columns_of(rrows)
    roles = {"query_id": pick(qcols, QUERY_ID), "query": pick(qcols, QUERY), "qrels_query_id": pick(rcols, QREL_QUERY),
             "qrels_doc_id": pick(rcols, QREL_DOC), "grade": pick(rcols, GRADE)}
    if all(roles.values()):
        return roles
    qprof, rprof = profiles(qrows), profiles(rrows)
    if roles["query"] is None:
        roles["query"] = det.by_content("query", question(qprof, {roles["query_id"] or ""}))
    if roles["query_id"] is None:
        roles["query_id"] = det.by_content("query_id", id_column(qprof, {roles["query"] or ""}, True,
                                                                 "one per question"))
    if roles["qrels_doc_id"] is None:
        ids = all_ids(corpus[0], corpus[1]) if corpus[1] else set()
        roles["qrels_doc_id"] = det.by_content("qrels_doc_id", reference(rprof, ids, set(), f"document ids of "
                                                                                           f"{corpus[0].name}"))
    if roles["qrels_query_id"] is None and roles["query_id"]:
        qids = all_ids(queries[0], roles["query_id"])
        roles["qrels_query_id"] = det.by_content("qrels_query_id", reference(
            rprof, qids, {roles["qrels_doc_id"] or ""}, f"question ids of {queries[0].name}"))
    if roles["grade"] is None:
        used = {roles["qrels_doc_id"] or "", roles["qrels_query_id"] or ""}
        roles["grade"] = det.by_content("grade", grade(rprof, used))
    return roles


def _evalset_by_content(corpus: Path, crows: list, rest: dict[Path, list[dict[str, Any]]]) -> Detected | None:
    """An evalset no name says is one: one row per question (its text unique) with a column listing corpus ids."""
    from .init_roles import all_ids, profiles, question, relevant_lists

    det = Detected("evalset", {})
    doc_id = corpus_columns(crows, det)["doc_id"]
    ids = all_ids(corpus, doc_id) if doc_id else set()
    for path, rows in rest.items():
        trial = Detected("evalset", {})
        relevant = trial.by_content("relevant", relevant_lists(rows, ids, set()))
        if relevant is None:
            continue
        query = pick(columns_of(rows), QUERY, exclude=(relevant,)) or trial.by_content(
            "query", question(profiles(rows), {relevant}))
        texts = [str(r.get(query)) for r in rows] if query else []
        if query and len(set(texts)) == len(texts):
            det.how.update(trial.how)
            return _evalset(corpus, crows, path, rows, det, {"query": query, "relevant": relevant})
    return None

