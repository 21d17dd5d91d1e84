"""Questions made for a task after its collection: a query log sampled into questions, generated questions.
Owns the added-questions file (`added_store.py`: append-only, atomic), sampling, generation and their checks."""
