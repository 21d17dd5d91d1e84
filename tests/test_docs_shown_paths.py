"""Shown outputs are the reader's and re-made, not pasted (issue 36, Docs).

Two rules over every fenced block of README.md and docs/*.md:

1. No block holds an absolute path of the machine that made it: `/work`, `/tmp`, `/root`, `/home`, `/Users`,
   `/var/folders`, this checkout's path, the temporary folder or the home of the machine running the test. A shown
   path is the reader's own (`~/my-search/...`, as scripts/docs-show.sh writes a walk's folder) or relative to the
   checkout (`./results`, as scripts/docs_outputs.py writes the checkout). Config examples are held to it too: a
   reader cannot have our machine's folders.
2. A transcript is a block whose first non-blank line is a shell prompt (`$ ...`) and which holds at least one line
   that is neither a `$ ` command nor a `#` comment, i.e. it shows what a command printed. Every transcript sits
   between `<!-- docs-output: COMMAND -->` and `<!-- /docs-output -->`, so scripts/docs-outputs.sh re-makes it
   from a real run. A block of only `$ ` commands and comments is a command listing and needs no marker.
   NOT_YET_REMADE named (page, first command, its `#` comment left out) the transcripts still pasted by hand, so
   the list could only shrink; it is empty now: every transcript is re-made, and a pasted one fails.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pytest

from conftest import REPO

MACHINE = re.compile(r"(?<![\w.~-])/(?:work|tmp|root|home|Users|var/folders)(?=/|\s|$|[\"'`:),])")

NOT_YET_REMADE: set[tuple[str, str]] = set()  # empty since every transcript is re-made: it may only stay so


def pages() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def fenced_blocks(text: str) -> list[tuple[int, list[str], bool]]:
    """(line of the opening fence, the block's lines, whether a `<!-- docs-output: ... -->` line opens it)."""
    lines = text.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        if lines[i].lstrip().startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].lstrip().startswith("```"):
                j += 1
            marked = i > 0 and lines[i - 1].lstrip().startswith("<!-- docs-output: ")  # in a list item: indented
            blocks.append((i + 1, lines[i + 1:j], marked))
            i = j
        i += 1
    return blocks


def machine_paths(line: str) -> list[str]:
    """The absolute paths of a machine (ours or the one running the test) that `line` names."""
    own = {str(REPO), os.path.realpath(REPO), tempfile.gettempdir(), os.path.realpath(tempfile.gettempdir()),
           os.path.expanduser("~")} - {"", "/"}
    found = [m[0] for m in MACHINE.finditer(line)]
    for path in own:
        found += re.findall(r"(?<![\w.~-])" + re.escape(path) + r"(?=/|\s|$|[\"'`:),])", line)
    return found


def first_command(body: list[str]) -> str:
    """The block's first line without its trailing `  # comment`."""
    return re.split(r"\s{2,}#", next(ln.strip() for ln in body if ln.strip()))[0].strip()


def is_transcript(body: list[str]) -> bool:
    shown = [ln.strip() for ln in body if ln.strip()]
    return bool(shown) and shown[0].startswith("$ ") and any(not ln.startswith(("$ ", "#")) for ln in shown)


def test_no_shown_block_names_a_path_of_this_machine() -> None:
    found = [f"{page.relative_to(REPO)}:{start + k + 1}: {ln.strip()[:100]}"
             for page in pages() for start, body, _ in fenced_blocks(page.read_text(encoding="utf-8"))
             for k, ln in enumerate(body) if machine_paths(ln)]
    assert not found, "shown outputs name paths of the machine that made them (re-make them with " \
                      "scripts/docs-outputs.sh; a walk writes its folder through scripts/docs-show.sh):\n" + \
                      "\n".join(found)


def test_every_transcript_is_re_made_by_the_script() -> None:
    pasted = {(str(page.relative_to(REPO)), first_command(body)): start
              for page in pages() for start, body, marked in fenced_blocks(page.read_text(encoding="utf-8"))
              if is_transcript(body) and not marked}
    new = [f"{page}:{line}: {first}" for (page, first), line in pasted.items() if (page, first) not in NOT_YET_REMADE]
    assert not new, "hand-pasted outputs: put each between <!-- docs-output: COMMAND --> and <!-- /docs-output --> " \
                    "(COMMAND: a private-mteb command or a scripts/ walk) and run scripts/docs-outputs.sh:\n" + \
                    "\n".join(new)
    gone = sorted(NOT_YET_REMADE - set(pasted))
    assert not gone, f"re-made or removed since: drop them from NOT_YET_REMADE: {gone}"


@pytest.mark.parametrize("line, names_one", [
    ("demo: 2 candidate(s) x 1 task(s) -> /tmp/fresh2/results", True),
    ("in /work/main/results: run `private-mteb run` first", True),
    ("  path: /home/ana/export/corpus.jsonl", True),
    ("pgvector socket in /tmp", True),
    ("demo: 2 candidate(s) x 1 task(s) -> ./results", False),
    ("wrote ~/my-search/configs/tasks/export.yaml", False),
    ("# .github/workflows/retrieval.yml (excerpt)", False),
    ("see docs/work/notes and src/tmp/x", False),
])
def test_the_path_rule_tells_machine_paths_from_the_readers(line: str, names_one: bool) -> None:
    assert bool(machine_paths(line)) is names_one


def test_a_command_listing_is_not_a_transcript() -> None:
    assert not is_transcript(["$ private-mteb run -c bench.yaml", "# then", "$ private-mteb stats -c bench.yaml"])
    assert is_transcript(["$ private-mteb run -c bench.yaml", "bench: 1 candidate(s) x 1 task(s) -> ./results"])
    assert not is_transcript(["private-mteb run -c bench.yaml", "output"])
