"""Words that stay true (issues 29, 30): every `private-mteb ...` line the README, docs/ and the comments of
configs/ show parses with the real CLI, every internal link of the docs resolves, and the labels configs name exist.

Parsing builds the click command from the typer app and lets it parse each line exactly as a shell would hand it
over (`make_context`, subcommands resolved one level at a time) without running anything: an unknown command or
option, or an extra argument, fails. A placeholder value (`-c CONFIG`, `-n N`) or a required argument an example
leaves out is fine: those are what the reader fills in.
"""

from __future__ import annotations

import re
import shlex
import unicodedata
from pathlib import Path

import pytest
import typer

from conftest import REPO
from runners.cli import app

ROOT_CMD = typer.main.get_command(app)
#: errors of click's parser that mean the docs name something the CLI does not have
UNKNOWN = ("NoSuchOption", "NoSuchCommand")
EAGER_SIDE_EFFECTS = ("--install-completion", "--show-completion")


def doc_files() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def config_files() -> list[Path]:
    return sorted((REPO / "configs").rglob("*.yaml"))


def _cut(cmd: str) -> str:
    """The command alone: up to a shell operator or comment; optional `[...]` brackets and `...` dropped."""
    cmd = re.split(r"\s(?:;|\||&&|\|\||2>&1|>|#)\s?|;\s|`", cmd + " ")[0]
    cmd = cmd.replace("[", " ").replace("]", " ")
    return " ".join(t for t in cmd.split() if t not in {"...", "…"}).strip()


def commands_in_markdown(text: str) -> list[tuple[int, str]]:
    """`private-mteb ...` lines of code: `$ private-mteb` in any fenced block, a bare `private-mteb` line in a shell
    block, `- run: private-mteb` in a YAML block (a continued line `\\` joined), and inline code spans."""
    found = []
    lang = None  # the open fence's language, None outside a fence
    lines = text.splitlines()
    for no, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            lang = None if lang is not None else line.strip()[3:].strip() or "text"
            continue
        if lang is not None:
            prefix = {"bash": r"(?:\.venv/bin/)?", "sh": r"(?:\.venv/bin/)?", "shell": r"(?:\.venv/bin/)?",
                      "yaml": r"- run: "}.get(lang)
            m = re.match(r"\s*\$ (?:\.venv/bin/)?(private-mteb(?:\s.*)?)$", line)
            if not m and prefix is not None:
                m = re.match(r"\s*" + prefix + r"(private-mteb(?:\s.*)?)$", line)
            if m:
                cmd, nxt = m[1], no
                while cmd.rstrip().endswith("\\") and nxt < len(lines):
                    cmd, nxt = cmd.rstrip()[:-1] + " " + lines[nxt].strip(), nxt + 1
                found.append((no, _cut(cmd)))
            continue
        for span in re.findall(r"`([^`]+)`", line):
            m = re.match(r"(?:\.venv/bin/)?(private-mteb(?:\s.*)?)$", span.strip())
            if m:
                found.append((no, _cut(m[1])))
    return found


def commands_in_yaml_comments(text: str) -> list[tuple[int, str]]:
    found = []
    for no, line in enumerate(text.splitlines(), 1):
        if "#" not in line:
            continue
        comment = line[line.index("#") + 1:]
        for m in re.finditer(r"(?:\.venv/bin/)?(private-mteb\s[^;)`]*)", comment):
            found.append((no, _cut(m[1])))
    return found


def all_commands() -> list[tuple[str, str]]:
    out = []
    for path in doc_files():
        out += [(f"{path.relative_to(REPO)}:{no}", cmd) for no, cmd in commands_in_markdown(path.read_text())]
    for path in config_files():
        out += [(f"{path.relative_to(REPO)}:{no}", cmd) for no, cmd in commands_in_yaml_comments(path.read_text())]
    return out


def parse_problem(cmd: str) -> str | None:
    """None when the real CLI parses `cmd`, else why not (unknown command / option, or an extra argument)."""
    args = shlex.split(cmd)[1:]
    if any(a in EAGER_SIDE_EFFECTS for a in args):  # their callbacks act while parsing: check the name only
        names = {o for p in ROOT_CMD.params for o in p.opts}
        return None if all(a in names for a in args if a.startswith("-")) else f"unknown option in {args}"
    cmd_obj, name, parent = ROOT_CMD, "private-mteb", None
    while True:
        try:
            ctx = cmd_obj.make_context(name, list(args), parent=parent)
        except Exception as exc:  # click's (typer's vendored click) errors: classified by kind
            kind = type(exc).__name__
            if kind in UNKNOWN or "unexpected extra argument" in str(exc):
                return f"{kind}: {exc}"
            return None  # Exit (--help, --version), a missing argument, a placeholder value
        sub_args = list(getattr(ctx, "_protected_args", [])) + list(ctx.args)
        if not hasattr(cmd_obj, "resolve_command"):
            return f"unexpected extra arguments {ctx.args}" if ctx.args else None
        if not sub_args:
            return None
        try:
            sub_name, sub, rest = cmd_obj.resolve_command(ctx, sub_args)
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"
        if sub is None:
            return f"no such command {sub_args[0]!r}"
        cmd_obj, name, parent, args = sub, sub_name, ctx, rest


def test_the_docs_show_commands() -> None:
    cmds = all_commands()
    assert len(cmds) > 40, len(cmds)
    assert any(w.startswith("configs/") for w, _ in cmds), "no command found in the configs' comments"


@pytest.mark.parametrize("where,cmd", all_commands())
def test_every_shown_command_parses_with_the_real_cli(where: str, cmd: str) -> None:
    problem = parse_problem(cmd)
    assert problem is None, f"{where}: `{cmd}`: {problem}"


@pytest.mark.parametrize("cmd", [
    "private-mteb stast -c x.yaml",                    # a misspelt command
    "private-mteb check --baseline a --max-dorp 0.1",  # a misspelt option
    "private-mteb tasks valdate X",                    # a misspelt subcommand
    "private-mteb history accept --bogus",             # an option a nested command lacks
    "private-mteb stats extra-argument",               # an argument the command does not take
])
def test_the_parser_check_fails_on_what_the_cli_does_not_have(cmd: str) -> None:
    assert parse_problem(cmd) is not None


def test_placeholders_and_help_parse() -> None:
    for cmd in ("private-mteb --help", "private-mteb --version", "private-mteb check -c CONFIG --baseline history:last",
                "private-mteb inspect worst --model M -n N", "private-mteb tasks validate"):
        assert parse_problem(cmd) is None, cmd


def slug(heading: str) -> str:
    """Python-Markdown's toc slug (what mkdocs gives a heading as its anchor)."""
    text = re.sub(r"<[^>]+>|`", "", heading)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(path: Path) -> set[str]:
    out, fence = set(), False
    for line in path.read_text().splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
        elif not fence and (m := re.match(r"#{1,6} (.+)", line)):
            out.add(slug(m[1]))
    return out


def internal_links() -> list[tuple[str, Path, str]]:
    out = []
    for path in doc_files():
        fence = False
        for no, line in enumerate(path.read_text().splitlines(), 1):
            if line.lstrip().startswith("```"):
                fence = not fence
            if fence:
                continue
            for target in re.findall(r"\]\(([^)\s]+)\)", line):
                if re.match(r"[a-z]+:", target):
                    continue
                out.append((f"{path.relative_to(REPO)}:{no}", path, target))
    return out


def test_every_internal_link_resolves() -> None:
    links = internal_links()
    assert len(links) > 20
    bad = []
    for where, page, target in links:
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        if not dest.exists():
            bad.append(f"{where}: {target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"{where}: {target}: no heading #{anchor} in {dest.name}")
    assert not bad, "\n".join(bad)


def test_link_check_sees_a_broken_anchor(tmp_path: Path) -> None:
    page = tmp_path / "a.md"
    page.write_text("# Title\n\n## Input formats\n")
    assert "input-formats" in anchors(page) and "input-format" not in anchors(page)
    assert slug("Quality next to its price: latency (`latency`)") == "quality-next-to-its-price-latency-latency"


def test_every_python_dash_m_module_exists() -> None:
    """`python -m runners.experiments` in a config comment named a module that no longer existed (issue 29)."""
    import importlib.util

    bad = []
    for path in [*doc_files(), *config_files()]:
        for no, line in enumerate(path.read_text().splitlines(), 1):
            for mod in re.findall(r"python3? -m ([\w.]+)", line):
                if importlib.util.find_spec(mod) is None:
                    bad.append(f"{path.relative_to(REPO)}:{no}: python -m {mod}: no such module")
    assert not bad, "\n".join(bad)


NAME_OPTIONS = ("--models", "--model", "--baseline", "--candidate")


def named_candidates(cmd: str) -> tuple[Path | None, list[str]]:
    """The config a command reads (`-c`) and the candidate names/labels it gives (paths and history: left out)."""
    args = shlex.split(cmd)
    cfg, names = None, []
    for i, a in enumerate(args[:-1]):
        value = args[i + 1]
        if a in ("-c", "--config"):
            cfg = REPO / value
        elif a in NAME_OPTIONS and not value.startswith(("history:", "-")) and not (REPO / value).exists() \
                and not value.endswith("/") and value.upper() != value:
            names += value.split(",") if a == "--models" else [value]
    return (cfg if cfg is not None and cfg.is_file() else None), names


def test_labels_the_configs_and_docs_name_exist() -> None:
    """`--models hybrid-rrf60,bm25+MiniLM@20` in latency-demo.yaml named no candidate of that config (issue 29)."""
    from runners.config.benchmark import BenchmarkConfig
    from runners.config.experiments import plan_experiments

    bad, checked = [], 0
    for where, cmd in all_commands():
        cfg_path, names = named_candidates(cmd)
        if cfg_path is None or not names:
            continue
        cfg = BenchmarkConfig.from_file(cfg_path)
        known = {m.default_label for m in cfg.models} | {m.results_name for m in cfg.models}
        known |= {p.label for p in plan_experiments(cfg)} | {p.name for p in plan_experiments(cfg)}
        checked += 1
        bad += [f"{where}: `{n}` is no candidate of {cfg_path.name}" for n in names if n not in known]
    assert checked >= 2
    assert not bad, "\n".join(bad)


def test_label_check_sees_a_wrong_label() -> None:
    cfg, names = named_candidates("private-mteb stats -c configs/benchmarks/latency-demo.yaml --models BM25,hybrid-rrf60")
    assert cfg is not None and names == ["BM25", "hybrid-rrf60"]
