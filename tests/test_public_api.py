"""The public Python API (`runners.__all__`) is the one it was before issue 37's move of the house (a30edff).

The snapshot (tests/fixtures/public_api_a30edff.json) was written at a30edff by the same `api_surface` below: each
export's signature and, for a class, its own public methods' signatures, properties and fields. A change to the
surface fails here; change the snapshot only with a note in the changelog of what callers must do.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import runners

SNAPSHOT = Path(__file__).parent / "fixtures" / "public_api_a30edff.json"


def api_surface() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in sorted(runners.__all__):
        obj = getattr(runners, name)
        try:
            sig = str(inspect.signature(obj))
        except (TypeError, ValueError):
            sig = None
        if inspect.isclass(obj):
            methods = {k: str(inspect.signature(v)) for k, v in vars(obj).items()
                       if callable(v) and not k.startswith("_") and not isinstance(v, type)}
            props = sorted(k for k, v in vars(obj).items() if isinstance(v, property))
            fields = sorted(getattr(obj, "model_fields", {}) or [])
            out[name] = {"signature": sig, "methods": methods, "properties": props, "fields": fields}
        else:
            out[name] = {"signature": sig}
    return out


def test_the_public_api_is_unchanged_since_before_the_move() -> None:
    assert api_surface() == json.loads(SNAPSHOT.read_text())


def test_the_check_sees_a_changed_signature(monkeypatch) -> None:
    def run_benchmark(cfg, *, force=False):  # noqa: ANN001, ANN202 - a narrowed stand-in
        return []

    monkeypatch.setattr(runners, "__getattr__", lambda n: _real_getattr(n, run_benchmark))
    assert api_surface() != json.loads(SNAPSHOT.read_text())


def _real_getattr(name: str, replacement: Any) -> Any:
    import importlib

    if name == "run_benchmark":
        return replacement
    return getattr(importlib.import_module(runners._EXPORTS[name], "runners"), name)
