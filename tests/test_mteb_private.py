"""Every mteb private name private-mteb uses still exists (one test per name).

When an mteb upgrade moves one, the failing test names it and the file to update.
"""

from __future__ import annotations

import pytest

from custom_tasks import mteb_private


@pytest.mark.parametrize("key", sorted(mteb_private.PRIVATE_NAMES))
def test_private_name_still_exists(key: str) -> None:
    module, attr = mteb_private.PRIVATE_NAMES[key]
    try:
        obj = mteb_private.private(key)
    except mteb_private.MtebPrivateNameMoved as e:
        pytest.fail(f"{module}.{attr} moved in this mteb release: {e}")
    assert obj is not None


def test_a_moved_name_gives_a_clear_message(monkeypatch) -> None:
    monkeypatch.setitem(mteb_private.PRIVATE_NAMES, "gone", ("mteb._no_such_module", "_thing"))
    with pytest.raises(mteb_private.MtebPrivateNameMoved, match=r"mteb\._no_such_module\._thing.*mteb_private\.py"):
        mteb_private.private("gone")


def test_no_other_module_uses_mteb_private_names() -> None:
    """Private names (mteb._x, _name imports from mteb) appear only in the adapter."""
    import ast

    from conftest import REPO

    offenders = []
    for pkg in ("custom_tasks", "runners"):
        for path in (REPO / pkg).rglob("*.py"):
            if path.name == "mteb_private.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mteb"):
                    private = [a.name for a in node.names if a.name.startswith("_")]
                    if private or any(p.startswith("_") for p in (node.module or "").split(".")):
                        offenders.append(f"{path.relative_to(REPO)}: from {node.module} import ...")
                if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                    if isinstance(node.value, ast.Name) and node.value.id in ("mteb", "results", "registry"):
                        offenders.append(f"{path.relative_to(REPO)}: .{node.attr}")
    assert not offenders, offenders
