"""Rewrite the marked output blocks of README.md and docs/*.md with the real output of their command.

Run through scripts/docs-outputs.sh (which puts .venv on PATH and makes sure the demo results exist). A block is
`<!-- docs-output: COMMAND -->`, a fenced block, `<!-- /docs-output -->` (all three indented alike inside a list
item); the fenced block becomes "$ COMMAND" (for a `private-mteb` command) followed by what it printed, indented as
its marker, with the machine's paths written as the reader's (`reader_paths`: the checkout as ".", a leftover
temporary folder as "<temporary folder>", the home as "~"; a walk script writes its own folder as the reader's,
e.g. ~/my-search, through scripts/docs-show.sh).
`--check` only reports which blocks differ (exit 1), rewriting nothing; with `--numbers` a block differs only when
its numbers or words do: timings, dates and table layout are left out of the comparison (`comparable`; CI runs
`--check --numbers --demo`). `--demo` re-runs only the `private-mteb` commands on configs/benchmarks/demo.yaml
(seconds each once the demo is stored); other arguments re-run only the commands that contain one of them
(e.g. `stats`).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# a block may sit inside a list item: its marker, fences and lines then share the item's indentation
BLOCK = re.compile(r"^(?P<ind>[ ]*)(<!-- docs-output: (?P<cmd>[^\n]+?) -->\n)(?P=ind)```(?P<lang>\w*)\n(?P<body>.*?)"
                   r"(?P=ind)```\n(?P=ind)(<!-- /docs-output -->)", re.S | re.M)


def files() -> list[Path]:
    """Every page that may hold a marked block."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def reader_paths(text: str) -> str:
    """`text` with no path of this machine: a shown output must read the same on every machine that re-makes it and
    name paths as the reader's own (tests/test_docs_shown_paths.py checks the pages). The checkout is ".", a
    temporary folder a command made (a database's socket folder, a session's scratch folder) "<temporary folder>",
    anything left under the home "~"."""
    text = text.replace(str(ROOT), ".")
    tmp = re.escape(os.path.realpath(tempfile.gettempdir()))
    text = re.sub(rf"(?:{tmp}|{re.escape(tempfile.gettempdir())})/[^/\s'\"`:)]+", "<temporary folder>", text)
    home = os.path.expanduser("~")
    return text.replace(home + "/", "~/") if home not in ("", "/") else text


# what legitimately changes from one run to the next: durations (`1.2s`, `42.0 ms`, `computed in 129.0s`),
# progress clocks (`0:00:12`), timestamps, and a rich table's borders and padding (a wider timing widens its column)
_TIMING = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:ms|s)\b|\b\d+:\d\d:\d\d\b|\b\d{4}-\d\d-\d\d[ T]\d\d:\d\d[\d:.+]*")
_BOX = re.compile(r"[\u2500-\u257f]+")


def comparable(text: str) -> list[str]:
    """`text`'s words and numbers in order, timings masked and table borders, padding and line wrapping ignored:
    two outputs with the same comparable() say the same thing (what --check --numbers compares)."""
    return _BOX.sub(" ", _TIMING.sub("<time>", text)).split()


def demo_command(cmd: str) -> bool:
    """A `private-mteb` command on the demo config (what --demo re-runs): cheap once the demo is stored."""
    return cmd.startswith("private-mteb ") and "-c configs/benchmarks/demo.yaml" in cmd


def output_of(cmd: str) -> str:
    """What `cmd` prints (stdout and stderr interleaved, as a user sees it), terminal-wide tables at 120 columns
    unless the command sets COLUMNS itself (`COLUMNS=170 private-mteb latency ...`: a table that wide)."""
    env = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1", "TERM": "dumb"}
    proc = subprocess.run(["bash", "-c", cmd], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True)
    text = reader_paths(proc.stdout)
    lines = [ln.rstrip() for ln in text.rstrip("\n").split("\n")]
    head = [f"$ {cmd}"] if re.sub(r"^(?:[A-Z_]+=\S+\s+)*", "", cmd).startswith("private-mteb ") else []
    tail = [f"(exit {proc.returncode})"] if proc.returncode else []
    return "\n".join(head + lines + tail) + "\n"


def _first_difference(shown: list[str], now: list[str]) -> str:
    """Where a block's shown words and a re-run's first part: a few words of each, for the CI log."""
    i = next((k for k, (a, b) in enumerate(zip(shown, now)) if a != b), min(len(shown), len(now)))
    return f"  shown: ...{' '.join(shown[max(0, i - 4):i + 8])}...\n  now:   ...{' '.join(now[max(0, i - 4):i + 8])}..."


def main(argv: list[str]) -> int:
    check, numbers, demo = ("--check" in argv), ("--numbers" in argv), ("--demo" in argv)
    only = [a for a in argv if a not in ("--check", "--numbers", "--demo")]
    stale = []
    for path in files():
        text = path.read_text(encoding="utf-8")
        cache: dict[str, str] = {}

        def fill(m: re.Match[str]) -> str:
            cmd = m["cmd"].strip()
            if (only and not any(o in cmd for o in only)) or (demo and not demo_command(cmd)):
                return m[0]
            ind = m["ind"]
            body = "".join(ind + ln if ln.strip() else ln for ln in cache.setdefault(cmd, output_of(cmd))
                           .splitlines(keepends=True))
            if (comparable(body) != comparable(m["body"])) if numbers else (body != m["body"]):
                stale.append(f"{path.relative_to(ROOT)}: {cmd}")
                if check and numbers:
                    print(_first_difference(comparable(m["body"]), comparable(body)))
            return f"{ind}{m[2]}{ind}```{m['lang']}\n{body}{ind}```\n{ind}{m[6]}"

        new = BLOCK.sub(fill, text)
        if new != text and not check:
            tmp = path.with_suffix(path.suffix + ".tmp")
            tmp.write_text(new, encoding="utf-8")
            tmp.replace(path)
    for line in stale:
        print(("differs: " if check else "rewrote: ") + line)
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
