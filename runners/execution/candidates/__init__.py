"""What is scored, as values: candidate_value.py (one immutable description per config entry, its parts explicit),
run_identity.py (the one function that makes its run identity), one file per kind building its value and loader."""
