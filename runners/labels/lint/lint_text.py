"""Text normalisation and near-duplicate search for `tasks lint` (runners/labels/lint/lint.py).

Two texts that differ only in case, punctuation, markup, spacing or the encoding of a letter are the same text to a
reader and, nearly, to a model, so duplicates and leaks are compared on a normalised form: tags removed where they are
tags (custom_tasks/markup.py: "< 500 ... > 200" is text, "<p>" is not), then ``normalize_text``
(custom_tasks/normalize.py: NFKC, case folding, one form per variant letter such as Romanian ş/ș, Arabic and Hebrew
vowel points dropped, Traditional Chinese as Simplified), then split into tokens (``words``): a word is a run of
letters, digits and their combining marks, and in the scripts written without spaces between words (Han, Hiragana,
Katakana, Thai, Lao, Khmer, Myanmar) every character (with its marks) is a token of its own, since there a run of
letters is a whole clause. Near-duplicates are found with MinHash LSH (datasketch) as the blocking step, then
every candidate pair is confirmed with its exact shingle Jaccard, so a reported pair is never a MinHash estimate and
a threshold means what it says.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import regex

from custom_tasks.markup import strip_markup
from custom_tasks.normalize import normalize_text

#: a letter or digit of a script written without spaces between words
_UNSPACED = (r"[[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Thai}\p{scx=Lao}\p{scx=Khmer}\p{scx=Myanmar}]"
             r"&&[\p{L}\p{N}]]")
#: one such character with its marks, or a run of other letters, digits, connectors and marks (regex's \w has the
#: marks that Python's re leaves out: with re, an Arabic word with vowel marks or a Hindi word is cut at each mark)
_TOKEN = regex.compile(_UNSPACED + r"\p{M}*|(?:(?!" + _UNSPACED + r")[\w\p{M}])+", regex.V1)
_IS_UNSPACED = regex.compile(_UNSPACED, regex.V1)
#: text without a character of those scripts (most text) is split by this faster pattern, to the same words
_WORD = regex.compile(r"[\w\p{M}]+")
_ASCII_WORD = re.compile(r"\w+")
#: the blocks that hold every such character (tests/test_lint_scripts.py checks that none is outside): a quick test
#: of whether a text needs ``_TOKEN``, which is three times slower
_MAYBE_UNSPACED = re.compile("[\u02bc\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3005-\u33ff\u3400-\u4dbf"
                             "\u4e00-\u9fff\ua9e0-\ua9ff\uaa60-\uaa7f\uf900-\ufaff\uff66-\uff9f"
                             "\U000116d0-\U000116ff\U00016fe0-\U00016fff\U0001aff0-\U0001b16f"
                             "\U0001d360-\U0001d37f\U00020000-\U0003347f]")
#: characters per word where words are not spaced: 1.66, the frequency-weighted mean length of the Chinese words of
#: jieba 0.42.1's dictionary (dict.txt, Han-only entries); Japanese and the South-East Asian scripts have no such
#: figure here and use this one (a Thai character is a letter: there a run counted this way is short for 8 words)
CHARACTERS_PER_WORD = 1.66

#: MinHash permutations: 128 gives LSH a recall close to 1 at thresholds >= 0.5 (datasketch's default tuning)
NUM_PERM = 128
#: the LSH blocking threshold sits this far below the asked one, so pairs just above it are not missed
_BLOCK_MARGIN = 0.15


def words(text: str) -> list[str]:
    """The normalised tokens of a text: markup removed where it is markup, then ``normalize_text``, then words, or
    single characters in scripts without spaces (see the module docstring)."""
    text = normalize_text(strip_markup(text))
    if text.isascii():  # no marks, no such script: the standard library's \w, the fastest, gives the same words
        return _ASCII_WORD.findall(text)
    return (_WORD if _MAYBE_UNSPACED.search(text) is None else _TOKEN).findall(text)


def joined(tokens: Sequence[str]) -> str:
    """The tokens as one string: one space between words, none between two characters of a script without spaces
    (so character shingles of Chinese are shingles of the text as written)."""
    out: list[str] = []
    prev = False
    for t in tokens:
        unspaced = _IS_UNSPACED.match(t) is not None
        if out and not (prev and unspaced):
            out.append(" ")
        out.append(t)
        prev = unspaced
    return "".join(out)


def text_hash(tokens: Sequence[str]) -> str:
    """Hash of the normalised text: equal for texts that differ only in case, punctuation, markup, spacing or the
    encoding of a letter."""
    return hashlib.sha256(" ".join(tokens).encode("utf-8")).hexdigest()


def word_shingles(tokens: Sequence[str], k: int) -> frozenset[str]:
    """Contiguous k-word shingles; a text shorter than k words is one shingle (itself)."""
    if len(tokens) <= k:
        return frozenset([" ".join(tokens)]) if tokens else frozenset()
    return frozenset(" ".join(tokens[i:i + k]) for i in range(len(tokens) - k + 1))


def char_shingles(tokens: Sequence[str], k: int) -> frozenset[str]:
    """Character k-grams of the normalised text: what short texts (questions) are compared on, since one changed
    word of a ten-word question already removes most of its word shingles. Characters of scripts without spaces
    are shingled as written (``joined``)."""
    s = joined(tokens)
    if len(s) <= k:
        return frozenset([s]) if s else frozenset()
    return frozenset(s[i:i + k] for i in range(len(s) - k + 1))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a & b| / |a | b| (0 for two empty sets)."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def near_pairs(shingles: Mapping[str, frozenset[str]], threshold: float, seed: int = 1,
               skip: Iterable[tuple[str, str]] = ()) -> list[tuple[str, str, float]]:
    """Pairs (a, b, exact Jaccard) with Jaccard >= ``threshold``, a < b, most similar first.

    MinHash LSH (datasketch) proposes candidate pairs at a lower threshold; each is checked exactly. ``skip``:
    pairs already known (exact duplicates), not reported again. Deterministic for a given ``seed``.
    """
    from datasketch import MinHash, MinHashLSH

    ids = [i for i in sorted(shingles) if shingles[i]]
    if len(ids) < 2:
        return []
    block = max(0.05, threshold - _BLOCK_MARGIN)
    sigs = MinHash.bulk([[s.encode("utf-8") for s in sorted(shingles[i])] for i in ids], num_perm=NUM_PERM,
                        seed=seed)
    lsh = MinHashLSH(threshold=block, num_perm=NUM_PERM)
    with lsh.insertion_session() as session:
        for i, sig in zip(ids, sigs):
            session.insert(i, sig, check_duplication=False)
    known = {tuple(sorted(p)) for p in skip}
    found: dict[tuple[str, str], float] = {}
    for i, sig in zip(ids, sigs):
        for j in lsh.query(sig):
            if j == i:
                continue
            pair = (i, j) if i < j else (j, i)
            if pair in found or pair in known:
                continue
            score = jaccard(shingles[i], shingles[j])
            if score >= threshold:
                found[pair] = score
    return sorted(((a, b, s) for (a, b), s in found.items()), key=lambda x: (-x[2], x[0], x[1]))


def near_pairs_bulk(ids: Iterable[str], shingles_of: Callable[[str], frozenset[str]], threshold: float,
                    seed: int = 1) -> list[tuple[str, str, float]]:
    """``near_pairs`` for hundreds of thousands of short texts (a query log): the same pairs, in bounded memory.

    ``near_pairs`` holds a MinHash object per text and datasketch's LSH tables (a dict of sets per band): ~4 KB a
    text, 1.5 GB and minutes for 200,000 queries. Here each distinct shingle gets its datasketch MinHash once (a
    text's signature is the element-wise minimum over its shingles': the same values ``near_pairs`` computes), the
    signatures are one uint32 matrix filled a permutation at a time, and the LSH bands (MinHashLSH's own b x r for
    the blocking threshold) are grouped with numpy: texts equal on a band are candidates, exactly as in the LSH
    index. Every candidate is then confirmed with its exact Jaccard, computed on shingle ids in numpy batches;
    ``shingles_of(id)`` is called once per text and no set is kept.
    """
    import numpy as np
    from datasketch import MinHash, MinHashLSH

    ids = sorted(ids)
    index: dict[str, int] = {}
    flat: list[int] = []
    starts: list[int] = []
    kept: list[str] = []
    for i in ids:
        sh = shingles_of(i)
        if sh:
            kept.append(i)
            starts.append(len(flat))
            flat.extend(index.setdefault(s, len(index)) for s in sorted(sh))
    if len(kept) < 2:
        return []
    lsh = MinHashLSH(threshold=max(0.05, threshold - _BLOCK_MARGIN), num_perm=NUM_PERM)
    per_shingle = np.empty((NUM_PERM, len(index)), dtype=np.uint32)  # one row per permutation: a gather stays in cache
    for col, m in enumerate(MinHash.generator(([s.encode("utf-8")] for s in index), num_perm=NUM_PERM, seed=seed)):
        per_shingle[:, col] = m.hashvalues
    n_shingles = len(index)
    del index
    occurrences = np.asarray(flat, dtype=np.int64)
    del flat
    bounds = np.asarray(starts + [len(occurrences)], dtype=np.int64)
    signatures = np.empty((len(kept), NUM_PERM), dtype=np.uint32)
    for j in range(NUM_PERM):
        signatures[:, j] = np.minimum.reduceat(per_shingle[j][occurrences], bounds[:-1])
    del per_shingle
    codes: list[np.ndarray] = []
    for start, end in lsh.hashranges:
        band = np.ascontiguousarray(signatures[:, start:end]).view(np.dtype((np.void, 4 * (end - start)))).ravel()
        _, inverse, sizes = np.unique(band, return_inverse=True, return_counts=True)
        inverse = inverse.ravel()
        shared = np.flatnonzero(sizes[inverse] > 1)
        order = shared[np.argsort(inverse[shared], kind="stable")]
        for bucket in np.split(order, np.flatnonzero(np.diff(inverse[order])) + 1):
            a, b = np.triu_indices(len(bucket), 1)
            codes.append(bucket[a] * len(kept) + bucket[b])
    del signatures
    pairs = np.unique(np.concatenate(codes)) if codes else np.zeros(0, np.int64)
    found = []
    for lo in range(0, len(pairs), 50_000):  # exact Jaccard of the candidates, on shingle ids, a batch at a time
        a, b = np.divmod(pairs[lo:lo + 50_000], len(kept))
        score = _exact_jaccard(occurrences, bounds, a, b, n_shingles)
        found += [(kept[i], kept[j], float(x)) for i, j, x in zip(a.tolist(), b.tolist(), score.tolist())
                  if x >= threshold]
    return sorted(found, key=lambda x: (-x[2], x[0], x[1]))


def _exact_jaccard(occurrences: Any, bounds: Any, a: Any, b: Any, n_shingles: int) -> Any:
    """|A & B| / |A | B| of each pair (a[k], b[k]): texts' shingle ids are runs of ``occurrences`` (each run
    unique), so an id shared by both texts of pair k is the key ``k * n_shingles + id`` seen twice."""
    import numpy as np

    def runs(rows: Any) -> tuple[Any, Any]:
        lengths = bounds[rows + 1] - bounds[rows]
        pair = np.repeat(np.arange(len(rows)), lengths)
        offset = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        return pair * n_shingles + occurrences[np.repeat(bounds[rows], lengths) + offset], lengths

    keys_a, len_a = runs(a)
    keys_b, len_b = runs(b)
    keys = np.sort(np.concatenate([keys_a, keys_b]))
    both = keys[1:][keys[1:] == keys[:-1]] // n_shingles
    inter = np.bincount(both, minlength=len(a))
    return inter / (len_a + len_b - inter)


def groups(pairs: Iterable[tuple[str, str]]) -> list[list[str]]:
    """Connected groups of ids (union-find over the pairs), each sorted, largest first."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    members: dict[str, list[str]] = {}
    for x in parent:
        members.setdefault(root(x), []).append(x)
    return sorted((sorted(m) for m in members.values()), key=lambda g: (-len(g), g[0]))


def common_run(question: Sequence[str], document: Sequence[str]) -> tuple[int, int]:
    """(length, start in ``question``) of the longest token sequence of ``question`` found verbatim in ``document``."""
    from difflib import SequenceMatcher

    if not question or not document:
        return 0, 0
    m = SequenceMatcher(None, document, question, autojunk=False)
    found = m.find_longest_match(0, len(document), 0, len(question))
    return found.size, found.b


def word_count(tokens: Sequence[str]) -> float:
    """How many words ``tokens`` stand for: a word is one, a character of a script without spaces
    1 / ``CHARACTERS_PER_WORD``, so a rule in words (lint's leak rule) means the same length of text in Chinese."""
    return sum(1 / CHARACTERS_PER_WORD if _IS_UNSPACED.match(t) else 1.0 for t in tokens)
