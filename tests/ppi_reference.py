"""ppi-python, the reference implementation of prediction-powered inference, for the tests that compare with it.

scripts/setup.sh installs it apart, in `<venv>/ppi-reference` (its wheel also ships a top-level `tests` package that
would shadow this repository's tests/ if it sat in site-packages); that folder is appended to the END of sys.path,
so nothing there takes precedence over the repository or the venv.
"""
from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest


def ppi_reference() -> ModuleType:
    """`ppi_py`, or the test is skipped with the command that installs it."""
    folder = Path(sys.prefix) / "ppi-reference"
    if folder.is_dir() and str(folder) not in sys.path:
        sys.path.append(str(folder))
    return pytest.importorskip("ppi_py", reason="ppi-python (the reference) is missing: run scripts/setup.sh")
