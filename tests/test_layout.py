"""The house rules of runners/ and custom_tasks/, checked on the source (issue #10).

* layers: data flows files -> custom_tasks -> config/results -> search -> execution; analysis
  reads stored results only and never imports the execution layer (or search); the judging app builds on
  labels' pool and raters' files and runs no model;
* rooms of the execution layer (issue 30) and of the analysis layer (issue 37): each room imports only the rooms
  below it (ROOMS, ANALYSIS_ROOMS), holds at most MAX_ROOM_FILES files and says in its `__init__.py` docstring
  what it owns; docs/layout.md names every package folder; no two modules share a file name;
* the ground truth (issue 37), runners/labels/: rooms ordered the same way (LABEL_ROOMS); labels sits on the
  statistics core (issue 47: runners/statistics/, a layer of its own, ANALYSIS_CORE) and below analysis, which reads
  its pool, notes, raters and judge but never its judging app, questions or lint;
* no import cycles between files: module A depends on module B when A's file imports B anywhere (module
  level, inside a function, under ``if TYPE_CHECKING:``): a lazy import hides a cycle, it does not remove it;
* analysis commands and `--help` start without torch / transformers / sentence-transformers / mteb.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, TINY_YAML, write_benchmark

PACKAGES = ("custom_tasks", "runners")
HEAVY = ("torch", "transformers", "sentence_transformers", "mteb")

#: the rooms of runners/execution (see ROOMS) and the runner's own files
_EXECUTION = ("backends", "remote", "encoding", "cache", "candidates", "distributed", "measure", "run", "tasks")


def _execution_but(*keep: str) -> set[str]:
    """Every room of the execution layer except ``keep``: what a labels room that needs one of them may not reach."""
    return {f"runners.execution.{r}" for r in _EXECUTION if r not in keep}


#: layer -> layers it must never import (any import, module-level or inside a function)
FORBIDDEN = {
    "custom_tasks": {"runners"},
    "runners.config": {"runners.results", "runners.execution", "runners.analysis", "runners.labels", "runners.cli"},
    "runners.results": {"runners.config", "runners.search", "runners.execution", "runners.analysis",
                        "runners.labels", "runners.cli"},
    "runners.search": {"runners.config", "runners.execution", "runners.analysis", "runners.labels", "runners.cli"},
    # the statistics core (issue 47): per-query tables from stored results, intervals, tests, power, confidence
    # sequences, the prediction-powered estimators; below both labels and analysis, which lean on it
    "runners.statistics": {"runners.search", "runners.execution", "runners.analysis", "runners.labels",
                           "runners.cli", "runners.retrievers"},
    "runners.execution": {"runners.analysis", "runners.labels", "runners.cli"},
    # analysis reads the facts of labels' pool/, notes/, raters/ and judge/ (judged@k, the unjudged mark, the
    # notes under a verdict, agreement for the report); never its apps: the judging app, questions, lint
    "runners.analysis": {"runners.execution", "runners.search.ann", "runners.search.hybrid", "runners.cli",
                         "runners.labels.judging", "runners.labels.questions", "runners.labels.lint"},
    # the ground truth (issue 37): reads collections, stored rankings and raters' files, on the statistics core
    # (runners/statistics/); runs no model, never imports analysis. Its rooms are ordered by LABEL_ROOMS; three
    # reach further down:
    "runners.labels": {"runners.execution", "runners.search", "runners.cli", "runners.retrievers", "runners.analysis"},
    # the LLM judge and writer: HTTP only (execution/remote/), no model, cache or candidate
    "runners.labels.judge": {"runners.search", "runners.cli", "runners.retrievers", "runners.analysis"}
                            | _execution_but("remote"),
    # tasks lint: the truncation check counts each candidate's tokens with the model's own tokenizer files
    "runners.labels.lint": {"runners.search.ann", "runners.search.hybrid", "runners.cli", "runners.retrievers",
                            "runners.analysis"} | _execution_but("encoding"),
    # questions made after the collection (issue 38): a query log sampled, questions generated, the added file;
    # may encode (topic clusters, through the embedding cache) and call an LLM; commands sit on top
    "runners.labels.questions": {"runners.cli", "runners.retrievers", "runners.execution.run",
                                 "runners.execution.measure", "runners.analysis"},
    # the judging app (issue 31): reads collections, stored rankings and raters' files; never runs a model
    "runners.labels.judging": {"runners.execution", "runners.search", "runners.cli", "runners.retrievers",
                               "runners.analysis"},
    # `kind: retriever` adapters: plug-ins handed an embedder, importing no layer of private-mteb
    "runners.retrievers": {"runners.config", "runners.results", "runners.search", "runners.execution",
                           "runners.analysis", "runners.labels", "runners.cli"},
}

#: room of runners/execution -> the rooms it may import (besides itself); "runner" is execution's own files
#: (run.py, tasks.py). Lowest first: backends < encoding < cache < candidates, distributed < runner < measure.
ROOMS = {
    "backends": set(),
    "remote": set(),  # HTTP to OpenAI-compatible servers: the LLM judge's and the embedding endpoint's client
    "encoding": {"backends"},
    "cache": {"encoding", "backends"},
    "candidates": {"cache", "encoding", "backends", "remote"},
    "distributed": {"cache", "encoding"},
    "runner": {"candidates", "distributed", "cache", "encoding", "backends", "remote"},
    "measure": {"runner", "candidates", "cache", "encoding", "backends", "remote"},
}
MAX_ROOM_FILES = 10

#: room of runners/labels -> the rooms of labels it may import (besides itself). Lowest first: raters, pool <
#: notes, judge, lint < questions < judging (the web app on top).
LABEL_ROOMS = {
    "raters": set(),  # the raters' files, their agreement, import and merge
    "pool": set(),  # judged@k, the pool, the verdict bounds of the unjudged pairs, the decisive order
    "verdicts": {"pool", "raters"},  # how likely each verdict holds (calibration and its posterior), the stop, `labels status`
    "notes": {"pool"},  # what stats/check/report print about the labels and the questions
    "judge": {"pool", "raters"},  # the LLM judge and writer clients, the judge's agreement with raters
    "lint": {"pool"},  # tasks lint: data checks, language, truncation, pooling gaps
    "questions": {"lint", "judge", "notes", "pool"},  # questions sample|generate and the added-questions file
    "judging": {"questions", "raters", "pool", "verdicts"},  # the judging app of `labels serve` (redacts edited questions)
}

#: the statistics core (issue 47: runners/statistics/, with the error type), below labels and analysis: labels imports
#: it and no module of analysis, and it imports neither labels nor analysis; analysis (gate, report, best, inspect,
#: ...) sits above labels' pool/, notes/, raters/ and judge/ and reads their facts. No cycle of layers either way.
ANALYSIS_CORE = ("runners.statistics",)

#: room of runners/analysis -> the rooms it may import (besides itself); "base" is analysis's own files (BASE):
#: literal text, below every room. Lowest first: base < gate, diagnose, compare, cost < page (what a report page is
#: made of) < report (its sections and build_report). All of them stand on runners/statistics/.
ANALYSIS_ROOMS = {
    "base": set(),
    "gate": {"base"},
    "diagnose": {"base"},
    "compare": {"base"},
    "cost": {"base"},
    "page": {"gate", "base"},
    "report": {"page", "gate", "diagnose", "compare", "cost", "base"},
}
ANALYSIS_BASE = {"markdown_text.py", "plot_text.py"}


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in (REPO / pkg).rglob("*.py"):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def _imports(module: str, path: Path, top_level_only: bool) -> set[str]:
    """Absolute names of what a module imports (first-party only)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    base = module.split(".") if is_pkg else module.split(".")[:-1]
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                target = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found |= {f"{target}.{a.name}" for a in node.names}
    return {f for f in found if f.split(".")[0] in PACKAGES}


def _layer(module: str) -> str | None:
    for layer in sorted(FORBIDDEN, key=len, reverse=True):
        if module == layer or module.startswith(layer + "."):
            return layer
    return None


def test_layers_import_only_what_comes_before_them() -> None:
    mods = _modules()
    bad = []
    for name, path in mods.items():
        layer = _layer(name)
        if layer is None:
            continue
        for imp in _imports(name, path, top_level_only=False):
            if any(imp == f or imp.startswith(f + ".") for f in FORBIDDEN[layer]):
                bad.append(f"{name} imports {imp}")
    assert not bad, "layer violations:\n" + "\n".join(sorted(bad))


def _room(module: str) -> str | None:
    """The execution room a module lives in (None outside runners.execution)."""
    parts = module.split(".")
    if parts[:2] != ["runners", "execution"]:
        return None
    if len(parts) == 2 or parts[2] not in ROOMS:
        return "runner"
    return parts[2]


def _room_violations(mods: dict[str, Path]) -> list[str]:
    bad = []
    for name, path in mods.items():
        room = _room(name)
        if room is None:
            continue
        for imp in _imports(name, path, top_level_only=False):
            other = _room(imp)
            if other is not None and other != room and other not in ROOMS[room] and imp != "runners.execution":
                bad.append(f"{name} ({room}) imports {imp} ({other})")
    return sorted(bad)


def test_execution_rooms_import_only_the_rooms_below_them() -> None:
    bad = _room_violations(_modules())
    assert not bad, "room violations:\n" + "\n".join(bad)


def test_room_checker_sees_a_room_reaching_up(tmp_path: Path) -> None:
    """The room checker must be able to fail: the cache importing the runner, inside a function."""
    src = tmp_path / "fake.py"
    src.write_text("def f():\n    from ..run import run_benchmark\n")
    assert _room_violations({"runners.execution.cache.fake": src}) == [
        "runners.execution.cache.fake (cache) imports runners.execution.run (runner)",
        "runners.execution.cache.fake (cache) imports runners.execution.run.run_benchmark (runner)"]


def test_every_room_is_known_small_and_says_what_it_owns() -> None:
    rooms = {p.name: p for p in (REPO / "runners" / "execution").iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert set(rooms) == set(ROOMS) - {"runner"}, "a room of runners/execution/ missing from ROOMS (or gone)"
    for name, path in rooms.items():
        files = sorted(f.name for f in path.glob("*.py") if f.name != "__init__.py")
        assert 0 < len(files) <= MAX_ROOM_FILES, f"{name}/ holds {len(files)} files: split it"
        assert not [d for d in path.iterdir() if d.is_dir() and d.name != "__pycache__"], f"{name}/ has a sub-room"
        doc = ast.get_docstring(ast.parse((path / "__init__.py").read_text(encoding="utf-8"))) or ""
        assert len(doc.split()) >= 12, f"{name}/__init__.py does not say what it owns"
    top = sorted(f.name for f in (REPO / "runners" / "execution").glob("*.py") if f.name != "__init__.py")
    assert top == ["run.py", "tasks.py"], f"runners/execution/ holds files outside a room: {top}"


def _label_room(module: str) -> str | None:
    """The labels room a module lives in (None outside runners.labels, "" for the package itself)."""
    parts = module.split(".")
    if parts[:2] != ["runners", "labels"]:
        return None
    return parts[2] if len(parts) > 2 else ""


def _label_room_violations(mods: dict[str, Path]) -> list[str]:
    bad = []
    for name, path in mods.items():
        room = _label_room(name)
        if not room:
            continue
        for imp in _imports(name, path, top_level_only=False):
            other = _label_room(imp)
            if other and other != room and other not in LABEL_ROOMS[room]:
                bad.append(f"{name} ({room}) imports {imp} ({other})")
    return sorted(bad)


def _analysis_room(module: str) -> str | None:
    """The analysis room a module lives in (None outside runners.analysis and for the package itself)."""
    parts = module.split(".")
    if parts[:2] != ["runners", "analysis"] or len(parts) == 2:
        return None
    if parts[2] in ANALYSIS_ROOMS:
        return parts[2]
    return "base" if f"{parts[2]}.py" in ANALYSIS_BASE else parts[2]


def _analysis_room_violations(mods: dict[str, Path]) -> list[str]:
    bad = []
    for name, path in mods.items():
        room = _analysis_room(name)
        if room is None:
            continue
        for imp in _imports(name, path, top_level_only=False):
            other = _analysis_room(imp)
            if other is not None and other != room and other not in ANALYSIS_ROOMS.get(room, set()):
                bad.append(f"{name} ({room}) imports {imp} ({other})")
    return sorted(bad)


def test_labels_rooms_import_only_the_rooms_below_them() -> None:
    bad = _label_room_violations(_modules())
    assert not bad, "room violations:\n" + "\n".join(bad)


def test_label_room_checker_sees_a_room_reaching_up(tmp_path: Path) -> None:
    """The labels room checker must be able to fail: the pool importing the judging app, inside a function."""
    src = tmp_path / "fake.py"
    src.write_text("def f():\n    from ..judging.server import serve\n")
    assert _label_room_violations({"runners.labels.pool.fake": src}) == [
        "runners.labels.pool.fake (pool) imports runners.labels.judging.server (judging)",
        "runners.labels.pool.fake (pool) imports runners.labels.judging.server.serve (judging)"]


def _in(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def _core_violations(mods: dict[str, Path]) -> list[str]:
    """labels importing analysis outside its statistics core; the core importing labels or the rest of analysis."""
    bad = []
    for name, path in mods.items():
        imps = _imports(name, path, top_level_only=False)
        if _label_room(name) is not None:
            bad += [f"{name} imports {i} (analysis outside ANALYSIS_CORE)" for i in imps
                    if _in(i, ("runners.analysis",)) and not _in(i, ANALYSIS_CORE) and i != "runners.analysis"]
        elif _in(name, ANALYSIS_CORE):
            bad += [f"{name} (core) imports {i}" for i in imps
                    if _in(i, ("runners.labels",))
                    or (_in(i, ("runners.analysis",)) and not _in(i, ANALYSIS_CORE) and i != "runners.analysis")]
    return sorted(bad)


def test_labels_sit_between_the_statistics_core_and_the_rest_of_analysis() -> None:
    bad = _core_violations(_modules())
    assert not bad, "labels/analysis direction violations:\n" + "\n".join(bad)


def test_core_checker_sees_both_directions(tmp_path: Path) -> None:
    """The checker must be able to fail both ways: labels reaching the gate, the core reaching labels."""
    up, down = tmp_path / "up.py", tmp_path / "down.py"
    up.write_text("from ...analysis.gate import regression_gate\n")
    down.write_text("def f():\n    from ..labels.pool.judged import judged_at_k\n")
    bad = _core_violations({"runners.labels.pool.up": up, "runners.statistics.down": down})
    assert "runners.labels.pool.up imports runners.analysis.gate (analysis outside ANALYSIS_CORE)" in bad
    assert "runners.statistics.down (core) imports runners.labels.pool.judged" in bad


def test_every_labels_room_is_known_small_and_says_what_it_owns() -> None:
    base = REPO / "runners" / "labels"
    rooms = {p.name: p for p in base.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert set(rooms) == set(LABEL_ROOMS), "a room of runners/labels/ missing from LABEL_ROOMS (or gone)"
    for name, path in rooms.items():
        files = sorted(f.name for f in path.glob("*.py") if f.name != "__init__.py")
        assert 0 < len(files) <= MAX_ROOM_FILES, f"labels/{name}/ holds {len(files)} files: split it"
        assert not [d for d in path.iterdir() if d.is_dir() and d.name != "__pycache__"], f"{name}/ has a sub-room"
        doc = ast.get_docstring(ast.parse((path / "__init__.py").read_text(encoding="utf-8"))) or ""
        assert len(doc.split()) >= 12, f"labels/{name}/__init__.py does not say what it owns"
    top = sorted(f.name for f in base.glob("*.py"))
    assert top == ["__init__.py"], f"runners/labels/ holds files outside a room: {top}"


def test_one_folder_is_called_judging() -> None:
    """issue 37: the web app and the LLM client were both `judging/`; "open judging/" must name one folder."""
    found = sorted(str(p.relative_to(REPO)) for pkg in PACKAGES for p in (REPO / pkg).rglob("judging")
                   if p.is_dir() and "__pycache__" not in p.parts)
    assert found == ["runners/labels/judging"], found


def test_analysis_rooms_import_only_the_rooms_below_them() -> None:
    bad = _analysis_room_violations(_modules())
    assert not bad, "analysis room violations:\n" + "\n".join(bad)


def test_analysis_room_checker_sees_a_room_reaching_up(tmp_path: Path) -> None:
    """The checker must be able to fail: the diagnose room importing the gate, inside a function; and the base
    importing a room."""
    src = tmp_path / "fake.py"
    src.write_text("def f():\n    from ..gate.gate import regression_gate\n")
    assert _analysis_room_violations({"runners.analysis.diagnose.fake": src}) == [
        "runners.analysis.diagnose.fake (diagnose) imports runners.analysis.gate.gate (gate)",
        "runners.analysis.diagnose.fake (diagnose) imports runners.analysis.gate.gate.regression_gate (gate)"]
    base = tmp_path / "plot_text.py"
    base.write_text("from .gate import best\n")
    assert _analysis_room_violations({"runners.analysis.plot_text": base}) == [
        "runners.analysis.plot_text (base) imports runners.analysis.gate (gate)",
        "runners.analysis.plot_text (base) imports runners.analysis.gate.best (gate)"]


def test_every_analysis_room_is_known_small_and_says_what_it_owns() -> None:
    top = REPO / "runners" / "analysis"
    rooms = {p.name: p for p in top.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert set(rooms) == set(ANALYSIS_ROOMS) - {"base"}, "a room of runners/analysis/ missing from ANALYSIS_ROOMS"
    for name, path in rooms.items():
        files = sorted(f.name for f in path.glob("*.py") if f.name != "__init__.py")
        assert 0 < len(files) <= MAX_ROOM_FILES, f"analysis/{name}/ holds {len(files)} files: split it"
        assert not [d for d in path.iterdir() if d.is_dir() and d.name != "__pycache__"], f"{name}/ has a sub-room"
        doc = ast.get_docstring(ast.parse((path / "__init__.py").read_text(encoding="utf-8"))) or ""
        assert len(doc.split()) >= 12, f"analysis/{name}/__init__.py does not say what it owns"
    flat = {f.name for f in top.glob("*.py") if f.name != "__init__.py"}
    assert flat == ANALYSIS_BASE, f"runners/analysis/ holds files outside a room: {sorted(flat - ANALYSIS_BASE)}"


def _import_graph(mods: dict[str, Path]) -> dict[str, set[str]]:
    """File-level graph: A -> B when A's file imports B anywhere (function-level and TYPE_CHECKING included)."""
    graph = {n: {i for i in _imports(n, p, top_level_only=False) if i in mods and i != n} for n, p in mods.items()}
    # a package's __init__ importing its own submodules is how re-exports work, not a cycle
    return {n: {i for i in deps if not i.startswith(n + ".")} for n, deps in graph.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(n: str, stack: list[str]) -> None:
        state[n] = 1
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                cycles.append(stack[stack.index(m):] + [m])
            elif m not in state:
                visit(m, stack + [m])
        state[n] = 2

    for n in sorted(graph):
        if n not in state:
            visit(n, [n])
    return cycles


def test_no_import_cycles_between_files() -> None:
    cycles = _cycles(_import_graph(_modules()))
    assert not cycles, "import cycles: " + "; ".join(" -> ".join(c) for c in cycles)


def test_cycle_checker_sees_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    """The cycle checker must be able to fail on the cycles a module-level-only view misses: A imports B inside a
    function, B imports A under `if TYPE_CHECKING:`."""
    pkg = tmp_path / "runners" / "fake"
    pkg.mkdir(parents=True)
    (pkg / "a.py").write_text("def f():\n    from .b import g\n    return g\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import f\n\n"
                              "def g(): ...\n")
    mods = {"runners.fake.a": pkg / "a.py", "runners.fake.b": pkg / "b.py"}
    assert _cycles(_import_graph(mods)) == [["runners.fake.a", "runners.fake.b", "runners.fake.a"]]
    module_level = {n: {i for i in _imports(n, p, top_level_only=True) if i in mods} for n, p in mods.items()}
    assert _cycles(module_level) == []  # what the module-level-only check saw


#: who may hash local files with results/fingerprints.py `weights_fingerprint` (issue 37): its definition, the one
#: identity function's `value_weights` (every key of a candidate's files reads that figure) and the export build
#: cache, which hashes the export's source folder resolved at load time (not a candidate identity part)
WEIGHTS_HASHERS = {"runners.results.fingerprints", "runners.execution.candidates.run_identity",
                   "runners.execution.backends.backend_build"}


def _weights_hashers(mods: dict[str, Path]) -> set[str]:
    """Modules whose code names `weights_fingerprint` (defined, imported, called or read as an attribute; prose
    aside)."""
    out = set()
    for name, path in mods.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.FunctionDef) and node.name == "weights_fingerprint"
                    or isinstance(node, ast.Name) and node.id == "weights_fingerprint"
                    or isinstance(node, ast.Attribute) and node.attr == "weights_fingerprint"
                    or isinstance(node, ast.alias) and node.name.split(".")[-1] == "weights_fingerprint"):
                out.add(name)
    return out


def test_one_place_hashes_a_candidates_files() -> None:
    """The weights part of an identity is computed once (run_identity.value_weights); a cache folder, a dedupe key,
    a reranker's cache id or a run file's memo that hashed the files itself could disagree with the identity."""
    assert _weights_hashers(_modules()) == WEIGHTS_HASHERS


def test_weights_hasher_checker_sees_a_module_hashing_itself(tmp_path: Path) -> None:
    """The checker can fail: an import, a module attribute and a docstring-only mention (not code: allowed)."""
    (tmp_path / "a.py").write_text("from ...results.fingerprints import weights_fingerprint as wf\n")
    (tmp_path / "b.py").write_text("from ...results import fingerprints\nx = fingerprints.weights_fingerprint([])\n")
    (tmp_path / "c.py").write_text('"""Reads `weights_fingerprint` of run_identity."""\n')
    mods = {f"runners.execution.cache.{n}": tmp_path / f"{n}.py" for n in "abc"}
    assert _weights_hashers(mods) == {"runners.execution.cache.a", "runners.execution.cache.b"}


def test_layer_checker_sees_a_violation(tmp_path: Path) -> None:
    """The checker itself must be able to fail: a function-level execution import from analysis."""
    src = tmp_path / "fake.py"
    src.write_text("def f():\n    from ..execution.run import run_benchmark\n")
    assert "runners.execution.run" in _imports("runners.analysis.fake", src, top_level_only=False)


def test_every_top_level_export_resolves() -> None:
    """`runners.<name>` (the Python API) points at the module that defines it, not at a lazy re-export."""
    import runners

    missing = [n for n in runners.__all__ if not callable(getattr(runners, n, None))]
    assert not missing, missing


def _heavy_modules_after(code: str) -> list[str]:
    probe = code + f"\nimport sys, json\nprint(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_analysis_layer_imports_no_model_library() -> None:
    code = ("import runners, custom_tasks\n"
            "import runners.cli, runners.statistics.stats_report, runners.analysis.gate.gate\n"
            "import runners.statistics.per_query\n"
            "import runners.analysis.cost.experiments_table, runners.config.experiments, custom_tasks.stats\n"
            "custom_tasks.find_task_configs(); runners.stats_report")
    assert _heavy_modules_after(code) == []


def test_the_probe_can_see_torch() -> None:
    assert "mteb" in _heavy_modules_after("import runners.execution.run, mteb")


@pytest.fixture(scope="module")
def bm25_results(tmp_path_factory) -> Path:
    """Real stored results (BM25 twice under two labels) for the analysis commands to read."""
    from runners.config.benchmark import BenchmarkConfig
    from runners.execution.run import run_benchmark

    tmp = tmp_path_factory.mktemp("layout")
    cfg_path = write_benchmark(tmp, [str(TINY_YAML)], models=[{"name": "bm25"}])
    run_benchmark(BenchmarkConfig.from_file(cfg_path), show_progress=False)
    return cfg_path


@pytest.mark.parametrize("argv", [
    ["--help"],
    ["tasks", "list"],
    ["tasks", "stats", str(TINY_YAML)],
    ["stats", "-c", "{cfg}", "--resamples", "200"],
    # two model names in one folder: the gate really compares (two folders that are the same stop early)
    ["check", "--baseline", "BM25", "--candidate", "mteb/baseline-bm25s", "--results", "{results}", "--resamples", "200"],
])
def test_fast_commands_do_not_import_torch(argv: list[str], bm25_results: Path) -> None:
    results = str(bm25_results.parent / "results")
    args = [a.format(cfg=bm25_results, results=results) for a in argv]
    code = ("import sys\nfrom typer.testing import CliRunner\nfrom runners.cli import app\n"
            f"r = CliRunner().invoke(app, {args!r})\n"
            "sys.stderr.write(str(r.exit_code) + r.output[-500:])")
    heavy = _heavy_modules_after(code)
    assert heavy == [], f"{argv}: imported {heavy}"


def test_a_second_report_imports_no_mteb(bm25_results: Path, tmp_path: Path) -> None:
    """The first report computes the public comparison with mteb and keeps it; the next one reads it (issue 19)."""
    from typer.testing import CliRunner

    from runners.cli import app

    args = ["report", "-c", str(bm25_results), "-o", str(tmp_path / "r.html")]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    code = ("import sys\nfrom typer.testing import CliRunner\nfrom runners.cli import app\n"
            f"r = CliRunner().invoke(app, {args!r})\n"
            "assert r.exit_code == 0, r.output")
    assert _heavy_modules_after(code) == []


def test_report_after_run_imports_no_mteb(tmp_path: Path) -> None:
    """`run` keeps the report's public comparison while mteb is loaded, so even the first `report` after it starts
    without mteb (issue 19: report under 5 s on the demo)."""
    from typer.testing import CliRunner

    from runners.cli import app

    cfg = write_benchmark(tmp_path, [str(TINY_YAML)], models=[{"name": "bm25"}])
    ran = CliRunner().invoke(app, ["run", "-c", str(cfg)])
    assert ran.exit_code == 0, ran.output
    assert list((tmp_path / "results" / "private-mteb" / "cache").glob("compare-*")), "run kept no comparison"
    args = ["report", "-c", str(cfg), "-o", str(tmp_path / "r.html")]
    code = ("import sys\nfrom typer.testing import CliRunner\nfrom runners.cli import app\n"
            f"r = CliRunner().invoke(app, {args!r})\n"
            "assert r.exit_code == 0, r.output")
    assert _heavy_modules_after(code) == []
    assert "Private vs public" in (tmp_path / "r.html").read_text()


#: "modules under ~400 lines" (HELPERS.md, issue 30): a little slack over 400, none beyond it
MAX_MODULE_LINES = 420


def test_no_module_is_over_about_400_lines() -> None:
    long = {name: n for name, path in _modules().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert not long, f"split these modules (over {MAX_MODULE_LINES} lines): {long}"


def test_the_layout_page_names_every_room_and_file() -> None:
    """docs/layout.md and the code agree (issues 30, 37): each room of execution/ and labels/ and each of its files
    is named there."""
    doc = (REPO / "docs" / "layout.md").read_text(encoding="utf-8")
    missing = []
    rooms = [p for layer in ("execution", "labels") for p in (REPO / "runners" / layer).iterdir()
             if p.is_dir() and p.name != "__pycache__"]
    for room in sorted(rooms):
        missing += [f"{room.name}/"] if f"`{room.name}/`" not in doc else []
        missing += [f"{room.name}/{f.name}" for f in sorted(room.glob("*.py"))
                    if f.name != "__init__.py" and f"`{f.name}`" not in doc]
    assert not missing, f"docs/layout.md does not name: {missing}"


def test_the_layout_page_names_every_package_folder() -> None:
    """docs/layout.md names every package folder (room) of runners/ and custom_tasks/ (issue 37), as `name/` or a
    longer path ending in it (`analysis/report/`): a room the page does not name is one a newcomer cannot find."""
    import re

    doc = (REPO / "docs" / "layout.md").read_text(encoding="utf-8")
    missing = []
    for pkg in PACKAGES:
        for init in sorted((REPO / pkg).rglob("__init__.py")):
            folder = init.parent.relative_to(REPO)
            if not re.search(r"`(?:[\w/]*/)?" + re.escape(folder.name) + r"/`", doc):
                missing.append(f"{folder}/")
    assert not missing, f"docs/layout.md does not name: {missing}"


#: issue 37: "open growth.py" names one file. Only the package markers repeat.
SHARED_NAMES = {"__init__.py", "__main__.py"}


def _repeated_file_names(paths: list[Path]) -> dict[str, list[str]]:
    seen: dict[str, list[str]] = {}
    for path in paths:
        if path.name not in SHARED_NAMES:
            seen.setdefault(path.name, []).append(str(path.relative_to(REPO)))
    return {name: sorted(where) for name, where in sorted(seen.items()) if len(where) > 1}


def test_no_two_modules_share_a_file_name() -> None:
    paths = [p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py") if "__pycache__" not in p.parts]
    repeated = _repeated_file_names(paths)
    assert not repeated, f"modules sharing a file name (rename one: a CLI module takes `_command`): {repeated}"


def test_the_name_checker_sees_a_repeat() -> None:
    """The check must be able to fail: two growth.py in different folders; two __init__.py are fine."""
    paths = [REPO / "runners" / "a" / "growth.py", REPO / "runners" / "b" / "growth.py",
             REPO / "runners" / "a" / "__init__.py", REPO / "runners" / "b" / "__init__.py"]
    assert _repeated_file_names(paths) == {"growth.py": ["runners/a/growth.py", "runners/b/growth.py"]}


def test_each_room_says_in_two_lines_what_it_owns() -> None:
    """Issue 37: a room's `__init__.py` opens with a docstring of at most two lines saying what it owns (the layers
    above them, runners/, execution/, analysis/, labels/, keep their longer maps of the rooms)."""
    rooms = [REPO / "runners" / name for name in ("config", "results", "search", "statistics")]
    for layer in ("execution", "analysis", "labels"):
        rooms += [p.parent for p in sorted((REPO / "runners" / layer).glob("*/__init__.py"))]
    assert len(rooms) > 20
    wordy = {}
    for room in rooms:
        doc = ast.get_docstring(ast.parse((room / "__init__.py").read_text()))
        if not doc or len(doc.splitlines()) > 2:
            wordy[room.relative_to(REPO).as_posix()] = len(doc.splitlines()) if doc else 0
    assert not wordy, f"rooms whose __init__.py does not say in one or two lines what they own: {wordy}"
