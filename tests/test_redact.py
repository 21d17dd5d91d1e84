"""Redaction of personal data in query text (issue 38): each kind found by its checksum, look-alikes kept, the
digit-run rule applied to long numbers whatever their checksum, and no value ever in what the redactor says."""

from __future__ import annotations

import logging

import phonenumbers
import pytest
from stdnum import iban, luhn
from stdnum.ro import cnp

from runners.labels.questions.redact import KINDS, RULES, Redactor, RedactionResult

R = Redactor()


def _one(text: str) -> RedactionResult:
    return R.redact(text)


@pytest.mark.parametrize(("text", "expected", "kind"), [
    ("mail ana.pop+kb@example.com about vpn", "mail [EMAIL] about vpn", "email"),
    ("call +1 503 555 0143 please", "call [PHONE] please", "phone"),
    ("call (503) 555-0143", "call [PHONE]", "phone"),
    ("desk 020 7946 0123 london", "desk [PHONE] london", "phone"),
    ("+44 20 7946 0123 or 0044 20 7946 0124", "[PHONE] or [PHONE]", "phone"),
    ("card 4111 1111 1111 1111 declined", "card [CARD] declined", "card"),
    ("card 4111-1111-1111-1111 declined", "card [CARD] declined", "card"),
    ("iban RO49 AAAA 1B31 0075 9384 0000 please", "iban [IBAN] please", "iban"),
    ("GB82WEST12345698765432 refund", "[IBAN] refund", "iban"),
    ("payslip cnp 1800101221144", "payslip cnp [NATIONAL_ID]", "national_id"),
    ("pesel 44051401359", "pesel [NATIONAL_ID]", "national_id"),
    ("dni 54362315K", "dni [NATIONAL_ID]", "national_id"),
    ("codice RCCMNL83S18D969H", "codice [NATIONAL_ID]", "national_id"),
    ("blocked from 203.0.113.7 today", "blocked from [IP] today", "ip"),
    ("host 192.168.1.23/24 down", "host [IP] down", "ip"),
    ("ipv6 2001:db8::8a2e:370:7334 blocked", "ipv6 [IP] blocked", "ip"),
    ("reset https://id.northwind.example/reset?token=9f8a7b6c5d&x=1 fails", "reset [URL_TOKEN] fails", "url_token"),
    ("open https://drive.northwind.example/s/Zx81kQpLmN42vTy7RsWq0aBc", "open [URL_TOKEN]", "url_token"),
    ("clone https://bob:hunter2@git.northwind.example/repo", "clone [URL_TOKEN]", "url_token"),
    ("order 482019337 missing", "order [DIGITS] missing", "digits"),
])
def test_each_kind_is_redacted_and_counted(text: str, expected: str, kind: str) -> None:
    res = _one(text)
    assert res.text == expected
    assert set(res.counts) == {kind} and res.redacted


def test_a_national_phone_form_needs_its_region() -> None:
    ro = phonenumbers.format_number(phonenumbers.example_number("RO"), phonenumbers.PhoneNumberFormat.NATIONAL)
    assert Redactor().redact(f"sunati la {ro}").text == "sunati la [PHONE]"
    # without RO (and DE, whose plan also reads a leading 0) the same digits are a number in no declared plan
    assert Redactor(phone_regions=("US",)).redact(f"sunati la {ro}").counts["phone"] == 0
    with pytest.raises(ValueError, match="unknown phone region"):
        Redactor(phone_regions=("XX",))


@pytest.mark.parametrize(("text", "expected"), [
    ("call +44 20 5118 6857 now", "call [PHONE] now"),  # London, a range not allocated today
    ("or 0044 20 5118 6857", "or [PHONE]"),  # the same number after the UK's exit code
    ("call +1 999 555 0143 please", "call [PHONE] please"),  # area code 999: not in the plan
    ("+40 799 123 456 or +33 9 99 99 99 99", "[PHONE] or [PHONE]"),
])
def test_international_numbers_are_redacted_when_possible_not_only_when_valid(text: str, expected: str) -> None:
    """A number in international form is a phone number whether or not its range is allocated today (issue 46):
    phonenumbers calls these "possible" (a length the country's plan allows) but not "valid"."""
    raw = [phonenumbers.parse(n, None) for n in ("+44 20 5118 6857", "+1 999 555 0143")]
    assert all(phonenumbers.is_possible_number(n) and not phonenumbers.is_valid_number(n) for n in raw)
    res = _one(text)
    assert res.text == expected and set(res.counts) == {"phone"}


@pytest.mark.parametrize("text", [
    "sales +12 345 678 units in 2024",  # a signed amount: a local-only length after +1 is no full number
    "revenue +1 250 000 EUR, +15% on 2023",
    "up +12 degrees, +3.5 points, +1200 m",
    "score +100 in 2025 and 1,250.00 paid",
    "+3 0000000 is no number",
])
def test_signed_amounts_and_years_are_not_phone_numbers(text: str) -> None:
    res = _one(text)
    assert res.text == text and not res.redacted, res.counts


@pytest.mark.parametrize("text", [
    "card 4111 1111 1111 1112 declined",          # Luhn fails, grouped: no rule applies
    "iban RO49 AAAA 1B31 0075 9384 0001 please",  # mod-97 fails
    "GB83WEST12345698765432 refund",              # mod-97 fails, glued to letters: not a digit run
    "dni 12345678A",                               # check letter wrong, 8 digits: under the digit-run threshold
    "codice RCCMNL83S18D969X",                     # check letter wrong
    "vpn grabs 10.40.0.0/16 after wsl2",           # a network, not a host
    "part NW-204512883 and 5M11C53267 for X1 Carbon Gen 11",  # product codes
    "SKU 4471 2208 and sku 4471-2208-99",
    "macOS 13.4.1 and version 2.13.0 and pi 3.14159265358",
    "error 0x80070005 at 10:30:45 on 2025-03-14",
    "price $1,250.00 room 4.12 port 51820 ext 0143",
    "see https://wiki.northwind.example/vpn/mac?lang=en",
    "std::vector and a::b",
])
def test_look_alikes_are_kept(text: str) -> None:
    res = _one(text)
    assert res.text == text and not res.redacted, res.counts


def test_an_invalid_checksum_in_a_long_run_is_redacted_as_digits_not_as_its_kind() -> None:
    """The stated rule: a standalone run of 9+ digits goes whatever its checksum; it counts as `digits`."""
    valid = "180010122114" + cnp.calc_check_digit("180010122114")
    invalid = valid[:-1] + str((int(valid[-1]) + 1) % 10)
    assert cnp.is_valid(valid) and not cnp.is_valid(invalid)
    assert _one(f"cnp {invalid}").counts == {"digits": 1}
    card = "411111111111111" + luhn.calc_check_digit("411111111111111")
    bad_card = card[:-1] + str((int(card[-1]) + 3) % 10)
    assert _one(f"card {bad_card}").counts == {"digits": 1}
    assert _one(f"card {card}").counts == {"card": 1}
    # under the threshold: kept; the threshold is a parameter with a floor
    assert not _one("ref 12345678").redacted
    assert Redactor(min_digits=6).redact("ref 12345678").text == "ref [DIGITS]"
    with pytest.raises(ValueError, match="min_digits"):
        Redactor(min_digits=4)


def test_iban_running_into_the_next_word_is_cut_at_the_valid_length() -> None:
    value = "DE" + iban.calc_check_digits("DE00370400440532013000") + "370400440532013000"
    assert iban.is_valid(value)
    assert _one(f"to {value} asap").text == "to [IBAN] asap"
    grouped = " ".join(value[i:i + 4] for i in range(0, len(value), 4))
    assert _one(f"to {grouped} thanks").text == "to [IBAN] thanks"


def test_custom_patterns_run_first_and_a_bad_one_is_one_error() -> None:
    r = Redactor([r"EMP-\d{6}", r"\bticket #\d+"])
    res = r.redact("EMP-204518 asks about ticket #4471 and ana@example.org")
    assert res.text == "[CUSTOM] asks about [CUSTOM] and [EMAIL]"
    assert res.counts == {"custom": 2, "email": 1}
    with pytest.raises(ValueError, match=r"redaction pattern 2 .* is not a regular expression"):
        Redactor(["ok", "(unclosed"])


def test_several_values_in_one_query_and_the_totals() -> None:
    texts = ["a@example.com b@example.com", "call +1 503 555 0143 or 4111 1111 1111 1111", "nothing here"]
    out, total = R.redact_all(texts)
    assert out == ["[EMAIL] [EMAIL]", "call [PHONE] or [CARD]", "nothing here"]
    assert total == {"email": 2, "phone": 1, "card": 1}


def test_every_kind_has_a_rule_and_describe_names_the_declared_defaults() -> None:
    assert set(RULES) == set(KINDS)
    desc = Redactor(phone_regions=("FR", "RO"), min_digits=11).describe()
    assert "FR, RO" in desc["phone"] and "11+" in desc["digits"] and desc["custom"] == "none given"


def test_no_value_is_logged(caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]) -> None:
    secret = "4111 1111 1111 1111"
    with caplog.at_level(logging.DEBUG):
        res = R.redact(f"card {secret} from ana@example.com at 203.0.113.7")
    assert secret not in caplog.text and "ana@" not in caplog.text and "203.0.113" not in caplog.text
    out = capsys.readouterr()
    assert secret not in out.out + out.err
    assert secret not in repr(res) and "ana@" not in repr(res)


@pytest.mark.parametrize("text, kind, value", [
    ("我的手机号是13800138000请回电", "digits", "13800138000"),
    ("邮箱zhang.wei@example.com谢谢", "email", "zhang.wei@example.com"),
    ("メールはtaro.yamada@example.jpです", "email", "taro.yamada@example.jp"),
    ("제 번호는 01012345678입니다", "phone", "01012345678"),  # a possible number of a declared plan too
    ("เบอร์โทร0812345678ครับ", "phone", "0812345678"),  # a valid German national number too
    ("卡号4111111111111111过期了", "card", "4111111111111111"),
    ("我的ip是192.168.1.20吗", "ip", "192.168.1.20"),
    ("身份证1800101221144在工资单上", "national_id", "1800101221144"),
])
def test_a_value_against_the_letters_of_a_script_without_spaces_is_redacted(text, kind, value):
    """In Chinese, Japanese, Korean or Thai text a number or an address sits right against the letters around it;
    those letters are boundaries, as a space is in English. Before, `\\w` made them part of the value's word, and
    the phone number, e-mail, card, address and id above were kept whole."""
    from stdnum.ro import cnp

    assert cnp.is_valid("1800101221144")
    out = Redactor().redact(text)
    assert value not in out.text and f"[{kind.upper()}]" in out.text and out.counts[kind] == 1, (text, out)


def test_latin_letters_still_glue_a_code_together():
    """A code of Latin letters and digits stays whole (the stated rule): only scripts without spaces are
    boundaries."""
    for text in ("part NW-204512883 backorder", "ref ABC123456789 shipped", "sku x4111111111111111y"):
        assert Redactor().redact(text).text == text


@pytest.mark.parametrize(("text", "number", "region"), [
    ("call (999) 555-0143 tonight", "(999) 555-0143", "US"),  # area code 999: not in the plan today
    ("call 999-555-0143 tonight", "999-555-0143", "US"),
    ("ruf 0199 1234567 an", "0199 1234567", "DE"),  # 0199: no German area code
    ("sunati la 0299 123 456", "0299 123 456", "RO"),
])
def test_a_national_number_is_redacted_when_possible_not_only_when_valid(text: str, number: str, region: str) -> None:
    """A full number of a declared region's plan written as that country writes one (its trunk 0; (NXX) NXX-XXXX in
    North America) is redacted whether or not its range is allocated today, like an international one."""
    parsed = phonenumbers.parse(number, region)
    assert phonenumbers.is_possible_number(parsed) and not phonenumbers.is_valid_number(parsed)
    out = Redactor(phone_regions=(region,)).redact(text)
    assert out.counts == {"phone": 1} and number not in out.text and "[PHONE]" in out.text, out


@pytest.mark.parametrize("text", ["ticket 123-456-7890", "call (212) 155-0143", "order 123 4567", "error 0x80070005",
                                  "version 0.13.0 on 2026-03-14", "amount 1 250 000 lei"])
def test_what_no_plan_writes_as_a_national_number_is_kept(text: str) -> None:
    """Area codes and exchanges starting with 0 or 1 are no North American number; a number without the trunk 0 is
    no German, British or Romanian one; digits read out of a hexadecimal code are no number at all."""
    assert Redactor().redact(text).text == text
