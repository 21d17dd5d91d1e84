"""Planted personal data and clean look-alikes for the generated query log (scripts/query_log_generator.py, issue 38).

Every value is made here from the seed, never copied from anyone: e-mail addresses at example.com/.org (reserved),
phone numbers in the fictional ranges (US 555-01xx, UK 020 7946 0xxx, Australia 0491 570 xxx), card numbers on
the test prefixes, IP addresses in the documentation ranges (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24,
2001:db8::/32), and checksummed numbers (IBAN, CNP, PESEL, DNI/NIE, codice fiscale) computed by python-stdnum.

Each planted query carries exactly one value and says which kind the redactor must count, so a test can assert
both "0 values left" and "counted as the right kind". Invalid checksums come in two forms, after the redactor's
stated rule: grouped or short (kept verbatim: a look-alike) and an unbroken run of 9+ digits (kind `digits`).
"""

from __future__ import annotations

import random
import string
from dataclasses import dataclass

from stdnum import iban, luhn
from stdnum.es import dni, nie
from stdnum.it import codicefiscale
from stdnum.pl import pesel
from stdnum.ro import cnp

#: the team's own pattern the log plants values for (kind `custom`)
CUSTOM_PATTERNS = (r"\bEMP-\d{6}\b",)

_FIRST = ["ana", "bogdan", "carla", "dmitri", "elena", "farid", "greta", "hiro", "ioana", "jonas", "kofi", "lena"]
_LAST = ["popa", "novak", "smith", "weber", "tanaka", "moreau", "ionescu", "okafor", "lindqvist", "rossi"]


@dataclass(frozen=True)
class PlantedQuery:
    """One query of the log holding one value; `kind` is what the redactor must count (None: nothing)."""

    query: str
    value: str
    kind: str | None


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(string.digits) for _ in range(n))


def _bad(check: str, alphabet: str = string.digits) -> str:
    """Another check character than the right one."""
    return alphabet[(alphabet.index(check) + 1) % len(alphabet)]


def _group(value: str, size: int = 4, sep: str = " ") -> str:
    return sep.join(value[i:i + size] for i in range(0, len(value), size))


def _email(rng: random.Random) -> str:
    first, last = rng.choice(_FIRST), rng.choice(_LAST)
    local = rng.choice([f"{first}.{last}", f"{first[0]}{last}", f"{first}_{last}{rng.randint(1, 99)}",
                        f"{first}.{last}+kb"])
    name = f"{local}@{rng.choice(['example.com', 'example.org', 'mail.example.net'])}"
    return name.upper() if rng.random() < 0.1 else name


def _phone(rng: random.Random) -> str:
    n2, n3 = rng.randint(0, 99), rng.randint(0, 999)
    return rng.choice([f"+1 503 555 01{n2:02d}", f"(512) 555-01{n2:02d}", f"503-555-01{n2:02d}",
                       f"+44 20 7946 0{n3:03d}", f"020 7946 0{n3:03d}", f"0044 20 7946 0{n3:03d}",
                       f"+61 491 570 {rng.randint(110, 159)}", f"+1-512-555-01{n2:02d}"])


def _card(rng: random.Random) -> str:
    body = rng.choice(["4", "4", "5555", "2221"]) if rng.random() < 0.8 else "37"
    length = 15 if body == "37" else 16
    payload = body + _digits(rng, length - len(body) - 1)
    return payload + luhn.calc_check_digit(payload)


def _iban(rng: random.Random) -> str:
    country, bban = rng.choice([
        ("RO", "".join(rng.choice(string.ascii_uppercase) for _ in range(4)) + _digits(rng, 16)),
        ("DE", _digits(rng, 18)),
        ("GB", "WEST" + _digits(rng, 14)),
    ])
    return country + iban.calc_check_digits(country + "00" + bban) + bban


def _cnp(rng: random.Random) -> str:
    year = rng.randint(1950, 2005)
    sex = rng.choice("12") if year < 2000 else rng.choice("56")
    head = (f"{sex}{year % 100:02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{rng.randint(1, 46):02d}"
            f"{rng.randint(1, 999):03d}")
    return head + cnp.calc_check_digit(head)


def _pesel(rng: random.Random) -> str:
    head = f"{rng.randint(50, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{_digits(rng, 4)}"
    return head + pesel.calc_check_digit(head)


def _dni(rng: random.Random) -> str:
    head = _digits(rng, 8)
    return head + dni.calc_check_digit(head)


def _nie(rng: random.Random) -> str:
    head = rng.choice("XYZ") + _digits(rng, 7)
    return head + nie.calc_check_digit(head)


def _codice_fiscale(rng: random.Random) -> str:
    letters = "".join(rng.choice(string.ascii_uppercase) for _ in range(6))
    head = (f"{letters}{rng.randint(50, 99)}{rng.choice('ABCDEHLMPRST')}{rng.randint(1, 28) + rng.choice([0, 40]):02d}"
            f"{rng.choice(string.ascii_uppercase)}{rng.randint(100, 999)}")
    return head + codicefiscale.calc_check_digit(head)


def _ip(rng: random.Random) -> str:
    if rng.random() < 0.3:
        return f"2001:db8:{rng.randint(1, 0xffff):x}::{rng.randint(1, 0xffff):x}"
    return f"{rng.choice(['192.0.2', '198.51.100', '203.0.113'])}.{rng.randint(1, 254)}"


def _url_token(rng: random.Random) -> str:
    tok = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(27)) + rng.choice(string.digits)
    return rng.choice([
        f"https://id.northwind.example/reset?token={tok}",
        f"https://files.northwind.example/get?file=handbook.pdf&X-Amz-Signature={tok.lower()}",
        f"https://app.northwind.example/home;jsessionid=x?sessionid={tok[:16]}",
        f"https://share.northwind.example/s/{tok}",
        f"https://{rng.choice(_FIRST)}:{tok[:10]}@git.northwind.example/infra",
        f"www.northwind.example/login?api_key={tok[:20]}",
    ])


#: kind -> (value maker, query templates); {v} is the value
VALID = {
    "email": (_email, ["reset mfa for {v}", "who owns shared mailbox {v}", "add {v} to the vpn group",
                       "{v} cannot log in to keystone"]),
    "phone": (_phone, ["call me back on {v} about my laptop", "my new number is {v} update payroll",
                       "it desk said to call {v}", "lost phone {v} reset mfa"]),
    "card": (lambda r: rng_group(r, _card(r)), ["corporate card {v} declined at hotel", "refund to card {v}",
                                                "expense paid with {v} missing receipt"]),
    "iban": (lambda r: rng_group(r, _iban(r)), ["change my bank account to {v}", "payslip iban {v} wrong",
                                                "reimburse expenses to {v}"]),
    "national_id": (lambda r: r.choice([_cnp, _cnp, _pesel, _dni, _nie, _codice_fiscale])(r),
                    ["payroll needs my id {v}", "cnp {v} on payslip is wrong", "tax form id {v} parental leave"]),
    "ip": (_ip, ["vpn blocked from {v}", "my laptop ip is {v} fleetwatch says non compliant",
                 "wifi keeps dropping on {v}"]),
    "url_token": (_url_token, ["password reset link {v} expired", "is this link safe {v}",
                               "cannot open {v} from home"]),
    # 9 or 12 digits starting with 9: no phone plan, card length or national id reads them, only the digit rule
    "digits": (lambda r: "9" + _digits(r, r.choice([8, 11])),
               ["order {v} laptop not arrived", "ticket {v} still open", "customer {v} refund status"]),
    "custom": (lambda r: f"EMP-{_digits(r, 6)}", ["badge for {v} not working", "onboarding checklist {v}"]),
}


def rng_group(rng: random.Random, value: str) -> str:
    """A card number or IBAN as people type it: grouped by four with spaces, with hyphens, or all together."""
    style = rng.random()
    return _group(value) if style < 0.5 else _group(value, sep="-") if style < 0.65 else value


def invalid_checksums(rng: random.Random) -> list[PlantedQuery]:
    """Wrong check digits. Grouped, short or glued to letters: kept verbatim; an unbroken run of 9+ digits:
    `digits` (the redactor's stated rule), never counted as the kind it imitates."""
    out = []
    card = _card(rng)
    bad_card = card[:-1] + _bad(card[-1])
    out.append(PlantedQuery(f"card {_group(bad_card)} declined again", _group(bad_card), None))
    card = _card(rng)
    bad_run = card[:-1] + _bad(card[-1])
    out.append(PlantedQuery(f"card {bad_run} declined", bad_run, "digits"))
    good = _iban(rng)
    bad_iban = good[:2] + f"{(int(good[2:4]) + 1) % 100:02d}" + good[4:]  # check digits off by one
    assert not iban.is_valid(bad_iban)
    out.append(PlantedQuery(f"iban {_group(bad_iban)} rejected by ledgerly", _group(bad_iban), None))
    out.append(PlantedQuery(f"iban {bad_iban} rejected", bad_iban, None))
    for maker, prefix in ((_cnp, "cnp"), (_pesel, "pesel")):
        v = maker(rng)
        bad = v[:-1] + _bad(v[-1])
        out.append(PlantedQuery(f"{prefix} {bad} on my payslip", bad, "digits"))
    v = _dni(rng)
    bad_dni = v[:-1] + _bad(v[-1], "TRWAGMYFPDXBNJZSQVHLCKE")
    out.append(PlantedQuery(f"dni {bad_dni} for relocation", bad_dni, None))
    v = _codice_fiscale(rng)
    bad_cf = v[:-1] + _bad(v[-1], string.ascii_uppercase)
    out.append(PlantedQuery(f"codice fiscale {bad_cf} for italian payroll", bad_cf, None))
    return out


#: clean texts that look like personal data and must be kept verbatim
LOOKALIKES = [
    ("replacement charger NW-4471-2208 for X1 Carbon Gen 11", "NW-4471-2208"),
    ("fru 5M11C53267 keyboard replacement", "5M11C53267"),
    ("part NW-204512883 backorder", "NW-204512883"),
    ("sku 4471 2208 docking station", "4471 2208"),
    ("vpn grabs 10.40.0.0/16 after wsl2", "10.40.0.0/16"),
    ("error 0x80070005 installing northgate", "0x80070005"),
    ("macos 13.4.1 vpn broken", "13.4.1"),
    ("wireguard port 51820 blocked at hotel", "51820"),
    ("expense EXP-2025-0042 stuck in approval", "EXP-2025-0042"),
    ("meal limit $1,250.00 for london trip", "$1,250.00"),
    ("room 4.12 projector not working", "4.12"),
    ("standup at 10:30 on 2026-03-14", "2026-03-14"),
    ("it desk ext 0143", "0143"),
    ("docs at https://wiki.northwind.example/vpn/mac?lang=en", "https://wiki.northwind.example/vpn/mac?lang=en"),
    ("python 3.12 dev environment setup", "3.12"),
    ("shipyard deploy v2.13.0 rollback", "v2.13.0"),
]


def planted_queries(rng: random.Random, per_kind: int = 4) -> list[PlantedQuery]:
    """`per_kind` valid values of each kind, the invalid checksums, and the look-alikes."""
    out = []
    for kind, (maker, templates) in VALID.items():
        for _ in range(per_kind):
            value = maker(rng)
            out.append(PlantedQuery(rng.choice(templates).format(v=value), value, kind))
    out += invalid_checksums(rng)
    out += [PlantedQuery(q, v, None) for q, v in LOOKALIKES]
    return out
