"""Personal data out of query text before anything is written or shown (issue 38, "privacy first").

A query log holds what people typed, and people type their e-mail address, their phone number, a card number, an
IBAN, a national id number. `Redactor.redact` replaces each with a token (`[EMAIL]`, `[PHONE]`, ...) and counts the
kinds; it never logs, prints or keeps a value, so the counts are all a report may show.

Why checksums: a 16-digit number in a query is a card number only when it passes Luhn; an IBAN only when mod-97
holds; a Romanian CNP only when its date and check digit do (python-stdnum does each check, phonenumbers the phone
numbering plans). A value whose checksum fails is *not* redacted as that kind, so product codes and look-alikes keep
their text. One rule still applies to them, stated here and in `RULES`: a standalone unbroken run of `min_digits`
(default 9) or more digits is redacted as `digits` whatever it is, because a long number in a query (a mistyped id,
an account, an order or customer number) is personal far more often than it is a search term. Grouped numbers
("4111 1111 1111 1112") and digits glued to letters or to a code's hyphen ("NW-204512883") are not a run; the
letters of a script written without spaces (Han, kana, Hangul, Thai, ...) are boundaries, not glue, for every rule.

A look-alike that fails its check whole (an IBAN with wrong check digits, a grouped card number failing Luhn) is set
aside while the later rules run, so a phone number is not read inside it. The rules run in a fixed order, each on the text the previous ones left: custom (a team's own pattern wins), then
url_token, email, iban, national_id, card, ip, phone, digits. Phone numbers in national form depend on the country:
`phone_regions` is declared (default `DEFAULT_PHONE_REGIONS`) and `describe()` shows it with every other rule.
A national-form number must be valid (an allocated range: "0721 234 567" in Romania); one in international form
("+44 20 5118 6857", "0044 ...") need only have a length its country's plan allows ("possible"), since the country
code already says it is a phone number, and whether its range is allocated today is no reason to keep it.
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit

import phonenumbers
from stdnum import iban as std_iban
from stdnum import luhn
from stdnum.es import dni as es_dni
from stdnum.es import nie as es_nie
from stdnum.it import codicefiscale as it_codicefiscale
from stdnum.pl import pesel as pl_pesel
from stdnum.ro import cnp as ro_cnp

from custom_tasks.bm25_tokens import NO_SPACE

#: every kind, in the order the rules run
KINDS = ("custom", "url_token", "email", "iban", "national_id", "card", "ip", "phone", "digits")
TOKENS = {kind: f"[{kind.upper()}]" for kind in KINDS}

#: countries whose *national* phone forms are recognised ("0721 234 567" is Romanian, "(503) 555-0143" American);
#: international forms (+40 ..., 0040 ...) are recognised whatever this says. Declared, not guessed: a team
#: elsewhere names its own (`Redactor(phone_regions=("FR",))`).
DEFAULT_PHONE_REGIONS = ("US", "GB", "DE", "RO")
#: a standalone run of this many digits or more is redacted as `digits`
DEFAULT_MIN_DIGITS = 9

#: one line per rule, shown by `describe()` (and by the commands that redact) so nobody has to read this file
RULES = {
    "custom": "the team's own regular expressions, applied first",
    "url_token": "a URL whose query names a token/key/session/signature/password/code parameter, that carries "
                 "user:password@, or a path segment of 24+ random-looking characters (the whole URL goes)",
    "email": "name@domain.tld",
    "iban": "an IBAN (grouped or not) whose mod-97 check and country format hold (one whose check digits alone are "
            "wrong is kept whole)",
    "national_id": "a national id number whose checksum holds: RO CNP, PL PESEL, ES DNI/NIE, IT codice fiscale",
    "card": "a card network's length and first digit, unbroken or grouped as cards print, passing Luhn (grouped and "
            "failing: kept whole)",
    "ip": "an IPv4 or IPv6 host address (a network such as 10.40.0.0/16 is kept)",
    "phone": "a number in international form (+CC or the exit code, e.g. 0044) of a length its country's plan allows, "
             "allocated or not; in the national form of {regions}, a full number of the plan written as that "
             "country writes one (after its trunk 0; (503) 555-0143 in North America), allocated or not",
    "digits": "a standalone unbroken run of {min_digits}+ digits, whatever its checksum (not a code such as "
              "NW-204512883, not digits glued to Latin-script letters)",
}

#: a letter, digit or underscore that glues a value to a word: `\\w` less the scripts written without spaces (Han,
#: kana, Hangul, Thai, ...: custom_tasks/bm25_tokens.NO_SPACE), where a phone number, an e-mail or an id sits right
#: against the letters around it ("我的手机号是13800138000", "邮箱zhang.wei@example.com谢谢"): there they are
#: boundaries, as a space is elsewhere
_W = rf"[^\W{NO_SPACE}]"
_EMAIL = re.compile(rf"(?<!{_W}|[.+-])(?:{_W}|[.+-])+@(?:{_W}|-)+(?:\.(?:{_W}|-)+)*\.[A-Za-z]{{2,}}(?!{_W})")
_URL = re.compile(r"\b(?:https?://|www\.)[^\s<>\"']+", re.IGNORECASE)
_SECRET_PARAM = re.compile(
    r"token|key|secret|sess|sid|sig|auth|pass|pwd|code|jwt|credential|otp|nonce|ticket|user|uid|email", re.IGNORECASE)
_RANDOM_SEGMENT = re.compile(r"^[A-Za-z0-9_\-~]{24,}$")
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ -]?[A-Za-z0-9]{4}){2,7}(?:[ -]?[A-Za-z0-9]{1,4})?"
                   r"(?![A-Za-z0-9])")
_CARD = re.compile(rf"(?<!{_W}|[+-])\d(?:[ -]?\d){{12,18}}(?!{_W}|-)")
_IPV4 = re.compile(rf"(?<!{_W}|\.)(?:\d{{1,3}}\.){{3}}\d{{1,3}}(?:/\d{{1,2}})?(?!(?:{_W}|\.)*\d)")
_IPV6 = re.compile(rf"(?<!{_W}|[:.])(?=[0-9A-Fa-f:]*:[0-9A-Fa-f]*:)[0-9A-Fa-f:]{{2,39}}(?:/\d{{1,3}})?(?!{_W}|:)")
#: national ids: (candidate pattern, validator); candidates are found, the checksum decides
_NATIONAL_IDS: tuple[tuple[re.Pattern[str], Callable[[str], bool]], ...] = (
    (re.compile(rf"(?<!{_W}|[+-])[1-9]\d{{12}}(?!{_W}|-)"), ro_cnp.is_valid),
    (re.compile(rf"(?<!{_W}|[+-])\d{{11}}(?!{_W}|-)"), pl_pesel.is_valid),
    (re.compile(rf"(?<!{_W}|[+-])\d{{8}}-?[A-Za-z](?!{_W}|-)"), lambda v: es_dni.is_valid(v.upper())),
    (re.compile(rf"(?<!{_W}|[+-])[XYZxyz]-?\d{{7}}-?[A-Za-z](?!{_W}|-)"), lambda v: es_nie.is_valid(v.upper())),
    (re.compile(rf"(?<!{_W}|[+-])[A-Za-z]{{6}}\d{{2}}[A-Za-z]\d{{2}}[A-Za-z]\d{{3}}[A-Za-z](?!{_W}|-)"),
     lambda v: it_codicefiscale.is_valid(v.upper())),
)
_HAS_DIGIT = re.compile(r"\d")
_SEVEN_DIGITS = re.compile(r"(?:\d\D{0,3}){7}")
_DECIMAL_BEFORE = re.compile(r"\d[.,]$")
_GROUP_BEFORE = re.compile(r"\d{3}[ -]?$")
_GROUP_AFTER = re.compile(r"[ -]?\d{3}")
_KEPT_BASE = 0xE000  # Unicode private use: a placeholder no rule's pattern reads as a word or a digit
_KEPT = re.compile("[\uE000-\uF8FF]")


@dataclass(frozen=True)
class RedactionResult:
    """The redacted text and how many values of each kind were replaced (never the values themselves)."""

    text: str
    counts: Counter[str] = field(default_factory=Counter)

    @property
    def redacted(self) -> bool:
        return sum(self.counts.values()) > 0


class Redactor:
    """Replaces personal data in short texts (queries) with `[KIND]` tokens; see the module docstring for the rules.

    `patterns` are the team's regular expressions (kind `custom`); a pattern that does not compile raises
    ValueError naming it (the CLI turns that into one line, exit 2).
    """

    def __init__(self, patterns: Sequence[str] = (), *, phone_regions: Sequence[str] = DEFAULT_PHONE_REGIONS,
                 min_digits: int = DEFAULT_MIN_DIGITS) -> None:
        self.custom: list[re.Pattern[str]] = []
        for i, pattern in enumerate(patterns, 1):
            try:
                self.custom.append(re.compile(pattern))
            except re.error as exc:
                raise ValueError(f"redaction pattern {i} ({pattern!r}) is not a regular expression: {exc}") from None
        unknown = [r for r in phone_regions if r.upper() not in phonenumbers.SUPPORTED_REGIONS]
        if unknown:
            raise ValueError(f"unknown phone region(s) {', '.join(unknown)}: name ISO 3166 codes such as US, RO")
        if min_digits < 5:
            raise ValueError(f"min_digits {min_digits} would redact years and prices: use 5 or more")
        self.phone_regions = tuple(r.upper() for r in phone_regions)
        self.min_digits = min_digits
        self._digits = re.compile(rf"(?<!{_W}|[.,])(?<![^\W\d_]-)\d{{{min_digits},}}(?!{_W}|[.,]\d)")

    def describe(self) -> dict[str, str]:
        """kind -> the rule in one line (with this redactor's regions and digit threshold)."""
        rules = {k: v.format(regions=", ".join(self.phone_regions), min_digits=self.min_digits)
                 for k, v in RULES.items()}
        if not self.custom:
            rules["custom"] = "none given"
        return rules

    def redact(self, text: str) -> RedactionResult:
        counts: Counter[str] = Counter()
        # look-alikes set aside so later rules do not read inside them (restored at the end); a text that holds
        # private-use characters itself gets no placeholders (the look-alike is then read by the later rules)
        kept: list[str] | None = None if _KEPT.search(text) else []
        for pattern in self.custom:
            text = _sub(pattern, text, "custom", counts)
        if "://" in text or "www." in text.lower():
            text = _sub(_URL, text, "url_token", counts, _url_has_token)
        if "@" in text:
            text = _sub(_EMAIL, text, "email", counts)
        if not _HAS_DIGIT.search(text):
            return RedactionResult(text, counts)
        text = _sub(_IBAN, text, "iban", counts, finder=_iban_span, kept=kept)
        for pattern, valid in _NATIONAL_IDS:
            text = _sub(pattern, text, "national_id", counts, valid)
        text = _sub(_CARD, text, "card", counts, finder=_card_span, kept=kept)
        text = _sub(_IPV4, text, "ip", counts, _is_host_address)
        if ":" in text:
            text = _sub(_IPV6, text, "ip", counts, _is_host_address)
        if _SEVEN_DIGITS.search(text):
            text = self._phones(text, counts)
        text = _sub(self._digits, text, "digits", counts)
        if kept:
            text = _KEPT.sub(lambda m: kept[ord(m.group()) - _KEPT_BASE], text)
        return RedactionResult(text, counts)

    def redact_all(self, texts: Iterable[str]) -> tuple[list[str], Counter[str]]:
        """Each text redacted, and the counts summed over all of them."""
        total: Counter[str] = Counter()
        out = []
        for t in texts:
            res = self.redact(t)
            out.append(res.text)
            total.update(res.counts)
        return out, total

    def _phones(self, text: str, counts: Counter[str]) -> str:
        spans: list[tuple[int, int]] = []
        international = "+" in text or "\uff0b" in text or "00" in text
        for region in self.phone_regions:
            # VALID: a number of an allocated range; POSSIBLE (a length the plan allows) only in international form
            found = list(phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID))
            found += [m for m in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.POSSIBLE)
                      if (international and _international(m.raw_string, region)) or _national(m.raw_string, region)]
            for match in found:
                if (_DECIMAL_BEFORE.search(text, 0, match.start) or _GROUP_BEFORE.search(text, 0, match.start)
                        or _GROUP_AFTER.match(text, match.end) or any(
                        match.start < e and s < match.end for s, e in spans)):
                    # the tail of a decimal (3.14159265358), a piece of a longer grouped number (4111 1111 ...),
                    # or found already under another region
                    continue
                digits = sum(c.isdigit() for c in match.raw_string)
                if digits > 15 or (digits > 12 and match.raw_string.isdigit()):
                    continue  # longer than any numbering plan writes: an id, left to the digit-run rule
                spans.append((match.start, match.end))
        for start, end in sorted(spans, reverse=True):
            text = text[:start] + TOKENS["phone"] + text[end:]
        if spans:
            counts["phone"] += len(spans)
        return text


def _international(raw: str, region: str) -> bool:
    """``raw`` is written in international form (``+CC ...``, or the region's exit code and CC: ``0044 ...``) and
    its length is one the country's plan allows for a full number. Such a number is a phone number whether or not its
    range is allocated today (a plan changes; a person's number typed in a query does not stop being one)."""
    try:
        number = phonenumbers.parse(raw, region, keep_raw_input=True)
    except phonenumbers.NumberParseException:
        return False
    source = phonenumbers.CountryCodeSource
    if number.country_code_source not in (source.FROM_NUMBER_WITH_PLUS_SIGN, source.FROM_NUMBER_WITH_IDD):
        return False
    reason = phonenumbers.is_possible_number_with_reason(number)  # local-only lengths make no sense after a +CC
    return bool(reason == phonenumbers.ValidationResult.IS_POSSIBLE)


#: a North American number as people write one: (503) 555-0143, 503-555-0143, 503.555.0143; area code and exchange
#: start with 2-9, as the plan's every number does (separators required: an unbroken run of ten digits is the digit
#: rule's)
_PHONE_CHARS = re.compile(r"[\d ()./-]+")
_NANP_SHAPE = re.compile(r"(?:\+?1[ .-]?)?(?:\([2-9]\d{2}\) ?|[2-9]\d{2}[ .-])[2-9]\d{2}[ .-]\d{4}")


def _national(raw: str, region: str) -> bool:
    """``raw`` is a full number of the region's plan written in its national form, allocated or not: a length the plan
    allows for a full number, written the way the region writes a phone number (after the trunk prefix, 0 in GB, DE
    or RO; grouped as (503) 555-0143 in North America) and at least 7 digits. An unallocated range ((999) 555-0143,
    0199 1234567) is a person's number as much as an allocated one; the shape keeps amounts and codes out."""
    if sum(c.isdigit() for c in raw) < 7 or not _PHONE_CHARS.fullmatch(raw):
        return False  # short, or read out of a code (0x80070005) or a word
    try:
        number = phonenumbers.parse(raw, region, keep_raw_input=True)
    except phonenumbers.NumberParseException:
        return False
    if number.country_code_source != phonenumbers.CountryCodeSource.FROM_DEFAULT_COUNTRY:
        return False  # international forms are _international's
    reason = phonenumbers.is_possible_number_with_reason(number)
    if reason != phonenumbers.ValidationResult.IS_POSSIBLE:
        return False
    prefix = phonenumbers.PhoneMetadata.metadata_for_region(region).national_prefix
    written = raw.strip()
    if prefix == "0":
        return written.lstrip("(").startswith("0") and not written.startswith("00")
    return bool(_NANP_SHAPE.fullmatch(written)) if phonenumbers.country_code_for_region(region) == 1 else False


def _sub(pattern: re.Pattern[str], text: str, kind: str, counts: Counter[str],
         valid: Callable[[str], bool] | None = None,
         finder: Callable[[re.Match[str]], tuple[int, int, bool] | None] | None = None,
         kept: list[str] | None = None) -> str:
    """Replace the matches of `pattern` that `valid` accepts, or the span `finder` picks inside a match: redacted
    when its flag is true, else set aside in `kept` (a look-alike: a placeholder no later rule reads)."""
    pieces: list[str] = []
    last = 0
    for m in pattern.finditer(text):
        if finder is not None:
            span = finder(m)
        else:
            span = (m.start(), m.end(), True) if valid is None or valid(m.group()) else None
        if span is None:
            continue
        start, end, redact = span
        if redact:
            pieces += [text[last:start], TOKENS[kind]]
            counts[kind] += 1
        elif kept is None:
            continue
        else:
            pieces += [text[last:start], chr(_KEPT_BASE + len(kept))]
            kept.append(text[start:end])
        last = end
    if not pieces:
        return text
    return "".join(pieces) + text[last:]


def _iban_span(m: re.Match[str]) -> tuple[int, int, bool] | None:
    """The longest IBAN starting at the match (the pattern may run on into the next word's letters): redacted when
    its mod-97 check holds, kept whole when only the check digits are wrong (so no phone is read inside it)."""
    value = m.group()
    for end in range(len(value), 13, -1):
        head = value[:end]
        if head[-1] in " -":
            continue
        compact = re.sub(r"[ -]", "", head).upper()
        if std_iban.is_valid(compact):
            return m.start(), m.start() + end, True
        fixed = compact[:2] + std_iban.calc_check_digits(compact) + compact[4:]
        if std_iban.is_valid(fixed):
            return m.start(), m.start() + end, False
    return None


#: first digit of a card number -> its lengths (Mastercard/Mir 2, Amex/Diners/JCB 3, Visa 4, Mastercard 5,
#: Discover/UnionPay 6): a 13-19 digit number outside these is no card, whatever Luhn says
_CARD_LENGTHS = {"2": {16}, "3": {14, 15, 16}, "4": {13, 16, 19}, "5": {16}, "6": {16, 17, 18, 19}}
_CARD_GROUPS = re.compile(r"\d{4}(?:[ -]\d{4})*(?:[ -]\d{1,4})?|\d{4}[ -]\d{6}[ -]\d{4,5}")


def _card_span(m: re.Match[str]) -> tuple[int, int, bool] | None:
    """A card-shaped number (its network's first digit and length, unbroken or grouped as cards print): redacted
    when Luhn holds; when it fails, a grouped one is kept and an unbroken one is left to the digit-run rule."""
    value = m.group()
    digits = re.sub(r"[ -]", "", value)
    if len(digits) not in _CARD_LENGTHS.get(digits[0], ()):
        return None
    grouped = digits != value
    if grouped and not _CARD_GROUPS.fullmatch(value):
        return None
    if luhn.is_valid(digits):
        return m.start(), m.end(), True
    return (m.start(), m.end(), False) if grouped else None


def _url_has_token(url: str) -> bool:
    """A URL carries a secret when a query/fragment parameter is named like one, it has user:password@, or a path
    segment is a long random string (a reset link, a signed download)."""
    parts = urlsplit(url if "://" in url else "http://" + url)
    if parts.password or (parts.username and "@" in parts.netloc):
        return True
    for query in (parts.query, parts.fragment):
        for name, value in parse_qsl(query, keep_blank_values=True):
            if value and _SECRET_PARAM.search(name):
                return True
    return any(_random_looking(seg) for seg in re.split(r"[/;]", parts.path))


def _random_looking(segment: str) -> bool:
    """24+ URL-safe characters mixing letters and digits (a slug or a CamelCase page name has no digits, or words)."""
    if not _RANDOM_SEGMENT.match(segment) or not any(c.isdigit() for c in segment):
        return False
    return sum(c.isalpha() for c in segment) >= 4 and not re.fullmatch(r"[a-z]+(?:[-_][a-z0-9]+)+", segment)


def _is_host_address(value: str) -> bool:
    """An address of one host (redact); a network written with its prefix, host bits zero, is kept."""
    try:
        iface = ipaddress.ip_interface(value)
    except ValueError:
        return False
    if "/" in value and iface.ip == iface.network.network_address and iface.network.num_addresses > 1:
        return False
    return True
