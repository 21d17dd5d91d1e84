"""Candidate kinds, one file each (runners/execution/candidates.py KIND_MODULES names them)."""
