"""What is scored, as values: candidate_value.py (one immutable description per config entry, its parts explicit),
run_identity.py (the one function that makes a run identity of it), and one file per candidate kind building its
value and loader (candidates.py: model and BM25; run_file, retriever_candidate, endpoint_candidate,
rerank_candidate and its pair cache; experiment_candidates: hybrid, chunking, ANN on the base model, and every
candidate of a config built from its facts)."""
