"""search layer (see runners/__init__.py)."""
