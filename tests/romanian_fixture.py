"""A generated Romanian test collection: documents, questions and graded labels from a fixed seed, no download.

Why Romanian: it has a Snowball stemmer (PyStemmer ``romanian``, which mteb's BM25 picks for ``ron-Latn``), rich
inflection (``factura`` / ``facturii`` / ``facturilor`` share a stem only for the Romanian stemmer, so BM25 with the
Romanian analyzer scores differently from the English one), and two encodings of the same letters: ș ț (comma
below, U+0219/U+021B, the correct ones) and ş ţ (cedilla, U+015F/U+0163, what older keyboards and OCR produce).

Each document is an internal procedure paragraph about one action on one object in one department
("Aprobarea facturilor de la furnizori se face ..."); each question asks for that action with other inflected forms
("Cum aprob factura unui furnizor?"). Grade 2: the question's own document; grade 1: up to two documents about the
same object (another action), which partly answer it. The text is natural enough that a language identifier says
Romanian with high confidence.

Use it in a test::

    from tests.romanian_fixture import write_romanian_collection

    folder = write_romanian_collection(tmp_path / "data" / "ro_kb")             # BEIR layout, init detects it
    folder = write_romanian_collection(tmp_path / "kb", fmt="tables")            # corpus.jsonl, queries.jsonl, qrels.csv
    folder = write_romanian_collection(tmp_path / "kb", query_letters="cedilla") # questions typed with ş ţ
    folder = write_romanian_collection(tmp_path / "kb", english_docs=4)          # + 4 English documents (mixed corpus)

or take the data itself: ``romanian_collection(seed=0)`` -> ``RomanianCollection(corpus, queries, qrels)``
(``corpus``: id -> {"title", "text"}, ``queries``: id -> text, ``qrels``: query id -> {doc id: grade}).
``retyped_duplicate(text)`` gives a document's text with the other letter forms (a duplicate lint should find).
The same seed always gives byte-identical files.
"""

from __future__ import annotations

import csv
import json
import random
from dataclasses import dataclass
from pathlib import Path

#: comma-below (correct) -> cedilla (legacy) forms of the Romanian letters, both cases
COMMA_TO_CEDILLA = str.maketrans({"ș": "ş", "ț": "ţ", "Ș": "Ş", "Ț": "Ţ"})
CEDILLA_TO_COMMA = str.maketrans({"ş": "ș", "ţ": "ț", "Ş": "Ș", "Ţ": "Ț"})

# object nouns: (indefinite sg, definite sg, genitive definite sg, indefinite pl, definite pl, genitive definite pl)
NOUNS = [
    ("factură", "factura", "facturii", "facturi", "facturile", "facturilor"),
    ("contract", "contractul", "contractului", "contracte", "contractele", "contractelor"),
    ("cerere de concediu", "cererea de concediu", "cererii de concediu", "cereri de concediu",
     "cererile de concediu", "cererilor de concediu"),
    ("parolă", "parola", "parolei", "parole", "parolele", "parolelor"),
    ("cont de utilizator", "contul de utilizator", "contului de utilizator", "conturi de utilizator",
     "conturile de utilizator", "conturilor de utilizator"),
    ("imprimantă", "imprimanta", "imprimantei", "imprimante", "imprimantele", "imprimantelor"),
    ("laptop", "laptopul", "laptopului", "laptopuri", "laptopurile", "laptopurilor"),
    ("comandă", "comanda", "comenzii", "comenzi", "comenzile", "comenzilor"),
    ("plată", "plata", "plății", "plăți", "plățile", "plăților"),
    ("decont de deplasare", "decontul de deplasare", "decontului de deplasare", "deconturi de deplasare",
     "deconturile de deplasare", "deconturilor de deplasare"),
    ("licență software", "licența software", "licenței software", "licențe software", "licențele software",
     "licențelor software"),
    ("certificat digital", "certificatul digital", "certificatului digital", "certificate digitale",
     "certificatele digitale", "certificatelor digitale"),
    ("raport lunar", "raportul lunar", "raportului lunar", "rapoarte lunare", "rapoartele lunare",
     "rapoartelor lunare"),
    ("tichet de masă", "tichetul de masă", "tichetului de masă", "tichete de masă", "tichetele de masă",
     "tichetelor de masă"),
    ("sală de ședințe", "sala de ședințe", "sălii de ședințe", "săli de ședințe", "sălile de ședințe",
     "sălilor de ședințe"),
    ("echipament de protecție", "echipamentul de protecție", "echipamentului de protecție",
     "echipamente de protecție", "echipamentele de protecție", "echipamentelor de protecție"),
    ("adeverință de salariu", "adeverința de salariu", "adeverinței de salariu", "adeverințe de salariu",
     "adeverințele de salariu", "adeverințelor de salariu"),
    ("buget de proiect", "bugetul de proiect", "bugetului de proiect", "bugete de proiect",
     "bugetele de proiect", "bugetelor de proiect"),
]
# actions: (noun of the action, infinitive, 1st person "cum ...", past participle masculine/neuter, feminine)
VERBS = [
    ("aprobarea", "aproba", "aprob", "aprobat", "aprobată"),
    ("trimiterea", "trimite", "trimit", "trimis", "trimisă"),
    ("anularea", "anula", "anulez", "anulat", "anulată"),
    ("modificarea", "modifica", "modific", "modificat", "modificată"),
    ("verificarea", "verifica", "verific", "verificat", "verificată"),
    ("înregistrarea", "înregistra", "înregistrez", "înregistrat", "înregistrată"),
    ("arhivarea", "arhiva", "arhivez", "arhivat", "arhivată"),
    ("solicitarea", "solicita", "solicit", "solicitat", "solicitată"),
]
# departments: (genitive definite: "responsabilitatea ...", indefinite plural: "analizate de ...")
DEPARTMENTS = [
    ("departamentului financiar", "contabili"), ("departamentului de resurse umane", "specialiști de personal"),
    ("echipei de suport tehnic", "tehnicieni"), ("serviciului juridic", "juriști"),
    ("departamentului de achiziții", "achizitori"), ("biroului administrativ", "administratori"),
]
DEADLINES = ["în cel mult trei zile lucrătoare", "până la sfârșitul lunii", "în aceeași săptămână",
             "înainte de data scadentă", "în termen de cinci zile", "în ziua următoare"]
TOOLS = ["portalul intern", "aplicația de registratură", "platforma de documente", "sistemul de tichete",
         "modulul de contabilitate", "formularul electronic"]
EXTRA = [
    "Dacă lipsește o semnătură, cererea se întoarce automat la inițiator.",
    "Toate modificările rămân vizibile în istoricul documentului.",
    "Pentru situațiile urgente se poate suna la numărul de asistență al companiei.",
    "Șeful de echipă primește o notificare de îndată ce operațiunea este finalizată.",
    "Documentele justificative se păstrează timp de cinci ani, conform legislației în vigoare.",
    "Angajații noi găsesc instrucțiuni detaliate în ghidul de integrare.",
    "Nu se acceptă fotografii neclare ale documentelor; scanați fiecare pagină separat.",
    "În perioada concediilor, un înlocuitor desemnat preia această sarcină.",
]
QUESTIONS = [
    "Cum {v1} {n_def} {dep_short}?",
    "Ce pași trebuie urmați ca să {v1} {art} {n_indef}?",
    "Unde pot {v_inf} {n_pl}?",
    "Cine se ocupă de {v_noun} {n_gen_pl}?",
    "Am nevoie să {v1} {n_def}, ce fac?",
    "Care este termenul pentru {v_noun} {n_gen_sg}?",
]
ENGLISH_DOCS = [
    "The quarterly security review covers password rotation, device encryption and access to shared drives.",
    "Travel expenses are reimbursed after the manager approves the receipts in the finance portal.",
    "New laptops are ordered through the service desk and delivered within five working days.",
    "Meeting rooms can be booked in the calendar; cancel the booking if the meeting does not take place.",
    "Software licences are renewed every year by the procurement team after checking actual usage.",
    "Printer problems are reported through the ticket system, with the printer's number and location.",
]


@dataclass
class RomanianCollection:
    """A generated collection: ``corpus`` id -> {title, text}; ``queries`` id -> text; ``qrels`` qid -> {did: grade}."""

    corpus: dict[str, dict[str, str]]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def to_cedilla(text: str) -> str:
    """ș ț (comma below) -> ş ţ (cedilla): the same text as an older keyboard or OCR types it."""
    return text.translate(COMMA_TO_CEDILLA)


def to_comma(text: str) -> str:
    """ş ţ (cedilla) -> ș ț (comma below)."""
    return text.translate(CEDILLA_TO_COMMA)


def retyped_duplicate(text: str) -> str:
    """The text retyped with the other forms of ș ț / ş ţ (a duplicate that byte comparison misses)."""
    return to_cedilla(text) if any(c in text for c in "șțȘȚ") else to_comma(text)


def _feminine(noun: tuple) -> bool:
    """Romanian feminine nouns end in -ă or -e here (factură, cerere); the others are neuter (contract)."""
    return noun[0].split()[0].endswith(("ă", "e"))


def _document(rng: random.Random, verb: tuple, noun: tuple, dep: tuple) -> tuple[str, str]:
    v_noun, v_part = verb[0], verb[4] if _feminine(noun) else verb[3]
    tool, deadline = rng.choice(TOOLS), rng.choice(DEADLINES)
    title = f"{v_noun.capitalize()} {noun[5]}"
    sentences = [
        f"{v_noun.capitalize()} {noun[5]} se face prin {tool} și este responsabilitatea {dep[0]}.",
        f"Fiecare {noun[0]} {v_part} apare în "
        f"registru cu numărul și data operațiunii.",
        f"Solicitările primite sunt analizate de {dep[1]} {deadline}.",
        rng.choice(EXTRA),
    ]
    if rng.random() < 0.5:
        sentences.append(rng.choice([e for e in EXTRA if e not in sentences]))
    return title, " ".join(sentences)


def romanian_collection(seed: int = 0, n_docs: int = 96, n_queries: int = 72,
                        english_docs: int = 0) -> RomanianCollection:
    """Documents about (action, object, department) triples and questions asking for them with other inflections.

    ``n_docs`` at most len(VERBS) * len(NOUNS) (144); ``n_queries`` at most ``n_docs``; ``english_docs`` English
    paragraphs appended to the corpus (never relevant: a mixed-language corpus for detection)."""
    rng = random.Random(seed)
    pairs = [(v, n) for n in range(len(NOUNS)) for v in range(len(VERBS))]
    rng.shuffle(pairs)
    pairs = pairs[:n_docs]
    corpus: dict[str, dict[str, str]] = {}
    about: dict[str, tuple[int, int]] = {}
    for i, (v, n) in enumerate(pairs):
        did = f"doc{i:03d}"
        title, text = _document(rng, VERBS[v], NOUNS[n], DEPARTMENTS[rng.randrange(len(DEPARTMENTS))])
        corpus[did] = {"title": title, "text": text}
        about[did] = (v, n)
    for j in range(english_docs):
        corpus[f"en{j:02d}"] = {"title": "", "text": f"{ENGLISH_DOCS[j % len(ENGLISH_DOCS)]} See procedure {j + 1} "
                                                       "in the English handbook."}
    queries: dict[str, str] = {}
    qrels: dict[str, dict[str, int]] = {}
    for i, did in enumerate(list(about)[:n_queries]):
        v, n = about[did]
        verb, noun = VERBS[v], NOUNS[n]
        template = QUESTIONS[rng.randrange(len(QUESTIONS))]
        qid = f"q{i:03d}"
        queries[qid] = template.format(v1=verb[2], v_inf=verb[1], v_noun=verb[0], n_def=noun[1], n_indef=noun[0],
                                       n_pl=noun[3], art="o" if _feminine(noun) else "un", n_gen_sg=noun[2], n_gen_pl=noun[5],
                                       dep_short=rng.choice(["în sistem", "online", "la firmă", "corect"]))
        queries[qid] = queries[qid][0].upper() + queries[qid][1:]
        partial = [d for d, (v2, n2) in about.items() if n2 == n and d != did]
        qrels[qid] = {did: 2, **{d: 1 for d in rng.sample(partial, min(2, len(partial)))}}
    return RomanianCollection(corpus, queries, qrels)


def write_romanian_collection(folder: Path, seed: int = 0, fmt: str = "beir", n_docs: int = 96, n_queries: int = 72,
                              english_docs: int = 0, query_letters: str = "comma",
                              doc_letters: str = "comma") -> Path:
    """Write the collection under ``folder`` and return it.

    ``fmt``: ``beir`` (corpus.jsonl, queries.jsonl, qrels/test.tsv) or ``tables`` (corpus.jsonl, queries.jsonl with
    id/question, qrels.csv with query_id/doc_id/grade); both are what `private-mteb init` detects.
    ``query_letters`` / ``doc_letters``: ``comma`` (ș ț), ``cedilla`` (ş ţ) or ``mixed`` (every other text)."""
    col = romanian_collection(seed, n_docs, n_queries, english_docs)
    form = {"comma": lambda i, t: t, "cedilla": lambda i, t: to_cedilla(t),
            "mixed": lambda i, t: to_cedilla(t) if i % 2 else t}
    qform, dform = form[query_letters], form[doc_letters]
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "corpus.jsonl", "w", encoding="utf-8", newline="\n") as f:
        for i, (did, doc) in enumerate(col.corpus.items()):
            f.write(json.dumps({"_id": did, "title": dform(i, doc["title"]), "text": dform(i, doc["text"])},
                               ensure_ascii=False) + "\n")
    if fmt == "beir":
        with open(folder / "queries.jsonl", "w", encoding="utf-8", newline="\n") as f:
            for i, (qid, text) in enumerate(col.queries.items()):
                f.write(json.dumps({"_id": qid, "text": qform(i, text)}, ensure_ascii=False) + "\n")
        (folder / "qrels").mkdir(exist_ok=True)
        with open(folder / "qrels" / "test.tsv", "w", encoding="utf-8", newline="\n") as f:
            f.write("query-id\tcorpus-id\tscore\n")
            for qid, docs in col.qrels.items():
                f.writelines(f"{qid}\t{did}\t{grade}\n" for did, grade in docs.items())
    elif fmt == "tables":
        with open(folder / "queries.jsonl", "w", encoding="utf-8", newline="\n") as f:
            for i, (qid, text) in enumerate(col.queries.items()):
                f.write(json.dumps({"id": qid, "question": qform(i, text)}, ensure_ascii=False) + "\n")
        with open(folder / "qrels.csv", "w", encoding="utf-8", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["query_id", "doc_id", "grade"])
            for qid, docs in col.qrels.items():
                w.writerows([qid, did, grade] for did, grade in docs.items())
    else:
        raise ValueError(f"fmt must be 'beir' or 'tables', got {fmt!r}")
    return folder
