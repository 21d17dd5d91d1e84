"""Passes around the runner that measure rather than score: query latency as served (latency, serving), score
against corpus growth with distractors (growth, distractors), and each encode backend's drift (backend_drift)."""
