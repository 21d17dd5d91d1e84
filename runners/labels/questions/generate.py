"""`private-mteb questions generate`: questions an LLM writes from passages of the corpus, kept honest.

The advice of issue 38 is to build a test set from real questions; where a team still generates some, four rules
keep them from bending the verdict:
* the generator guard: a generator of the family of a candidate, or of the `production_llm:` the config names, is
  refused (its questions flatter its relatives) unless the user overrides it with a reason, kept in provenance;
* passages drawn across the topics of the corpus (passages.py), one question each, not the first documents;
* filters (question_filters.py): copied wording and near-duplicates dropped by the lint's own rules, each counted;
* every kept question is redacted (redact.py: a passage may hold personal data) and stored
  `tags: {source: llm:<model>, verified: false}` with its source passage as its only
  relevant document, grade pending (``relevant: {doc: null}``, ``provenance.source_doc``): it is not scored until
  a person accepts it and grades that passage in the judging app's question mode.
The LLM is asked through the judge's client (labels/judge/writer_client.py): same endpoint rules, retries,
identity. Only the added-questions file changes (added_store.py, append-only); nothing else is written.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from custom_tasks.errors import ConfigError

from ...config.benchmark import BenchmarkConfig
from ...config.generator import load_generator_template, render_generator
from ...config.judge_prompt import judge_identity
from .passages import Draw, clusters_of, document_text, draw_passages, eligible_documents
from .question_filters import DUP_GENERATED, NO_ANSWER, REASONS, Candidate, filter_questions

#: a passage is cut to this many characters in the prompt (a long document would only cost tokens)
MAX_PASSAGE_CHARS = 4000
#: topic clusters unless told: one per question asked, at most this many
DEFAULT_CLUSTERS = 20
ADDED_KEY = "added_questions"


@dataclass
class GenerateReport:
    """What one `questions generate` did: passages asked, questions kept, each drop counted by reason."""

    task: str
    generator: str
    source: str
    identity: str
    language: str
    clusters: int
    documents: int  # documents clustered
    asked: int = 0
    kept: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    requests: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    path: Path | None = None  # the added-questions file (None: nothing kept, nothing written)
    same_family: list[str] = field(default_factory=list)  # what the guard found (overridden, or nothing)
    override: str | None = None
    redacted: dict[str, int] = field(default_factory=dict)  # kind -> values replaced in the kept questions
    #: the first dropped questions (id of the passage, reason, what it duplicates or copies): shown, never stored
    examples: list[dict[str, Any]] = field(default_factory=list)
    query_ids: list[str] = field(default_factory=list)
    topic_model: str = ""  # whose vectors the passages' topics were clustered on (log_embed.topic_model)
    topic_warning: str = ""  # MiniLM on a task not in English, the multilingual extra absent

    def as_dict(self) -> dict[str, Any]:
        return {k: (str(v) if isinstance(v, Path) else v) for k, v in self.__dict__.items()}


def guard_candidates(cfg: BenchmarkConfig) -> list[str]:
    """Every name a candidate of the config goes by: hub name, results name, label, an endpoint's server model,
    and the config's experiment candidates (statistics/candidate_set.py, the one rule of every command)."""
    from ...statistics.candidate_set import config_candidates

    names: list[str] = []
    for m in cfg.models:
        names += [m.name, m.results_name, m.default_label]
        endpoint = getattr(m, "endpoint", None)
        if endpoint is not None and getattr(endpoint, "model", None):
            names.append(endpoint.model)
    for c in config_candidates(cfg):
        names += [c.name, c.label]
    return list(dict.fromkeys(n for n in names if n))


def check_guard(cfg: BenchmarkConfig, allow_same_family: str | None) -> list[str]:
    """The guard's findings; a ConfigError (one line, exit 2) when there are some and no reason overrides them."""
    from ..notes.generator_guard import family, same_family_refusals

    assert cfg.generator is not None
    found = same_family_refusals(cfg.generator.model, guard_candidates(cfg), cfg.production_llm)
    if found and not (allow_same_family or "").strip():
        raise ConfigError(cfg.path, f"generator {cfg.generator.model} is of the family ({family(cfg.generator.model)}) "
                                    f"of {', '.join(found)}: questions it writes would flatter that family; name a "
                                    "generator of another family, or state why with --allow-same-family \"REASON\"")
    return found


def language_names(codes: list[str]) -> str:
    """`[ron-Latn, eng-Latn]` -> `Romanian or English`: the language the default prompt asks questions in."""
    from custom_tasks.languages import language_name

    names = list(dict.fromkeys(language_name(c) for c in codes))
    return " or ".join(names) if names else "English"


def added_rows(task_cfg: Any) -> list[dict[str, Any]]:
    """The task's added-questions rows as stored (every one, verified or not, reviewed or not): the source passages
    already used and the texts a new question must not duplicate."""
    from custom_tasks.readers._io import resolve

    rel = (task_cfg.source or {}).get(ADDED_KEY)
    path = resolve(task_cfg.base_dir, rel) if rel else None
    if path is None or not path.is_file():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line) if line.strip() else None
        except ValueError:
            row = None
        if isinstance(row, dict):
            rows.append(row)
    return rows


def question_id(model: str, doc_id: str, question: str) -> str:
    """A stable id for a generated question: the same model, passage and text give the same id."""
    return "gen-" + hashlib.sha256(f"{model}\x00{doc_id}\x00{question}".encode()).hexdigest()[:12]


def generate_questions(cfg: BenchmarkConfig, task_cfg: Any, n: int, seed: int = 0, clusters: int | None = None,
                       allow_same_family: str | None = None, today: dt.date | None = None,
                       vectors: Callable[[list[str]], Any] | None = None, keep_examples: int = 5,
                       on_progress: Callable[[int, int], None] | None = None) -> GenerateReport:
    """Write ``n`` questions (at most) for the task with ``cfg.generator`` and append the ones that pass the filters.

    ``vectors(texts)``: the topic embeddings (default: MiniLM through the embedding cache, log_embed.CacheEmbedder).
    """
    from custom_tasks.sources import load_collection

    from ..judge.judge_client import configured
    from ..judge.writer_client import ChatWriter

    opts = configured(cfg.generator, "generator", cfg.path)
    if task_cfg.path is None:
        raise ConfigError(task_cfg.name, "the task has no YAML file to add questions to")
    found = check_guard(cfg, allow_same_family)
    template = load_generator_template(opts.prompt, cfg.base_dir, cfg.path)
    identity = judge_identity(opts.model, template, {}, opts.temperature, opts.max_tokens, opts.chat_url)
    collection = load_collection(task_cfg.source, task_cfg.base_dir, task_cfg.name)
    added = added_rows(task_cfg)
    used = {str((r.get("provenance") or {}).get("source_doc")) for r in added}
    docs = eligible_documents(collection.corpus, used, seed)
    texts = [document_text(collection.corpus[d]) for d in docs]
    k = max(1, min(clusters or min(n, DEFAULT_CLUSTERS), len(docs)))
    if not docs:
        raise ConfigError(task_cfg.path, "no document left to write a question from (each has one already, or is "
                                         "under 8 words)")
    from .log_embed import CacheEmbedder, topic_model

    topic, topic_warning = topic_model(list(task_cfg.languages))
    if vectors is None:
        vectors = CacheEmbedder(task_cfg, cfg.cache_path, topic, cfg.encode.device, kind="document")
    labels = clusters_of(vectors(texts), k, seed)
    draws: list[Draw] = draw_passages(docs, labels, n, seed)
    language = language_names(list(task_cfg.languages))
    report = GenerateReport(collection.name, opts.model, opts.source, identity, language, k, len(docs),
                            same_family=found, override=(allow_same_family or None) if found else None,
                            topic_model=topic, topic_warning=topic_warning)
    report.asked = len(draws)
    prompts = [render_generator(template, document_text(collection.corpus[d.doc_id])[:MAX_PASSAGE_CHARS],
                                collection.corpus[d.doc_id].get("title") or "", language) for d in draws]
    answers: dict[int, str | None] = {}

    def done(i: int, out: Any) -> None:
        answers[i] = out.grade
        if on_progress is not None:
            on_progress(len(answers), len(draws))

    client = ChatWriter(opts, cfg.path)
    client.grade_all(prompts, done)
    report.requests, report.failures = client.stats.requests, dict(client.stats.failures)
    cands = [Candidate(str(i), answers[i], document_text(collection.corpus[d.doc_id]))
             for i, d in enumerate(draws) if answers.get(i)]
    existing = {**collection.queries, **{str(r.get("query_id")): str(r.get("query") or "") for r in added}}
    verdict = filter_questions(cands, existing)
    counts = {NO_ANSWER: len(draws) - len(cands), **verdict.counts()}
    report.dropped = {r: counts[r] for r in REASONS if counts.get(r)}
    firsts = {}  # the first drop of each reason, then the others in order: every reason has an example
    for key, reason in verdict.dropped.items():
        firsts.setdefault(reason, key)
    shown = [*firsts.values(), *(k for k in verdict.dropped if k not in firsts.values())][:keep_examples]
    for key in shown:
        reason = verdict.dropped[key]
        what = verdict.duplicates.get(key)
        twin = (f"the question of {draws[int(what[0])].doc_id}" if reason == DUP_GENERATED else what[0]) if what \
            else None
        report.examples.append({"doc_id": draws[int(key)].doc_id, "reason": reason,
                                **({"duplicates": twin, "jaccard": round(what[1], 4)} if what else {}),
                                **({"copied_words": verdict.copied[key]} if key in verdict.copied else {})})
    when = (today or dt.date.today()).isoformat()
    from .redact import Redactor

    redactor, rows = Redactor(), []
    for key in verdict.kept:
        d = draws[int(key)]
        # a passage may hold personal data, and a question may repeat it: redacted before it is written or shown
        redaction = redactor.redact(str(answers[int(key)]))
        question = redaction.text
        for kind, n in redaction.counts.items():
            report.redacted[kind] = report.redacted.get(kind, 0) + n
        prov = {"source_doc": d.doc_id, "generator": opts.model, "generator_identity": identity,
                "prompt_sha256": hashlib.sha256(template.encode()).hexdigest(), "topic_model": topic,
                "cluster": d.cluster, "clusters": k, "seed": seed, "language": language, "date": when}
        if report.override:
            prov["same_family_override"] = {"reason": report.override, "family_of": found}
        rows.append({"query_id": question_id(opts.model, d.doc_id, str(question)), "query": question,
                     "relevant": {d.doc_id: None}, "tags": {"source": opts.source, "verified": False},
                     "provenance": prov})
    report.kept = len(rows)
    report.query_ids = [r["query_id"] for r in rows]
    if rows:
        from .added_store import append_questions

        report.path = append_questions(Path(task_cfg.path), rows)
    return report
