"""The judging app's token is the rater's for the task (issue 36): kept next to their file, 0600, the same after a
crash and restart, another for another rater or task, and never taken from a file others could have written or read.
Also the words the page marks: Unicode words (combining marks included) and the stop words of the task's languages.
"""

from __future__ import annotations

import os
import stat
import unicodedata
from pathlib import Path

from judging_fixture import Server, write_task
from runners.labels.judging.items import question_terms, words
from runners.labels.judging.server import rater_token


def _port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_restarted_server_has_the_raters_token(tmp_path: Path) -> None:
    yaml_path, pool = write_task(tmp_path)
    args = ("-t", str(yaml_path), "--pool", str(pool), "--port", str(_port()))
    first = Server(*args, "--rater", "ana")
    try:
        first.kill9()
    finally:
        first.stop()
    token_file = tmp_path / "labels" / "TinyKBRetrieval" / "ana.token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert token_file.read_text().strip() == first.token
    with Server(*args, "--rater", "ana") as again:
        assert again.url == first.url
    with Server(*args, "--rater", "bo") as other:
        assert other.token != first.token  # another rater, another token


def test_a_token_file_others_could_touch_is_replaced(tmp_path: Path) -> None:
    rater_file = tmp_path / "ana.jsonl"
    token = rater_token(rater_file)
    assert rater_token(rater_file) == token
    path = rater_file.with_suffix(".token")
    os.chmod(path, 0o644)  # others could read it: no longer a secret
    fresh = rater_token(rater_file)
    assert fresh != token and stat.S_IMODE(path.stat().st_mode) == 0o600
    path.unlink()
    planted = tmp_path / "planted"
    planted.write_text("A" * 32 + "\n")
    os.chmod(planted, 0o600)
    path.symlink_to(planted)  # a link to a token someone chose
    assert rater_token(rater_file) != "A" * 32 and not path.is_symlink()
    path.write_text("not a token\n")
    os.chmod(path, 0o600)
    assert rater_token(rater_file) != "not a token"


def test_question_words_keep_combining_marks_and_use_the_tasks_stop_words() -> None:
    assert words("पासवर्ड रीसेट कैसे करें") == ["पासवर्ड", "रीसेट", "कैसे", "करें"]  # \w would cut at vowel signs
    assert words(unicodedata.normalize("NFD", "zurück")) == ["zurück"]  # composed, as the page shows documents
    assert question_terms("Wie setze ich das Passwort zurück?", ["deu-Latn"]) == ["passwort", "zurück", "setze"]
    assert question_terms("Wie setze ich das Passwort zurück?", ["eng-Latn"]) == [
        "passwort", "zurück", "setze", "das", "ich", "wie"]  # English stop words do not know German ones
    assert question_terms("how do I set up the printer") == ["printer", "set"]
    assert question_terms("पासवर्ड रीसेट कैसे करें", ["hin-Deva"]) == ["पासवर्ड", "रीसेट", "करें", "कैसे"]
